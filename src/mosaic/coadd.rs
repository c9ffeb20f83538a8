//! `reproject_and_coadd` on the engine: every input reprojected onto one output grid and
//! combined, block by block.
//!
//! ```text
//! per input:  its edges (11 samples a side) → output pixels → the output rectangle it covers
//! [background matching: per overlapping pair, the median difference (or a fitted plane) over
//!  the overlap → one correction per image (least squares)]
//! per output block (threads):  for each input covering it, in order: reproject that part of
//!     the block (Plan::compute_block on the input's executor), weights too; combine
//! ```
//! When every input is sampled on the GPU and the combine mode allows (mean, sum, first, last,
//! min, max), blocks combine on the device instead (`super::device`): the samples never come
//! to the host, only each block's sums do.
//!
//! Memory stays bounded by the blocks in flight (an input's pixels are read through its
//! `ImageSource`, the output may be a memory-mapped file); nothing is kept per input but its
//! plan, and, with background matching, its samples over its rectangle when they fit in a
//! quarter of the memory (one float32 or float64 per pixel, NaN where it has no data; values
//! and footprints with weights), which the pairs and the combination then read.
//!
//! ```
//! use ndarray::Array2;
//! use reproject::mosaic::coadd::{reproject_and_coadd, MosaicInput, MosaicOptions};
//! use reproject::io::ArraySource;
//! use reproject::wcs::Wcs;
//! let header = |crpix1: f64| Wcs::from_header_str(&format!(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
//!      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
//! let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
//! let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
//! let (sa, sb) = (ArraySource::new(a.view().into_dyn())?, ArraySource::new(b.view().into_dyn())?);
//! let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
//! let mosaic = reproject_and_coadd(&inputs, &out, &[32, 52], &MosaicOptions::default())?;
//! assert_eq!(mosaic.data[[16, 15]], 1.0);    // only the left image
//! assert_eq!(mosaic.data[[16, 35]], 2.0);    // both: the mean
//! assert_eq!(mosaic.footprint[[16, 35]], 2.0);
//! assert_eq!(mosaic.data[[16, 5]], 0.0);     // neither: reproject's blank value
//! # Ok::<(), reproject::Error>(())
//! ```

use std::ops::Range;
use std::str::FromStr;
use std::sync::Arc;

use ndarray::{s, Array3, ArrayD, ArrayView3, ArrayViewMut3, ArrayViewMutD, IxDyn};
use rayon::prelude::*;

use super::background::{fit_plane, median, solve_corrections};
use super::device::DeviceCombiner;
use super::pair_median::{pair_fit, row_of, Row};
use crate::engine::blocks::{blocks, Block};
use crate::engine::spline_share::SplinePrep;
use crate::engine::{check_output_memory, in_block, Options, Parallel, Plan};
use crate::error::{Error, Result};
use crate::io::{available_memory, ImageSource, RawPlane, StoredType};
use crate::pixel_transform::PixelTransform;
use crate::wcs::Wcs;

/// One input of a mosaic: an image, its WCS, and optional weights.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// // The right image weighted 4 to the left's 1.
/// let w = Array2::from_elem((32, 32), 4.0);
/// let sw = ArraySource::new(w.view().into_dyn())?;
/// let weighted = MosaicInput { weights: Some((&sw, None)), ..inputs[1] };
/// let mosaic = reproject_and_coadd(&[inputs[0], weighted], &out, &[32, 52],
///     &MosaicOptions::default())?;
/// assert_eq!(mosaic.data[[16, 35]], (1.0 + 4.0 * 3.0) / 5.0);
/// assert_eq!(mosaic.footprint[[16, 35]], 5.0);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct MosaicInput<'a> {
    /// The image (any number of leading planes, as the output).
    pub source: &'a dyn ImageSource,
    /// Its WCS.
    pub wcs: &'a Wcs,
    /// Per-pixel weights of the same shape (NaN weights count as 0), and their WCS (`None`:
    /// the image's).
    pub weights: Option<(&'a dyn ImageSource, Option<&'a Wcs>)>,
}

impl<'a> MosaicInput<'a> {
    /// An input without weights.
    ///
    /// ```
    /// # use ndarray::Array2;
    /// # use reproject::io::ArraySource;
    /// # use reproject::mosaic::coadd::*;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
    /// # let sa = ArraySource::new(a.view().into_dyn())?;
    /// # let sb = ArraySource::new(b.view().into_dyn())?;
    /// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
    /// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
    /// assert!(std::ptr::eq(inputs[0].wcs, &left));
    /// assert!(inputs[0].weights.is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(source: &'a dyn ImageSource, wcs: &'a Wcs) -> MosaicInput<'a> {
        MosaicInput {
            source,
            wcs,
            weights: None,
        }
    }
}

/// How the values of overlapping inputs combine into one output pixel. `Mean` and `Sum` are
/// footprint- (and weight-) weighted as in reproject; `First`/`Last` overlay the inputs in
/// order; `Min`/`Max` keep the extreme value; `Median` and `Clipped` go beyond reproject.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let at = |combine| -> reproject::Result<f64> {
///     let options = MosaicOptions { combine, ..MosaicOptions::default() };
///     Ok(reproject_and_coadd(&inputs, &out, &[32, 52], &options)?.data[[16, 35]])
/// };
/// assert_eq!(at(Combine::Mean)?, 2.0);
/// assert_eq!(at(Combine::Sum)?, 4.0);
/// assert_eq!(at(Combine::First)?, 1.0);
/// assert_eq!(at(Combine::Max)?, 3.0);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Combine {
    /// Σ w·v / Σ w (reproject's `mean`).
    Mean,
    /// Σ w·v (reproject's `sum`).
    Sum,
    /// The first input covering the pixel.
    First,
    /// The last input covering the pixel.
    Last,
    /// The smallest value.
    Min,
    /// The largest value.
    Max,
    /// The median of the values of the inputs covering the pixel (unweighted).
    Median,
    /// SWarp's CLIPPED: the weighted mean of the values within `sigma` standard deviations (and
    /// `ampfrac` × |median|) of the median, the rejection repeated until nothing changes.
    Clipped {
        /// Rejection threshold in standard deviations (SWarp's CLIP_SIGMA, default 4).
        sigma: f64,
        /// Extra tolerance as a fraction of |median| (SWarp's CLIP_AMPFRAC, default 0.3).
        ampfrac: f64,
    },
}

impl FromStr for Combine {
    type Err = Error;

    /// `mean`, `sum`, `first`, `last`, `min`, `max`, `median`, `clipped` (SWarp's defaults).
    ///
    /// ```
    /// use reproject::mosaic::coadd::Combine;
    /// assert_eq!("max".parse::<Combine>()?, Combine::Max);
    /// assert!("mode".parse::<Combine>().is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Combine> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "mean" => Combine::Mean,
            "sum" => Combine::Sum,
            "first" => Combine::First,
            "last" => Combine::Last,
            "min" => Combine::Min,
            "max" => Combine::Max,
            "median" => Combine::Median,
            "clipped" => Combine::Clipped {
                sigma: 4.0,
                ampfrac: 0.3,
            },
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "combine_function should be one of mean/sum/first/last/min/max/median/clipped, \
                     got '{s}'"
                )))
            }
        })
    }
}

/// Background matching.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// // The offsets bring both images to 2 (the corrections average to zero).
/// let options = MosaicOptions { background: Background::Offset, ..MosaicOptions::default() };
/// let mosaic = reproject_and_coadd(&inputs, &out, &[32, 52], &options)?;
/// assert_eq!((mosaic.data[[16, 15]], mosaic.data[[16, 35]], mosaic.data[[16, 45]]),
///     (2.0, 2.0, 2.0));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Background {
    /// None (reproject's `match_background=False`).
    #[default]
    None,
    /// One offset per image (reproject's `match_background=True`).
    Offset,
    /// One plane (offset and slopes in x and y of the output grid) per image, as Montage fits.
    Plane,
}

/// Options of [`reproject_and_coadd`], with reproject's defaults.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let options = MosaicOptions { blank_pixel_value: f64::NAN, ..MosaicOptions::default() };
/// let mosaic = reproject_and_coadd(&inputs, &out, &[32, 52], &options)?;
/// assert!(mosaic.data[[16, 5]].is_nan()); // no input covers column 5
/// assert_eq!(mosaic.footprint[[16, 5]], 0.0);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MosaicOptions {
    /// How each input is reprojected (order, precision, threads, backend, ...). Its
    /// `block_size` is the mosaic's output block.
    pub reprojection: Options,
    /// How values combine.
    pub combine: Combine,
    /// Background matching.
    pub background: Background,
    /// The image whose correction is zero (`None`: the corrections average to zero).
    pub background_reference: Option<usize>,
    /// The value of output pixels no input covers (reproject's default 0).
    pub blank_pixel_value: f64,
}

impl Default for MosaicOptions {
    fn default() -> Self {
        MosaicOptions {
            reprojection: Options::default(),
            combine: Combine::Mean,
            background: Background::None,
            background_reference: None,
            blank_pixel_value: 0.0,
        }
    }
}

/// A finished mosaic.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let mosaic = reproject_and_coadd(&inputs, &out, &[32, 52], &MosaicOptions::default())?;
/// assert_eq!(mosaic.data.shape(), &[32, 52]);
/// assert_eq!(mosaic.footprint[[16, 15]], 1.0); // one input
/// assert_eq!(mosaic.corrections, vec![Correction::default(); 2]); // no matching asked
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Mosaic {
    /// The combined values.
    pub data: ArrayD<f64>,
    /// reproject's footprint: the summed weights (footprint × weights) for mean, sum, median and
    /// clipped; the footprint of the chosen input for first, last, min and max.
    pub footprint: ArrayD<f64>,
    /// The background correction subtracted from each input (all zero without matching).
    pub corrections: Vec<Correction>,
}

/// A background correction: `offset + slope_x·x + slope_y·y` at output pixel (x, y).
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let options = MosaicOptions { background: Background::Offset, ..MosaicOptions::default() };
/// let corrections = reproject_and_coadd(&inputs, &out, &[32, 52], &options)?.corrections;
/// assert_eq!(corrections[0], Correction { offset: -1.0, slope_x: 0.0, slope_y: 0.0 });
/// assert_eq!(corrections[1].offset, 1.0);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Correction {
    /// Constant part.
    pub offset: f64,
    /// Slope along output columns.
    pub slope_x: f64,
    /// Slope along output rows.
    pub slope_y: f64,
}

impl Correction {
    fn at(&self, x: f64, y: f64) -> f64 {
        self.offset + self.slope_x * x + self.slope_y * y
    }

    /// How the correction is subtracted, on the host and on the GPU alike.
    pub(super) fn form(&self) -> CorrectionForm {
        if *self == Correction::default() {
            CorrectionForm::None
        } else if self.slope_x == 0.0 && self.slope_y == 0.0 {
            // Without slopes, the correction at (x, y) ≥ 0 is (offset + slope_x) + slope_y
            // exactly (a zero slope times x or y is that zero, sign included).
            CorrectionForm::Constant(self.offset + self.slope_x + self.slope_y)
        } else {
            CorrectionForm::Plane
        }
    }
}

/// How a [`Correction`] is subtracted from a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum CorrectionForm {
    /// Not at all (a zero correction).
    None,
    /// This constant.
    Constant(f64),
    /// The plane at the output pixel ([`Correction::at`]).
    Plane,
}

/// An image source with NaN values read as 0 (reproject's `np.nan_to_num` of weights).
struct NanAsZero<'a>(Arc<dyn ImageSource + 'a>);

impl ImageSource for NanAsZero<'_> {
    fn shape(&self) -> &[usize] {
        self.0.shape()
    }

    fn stored_type(&self) -> StoredType {
        self.0.stored_type()
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        self.0.read_window(plane, rows, cols, out)?;
        out.iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = 0.0);
        Ok(())
    }

    fn raw_plane(&self, _plane: usize) -> Option<RawPlane<'_>> {
        None
    }
}

/// The output rectangle (rows, columns) an input covers, as reproject finds it: 11 samples
/// along each edge of the input, mapped to output pixels, rounded outwards by half a pixel;
/// the whole output when any edge sample has no output position; `None` when it misses the
/// output.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// // Its left edge, at output x = 29.5, rounds outwards to column 29.
/// let (rows, cols) = covered_rectangle((32, 32), &right, &out, (32, 52))?.unwrap();
/// assert_eq!((rows, cols), (0..32, 29..52));
/// let far = header(500.0)?; // 474 pixels to the left of the output
/// assert_eq!(covered_rectangle((32, 32), &far, &out, (32, 52))?, None);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn covered_rectangle(
    input_plane: (usize, usize),
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    plane_out: (usize, usize),
) -> Result<Option<(Range<usize>, Range<usize>)>> {
    let (ny, nx) = (input_plane.0 as f64, input_plane.1 as f64);
    let (oy, ox) = plane_out;
    let to_out = PixelTransform::new(wcs_in, wcs_out)?;
    let samples = 11;
    let along = |n: f64, k: usize| -0.5 + n * k as f64 / (samples - 1) as f64;
    let mut points = Vec::with_capacity(4 * samples);
    for k in 0..samples {
        for (x, y) in [
            (along(nx, k), -0.5),
            (along(nx, k), ny - 0.5),
            (-0.5, along(ny, k)),
            (nx - 0.5, along(ny, k)),
        ] {
            points.push((x, y));
        }
    }
    let mut mapped = Vec::with_capacity(points.len());
    for (x, y) in points {
        match to_out.map(x, y) {
            Some((px, py)) if px.is_finite() && py.is_finite() => mapped.push((px, py)),
            _ => return Ok(Some((0..oy, 0..ox))),
        }
    }
    let range = |values: &mut dyn Iterator<Item = f64>, n: usize| {
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let start = ((lo + 0.5).floor().max(0.0) as usize).min(n);
        let end = ((hi + 0.5).ceil().max(0.0) as usize).min(n);
        start..end
    };
    let cols = range(&mut mapped.iter().map(|p| p.0), ox);
    let rows = range(&mut mapped.iter().map(|p| p.1), oy);
    Ok((!rows.is_empty() && !cols.is_empty()).then_some((rows, cols)))
}

/// An input ready to sample: its plans (values, weights) and the output rectangle it covers.
pub(super) struct Prepared<'a> {
    pub(super) plan: Plan<'a>,
    /// The plan of its weights (NaN weights read as 0).
    pub(super) weights: Option<Plan<'a>>,
    rows: Range<usize>,
    cols: Range<usize>,
    /// Its samples over the whole rectangle, when background matching reads them several times
    /// and they fit in the memory budget.
    pub(super) cache: Option<Cache>,
}

/// One input's values over a block: NaN reset to 0, footprint × weights (0 where reset).
pub(super) struct Sampled {
    values: Array3<f64>,
    footprint: Array3<f64>,
}

/// An input's samples over its whole rectangle (planes, rows, columns), in the smallest form
/// that holds them exactly. Without weights the engine's footprint is 1 where the value is not
/// NaN and 0 where it is, so one array of values (NaN where the footprint is 0) holds both, in
/// float32 when every value is one (reproject rounds the results of float32 inputs to float32).
pub(super) enum Cache {
    /// Footprints 0 or 1 and float32 values: the value, NaN where the footprint is 0.
    F32(Array3<f32>),
    /// Footprints 0 or 1: the value, NaN where the footprint is 0.
    F64(Array3<f64>),
    /// Anything else (weights): [`Sampled`].
    Full(Sampled),
}

/// Bytes per pixel of an input's cache at most: 8 without weights (see [`Cache`]; an input
/// whose samples do not fit that form is not cached), 16 with.
fn cache_bytes_per_pixel(p: &Prepared) -> usize {
    if p.weights.is_some() {
        16
    } else {
        8
    }
}

/// Runs `$body` with `$rows` bound to a function (plane, row, first column, width) → that row
/// of the cache `$cache` as a [`Row`] (one instantiation of `$body` per form).
macro_rules! with_rows {
    ($cache:expr, |$rows:ident| $body:expr) => {
        match $cache {
            Cache::F32(a) => {
                let $rows = move |p: usize, y: usize, x: usize, w: usize| row_of(a, p, y, x, w);
                $body
            }
            Cache::F64(a) => {
                let $rows = move |p: usize, y: usize, x: usize, w: usize| row_of(a, p, y, x, w);
                $body
            }
            Cache::Full(c) => {
                let $rows = move |p: usize, y: usize, x: usize, w: usize| {
                    (
                        row_of(&c.values, p, y, x, w),
                        row_of(&c.footprint, p, y, x, w),
                    )
                };
                $body
            }
        }
    };
}

impl Cache {
    /// Values and footprints over `rows` × `cols` (relative to the cached rectangle).
    fn sampled(&self, rows: Range<usize>, cols: Range<usize>) -> Sampled {
        let unit = |v: f64| if v.is_nan() { (0.0, 0.0) } else { (v, 1.0) };
        match self {
            Cache::F32(a) => {
                let a = a.slice(s![.., rows, cols]);
                Sampled {
                    values: a.mapv(|v| unit(f64::from(v)).0),
                    footprint: a.mapv(|v| unit(f64::from(v)).1),
                }
            }
            Cache::F64(a) => {
                let a = a.slice(s![.., rows, cols]);
                Sampled {
                    values: a.mapv(|v| unit(v).0),
                    footprint: a.mapv(|v| unit(v).1),
                }
            }
            Cache::Full(c) => Sampled {
                values: c
                    .values
                    .slice(s![.., rows.clone(), cols.clone()])
                    .to_owned(),
                footprint: c.footprint.slice(s![.., rows, cols]).to_owned(),
            },
        }
    }
}

impl Prepared<'_> {
    /// The part of `block` this input covers.
    pub(super) fn clip(&self, block: &Block) -> Option<Block> {
        let rows = block.rows.start.max(self.rows.start)..block.rows.end.min(self.rows.end);
        let cols = block.cols.start.max(self.cols.start)..block.cols.end.min(self.cols.end);
        (!rows.is_empty() && !cols.is_empty()).then_some(Block { rows, cols })
    }

    /// `block` relative to the input's rectangle.
    fn local(&self, block: &Block) -> (Range<usize>, Range<usize>) {
        (
            block.rows.start - self.rows.start..block.rows.end - self.rows.start,
            block.cols.start - self.cols.start..block.cols.end - self.cols.start,
        )
    }

    /// The input's samples over `block` (within its rectangle): from the cache, or computed.
    fn sample(&self, block: &Block) -> Result<Sampled> {
        match &self.cache {
            Some(c) => {
                let (r, k) = self.local(block);
                Ok(c.sampled(r, k))
            }
            None => self.compute(block),
        }
    }

    /// Samples the whole rectangle into the cache, block by block; leaves the input uncached
    /// when its samples do not fit the form [`cache_bytes_per_pixel`] counted.
    fn fill_cache(&mut self, size: (usize, usize)) -> Result<()> {
        let planes = self.plan.planes();
        let whole = (planes, self.rows.len(), self.cols.len());
        let mut cache = match self.weights {
            Some(_) => Cache::Full(Sampled {
                values: Array3::zeros(whole),
                footprint: Array3::zeros(whole),
            }),
            None => Cache::F32(Array3::zeros(whole)),
        };
        let (mut values, mut footprint) = (Vec::new(), Vec::new());
        let blocks = blocks_of(&self.rows, &self.cols, size);
        let mut next = 0;
        while let Some(block) = blocks.get(next) {
            let (bh, bw) = (block.rows.len(), block.cols.len());
            let n = planes * bh * bw;
            values.resize(n, 0.0);
            footprint.resize(n, 0.0);
            fn view(b: &mut [f64], shape: (usize, usize, usize)) -> Result<ArrayViewMut3<'_, f64>> {
                ArrayViewMut3::from_shape(shape, b).map_err(|e| Error::ShapeMismatch(e.to_string()))
            }
            let shape = (planes, bh, bw);
            self.compute_into(
                block,
                view(&mut values[..n], shape)?,
                view(&mut footprint[..n], shape)?,
            )?;
            let (v, f) = (&values[..n], &footprint[..n]);
            let unit = !matches!(cache, Cache::Full(_));
            if unit && f.iter().any(|&f| f != 0.0 && f != 1.0) {
                return Ok(());
            }
            if matches!(cache, Cache::F32(_)) && v.iter().any(|&v| f64::from(v as f32) != v) {
                // Float64 then: the float32 array is freed first (no more than 8 bytes a
                // pixel at any time, as counted), and the blocks done are sampled again.
                if let Cache::F32(a) = &mut cache {
                    *a = Array3::zeros((0, 0, 0));
                }
                cache = Cache::F64(Array3::zeros(whole));
                next = 0;
                continue;
            }
            next += 1;
            let (r, k) = self.local(block);
            // Block row (p, y) into the cache, each pixel through `put`.
            fn store<T>(
                a: &mut Array3<T>,
                (r, k): (&Range<usize>, &Range<usize>),
                (v, f): (&[f64], &[f64]),
                put: impl Fn(f64, f64) -> T,
            ) {
                let (bh, bw) = (r.len(), k.len());
                for p in 0..a.shape()[0] {
                    for (y, ry) in r.clone().enumerate() {
                        let at = (p * bh + y) * bw;
                        let pixels = v[at..at + bw].iter().zip(&f[at..at + bw]);
                        let mut row = a.slice_mut(s![p, ry, k.clone()]);
                        for (o, (&v, &f)) in row.iter_mut().zip(pixels) {
                            *o = put(v, f);
                        }
                    }
                }
            }
            let at = (&r, &k);
            match &mut cache {
                Cache::F32(a) => store(
                    a,
                    at,
                    (v, f),
                    |v, f| {
                        if f == 0.0 {
                            f32::NAN
                        } else {
                            v as f32
                        }
                    },
                ),
                Cache::F64(a) => store(a, at, (v, f), |v, f| if f == 0.0 { f64::NAN } else { v }),
                Cache::Full(c) => {
                    store(&mut c.values, at, (v, f), |v, _| v);
                    store(&mut c.footprint, at, (v, f), |_, f| f);
                }
            }
        }
        self.cache = Some(cache);
        Ok(())
    }

    /// Reprojects the input over `block`, as reproject prepares each input for combining.
    fn compute(&self, block: &Block) -> Result<Sampled> {
        let shape = (self.plan.planes(), block.rows.len(), block.cols.len());
        let mut values = Array3::<f64>::zeros(shape);
        let mut footprint = Array3::<f64>::zeros(shape);
        self.compute_into(block, values.view_mut(), footprint.view_mut())?;
        Ok(Sampled { values, footprint })
    }

    /// [`Prepared::compute`] into views (planes, block rows, block columns): NaN values (or
    /// weights) become 0 with a zero footprint; the footprint is multiplied by the weight.
    fn compute_into(
        &self,
        block: &Block,
        mut values: ArrayViewMut3<f64>,
        mut footprint: ArrayViewMut3<f64>,
    ) -> Result<()> {
        self.plan
            .compute_block(block, values.view_mut(), footprint.view_mut())?;
        let weights = match &self.weights {
            Some(w) => {
                let shape = (self.plan.planes(), block.rows.len(), block.cols.len());
                let mut weights = Array3::<f64>::zeros(shape);
                let mut unused = Array3::<f64>::zeros(shape);
                w.compute_block(block, weights.view_mut(), unused.view_mut())?;
                Some(weights)
            }
            None => None,
        };
        match weights {
            None => ndarray::Zip::from(&mut values)
                .and(&mut footprint)
                .for_each(|v, f| {
                    if v.is_nan() {
                        *v = 0.0;
                        *f = 0.0;
                    }
                }),
            Some(w) => ndarray::Zip::from(&mut values)
                .and(&mut footprint)
                .and(&w)
                .for_each(|v, f, &w| {
                    if v.is_nan() || w.is_nan() {
                        *v = 0.0;
                        *f = 0.0;
                    } else {
                        *f *= w;
                    }
                }),
        }
        Ok(())
    }
}

/// Reprojects every input onto `wcs_out` (output shape `shape_out`: rows and columns, or the
/// full shape with the inputs' leading dimensions) and combines them (see the module
/// documentation).
///
/// Errors: an empty input list, weights whose shape differs from their image's, a background
/// reference out of range, and whatever a reprojection of an input refuses; never a panic.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// # use ndarray::Array3;
/// // Leading dimensions (here 2 planes) come first in the output.
/// let cube = Array3::from_shape_fn((2, 32, 32), |(p, _, _)| p as f64);
/// let cube = ArraySource::new(cube.view().into_dyn())?;
/// let mosaic = reproject_and_coadd(&[MosaicInput::new(&cube, &left)], &out, &[32, 52],
///     &MosaicOptions::default())?;
/// assert_eq!(mosaic.data.shape(), &[2, 32, 52]);
/// assert_eq!((mosaic.data[[0, 16, 15]], mosaic.data[[1, 16, 15]]), (0.0, 1.0));
/// assert!(reproject_and_coadd(&[], &out, &[32, 52], &MosaicOptions::default()).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_and_coadd(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    shape_out: &[usize],
    options: &MosaicOptions,
) -> Result<Mosaic> {
    let full = full_shape_of(inputs, shape_out)?;
    check_output_memory(&full, 2 * std::mem::size_of::<f64>())?;
    let mut data = ArrayD::zeros(IxDyn(&full));
    let mut footprint = ArrayD::zeros(IxDyn(&full));
    let corrections = reproject_and_coadd_into(
        inputs,
        wcs_out,
        data.view_mut(),
        footprint.view_mut(),
        options,
    )?;
    Ok(Mosaic {
        data,
        footprint,
        corrections,
    })
}

/// The full output shape for an input of shape `input`: `shape_out` itself, or the input's
/// leading dimensions followed by `shape_out` when it has only rows and columns.
fn full_shape(input: &[usize], shape_out: &[usize]) -> Vec<usize> {
    if shape_out.len() == 2 && input.len() > 2 {
        let mut full = input[..input.len() - 2].to_vec();
        full.extend_from_slice(shape_out);
        full
    } else {
        shape_out.to_vec()
    }
}

/// [`reproject_and_coadd`] into caller arrays of the full output shape (e.g. memory-mapped
/// files), which are overwritten; returns the background corrections.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// # use ndarray::ArrayD;
/// let mut data = ArrayD::from_elem(vec![32, 52], -1.0);
/// let mut footprint = ArrayD::zeros(vec![32, 52]);
/// let corrections = reproject_and_coadd_into(&inputs, &out, data.view_mut(),
///     footprint.view_mut(), &MosaicOptions::default())?;
/// assert_eq!((data[[16, 5]], data[[16, 35]]), (0.0, 2.0)); // every pixel overwritten
/// assert_eq!(corrections.len(), 2);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_and_coadd_into(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    reproject_and_coadd_with_progress(inputs, wcs_out, data, footprint, options, &|_, _| {})
}

/// [`reproject_and_coadd_into`], calling `progress(done, total)` (from any thread) as output
/// blocks are combined.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// # use ndarray::ArrayD;
/// use std::sync::Mutex;
/// let (mut data, mut footprint) = (ArrayD::zeros(vec![32, 52]), ArrayD::zeros(vec![32, 52]));
/// let mut options = MosaicOptions::default();
/// options.reprojection.block_size = Some((16, 16)); // 2 × 4 blocks
/// let calls = Mutex::new(Vec::new());
/// reproject_and_coadd_with_progress(&inputs, &out, data.view_mut(), footprint.view_mut(),
///     &options, &|done, total| calls.lock().unwrap().push((done, total)))?;
/// let mut calls = calls.into_inner().unwrap();
/// calls.sort();
/// assert_eq!(calls.last(), Some(&(8, 8)));
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_and_coadd_with_progress(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    options: &MosaicOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Correction>> {
    let shape = data.shape().to_vec();
    coadd(
        inputs, wcs_out, &shape, None, data, footprint, options, progress,
    )
}

/// A part of a mosaic computed on its own (a dask block, a worker process's share): a window
/// of the output plane (every leading plane), and the background corrections computed once
/// for the whole mosaic by [`background_corrections`]. The part's pixels are bit-identical to
/// the same pixels of the whole mosaic.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// use ndarray::{s, ArrayD};
/// use reproject::engine::blocks::Block;
/// // Rows 8..24, columns 20..40, computed apart: the whole mosaic's pixels.
/// let part = MosaicPart { window: Block { rows: 8..24, cols: 20..40 }, corrections: None };
/// let (mut data, mut footprint) = (ArrayD::zeros(vec![16, 20]), ArrayD::zeros(vec![16, 20]));
/// let options = MosaicOptions::default();
/// reproject_and_coadd_part(&inputs, &out, &[32, 52], &part, data.view_mut(),
///     footprint.view_mut(), &options)?;
/// let whole = reproject_and_coadd(&inputs, &out, &[32, 52], &options)?;
/// assert_eq!(data, whole.data.slice(s![8..24, 20..40]).into_dyn());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MosaicPart {
    /// Rows and columns of the output plane.
    pub window: Block,
    /// One correction per input, subtracted instead of matching the backgrounds here; `None`:
    /// matched here, from every overlap (as the whole mosaic does), when the options ask.
    pub corrections: Option<Vec<Correction>>,
}

/// The background correction of every input of the mosaic (zero without matching), as
/// [`reproject_and_coadd`] computes and subtracts them: computed once, then given to every
/// [`MosaicPart`] computed apart. `shape_out` as for [`reproject_and_coadd`].
///
/// ```
/// use ndarray::{s, Array2};
/// use reproject::engine::blocks::Block;
/// use reproject::io::ArraySource;
/// use reproject::mosaic::coadd::*;
/// use reproject::wcs::Wcs;
/// let header = |crpix1: f64| Wcs::from_header_str(&format!(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
///      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// let (sa, sb) = (ArraySource::new(a.view().into_dyn())?, ArraySource::new(b.view().into_dyn())?);
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let options = MosaicOptions { background: Background::Offset, ..MosaicOptions::default() };
/// let corrections = background_corrections(&inputs, &out, &[32, 52], &options)?;
/// assert_eq!(corrections[1].offset - corrections[0].offset, 2.0);
/// // Columns 30..52 alone, with those corrections: the same pixels as the whole mosaic.
/// let part = MosaicPart { window: Block { rows: 0..32, cols: 30..52 }, corrections: Some(corrections) };
/// let (mut data, mut footprint) = (Array2::<f64>::zeros((32, 22)), Array2::<f64>::zeros((32, 22)));
/// reproject_and_coadd_part(&inputs, &out, &[32, 52], &part,
///     data.view_mut().into_dyn(), footprint.view_mut().into_dyn(), &options)?;
/// let whole = reproject_and_coadd(&inputs, &out, &[32, 52], &options)?;
/// assert_eq!(data.into_dyn(), whole.data.slice(s![.., 30..52]).into_dyn());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn background_corrections(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    shape_out: &[usize],
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    let full = full_shape_of(inputs, shape_out)?;
    let n_inputs = inputs.len();
    let inputs = shared(inputs);
    check_inputs(&inputs, &full, options)?;
    let mut prepared = prepare(&inputs, wcs_out, &full, options, SplinePrep::Usual)?;
    corrections(&mut prepared, n_inputs, options)
}

/// One [`MosaicPart`] of the mosaic of output shape `shape_out` (as for
/// [`reproject_and_coadd`]) into `data` and `footprint`, of the part's shape (the leading
/// dimensions, then the window's rows and columns), which are overwritten; returns the
/// corrections subtracted. Only the inputs covering the window are read, except to match the
/// backgrounds when the part brings no corrections.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// use ndarray::ArrayD;
/// use reproject::engine::blocks::Block;
/// // A part with no corrections matches the backgrounds itself, from every overlap.
/// let options = MosaicOptions { background: Background::Offset, ..MosaicOptions::default() };
/// let part = MosaicPart { window: Block { rows: 0..32, cols: 0..20 }, corrections: None };
/// let (mut data, mut footprint) = (ArrayD::zeros(vec![32, 20]), ArrayD::zeros(vec![32, 20]));
/// let corrections = reproject_and_coadd_part(&inputs, &out, &[32, 52], &part,
///     data.view_mut(), footprint.view_mut(), &options)?;
/// assert_eq!(corrections[1].offset - corrections[0].offset, 2.0);
/// assert_eq!(data[[16, 15]], 2.0); // the left image, corrected
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_and_coadd_part(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    shape_out: &[usize],
    part: &MosaicPart,
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    let full = full_shape_of(inputs, shape_out)?;
    let noop = |_: usize, _: usize| {};
    coadd(
        inputs,
        wcs_out,
        &full,
        Some(part),
        data,
        footprint,
        options,
        &noop,
    )
}

/// The mosaic of full output shape `shape` (or the window of `part`) into `data` and
/// `footprint` (the full shape, or the part's).
#[allow(clippy::too_many_arguments)]
fn coadd(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    shape: &[usize],
    part: Option<&MosaicPart>,
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    options: &MosaicOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Correction>> {
    if inputs.is_empty() {
        return Err(Error::InvalidArgument("no input data to mosaic".into()));
    }
    if data.shape() != footprint.shape() {
        return Err(Error::ShapeMismatch(format!(
            "output arrays of shapes {:?} and {:?}",
            data.shape(),
            footprint.shape()
        )));
    }
    let inputs = shared(inputs);
    check_inputs(&inputs, shape, options)?;
    let plane_out = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let window = match part {
        None => Block {
            rows: 0..plane_out.0,
            cols: 0..plane_out.1,
        },
        Some(p) => p.window.clone(),
    };
    if window.rows.end > plane_out.0 || window.cols.end > plane_out.1 {
        return Err(Error::InvalidArgument(format!(
            "the window of rows {:?} and columns {:?} is outside the {}x{} output",
            window.rows, window.cols, plane_out.0, plane_out.1
        )));
    }
    let mut expected = shape[..shape.len() - 2].to_vec();
    expected.extend([window.rows.len(), window.cols.len()]);
    if data.shape() != expected.as_slice() {
        return Err(Error::ShapeMismatch(format!(
            "output arrays of shape {:?}, expected {expected:?}",
            data.shape()
        )));
    }
    let given = part.and_then(|p| p.corrections.as_ref());
    if let Some(c) = given
        && c.len() != inputs.len()
    {
        return Err(Error::InvalidArgument(format!(
            "{} background corrections for {} inputs",
            c.len(),
            inputs.len()
        )));
    }
    let mut prepared = prepare(&inputs, wcs_out, shape, options, SplinePrep::Usual)?;
    let corrections = match given {
        Some(c) => c.clone(),
        None => corrections(&mut prepared, inputs.len(), options)?,
    };
    // Only the inputs covering the window take part in it.
    prepared.retain(|(_, p)| p.clip(&window).is_some());
    combine_blocks(
        &prepared,
        &corrections,
        data,
        footprint,
        &window,
        options,
        progress,
    )?;
    Ok(corrections)
}

/// The full output shape of a mosaic of `inputs` (see [`full_shape`]); an error without any.
fn full_shape_of(inputs: &[MosaicInput], shape_out: &[usize]) -> Result<Vec<usize>> {
    let first = inputs
        .first()
        .ok_or_else(|| Error::InvalidArgument("no input data to mosaic".into()))?;
    Ok(full_shape(first.source.shape(), shape_out))
}

/// The checks of the inputs of a mosaic of full output shape `shape`, before any work.
fn check_inputs(inputs: &[SharedInput], shape: &[usize], options: &MosaicOptions) -> Result<()> {
    if shape.len() < 2 {
        return Err(Error::ShapeMismatch(format!(
            "the output shape {shape:?} has fewer than two dimensions"
        )));
    }
    if let Some(r) = options.background_reference
        && r >= inputs.len()
    {
        return Err(Error::InvalidArgument(format!(
            "background_reference {r} is not one of the {} inputs",
            inputs.len()
        )));
    }
    for (k, input) in inputs.iter().enumerate() {
        let in_shape = input.source.shape();
        if in_shape.len() < 2 {
            return Err(Error::ShapeMismatch(format!(
                "input {k} has shape {in_shape:?}: not an image"
            )));
        }
        if let Some((w, _)) = &input.weights
            && w.shape() != in_shape
        {
            return Err(Error::ShapeMismatch(format!(
                "the weights of input {k} have shape {:?}, the image {in_shape:?}",
                w.shape()
            )));
        }
    }
    Ok(())
}

/// An input as the plans take it: its image and weights shared with them (so that plans of
/// opened files may own their sources, see [`PreparedInputs`]).
pub(crate) struct SharedInput<'a, 'w> {
    pub(crate) source: Arc<dyn ImageSource + 'a>,
    pub(crate) wcs: &'w Wcs,
    pub(crate) weights: Option<(Arc<dyn ImageSource + 'a>, Option<&'w Wcs>)>,
}

/// Borrowed inputs as shared ones.
fn shared<'a, 'w>(inputs: &'w [MosaicInput<'a>]) -> Vec<SharedInput<'a, 'w>> {
    inputs
        .iter()
        .map(|i| SharedInput {
            source: Arc::new(i.source),
            wcs: i.wcs,
            weights: i
                .weights
                .map(|(w, wcs)| (Arc::new(w) as Arc<dyn ImageSource + 'a>, wcs)),
        })
        .collect()
}

/// The inputs of a mosaic prepared once (their plans and output rectangles), whose windows
/// are then combined with corrections computed before (`super::plan::OpenedMosaic`).
pub(crate) struct PreparedInputs<'a>(Vec<(usize, Prepared<'a>)>);

impl<'a> PreparedInputs<'a> {
    /// Checks and prepares `inputs` for a mosaic of full output shape `shape`.
    pub(crate) fn new(
        inputs: &[SharedInput<'a, '_>],
        wcs_out: &Wcs,
        shape: &[usize],
        options: &MosaicOptions,
        splines: SplinePrep<'_>,
    ) -> Result<PreparedInputs<'a>> {
        check_inputs(inputs, shape, options)?;
        prepare(inputs, wcs_out, shape, options, splines).map(PreparedInputs)
    }

    /// Whether the plan of any input (or of its weights) is worth a GPU.
    pub(crate) fn worth_a_gpu(&self) -> bool {
        self.0.iter().any(|(_, p)| {
            std::iter::once(&p.plan)
                .chain(&p.weights)
                .any(|plan| plan.worth_a_gpu())
        })
    }

    /// Combines `window` (every leading plane) into `data` and `footprint` (the window's
    /// shape, C order), subtracting `corrections` (one per input).
    pub(crate) fn combine(
        &self,
        corrections: &[Correction],
        window: &Block,
        data: ArrayViewMutD<f64>,
        footprint: ArrayViewMutD<f64>,
        options: &MosaicOptions,
    ) -> Result<()> {
        combine_blocks(
            &self.0,
            corrections,
            data,
            footprint,
            window,
            options,
            &|_, _| {},
        )
    }
}

/// The plans of the inputs that cover some of the output (full shape `shape`), with their
/// output rectangles and input indices.
fn prepare<'a>(
    inputs: &[SharedInput<'a, '_>],
    wcs_out: &Wcs,
    shape: &[usize],
    options: &MosaicOptions,
    mut splines: SplinePrep<'_>,
) -> Result<Vec<(usize, Prepared<'a>)>> {
    let plane_out = (shape[shape.len() - 2], shape[shape.len() - 1]);
    // Each input reprojects on one thread per output block; blocks run in parallel.
    let reprojection = Options {
        parallel: Parallel::Serial,
        block_size: None,
        ..options.reprojection.clone()
    };
    let mut prepared = Vec::with_capacity(inputs.len());
    for (k, input) in inputs.iter().enumerate() {
        let input_plane = input.source.plane_shape();
        let Some((rows, cols)) = covered_rectangle(input_plane, input.wcs, wcs_out, plane_out)?
        else {
            continue;
        };
        // Each block is combined as soon as it is computed: its results stay in the caches.
        let plan_of = |source, wcs, splines: SplinePrep<'_>| {
            Plan::with_shared_source_and(source, wcs, wcs_out, shape, &reprojection, splines)
                .map(Plan::with_outputs_read_back)
                .map_err(|e| with_input(e, k))
        };
        let plan = plan_of(input.source.clone(), input.wcs, splines.reborrow())?;
        let weights = match &input.weights {
            Some((w, w_wcs)) => {
                let nan_as_zero: Arc<dyn ImageSource + 'a> = Arc::new(NanAsZero(w.clone()));
                let wcs = w_wcs.unwrap_or(input.wcs);
                Some(plan_of(nan_as_zero, wcs, splines.reborrow())?)
            }
            None => None,
        };
        prepared.push((
            k,
            Prepared {
                plan,
                weights,
                rows,
                cols,
                cache: None,
            },
        ));
    }
    Ok(prepared)
}

/// One correction per input (of `n_inputs`): matched from the overlaps when the options ask
/// (the inputs' samples then cached, when they fit), else zero.
fn corrections(
    prepared: &mut [(usize, Prepared)],
    n_inputs: usize,
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    if options.background == Background::None {
        return Ok(vec![Correction::default(); n_inputs]);
    }
    // Background matching reads every overlap twice or more: the inputs' samples are kept
    // when they fit in a quarter of the memory available (else recomputed).
    let bytes: u64 = prepared
        .iter()
        .map(|(_, p)| {
            (p.plan.planes() * p.rows.len() * p.cols.len() * cache_bytes_per_pixel(p)) as u64
        })
        .sum();
    if available_memory().is_none_or(|m| bytes <= m / 4) {
        let size = options
            .reprojection
            .block_size
            .unwrap_or((MOSAIC_BLOCK, MOSAIC_BLOCK));
        options.reprojection.parallel.install(|| {
            prepared
                .par_iter_mut()
                .try_for_each(|(_, p)| p.fill_cache(size))
        })??;
    }
    match_backgrounds(prepared, n_inputs, options.background, options)
}

/// The output block edge of mosaics when the options leave it open.
pub(crate) const MOSAIC_BLOCK: usize = 256;

/// The blocks of `rows` × `cols`, `size` at most.
fn blocks_of(rows: &Range<usize>, cols: &Range<usize>, size: (usize, usize)) -> Vec<Block> {
    blocks((rows.len(), cols.len()), size)
        .map(|b| Block {
            rows: rows.start + b.rows.start..rows.start + b.rows.end,
            cols: cols.start + b.cols.start..cols.start + b.cols.end,
        })
        .collect()
}

/// One correction per input from the pairwise differences of the overlapping inputs.
fn match_backgrounds(
    prepared: &[(usize, Prepared)],
    n_inputs: usize,
    mode: Background,
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    let n = prepared.len();
    let size = options
        .reprojection
        .block_size
        .unwrap_or((MOSAIC_BLOCK, MOSAIC_BLOCK));
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    // Per pair: the differences (x, y, first - second) where both have data.
    let fits = options.reprojection.parallel.install(|| {
        pairs
            .par_iter()
            .map(|&(a, b)| -> Result<Option<(f64, f64, f64)>> {
                let (pa, pb) = (&prepared[a].1, &prepared[b].1);
                let rows = pa.rows.start.max(pb.rows.start)..pa.rows.end.min(pb.rows.end);
                let cols = pa.cols.start.max(pb.cols.start)..pa.cols.end.min(pb.cols.end);
                if rows.is_empty() || cols.is_empty() {
                    return Ok(None);
                }
                if pa.cache.is_some() && pb.cache.is_some() {
                    return Ok(cached_pair_fit(pa, pb, &rows, &cols, mode));
                }
                let plane = mode == Background::Plane;
                let (mut points, mut differences) = (Vec::new(), Vec::new());
                for block in blocks_of(&rows, &cols, size) {
                    let (sa, sb) = (pa.sample(&block)?, pb.sample(&block)?);
                    let width = block.cols.len();
                    let pixels = block.rows.len() * width;
                    let pairs = sa
                        .values
                        .iter()
                        .zip(&sa.footprint)
                        .zip(sb.values.iter().zip(&sb.footprint));
                    for (i, ((va, fa), (vb, fb))) in pairs.enumerate() {
                        if *fa > 0.0 && *fb > 0.0 {
                            if plane {
                                let p = i % pixels;
                                let x = (block.cols.start + p % width) as f64;
                                let y = (block.rows.start + p / width) as f64;
                                points.push((x, y, va - vb));
                            } else {
                                differences.push(va - vb);
                            }
                        }
                    }
                }
                Ok(if plane {
                    fit_plane(&points)
                } else {
                    let m = median(&mut differences);
                    m.is_finite().then_some((m, 0.0, 0.0))
                })
            })
            .collect::<Result<Vec<_>>>()
    })??;
    // One least-squares system per coefficient (offset, x slope, y slope).
    let mut solved = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for (c, out) in solved.iter_mut().enumerate() {
        let mut matrix = vec![vec![f64::NAN; n]; n];
        for (&(a, b), fit) in pairs.iter().zip(&fits) {
            if let Some(f) = fit {
                let v = [f.0, f.1, f.2][c];
                matrix[a][b] = v;
                matrix[b][a] = -v;
            }
        }
        *out = solve_corrections(&matrix);
    }
    let mut corrections = vec![Correction::default(); n_inputs];
    for (p, (k, _)) in prepared.iter().enumerate() {
        corrections[*k] = Correction {
            offset: solved[0][p],
            slope_x: solved[1][p],
            slope_y: solved[2][p],
        };
    }
    if let Some(r) = options.background_reference {
        let reference = corrections[r];
        for c in &mut corrections {
            c.offset -= reference.offset;
            c.slope_x -= reference.slope_x;
            c.slope_y -= reference.slope_y;
        }
    }
    Ok(corrections)
}

/// The pair's offset (median difference, numpy's) or plane from the cached samples
/// ([`pair_fit`] over rows of the two caches).
fn cached_pair_fit(
    pa: &Prepared,
    pb: &Prepared,
    rows: &Range<usize>,
    cols: &Range<usize>,
    mode: Background,
) -> Option<(f64, f64, f64)> {
    let (Some(ca), Some(cb)) = (&pa.cache, &pb.cache) else {
        return None;
    };
    let planes = pa.plan.planes();
    let (xa, xb, w) = (
        cols.start - pa.cols.start,
        cols.start - pb.cols.start,
        cols.len(),
    );
    let (ya, yb) = (pa.rows.start, pb.rows.start);
    with_rows!(ca, |row_a| with_rows!(cb, |row_b| pair_fit(
        planes,
        rows,
        cols,
        move |p, y| row_a(p, y - ya, xa, w),
        move |p, y| row_b(p, y - yb, xb, w),
        mode == Background::Plane
    )))
}

/// Combines every output block of `window` (in parallel) into `data` and `footprint` (the
/// window's shape), then blanks the pixels no input covers.
fn combine_blocks(
    prepared: &[(usize, Prepared)],
    corrections: &[Correction],
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    window: &Block,
    options: &MosaicOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<()> {
    let (ny, nx) = (window.rows.len(), window.cols.len());
    let planes = data.len() / (ny * nx).max(1);
    let contiguous =
        || Error::ShapeMismatch("the output arrays must be contiguous (C order)".into());
    let mut data = data
        .into_shape_with_order((planes, ny, nx))
        .map_err(|_| contiguous())?;
    let mut footprint = footprint
        .into_shape_with_order((planes, ny, nx))
        .map_err(|_| contiguous())?;
    let size = options
        .reprojection
        .block_size
        .unwrap_or((MOSAIC_BLOCK, MOSAIC_BLOCK));
    let work = crate::engine::schedule::cut(data.view_mut(), footprint.view_mut(), size);
    let total = work.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    // On the GPU when the inputs are sampled there (and the combine mode allows).
    let device = DeviceCombiner::new(prepared, options.combine);
    let run = |(index, (block, mut d, mut f)): (
        usize,
        (Block, ArrayViewMut3<f64>, ArrayViewMut3<f64>),
    )| {
        // The block in the whole output's pixels.
        let block = Block {
            rows: window.rows.start + block.rows.start..window.rows.start + block.rows.end,
            cols: window.cols.start + block.cols.start..window.cols.start + block.cols.end,
        };
        let on_device = match &device {
            Some(device) => device.combine_block(
                prepared,
                corrections,
                &block,
                index,
                d.view_mut(),
                f.view_mut(),
                options,
            ),
            None => Ok(false),
        };
        match on_device {
            Ok(true) => Ok(()),
            Ok(false) => combine_block(prepared, corrections, &block, d, f, options),
            Err(e) => Err(e),
        }
        .map_err(|e| in_block(e, &block))?;
        progress(
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
        );
        Ok(())
    };
    options
        .reprojection
        .parallel
        .install(|| work.into_par_iter().enumerate().try_for_each(run))?
}

/// Combines the inputs covering `block` into its views.
fn combine_block(
    prepared: &[(usize, Prepared)],
    corrections: &[Correction],
    block: &Block,
    mut data: ArrayViewMut3<f64>,
    mut footprint: ArrayViewMut3<f64>,
    options: &MosaicOptions,
) -> Result<()> {
    let combine = options.combine;
    data.fill(initial_value(combine));
    footprint.fill(0.0);
    // Median and clipped: every covering input's (value, weight) per pixel.
    let stacked = matches!(combine, Combine::Median | Combine::Clipped { .. });
    let mut stack: Vec<Vec<(f64, f64)>> = if stacked {
        vec![Vec::new(); data.len()]
    } else {
        Vec::new()
    };
    let mut target = Target {
        block,
        data: data.view_mut(),
        footprint: footprint.view_mut(),
        stack: &mut stack,
        combine,
    };
    for (k, input) in prepared {
        let Some(part) = input.clip(block) else {
            continue;
        };
        let correction = corrections[*k];
        let w = part.cols.len();
        // The input's samples over the part: its cache (no copy) or computed now.
        match &input.cache {
            Some(cache) => {
                let (r, c) = input.local(&part);
                with_rows!(cache, |rows| target.add(&part, correction, move |p, y| {
                    rows(p, r.start + y, c.start, w)
                }))
            }
            None => {
                let s = input.compute(&part)?;
                target.add(&part, correction, |p, y| {
                    (
                        row_of(&s.values, p, y, 0, w),
                        row_of(&s.footprint, p, y, 0, w),
                    )
                })
            }
        }
    }
    finish(
        data,
        footprint.view(),
        &stack,
        combine,
        options.blank_pixel_value,
    );
    Ok(())
}

/// The value a block's data starts from before any input is added.
pub(super) fn initial_value(combine: Combine) -> f64 {
    match combine {
        Combine::Min => f64::INFINITY,
        Combine::Max => f64::NEG_INFINITY,
        _ => 0.0,
    }
}

/// The last step of combining a block: the means divided, the medians and clipped means taken
/// from `stack` (a (value, weight) list per pixel, in logical order), and `blank` where no
/// input has weight.
pub(super) fn finish(
    mut data: ArrayViewMut3<f64>,
    footprint: ArrayView3<f64>,
    stack: &[Vec<(f64, f64)>],
    combine: Combine,
    blank: f64,
) {
    // Row by row in logical order, the stack's order.
    let (rows, width) = (data.shape()[1], data.shape()[2]);
    for ((p, r), mut row) in ndarray::indices((data.shape()[0], rows))
        .into_iter()
        .zip(data.rows_mut())
    {
        let fps = footprint.slice(s![p, r, ..]);
        let (Some(out), Some(fps)) = (row.as_slice_mut(), fps.to_slice()) else {
            unreachable!("rows of C-order blocks are contiguous");
        };
        let first = (p * rows + r) * width;
        for (c, (out, &fp)) in out.iter_mut().zip(fps).enumerate() {
            match combine {
                Combine::Mean => *out /= fp,
                Combine::Median => {
                    let mut v: Vec<f64> = stack[first + c].iter().map(|p| p.0).collect();
                    *out = median(&mut v);
                }
                Combine::Clipped { sigma, ampfrac } => {
                    *out = clipped_mean(&stack[first + c], sigma, ampfrac)
                }
                _ => {}
            }
            if fp == 0.0 {
                *out = blank;
            }
        }
    }
}

/// An output block being combined: its views and, for median and clipped, the stack of
/// (value, weight) per pixel.
struct Target<'a, 'b> {
    block: &'a Block,
    data: ArrayViewMut3<'b, f64>,
    footprint: ArrayViewMut3<'b, f64>,
    stack: &'a mut Vec<Vec<(f64, f64)>>,
    combine: Combine,
}

impl Target<'_, '_> {
    /// Adds one input's samples over `part` (of the block), `rows(p, r)` giving row `r` of the
    /// part in plane `p`, less `correction`.
    fn add<R: Row>(
        &mut self,
        part: &Block,
        correction: Correction,
        rows: impl Fn(usize, usize) -> R,
    ) {
        let block = self.block;
        let width = block.cols.len();
        let form = correction.form();
        let (r0, c0, w) = (
            part.rows.start - block.rows.start,
            part.cols.start - block.cols.start,
            part.cols.len(),
        );
        for p in 0..self.data.shape()[0] {
            for r in 0..part.rows.len() {
                let mut d = self.data.slice_mut(s![p, r0 + r, c0..c0 + w]);
                let mut f = self.footprint.slice_mut(s![p, r0 + r, c0..c0 + w]);
                let (Some(d), Some(f)) = (d.as_slice_mut(), f.as_slice_mut()) else {
                    unreachable!("rows of C-order blocks are contiguous");
                };
                let row = rows(p, r);
                let n = row.width().min(w);
                let (row, d, f) = (row.prefix(n), &mut d[..n], &mut f[..n]);
                let y = (part.rows.start + r) as f64;
                let value = |v: f64, c: usize| match form {
                    CorrectionForm::None => v,
                    CorrectionForm::Constant(k) => v - k,
                    CorrectionForm::Plane => v - correction.at((part.cols.start + c) as f64, y),
                };
                match self.combine {
                    Combine::Mean | Combine::Sum => {
                        for c in 0..n {
                            let (v, wt) = row.sample(c);
                            // reproject zeroes values outside the footprint before summing.
                            let v = if wt == 0.0 { 0.0 } else { value(v, c) };
                            d[c] += v * wt;
                            f[c] += wt;
                        }
                    }
                    combine @ (Combine::First | Combine::Last | Combine::Min | Combine::Max) => {
                        for c in 0..n {
                            let (v, wt) = row.sample(c);
                            let v = value(v, c);
                            let take = match combine {
                                Combine::First => f[c] == 0.0,
                                Combine::Last => wt > 0.0,
                                Combine::Min => wt > 0.0 && v < d[c],
                                _ => wt > 0.0 && v > d[c],
                            };
                            if take {
                                f[c] = wt;
                                d[c] = v;
                            }
                        }
                    }
                    Combine::Median | Combine::Clipped { .. } => {
                        for (c, f) in f.iter_mut().enumerate() {
                            let (v, wt) = row.sample(c);
                            *f += wt;
                            if wt > 0.0 {
                                let i = (p * block.rows.len() + r0 + r) * width + c0 + c;
                                self.stack[i].push((value(v, c), wt));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// SWarp's CLIPPED combination of (value, weight) pairs: values further than
/// `sigma`·σ + `ampfrac`·|median| from the median are rejected (σ the standard deviation of
/// the values kept), repeatedly until none is; the weighted mean of the rest.
fn clipped_mean(points: &[(f64, f64)], sigma: f64, ampfrac: f64) -> f64 {
    let mut kept: Vec<(f64, f64)> = points.to_vec();
    loop {
        if kept.is_empty() {
            return f64::NAN;
        }
        let mut values: Vec<f64> = kept.iter().map(|p| p.0).collect();
        let m = median(&mut values);
        let n = kept.len() as f64;
        let mean = kept.iter().map(|p| p.0).sum::<f64>() / n;
        let var = kept.iter().map(|p| (p.0 - mean).powi(2)).sum::<f64>() / n;
        let limit = sigma * var.sqrt() + ampfrac * m.abs();
        let before = kept.len();
        kept.retain(|p| (p.0 - m).abs() <= limit);
        if kept.len() == before || kept.is_empty() {
            let (sw, swv) = kept
                .iter()
                .fold((0.0, 0.0), |(sw, swv), &(v, w)| (sw + w, swv + w * v));
            return if kept.is_empty() { m } else { swv / sw };
        }
    }
}

fn with_input(e: Error, k: usize) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("input {k}: {m}")),
        Error::ShapeMismatch(m) => Error::ShapeMismatch(format!("input {k}: {m}")),
        e => e,
    }
}

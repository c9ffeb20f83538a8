//! How a mosaic is made: the combine modes, background matching, the options, and the
//! background corrections subtracted from the inputs.

use std::str::FromStr;

use crate::engine::Options;
use crate::error::{Error, Result};

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

/// Options of [`reproject_and_coadd`](super::reproject_and_coadd), with reproject's defaults.
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
    pub(super) fn at(&self, x: f64, y: f64) -> f64 {
        self.offset + self.slope_x * x + self.slope_y * y
    }

    /// How the correction is subtracted, on the host and on the GPU alike.
    pub(in crate::mosaic) fn form(&self) -> CorrectionForm {
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
pub(in crate::mosaic) enum CorrectionForm {
    /// Not at all (a zero correction).
    None,
    /// This constant.
    Constant(f64),
    /// The plane at the output pixel ([`Correction::at`]).
    Plane,
}

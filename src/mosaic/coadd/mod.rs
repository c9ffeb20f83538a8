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
//! The parts: `options` (the combine modes, background matching, the options, the
//! corrections), `input` (the inputs and their checks), `prepared` (each input's plans and
//! output rectangle), `cache` (its samples kept for background matching), `matching` (the
//! corrections from the overlaps) and `combine` (the inputs combined block by block).
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

mod cache;
mod combine;
mod input;
mod matching;
mod options;
mod prepared;

pub(in crate::mosaic) use combine::{finish, initial_value};
pub use input::MosaicInput;
pub(crate) use input::SharedInput;
pub use matching::background_corrections;
pub(in crate::mosaic) use options::CorrectionForm;
pub use options::{Background, Combine, Correction, MosaicOptions};
pub use prepared::covered_rectangle;
pub(in crate::mosaic) use prepared::Prepared;
pub(crate) use prepared::PreparedInputs;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{ArrayD, ArrayViewMutD, IxDyn};

use crate::engine::blocks::{blocks, Block};
use crate::engine::check_output_memory;
use crate::engine::spline_share::SplinePrep;
use crate::error::{Error, Result};
use crate::wcs::Wcs;
use combine::combine_blocks;
use input::{check_inputs, shared};
use matching::corrections;
use prepared::prepare;

/// What a mosaic reports to its caller and hears from it: progress (output blocks combined,
/// of how many) and, when set, a request to stop.
#[derive(Clone, Copy)]
struct Watch<'a> {
    progress: &'a (dyn Fn(usize, usize) + Sync),
    cancel: Option<&'a AtomicBool>,
}

impl Watch<'_> {
    /// `Err(Cancelled)` once the caller has asked to stop.
    fn check(&self, at: &str) -> Result<()> {
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled(format!("mosaic cancelled {at}")));
        }
        Ok(())
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
    let never = AtomicBool::new(false);
    reproject_and_coadd_cancellable(inputs, wcs_out, data, footprint, options, progress, &never)
}

/// [`reproject_and_coadd_with_progress`] that stops when `cancel` is set (by another thread):
/// no further input is prepared and no further output block combined, and the call ends
/// with [`Error::Cancelled`] (the blocks combined by then stay in `data` and `footprint`).
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
/// use std::sync::atomic::AtomicBool;
/// use ndarray::ArrayD;
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let (mut data, mut footprint) = (ArrayD::zeros(vec![32, 52]), ArrayD::zeros(vec![32, 52]));
/// let cancel = AtomicBool::new(true); // asked to stop before it starts
/// let run = reproject_and_coadd_cancellable(&inputs, &out, data.view_mut(),
///     footprint.view_mut(), &MosaicOptions::default(), &|_, _| {}, &cancel);
/// assert!(matches!(run, Err(reproject::Error::Cancelled(_))));
/// assert_eq!(footprint.sum(), 0.0);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_and_coadd_cancellable(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    options: &MosaicOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<Correction>> {
    let shape = data.shape().to_vec();
    let watch = Watch {
        progress,
        cancel: Some(cancel),
    };
    coadd(
        inputs, wcs_out, &shape, None, data, footprint, options, watch,
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
    let watch = Watch {
        progress: &noop,
        cancel: None,
    };
    coadd(
        inputs,
        wcs_out,
        &full,
        Some(part),
        data,
        footprint,
        options,
        watch,
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
    watch: Watch<'_>,
) -> Result<Vec<Correction>> {
    watch.check("before it started")?;
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
    watch.check("after its inputs were prepared")?;
    let corrections = match given {
        Some(c) => c.clone(),
        None => corrections(&mut prepared, inputs.len(), options)?,
    };
    watch.check("after its background corrections")?;
    // Only the inputs covering the window take part in it.
    prepared.retain(|(_, p)| p.clip(&window).is_some());
    combine_blocks(
        &prepared,
        &corrections,
        data,
        footprint,
        &window,
        options,
        watch,
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

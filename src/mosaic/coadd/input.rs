//! The inputs of a mosaic: as the caller gives them (borrowed) and as the plans take them
//! (shared), and the checks made before any work.

use std::sync::Arc;

use super::MosaicOptions;
use crate::error::{Error, Result};
use crate::io::ImageSource;
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

/// The checks of the inputs of a mosaic of full output shape `shape`, before any work.
pub(super) fn check_inputs(
    inputs: &[SharedInput],
    shape: &[usize],
    options: &MosaicOptions,
) -> Result<()> {
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
/// opened files may own their sources, see [`PreparedInputs`](super::PreparedInputs)).
pub(crate) struct SharedInput<'a, 'w> {
    pub(crate) source: Arc<dyn ImageSource + 'a>,
    pub(crate) wcs: &'w Wcs,
    pub(crate) weights: Option<(Arc<dyn ImageSource + 'a>, Option<&'w Wcs>)>,
}

/// Borrowed inputs as shared ones.
pub(super) fn shared<'a, 'w>(inputs: &'w [MosaicInput<'a>]) -> Vec<SharedInput<'a, 'w>> {
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

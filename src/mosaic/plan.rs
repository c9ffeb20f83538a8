//! A mosaic as data ([`MosaicPlan`]: input files, output grid, options and the background
//! corrections computed once), so that worker processes can reopen it and each compute bands
//! of output rows ([`OpenedMosaic::compute_block`], a [`super::coadd::MosaicPart`] each),
//! bit-identical to the same rows of the whole mosaic.
//!
//! ```text
//! owner:  background_corrections (every overlap, once) ─▶ MosaicPlan ─▶ job file
//! worker: MosaicPlan::open (inputs memory-mapped) ─▶ bands of rows ─▶ reproject_and_coadd_part
//! ```

use std::sync::Arc;

use ndarray::{Array3, ArrayViewMut3, IxDyn};
use serde::{Deserialize, Serialize};

use super::coadd::{
    reproject_and_coadd_part, Correction, MosaicInput, MosaicOptions, MosaicPart, MOSAIC_BLOCK,
};
use crate::engine::blocks::Block;
use crate::engine::lazy::InputSpec;
use crate::error::{Error, Result};
use crate::io::ImageSource;
use crate::wcs::Wcs;

/// One input of a [`MosaicPlan`]: an image file and, optionally, a weights file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MosaicInputSpec {
    /// The image.
    pub image: InputSpec,
    /// Its WCS; `None` reads it from the image's FITS header.
    pub wcs: Option<Wcs>,
    /// Per-pixel weights of the image's shape, with the WCS of their FITS header (a `.npy`
    /// file: the image's).
    pub weights: Option<InputSpec>,
}

/// Everything needed to compute any band of rows of a mosaic, as data: it serialises (serde)
/// and is reopened in another process with [`MosaicPlan::open`].
///
/// ```
/// use reproject::engine::lazy::InputSpec;
/// use reproject::mosaic::coadd::{Correction, MosaicOptions};
/// use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
/// let input = MosaicInputSpec { image: InputSpec::Npy { path: "a.npy".into() }, wcs: Some(wcs.clone()), weights: None };
/// let plan = MosaicPlan {
///     inputs: vec![input],
///     wcs_out: wcs,
///     shape_out: vec![100, 100],
///     options: MosaicOptions::default(),
///     corrections: vec![Correction::default()],
/// };
/// let json = serde_json::to_string(&plan).unwrap();
/// assert_eq!(serde_json::from_str::<MosaicPlan>(&json).unwrap(), plan);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MosaicPlan {
    /// The inputs, in order.
    pub inputs: Vec<MosaicInputSpec>,
    /// The output WCS.
    pub wcs_out: Wcs,
    /// The full output shape (the inputs' leading dimensions, rows, columns).
    pub shape_out: Vec<usize>,
    /// How the inputs are reprojected and combined.
    pub options: MosaicOptions,
    /// The background correction of each input, computed once for the whole mosaic
    /// ([`super::coadd::background_corrections`]; zeros without matching).
    pub corrections: Vec<Correction>,
}

impl MosaicPlan {
    /// Opens every input (memory-mapped) and checks the plan against them.
    pub fn open(&self) -> Result<OpenedMosaic> {
        if self.corrections.len() != self.inputs.len() {
            return Err(Error::InvalidArgument(format!(
                "{} background corrections for {} inputs",
                self.corrections.len(),
                self.inputs.len()
            )));
        }
        if self.shape_out.len() < 2 {
            return Err(Error::ShapeMismatch(format!(
                "the output shape {:?} has fewer than two dimensions",
                self.shape_out
            )));
        }
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for (k, spec) in self.inputs.iter().enumerate() {
            let (image, header_wcs) = spec.image.open(spec.wcs.is_none())?;
            let wcs = spec.wcs.clone().or(header_wcs).ok_or_else(|| {
                Error::InvalidArgument(format!("input {k} carries no WCS: give it one"))
            })?;
            let weights = match &spec.weights {
                Some(w) => {
                    let fits = !matches!(w, InputSpec::Npy { .. });
                    Some(w.open(fits)?)
                }
                None => None,
            };
            inputs.push(OpenedInput {
                image,
                wcs,
                weights,
            });
        }
        Ok(OpenedMosaic {
            plan: self.clone(),
            inputs,
        })
    }

    /// The input files (images and weights), e.g. to stamp them.
    pub fn files(&self) -> Vec<&InputSpec> {
        self.inputs
            .iter()
            .flat_map(|i| std::iter::once(&i.image).chain(i.weights.as_ref()))
            .collect()
    }
}

/// An input of an [`OpenedMosaic`].
struct OpenedInput {
    image: Arc<dyn ImageSource>,
    wcs: Wcs,
    weights: Option<(Arc<dyn ImageSource>, Option<Wcs>)>,
}

/// A [`MosaicPlan`] with its inputs open: computes bands of output rows.
pub struct OpenedMosaic {
    plan: MosaicPlan,
    inputs: Vec<OpenedInput>,
}

impl OpenedMosaic {
    /// The full output shape.
    pub fn shape_out(&self) -> &[usize] {
        &self.plan.shape_out
    }

    /// Number of output planes (the product of the leading dimensions).
    pub fn planes(&self) -> usize {
        let s = &self.plan.shape_out;
        s[..s.len() - 2].iter().product()
    }

    /// (rows, columns) of an output plane.
    pub fn plane_shape_out(&self) -> (usize, usize) {
        let s = &self.plan.shape_out;
        (s[s.len() - 2], s[s.len() - 1])
    }

    /// The blocks worker processes share: bands of rows as tall as the mosaic's block
    /// (`block_size`'s rows, else 256), each the whole width (the inputs are prepared once per
    /// band).
    pub fn blocks(&self) -> Vec<Block> {
        let (ny, nx) = self.plane_shape_out();
        let rows = self
            .plan
            .options
            .reprojection
            .block_size
            .map_or(MOSAIC_BLOCK, |b| b.0)
            .max(1);
        (0..ny)
            .step_by(rows)
            .map(|r| Block {
                rows: r..(r + rows).min(ny),
                cols: 0..nx,
            })
            .collect()
    }

    /// Computes `block` of every plane into `data` and `footprint` (planes × block rows ×
    /// block columns, any strides): the mosaic's pixels there, bit for bit.
    pub fn compute_block(
        &self,
        block: &Block,
        mut data: ArrayViewMut3<f64>,
        mut footprint: ArrayViewMut3<f64>,
    ) -> Result<()> {
        let inputs: Vec<MosaicInput> = self
            .inputs
            .iter()
            .map(|i| MosaicInput {
                source: &*i.image,
                wcs: &i.wcs,
                weights: i
                    .weights
                    .as_ref()
                    .map(|(w, wcs)| (&**w as &dyn ImageSource, wcs.as_ref())),
            })
            .collect();
        let part = MosaicPart {
            window: block.clone(),
            corrections: Some(self.plan.corrections.clone()),
        };
        let s = &self.plan.shape_out;
        let mut shape = s[..s.len() - 2].to_vec();
        shape.extend([block.rows.len(), block.cols.len()]);
        // The part is computed into C-order arrays, then copied into the views (a band of a
        // cube's rows is not contiguous).
        let planes = (self.planes(), block.rows.len(), block.cols.len());
        let mut d = Array3::<f64>::zeros(planes);
        let mut f = Array3::<f64>::zeros(planes);
        reproject_and_coadd_part(
            &inputs,
            &self.plan.wcs_out,
            &self.plan.shape_out,
            &part,
            as_part(&mut d, &shape)?,
            as_part(&mut f, &shape)?,
            &self.plan.options,
        )?;
        data.assign(&d);
        footprint.assign(&f);
        Ok(())
    }
}

/// A C-order array of the planes of a part, seen in the part's shape.
fn as_part<'a>(a: &'a mut Array3<f64>, shape: &[usize]) -> Result<ndarray::ArrayViewMutD<'a, f64>> {
    a.view_mut()
        .into_shape_with_order(IxDyn(shape))
        .map_err(|e| Error::ShapeMismatch(e.to_string()))
}

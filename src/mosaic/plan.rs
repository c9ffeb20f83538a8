//! A mosaic as data ([`MosaicPlan`]: input files, output grid, options and the background
//! corrections computed once), so that worker processes can reopen it and each compute bands
//! of output rows ([`OpenedMosaic::compute_block`], as [`super::coadd::MosaicPart`]s are),
//! bit-identical to the same rows of the whole mosaic; the inputs are prepared once per
//! process.
//!
//! ```text
//! owner:  background_corrections (every overlap, once) ─▶ MosaicPlan ─▶ job file
//! worker: MosaicPlan::open (inputs memory-mapped, prepared once) ─▶ bands of rows combined
//! ```

use ndarray::{Array3, ArrayViewMut3};
use serde::{Deserialize, Serialize};

use super::coadd::{Correction, MosaicOptions, PreparedInputs, SharedInput, MOSAIC_BLOCK};
use crate::engine::blocks::Block;
use crate::engine::lazy::InputSpec;
use crate::engine::spline_share::SplinePrep;
use crate::engine::OutputSample;
use crate::error::{Error, Result};
use crate::wcs::Wcs;

/// One input of a [`MosaicPlan`]: an image file and, optionally, a weights file.
///
/// ```
/// # use ndarray::{Array2, Array3};
/// # use reproject::engine::lazy::InputSpec;
/// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
/// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
/// # use reproject::wcs::Wcs;
/// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let npy = |name: &str, value: f64| -> InputSpec {
/// #     let path = dir.join(name);
/// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
/// #     InputSpec::Npy { path }
/// # };
/// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
/// #     image, wcs: Some(wcs.clone()), weights: None };
/// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
/// let mut plan = MosaicPlan {
///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
///     wcs_out: out,
///     shape_out: vec![32, 52],
///     options: MosaicOptions::default(),
///     corrections: vec![Correction::default(); 2],
/// };
/// // The second image weighted 4 to the first's 1, from a .npy file of weights.
/// plan.inputs[1].weights = Some(npy("b_weights.npy", 4.0));
/// let mosaic = plan.open()?;
/// let (mut data, mut footprint) = (Array3::<f64>::zeros((1, 1, 52)), Array3::zeros((1, 1, 52)));
/// let row = reproject::engine::blocks::Block { rows: 16..17, cols: 0..52 };
/// mosaic.compute_block(&row, data.view_mut(), footprint.view_mut())?;
/// assert_eq!((data[[0, 0, 35]], footprint[[0, 0, 35]]), ((1.0 + 4.0 * 3.0) / 5.0, 5.0));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
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
/// let wcs =
///     Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
/// let input = MosaicInputSpec {
///     image: InputSpec::Npy {
///         path: "a.npy".into(),
///     },
///     wcs: Some(wcs.clone()),
///     weights: None,
/// };
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
    /// Opens every input (memory-mapped), checks the plan against them and prepares them
    /// once (their plans: for spline orders, the coefficients), for every band computed.
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// assert_eq!(plan.open()?.shape_out(), &[32, 52]);
    /// plan.corrections.pop(); // one correction for two inputs
    /// assert!(plan.open().is_err());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn open(&self) -> Result<OpenedMosaic> {
        self.open_with(SplinePrep::Usual)
    }

    /// Like [`MosaicPlan::open`], the inputs' spline coefficients prepared as `splines` says.
    pub(crate) fn open_with(&self, splines: SplinePrep<'_>) -> Result<OpenedMosaic> {
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
        let mut opened = Vec::with_capacity(self.inputs.len());
        for (k, spec) in self.inputs.iter().enumerate() {
            let (image, header_wcs) = spec.image.open(spec.wcs.is_none())?;
            let wcs = spec.wcs.clone().or(header_wcs).ok_or_else(|| {
                Error::InvalidArgument(format!("input {k} carries no WCS: give it one"))
            })?;
            let weights = match &spec.weights {
                Some(w) => Some(w.open(!matches!(w, InputSpec::Npy { .. }))?),
                None => None,
            };
            opened.push((image, wcs, weights));
        }
        let inputs: Vec<SharedInput<'static, '_>> = opened
            .iter()
            .map(|(image, wcs, weights)| SharedInput {
                source: image.clone(),
                wcs,
                weights: weights.as_ref().map(|(w, wcs)| (w.clone(), wcs.as_ref())),
            })
            .collect();
        let prepared = PreparedInputs::new(
            &inputs,
            &self.wcs_out,
            &self.shape_out,
            &self.options,
            splines,
        )?;
        Ok(OpenedMosaic {
            plan: self.clone(),
            prepared,
        })
    }

    /// The input files (images and weights), e.g. to stamp them.
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// plan.inputs[1].weights = Some(npy("b_weights.npy", 4.0));
    /// let names: Vec<_> = plan.files().iter().map(|f| match f {
    ///     InputSpec::Npy { path } => path.file_name().unwrap().to_owned(),
    ///     _ => unreachable!(),
    /// }).collect();
    /// assert_eq!(names, ["a.npy", "b.npy", "b_weights.npy"]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn files(&self) -> Vec<&InputSpec> {
        self.inputs
            .iter()
            .flat_map(|i| std::iter::once(&i.image).chain(i.weights.as_ref()))
            .collect()
    }
}

/// A [`MosaicPlan`] with its inputs open and prepared: computes bands of output rows.
///
/// ```
/// # use ndarray::{Array2, Array3};
/// # use reproject::engine::lazy::InputSpec;
/// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
/// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
/// # use reproject::wcs::Wcs;
/// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let npy = |name: &str, value: f64| -> InputSpec {
/// #     let path = dir.join(name);
/// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
/// #     InputSpec::Npy { path }
/// # };
/// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
/// #     image, wcs: Some(wcs.clone()), weights: None };
/// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
/// let mut plan = MosaicPlan {
///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
///     wcs_out: out,
///     shape_out: vec![32, 52],
///     options: MosaicOptions::default(),
///     corrections: vec![Correction::default(); 2],
/// };
/// use reproject::engine::blocks::Block;
/// // Bands computed in any order (here, by another process) give the mosaic's pixels.
/// let mosaic = plan.open()?;
/// let (mut data, mut footprint) = (Array3::<f64>::zeros((1, 1, 52)), Array3::zeros((1, 1, 52)));
/// mosaic.compute_block(&Block { rows: 16..17, cols: 0..52 }, data.view_mut(),
///     footprint.view_mut())?;
/// assert_eq!((data[[0, 0, 5]], data[[0, 0, 15]], data[[0, 0, 35]]), (0.0, 1.0, 2.0));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub struct OpenedMosaic {
    plan: MosaicPlan,
    prepared: PreparedInputs<'static>,
}

impl OpenedMosaic {
    /// Whether any input (or its weights) is worth a GPU, whatever this machine has
    /// ([`crate::engine::Plan::worth_a_gpu`]).
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// assert!(!plan.open()?.worth_a_gpu()); // two 32 × 32 inputs: the CPU's job
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn worth_a_gpu(&self) -> bool {
        self.prepared.worth_a_gpu()
    }

    /// The full output shape.
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// assert_eq!(plan.open()?.shape_out(), &[32, 52]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn shape_out(&self) -> &[usize] {
        &self.plan.shape_out
    }

    /// Number of output planes (the product of the leading dimensions).
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// assert_eq!(plan.open()?.planes(), 1); // no leading dimensions
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn planes(&self) -> usize {
        let s = &self.plan.shape_out;
        s[..s.len() - 2].iter().product()
    }

    /// (rows, columns) of an output plane.
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// assert_eq!(plan.open()?.plane_shape_out(), (32, 52));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn plane_shape_out(&self) -> (usize, usize) {
        let s = &self.plan.shape_out;
        (s[s.len() - 2], s[s.len() - 1])
    }

    /// The blocks worker processes share: bands of rows as tall as the mosaic's block
    /// (`block_size`'s rows, else 256), each the whole width.
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// plan.options.reprojection.block_size = Some((10, 16));
    /// let bands: Vec<_> = plan.open()?.blocks().into_iter().map(|b| (b.rows, b.cols)).collect();
    /// assert_eq!(bands, [(0..10, 0..52), (10..20, 0..52), (20..30, 0..52), (30..32, 0..52)]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
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
    /// block columns, any strides): the mosaic's pixels there, bit for bit (float64, rounded
    /// once into `T`).
    ///
    /// ```
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::lazy::InputSpec;
    /// # use reproject::mosaic::coadd::{Correction, MosaicOptions};
    /// # use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
    /// # use reproject::wcs::Wcs;
    /// # let dir = std::env::temp_dir().join(format!("rp-mosaic-plan-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
    /// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
    /// # let npy = |name: &str, value: f64| -> InputSpec {
    /// #     let path = dir.join(name);
    /// #     ndarray_npy::write_npy(&path, &Array2::<f64>::from_elem((32, 32), value)).unwrap();
    /// #     InputSpec::Npy { path }
    /// # };
    /// # let spec = |image: InputSpec, wcs: &Wcs| MosaicInputSpec {
    /// #     image, wcs: Some(wcs.clone()), weights: None };
    /// // Two 32 × 32 images in .npy files, of 1 (output columns 10..42) and of 3 (30..52).
    /// let mut plan = MosaicPlan {
    ///     inputs: vec![spec(npy("a.npy", 1.0), &left), spec(npy("b.npy", 3.0), &right)],
    ///     wcs_out: out,
    ///     shape_out: vec![32, 52],
    ///     options: MosaicOptions::default(),
    ///     corrections: vec![Correction::default(); 2],
    /// };
    /// use reproject::engine::blocks::Block;
    /// use reproject::mosaic::coadd::{reproject_and_coadd, MosaicInput};
    /// # use reproject::io::ArraySource;
    /// let mosaic = plan.open()?;
    /// // Columns 20..40 of rows 0..8, in float32, with strides (a transposed array).
    /// let mut data = Array3::<f32>::zeros((1, 20, 8));
    /// let mut footprint = data.clone();
    /// let d = data.view_mut().permuted_axes([0, 2, 1]);
    /// let f = footprint.view_mut().permuted_axes([0, 2, 1]);
    /// mosaic.compute_block(&Block { rows: 0..8, cols: 20..40 }, d, f)?;
    /// assert_eq!((data[[0, 0, 3]], data[[0, 15, 3]]), (1.0, 2.0)); // columns 20 and 35
    /// assert!(mosaic.compute_block(&Block { rows: 30..40, cols: 0..52 }, data.view_mut(),
    ///     footprint.view_mut()).is_err()); // rows past the mosaic
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_block<T: OutputSample>(
        &self,
        block: &Block,
        mut data: ArrayViewMut3<T>,
        mut footprint: ArrayViewMut3<T>,
    ) -> Result<()> {
        let (ny, nx) = self.plane_shape_out();
        if block.rows.end > ny || block.cols.end > nx {
            return Err(Error::InvalidArgument(format!(
                "rows {:?} and columns {:?} are outside the {ny}x{nx} mosaic",
                block.rows, block.cols
            )));
        }
        // Computed into C-order arrays, then copied into the views (a band of a cube's rows is
        // not contiguous).
        let planes = (self.planes(), block.rows.len(), block.cols.len());
        let (mut d, mut f) = (Array3::<f64>::zeros(planes), Array3::<f64>::zeros(planes));
        self.prepared.combine(
            &self.plan.corrections,
            block,
            d.view_mut().into_dyn(),
            f.view_mut().into_dyn(),
            &self.plan.options,
        )?;
        data.zip_mut_with(&d, |o, &v| *o = T::from_f64(v));
        footprint.zip_mut_with(&f, |o, &v| *o = T::from_f64(v));
        Ok(())
    }
}

//! Deferred evaluation: block handles that compute on demand, and plans that can be
//! serialised and reopened elsewhere (another thread, process or machine).
//!
//! ```
//! use std::sync::Arc;
//! use ndarray::Array2;
//! use reproject::engine::{lazy::LazyReprojection, Options, Plan};
//! use reproject::io::ArraySource;
//! use reproject::wcs::Wcs;
//! let wcs = Wcs::from_header_str(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -0.1\nCDELT2 = 0.1\n",
//! )?;
//! let image = Array2::<f64>::ones((64, 64));
//! let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
//! let options = Options { block_size: Some((32, 32)), ..Options::default() };
//! let lazy = LazyReprojection::new(Plan::with_shared_source(source, &wcs, &wcs, &[64, 64], &options)?);
//! let handles = lazy.blocks();
//! assert_eq!(handles.len(), 4);
//! let (data, footprint) = handles[3].compute()?; // any block, any order, any thread
//! assert_eq!(data.shape(), &[1, 32, 32]);
//! assert_eq!(footprint[[0, 0, 0]], 1.0);
//! # Ok::<(), reproject::Error>(())
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use ndarray::{Array3, ArrayD, ArrayViewMut3};
use serde::{Deserialize, Serialize};

use super::blocks::Block;
use super::spline_share::SplinePrep;
use super::{check_output_memory, zeroed_output, Options, OutputSample, Plan};
use crate::error::{Error, Result};
use crate::io::{ImageSource, NpySource};
use crate::wcs::Wcs;

/// A reprojection whose blocks are computed only when asked for.
pub struct LazyReprojection<'a> {
    plan: Arc<Plan<'a>>,
}

impl<'a> LazyReprojection<'a> {
    /// Wraps a plan (see [`Plan::with_shared_source`] for one that owns its input).
    pub fn new(plan: Plan<'a>) -> LazyReprojection<'a> {
        LazyReprojection {
            plan: Arc::new(plan),
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan<'a> {
        &self.plan
    }

    /// One handle per output block, in row-major order.
    pub fn blocks(&self) -> Vec<BlockHandle<'a>> {
        self.plan
            .blocks()
            .into_iter()
            .enumerate()
            .map(|(index, block)| BlockHandle {
                plan: self.plan.clone(),
                index,
                block,
            })
            .collect()
    }

    /// Computes the whole output (in parallel as the plan's options say), as
    /// [`super::reproject_interp`] would.
    pub fn compute(&self) -> Result<(ArrayD<f64>, ArrayD<f64>)> {
        let shape = self.plan.shape_out().to_vec();
        check_output_memory(&shape, 2 * std::mem::size_of::<f64>())?;
        let mut data = zeroed_output(&shape);
        let mut footprint = zeroed_output(&shape);
        self.plan
            .compute_into(data.view_mut(), footprint.view_mut())?;
        Ok((data, footprint))
    }
}

/// One output block of a lazy reprojection: cheap to clone and `Send`, computable on any
/// thread, in any order, any number of times, always with the same result.
#[derive(Clone)]
pub struct BlockHandle<'a> {
    plan: Arc<Plan<'a>>,
    index: usize,
    block: Block,
}

impl BlockHandle<'_> {
    /// The block's position in [`LazyReprojection::blocks`].
    pub fn index(&self) -> usize {
        self.index
    }

    /// The output window the block covers.
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// Computes the block: (data, footprint), each (planes, rows, columns). A block larger
    /// than the memory available is refused ([`check_output_memory`]).
    pub fn compute(&self) -> Result<(Array3<f64>, Array3<f64>)> {
        let shape = (
            self.plan.planes(),
            self.block.rows.len(),
            self.block.cols.len(),
        );
        check_output_memory(&[shape.0, shape.1, shape.2], 2 * std::mem::size_of::<f64>())?;
        let mut data = Array3::zeros(shape);
        let mut footprint = Array3::zeros(shape);
        self.compute_into(data.view_mut(), footprint.view_mut())?;
        Ok((data, footprint))
    }

    /// Computes the block into caller buffers of shape (planes, rows, columns), e.g. a window
    /// of an output file.
    pub fn compute_into<T: OutputSample>(
        &self,
        data: ArrayViewMut3<T>,
        footprint: ArrayViewMut3<T>,
    ) -> Result<()> {
        self.plan.compute_block(&self.block, data, footprint)
    }
}

/// Where the input of a [`ReprojectPlan`] lives, so that any process can reopen it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum InputSpec {
    /// A `.npy` file, memory-mapped.
    Npy {
        /// Its path.
        path: PathBuf,
    },
    /// An image HDU of a FITS file.
    #[cfg(feature = "fits")]
    Fits {
        /// Its path.
        path: PathBuf,
        /// HDU index (0 = primary).
        hdu: usize,
    },
}

/// Everything needed to compute any block of a reprojection, as data: it serialises (serde)
/// and can be reopened in another process with [`ReprojectPlan::open`].
///
/// ```
/// use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Options};
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
/// let plan = ReprojectPlan {
///     input: InputSpec::Npy { path: "in.npy".into() },
///     wcs_in: Some(wcs.clone()),
///     wcs_out: wcs,
///     shape_out: vec![100, 100],
///     options: Options::default(),
/// };
/// let json = plan.to_json()?;
/// assert_eq!(ReprojectPlan::from_json(&json)?, plan);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReprojectPlan {
    /// The input image.
    pub input: InputSpec,
    /// The input WCS; `None` reads it from the FITS header of the input.
    pub wcs_in: Option<Wcs>,
    /// The output WCS.
    pub wcs_out: Wcs,
    /// The output shape (see [`Plan::new`]).
    pub shape_out: Vec<usize>,
    /// Options.
    pub options: Options,
}

impl InputSpec {
    /// Opens the input (memory-mapped) and, when `with_wcs`, reads the WCS of a FITS input's
    /// header (`None` for `.npy`, which carries none).
    #[cfg_attr(not(feature = "fits"), allow(unused_variables))]
    pub fn open(&self, with_wcs: bool) -> Result<(Arc<dyn ImageSource>, Option<Wcs>)> {
        Ok(match self {
            InputSpec::Npy { path } => (Arc::new(NpySource::open(path)?), None),
            #[cfg(feature = "fits")]
            InputSpec::Fits { path, hdu } => {
                let fits = crate::io::FitsSource::open(path, *hdu)?;
                let wcs = if with_wcs { Some(fits.wcs()?) } else { None };
                (Arc::new(fits), wcs)
            }
        })
    }
}

impl ReprojectPlan {
    /// Opens the input and prepares the plan.
    pub fn open(&self) -> Result<Plan<'static>> {
        self.open_with(SplinePrep::Usual)
    }

    /// Opens the input and prepares the plan, its spline coefficients as `splines` says.
    pub(crate) fn open_with(&self, splines: SplinePrep<'_>) -> Result<Plan<'static>> {
        let (source, header_wcs) = self.input.open(self.wcs_in.is_none())?;
        let wcs_in = match (&self.wcs_in, header_wcs) {
            (Some(w), _) => w.clone(),
            (None, Some(w)) => w,
            (None, None) => {
                return Err(Error::InvalidArgument(
                    "a .npy input carries no WCS: the plan needs wcs_in".into(),
                ))
            }
        };
        Plan::with_shared_source_and(
            source,
            &wcs_in,
            &self.wcs_out,
            &self.shape_out,
            &self.options,
            splines,
        )
    }

    /// The plan as JSON.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self)
            .map_err(|e| Error::InvalidArgument(format!("cannot serialise the plan: {e}")))
    }

    /// A plan from JSON.
    pub fn from_json(text: &str) -> Result<ReprojectPlan> {
        serde_json::from_str(text)
            .map_err(|e| Error::InvalidArgument(format!("not a reprojection plan: {e}")))
    }
}

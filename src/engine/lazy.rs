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
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
//!      CDELT1 = -0.1\nCDELT2 = 0.1\n",
//! )?;
//! let image = Array2::<f64>::ones((64, 64));
//! let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
//! let options = Options { block_size: Some((32, 32)), ..Options::default() };
//! let lazy = LazyReprojection::new(Plan::with_shared_source(
//!     source,
//!     &wcs,
//!     &wcs,
//!     &[64, 64],
//!     &options,
//! )?);
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
use super::schedule::Schedule;
use super::spline_share::SplinePrep;
use super::{check_output_memory, zeroed_output, Options, OutputSample, Plan};
use crate::error::{Error, Result};
use crate::io::{ImageSource, NpySource};
use crate::wcs::Wcs;

/// A reprojection whose blocks are computed only when asked for.
///
/// ```
/// # use std::sync::Arc;
/// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
/// # use reproject::{io::ArraySource, wcs::Wcs};
/// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
/// # let wcs = Wcs::from_header_str(header)?;
/// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
/// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
/// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
/// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
/// let lazy = LazyReprojection::new(plan); // nothing is computed yet
/// let handles = lazy.blocks(); // 32 × 32 blocks of the 64 × 48 output
/// assert_eq!(handles.len(), 4);
/// let (data, footprint) = handles[2].compute()?; // rows 32..64, columns 0..32
/// assert_eq!(data.shape(), &[1, 32, 32]);
/// assert!((data[[0, 1, 2]] - image[[33, 2]]).abs() < 1e-6); // same WCS: the input again
/// assert_eq!(footprint[[0, 1, 2]], 1.0);
/// # Ok::<(), reproject::Error>(())
/// ```
pub struct LazyReprojection<'a> {
    plan: Arc<Plan<'a>>,
}

impl<'a> LazyReprojection<'a> {
    /// Wraps a plan (see [`Plan::with_shared_source`] for one that owns its input).
    ///
    /// ```
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 48], &options)?; // borrows `source`
    /// let lazy = LazyReprojection::new(plan);
    /// assert_eq!(lazy.blocks().len(), 4);
    /// assert_eq!(lazy.compute()?.0.shape(), &[64, 48]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(plan: Plan<'a>) -> LazyReprojection<'a> {
        LazyReprojection {
            plan: Arc::new(plan),
        }
    }

    /// The plan.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// let lazy = LazyReprojection::new(plan);
    /// assert_eq!(lazy.plan().shape_out(), &[64, 48]);
    /// assert_eq!(lazy.plan().planes(), 1);
    /// assert_eq!(lazy.plan().block_shape(), (32, 32));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn plan(&self) -> &Plan<'a> {
        &self.plan
    }

    /// One handle per output block, in row-major order.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// let handles = LazyReprojection::new(plan).blocks();
    /// let cols: Vec<_> = handles.iter().map(|h| h.block().cols.clone()).collect();
    /// assert_eq!(cols, [0..32, 32..48, 0..32, 32..48]); // row-major
    /// assert_eq!(handles.iter().map(|h| h.block().len()).sum::<usize>(), 64 * 48);
    /// # Ok::<(), reproject::Error>(())
    /// ```
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
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// use reproject::engine::reproject_interp;
    /// let (data, footprint) = LazyReprojection::new(plan).compute()?;
    /// let (expected, _) = reproject_interp(&*source, &wcs, &wcs, &[64, 48], &options)?;
    /// assert_eq!(data, expected);
    /// assert_eq!(footprint.shape(), &[64, 48]);
    /// assert_eq!(footprint[[10, 10]], 1.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute(&self) -> Result<(ArrayD<f64>, ArrayD<f64>)> {
        self.compute_with(&Schedule::default())
    }

    /// [`LazyReprojection::compute`] as `schedule` says (progress, cancellation: see
    /// [`super::schedule::run`]); cancelled, it ends with [`Error::Cancelled`].
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let plan = Plan::with_shared_source(source, &wcs, &wcs, &[64, 48], &Options::default())?;
    /// use std::sync::atomic::AtomicBool;
    /// use reproject::engine::schedule::Schedule;
    /// let cancel = AtomicBool::new(true); // asked to stop before it starts
    /// let schedule = Schedule { cancel: Some(&cancel), ..Schedule::default() };
    /// let run = LazyReprojection::new(plan).compute_with(&schedule);
    /// assert!(matches!(run, Err(reproject::Error::Cancelled(_))));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_with(&self, schedule: &Schedule<'_>) -> Result<(ArrayD<f64>, ArrayD<f64>)> {
        let shape = self.plan.shape_out().to_vec();
        check_output_memory(&shape, 2 * std::mem::size_of::<f64>())?;
        let mut data = zeroed_output(&shape);
        let mut footprint = zeroed_output(&shape);
        self.plan
            .compute_into_with(data.view_mut(), footprint.view_mut(), schedule)?;
        Ok((data, footprint))
    }
}

/// One output block of a lazy reprojection: cheap to clone and `Send`, computable on any
/// thread, in any order, any number of times, always with the same result.
///
/// ```
/// # use std::sync::Arc;
/// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
/// # use reproject::{io::ArraySource, wcs::Wcs};
/// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
/// # let wcs = Wcs::from_header_str(header)?;
/// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
/// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
/// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
/// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
/// let handle = LazyReprojection::new(plan).blocks()[3].clone();
/// let there = std::thread::scope(|s| {
///     let h = handle.clone(); // moved to another thread
///     s.spawn(move || h.compute()).join().unwrap()
/// })?;
/// assert_eq!(there, handle.compute()?); // another thread, another time: the same block
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Clone)]
pub struct BlockHandle<'a> {
    plan: Arc<Plan<'a>>,
    index: usize,
    block: Block,
}

impl BlockHandle<'_> {
    /// The block's position in [`LazyReprojection::blocks`].
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// let handles = LazyReprojection::new(plan).blocks();
    /// let indices: Vec<usize> = handles.iter().map(|h| h.index()).collect();
    /// assert_eq!(indices, [0, 1, 2, 3]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The output window the block covers.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// let handles = LazyReprojection::new(plan).blocks();
    /// let block = handles[1].block(); // second in row-major order: the top right
    /// assert_eq!((block.rows.clone(), block.cols.clone()), (0..32, 32..48));
    /// assert_eq!(block.len(), 32 * 16);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// Computes the block: (data, footprint), each (planes, rows, columns). A block larger
    /// than the memory available is refused ([`check_output_memory`]).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// use ndarray::s;
    /// let lazy = LazyReprojection::new(plan);
    /// let (whole, _) = lazy.compute()?;
    /// let (data, footprint) = lazy.blocks()[3].compute()?; // rows 32..64, columns 32..48
    /// assert_eq!(data.shape(), &[1, 32, 16]);
    /// assert_eq!(data.slice(s![0, .., ..]), whole.slice(s![32..64, 32..48]));
    /// assert_eq!(footprint[[0, 5, 5]], 1.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
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
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reproject::engine::{lazy::LazyReprojection, Options, Plan};
    /// # use reproject::{io::ArraySource, wcs::Wcs};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = Wcs::from_header_str(header)?;
    /// # let image = ndarray::Array2::from_shape_fn((64, 48), |(y, x)| (100 * y + x) as f64);
    /// # let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    /// # let options = Options { block_size: Some((32, 32)), ..Options::default() };
    /// # let plan = Plan::with_shared_source(source.clone(), &wcs, &wcs, &[64, 48], &options)?;
    /// use ndarray::{s, Array3};
    /// let mut data = Array3::<f32>::zeros((1, 64, 48));
    /// let mut footprint = Array3::<f32>::zeros((1, 64, 48));
    /// for handle in LazyReprojection::new(plan).blocks() {
    ///     let b = handle.block().clone(); // each block into its window of one f32 output
    ///     let window = s![.., b.rows.clone(), b.cols.clone()];
    ///     handle.compute_into(data.slice_mut(window), footprint.slice_mut(window))?;
    /// }
    /// assert!((data[[0, 40, 20]] - image[[40, 20]] as f32).abs() < 1e-3);
    /// assert_eq!(footprint[[0, 40, 20]], 1.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_into<T: OutputSample>(
        &self,
        data: ArrayViewMut3<T>,
        footprint: ArrayViewMut3<T>,
    ) -> Result<()> {
        self.plan.compute_block(&self.block, data, footprint)
    }
}

/// Where the input of a [`ReprojectPlan`] lives, so that any process can reopen it.
///
/// ```
/// use reproject::engine::lazy::InputSpec;
/// let spec = InputSpec::Npy { path: "survey/in.npy".into() };
/// let json = serde_json::to_string(&spec).unwrap(); // as it appears in a plan's JSON
/// assert_eq!(json, r#"{"Npy":{"path":"survey/in.npy"}}"#);
/// assert_eq!(serde_json::from_str::<InputSpec>(&json).unwrap(), spec);
/// ```
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
/// let wcs =
///     Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
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
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let path = std::env::temp_dir().join(format!("spec_open_doc_{}.npy", std::process::id()));
    /// use reproject::engine::lazy::InputSpec;
    /// let mut out = MappedOutput::create_npy(&path, &[2, 3], OutputType::F64, true)?;
    /// out.data_mut::<f64>()?.copy_from_slice(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    /// out.finish()?;
    /// let (source, wcs) = InputSpec::Npy { path: path.clone() }.open(true)?;
    /// assert!(wcs.is_none()); // a .npy file carries no WCS
    /// assert_eq!(source.shape(), &[2, 3]);
    /// let mut row = [0.0; 3];
    /// source.read_window(0, 1..2, 0..3, &mut row)?;
    /// assert_eq!(row, [3.0, 4.0, 5.0]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
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
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let path = std::env::temp_dir().join(format!("plan_open_doc_{}.npy", std::process::id()));
    /// use reproject::engine::{lazy::{InputSpec, LazyReprojection, ReprojectPlan}, Options};
    /// # let mut out = MappedOutput::create_npy(&path, &[8, 8], OutputType::F64, true)?;
    /// # let values = out.data_mut::<f64>()?;
    /// # values.iter_mut().enumerate().for_each(|(i, v)| *v = (i / 8 * 10 + i % 8) as f64);
    /// # out.finish()?;
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = reproject::wcs::Wcs::from_header_str(header)?;
    /// let mut plan = ReprojectPlan {
    ///     input: InputSpec::Npy { path: path.clone() }, // an 8 × 8 image, pixel (y, x) = 10y + x
    ///     wcs_in: None, // a .npy file has no header to read it from
    ///     wcs_out: wcs.clone(),
    ///     shape_out: vec![8, 8],
    ///     options: Options::default(),
    /// };
    /// assert!(matches!(plan.open(), Err(reproject::Error::InvalidArgument(_))));
    /// plan.wcs_in = Some(wcs);
    /// let (data, _) = LazyReprojection::new(plan.open()?).compute()?;
    /// assert!((data[[3, 4]] - 34.0).abs() < 1e-6); // same WCS: the input back
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
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
    ///
    /// ```
    /// use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Options};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = reproject::wcs::Wcs::from_header_str(header)?;
    /// let plan = ReprojectPlan {
    ///     input: InputSpec::Npy { path: "in.npy".into() },
    ///     wcs_in: None,
    ///     wcs_out: wcs,
    ///     shape_out: vec![3, 100, 200],
    ///     options: Options::default(),
    /// };
    /// let json = plan.to_json()?;
    /// assert!(json.contains(r#""shape_out":[3,100,200]"#));
    /// assert!(json.contains(r#""wcs_in":null"#));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self)
            .map_err(|e| Error::InvalidArgument(format!("cannot serialise the plan: {e}")))
    }

    /// A plan from JSON.
    ///
    /// ```
    /// use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Options};
    /// # let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// # let wcs = reproject::wcs::Wcs::from_header_str(header)?;
    /// let plan = ReprojectPlan {
    ///     input: InputSpec::Npy { path: "in.npy".into() },
    ///     wcs_in: None,
    ///     wcs_out: wcs,
    ///     shape_out: vec![3, 100, 200],
    ///     options: Options::default(),
    /// };
    /// let back = ReprojectPlan::from_json(&plan.to_json()?)?; // e.g. in a worker process
    /// assert_eq!(back, plan);
    /// let err = ReprojectPlan::from_json(r#"{"input": "in.npy"}"#).unwrap_err();
    /// assert!(err.to_string().contains("not a reprojection plan"));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<ReprojectPlan> {
        serde_json::from_str(text)
            .map_err(|e| Error::InvalidArgument(format!("not a reprojection plan: {e}")))
    }
}

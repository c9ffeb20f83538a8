//! Block executors: what computes one output block of a [`Plan`]. The CPU executor is the
//! engine itself; the CUDA executor ([`super::CudaExecutor`]) runs the same block on a GPU
//! (or the simulator) and holds the plan's device state. A plan picks its executor once, from
//! its options ([`Plan::executor`]), so every way of running it (the scheduler, lazy handles,
//! worker processes, dask blocks) computes on the same executor.
//!
//! ```
//! use ndarray::Array3;
//! use reproject::engine::blocks::Block;
//! use reproject::engine::executor::{BlockExecutor, BlockOut, CpuExecutor};
//! use reproject::engine::{Options, Plan};
//! use reproject::io::ArraySource;
//! use reproject::wcs::Wcs;
//! let wcs = Wcs::from_header_str(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
//!      CDELT1 = -0.1\nCDELT2 = 0.1\n",
//! )?;
//! let image = ndarray::Array2::<f64>::ones((16, 16));
//! let source = ArraySource::new(image.view().into_dyn())?;
//! let plan = Plan::new(&source, &wcs, &wcs, &[16, 16], &Options::default())?;
//! let block = Block { rows: 0..8, cols: 0..8 };
//! let (mut data, mut footprint) = (
//!     Array3::<f32>::zeros((1, 8, 8)),
//!     Array3::<f32>::zeros((1, 8, 8)),
//! );
//! CpuExecutor.compute(&plan, &block, BlockOut::F32(data.view_mut(), footprint.view_mut()))?;
//! assert_eq!(footprint[[0, 7, 7]], 1.0);
//! assert_eq!(plan.executor()?.name(), "cpu");
//! # Ok::<(), reproject::Error>(())
//! ```

use ndarray::ArrayViewMut3;

use super::blocks::Block;
use super::{Parallel, Plan};
use crate::error::Result;

/// The outputs of one block, (planes, rows, columns), of either output type.
///
/// ```
/// use ndarray::Array3;
/// use reproject::engine::executor::{BlockExecutor, BlockOut, CpuExecutor};
/// # use ndarray::Array2;
/// # use reproject::engine::{Options, Plan};
/// # use reproject::io::ArraySource;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
/// # let source = ArraySource::new(image.view().into_dyn())?;
/// # let options = Options { block_size: Some((16, 16)), ..Options::default() };
/// # let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
/// let (mut data, mut footprint) = (Array3::<f32>::zeros((1, 16, 16)), Array3::zeros((1, 16, 16)));
/// let out = BlockOut::F32(data.view_mut(), footprint.view_mut());
/// CpuExecutor.compute(&plan, &plan.blocks()[0], out)?;
/// assert_eq!(data[[0, 3, 4]], image[[3, 5]] as f32);
/// # Ok::<(), reproject::Error>(())
/// ```
pub enum BlockOut<'a> {
    /// Float64 values and footprint.
    F64(ArrayViewMut3<'a, f64>, ArrayViewMut3<'a, f64>),
    /// Float32 values and footprint.
    F32(ArrayViewMut3<'a, f32>, ArrayViewMut3<'a, f32>),
}

impl BlockOut<'_> {
    /// The same outputs, reborrowed.
    ///
    /// ```
    /// use ndarray::Array3;
    /// use reproject::engine::executor::{BlockExecutor, BlockOut, CpuExecutor};
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// # let options = Options { block_size: Some((16, 16)), ..Options::default() };
    /// # let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
    /// let (mut data, mut footprint) = (
    ///     Array3::<f64>::zeros((1, 16, 16)),
    ///     Array3::zeros((1, 16, 16)),
    /// );
    /// let mut out = BlockOut::F64(data.view_mut(), footprint.view_mut());
    /// // Two blocks of the same shape, one after the other, into the same arrays.
    /// CpuExecutor.compute(&plan, &plan.blocks()[0], out.reborrow())?;
    /// CpuExecutor.compute(&plan, &plan.blocks()[2], out)?; // rows 16..32
    /// assert!((data[[0, 3, 4]] - image[[19, 5]]).abs() < 1e-6);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn reborrow(&mut self) -> BlockOut<'_> {
        match self {
            BlockOut::F64(d, f) => BlockOut::F64(d.view_mut(), f.view_mut()),
            BlockOut::F32(d, f) => BlockOut::F32(d.view_mut(), f.view_mut()),
        }
    }

    /// The shape of each output.
    ///
    /// ```
    /// use ndarray::Array3;
    /// use reproject::engine::executor::BlockOut;
    /// let (mut data, mut footprint) = (Array3::<f64>::zeros((2, 8, 4)), Array3::zeros((2, 8, 4)));
    /// assert_eq!(BlockOut::F64(data.view_mut(), footprint.view_mut()).shape(), &[2, 8, 4]);
    /// ```
    pub fn shape(&self) -> &[usize] {
        match self {
            BlockOut::F64(d, _) => d.shape(),
            BlockOut::F32(d, _) => d.shape(),
        }
    }
}

/// Computes blocks of a plan. Implementations are shared by every thread of a run; a block
/// computes to the same bits whatever the thread, the order, or the other blocks.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use ndarray::ArrayD;
/// use reproject::engine::blocks::Block;
/// use reproject::engine::executor::{BlockExecutor, BlockOut, CpuExecutor};
/// // An executor of one's own: the CPU's, counting the blocks it computes.
/// struct Counting(AtomicUsize);
/// impl BlockExecutor for Counting {
///     fn name(&self) -> String {
///         "counting".into()
///     }
///     fn compute(&self, plan: &Plan, block: &Block, out: BlockOut<'_>) -> reproject::Result<()> {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         CpuExecutor.compute(plan, block, out)
///     }
/// }
/// # use ndarray::Array2;
/// # use reproject::engine::{Options, Plan};
/// # use reproject::io::ArraySource;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
/// # let source = ArraySource::new(image.view().into_dyn())?;
/// # let options = Options { block_size: Some((16, 16)), ..Options::default() };
/// # let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
/// let counting = Arc::new(Counting(AtomicUsize::new(0)));
/// let plan = plan.with_executor(counting.clone());
/// let (mut data, mut footprint) = (
///     ArrayD::<f64>::zeros(vec![32, 32]),
///     ArrayD::zeros(vec![32, 32]),
/// );
/// plan.compute_into(data.view_mut(), footprint.view_mut())?;
/// assert_eq!(counting.0.load(Ordering::Relaxed), 4);
/// assert!((data[[20, 7]] - image[[20, 8]]).abs() < 1e-6);
/// # Ok::<(), reproject::Error>(())
/// ```
pub trait BlockExecutor: Send + Sync {
    /// A short name for logs and summaries (`cpu`, `cuda:0`, ...).
    fn name(&self) -> String;

    /// Computes `block` of `plan` into `out` (every plane).
    fn compute(&self, plan: &Plan, block: &Block, out: BlockOut<'_>) -> Result<()>;

    /// The block shape this executor works best with for an output plane of `shape`, when
    /// the options leave it open (`None`: the CPU's choice), into fresh outputs or not
    /// ([`Plan::with_fresh_outputs`]).
    fn preferred_block(
        &self,
        _shape: (usize, usize),
        _fresh_outputs: bool,
    ) -> Option<(usize, usize)> {
        None
    }

    /// How many blocks to run at once when the options ask for `requested`;
    /// `fresh_outputs`: the results land in fresh memory, whose first writes fault in and
    /// zero its pages ([`Plan::with_fresh_outputs`]).
    fn parallel(&self, requested: Parallel, _fresh_outputs: bool) -> Parallel {
        requested
    }

    /// Why this executor stopped using its device and computes on the CPU, if it did (the
    /// GPU failed mid-run); `None` for the CPU executor.
    fn failure(&self) -> Option<String> {
        None
    }

    /// This executor as the CUDA executor, when it is one: for callers that keep a block's
    /// samples on the device (mosaics combined on the GPU).
    fn as_cuda(&self) -> Option<&super::CudaExecutor> {
        None
    }
}

/// The CPU engine ([`Plan::compute_block_on_cpu`]).
///
/// ```
/// use std::sync::Arc;
/// use reproject::engine::executor::CpuExecutor;
/// # use ndarray::Array2;
/// # use reproject::engine::{Options, Plan};
/// # use reproject::io::ArraySource;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
/// # let source = ArraySource::new(image.view().into_dyn())?;
/// # let options = Options { block_size: Some((16, 16)), ..Options::default() };
/// # let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
/// let plan = plan.with_executor(Arc::new(CpuExecutor));
/// assert_eq!(plan.executor()?.name(), "cpu");
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuExecutor;

impl BlockExecutor for CpuExecutor {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn compute(&self, plan: &Plan, block: &Block, out: BlockOut<'_>) -> Result<()> {
        match out {
            BlockOut::F64(d, f) => plan.compute_block_on_cpu(block, d, f),
            BlockOut::F32(d, f) => plan.compute_block_on_cpu(block, d, f),
        }
    }
}

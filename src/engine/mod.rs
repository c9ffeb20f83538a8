//! `reproject_interp` on the CPU: an output-block-driven engine.
//!
//! ```text
//! output plane ──cut into blocks──▶ per block:
//!     output pixels ──CoordinateMap (WCS out → sky → WCS in, round-trip check)──▶ input positions
//!     input window covering every tap ──ImageSource::read_window (or spline coefficients,
//!       computed once per plan, on first use when a GPU may prefilter instead)──▶ f64
//!     scipy-exact sampling (order 0–5, edge and NaN rules) ──▶ block of the output + footprint
//! ```
//!
//! One function computes one block ([`Plan::compute_block`]); the serial loop, the thread pool
//! and any external scheduler all call it, so `block_size` and `parallel` never change a
//! value. Inputs are read window by window, so memory-mapped files are never loaded whole.
//!
//! ```
//! use ndarray::Array2;
//! use reproject::engine::{reproject_interp, Options};
//! use reproject::io::ArraySource;
//! use reproject::wcs::Wcs;
//! let header = |crpix: f64| format!(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
//!      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
//! let (wcs_in, wcs_out) = (
//!     Wcs::from_header_str(&header(16.0))?,
//!     Wcs::from_header_str(&header(15.0))?,
//! );
//! let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
//! let source = ArraySource::new(image.view().into_dyn())?;
//! let (data, footprint) =
//!     reproject_interp(&source, &wcs_in, &wcs_out, &[32, 32], &Options::default())?;
//! // Output pixel x shows input pixel x + 1.
//! assert!((data[[5, 5]] - image[[5, 6]]).abs() < 1e-6);
//! assert_eq!(footprint[[5, 31]], 0.0);
//! # Ok::<(), reproject::Error>(())
//! ```

pub mod blocks;
mod checks;
pub mod coefficients;
pub mod coords;
pub mod cost;
mod cpu;
mod crew;
mod device_choice;
pub mod executor;
pub(crate) mod gpu_executor;
mod gpu_times;
pub mod kernel_params;
pub mod kernel_variant;
pub mod lazy;
mod memory;
mod options;
mod output_sample;
mod plan_blocks;
mod plan_new;
mod precision;
mod prefilter;
pub mod schedule;
mod spectral;
pub mod spline_share;
mod streaming;

use std::sync::{Arc, OnceLock};

use ndarray::{ArrayD, ArrayViewMutD};

use crate::error::{Error, Result};
pub use crate::gpu::{Backend, Devices};

use crate::io::ImageSource;
use crate::pixel_transform::PositionTable;
use crate::wcs::Wcs;
use blocks::{auto_block_size, Block};
pub use checks::{check_plan, input_positions};

use coords::CoordinateMap;
use device_choice::AutoChoice;
use executor::BlockExecutor;
pub use gpu_executor::CudaExecutor;
pub use gpu_times::HostTimes;
pub(crate) use memory::{advise_huge_pages, check_working_memory};
pub use memory::{check_output_memory, mostly_unfaulted, zeroed_output};
pub use options::{Options, Parallel};
pub use output_sample::OutputSample;
pub use precision::Precision;
use precision::Rounding;
use prefilter::Coefficients;
use spectral::SpectralAxis;

/// The input of a plan: borrowed from the caller, or shared and owned (for plans that outlive
/// the call that made them, such as lazy block handles).
enum SourceRef<'a> {
    Borrowed(&'a dyn ImageSource),
    Shared(Arc<dyn ImageSource + 'a>),
}

impl<'a> std::ops::Deref for SourceRef<'a> {
    type Target = dyn ImageSource + 'a;
    fn deref(&self) -> &Self::Target {
        match self {
            SourceRef::Borrowed(s) => *s,
            SourceRef::Shared(s) => s.as_ref(),
        }
    }
}

/// Everything needed to compute any block of the output.
///
/// ```
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
/// use ndarray::Array3;
/// // A plan computes any block by itself, in any order, on any thread.
/// let options = Options { block_size: Some((8, 8)), ..Options::default() };
/// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
/// let block = &plan.blocks()[5]; // rows 8..16, columns 8..16
/// let mut data = Array3::<f64>::zeros((1, 8, 8));
/// let mut footprint = data.clone();
/// plan.compute_block(block, data.view_mut(), footprint.view_mut())?;
/// // Output pixel x shows input pixel x + 1.
/// assert!((data[[0, 2, 3]] - image[[10, 12]]).abs() < 1e-6);
/// assert_eq!(footprint[[0, 2, 3]], 1.0);
/// # Ok::<(), reproject::Error>(())
/// ```
pub struct Plan<'a> {
    source: SourceRef<'a>,
    coords: CoordinateMap,
    /// Output shape: leading dimensions, rows, columns.
    shape_out: Vec<usize>,
    /// Input plane shape (rows, columns).
    plane_shape_in: (usize, usize),
    /// Output planes (product of the output's leading dimensions).
    planes: usize,
    /// Input planes.
    planes_in: usize,
    /// Interpolation along the axes beyond the plane that differ between the two WCS.
    spectral: Option<SpectralAxis>,
    /// The input's leading (numpy-order) dimensions.
    lead_in: Vec<usize>,
    options: Options,
    rounding: Rounding,
    /// The CPU's spline coefficients (orders ≥ 2): computed when the plan is made for the CPU
    /// backend, else on first use by the CPU ([`Plan::coefficients`]), so that a plan the GPU
    /// computes (which prefilters on the device) never makes them unless a block falls back
    /// to the CPU or the input planes do not fit on the device.
    coefficients: OnceLock<Result<Coefficients>>,
    /// What computes the blocks, chosen on first use from the options ([`Plan::executor`]).
    executor: OnceLock<Arc<dyn BlockExecutor>>,
    /// [`Backend::Auto`]'s choice, made once without opening a GPU ([`Plan::auto_decision`]).
    auto: OnceLock<AutoChoice>,
    /// Bytes of fresh memory the results fill ([`Plan::with_fresh_outputs`]).
    fresh_output_bytes: u64,
    /// Whether the CPU engine stores results past the caches (see
    /// [`Plan::with_outputs_read_back`]).
    stream_outputs: bool,
    /// The GPU state of device-resident calls ([`Plan::compute_block_on_device`]).
    device_resident: OnceLock<Result<Arc<(CudaExecutor, gpu_executor::Resident)>>>,
}

/// The parts of a plan the GPU kernels' parameters are made of ([`Plan::kernel_view`]).
pub(crate) struct KernelView<'p> {
    /// The output → input pixel map.
    pub coords: &'p CoordinateMap,
    /// Whether input values are rounded to float32 before interpolation.
    pub values_f32: bool,
    /// Whether results are rounded to float32.
    pub result_f32: bool,
    /// Whether axes beyond the image plane are interpolated (CPU only).
    pub interpolates_beyond_plane: bool,
}

/// Where a plan's input positions come from.
enum Geometry<'w> {
    /// Output pixel → world → input pixel through two WCS.
    Wcs { wcs_in: &'w Wcs, wcs_out: &'w Wcs },
    /// Given for every pixel of the output plane.
    Positions(PositionTable),
}

impl<'a> Plan<'a> {
    /// The output shape (leading dimensions, rows, columns).
    ///
    /// ```
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
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[20, 24], &Options::default())?;
    /// assert_eq!(plan.shape_out(), &[20, 24]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn shape_out(&self) -> &[usize] {
        &self.shape_out
    }

    /// Rows and columns of one output plane.
    ///
    /// ```
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
    /// # use ndarray::Array3;
    /// let cube = Array3::<f64>::zeros((3, 32, 32));
    /// let cube = ArraySource::new(cube.view().into_dyn())?;
    /// let plan = Plan::new(&cube, &wcs_in, &wcs_out, &[20, 24], &Options::default())?;
    /// assert_eq!(plan.plane_shape_out(), (20, 24));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn plane_shape_out(&self) -> (usize, usize) {
        let n = self.shape_out.len();
        (self.shape_out[n - 2], self.shape_out[n - 1])
    }

    /// Number of output planes (product of the leading dimensions).
    ///
    /// ```
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
    /// # use ndarray::Array4;
    /// let hypercube = Array4::<f64>::zeros((2, 3, 32, 32));
    /// let hypercube = ArraySource::new(hypercube.view().into_dyn())?;
    /// let plan = Plan::new(&hypercube, &wcs_in, &wcs_out, &[20, 24], &Options::default())?;
    /// assert_eq!(plan.planes(), 6);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// The options in force.
    ///
    /// ```
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
    /// use reproject::interp::Order;
    /// let options = Options { order: Order::Bicubic, ..Options::default() };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
    /// assert_eq!(plan.options().order, Order::Bicubic);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether the exact TAN → TAN homography is in use.
    ///
    /// ```
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
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &Options::default())?;
    /// assert!(plan.uses_homography()); // TAN to TAN, same frame, no distortion
    /// let car = Wcs::from_header_str(&header(15.0).replace("TAN", "CAR"))?;
    /// let plan = Plan::new(&source, &wcs_in, &car, &[32, 32], &Options::default())?;
    /// assert!(!plan.uses_homography());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn uses_homography(&self) -> bool {
        self.coords.is_homography()
    }

    /// The block shape used when the options leave it open: the GPU's for a plan computed on
    /// a GPU (shorter blocks into fresh outputs, [`Plan::with_fresh_outputs`]), else the
    /// CPU's for its threads. Found without opening a GPU (the owner of GPU worker
    /// processes, or of lazy blocks, never needs a context): `Auto` asks the executor once it
    /// is chosen, and before that follows its choice ([`Plan::runs_on_gpu`]).
    ///
    /// ```
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
    /// let options = Options { block_size: Some((8, 100)), ..Options::default() };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
    /// assert_eq!(plan.block_shape(), (8, 32)); // no wider than the output
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn block_shape(&self) -> (usize, usize) {
        let (ny, nx) = self.plane_shape_out();
        if let Some((by, bx)) = self.options.block_size {
            return (by.min(ny.max(1)), bx.min(nx.max(1)));
        }
        let preferred = match (self.options.backend, self.executor.get()) {
            (Backend::Cpu, _) => None,
            (Backend::Auto, Some(chosen)) => chosen.preferred_block((ny, nx), self.outputs_fresh()),
            _ => self.runs_on_gpu().then(|| self.gpu_block_shape()),
        };
        preferred.unwrap_or_else(|| auto_block_size((ny, nx), self.options.parallel.threads()))
    }

    /// The block shape a GPU computes this plan in when the options leave it open (shorter
    /// blocks into fresh outputs, [`Plan::with_fresh_outputs`]), whatever this machine has.
    ///
    /// ```
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[3000, 5000], &Options::default())?;
    /// assert_eq!(plan.gpu_block_shape(), (1024, 2048));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn gpu_block_shape(&self) -> (usize, usize) {
        gpu_executor::gpu_block(self.plane_shape_out(), self.outputs_fresh())
    }

    /// This plan with its results (data and footprint) going into `bytes` of fresh memory:
    /// allocated for the call and never written, as [`reproject_interp`] and every Python
    /// call without `output_array` return them. [`Backend::Auto`] then counts the first
    /// write of those pages on either device, by the threads that write them there (see
    /// [`cost`]: the CPU engine's, or the GPU path's host threads, which then run on every
    /// core up to 16 whatever the CPU's parallelism, on blocks of 128 rows instead of 1024:
    /// [`Plan::block_shape`]). Say so before the plan computes anything, and say so of
    /// outputs a caller gives that were never written too ([`Plan::with_untouched_outputs`]
    /// finds them: [`reproject_interp_into`] and the Python bindings ask it of the arrays
    /// given, the CLI tells it of the files it creates). The scheduler, the blocks and the
    /// estimate all follow what the plan was told.
    ///
    /// ```
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &Options::default())?;
    /// let reused = plan.cost_estimate();
    /// let fresh = plan.with_fresh_outputs(2 * 64 * 64 * 8).cost_estimate();
    /// assert!(fresh.cpu > reused.cpu && fresh.gpu > reused.gpu);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_fresh_outputs(mut self, bytes: u64) -> Plan<'a> {
        self.fresh_output_bytes = bytes;
        self
    }

    /// This plan with those of `outputs` (the caller's arrays it is to fill) most of whose
    /// pages were never written ([`mostly_unfaulted`]: a `numpy.empty` array, the mapping of a
    /// file just created) added to its fresh outputs ([`Plan::with_fresh_outputs`]).
    ///
    /// ```
    /// use reproject::engine::{zeroed_output, Backend, Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let options = Options { backend: Backend::Cuda, ..Options::default() };
    /// let n = 4096; // 128 MiB of float64 per output
    /// let (data, mut footprint) = (zeroed_output::<f64>(&[n, n]), zeroed_output::<f64>(&[n, n]));
    /// let blocks = |outputs: &[&[f64]]| -> reproject::Result<(usize, usize)> {
    ///     let plan = Plan::new(&source, &wcs, &wcs, &[n, n], &options)?;
    ///     Ok(plan.with_untouched_outputs(outputs).block_shape())
    /// };
    /// let untouched = blocks(&[data.as_slice().unwrap(), footprint.as_slice().unwrap()])?;
    /// footprint.fill(0.0);
    /// let written = blocks(&[footprint.as_slice().unwrap()])?;
    /// if cfg!(target_os = "linux") {
    ///     // the GPU's blocks, shorter into fresh outputs
    ///     assert_eq!((untouched, written), ((128, 2048), (1024, 2048)));
    /// }
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_untouched_outputs<T>(mut self, outputs: &[&[T]]) -> Plan<'a> {
        for output in outputs {
            if mostly_unfaulted(&[*output]) {
                self.fresh_output_bytes += std::mem::size_of_val(*output) as u64;
            }
        }
        self
    }

    /// This plan for a caller that reads each block's results right after computing them
    /// (a mosaic combining its inputs block by block): the CPU engine then stores them
    /// through the caches ([`OutputSample::from_f64`] one by one) instead of past them
    /// ([`OutputSample::store_row`], which pays for results written once and read later).
    /// The values are the same bits either way. A mosaic of four 3000² inputs into a 5000²
    /// output took 413-425 ms with its blocks stored through the caches and 569-593 ms past
    /// them on the development machine (`python-bindings/benchmarks/cpu_stores.py`).
    ///
    /// ```
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::ones((16, 16));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[16, 16], &Options::default())?
    ///     .with_outputs_read_back();
    /// let (mut data, mut footprint) = (
    ///     ndarray::Array2::<f64>::zeros((16, 16)),
    ///     ndarray::Array2::<f64>::zeros((16, 16)),
    /// );
    /// plan.compute_into(data.view_mut().into_dyn(), footprint.view_mut().into_dyn())?;
    /// assert_eq!(data[[8, 8]], 1.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_outputs_read_back(mut self) -> Plan<'a> {
        self.stream_outputs = false;
        self
    }

    /// Whether the CPU engine stores results past the caches
    /// ([`Plan::with_outputs_read_back`]).
    pub(crate) fn streams_outputs(&self) -> bool {
        self.stream_outputs
    }

    /// Whether the results go into fresh memory ([`Plan::with_fresh_outputs`]).
    fn outputs_fresh(&self) -> bool {
        self.fresh_output_bytes > 0
    }

    /// This plan computed by `executor` (instead of the one its options choose), e.g. a
    /// [`CudaExecutor`] on given drivers.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reproject::engine::executor::CpuExecutor;
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.1\nCDELT2 = 0.1\n",
    /// )?;
    /// let image = ndarray::Array2::<f64>::ones((8, 8));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[8, 8], &Options::default())?
    ///     .with_executor(Arc::new(CpuExecutor));
    /// assert_eq!(plan.executor()?.name(), "cpu");
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_executor(self, executor: Arc<dyn BlockExecutor>) -> Self {
        let chosen = OnceLock::new();
        let _ = chosen.set(executor);
        Plan {
            executor: chosen,
            ..self
        }
    }
}

/// Fills `out`, whole rows of `row_len` elements from row `first_row` on, in bands of rows
/// on the current rayon pool (a band per thread, of 8 rows at least): `fill(row, band)` fills
/// the band that starts at `row`. Returns the first error any band gave.
pub(crate) fn in_row_bands<T: Send>(
    out: &mut [T],
    row_len: usize,
    first_row: usize,
    fill: impl Fn(usize, &mut [T]) -> Result<()> + Sync,
) -> Result<()> {
    use rayon::prelude::*;
    if row_len == 0 || out.is_empty() {
        return Ok(());
    }
    let rows = out.len() / row_len;
    let band = rows.div_ceil(rayon::current_num_threads().max(1)).max(8);
    out[..rows * row_len]
        .par_chunks_mut(band * row_len)
        .enumerate()
        .try_for_each(|(i, chunk)| fill(first_row + i * band, chunk))
}

/// Prints `msg` on stderr once per process per key.
pub(crate) fn log_once(key: &'static str, msg: &str) {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(key) {
        eprintln!("reproject: {msg}");
    }
}

/// Reprojects `source` (with WCS `wcs_in`) onto `wcs_out` with `shape_out`, returning
/// `(data, footprint)` in memory as float64, as astropy reproject's `reproject_interp` does.
///
/// Errors when the output would not fit in the memory available (write to a file instead
/// with [`reproject_interp_into`] over a [`crate::io::MappedOutput`]).
///
/// ```
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
/// use reproject::engine::reproject_interp;
/// // Onto its own grid, an image comes back as it was.
/// let (data, footprint) = reproject_interp(&source, &wcs_in, &wcs_in, &[32, 32],
///     &Options::default())?;
/// assert!(data.iter().zip(image.iter()).all(|(a, b)| (a - b).abs() < 1e-9));
/// assert!(footprint.iter().all(|&f| f == 1.0));
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_interp(
    source: &dyn ImageSource,
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    shape_out: &[usize],
    options: &Options,
) -> Result<(ArrayD<f64>, ArrayD<f64>)> {
    let plan = Plan::new(source, wcs_in, wcs_out, shape_out, options)?;
    let shape = plan.shape_out().to_vec();
    check_output_memory(&shape, 2 * std::mem::size_of::<f64>())?;
    let bytes = shape.iter().product::<usize>() * 2 * std::mem::size_of::<f64>();
    let plan = plan.with_fresh_outputs(bytes as u64);
    let mut data = zeroed_output(&shape);
    let mut footprint = zeroed_output(&shape);
    plan.compute_into(data.view_mut(), footprint.view_mut())?;
    Ok((data, footprint))
}

/// Like [`reproject_interp`], into caller-provided arrays (full output shape, C order),
/// e.g. the data and footprint of a memory-mapped output file. Arrays most of whose pages
/// were never written (a file just created, memory just allocated) are fresh outputs
/// ([`Plan::with_fresh_outputs`], [`mostly_unfaulted`]).
///
/// ```
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
/// use ndarray::ArrayD;
/// use reproject::engine::reproject_interp_into;
/// let mut data = ArrayD::<f32>::zeros(vec![32, 32]);
/// let mut footprint = data.clone();
/// reproject_interp_into(&source, &wcs_in, &wcs_out, data.view_mut(), footprint.view_mut(),
///     &Options::default())?;
/// assert!((data[[7, 3]] - image[[7, 4]] as f32).abs() < 1e-4);
/// assert_eq!(footprint[[7, 31]], 0.0); // input pixel 32 is off the image
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn reproject_interp_into<T: OutputSample>(
    source: &dyn ImageSource,
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    data: ArrayViewMutD<T>,
    footprint: ArrayViewMutD<T>,
    options: &Options,
) -> Result<()> {
    let shape_out = data.shape().to_vec();
    let plan = Plan::new(source, wcs_in, wcs_out, &shape_out, options)?;
    let given: Vec<&[T]> = [
        data.as_slice_memory_order(),
        footprint.as_slice_memory_order(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let plan = plan.with_untouched_outputs(&given);
    plan.compute_into(data, footprint)
}

/// Adds which output block failed to an error raised while computing it (I/O, FITS, argument,
/// unsupported-request and shape errors carry a message; other variants are returned
/// unchanged).
pub(crate) fn in_block(err: Error, block: &Block) -> Error {
    let at = |m: String| {
        format!(
            "block rows {}..{}, columns {}..{}: {m}",
            block.rows.start, block.rows.end, block.cols.start, block.cols.end
        )
    };
    match err {
        Error::Io(m) => Error::Io(at(m)),
        Error::Fits(m) => Error::Fits(at(m)),
        Error::InvalidArgument(m) => Error::InvalidArgument(at(m)),
        Error::Unsupported(m) => Error::Unsupported(at(m)),
        Error::ShapeMismatch(m) => Error::ShapeMismatch(at(m)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_plans_cut_fresh_outputs_into_shorter_blocks() {
        let wcs = Wcs::from_header_str(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -0.001\nCDELT2 = 0.001\n",
        )
        .unwrap();
        let image = ndarray::Array2::<f32>::zeros((4, 4));
        let source = crate::io::ArraySource::new(image.view().into_dyn()).unwrap();
        let n = 16384;
        let bytes = 2 * (n * n * 8) as u64;
        let shape = |backend, fresh: bool, block_size| {
            let options = Options {
                backend,
                block_size,
                ..Options::default()
            };
            let plan = Plan::new(&source, &wcs, &wcs, &[n, n], &options).unwrap();
            plan.with_fresh_outputs(if fresh { bytes } else { 0 })
                .block_shape()
        };
        // Chosen without opening a GPU (this machine may have none).
        assert_eq!(shape(Backend::Cuda, false, None), (1024, 2048));
        assert_eq!(shape(Backend::Cuda, true, None), (128, 2048));
        // The CPU's blocks, and blocks the options ask for, are the same either way.
        assert_eq!(
            shape(Backend::Cpu, true, None),
            shape(Backend::Cpu, false, None)
        );
        assert_eq!(shape(Backend::Cuda, true, Some((512, 512))), (512, 512));
    }
}

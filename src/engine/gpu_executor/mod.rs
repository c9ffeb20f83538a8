//! The CUDA block executor: computes a plan's blocks with the block kernel on one or more GPUs
//! (or the CUDA simulator), through the driver seam ([`crate::gpu::driver::Driver`]).
//!
//! ```text
//! per device, once per plan:  kernel parameters ─upload─▶ device
//!                             every input plane allocated on the device, when they fit
//! the first thread to need the planes (the uploader), band by band of rows across the planes:
//!     rows (raw samples, or values) ─page-locked staging (two lanes: fill one while the other
//!     crosses)─▶ device ─synchronize─▶ publish "rows 0..r are on the device" (Feed: Mutex +
//!     Condvar); orders 2-5: once every row is up, rp_spline_filter (columns, then rows) makes
//!     the resident values the spline coefficients in place, and then every row is published
//! per block (each thread its own stream and buffers, blocks taken in the order of the last
//! input row they read):
//!     [resident: wait until the rows of its window are published; launch on those rows only]
//!     [input window ─staging─▶ device, when the planes did not fit; orders 2-5: a window
//!      of the CPU's coefficients (the device prefilter needs whole planes)]
//!     rp_reproject_block ─▶ block buffers ─download values─▶ page-locked ─▶ output views
//! ```
//! So the bus carries the input up while the first blocks compute and come down: the uploads,
//! the kernels and the downloads overlap, on separate streams, with several blocks in flight.
//! A block's window is the bounds of its corners' input positions for a homography (exact:
//! see `CoordinateMap::corner_bounds`); any other transform waits for whole planes. The
//! uploader reads the input on a crew of host threads of its own, spawned once per upload
//! ([`super::crew`]), never on the rayon pool the block threads wait in. Every step of the host
//! threads is timed ([`CudaExecutor::host_times`]). `tests/gpu_timeline.rs` replays the 16384²
//! job at H100 rates ([`crate::gpu::timeline`]): the critical path is within 1.2x of the
//! busiest engine.
//!
//! The spline orders' values are read and rounded as the CPU reads them before its own
//! prefilter, and the device filters them with the CPU's operations in the CPU's order, so the
//! coefficients are the CPU's bits; the CPU computes its own only when it needs them (a block
//! falling back after a GPU fault, window mode). Device-resident jobs (CuPy inputs) make the
//! values on the device from the caller's input (`rp_spline_values`) and filter them there:
//! nothing of the input crosses to the host.
//!
//! Each launch runs the build of the block kernel specialised for the plan and the launch's
//! input and output types ([`super::kernel_variant`]; the general kernel where the key does
//! not cover it), loaded when the executor is made if it is compiled already (loaded, or in
//! the on-disk cache; both output types' builds where the plan may write either). If it is
//! not, its compilation runs in the background and the launches run the general kernel,
//! which gives the same values, until it is ready; a build that fails leaves them on the
//! general kernel. So no job waits for NVRTC, which takes a few seconds per variant
//! on the H100 machine.
//! Blocks go round-robin over the devices. A GPU failure (out of memory, a sticky error, a
//! launch failure) stops the GPU for the rest of the plan: that block and every later one are
//! computed on the CPU, with one warning; blocks already done are kept. A device whose context
//! was poisoned is never used again (see [`crate::gpu::drivers`]).
//!
//! The parts: `sizing` (the block shape and the host threads), `input` (what of each plane the
//! kernels read), `staging` (rows into page-locked memory and up), `feed` (the banded upload
//! of the resident planes), `resident` (what stays on a device, and the launches that read
//! it), `spline` (the device prefilter), `launch` (one block on one device), `store` (its
//! values into the caller's outputs), `on_device` (device-resident jobs) and `owned` (driver
//! resources freed when dropped).

mod feed;
mod input;
mod launch;
mod on_device;
mod owned;
mod resident;
mod sizing;
mod spline;
mod staging;
mod store;

pub(crate) use input::upload_bytes;
pub(crate) use launch::WindowBuffers;
pub(crate) use owned::{DeviceAlloc, HostAlloc};
pub(crate) use resident::{grid_dim, kernel_i32, Resident};
pub(crate) use sizing::gpu_block;
pub(in crate::engine) use sizing::host_writers;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::blocks::Block;
use super::executor::{BlockExecutor, BlockOut, CpuExecutor};
use super::gpu_times::{HostTimes, Timers};
use super::kernel_params::{encode_sampling, encode_transform, kernel_support, InputDecoding};
use super::kernel_variant::PlanKernel;
use super::{Parallel, Plan};
use crate::error::{Error, Result};
use crate::gpu::driver::{Driver, DriverFault};
use feed::resident_rows;
use input::{input_of, kernel_decoding};
use launch::Slot;
use resident::ready_build;
use sizing::block_threads;

/// Why a block did not finish on the GPU.
#[derive(Clone)]
pub(crate) enum Failure {
    /// The GPU failed: the block goes to the CPU.
    Driver(DriverFault),
    /// The input could not be read, or similar: the run fails as on the CPU.
    Engine(Error),
}

impl From<DriverFault> for Failure {
    fn from(f: DriverFault) -> Self {
        Failure::Driver(f)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Engine(e)
    }
}

/// One device's part of the executor.
struct Device {
    driver: Arc<dyn Driver>,
    resident: OnceLock<std::result::Result<Resident, DriverFault>>,
    slots: Mutex<Vec<Slot>>,
}

/// The plan's kernel parameters.
struct Params {
    transform: Vec<f64>,
    sampling: Vec<f64>,
    /// How the kernels decode stored samples (see [`kernel_decoding`]).
    decoding: InputDecoding,
}

/// Computes a plan's blocks on one or more GPUs (or on the CUDA simulator) through the driver
/// seam ([`Driver`]), with the CPU engine's bits. The blocks go round-robin over the devices;
/// the input planes go up once, in bands, while the first blocks compute; only the values come
/// back, and the footprint is derived from them on the host. A GPU failure sends that block
/// and every later one to the CPU, with one warning ([`BlockExecutor::failure`] says why).
///
/// ```
/// use std::sync::Arc;
/// use ndarray::ArrayD;
/// use reproject::engine::executor::BlockExecutor;
/// use reproject::engine::{Backend, CudaExecutor, Options, Plan};
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::{SimConfig, SimDriver};
/// use reproject::io::ArraySource;
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
///                                 CRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n")?;
/// let image = ndarray::Array2::from_shape_fn((64, 64), |(y, x)| (y * 64 + x) as f32);
/// let source = ArraySource::new(image.view().into_dyn())?;
/// let options = Options { block_size: Some((16, 64)), backend: Backend::Cpu,
///                         ..Options::default() };
/// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &options)?;
/// // Two simulated GPUs share the four blocks.
/// let sims: Vec<Arc<SimDriver>> = (0..2)
///     .map(|ordinal| Arc::new(SimDriver::new(SimConfig { ordinal, ..SimConfig::default() })))
///     .collect();
/// let drivers = sims.iter().map(|s| s.clone() as Arc<dyn Driver>).collect();
/// let executor = Arc::new(CudaExecutor::new(&plan, drivers)?);
/// assert_eq!(executor.name(), "cuda:0,1");
/// let zeros = || ArrayD::<f32>::zeros(vec![64, 64]);
/// let (mut cpu, mut cpu_footprint) = (zeros(), zeros());
/// plan.compute_into(cpu.view_mut(), cpu_footprint.view_mut())?;
/// let plan = plan.with_executor(executor.clone());
/// let (mut gpu, mut gpu_footprint) = (zeros(), zeros());
/// plan.compute_into(gpu.view_mut(), gpu_footprint.view_mut())?;
/// assert!(sims.iter().all(|s| s.stats().launches > 0)); // both GPUs computed blocks
/// assert_eq!(executor.failure(), None);
/// assert_eq!((gpu, gpu_footprint), (cpu, cpu_footprint)); // the CPU's values
/// # Ok::<(), reproject::Error>(())
/// ```
pub struct CudaExecutor {
    devices: Vec<Device>,
    params: Params,
    next: AtomicUsize,
    /// Set once the GPU failed: the reason; every later block goes to the CPU.
    failed: OnceLock<String>,
    /// Where the host threads spent their time ([`CudaExecutor::host_times`]).
    times: Timers,
}

fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

impl CudaExecutor {
    /// An executor of `plan` on `drivers` (one per device, blocks spread across them).
    ///
    /// Errors: [`Error::GpuUnavailable`] when the kernels do not cover the plan or no
    /// driver is given.
    ///
    /// ```
    /// use reproject::engine::{CudaExecutor, Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
    ///                                 CRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n")?;
    /// let image = ndarray::Array2::<f32>::zeros((8, 8));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[8, 8], &Options::default())?;
    /// let none = CudaExecutor::new(&plan, Vec::new());
    /// assert!(matches!(none, Err(reproject::Error::GpuUnavailable(_))));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(plan: &Plan, drivers: Vec<Arc<dyn Driver>>) -> Result<CudaExecutor> {
        Self::with_decoding(plan, drivers, kernel_decoding(plan))
    }

    /// [`CudaExecutor::new`] with the input decoded by the kernels as `decoding` says (none
    /// for inputs given on the device as values).
    fn with_decoding(
        plan: &Plan,
        drivers: Vec<Arc<dyn Driver>>,
        decoding: InputDecoding,
    ) -> Result<CudaExecutor> {
        kernel_support(plan).map_err(Error::GpuUnavailable)?;
        if drivers.is_empty() {
            return Err(Error::GpuUnavailable("no GPU given".into()));
        }
        let Some(transform) = encode_transform(plan) else {
            return Err(Error::GpuUnavailable(
                "this transform is not covered by the GPU kernels".into(),
            ));
        };
        // Inputs reach the kernel as stored samples it decodes with `decoding` (see
        // `kernel_decoding`), or as values already read and rounded as the CPU path reads them.
        let sampling = encode_sampling(plan, &decoding);
        // The kernel variant the plan's blocks will launch, loaded now when a device has it
        // compiled (loaded, or in the on-disk cache); else its compilation starts in the
        // background, and the launches run the general kernel (the same values) until it is
        // ready ([`ready_build`]), as they do when the variant fails.
        // The output type is the launch's: float32 where the plan rounds its results, else
        // float32 or float64 as the caller's outputs are, so both are readied.
        let (input_type, _) = input_of(plan, 0, &decoding).kernel_type();
        let kernel = PlanKernel::from_params(&transform, &sampling);
        let outputs: &[bool] = match plan.rounding.rounds_results() {
            true => &[false],
            false => &[false, true],
        };
        for driver in &drivers {
            for &out_f64 in outputs {
                ready_build(driver, kernel.variant(input_type, out_f64).defines());
            }
        }
        Ok(CudaExecutor {
            devices: drivers
                .into_iter()
                .map(|driver| Device {
                    driver,
                    resident: OnceLock::new(),
                    slots: Mutex::new(Vec::new()),
                })
                .collect(),
            params: Params {
                transform,
                sampling,
                decoding,
            },
            next: AtomicUsize::new(0),
            failed: OnceLock::new(),
            times: Timers::default(),
        })
    }

    /// Where this executor's host threads have spent their time so far, summed over threads
    /// and calls (see [`HostTimes`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ndarray::Array2;
    /// use reproject::engine::{CudaExecutor, Options, Plan};
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
    ///                                 CRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n")?;
    /// let image = Array2::<f32>::ones((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &Options::default())?;
    /// let sim: Arc<dyn Driver> = Arc::new(SimDriver::new(SimConfig::default()));
    /// let executor = Arc::new(CudaExecutor::new(&plan, vec![sim])?);
    /// let plan = plan.with_executor(executor.clone());
    /// let mut data = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[64, 64]));
    /// let mut footprint = data.clone();
    /// plan.compute_into(data.view_mut(), footprint.view_mut())?;
    /// assert!(executor.host_times().blocks > 0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn host_times(&self) -> HostTimes {
        self.times.read()
    }

    /// The plan's part of the kernel variant key.
    fn kernel(&self) -> PlanKernel {
        PlanKernel::from_params(&self.params.transform, &self.params.sampling)
    }

    /// The order to compute `blocks` in (indices): by the last input row they read from
    /// resident planes (row-major among equals), so the blocks run in the order their rows
    /// arrive ([`Feed`](feed::Feed)).
    pub(crate) fn block_order(&self, plan: &Plan, blocks: &[Block]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by_key(|&i| resident_rows(plan, &blocks[i]).end);
        order
    }

    /// The drivers of the devices this executor computes on, in the order blocks go round
    /// them.
    pub(crate) fn drivers(&self) -> Vec<Arc<dyn Driver>> {
        self.devices.iter().map(|d| d.driver.clone()).collect()
    }
}

impl BlockExecutor for CudaExecutor {
    fn name(&self) -> String {
        let ordinals: Vec<String> = self
            .devices
            .iter()
            .map(|d| d.driver.ordinal().to_string())
            .collect();
        format!("cuda:{}", ordinals.join(","))
    }

    fn compute(&self, plan: &Plan, block: &Block, mut out: BlockOut<'_>) -> Result<()> {
        if self.failed.get().is_none() {
            let i = self.next.fetch_add(1, Ordering::Relaxed) % self.devices.len();
            match self.run_block(&self.devices[i], plan, block, &mut out) {
                Ok(()) => return Ok(()),
                Err(Failure::Engine(e)) => return Err(e),
                Err(Failure::Driver(fault)) => {
                    let why = format!(
                        "GPU {} failed on block rows {:?}, columns {:?} ({fault})",
                        self.devices[i].driver.ordinal(),
                        block.rows,
                        block.cols
                    );
                    if self.failed.set(why.clone()).is_ok() {
                        eprintln!(
                            "reproject: warning: {why}; computing the remaining blocks on the CPU"
                        );
                    }
                }
            }
        }
        CpuExecutor.compute(plan, block, out)
    }

    fn preferred_block(
        &self,
        shape: (usize, usize),
        fresh_outputs: bool,
    ) -> Option<(usize, usize)> {
        Some(gpu_block(shape, fresh_outputs))
    }

    fn failure(&self) -> Option<String> {
        self.failed.get().cloned()
    }

    fn as_cuda(&self) -> Option<&CudaExecutor> {
        Some(self)
    }

    fn parallel(&self, requested: Parallel, fresh_outputs: bool) -> Parallel {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Parallel::Threads(block_threads(
            requested,
            self.devices.len(),
            cores,
            fresh_outputs,
        ))
    }
}

/// A driver fault as an error naming where it happened.
fn gpu_error(block: &str, fault: &DriverFault) -> Error {
    Error::Gpu {
        block: block.to_string(),
        message: fault.to_string(),
    }
}

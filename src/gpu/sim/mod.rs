//! A CUDA simulator behind the [`Driver`] seam: the GPU pipelines run unchanged on a machine
//! without a GPU, as numba's `NUMBA_ENABLE_CUDASIM=1` does for numba kernels.
//!
//! - **Memory**: device allocations are host vectors at made-up device addresses; a fixed
//!   amount of device memory (1 GiB unless configured) runs out as a GPU's would.
//! - **Kernels**: a launch runs `rp_reproject_block` (or `rp_accumulate`, or the spline
//!   prefilter's `rp_spline_values`, `rp_spline_filter` and `rp_spline_filter_from`) compiled
//!   as host C++ (build.rs compiles `kernels/host/sim_launch.cpp` into the library), thread by
//!   thread: for the block kernel, the build of the kernel variant the launch names
//!   (`BlockLaunch::variant`, one host build per line of `kernels/variants.txt`; a variant it
//!   has no build of is a fault, never run by another build); a launch whose pointers reach
//!   outside their allocations is an illegal address, a sticky error. Built with
//!   `REPROJECT_RS_SANITIZE_SIM=1`, the kernels run under AddressSanitizer and UBSan, and the
//!   bytes of an allocation past its size are unreadable to them (see build.rs).
//! - **Asynchrony**: copies and launches are queued per stream and completed at random legal
//!   points (at any later driver call, in a random order across streams; all of a stream at
//!   its synchronize), so a pipeline that reads a result before synchronizing, or rewrites a
//!   host buffer a pending copy still reads, gets wrong bytes. Work queued on one stream that
//!   touches memory a pending operation of another stream writes (or reads, when it writes) is
//!   an ordering hazard: recorded ([`SimDriver::hazards`]) and failed.
//! - **Records and faults**: every call is recorded ([`SimDriver::calls`]), bytes moved and
//!   allocations counted ([`SimDriver::stats`]); [`SimConfig::fail_at`] makes the first call
//!   that can fail at or after that index fail with an out-of-memory error, a sticky error
//!   (every later call fails too) or a plain error (once: later calls succeed).
//!
//! The parts: `config` (the configuration, the calls recorded, the statistics), `queue` (the
//! operations queued on streams and the ordering hazards between them), `state` (what the
//! driver's lock guards, and device memory's bookkeeping), `completion` (each call's record
//! and fault, and the completion of queued work), `host_kernels` (launches run by the
//! host-compiled kernels) and `driver_impl` (the [`Driver`] calls). [`SimDriver`] is here.
//!
//! `REPROJECT_RS_CUDA_SIM=1` (or `=N` for N simulated devices) makes the library use it in
//! place of the driver; `REPROJECT_RS_CUDA_SIM_FAIL=INDEX:oom|sticky|other`,
//! `REPROJECT_RS_CUDA_SIM_SEED` and `REPROJECT_RS_CUDA_SIM_MEMORY` (bytes) configure it.
//!
//! ```
//! use reproject::gpu::driver::{DevicePtr, Driver};
//! use reproject::gpu::sim::{SimConfig, SimDriver};
//! let sim = SimDriver::new(SimConfig::default());
//! let stream = sim.create_stream()?;
//! let dev = sim.alloc(8)?;
//! sim.upload_now(&[1, 2, 3, 4, 5, 6, 7, 8], dev)?;
//! let host = sim.alloc_host(8)?;
//! unsafe { sim.download(stream, dev, &host, 0, 8)? };
//! sim.synchronize(stream)?;
//! assert_eq!(unsafe { host.as_slice() }, &[1, 2, 3, 4, 5, 6, 7, 8]);
//! assert_eq!(sim.stats().downloaded, 8);
//! # Ok::<(), reproject::gpu::driver::DriverFault>(())
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use super::driver::{Driver, DriverFault, FaultKind};
use super::pool::{device_pool_limit, DevicePool, HostPool};
use super::timeline;
use super::variant::KernelDefines;
use super::GpuInfo;

mod completion;
mod config;
mod driver_impl;
mod host_kernels;
mod queue;
mod state;

pub use config::{Call, SimConfig, SimStats};

use state::State;

/// The simulated GPU (see the module documentation).
///
/// ```
/// use std::sync::Arc;
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::{SimConfig, SimDriver};
/// // Where a pipeline takes any driver, the simulator stands in for a GPU.
/// let gpu: Arc<dyn Driver> = Arc::new(SimDriver::new(SimConfig::default()));
/// assert_eq!(gpu.info().name, "CUDA simulator (device 0)");
/// assert_eq!(gpu.mem_info()?, (1 << 30, 1 << 30)); // 1 GiB, all free
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub struct SimDriver {
    info: GpuInfo,
    config: SimConfig,
    state: Mutex<State>,
    /// Page-locked buffers kept for reuse.
    pinned: HostPool,
    /// Device allocations kept for reuse.
    device: DevicePool,
}

impl SimDriver {
    /// A simulated device.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let config = SimConfig { ordinal: 2, memory: 256 << 20, ..SimConfig::default() };
    /// let sim = SimDriver::new(config);
    /// assert_eq!((sim.ordinal(), sim.info().total_memory), (2, 256 << 20));
    /// assert!(sim.calls().is_empty());
    /// ```
    pub fn new(config: SimConfig) -> SimDriver {
        SimDriver {
            info: GpuInfo {
                name: format!("CUDA simulator (device {})", config.ordinal),
                compute_capability: (9, 0),
                total_memory: config.memory,
                driver_version: 0,
                nvrtc_version: (0, 0),
                arch: "host".into(),
            },
            state: Mutex::new(State {
                // Each simulated device's addresses apart from the others', as under CUDA's
                // unified addressing.
                next_address: (1 << 40) + ((config.ordinal as u64) << 48),
                allocations: BTreeMap::new(),
                capacities: HashMap::new(),
                used: 0,
                host: HashMap::new(),
                streams: HashMap::new(),
                next_stream: 1,
                idle_streams: Vec::new(),
                calls: Vec::new(),
                rng: config.seed | 1,
                poisoned: None,
                hazards: Vec::new(),
                stats: SimStats::default(),
                launched: Vec::new(),
                loaded: HashSet::new(),
                preparing: HashSet::new(),
                fail_at: config.fail_at,
                timeline: Vec::new(),
            }),
            device: DevicePool::new(device_pool_limit(config.memory)),
            config,
            pinned: HostPool::default(),
        }
    }

    /// Whether the simulator can run kernels (false when the library was built without a
    /// C++ compiler).
    ///
    /// ```
    /// println!("{}", reproject::gpu::sim::SimDriver::has_kernels());
    /// ```
    pub fn has_kernels() -> bool {
        cfg!(rp_sim_kernels)
    }

    /// Every call so far that reached the (simulated) CUDA driver: an allocation or a stream
    /// handed out again from what the pools keep calls nothing, on a GPU as here, so it is
    /// not recorded and cannot be made to fail.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let stream = sim.create_stream()?;
    /// sim.synchronize(stream)?;
    /// let names: Vec<&str> = sim.calls().iter().map(|c| c.name).collect();
    /// assert_eq!(names, ["cuStreamCreate", "cuStreamSynchronize"]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The build of the kernel each launch queued so far ran or will run, in order.
    ///
    /// ```
    /// let sim = reproject::gpu::sim::SimDriver::new(Default::default());
    /// assert!(sim.launched_variants().is_empty());
    /// ```
    pub fn launched_variants(&self) -> Vec<KernelDefines> {
        self.lock().launched.clone()
    }

    /// Ends the background compilations [`Driver::prepare_variant`] started (with
    /// [`SimConfig::uncached_variants`]): each variant the simulator has a build of is
    /// loaded (a compilation counted) and ready from now on; the others stay unready, as a
    /// build that failed. Returns how many were loaded.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// use reproject::gpu::variant::KernelDefines;
    /// let sim = SimDriver::new(SimConfig { uncached_variants: true, ..SimConfig::default() });
    /// let v = KernelDefines::new([
    ///     "RP_V_HOMOGRAPHY",
    ///     "RP_V_ORDER=1",
    ///     "RP_V_OUT=0",
    ///     "RP_V_NAN=0",
    /// ])?;
    /// sim.prepare_variant(&v);
    /// assert!(!sim.variant_ready(&v)); // still compiling
    /// sim.finish_compilations();
    /// assert!(sim.variant_ready(&v) || !SimDriver::has_kernels());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn finish_compilations(&self) -> usize {
        let preparing: Vec<_> = self.lock().preparing.drain().collect();
        preparing
            .iter()
            .filter(|v| self.load_variant(v).is_ok())
            .count()
    }

    /// The fault of a launch (or load) of a variant the simulator has no build of.
    fn no_variant(call: &'static str, variant: &KernelDefines) -> DriverFault {
        DriverFault::new(
            call,
            FaultKind::Other,
            format!(
                "CUDA_ERROR_NOT_FOUND: the simulator has no build of the kernel variant {variant}"
            ),
        )
    }

    /// The ordering hazards found so far.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(8)?, sim.alloc_host(8)?);
    /// unsafe { sim.upload(stream, &host, 0, dev, 8)? };
    /// sim.free_host(host); // too early: the upload may not have read it yet
    /// assert!(sim.hazards()[0].contains("while a copy on it is pending"));
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn hazards(&self) -> Vec<String> {
        self.lock().hazards.clone()
    }

    /// What a replay needs of every operation queued so far and every synchronize, in the
    /// order they were issued (see [`super::timeline::replay`]): kind, stream, host thread,
    /// bytes, output pixels, the device memory read and written. A synchronous upload
    /// (`upload_now`) is an upload on stream 0 followed by its synchronize.
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, DevicePtr};
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// use reproject::gpu::timeline::Kind;
    /// let sim = SimDriver::new(SimConfig { record_only: true, ..SimConfig::default() });
    /// let dev = sim.alloc(8)?;
    /// sim.upload_now(&[0; 8], dev)?;
    /// let kinds: Vec<Kind> = sim.timeline().iter().map(|op| op.kind).collect();
    /// assert_eq!(kinds, [Kind::Upload, Kind::Synchronize]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn timeline(&self) -> Vec<timeline::Op> {
        self.lock().timeline.clone()
    }

    /// Bytes moved and allocations made so far.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(64)?, sim.alloc_host(64)?);
    /// unsafe { sim.upload(stream, &host, 0, dev, 64)? };
    /// sim.synchronize(stream)?; // the upload is done, and counted
    /// let s = sim.stats();
    /// assert_eq!((s.uploaded, s.downloaded, s.streams_created), (64, 0, 1));
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn stats(&self) -> SimStats {
        self.lock().stats
    }

    /// Makes the first fallible call of index `at` or later (counted over every call, as
    /// [`SimDriver::calls`] numbers them) fail with `kind`, replacing any fault configured before;
    /// `None`: no fault. For tests of a driver shared by the process (see
    /// [`super::simulated_device`]).
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, FaultKind};
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig::default());
    /// sim.inject(Some((sim.calls().len(), FaultKind::OutOfMemory)));
    /// assert!(sim.alloc(8).is_err());
    /// assert!(sim.alloc(8).is_ok());
    /// ```
    pub fn inject(&self, fault: Option<(usize, FaultKind)>) {
        self.lock().fail_at = fault;
    }
}

impl Drop for SimDriver {
    fn drop(&mut self) {
        self.release_kept();
    }
}

#[cfg(all(test, rp_sim_sanitized))]
mod sanitized {
    use super::*;

    unsafe extern "C" {
        fn __asan_address_is_poisoned(addr: *const std::ffi::c_void) -> std::ffi::c_int;
    }

    /// Whether AddressSanitizer lets the byte at device address `ptr` be read.
    fn readable(sim: &SimDriver, ptr: u64) -> bool {
        let st = &mut *sim.lock();
        let (base, (words, _)) = st.allocations.range(..=ptr).next_back().expect("allocated");
        let at = words
            .as_ptr()
            .cast::<u8>()
            .wrapping_add((ptr - base) as usize);
        // SAFETY: `at` lies within `words`; the call reads only AddressSanitizer's shadow.
        unsafe { __asan_address_is_poisoned(at.cast()) == 0 }
    }

    #[test]
    fn bytes_past_an_allocations_size_are_unreadable_to_the_kernels() {
        let sim = SimDriver::new(SimConfig::default());
        let a = sim.alloc(100).unwrap();
        assert!(readable(&sim, a.0) && readable(&sim, a.0 + 99));
        assert!(!readable(&sim, a.0 + 100) && !readable(&sim, a.0 + 255));
        // Kept by the pool and handed out again for fewer bytes: the new size holds.
        sim.free(a);
        let b = sim.alloc(90).unwrap();
        assert_eq!(b, a, "the pool hands the same block out again");
        assert!(readable(&sim, b.0 + 89));
        assert!(!readable(&sim, b.0 + 90));
    }
}

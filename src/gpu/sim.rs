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

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};

#[cfg(rp_sim_kernels)]
use super::driver::SplineOp;
use super::driver::{
    AccumulateLaunch, BlockLaunch, DevicePtr, Driver, DriverFault, DriverResult, FaultKind,
    HostBuffer, MemoryAt, SplineLaunch, StreamId,
};
use super::kernel_args::{KernelArg, KernelArgs, SplineKernel};
use super::pool::{device_pool_limit, DeviceBlock, DevicePool, HostPool, KEPT_STREAMS};
use super::timeline;
use super::variant::KernelDefines;
use super::GpuInfo;

/// How a [`SimDriver`] behaves.
///
/// ```
/// use reproject::gpu::driver::{Driver, FaultKind};
/// use reproject::gpu::sim::{SimConfig, SimDriver};
/// let config = SimConfig { memory: 1 << 20, ..SimConfig::default() };
/// let sim = SimDriver::new(SimConfig { fail_at: Some((1, FaultKind::Other)), ..config });
/// assert!(sim.alloc(512 << 10).is_ok()); // call 0
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Other); // call 1: the injected fault
/// assert_eq!(sim.alloc(1 << 20).unwrap_err().kind, FaultKind::OutOfMemory); // past 1 MiB
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Fail the first fallible call whose index (counted from 0 over the calls recorded, see
    /// [`SimDriver::calls`]) is at least this one with this kind of fault. "At least": threads
    /// interleave their calls differently from run to run, so an index may fall on a call that
    /// cannot fail (a free); the fault then strikes the next call that can.
    pub fail_at: Option<(usize, FaultKind)>,
    /// Seed of the completion order.
    pub seed: u64,
    /// Device memory in bytes.
    pub memory: usize,
    /// The simulated device's ordinal.
    pub ordinal: usize,
    /// Record only: queue, order, check and record every operation, but copy nothing and run
    /// no kernel, and keep no device memory behind the allocations (so a job of any size can
    /// be recorded for [`super::timeline`] cheaply; what the host reads back is meaningless).
    pub record_only: bool,
    /// Specialised variants start out of the on-disk cache, as on a machine that has not
    /// compiled them yet: [`Driver::variant_ready`] says no until a load, or
    /// [`Driver::prepare_variant`] and then [`SimDriver::finish_compilations`], compiled them.
    pub uncached_variants: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            fail_at: None,
            seed: 0x2545_f491_4f6c_dd1d,
            memory: 1 << 30,
            ordinal: 0,
            record_only: false,
            uncached_variants: false,
        }
    }
}

impl SimConfig {
    /// The configuration `REPROJECT_RS_CUDA_SIM_FAIL`, `_SEED` and `_MEMORY` describe, for
    /// device `ordinal`.
    ///
    /// ```
    /// let c = reproject::gpu::sim::SimConfig::from_env(1);
    /// assert_eq!(c.ordinal, 1);
    /// ```
    pub fn from_env(ordinal: usize) -> SimConfig {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let mut config = SimConfig {
            ordinal,
            ..SimConfig::default()
        };
        if let Some(seed) = var("REPROJECT_RS_CUDA_SIM_SEED").and_then(|s| s.parse().ok()) {
            config.seed = seed;
        }
        if let Some(m) = var("REPROJECT_RS_CUDA_SIM_MEMORY").and_then(|s| s.parse().ok()) {
            config.memory = m;
        }
        if let Some(spec) = var("REPROJECT_RS_CUDA_SIM_FAIL") {
            let (index, kind) = spec.split_once(':').unwrap_or((&spec, "other"));
            let kind = match kind {
                "oom" => FaultKind::OutOfMemory,
                "sticky" => FaultKind::Sticky,
                _ => FaultKind::Other,
            };
            config.fail_at = index.trim().parse().ok().map(|i| (i, kind));
        }
        config
    }
}

/// One recorded driver call.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::{Call, SimDriver};
/// let sim = SimDriver::new(Default::default());
/// sim.alloc(100)?;
/// let alloc = Call { index: 0, name: "cuMemAlloc", stream: None, bytes: 100, fallible: true };
/// assert_eq!(sim.calls(), [alloc]);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Its index among every call of the driver.
    pub index: usize,
    /// The CUDA driver function it stands for.
    pub name: &'static str,
    /// The stream, for queued work.
    pub stream: Option<u64>,
    /// Bytes allocated or copied.
    pub bytes: usize,
    /// Whether the call can fail (and so can be made to fail).
    pub fallible: bool,
}

/// What a [`SimDriver`] has done.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// let (dev, host) = (sim.alloc(1000)?, sim.alloc_host(1000)?);
/// sim.upload_now(&[7; 1000], dev)?;
/// let s = sim.stats();
/// assert_eq!((s.uploaded, s.device_allocations, s.host_allocations), (1000, 1, 1));
/// assert_eq!(s.device_bytes_in_use, 1024); // rounded up to 256 bytes
/// sim.free_host(host);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Bytes copied host → device.
    pub uploaded: u64,
    /// Bytes copied device → host.
    pub downloaded: u64,
    /// Page-locked host allocations.
    pub host_allocations: usize,
    /// Device allocations.
    pub device_allocations: usize,
    /// Kernel launches completed.
    pub launches: usize,
    /// Device bytes allocated and handed out now (not those the driver keeps for reuse).
    pub device_bytes_in_use: usize,
    /// Device bytes kept for reuse now (see [`crate::gpu::pool`]).
    pub device_bytes_kept: usize,
    /// Streams created (not those handed out again).
    pub streams_created: usize,
    /// Launches that parsed the block kernel's parameters once for the launches that follow
    /// (`BlockLaunch::parse_params`; counted in `launches` too).
    pub parameter_parses: usize,
    /// Kernel builds compiled: the first load of each specialised variant, as the CUDA
    /// driver compiles each once per process (the general kernel comes with the device).
    pub compilations: usize,
}

/// A queued operation. Host addresses are those of [`HostBuffer`]s the caller keeps alive.
#[derive(Debug, Clone)]
enum Op {
    Upload { src: usize, dst: u64, bytes: usize },
    Copy { src: u64, dst: u64, bytes: usize },
    Download { src: u64, dst: usize, bytes: usize },
    Launch(Box<BlockLaunch>),
    Accumulate(Box<AccumulateLaunch>),
    Spline(Box<SplineLaunch>),
}

/// A memory range an operation touches.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Access {
    device: bool,
    start: u64,
    len: u64,
    write: bool,
}

impl Access {
    fn overlaps(&self, other: &Access) -> bool {
        self.device == other.device
            && (self.write || other.write)
            && self.start < other.start + other.len
            && other.start < self.start + self.len
    }
}

impl Op {
    fn accesses(&self) -> Vec<Access> {
        let a = |device, start: u64, len: usize, write| Access {
            device,
            start,
            len: len as u64,
            write,
        };
        match self {
            Op::Upload { src, dst, bytes } => {
                vec![
                    a(false, *src as u64, *bytes, false),
                    a(true, *dst, *bytes, true),
                ]
            }
            Op::Download { src, dst, bytes } => {
                vec![
                    a(true, *src, *bytes, false),
                    a(false, *dst as u64, *bytes, true),
                ]
            }
            Op::Copy { src, dst, bytes } => {
                vec![a(true, *src, *bytes, false), a(true, *dst, *bytes, true)]
            }
            // A parse writes the parsed parameters; the launches that read them read (at
            // least the first word of) its output.
            Op::Launch(l) if l.parses() => vec![a(true, l.out.0, l.output_bytes(), true)],
            Op::Launch(l) => {
                let mut touched = vec![
                    a(true, l.input.0, l.input_bytes(), false),
                    a(true, l.out.0, l.output_bytes(), true),
                    a(true, l.footprint.0, l.output_bytes(), true),
                ];
                if l.sampling.0 == 0 {
                    touched.push(a(true, l.transform.0, 8, false));
                }
                touched
            }
            Op::Accumulate(l) => {
                let mut touched = vec![
                    a(true, l.data.0, l.block_bytes(), true),
                    a(true, l.footprint.0, l.block_bytes(), true),
                ];
                for read in [l.values, l.weights].into_iter().flatten() {
                    if l.part_bytes() > 0 {
                        touched.push(a(true, read.0, l.part_bytes(), false));
                    }
                }
                touched
            }
            Op::Spline(l) => {
                let (read, bytes) = l.reads();
                let mut touched = vec![
                    a(true, l.data.0, l.data_bytes(), true),
                    a(true, read.0, bytes, false),
                ];
                if let Some(((source, bytes), _)) = l.source_reads() {
                    touched.push(a(true, source.0, bytes, false));
                }
                touched
            }
        }
    }

    /// What a timeline replay needs of this operation, queued on `stream` by this thread.
    fn recorded(&self, stream: u64) -> timeline::Op {
        let (kind, bytes, pixels, specialised) = match self {
            Op::Upload { bytes, .. } => (timeline::Kind::Upload, *bytes, 0, false),
            Op::Download { bytes, .. } => (timeline::Kind::Download, *bytes, 0, false),
            Op::Copy { bytes, .. } => (timeline::Kind::DeviceCopy, *bytes, 0, false),
            Op::Launch(l) => {
                let d = l.variant.defines();
                let homography = d.iter().any(|d| d == "RP_V_HOMOGRAPHY");
                let low_order = d.iter().any(|d| d == "RP_V_ORDER=0" || d == "RP_V_ORDER=1");
                let pixels = l.block.0.max(0) as usize * l.block.1.max(0) as usize;
                (timeline::Kind::Launch, 0, pixels, homography && low_order)
            }
            Op::Accumulate(l) => {
                let bytes = 2 * l.block_bytes() + 2 * l.part_bytes();
                (timeline::Kind::Accumulate, bytes, 0, false)
            }
            Op::Spline(l) => (timeline::Kind::Prefilter, l.traffic_bytes(), 0, false),
        };
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for a in self
            .accesses()
            .into_iter()
            .filter(|a| a.device && a.len > 0)
        {
            let range = a.start..a.start + a.len;
            if a.write {
                writes.push(range);
            } else {
                reads.push(range);
            }
        }
        timeline::Op {
            kind,
            stream,
            thread: host_thread(),
            bytes: bytes as u64,
            pixels: pixels as u64,
            specialised,
            reads,
            writes,
        }
    }

    fn describe(&self) -> String {
        match self {
            Op::Upload { dst, bytes, .. } => format!("an upload of {bytes} bytes to {dst:#x}"),
            Op::Download { src, bytes, .. } => {
                format!("a download of {bytes} bytes from {src:#x}")
            }
            Op::Copy { dst, bytes, .. } => format!("a device copy of {bytes} bytes to {dst:#x}"),
            Op::Launch(l) => format!("a launch writing {:#x}", l.out.0),
            Op::Accumulate(l) => format!("an accumulate launch writing {:#x}", l.data.0),
            Op::Spline(l) => format!("a spline launch writing {:#x}", l.data.0),
        }
    }
}

/// A small id of the calling host thread (for [`SimDriver::timeline`]).
fn host_thread() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

struct Stream {
    queue: VecDeque<Op>,
    /// The first failure of completed work, reported at the next synchronize.
    failure: Option<DriverFault>,
}

/// Makes the bytes of a device allocation's memory past the `bytes` asked for unreadable in
/// the sanitized build (build.rs, `REPROJECT_RS_SANITIZE_SIM=1`), so that a kernel reading or
/// writing past its buffer stops with AddressSanitizer's report. A GPU reads whatever lies in
/// its allocation's rounding there, or faults past it; either way the kernel is wrong. Does
/// nothing in other builds.
fn guard_tail(words: &[u64], bytes: usize) {
    #[cfg(rp_sim_sanitized)]
    {
        unsafe extern "C" {
            fn __asan_poison_memory_region(addr: *const std::ffi::c_void, size: usize);
        }
        let total = std::mem::size_of_val(words);
        if bytes < total {
            // SAFETY: [bytes, total) lies within `words`; poisoning changes only
            // AddressSanitizer's shadow, which the allocation's free resets.
            unsafe {
                __asan_poison_memory_region(
                    words.as_ptr().cast::<u8>().add(bytes).cast(),
                    total - bytes,
                )
            }
        }
    }
    #[cfg(not(rp_sim_sanitized))]
    let _ = (words, bytes);
}

struct State {
    next_address: u64,
    /// Device allocations by base address (u64 words: 8-byte aligned, as device memory is).
    allocations: BTreeMap<u64, (Vec<u64>, usize)>,
    /// Bytes behind each allocation, handed out or kept (rounded up to 256).
    capacities: HashMap<u64, usize>,
    /// Device bytes allocated, kept ones included.
    used: usize,
    /// Host buffers: address → length.
    host: HashMap<usize, usize>,
    streams: HashMap<u64, Stream>,
    next_stream: u64,
    /// Streams given back with nothing queued, for reuse.
    idle_streams: Vec<u64>,
    calls: Vec<Call>,
    rng: u64,
    poisoned: Option<String>,
    hazards: Vec<String>,
    stats: SimStats,
    /// The variant of each launch queued.
    launched: Vec<KernelDefines>,
    /// The variants loaded so far (each compiled once).
    loaded: HashSet<KernelDefines>,
    /// The variants compiling in the background ([`SimDriver::finish_compilations`]).
    preparing: HashSet<KernelDefines>,
    /// The fault to inject (from the configuration, or [`SimDriver::inject`]).
    fail_at: Option<(usize, FaultKind)>,
    /// Every operation queued and every synchronize, for [`SimDriver::timeline`].
    timeline: Vec<timeline::Op>,
}

// SAFETY: the host addresses in queued operations belong to HostBuffers whose holders
// promise (by the unsafe contracts of `upload`/`download`) to keep them alive and untouched.
unsafe impl Send for State {}

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
    /// let v = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1", "RP_V_OUT=0", "RP_V_NAN=0"])?;
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

    /// Frees a page-locked buffer for good.
    fn release(st: &mut State, buffer: HostBuffer) {
        let addr = buffer.as_ptr() as usize;
        if let Some(words) = st.host.remove(&addr) {
            // SAFETY: made by alloc_host as a boxed slice of `words` u64s, freed once.
            drop(unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(addr as *mut u64, words))
            });
        }
    }

    /// Frees every device allocation the pool keeps.
    fn release_device(&self, st: &mut State) {
        for block in self.device.drain() {
            st.capacities.remove(&block.ptr.0);
            st.used -= block.capacity;
        }
        self.count_device(st);
    }

    /// The device statistics after `st.used` or the pool changed.
    fn count_device(&self, st: &mut State) {
        let kept = self.device.kept_bytes();
        st.stats.device_bytes_kept = kept;
        st.stats.device_bytes_in_use = st.used - kept;
    }

    /// Hands `block`, kept by the pool, out again as `bytes`: fresh poison in every word, as a
    /// new allocation has (a kernel that reads what nothing wrote gets garbage either way).
    fn reuse(&self, st: &mut State, block: DeviceBlock, bytes: usize) {
        let words = if self.config.record_only {
            Vec::new()
        } else {
            vec![0xdead_beef_dead_beef; block.capacity / 8]
        };
        guard_tail(&words, bytes);
        st.allocations.insert(block.ptr.0, (words, bytes));
        self.count_device(st);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a call and applies the configured fault and the poisoning; then completes
    /// some queued work at random.
    fn begin(
        &self,
        st: &mut State,
        name: &'static str,
        stream: Option<StreamId>,
        bytes: usize,
        fallible: bool,
    ) -> DriverResult<()> {
        let index = st.calls.len();
        st.calls.push(Call {
            index,
            name,
            stream: stream.map(|s| s.0),
            bytes,
            fallible,
        });
        if !fallible {
            return Ok(());
        }
        if let Some(why) = &st.poisoned {
            return Err(DriverFault::new(name, FaultKind::Sticky, why.clone()));
        }
        if let Some((at, kind)) = st.fail_at
            && at <= index
        {
            st.fail_at = None;
            let message = format!("injected {kind} at call {index}");
            if kind == FaultKind::Sticky {
                Self::poison(st, &message);
            }
            return Err(DriverFault::new(name, kind, message));
        }
        self.progress(st);
        Ok(())
    }

    /// A sticky error: the context is dead, its queued work will never run.
    fn poison(st: &mut State, why: &str) {
        st.poisoned = Some(why.to_string());
        for s in st.streams.values_mut() {
            s.queue.clear();
        }
    }

    fn random(st: &mut State) -> u64 {
        // xorshift64
        let mut x = st.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        st.rng = x;
        x
    }

    /// Completes the first operation of some streams, chosen at random.
    fn progress(&self, st: &mut State) {
        let mut ids: Vec<u64> = st
            .streams
            .iter()
            .filter(|(_, s)| !s.queue.is_empty())
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            if Self::random(st).is_multiple_of(2) {
                self.complete_one(st, id);
            }
        }
    }

    /// Completes the first queued operation of `stream`.
    fn complete_one(&self, st: &mut State, stream: u64) {
        let Some(op) = st
            .streams
            .get_mut(&stream)
            .and_then(|s| s.queue.pop_front())
        else {
            return;
        };
        if let Err(fault) = self.execute(st, &op) {
            if fault.kind == FaultKind::Sticky {
                Self::poison(st, &fault.message);
            }
            if let Some(s) = st.streams.get_mut(&stream) {
                s.failure.get_or_insert(fault);
            }
        }
    }

    /// The host address of device range [ptr, ptr + len) (None: outside every allocation).
    fn resolve(st: &mut State, ptr: u64, len: usize) -> Option<*mut u8> {
        let (base, (words, size)) = st.allocations.range_mut(..=ptr).next_back()?;
        let offset = (ptr - base) as usize;
        (offset + len <= *size).then(|| {
            // SAFETY: offset + len is within the allocation's bytes.
            unsafe { (words.as_mut_ptr() as *mut u8).add(offset) }
        })
    }

    /// The host address of the `len` bytes a kernel touches at its pointer argument `name`
    /// (an error naming it when they lie outside every allocation).
    fn resolve_arg(
        st: &mut State,
        args: &NamedArgs,
        name: &str,
        len: usize,
    ) -> std::result::Result<*mut u8, String> {
        let p = args.pointer(name)?;
        Self::resolve(st, p.0, len).ok_or_else(|| format!("the kernel's {name} at {:#x}", p.0))
    }

    fn execute(&self, st: &mut State, op: &Op) -> DriverResult<()> {
        let illegal = |what: &str| {
            DriverFault::new(
                "(completion)",
                FaultKind::Sticky,
                format!("CUDA_ERROR_ILLEGAL_ADDRESS: {what}"),
            )
        };
        if self.config.record_only {
            return Self::account(st, op);
        }
        match op {
            Op::Upload { src, dst, bytes } => {
                let d = Self::resolve(st, *dst, *bytes)
                    .ok_or_else(|| illegal("upload outside an allocation"))?;
                // SAFETY: the source is a live host buffer of at least `bytes` (upload's
                // contract); the destination was resolved inside an allocation.
                unsafe { std::ptr::copy_nonoverlapping(*src as *const u8, d, *bytes) };
                st.stats.uploaded += *bytes as u64;
            }
            Op::Download { src, dst, bytes } => {
                let s = Self::resolve(st, *src, *bytes)
                    .ok_or_else(|| illegal("download outside an allocation"))?;
                // SAFETY: as above, the other way.
                unsafe { std::ptr::copy_nonoverlapping(s, *dst as *mut u8, *bytes) };
                st.stats.downloaded += *bytes as u64;
            }
            Op::Copy { src, dst, bytes } => {
                let s = Self::resolve(st, *src, *bytes)
                    .ok_or_else(|| illegal("device copy from outside an allocation"))?;
                let d = Self::resolve(st, *dst, *bytes)
                    .ok_or_else(|| illegal("device copy to outside an allocation"))?;
                // SAFETY: both resolved inside allocations; `copy` allows overlap.
                unsafe { std::ptr::copy(s, d, *bytes) };
            }
            Op::Launch(l) => {
                self.run_kernel(st, l).map_err(|w| illegal(&w))?;
                st.stats.launches += 1;
                st.stats.parameter_parses += usize::from(l.parses());
            }
            Op::Accumulate(l) => {
                self.run_accumulate(st, l).map_err(|w| illegal(&w))?;
                st.stats.launches += 1;
            }
            Op::Spline(l) => {
                self.run_spline(st, l).map_err(|w| illegal(&w))?;
                st.stats.launches += 1;
            }
        }
        Ok(())
    }

    /// Record-only completion: the device memory the operation touches must lie inside
    /// allocations (else an illegal address, as when executing); bytes and launches are
    /// counted; nothing is copied or run.
    fn account(st: &mut State, op: &Op) -> DriverResult<()> {
        for a in op.accesses().iter().filter(|a| a.device) {
            if !Self::fits(st, a.start, a.len as usize) {
                return Err(DriverFault::new(
                    "(completion)",
                    FaultKind::Sticky,
                    format!(
                        "CUDA_ERROR_ILLEGAL_ADDRESS: {} outside an allocation",
                        op.describe()
                    ),
                ));
            }
        }
        match op {
            Op::Upload { bytes, .. } => st.stats.uploaded += *bytes as u64,
            Op::Download { bytes, .. } => st.stats.downloaded += *bytes as u64,
            Op::Copy { .. } => {}
            Op::Launch(l) => {
                st.stats.launches += 1;
                st.stats.parameter_parses += usize::from(l.parses());
            }
            Op::Accumulate(_) | Op::Spline(_) => st.stats.launches += 1,
        }
        Ok(())
    }

    /// Whether device range [ptr, ptr + len) lies inside an allocation.
    fn fits(st: &State, ptr: u64, len: usize) -> bool {
        st.allocations
            .range(..=ptr)
            .next_back()
            .is_some_and(|(base, (_, size))| (ptr - base) as usize + len <= *size)
    }

    /// Runs the host-compiled kernel over the launch's grid.
    fn run_kernel(&self, st: &mut State, l: &BlockLaunch) -> std::result::Result<(), String> {
        // The pointers the CUDA driver passes, each resolved over the bytes the kernel
        // touches there.
        let v = NamedArgs(l.kernel_args());
        let mut ptr = |name: &str, len: usize| Self::resolve_arg(st, &v, name, len);
        // The parameter arrays are read as far as their own lengths say; they must at least
        // hold their headers. A null sampling array: `transform` holds parsed parameters.
        let transform = ptr("transform", 16)?;
        let sampling = match v.pointer("sampling")? {
            DevicePtr(0) => std::ptr::null_mut(),
            _ => ptr("sampling", 8)?,
        };
        let out = ptr("out", l.output_bytes().max(1))?;
        if l.parses() {
            let none = std::ptr::null_mut();
            return launch_host(l, &v, transform, sampling, none, out, none);
        }
        let input = ptr("input", l.input_bytes().max(1))?;
        let footprint = ptr("footprint", l.output_bytes().max(1))?;
        launch_host(l, &v, transform, sampling, input, out, footprint)
    }

    /// Runs the host-compiled accumulate kernel over the launch's grid.
    fn run_accumulate(
        &self,
        st: &mut State,
        l: &AccumulateLaunch,
    ) -> std::result::Result<(), String> {
        let v = NamedArgs(l.kernel_args());
        let mut ptr = |name: &str, len: usize| Self::resolve_arg(st, &v, name, len);
        // Null (none, or a part of no pixels): not read.
        let part = l.part_bytes();
        let mut read = |name: &str| match v.pointer(name)? {
            DevicePtr(0) => Ok(std::ptr::null_mut()),
            _ if part == 0 => Ok(std::ptr::null_mut()),
            _ => ptr(name, part),
        };
        let (values, weights) = (read("values")?, read("weights")?);
        let data = ptr("data", l.block_bytes().max(1))?;
        let footprint = ptr("footprint", l.block_bytes().max(1))?;
        accumulate_host(l, &v, values, weights, data, footprint)
    }

    /// Runs the host-compiled spline kernel of the launch over its grid.
    fn run_spline(&self, st: &mut State, l: &SplineLaunch) -> std::result::Result<(), String> {
        let (kernel, args) = l.kernel_args().map_err(|f| f.message)?;
        let v = NamedArgs(args);
        let mut ptr = |name: &str, len: usize| Self::resolve_arg(st, &v, name, len);
        // The plane, and what the launch reads besides: the input's samples (the values
        // kernel), or the poles' constants (the filter).
        let (plane, reads) = match kernel {
            SplineKernel::Values => ("out", "input"),
            SplineKernel::Filter | SplineKernel::FilterFrom => ("data", "poles"),
        };
        let data = ptr(plane, l.data_bytes().max(1))?;
        let read = ptr(reads, l.reads().1.max(1))?;
        let source = match l.source_reads() {
            Some(((_, bytes), _)) => ptr("source", bytes.max(1))?,
            None => std::ptr::null_mut(),
        };
        spline_host(l, kernel, &v, data, read, source)
    }

    fn enqueue(&self, st: &mut State, stream: StreamId, op: Op) -> DriverResult<()> {
        let name = match &op {
            Op::Upload { .. } => "cuMemcpyHtoDAsync",
            Op::Download { .. } => "cuMemcpyDtoHAsync",
            Op::Copy { .. } => "cuMemcpyDtoDAsync",
            Op::Launch(_) | Op::Accumulate(_) | Op::Spline(_) => "cuLaunchKernel",
        };
        if !st.streams.contains_key(&stream.0) {
            return Err(DriverFault::new(
                name,
                FaultKind::Other,
                "CUDA_ERROR_INVALID_HANDLE: no such stream",
            ));
        }
        let mine = op.accesses();
        for (id, other) in &st.streams {
            if *id == stream.0 {
                continue;
            }
            for pending in &other.queue {
                if pending
                    .accesses()
                    .iter()
                    .any(|a| mine.iter().any(|m| m.overlaps(a)))
                {
                    let hazard = format!(
                        "{} on stream {} overlaps {} still pending on stream {id}",
                        op.describe(),
                        stream.0,
                        pending.describe()
                    );
                    st.hazards.push(hazard.clone());
                    return Err(DriverFault::new(name, FaultKind::Other, hazard));
                }
            }
        }
        st.timeline.push(op.recorded(stream.0));
        if let Some(s) = st.streams.get_mut(&stream.0) {
            s.queue.push_back(op);
        }
        Ok(())
    }

    /// Whether a copy on the first `len` bytes of host `buffer` is still queued as `call` gives
    /// the buffer up: a hazard, recorded.
    fn given_up_under_a_copy(st: &mut State, call: &str, buffer: &HostBuffer, len: usize) -> bool {
        let addr = buffer.as_ptr() as usize;
        let access = Access {
            device: false,
            start: addr as u64,
            len: len as u64,
            write: true,
        };
        let pending = Self::pending_touches(st, access);
        if pending {
            st.hazards
                .push(format!("{call} of {addr:#x} while a copy on it is pending"));
        }
        pending
    }

    /// Whether any queued operation touches `access`.
    fn pending_touches(st: &State, access: Access) -> bool {
        st.streams.values().any(|s| {
            s.queue.iter().any(|op| {
                op.accesses().iter().any(|a| {
                    a.device == access.device
                        && a.start < access.start + access.len
                        && access.start < a.start + a.len
                })
            })
        })
    }
}

#[cfg(rp_sim_kernels)]
fn launch_host(
    l: &BlockLaunch,
    v: &NamedArgs,
    transform: *mut u8,
    sampling: *mut u8,
    input: *mut u8,
    out: *mut u8,
    footprint: *mut u8,
) -> std::result::Result<(), String> {
    use std::ffi::c_void;
    // The build of the variant the launch names: never another one in its place.
    let Some(kernel) = super::sim_variants::launcher(&l.variant) else {
        return Err(format!(
            "the simulator has no build of the kernel variant {}",
            l.variant
        ));
    };
    // SAFETY: every pointer was resolved inside an allocation large enough for what the
    // kernel reads or writes with these arguments (BlockLaunch::input_bytes/output_bytes);
    // device allocations are 8-byte aligned. Every build has rp_sim_launch's signature.
    unsafe {
        kernel(
            l.grid.0,
            l.grid.1,
            l.threads.0,
            l.threads.1,
            transform as *const f64,
            sampling as *const f64,
            input as *const c_void,
            v.int("input_type")?,
            v.int("big_endian")?,
            v.long("in_pitch")?,
            v.int("win_y0")?,
            v.int("win_x0")?,
            v.int("win_ny")?,
            v.int("win_nx")?,
            v.int("in_ny")?,
            v.int("in_nx")?,
            v.int("out_y0")?,
            v.int("out_x0")?,
            v.int("blk_ny")?,
            v.int("blk_nx")?,
            out as *mut c_void,
            footprint as *mut c_void,
            v.int("out_f64")?,
            v.long("out_pitch")?,
        );
    }
    Ok(())
}

#[cfg(rp_sim_kernels)]
fn accumulate_host(
    l: &AccumulateLaunch,
    v: &NamedArgs,
    values: *mut u8,
    weights: *mut u8,
    data: *mut u8,
    footprint: *mut u8,
) -> std::result::Result<(), String> {
    use std::ffi::{c_int, c_uint};
    unsafe extern "C" {
        fn rp_sim_accumulate(
            grid_x: c_uint,
            grid_y: c_uint,
            block_x: c_uint,
            block_y: c_uint,
            values: *const f64,
            weights: *const f64,
            op: c_int,
            correction: c_int,
            c0: f64,
            c1: f64,
            c2: f64,
            planes: c_int,
            part_ny: c_int,
            part_nx: c_int,
            part_y0: c_int,
            part_x0: c_int,
            blk_r0: c_int,
            blk_c0: c_int,
            blk_ny: c_int,
            blk_nx: c_int,
            data: *mut f64,
            footprint: *mut f64,
        );
    }
    // The part must lie inside the block (the kernel indexes the block with it).
    let inside = l.in_block.0 >= 0
        && l.in_block.1 >= 0
        && i64::from(l.in_block.0) + i64::from(l.part.0) <= i64::from(l.block.0)
        && i64::from(l.in_block.1) + i64::from(l.part.1) <= i64::from(l.block.1);
    if !inside {
        return Err(format!(
            "a part of {:?} at {:?} outside the {:?} block",
            l.part, l.in_block, l.block
        ));
    }
    // SAFETY: every pointer was resolved inside an allocation large enough for what the
    // kernel reads or writes with these arguments (part_bytes, block_bytes; the part checked
    // inside the block); null pointers are not read (Fill, no weights); device allocations
    // are 8-byte aligned.
    unsafe {
        rp_sim_accumulate(
            l.grid.0,
            l.grid.1,
            l.threads.0,
            l.threads.1,
            values as *const f64,
            weights as *const f64,
            v.int("op")?,
            v.int("correction")?,
            v.double("c0")?,
            v.double("c1")?,
            v.double("c2")?,
            v.int("planes")?,
            v.int("part_ny")?,
            v.int("part_nx")?,
            v.int("part_y0")?,
            v.int("part_x0")?,
            v.int("blk_r0")?,
            v.int("blk_c0")?,
            v.int("blk_ny")?,
            v.int("blk_nx")?,
            data as *mut f64,
            footprint as *mut f64,
        );
    }
    Ok(())
}

#[cfg(rp_sim_kernels)]
fn spline_host(
    l: &SplineLaunch,
    kernel: SplineKernel,
    v: &NamedArgs,
    data: *mut u8,
    read: *mut u8,
    source: *mut u8,
) -> std::result::Result<(), String> {
    use std::ffi::{c_int, c_uint, c_void};
    unsafe extern "C" {
        fn rp_sim_spline_values(
            grid_x: c_uint,
            block_x: c_uint,
            input: *const c_void,
            input_type: c_int,
            big_endian: c_int,
            pitch: i64,
            ny: c_int,
            nx: c_int,
            values_f32: c_int,
            out: *mut f64,
        );
        fn rp_sim_spline_filter(
            grid_x: c_uint,
            block_x: c_uint,
            data: *mut f64,
            lines: i64,
            n: c_int,
            line_step: i64,
            elem_step: i64,
            poles: *const f64,
            npoles: c_int,
            gain: f64,
        );
        fn rp_sim_spline_filter_from(
            grid_x: c_uint,
            block_x: c_uint,
            data: *mut f64,
            lines: i64,
            n: c_int,
            line_step: i64,
            elem_step: i64,
            poles: *const f64,
            npoles: c_int,
            gain: f64,
            source: *const c_void,
            source_line_step: i64,
            source_elem_step: i64,
            source_type: c_int,
            big_endian: c_int,
            values_f32: c_int,
        );
    }
    match kernel {
        SplineKernel::Values => {
            let (input_type, pitch, nx) = (v.int("input_type")?, v.long("pitch")?, v.int("nx")?);
            if !(0..=5).contains(&input_type) || pitch < i64::from(nx) {
                return Err(format!("input type {input_type}, pitch {pitch}"));
            }
            // SAFETY: the input and the plane were resolved inside allocations of the sizes
            // the kernel reads and writes (SplineLaunch::reads, data_bytes); allocations are
            // 8-byte aligned.
            unsafe {
                rp_sim_spline_values(
                    l.grid,
                    l.threads,
                    read as *const c_void,
                    input_type,
                    v.int("big_endian")?,
                    pitch,
                    v.int("ny")?,
                    nx,
                    v.int("values_f32")?,
                    data as *mut f64,
                )
            }
        }
        SplineKernel::Filter => {
            // SAFETY: as above: the lines lie in the plane (filter_lines), the constants in
            // their allocation (4 × npoles doubles, SplineLaunch::reads).
            unsafe {
                rp_sim_spline_filter(
                    l.grid,
                    l.threads,
                    data as *mut f64,
                    v.long("lines")?,
                    v.int("n")?,
                    v.long("line_step")?,
                    v.long("elem_step")?,
                    read as *const f64,
                    v.int("npoles")?,
                    v.double("gain")?,
                )
            }
        }
        SplineKernel::FilterFrom => {
            let SplineOp::Filter {
                source: Some(samples),
                ..
            } = l.op
            else {
                return Err("a filter from samples without samples".into());
            };
            if samples.pitch < i64::from(l.plane.1) {
                return Err("a filter source with a pitch below the plane's width".into());
            }
            // SAFETY: as above, and the source's lines lie in its samples
            // (SplineLaunch::source_reads), resolved inside an allocation.
            unsafe {
                rp_sim_spline_filter_from(
                    l.grid,
                    l.threads,
                    data as *mut f64,
                    v.long("lines")?,
                    v.int("n")?,
                    v.long("line_step")?,
                    v.long("elem_step")?,
                    read as *const f64,
                    v.int("npoles")?,
                    v.double("gain")?,
                    source as *const c_void,
                    v.long("source_line_step")?,
                    v.long("source_elem_step")?,
                    v.int("source_type")?,
                    v.int("big_endian")?,
                    v.int("values_f32")?,
                )
            }
        }
    }
    Ok(())
}

/// A launch's arguments as the CUDA driver passes them ([`SplineLaunch::kernel_args`] and the
/// others), read by the kernel's parameter names: the simulator hands the host-compiled kernels
/// these values, so its runs check them as well as the kernels.
struct NamedArgs(KernelArgs);

impl NamedArgs {
    fn get(&self, name: &str) -> std::result::Result<KernelArg, String> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| *a)
            .ok_or_else(|| format!("the launch has no argument {name}"))
    }

    #[cfg_attr(not(rp_sim_kernels), allow(dead_code))]
    fn int(&self, name: &str) -> std::result::Result<i32, String> {
        match self.get(name)? {
            KernelArg::Int(v) => Ok(v),
            a => Err(format!("argument {name} is {a:?}, not an int")),
        }
    }

    #[cfg_attr(not(rp_sim_kernels), allow(dead_code))]
    fn long(&self, name: &str) -> std::result::Result<i64, String> {
        match self.get(name)? {
            KernelArg::Long(v) => Ok(v),
            a => Err(format!("argument {name} is {a:?}, not a long long")),
        }
    }

    #[cfg_attr(not(rp_sim_kernels), allow(dead_code))]
    fn double(&self, name: &str) -> std::result::Result<f64, String> {
        match self.get(name)? {
            KernelArg::Double(v) => Ok(v),
            a => Err(format!("argument {name} is {a:?}, not a double")),
        }
    }

    fn pointer(&self, name: &str) -> std::result::Result<DevicePtr, String> {
        match self.get(name)? {
            KernelArg::Pointer(v) => Ok(DevicePtr(v)),
            a => Err(format!("argument {name} is {a:?}, not a pointer")),
        }
    }
}

#[cfg(not(rp_sim_kernels))]
fn spline_host(
    _: &SplineLaunch,
    _: SplineKernel,
    _: &NamedArgs,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
) -> std::result::Result<(), String> {
    Err("the CUDA simulator was built without its host kernels (no C++ compiler)".into())
}

#[cfg(not(rp_sim_kernels))]
fn accumulate_host(
    _: &AccumulateLaunch,
    _: &NamedArgs,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
) -> std::result::Result<(), String> {
    Err("the CUDA simulator was built without its host kernels (no C++ compiler)".into())
}

#[cfg(not(rp_sim_kernels))]
fn launch_host(
    _: &BlockLaunch,
    _: &NamedArgs,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
) -> std::result::Result<(), String> {
    Err("the CUDA simulator was built without its host kernels (no C++ compiler)".into())
}

/// A launch configuration CUDA refuses (`why`), as the fault of `cuLaunchKernel`.
fn refuse_configuration(why: Option<String>) -> DriverResult<()> {
    match why {
        Some(why) => Err(DriverFault::new(
            "cuLaunchKernel",
            FaultKind::Other,
            format!("CUDA_ERROR_INVALID_VALUE: {why}"),
        )),
        None => Ok(()),
    }
}

impl Drop for SimDriver {
    fn drop(&mut self) {
        self.release_kept();
    }
}

impl Driver for SimDriver {
    fn info(&self) -> &GpuInfo {
        &self.info
    }

    fn ordinal(&self) -> usize {
        self.config.ordinal
    }

    fn poisoned(&self) -> Option<String> {
        self.lock().poisoned.clone()
    }

    fn mem_info(&self) -> DriverResult<(usize, usize)> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemGetInfo", None, 0, true)?;
        Ok((
            self.config.memory.saturating_sub(st.used) + self.device.kept_bytes(),
            self.config.memory,
        ))
    }

    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr> {
        let st = &mut *self.lock();
        if let Some(block) = self.device.take(bytes) {
            self.reuse(st, block, bytes);
            return Ok(block.ptr);
        }
        self.begin(st, "cuMemAlloc", None, bytes, true)?;
        let rounded = bytes.max(1).next_multiple_of(256);
        if st.used + rounded > self.config.memory {
            // The kept allocations go first.
            self.release_device(st);
        }
        if st.used + rounded > self.config.memory {
            return Err(DriverFault::new(
                "cuMemAlloc",
                FaultKind::OutOfMemory,
                "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            ));
        }
        let base = st.next_address;
        st.next_address += rounded as u64 + 256;
        // Record only: no memory behind the allocation.
        let words = if self.config.record_only {
            Vec::new()
        } else {
            vec![0xdead_beef_dead_beef; rounded / 8]
        };
        guard_tail(&words, bytes);
        st.allocations.insert(base, (words, bytes));
        st.capacities.insert(base, rounded);
        st.used += rounded;
        st.stats.device_allocations += 1;
        self.count_device(st);
        Ok(DevicePtr(base))
    }

    fn free(&self, ptr: DevicePtr) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuMemFree", None, 0, false);
        if let Some((_, size)) = st.allocations.get(&ptr.0) {
            let access = Access {
                device: true,
                start: ptr.0,
                len: *size as u64,
                write: true,
            };
            if Self::pending_touches(st, access) {
                st.hazards.push(format!(
                    "cuMemFree of {:#x} while work on it is pending",
                    ptr.0
                ));
            }
            st.allocations.remove(&ptr.0);
            let capacity = st.capacities.get(&ptr.0).copied().unwrap_or(0);
            // Out of the allocations while kept: a kernel that still used it would fault.
            for freed in self.device.give(DeviceBlock { ptr, capacity }) {
                st.capacities.remove(&freed.ptr.0);
                st.used -= freed.capacity;
            }
            self.count_device(st);
        }
    }

    fn memory_at(&self, ptr: DevicePtr) -> DriverResult<MemoryAt> {
        let st = &mut *self.lock();
        self.begin(st, "cuPointerGetAttributes", None, 0, true)?;
        // The simulated kernels address only this device's allocations (not host memory,
        // not another simulated device's): the rest is memory the driver does not know.
        Ok(match st.allocations.range(..=ptr.0).next_back() {
            Some((&start, &(_, bytes))) if ptr.0 < start + bytes as u64 => MemoryAt::Device {
                ordinal: Some(self.config.ordinal),
                allocation: Some((DevicePtr(start), bytes)),
            },
            _ => MemoryAt::Unknown,
        })
    }

    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer> {
        if let Some(kept) = self.pinned.take(bytes) {
            return Ok(kept);
        }
        let st = &mut *self.lock();
        self.begin(st, "cuMemHostAlloc", None, bytes, true)?;
        let words = vec![0u64; bytes.div_ceil(8).max(1)].into_boxed_slice();
        let ptr = Box::into_raw(words) as *mut u8;
        st.host.insert(ptr as usize, bytes.div_ceil(8).max(1));
        st.stats.host_allocations += 1;
        // SAFETY: a fresh allocation of at least `bytes`, freed only by free_host.
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes) })
    }

    fn free_host(&self, buffer: HostBuffer) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuMemFreeHost", None, 0, false);
        if Self::given_up_under_a_copy(st, "cuMemFreeHost", &buffer, buffer.capacity()) {
            // Leaked rather than freed under a pending copy.
            return;
        }
        for freed in self.pinned.give(buffer) {
            Self::release(st, freed);
        }
    }

    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemHostRegister", None, len, true)?;
        // SAFETY: the caller keeps `len` bytes at `ptr` valid until unregister_host.
        Ok(unsafe { HostBuffer::from_raw(ptr, len) })
    }

    fn unregister_host(&self, buffer: HostBuffer) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuMemHostUnregister", None, 0, false);
        Self::given_up_under_a_copy(st, "cuMemHostUnregister", &buffer, buffer.len());
    }

    fn create_stream(&self) -> DriverResult<StreamId> {
        let st = &mut *self.lock();
        if let Some(id) = st.idle_streams.pop() {
            return Ok(StreamId(id));
        }
        self.begin(st, "cuStreamCreate", None, 0, true)?;
        st.stats.streams_created += 1;
        let id = st.next_stream;
        st.next_stream += 1;
        st.streams.insert(
            id,
            Stream {
                queue: VecDeque::new(),
                failure: None,
            },
        );
        Ok(StreamId(id))
    }

    fn destroy_stream(&self, stream: StreamId) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuStreamDestroy", Some(stream), 0, false);
        // The driver finishes a destroyed stream's work before releasing it.
        while st
            .streams
            .get(&stream.0)
            .is_some_and(|s| !s.queue.is_empty())
        {
            self.complete_one(st, stream.0);
        }
        let clean = st
            .streams
            .get(&stream.0)
            .is_some_and(|s| s.failure.is_none());
        if clean && st.idle_streams.len() < KEPT_STREAMS && !st.idle_streams.contains(&stream.0) {
            st.idle_streams.push(stream.0);
        } else {
            st.streams.remove(&stream.0);
        }
    }

    fn release_kept(&self) {
        let st = &mut *self.lock();
        for buffer in self.pinned.drain() {
            Self::release(st, buffer);
        }
        self.release_device(st);
        for id in std::mem::take(&mut st.idle_streams) {
            st.streams.remove(&id);
        }
    }

    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyHtoD", None, src.len(), true)?;
        let access = Access {
            device: true,
            start: dst.0,
            len: src.len() as u64,
            write: true,
        };
        if Self::pending_touches(st, access) {
            let hazard = format!("a synchronous upload to {:#x} overlaps pending work", dst.0);
            st.hazards.push(hazard.clone());
            return Err(DriverFault::new("cuMemcpyHtoD", FaultKind::Other, hazard));
        }
        let dst_range = dst.0..dst.0 + src.len() as u64;
        let (up, thread) = (src.len() as u64, host_thread());
        st.timeline.push(timeline::Op::copy(
            timeline::Kind::Upload,
            0,
            thread,
            up,
            dst_range,
        ));
        st.timeline.push(timeline::Op::sync(0, thread));
        if self.config.record_only {
            if !Self::fits(st, dst.0, src.len()) {
                return Err(DriverFault::new(
                    "cuMemcpyHtoD",
                    FaultKind::Other,
                    "CUDA_ERROR_INVALID_VALUE: destination outside an allocation",
                ));
            }
            st.stats.uploaded += src.len() as u64;
            return Ok(());
        }
        let d = Self::resolve(st, dst.0, src.len()).ok_or_else(|| {
            DriverFault::new(
                "cuMemcpyHtoD",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_VALUE: destination outside an allocation",
            )
        })?;
        // SAFETY: resolved inside an allocation of at least src.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), d, src.len()) };
        st.stats.uploaded += src.len() as u64;
        Ok(())
    }

    unsafe fn upload(
        &self,
        stream: StreamId,
        src: &HostBuffer,
        src_offset: usize,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyHtoDAsync", Some(stream), bytes, true)?;
        if src_offset + bytes > src.len() {
            return Err(DriverFault::new(
                "cuMemcpyHtoDAsync",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_VALUE: source range outside the host buffer",
            ));
        }
        let op = Op::Upload {
            src: src.as_ptr() as usize + src_offset,
            dst: dst.0,
            bytes,
        };
        self.enqueue(st, stream, op)
    }

    unsafe fn download(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: &HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyDtoHAsync", Some(stream), bytes, true)?;
        if dst_offset + bytes > dst.len() {
            return Err(DriverFault::new(
                "cuMemcpyDtoHAsync",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_VALUE: destination range outside the host buffer",
            ));
        }
        let op = Op::Download {
            src: src.0,
            dst: dst.as_ptr() as usize + dst_offset,
            bytes,
        };
        self.enqueue(st, stream, op)
    }

    unsafe fn copy_device(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyDtoDAsync", Some(stream), bytes, true)?;
        self.enqueue(
            st,
            stream,
            Op::Copy {
                src: src.0,
                dst: dst.0,
                bytes,
            },
        )
    }

    unsafe fn launch(&self, stream: StreamId, launch: &BlockLaunch) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuLaunchKernel", Some(stream), 0, true)?;
        refuse_configuration(launch.invalid_configuration())?;
        if Self::has_kernels() && !super::sim_variants::has(&launch.variant) {
            return Err(Self::no_variant("cuLaunchKernel", &launch.variant));
        }
        self.enqueue(st, stream, Op::Launch(Box::new(launch.clone())))?;
        st.launched.push(launch.variant.clone());
        Ok(())
    }

    fn load_variant(&self, variant: &KernelDefines) -> DriverResult<()> {
        if Self::has_kernels() && !super::sim_variants::has(variant) {
            return Err(Self::no_variant("cuModuleLoadData", variant));
        }
        let st = &mut *self.lock();
        if !variant.is_general() && st.loaded.insert(variant.clone()) {
            st.stats.compilations += 1;
        }
        Ok(())
    }

    fn variant_ready(&self, variant: &KernelDefines) -> bool {
        !self.config.uncached_variants
            || variant.is_general()
            || self.lock().loaded.contains(variant)
    }

    fn prepare_variant(&self, variant: &KernelDefines) {
        let st = &mut *self.lock();
        if !variant.is_general() && !st.loaded.contains(variant) {
            st.preparing.insert(variant.clone());
        }
    }

    unsafe fn launch_accumulate(
        &self,
        stream: StreamId,
        launch: &AccumulateLaunch,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuLaunchKernel", Some(stream), 0, true)?;
        refuse_configuration(launch.invalid_configuration())?;
        self.enqueue(st, stream, Op::Accumulate(Box::new(launch.clone())))
    }

    unsafe fn launch_spline(&self, stream: StreamId, launch: &SplineLaunch) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuLaunchKernel", Some(stream), 0, true)?;
        refuse_configuration(launch.invalid_configuration())?;
        self.enqueue(st, stream, Op::Spline(Box::new(launch.clone())))
    }

    fn synchronize(&self, stream: StreamId) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuStreamSynchronize", Some(stream), 0, true)?;
        st.timeline
            .push(timeline::Op::sync(stream.0, host_thread()));
        while st
            .streams
            .get(&stream.0)
            .is_some_and(|s| !s.queue.is_empty())
        {
            self.complete_one(st, stream.0);
        }
        match st.streams.get_mut(&stream.0) {
            None => Err(DriverFault::new(
                "cuStreamSynchronize",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_HANDLE: no such stream",
            )),
            Some(s) => match s.failure.take() {
                Some(mut fault) => {
                    fault.call = "cuStreamSynchronize";
                    Err(fault)
                }
                None => Ok(()),
            },
        }
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

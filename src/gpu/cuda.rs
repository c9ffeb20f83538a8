//! The real driver behind the [`Driver`] seam: one device's primary context, the kernels
//! compiled for it (see [`super::runtime`]), and the CUDA driver calls through `cudarc`'s
//! thin `result` layer. Every call binds the context to the calling thread and runs inside
//! [`guard`], so a panic in `cudarc` is an error, never a crash.
//!
//! A sticky error (an illegal address, a launch failure, ...) poisons the context: this driver
//! then fails every call, and the device registry ([`super::drivers`]) refuses the device for
//! the rest of the process.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};

use super::driver::{
    AccumulateLaunch, BlockLaunch, CallCount, DevicePtr, Driver, DriverFault, DriverResult,
    FaultKind, HostBuffer, MemoryAt, SplineLaunch, StreamId,
};
use super::kernel_args::{KernelArg, SplineKernel};
use super::pool::{device_pool_limit, DeviceBlock, DevicePool, HostPool, KEPT_STREAMS};
use super::runtime::guard;
use super::variant::KernelDefines;
use super::GpuInfo;

/// A variant's module (kept loaded) and entry point, or why it cannot be had.
type VariantBuild = std::result::Result<(Arc<CudaModule>, CudaFunction), String>;

/// The entry points of the general module.
pub(crate) struct Kernels {
    /// The general block kernel.
    pub(crate) block: CudaFunction,
    /// The accumulate kernel of mosaics combined on the device.
    pub(crate) accumulate: CudaFunction,
    /// The spline prefilter (`rp_spline_filter`).
    pub(crate) spline_filter: CudaFunction,
    /// The spline prefilter reading a device input's samples (`rp_spline_filter_from`).
    pub(crate) spline_filter_from: CudaFunction,
    /// The spline prefilter's values from a device input (`rp_spline_values`).
    pub(crate) spline_values: CudaFunction,
}

/// One CUDA device with the kernels loaded.
pub(crate) struct CudaDriver {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    /// Keeps the module (and so `func`) loaded.
    _module: Arc<CudaModule>,
    kernels: Kernels,
    info: GpuInfo,
    /// The specialised builds of the block kernel loaded so far (or why one cannot be),
    /// shared with the threads that compile them in the background.
    variants: Arc<Mutex<HashMap<KernelDefines, VariantBuild>>>,
    /// The builds being compiled in the background ([`Driver::prepare_variant`]).
    preparing: Arc<Mutex<std::collections::HashSet<KernelDefines>>>,
    streams: Mutex<HashMap<u64, Arc<CudaStream>>>,
    next_stream: Mutex<u64>,
    poisoned: Mutex<Option<String>>,
    /// Page-locked buffers kept for reuse.
    pinned: HostPool,
    /// Device allocations kept for reuse, and the size of each allocation handed out.
    device: DevicePool,
    sizes: Mutex<HashMap<u64, usize>>,
    /// Streams given back, for reuse.
    idle_streams: Mutex<Vec<Arc<CudaStream>>>,
    /// Every driver API call made, by function ([`Driver::call_counts`]).
    calls: Mutex<Vec<CallCount>>,
}

/// The kernel variants compiling in the background in a process: how many are queued or
/// running, how many run (at most one per core and 8: NVRTC takes one core and a few hundred
/// megabytes per program, and a job or a test suite may set off dozens), how many threads are
/// inside NVRTC or the CUDA driver, and whether the process is exiting.
///
/// At exit ([`Compilations::stop`], an `atexit` hook) the queued ones give up and the threads
/// inside NVRTC or the driver are waited for: one still there while their libraries tear down
/// corrupted the heap of Python processes on the H100 ("free(): invalid pointer" after the
/// suite's last test). A compilation that a [`super::CompileHelper`] process runs is not
/// waited for: its thread only waits for that process, which finishes the build into the
/// disk cache after this one has gone.
struct Compilations {
    state: Mutex<CompileState>,
    changed: std::sync::Condvar,
}

struct CompileState {
    /// Counted in before the thread starts, out when it ends.
    pending: usize,
    /// Holding a slot: compiling or loading.
    running: usize,
    /// Inside NVRTC or the CUDA driver ([`Compilations::enter`]).
    in_process: usize,
    stopping: bool,
}

/// A running compilation's slot, given back when dropped.
struct CompileSlot<'a>(&'a Compilations);

/// A compile thread's stay inside NVRTC or the CUDA driver, which an exiting process waits
/// for; counted out when dropped.
struct InProcess<'a>(&'a Compilations);

impl Compilations {
    const fn new() -> Compilations {
        Compilations {
            state: Mutex::new(CompileState {
                pending: 0,
                running: 0,
                in_process: 0,
                stopping: false,
            }),
            changed: std::sync::Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CompileState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one in, before its thread starts.
    fn begin(&self) {
        self.lock().pending += 1;
    }

    /// Counts one out, however it ended.
    fn end(&self) {
        let mut st = self.lock();
        st.pending = st.pending.saturating_sub(1);
        self.changed.notify_all();
    }

    /// Waits for one of `limit` slots; none once the process is exiting.
    fn slot(&self, limit: usize) -> Option<CompileSlot<'_>> {
        let mut st = self.lock();
        while st.running >= limit.max(1) && !st.stopping {
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        if st.stopping {
            return None;
        }
        st.running += 1;
        Some(CompileSlot(self))
    }

    /// Counts this thread in as inside NVRTC or the CUDA driver until the result is dropped;
    /// `None` once the process is exiting (it must not go in then).
    fn enter(&self) -> Option<InProcess<'_>> {
        let mut st = self.lock();
        if st.stopping {
            return None;
        }
        st.in_process += 1;
        Some(InProcess(self))
    }

    /// Blocks until none is queued or running.
    fn wait_idle(&self) {
        let mut st = self.lock();
        while st.pending > 0 {
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// For the process's exit: the queued ones give up, and the threads inside NVRTC or the
    /// driver are waited for, at most `limit` (a compilation that hangs must not hold the
    /// exit forever); no thread goes in after this. Whether all came out in time.
    fn stop(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut st = self.lock();
        st.stopping = true;
        self.changed.notify_all();
        while st.in_process > 0 {
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }
}

/// How long the exit waits for a thread inside NVRTC or the driver: the general kernel, the
/// longest compilation, takes about 20 s on the H100 machine's NVRTC.
const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Drop for CompileSlot<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.running = st.running.saturating_sub(1);
        self.0.changed.notify_all();
    }
}

impl Drop for InProcess<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.in_process = st.in_process.saturating_sub(1);
        self.0.changed.notify_all();
    }
}

/// This process's background compilations.
static COMPILATIONS: Compilations = Compilations::new();

/// Registers the exit hook that stops them. `atexit` runs its handlers in the reverse order of
/// their registration, the exit handlers of a library (its static objects' destructors) among
/// them, and the hook must run before NVRTC's: a compile thread that ran on after them
/// crashed the process (SIGSEGV, or SIGABRT after "LLVM ERROR: out of memory" or a stack
/// overflow: `tests/gpu_helper_exit.rs`). So the hook is registered before the first
/// compilation, after NVRTC's handlers for each architecture ([`order_exit_before_nvrtc`]),
/// and again after each compilation, after anything NVRTC or the driver set up during it
/// (the hook does nothing the second time).
fn stop_compilations_at_exit() {
    extern "C" fn stop() {
        COMPILATIONS.stop(EXIT_WAIT);
    }
    // SAFETY: `stop` is a plain function that lives as long as the process.
    unsafe { libc::atexit(stop) };
}

/// A small program for [`order_exit_before_nvrtc`]: it uses what the kernels use
/// (double-precision library functions, shared memory, warp votes, launch bounds), so that
/// compiling it sets up in NVRTC what compiling the kernels does.
const NVRTC_PRIMER: &str = r#"
extern "C" __global__ void __launch_bounds__(256) rp_primer(const double* in, float* out,
                                                            long long n) {
    __shared__ double ring[64];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double x = i < n ? in[i] : 0.0;
    ring[threadIdx.x & 63] = x;
    __syncwarp();
    double y = atan2(sin(x), cos(x)) + asin(x) + pow(x, 0.25) + sqrt(x) + log(x) + exp(x);
    y += floor(ring[(threadIdx.x + 1) & 63]);
    if (__any_sync(0xffffffffu, y != y)) y = 0.0;
    if (i < n) out[i] = (float)y;
}
"#;

/// Orders the exit hook before NVRTC's own exit handlers for `arch`, once per architecture
/// and process, before NVRTC compiles for it in the background. NVRTC registers its handlers
/// while it compiles, the first time in a process (5 with NVRTC 12.9 and 13.0) and the first
/// time for some architectures (18 or 19 more for sm_100 and sm_120), some of them seconds
/// into the compilation: registered before them, the hook would run after them. So a small
/// program ([`NVRTC_PRIMER`]: about 0.3 s) is compiled for `arch` first, on the calling
/// thread, and the hook registered after it; compiling the kernels then registered none
/// (sm_80, sm_86, sm_90, sm_100 and sm_120: docs/measurements/nvrtc-exit-handlers-2026-11-27,
/// which counts them by interposing `__cxa_atexit`). Called from the thread that queues the
/// compilation when the compilation will run in this process, so that this process cannot
/// begin exiting on that thread meanwhile, and again from the compile thread (where it does
/// nothing unless the helper failed).
fn order_exit_before_nvrtc(arch: &str) {
    static PRIMED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut primed = PRIMED.lock().unwrap_or_else(|p| p.into_inner());
    if primed.iter().any(|a| a == arch) {
        return;
    }
    // A failure (no NVRTC, an architecture it does not know) is left to the compilation
    // itself to report.
    let _ = super::runtime::compile(NVRTC_PRIMER, arch);
    stop_compilations_at_exit();
    primed.push(arch.to_string());
}

/// [`order_exit_before_nvrtc`] for `arch` on the thread that queues a compilation, when the
/// compilation will run in this process: no helper is set, and the build is not `cached`.
fn order_exit_before_queued_compilation(arch: &str, cached: impl FnOnce() -> bool) {
    if super::helper::compile_helper().is_none() && !cached() {
        order_exit_before_nvrtc(arch);
    }
}

/// Blocks until no kernel variant is compiling in the background in this process.
pub(crate) fn wait_for_compilations() {
    COMPILATIONS.wait_idle();
}

/// See [`super::stop_background_compilations`].
pub(crate) fn stop_background_compilations() {
    COMPILATIONS.stop(EXIT_WAIT);
}

/// Runs `build` on a background thread once one of the compilation slots is free (at most
/// one per core and 8, see [`Compilations`]), then `finish` with its result: `None` when the
/// process began exiting first (nothing is compiled then) or `build` gave up because it did
/// (it goes into NVRTC or the driver only through [`Compilations::enter`] of
/// [`COMPILATIONS`]). Whether the thread started (when not, neither runs).
fn spawn_compilation<R: 'static>(
    build: impl FnOnce() -> Option<R> + Send + 'static,
    finish: impl FnOnce(Option<R>) + Send + 'static,
) -> bool {
    static BEFORE_THE_FIRST: std::sync::Once = std::sync::Once::new();
    BEFORE_THE_FIRST.call_once(stop_compilations_at_exit);
    COMPILATIONS.begin();
    let spawned = std::thread::Builder::new()
        .name("reproject-nvrtc".into())
        .spawn(move || {
            // Counted out however the compilation ends (a panic included).
            struct Done;
            impl Drop for Done {
                fn drop(&mut self) {
                    COMPILATIONS.end();
                }
            }
            let _done = Done;
            let limit = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
            let built = COMPILATIONS.slot(limit).and_then(|_slot| {
                let built = build();
                stop_compilations_at_exit();
                built
            });
            finish(built);
        });
    if spawned.is_err() {
        COMPILATIONS.end();
    }
    spawned.is_ok()
}

/// The builds (architecture and defines) this process compiles into the cache in the
/// background now.
static COMPILING: Mutex<Vec<(String, KernelDefines)>> = Mutex::new(Vec::new());

/// Compiles the kernels for `arch` built with `build`'s defines into the on-disk cache on a
/// background thread, so that a later job (or process) finds them there: what
/// [`Backend::Auto`] starts for the general kernels when a job would be faster on a GPU whose
/// kernels were never compiled, while the job itself runs on the CPU. Does nothing while this
/// process compiles the same build already (and the thread nothing while another process
/// does, see [`super::runtime::compile_into_cache`]). Whether a compilation started.
///
/// [`Backend::Auto`]: super::Backend::Auto
pub(crate) fn compile_in_background(arch: &str, build: &KernelDefines) -> bool {
    let key = (arch.to_string(), build.clone());
    {
        let mut compiling = COMPILING.lock().unwrap_or_else(|p| p.into_inner());
        if compiling.contains(&key) {
            return false;
        }
        compiling.push(key.clone());
    }
    let done = |key: &(String, KernelDefines)| {
        COMPILING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|k| k != key);
    };
    let finished = key.clone();
    order_exit_before_queued_compilation(arch, || {
        super::runtime::build_cache_file(arch, build).is_ok_and(|f| f.is_file())
    });
    let spawned = spawn_compilation(
        move || compile_by_helper_or_here(&key.0, &key.1),
        move |_| done(&finished),
    );
    if !spawned {
        done(&(arch.to_string(), build.clone()));
    }
    spawned
}

/// Compiles `build` for `arch` into the on-disk cache, for a background thread: by the
/// [`super::CompileHelper`] in a process of its own when one is set (this process need not
/// wait for it at exit), else, or when the helper fails, here (unless another process
/// compiles it already, see [`super::runtime::compile_into_cache`]). `None` when this process
/// began exiting before it would compile here.
fn compile_by_helper_or_here(arch: &str, build: &KernelDefines) -> Option<()> {
    if let Some(helper) = super::helper::compile_helper()
        && helper.compile(arch, build).is_ok()
    {
        return Some(());
    }
    let _inside = COMPILATIONS.enter()?;
    order_exit_before_nvrtc(arch);
    // A failure is not reported here: whoever needs the build compiles again and says why.
    let _ = super::runtime::compile_into_cache(arch, build);
    Some(())
}

/// `variant` of the block kernel for the device of `ctx`, for [`Driver::prepare_variant`]'s
/// thread: compiled into the disk cache by the [`super::CompileHelper`] when one is set, then
/// loaded; compiled here when there is no helper or it failed. `None` when this process began
/// exiting first.
fn build_variant(
    ctx: &Arc<CudaContext>,
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> Option<VariantBuild> {
    if let Some(helper) = super::helper::compile_helper() {
        // A failure leaves the build to this process, below (which then says why).
        let _ = helper.compile(arch, variant);
    }
    let _inside = COMPILATIONS.enter()?;
    Some(match super::runtime::cached_image(arch, nvrtc, variant) {
        Some(image) => super::runtime::load_image(ctx, image, variant),
        None => {
            order_exit_before_nvrtc(arch);
            super::runtime::load_variant(ctx, arch, nvrtc, variant)
        }
    })
}

/// The addresses of `args`' values, as `cuLaunchKernel` takes a kernel's parameters (valid while
/// `args` is neither moved nor dropped).
fn param_addresses(args: &mut [(&str, KernelArg)]) -> Vec<*mut c_void> {
    args.iter_mut()
        .map(|(_, a)| match a {
            KernelArg::Pointer(v) => v as *mut u64 as *mut c_void,
            KernelArg::Int(v) => v as *mut i32 as *mut c_void,
            KernelArg::Long(v) => v as *mut i64 as *mut c_void,
            KernelArg::Double(v) => v as *mut f64 as *mut c_void,
        })
        .collect()
}

/// Whether a driver error leaves the context unusable.
fn is_sticky(e: &DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
            | CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

impl CudaDriver {
    pub(crate) fn new(
        ordinal: usize,
        ctx: Arc<CudaContext>,
        module: Arc<CudaModule>,
        kernels: Kernels,
        info: GpuInfo,
    ) -> CudaDriver {
        CudaDriver {
            ordinal,
            ctx,
            _module: module,
            kernels,
            variants: Arc::new(Mutex::new(HashMap::new())),
            preparing: Arc::new(Mutex::new(std::collections::HashSet::new())),
            streams: Mutex::new(HashMap::new()),
            next_stream: Mutex::new(1),
            poisoned: Mutex::new(None),
            pinned: HostPool::default(),
            device: DevicePool::new(device_pool_limit(info.total_memory)),
            sizes: Mutex::new(HashMap::new()),
            idle_streams: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            info,
        }
    }

    /// Launches `func` on a one-dimensional grid of `l`'s size on stream `s`.
    ///
    /// # Safety
    /// `params` must match `func`'s signature; the pointers must be valid device memory.
    unsafe fn launch_1d(
        &self,
        func: &CudaFunction,
        l: &SplineLaunch,
        s: &CudaStream,
        params: &mut [*mut c_void],
    ) -> DriverResult<()> {
        // SAFETY: the caller's promises.
        self.call("cuLaunchKernel", || unsafe {
            result::launch_kernel(
                func.cu_function(),
                (l.grid, 1, 1),
                (l.threads, 1, 1),
                0,
                s.cu_stream(),
                params,
            )
        })
    }

    /// Runs a driver call with the context bound, turning errors (and panics) into faults
    /// and poisoning the context on a sticky error.
    fn call<R>(
        &self,
        name: &'static str,
        f: impl FnOnce() -> std::result::Result<R, DriverError>,
    ) -> DriverResult<R> {
        if let Some(why) = self.poisoned() {
            return Err(DriverFault::new(name, FaultKind::Sticky, why));
        }
        let t = std::time::Instant::now();
        let r = guard(name, || {
            self.ctx.bind_to_thread()?;
            f()
        });
        self.count(name, t.elapsed());
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                let kind = if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                    FaultKind::OutOfMemory
                } else if is_sticky(&e) {
                    FaultKind::Sticky
                } else {
                    FaultKind::Other
                };
                let fault = DriverFault::new(name, kind, e.to_string());
                if kind == FaultKind::Sticky {
                    *self.poisoned.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(format!("an earlier {fault}"));
                }
                Err(fault)
            }
            Err(panic) => Err(DriverFault::new(name, FaultKind::Other, panic)),
        }
    }

    /// The entry point of `variant` (compiled and loaded on first use, once per process; the
    /// general kernel was loaded with the device).
    fn function(&self, variant: &KernelDefines) -> DriverResult<sys::CUfunction> {
        if variant.is_general() {
            return Ok(self.kernels.block.cu_function());
        }
        let mut variants = self.variants.lock().unwrap_or_else(|p| p.into_inner());
        let build = variants.entry(variant.clone()).or_insert_with(|| {
            super::runtime::load_variant(
                &self.ctx,
                &self.info.arch,
                self.info.nvrtc_version,
                variant,
            )
        });
        match build {
            Ok((_, func)) => Ok(func.cu_function()),
            Err(why) => Err(DriverFault::new(
                "cuModuleLoadData",
                FaultKind::Other,
                why.clone(),
            )),
        }
    }

    fn stream(&self, id: StreamId, name: &'static str) -> DriverResult<Arc<CudaStream>> {
        let streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        streams.get(&id.0).cloned().ok_or_else(|| {
            DriverFault::new(
                name,
                FaultKind::Other,
                "CUDA_ERROR_INVALID_HANDLE: no such stream",
            )
        })
    }
}

impl CudaDriver {
    /// Frees a page-locked buffer for good.
    fn release(&self, buffer: HostBuffer) {
        // SAFETY: made by alloc_host, freed once.
        let _ = self.call("cuMemFreeHost", || unsafe {
            result::free_host(buffer.as_ptr() as *mut c_void)
        });
    }

    /// Frees every device allocation the pool keeps.
    fn release_device(&self) {
        for block in self.device.drain() {
            // SAFETY: made by alloc, kept once no work touched it.
            let _ = self.call("cuMemFree", || unsafe { result::free_sync(block.ptr.0) });
        }
    }

    /// Counts a call of `name` that took `time`.
    fn count(&self, name: &'static str, time: std::time::Duration) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        match calls.iter_mut().find(|c| c.name == name) {
            Some(c) => {
                c.calls += 1;
                c.time += time;
            }
            None => calls.push(CallCount {
                name,
                calls: 1,
                time,
            }),
        }
    }

    fn sizes(&self) -> std::sync::MutexGuard<'_, HashMap<u64, usize>> {
        self.sizes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for CudaDriver {
    fn drop(&mut self) {
        self.release_kept();
    }
}

impl Driver for CudaDriver {
    fn info(&self) -> &GpuInfo {
        &self.info
    }

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn poisoned(&self) -> Option<String> {
        self.poisoned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn mem_info(&self) -> DriverResult<(usize, usize)> {
        let (free, total) = self.call("cuMemGetInfo", result::mem_get_info)?;
        Ok((free + self.device.kept_bytes(), total))
    }

    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr> {
        if let Some(block) = self.device.take(bytes) {
            self.sizes().insert(block.ptr.0, block.capacity);
            return Ok(block.ptr);
        }
        let bytes = bytes.max(1);
        // SAFETY: a plain allocation; the pipeline writes it before reading it.
        let new = || self.call("cuMemAlloc", || unsafe { result::malloc_sync(bytes) });
        let ptr = match new() {
            Err(f) if f.kind == FaultKind::OutOfMemory && self.device.kept_bytes() > 0 => {
                self.release_device();
                new()?
            }
            r => r?,
        };
        self.sizes().insert(ptr, bytes);
        Ok(DevicePtr(ptr))
    }

    fn free(&self, ptr: DevicePtr) {
        let freed = match self.sizes().remove(&ptr.0) {
            Some(capacity) => self.device.give(DeviceBlock { ptr, capacity }),
            None => vec![DeviceBlock { ptr, capacity: 0 }],
        };
        for block in freed {
            // SAFETY: made by `alloc` and freed once, after its work is done (or kept until
            // now, with no work on it since).
            let _ = self.call("cuMemFree", || unsafe { result::free_sync(block.ptr.0) });
        }
    }

    fn memory_at(&self, ptr: DevicePtr) -> DriverResult<MemoryAt> {
        use sys::CUpointer_attribute::*;
        let mut attributes = [
            CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            CU_POINTER_ATTRIBUTE_IS_MANAGED,
            CU_POINTER_ATTRIBUTE_MAPPED,
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ];
        // One zeroed 8-byte slot per attribute, wide enough for each one's type (unsigned
        // int, bool, int, CUdeviceptr, size_t); the narrow ones land in the low bytes.
        let mut values = [0u64; 6];
        let mut data = values.each_mut().map(|v| v as *mut u64 as *mut c_void);
        self.call("cuPointerGetAttributes", || {
            // SAFETY: six attributes, each with a slot of 8 bytes; an address CUDA does not
            // know is not an error here: its attributes keep their null values.
            unsafe {
                sys::cuPointerGetAttributes(
                    attributes.len() as u32,
                    attributes.as_mut_ptr(),
                    data.as_mut_ptr(),
                    ptr.0,
                )
            }
            .result()
        })?;
        let [memory_type, managed, mapped, ordinal, start, bytes] = values;
        let (memory_type, ordinal) = (memory_type as u32, ordinal as u32 as i32);
        let allocation = (bytes > 0).then_some((DevicePtr(start), bytes as usize));
        const HOST: u32 = sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32;
        Ok(match memory_type {
            0 if mapped & 0xff == 0 => MemoryAt::Unknown,
            HOST => MemoryAt::Shared { allocation },
            _ if managed & 0xff != 0 => MemoryAt::Shared { allocation },
            _ => MemoryAt::Device {
                ordinal: usize::try_from(ordinal).ok(),
                allocation,
            },
        })
    }

    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer> {
        if let Some(kept) = self.pinned.take(bytes) {
            return Ok(kept);
        }
        let ptr = self.call("cuMemHostAlloc", || unsafe {
            // SAFETY: a plain page-locked allocation, freed by free_host.
            result::malloc_host(bytes.max(1), 0)
        })?;
        // SAFETY: cuMemHostAlloc returned `bytes` valid bytes, freed only by free_host.
        Ok(unsafe { HostBuffer::from_raw(ptr as *mut u8, bytes) })
    }

    fn free_host(&self, buffer: HostBuffer) {
        for freed in self.pinned.give(buffer) {
            self.release(freed);
        }
    }

    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer> {
        self.call("cuMemHostRegister", || {
            // SAFETY: the caller keeps `len` bytes at `ptr` valid until unregister_host.
            unsafe { sys::cuMemHostRegister_v2(ptr as *mut c_void, len.max(1), 0) }.result()
        })?;
        // SAFETY: as above.
        Ok(unsafe { HostBuffer::from_raw(ptr, len) })
    }

    fn unregister_host(&self, buffer: HostBuffer) {
        let _ = self.call("cuMemHostUnregister", || {
            // SAFETY: registered by register_host, unregistered once.
            unsafe { sys::cuMemHostUnregister(buffer.as_ptr() as *mut c_void) }.result()
        });
    }

    fn create_stream(&self) -> DriverResult<StreamId> {
        let idle = self
            .idle_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let stream = match idle {
            Some(stream) => stream,
            None => self.call("cuStreamCreate", || self.ctx.new_stream())?,
        };
        let mut next = self.next_stream.lock().unwrap_or_else(|p| p.into_inner());
        let id = *next;
        *next += 1;
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, stream);
        Ok(StreamId(id))
    }

    fn destroy_stream(&self, stream: StreamId) {
        let Some(stream) = self
            .streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&stream.0)
        else {
            return;
        };
        // Kept only once its work is done (the next user starts on an empty stream); cudarc
        // destroys the others when their last handle goes, after synchronizing them.
        if self
            .call("cuStreamSynchronize", || stream.synchronize())
            .is_ok()
        {
            let mut idle = self.idle_streams.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < KEPT_STREAMS {
                idle.push(stream);
            }
        }
    }

    fn call_counts(&self) -> Vec<CallCount> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn release_kept(&self) {
        for buffer in self.pinned.drain() {
            self.release(buffer);
        }
        self.release_device();
        self.idle_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()> {
        // SAFETY: `dst` holds src.len() bytes (the caller's allocation); synchronous copy.
        self.call("cuMemcpyHtoD", || unsafe {
            result::memcpy_htod_sync(dst.0, src)
        })
    }

    unsafe fn upload(
        &self,
        stream: StreamId,
        src: &HostBuffer,
        src_offset: usize,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let s = self.stream(stream, "cuMemcpyHtoDAsync")?;
        if src_offset + bytes > src.len() {
            return Err(DriverFault::new(
                "cuMemcpyHtoDAsync",
                FaultKind::Other,
                "source range outside the host buffer",
            ));
        }
        // SAFETY: the caller keeps `src` alive and unwritten until the copy is done; `dst`
        // holds `bytes` bytes.
        self.call("cuMemcpyHtoDAsync", || unsafe {
            let bytes = std::slice::from_raw_parts(src.as_ptr().add(src_offset), bytes);
            result::memcpy_htod_async(dst.0, bytes, s.cu_stream())
        })
    }

    unsafe fn download(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: &HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DriverResult<()> {
        let s = self.stream(stream, "cuMemcpyDtoHAsync")?;
        if dst_offset + bytes > dst.len() {
            return Err(DriverFault::new(
                "cuMemcpyDtoHAsync",
                FaultKind::Other,
                "destination range outside the host buffer",
            ));
        }
        // SAFETY: the caller keeps `dst` alive and untouched until the copy is done; `src`
        // holds `bytes` bytes.
        self.call("cuMemcpyDtoHAsync", || unsafe {
            let bytes = std::slice::from_raw_parts_mut(dst.as_ptr().add(dst_offset), bytes);
            result::memcpy_dtoh_async(bytes, src.0, s.cu_stream())
        })
    }

    unsafe fn copy_device(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let s = self.stream(stream, "cuMemcpyDtoDAsync")?;
        // SAFETY: the caller vouches for both ranges.
        self.call("cuMemcpyDtoDAsync", || unsafe {
            result::memcpy_dtod_async(dst.0, src.0, bytes, s.cu_stream())
        })
    }

    unsafe fn launch(&self, stream: StreamId, l: &BlockLaunch) -> DriverResult<()> {
        let s = self.stream(stream, "cuLaunchKernel")?;
        let mut args = l.kernel_args();
        let mut params = param_addresses(&mut args);
        let func = self.function(&l.variant)?;
        // SAFETY: the argument list is rp_reproject_block's (`BlockLaunch::kernel_args`, held
        // to the kernel's signature by tests/gpu_kernel_args.rs); the caller vouches for the
        // pointers.
        self.call("cuLaunchKernel", || unsafe {
            result::launch_kernel(
                func,
                (l.grid.0, l.grid.1, 1),
                (l.threads.0, l.threads.1, 1),
                0,
                s.cu_stream(),
                &mut params,
            )
        })
    }

    fn load_variant(&self, variant: &KernelDefines) -> DriverResult<()> {
        self.function(variant).map(|_| ())
    }

    fn variant_ready(&self, variant: &KernelDefines) -> bool {
        if variant.is_general() {
            return true;
        }
        if let Some(build) = self
            .variants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(variant)
        {
            return build.is_ok();
        }
        // Launches ask on every block: while the variant compiles, no look at the disk (its
        // key hashes the whole kernel source).
        !self
            .preparing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(variant)
            && super::runtime::is_cached(&self.info.arch, self.info.nvrtc_version, variant)
    }

    fn prepare_variant(&self, variant: &KernelDefines) {
        if variant.is_general()
            || self
                .variants
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(variant)
            || !self
                .preparing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(variant.clone())
        {
            return;
        }
        let (ctx, arch, nvrtc, key) = (
            self.ctx.clone(),
            self.info.arch.clone(),
            self.info.nvrtc_version,
            variant.clone(),
        );
        order_exit_before_queued_compilation(&arch, || {
            super::runtime::is_cached(&arch, nvrtc, variant)
        });
        let (variants, preparing, done) = (
            self.variants.clone(),
            self.preparing.clone(),
            variant.clone(),
        );
        let spawned = spawn_compilation(
            move || build_variant(&ctx, &arch, nvrtc, &key),
            move |build| {
                if let Some(build) = build {
                    variants
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(done.clone())
                        .or_insert(build);
                }
                preparing
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&done);
            },
        );
        if !spawned {
            // No thread to compile on: a later plan compiles it when it loads it.
            self.preparing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(variant);
        }
    }

    unsafe fn launch_accumulate(&self, stream: StreamId, l: &AccumulateLaunch) -> DriverResult<()> {
        let s = self.stream(stream, "cuLaunchKernel")?;
        let mut args = l.kernel_args();
        let mut params = param_addresses(&mut args);
        // SAFETY: the argument list is rp_accumulate's (`AccumulateLaunch::kernel_args`, held
        // to the kernel's signature by tests/gpu_kernel_args.rs); the caller vouches for the
        // pointers.
        self.call("cuLaunchKernel", || unsafe {
            result::launch_kernel(
                self.kernels.accumulate.cu_function(),
                (l.grid.0, l.grid.1, 1),
                (l.threads.0, l.threads.1, 1),
                0,
                s.cu_stream(),
                &mut params,
            )
        })
    }

    unsafe fn launch_spline(&self, stream: StreamId, l: &SplineLaunch) -> DriverResult<()> {
        let s = self.stream(stream, "cuLaunchKernel")?;
        let (kernel, mut args) = l.kernel_args()?;
        let func = match kernel {
            SplineKernel::Values => &self.kernels.spline_values,
            SplineKernel::Filter => &self.kernels.spline_filter,
            SplineKernel::FilterFrom => &self.kernels.spline_filter_from,
        };
        // SAFETY: the argument list is `kernel`'s (`SplineLaunch::kernel_args`, held to the
        // kernel's signature by tests/gpu_kernel_args.rs); the caller vouches for the pointers.
        unsafe { self.launch_1d(func, l, &s, &mut param_addresses(&mut args)) }
    }

    fn synchronize(&self, stream: StreamId) -> DriverResult<()> {
        let s = self.stream(stream, "cuStreamSynchronize")?;
        self.call("cuStreamSynchronize", || s.synchronize())
    }
}

#[cfg(test)]
mod tests {
    use super::Compilations;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::time::Duration;

    /// `n` stand-ins for background compilations of `ms` each on `queue`, at most `limit` at
    /// once, inside this process (NVRTC) or, `inside` false, waiting for a helper process:
    /// (how many ran, the most that ran at once).
    fn spawn(
        queue: &'static Compilations,
        n: usize,
        limit: usize,
        ms: u64,
        inside: bool,
    ) -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let (ran, peak, now) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
        );
        for _ in 0..n {
            queue.begin();
            let (ran, peak, now) = (ran.clone(), peak.clone(), now.clone());
            std::thread::spawn(move || {
                if let Some(_slot) = queue.slot(limit) {
                    let at_once = now.fetch_add(1, SeqCst) + 1;
                    peak.fetch_max(at_once, SeqCst);
                    let _inside = inside.then(|| queue.enter());
                    std::thread::sleep(Duration::from_millis(ms));
                    now.fetch_sub(1, SeqCst);
                    ran.fetch_add(1, SeqCst);
                }
                queue.end();
            });
        }
        (ran, peak)
    }

    #[test]
    fn compilations_run_within_their_limit_and_can_all_be_waited_for() {
        static QUEUE: Compilations = Compilations::new();
        let (ran, peak) = spawn(&QUEUE, 6, 2, 20, true);
        QUEUE.wait_idle();
        assert_eq!(ran.load(SeqCst), 6);
        assert!(peak.load(SeqCst) <= 2, "{} at once", peak.load(SeqCst));
    }

    #[test]
    fn at_exit_queued_compilations_give_up_and_running_ones_finish_first() {
        static QUEUE: Compilations = Compilations::new();
        let (ran, _) = spawn(&QUEUE, 8, 1, 200, true);
        // One is running (its slot taken), seven wait for the slot.
        std::thread::sleep(Duration::from_millis(50));
        assert!(QUEUE.stop(Duration::from_secs(30)));
        // stop returned: no thread is inside NVRTC, the one that was running finished its
        // compilation, and the others end without one.
        assert_eq!(QUEUE.lock().in_process, 0);
        assert!(ran.load(SeqCst) >= 1);
        QUEUE.wait_idle();
        assert_eq!(QUEUE.lock().running, 0);
        let ran = ran.load(SeqCst);
        assert!((1..8).contains(&ran), "{ran} ran");
        // After the stop nothing starts.
        assert!(QUEUE.slot(1).is_none());
    }

    #[test]
    fn the_exit_waits_for_a_running_compilation_only_so_long() {
        static QUEUE: Compilations = Compilations::new();
        let (ran, _) = spawn(&QUEUE, 1, 1, 400, true);
        std::thread::sleep(Duration::from_millis(50));
        let t = std::time::Instant::now();
        assert!(!QUEUE.stop(Duration::from_millis(50)), "it ended in time");
        assert!(t.elapsed() < Duration::from_millis(350));
        QUEUE.wait_idle();
        assert_eq!(ran.load(SeqCst), 1);
    }

    /// A compilation that a helper process runs holds no exit: its thread only waits for
    /// that process (which outlives this one), and may not go into NVRTC or the driver
    /// afterwards (to load what the helper compiled).
    #[test]
    fn the_exit_does_not_wait_for_a_compilation_in_a_helper_process() {
        static QUEUE: Compilations = Compilations::new();
        let (ran, _) = spawn(&QUEUE, 1, 1, 400, false);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(QUEUE.lock().running, 1);
        let t = std::time::Instant::now();
        assert!(QUEUE.stop(Duration::from_secs(30)));
        assert!(
            t.elapsed() < Duration::from_millis(200),
            "{:?}",
            t.elapsed()
        );
        assert!(QUEUE.enter().is_none(), "a thread went in during the exit");
        QUEUE.wait_idle();
        assert_eq!(ran.load(SeqCst), 1);
    }
}

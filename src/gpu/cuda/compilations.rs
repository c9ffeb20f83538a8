//! The kernel variants compiled in the background (on threads of this process, or by a
//! compile helper process), at most one per core and 8 at once, and the order of the process's
//! exit against NVRTC's: queued compilations give up, running ones are waited for.

use std::sync::{Arc, Mutex};

use cudarc::driver::CudaContext;

use super::VariantBuild;
use crate::gpu::variant::KernelDefines;
use crate::gpu::{helper, runtime};

/// The kernel variants compiling in the background in a process: how many are queued or
/// running, how many run (at most one per core and 8: NVRTC takes one core and a few hundred
/// megabytes per program, and a job or a test suite may set off dozens), how many threads are
/// inside NVRTC or the CUDA driver, and whether the process is exiting.
///
/// At exit ([`Compilations::stop`], an `atexit` hook) the queued ones give up and the threads
/// inside NVRTC or the driver are waited for: one still there while their libraries tear down
/// corrupted the heap of Python processes on the H100 ("free(): invalid pointer" after the
/// suite's last test). A compilation that a [`crate::gpu::CompileHelper`] process runs is not
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
    let _ = runtime::compile(NVRTC_PRIMER, arch);
    stop_compilations_at_exit();
    primed.push(arch.to_string());
}

/// [`order_exit_before_nvrtc`] for `arch` on the thread that queues a compilation, when the
/// compilation will run in this process: no helper is set, and the build is not `cached`.
pub(super) fn order_exit_before_queued_compilation(arch: &str, cached: impl FnOnce() -> bool) {
    if helper::compile_helper().is_none() && !cached() {
        order_exit_before_nvrtc(arch);
    }
}

/// Blocks until no kernel variant is compiling in the background in this process.
pub(crate) fn wait_for_compilations() {
    COMPILATIONS.wait_idle();
}

/// See [`crate::gpu::stop_background_compilations`].
pub(crate) fn stop_background_compilations() {
    COMPILATIONS.stop(EXIT_WAIT);
}

/// Runs `build` on a background thread once one of the compilation slots is free (at most
/// one per core and 8, see [`Compilations`]), then `finish` with its result: `None` when the
/// process began exiting first (nothing is compiled then) or `build` gave up because it did
/// (it goes into NVRTC or the driver only through [`Compilations::enter`] of
/// [`COMPILATIONS`]). Whether the thread started (when not, neither runs).
pub(super) fn spawn_compilation<R: 'static>(
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
/// does, see [`crate::gpu::runtime::compile_into_cache`]). Whether a compilation started.
///
/// [`Backend::Auto`]: crate::gpu::Backend::Auto
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
        runtime::build_cache_file(arch, build).is_ok_and(|f| f.is_file())
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
/// [`crate::gpu::CompileHelper`] in a process of its own when one is set (this process need not
/// wait for it at exit), else, or when the helper fails, here (unless another process
/// compiles it already, see [`crate::gpu::runtime::compile_into_cache`]). `None` when this process
/// began exiting before it would compile here.
fn compile_by_helper_or_here(arch: &str, build: &KernelDefines) -> Option<()> {
    if let Some(helper) = helper::compile_helper()
        && helper.compile(arch, build).is_ok()
    {
        return Some(());
    }
    let _inside = COMPILATIONS.enter()?;
    order_exit_before_nvrtc(arch);
    // A failure is not reported here: whoever needs the build compiles again and says why.
    let _ = runtime::compile_into_cache(arch, build);
    Some(())
}

/// `variant` of the block kernel for the device of `ctx`, for
/// [`Driver::prepare_variant`](crate::gpu::driver::Driver::prepare_variant)'s thread: compiled into
/// the disk cache by the [`crate::gpu::CompileHelper`] when one is set, then loaded; compiled here
/// when there is no helper or it failed. `None` when this process began exiting first.
pub(super) fn build_variant(
    ctx: &Arc<CudaContext>,
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> Option<VariantBuild> {
    if let Some(helper) = helper::compile_helper() {
        // A failure leaves the build to this process, below (which then says why).
        let _ = helper.compile(arch, variant);
    }
    let _inside = COMPILATIONS.enter()?;
    Some(match runtime::cached_image(arch, nvrtc, variant) {
        Some(image) => runtime::load_image(ctx, image, variant),
        None => {
            order_exit_before_nvrtc(arch);
            runtime::load_variant(ctx, arch, nvrtc, variant)
        }
    })
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

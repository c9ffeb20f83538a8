//! Where the host threads of a GPU job spend their time: the uploader (staging the input,
//! waiting for its copies, the spline prefilter) and the block threads (waiting for input
//! rows, taking a slot, launches, waiting for the GPU, storing results). Every job measures
//! it, at the cost of a clock read per step; [`CudaExecutor::host_times`] reads the sums.
//!
//! The sums are over threads: with 8 block threads a sum may be up to 8 times the wall time.
//! They tell which side waits for which (docs/measurements: a job with a new plan took 175 ms
//! where the same plan called again took 47 ms, with nothing serialized to see why).
//!
//! [`CudaExecutor::host_times`]: super::CudaExecutor::host_times

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Time the host threads of a GPU executor spent, per kind of step, summed over threads and
/// calls.
///
/// ```
/// use reproject::engine::HostTimes;
/// let t = HostTimes::default();
/// assert_eq!(t.blocks, 0);
/// assert!(t.to_string().contains("staging"));
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HostTimes {
    /// Making what stays on a device for the plan: parameter uploads, device allocations.
    pub setup: Duration,
    /// The uploader reading input rows into page-locked staging.
    pub staging: Duration,
    /// The uploader waiting for its copies to the device.
    pub upload_waits: Duration,
    /// The uploader running the spline prefilter (orders 2-5) and waiting for it.
    pub prefilter: Duration,
    /// Block threads waiting for the input rows their blocks read.
    pub row_waits: Duration,
    /// Block threads taking a slot (its stream and buffers are made the first time).
    pub slots: Duration,
    /// Slots made (a stream and buffers from the driver, kept or new); the others were
    /// reused from an earlier block of the plan.
    pub slots_made: usize,
    /// Block threads queueing launches (row waits included).
    pub launches: Duration,
    /// Block threads waiting for their kernels and downloads.
    pub gpu_waits: Duration,
    /// Block threads storing values and footprints into the outputs.
    pub stores: Duration,
    /// Blocks computed on the GPU.
    pub blocks: usize,
}

impl std::fmt::Display for HostTimes {
    /// One line, milliseconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "setup {:.1} ms; uploader: staging {:.1}, copy waits {:.1}, prefilter {:.1}; \
             {} blocks: row waits {:.1}, slots {:.1} ({} made), launches {:.1}, GPU waits {:.1}, \
             stores {:.1} (ms summed over threads)",
            ms(self.setup),
            ms(self.staging),
            ms(self.upload_waits),
            ms(self.prefilter),
            self.blocks,
            ms(self.row_waits),
            ms(self.slots),
            self.slots_made,
            ms(self.launches),
            ms(self.gpu_waits),
            ms(self.stores)
        )
    }
}

/// The kinds of step [`Timers`] sums.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Setup,
    Staging,
    UploadWaits,
    Prefilter,
    RowWaits,
    Slots,
    Launches,
    GpuWaits,
    Stores,
}

const STEPS: usize = 9;

/// Nanoseconds per [`Step`], added to by any thread.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    nanos: [AtomicU64; STEPS],
    blocks: AtomicUsize,
    slots_made: AtomicUsize,
}

impl Timers {
    /// Adds the time since `since` to `step`.
    pub(crate) fn add(&self, step: Step, since: Instant) {
        let nanos = u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos[step as usize].fetch_add(nanos, Ordering::Relaxed);
    }

    /// Runs `f`, adding its time to `step`.
    pub(crate) fn time<R>(&self, step: Step, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.add(step, t);
        r
    }

    /// Counts a block computed on the GPU.
    pub(crate) fn block_done(&self) {
        self.blocks.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a slot made rather than reused.
    pub(crate) fn slot_made(&self) {
        self.slots_made.fetch_add(1, Ordering::Relaxed);
    }

    /// The sums so far.
    pub(crate) fn read(&self) -> HostTimes {
        let d =
            |step: Step| Duration::from_nanos(self.nanos[step as usize].load(Ordering::Relaxed));
        HostTimes {
            setup: d(Step::Setup),
            staging: d(Step::Staging),
            upload_waits: d(Step::UploadWaits),
            prefilter: d(Step::Prefilter),
            row_waits: d(Step::RowWaits),
            slots: d(Step::Slots),
            slots_made: self.slots_made.load(Ordering::Relaxed),
            launches: d(Step::Launches),
            gpu_waits: d(Step::GpuWaits),
            stores: d(Step::Stores),
            blocks: self.blocks.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_add_up_apart() {
        let timers = Timers::default();
        timers.time(Step::Staging, || {
            std::thread::sleep(Duration::from_millis(2))
        });
        timers.add(Step::Stores, Instant::now() - Duration::from_millis(3));
        timers.block_done();
        timers.slot_made();
        timers.slot_made();
        let t = timers.read();
        assert_eq!(t.slots_made, 2);
        assert!(t.to_string().contains("(2 made)"));
        assert!(t.staging >= Duration::from_millis(2));
        assert!(t.stores >= Duration::from_millis(3));
        assert_eq!(
            (t.setup, t.gpu_waits, t.blocks),
            (Duration::ZERO, Duration::ZERO, 1)
        );
    }
}

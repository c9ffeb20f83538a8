//! How the GPU's work is cut: the block shape when the options leave it open, and the host
//! threads that run the blocks and keep the copies fed.

use crate::engine::Parallel;

/// The GPU's block width when the options leave it open ([`gpu_block`]).
const GPU_BLOCK_COLS: usize = 2048;
/// The GPU's block height into outputs written before ([`gpu_block`]): a block of 2M pixels,
/// so that one launch fills the device (an H100 holds 270K threads) and each copy amortises
/// its fixed costs. The job is bound by the bus and the copies there: the 16384² bilinear
/// job into reused float32 outputs, its plan called again (the input already on the device),
/// took 38.5 ms with these blocks and 55.3 ms with 128-row ones, with a new plan 56.9 and
/// 62.4 ms (docs/measurements/h100-2026-11-27-session18, runs 1 and 5).
const GPU_BLOCK_ROWS: usize = 1024;
/// The GPU's block height into fresh outputs ([`gpu_block`]). There the host's memory bounds
/// the job (each first write faults a page in and zeroes it), and each block thread's
/// page-locked slot, which the copy engine fills with a block's values and the thread reads
/// back at once to store them, should still be in the host's last-level cache when it is
/// read: 16 threads × 2 MiB of float64 values, against 16 MiB each for 1024-row blocks. The
/// 16384² bilinear call from numpy into fresh float64 outputs took 179.5-193.4 ms (best of
/// 3) with these blocks against 236.8-256.7 ms with 1024-row ones (256 rows: 196.7-212.9,
/// 64 rows: 199.6), and 192-196 ms against 274-280 ms from Rust (session 18, runs 1, 4, 5).
const GPU_FRESH_BLOCK_ROWS: usize = 128;

/// The GPU's block shape for an output plane of `shape` when the options leave it open, into
/// `fresh` outputs ([`Plan::with_fresh_outputs`](crate::engine::Plan::with_fresh_outputs)) or not:
/// [`GPU_BLOCK_COLS`] columns and [`GPU_FRESH_BLOCK_ROWS`] or [`GPU_BLOCK_ROWS`] rows at most.
pub(crate) fn gpu_block((ny, nx): (usize, usize), fresh: bool) -> (usize, usize) {
    let rows = if fresh {
        GPU_FRESH_BLOCK_ROWS
    } else {
        GPU_BLOCK_ROWS
    };
    (ny.clamp(1, rows), nx.clamp(1, GPU_BLOCK_COLS))
}

/// The host threads that keep the GPU's copies fed: every core, at most 8. Host memory
/// bandwidth, not the options' `parallel`, bounds the host side of the pipeline (staging the
/// input, draining the results into the caller's arrays, the footprint): on the H100 machine
/// a 16384² job took 63 ms with 16 block threads, and 730 ms from Python, where
/// `parallel=False` left it two (and float64 results)
/// (docs/measurements/h100-2026-11-26).
pub(super) fn host_copy_threads() -> usize {
    copy_threads_of(std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`host_copy_threads`] on a machine of `cores` cores.
fn copy_threads_of(cores: usize) -> usize {
    cores.clamp(1, 8)
}

/// The most block threads a GPU job into fresh outputs takes on its own ([`block_threads`]):
/// as many as were measured (16, the H100 machine's cores). Each block thread holds a slot
/// (page-locked memory for a block's values, at most 16 MiB for a 1024 × 2048 float64 block,
/// and two device buffers of that size). At 16 threads the slots stay well within the host pool
/// ([`crate::gpu::pool::POOL_LIMIT`]), so no call after the first allocates page-locked
/// memory.
const FRESH_WRITERS_MAX: usize = 16;

/// The block threads of a GPU job asked for `requested` on `devices` devices, on a machine of
/// `cores` cores: the host's copy threads, and two blocks in flight per device at least, so
/// that copies overlap kernels, whether the CPU's parallelism asks for one thread
/// (`parallel=False` is reproject's default) or every core; only an explicit larger count is
/// taken as given. Every core is not more: extra threads only add stores that compete for host
/// memory with the staging every block waits for. On the H100 machine's 16 cores the 16384²
/// host-resident bilinear job took 81 ms with 16 block threads and 66 ms with 8, and 8 were
/// faster in each of six such pairs (bilinear and bicubic,
/// docs/measurements/h100-2026-11-27-session14).
///
/// Into `fresh` outputs (memory the job writes first, such as the arrays a Python call
/// returns) every core up to [`FRESH_WRITERS_MAX`]: there the block threads' stores are most
/// of the job, since each first write faults in a page and zeroes it, and that work is shared
/// by the threads that store. The 16384² bilinear call as Python makes it (float64 outputs)
/// took 283 and 232 ms on 16 block threads against 395 and 310 ms on 8, in two runs on the
/// H100 machine, and 342 → 301 ms from Python (docs/measurements/h100-2026-11-27-session17).
pub(super) fn block_threads(
    requested: Parallel,
    devices: usize,
    cores: usize,
    fresh: bool,
) -> usize {
    let copy = if fresh {
        cores.clamp(1, FRESH_WRITERS_MAX)
    } else {
        copy_threads_of(cores)
    };
    let floor = (2 * devices).max(copy);
    match requested {
        Parallel::Threads(n) => n.max(floor),
        Parallel::Serial | Parallel::AllCores => floor,
    }
}

/// The host threads that write a one-GPU job's results when the CPU's parallelism asks for
/// `requested`, into `fresh` outputs or not ([`block_threads`] on this machine's cores): what
/// the cost model counts for fresh outputs.
pub(in crate::engine) fn host_writers(requested: Parallel, fresh: bool) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    block_threads(requested, 1, cores, fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of 1024 rows, of 128 into fresh outputs, 2048 columns; smaller planes whole.
    #[test]
    fn gpu_blocks_are_short_into_fresh_outputs() {
        assert_eq!(gpu_block((16384, 16384), false), (1024, 2048));
        assert_eq!(gpu_block((16384, 16384), true), (128, 2048));
        assert_eq!(gpu_block((100, 300), true), (100, 300));
        assert_eq!(gpu_block((0, 0), false), (1, 1));
    }

    /// A GPU job on the H100 machine's 16 cores runs 8 block threads, serial or on every core
    /// (a serial one had two: 730 ms against 63 ms for a 16384² job from Python; sixteen were
    /// slower than eight), two per device at least; an explicit larger count is given. Into
    /// fresh outputs, every core up to 16.
    #[test]
    fn gpu_jobs_keep_a_copy_thread_per_core_up_to_8() {
        use Parallel::{AllCores, Serial, Threads};
        let reused = |requested, devices, cores| block_threads(requested, devices, cores, false);
        assert_eq!(reused(Serial, 1, 16), 8);
        assert_eq!(reused(AllCores, 1, 16), 8);
        assert_eq!(reused(Threads(2), 1, 16), 8);
        assert_eq!(reused(Threads(12), 1, 16), 12);
        assert_eq!(reused(AllCores, 1, 4), 4);
        assert_eq!(reused(Serial, 4, 2), 8);
        assert_eq!(reused(AllCores, 8, 16), 16);
        assert_eq!(reused(Serial, 1, 1), 2);
        assert_eq!(copy_threads_of(0), 1);
        let fresh = |requested, devices, cores| block_threads(requested, devices, cores, true);
        assert_eq!(fresh(Serial, 1, 16), 16);
        assert_eq!(fresh(AllCores, 1, 16), 16);
        assert_eq!(fresh(AllCores, 1, 64), 16);
        assert_eq!(fresh(Threads(24), 1, 16), 24);
        assert_eq!(fresh(AllCores, 1, 4), 4);
        assert_eq!(fresh(Serial, 4, 2), 8);
        assert_eq!(fresh(Serial, 1, 0), 2);
    }
}

//! A timeline model: replays a recorded sequence of GPU operations (the CUDA simulator records
//! one, [`super::sim::SimDriver::timeline`]) at given hardware rates and says how long the
//! pipeline would take, and how busy each engine would be.
//!
//! The model:
//! - **Engines**: one host → device copy engine, one device → host copy engine, and the SMs,
//!   which run kernels (and device copies) one at a time. Each engine, when idle, takes the
//!   ready operation that became ready first (ties: recorded order); nothing is preempted.
//! - **An operation starts** once: the previous operation of its stream is done; its host
//!   thread's last synchronize has returned (a per-thread host cursor: a thread issues work
//!   only after the synchronize before it returned); every earlier operation (in recorded
//!   order) that wrote device memory it reads, or read or wrote device memory it writes, is
//!   done (RAW, WAR, WAW); and its engine is free.
//! - **A synchronize** returns once every earlier operation of its stream is done and its
//!   thread's cursor has reached it; it moves the thread's cursor there.
//! - **Host work costs nothing**: filling staging buffers, converting results and waiting on
//!   locks are free, so the result is what the device and the bus allow given the order the
//!   host issued the work in.
//! - **Durations**: a copy takes its bytes over the engine's rate; a block kernel takes its
//!   output pixels times the per-pixel time of the general kernel, scaled by occupancy for the
//!   specialised builds (a kernel that is latency-bound runs as many times faster as it keeps
//!   warps resident); an accumulate launch and a device copy take their bytes over the device
//!   memory's rate.
//!
//! ```
//! use reproject::gpu::timeline::{replay, Kind, Op, Rates};
//! let rates = Rates { h2d_bytes_per_s: 1e9, d2h_bytes_per_s: 1e9, ..Rates::h100() };
//! // 1 MB up, then 1 MB down on another stream after a synchronize: serial, 2 ms.
//! let ops = [
//!     Op::copy(Kind::Upload, 1, 0, 1_000_000, 0..1_000_000),
//!     Op::sync(1, 0),
//!     Op::copy(Kind::Download, 2, 0, 1_000_000, 0..1_000_000),
//!     Op::sync(2, 0),
//! ];
//! let t = replay(&ops, &rates);
//! assert!((t.critical_path - 2e-3).abs() < 1e-9);
//! assert!((t.floor() - 1e-3).abs() < 1e-9);
//! ```

use std::collections::HashMap;
use std::ops::Range;

/// What a recorded operation is.
///
/// ```
/// use reproject::gpu::timeline::{Engine, Kind, Op};
/// let down = Op::copy(Kind::Download, 1, 0, 64, 0..64);
/// assert_eq!(down.reads, vec![0..64]); // a download reads device memory
/// assert!(down.writes.is_empty());
/// assert_eq!(down.engine(), Some(Engine::D2h));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A host → device copy.
    Upload,
    /// A device → host copy.
    Download,
    /// A device → device copy.
    DeviceCopy,
    /// A block kernel launch.
    Launch,
    /// An accumulate kernel launch (mosaics).
    Accumulate,
    /// A spline prefilter launch (orders 2-5: the values made from the input, or one axis
    /// filtered), timed by the bytes it reads and writes.
    Prefilter,
    /// A stream synchronize (the host thread waits for the stream).
    Synchronize,
}

/// The engine an operation occupies.
///
/// ```
/// use reproject::gpu::timeline::{replay, Engine, Kind, Op, Rates};
/// let rates = Rates { h2d_bytes_per_s: 1e9, d2h_bytes_per_s: 1e9, ..Rates::h100() };
/// let up = Op::copy(Kind::Upload, 1, 0, 1_000_000, 0..1_000_000);
/// let down = Op::copy(Kind::Download, 2, 1, 1_000_000, 2_000_000..3_000_000);
/// assert_eq!((up.engine(), down.engine()), (Some(Engine::H2d), Some(Engine::D2h)));
/// let both = replay(&[up.clone(), down], &rates);
/// assert!((both.critical_path - 1e-3).abs() < 1e-12); // two engines: the copies overlap
/// let up2 = Op::copy(Kind::Upload, 2, 1, 1_000_000, 2_000_000..3_000_000);
/// assert!((replay(&[up, up2], &rates).critical_path - 2e-3).abs() < 1e-12); // one engine
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The host → device copy engine.
    H2d,
    /// The device → host copy engine.
    D2h,
    /// The SMs (kernels and device copies, one at a time).
    Sm,
}

/// One recorded operation (or synchronize).
///
/// ```
/// use reproject::gpu::timeline::{Kind, Op, Rates};
/// // A spline prefilter launch moving 1 GiB on stream 1, issued by host thread 0.
/// let filter = Op { kind: Kind::Prefilter, bytes: 1 << 30, ..Op::sync(1, 0) };
/// assert!((Rates::h100().duration(&filter) - 0.8e-3).abs() < 1e-12); // device memory's rate
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// What it is.
    pub kind: Kind,
    /// Its stream (0: the legacy default stream, for synchronous copies).
    pub stream: u64,
    /// The host thread that issued it (any per-thread id).
    pub thread: u64,
    /// Bytes copied (copies) or touched (accumulate launches).
    pub bytes: u64,
    /// Output pixels of a launch.
    pub pixels: u64,
    /// Whether a block launch runs a specialised build (homography, order 0 or 1), budgeted
    /// at [`Rates::specialised_occupancy`].
    pub specialised: bool,
    /// Device address ranges read.
    pub reads: Vec<Range<u64>>,
    /// Device address ranges written.
    pub writes: Vec<Range<u64>>,
}

impl Op {
    /// A copy of `bytes` of `kind` (upload or download) on `stream` from `thread`, touching
    /// `device` (written by an upload, read by a download).
    ///
    /// ```
    /// use reproject::gpu::timeline::{Kind, Op};
    /// let op = Op::copy(Kind::Upload, 1, 0, 8, 0..8);
    /// assert_eq!(op.writes, vec![0..8]);
    /// ```
    pub fn copy(kind: Kind, stream: u64, thread: u64, bytes: u64, device: Range<u64>) -> Op {
        let (reads, writes) = match kind {
            Kind::Upload => (vec![], vec![device]),
            _ => (vec![device], vec![]),
        };
        Op {
            kind,
            stream,
            thread,
            bytes,
            pixels: 0,
            specialised: false,
            reads,
            writes,
        }
    }

    /// A block launch of `pixels` output pixels reading `reads` and writing `writes`.
    ///
    /// ```
    /// use reproject::gpu::timeline::{Kind, Op};
    /// let op = Op::launch(1, 0, 64, true, vec![0..8], vec![8..16]);
    /// assert_eq!(op.kind, Kind::Launch);
    /// ```
    pub fn launch(
        stream: u64,
        thread: u64,
        pixels: u64,
        specialised: bool,
        reads: Vec<Range<u64>>,
        writes: Vec<Range<u64>>,
    ) -> Op {
        Op {
            kind: Kind::Launch,
            stream,
            thread,
            bytes: 0,
            pixels,
            specialised,
            reads,
            writes,
        }
    }

    /// A synchronize of `stream` by `thread`.
    ///
    /// ```
    /// let op = reproject::gpu::timeline::Op::sync(3, 1);
    /// assert_eq!(op.stream, 3);
    /// ```
    pub fn sync(stream: u64, thread: u64) -> Op {
        Op {
            kind: Kind::Synchronize,
            stream,
            thread,
            bytes: 0,
            pixels: 0,
            specialised: false,
            reads: vec![],
            writes: vec![],
        }
    }

    /// The engine it occupies (`None` for a synchronize).
    ///
    /// ```
    /// use reproject::gpu::timeline::{Engine, Op};
    /// assert_eq!(Op::sync(1, 0).engine(), None);
    /// assert_eq!(Op::launch(1, 0, 1, false, vec![], vec![]).engine(), Some(Engine::Sm));
    /// ```
    pub fn engine(&self) -> Option<Engine> {
        match self.kind {
            Kind::Upload => Some(Engine::H2d),
            Kind::Download => Some(Engine::D2h),
            Kind::DeviceCopy | Kind::Launch | Kind::Accumulate | Kind::Prefilter => {
                Some(Engine::Sm)
            }
            Kind::Synchronize => None,
        }
    }

    /// Whether `self` must wait for an earlier `other` because of the device memory they
    /// touch (read after write, write after read, write after write).
    fn depends_on(&self, other: &Op) -> bool {
        let meet = |a: &[Range<u64>], b: &[Range<u64>]| {
            a.iter()
                .any(|x| b.iter().any(|y| x.start < y.end && y.start < x.end))
        };
        meet(&self.reads, &other.writes)
            || meet(&self.writes, &other.reads)
            || meet(&self.writes, &other.writes)
    }
}

/// The hardware rates a replay runs at.
///
/// ```
/// use reproject::gpu::timeline::{Kind, Op, Rates};
/// let gen4 = Rates { h2d_bytes_per_s: 25e9, d2h_bytes_per_s: 25e9, ..Rates::h100() };
/// let gb = Op::copy(Kind::Upload, 1, 0, 1_000_000_000, 0..1_000_000_000);
/// assert!((gen4.duration(&gb) - 0.04).abs() < 1e-12); // 1 GB at 25 GB/s
/// assert!(Rates::h100().duration(&gb) < gen4.duration(&gb));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Host → device copies (pinned memory).
    pub h2d_bytes_per_s: f64,
    /// Device → host copies (pinned memory).
    pub d2h_bytes_per_s: f64,
    /// The general block kernel's time per output pixel, at [`Rates::general_occupancy`].
    pub kernel_ns_per_pixel: f64,
    /// The general kernel's occupancy.
    pub general_occupancy: f64,
    /// The occupancy budgeted for the specialised builds (homography, orders 0 and 1).
    pub specialised_occupancy: f64,
    /// Device memory rate for device copies and accumulate launches.
    pub device_bytes_per_s: f64,
}

impl Rates {
    /// An H100 (SXM5, PCIe Gen5 x16), from `shared/measurements/h100` and
    /// `shared/reference/performance.md`: 55 GB/s each way (pinned 1 GiB copies measured at
    /// 55 GB/s); Nsight Compute measured 475 µs per 2048² launch of the general kernel at
    /// 12.5% occupancy (latency-bound); the specialised homography order-0/1 builds are
    /// budgeted at 50% occupancy, so a quarter of the general kernel's time per pixel; a
    /// device copy of the 1 GiB input took 0.8 ms.
    ///
    /// ```
    /// let r = reproject::gpu::timeline::Rates::h100();
    /// assert_eq!(r.h2d_bytes_per_s, 55e9);
    /// ```
    pub fn h100() -> Rates {
        Rates {
            h2d_bytes_per_s: 55e9,
            d2h_bytes_per_s: 55e9,
            kernel_ns_per_pixel: 475e3 / (2048.0 * 2048.0),
            general_occupancy: 0.125,
            specialised_occupancy: 0.5,
            device_bytes_per_s: (1u64 << 30) as f64 / 0.8e-3,
        }
    }

    /// How long `op` occupies its engine, in seconds.
    ///
    /// ```
    /// use reproject::gpu::timeline::{Op, Rates};
    /// let r = Rates::h100();
    /// let general = r.duration(&Op::launch(1, 0, 2048 * 2048, false, vec![], vec![]));
    /// assert!((general - 475e-6).abs() < 1e-12);
    /// let fast = r.duration(&Op::launch(1, 0, 2048 * 2048, true, vec![], vec![]));
    /// assert!((fast - 475e-6 / 4.0).abs() < 1e-12);
    /// ```
    pub fn duration(&self, op: &Op) -> f64 {
        let bytes = op.bytes as f64;
        match op.kind {
            Kind::Upload => bytes / self.h2d_bytes_per_s,
            Kind::Download => bytes / self.d2h_bytes_per_s,
            Kind::DeviceCopy | Kind::Accumulate | Kind::Prefilter => {
                bytes / self.device_bytes_per_s
            }
            Kind::Launch => {
                let occupancy = if op.specialised {
                    self.specialised_occupancy
                } else {
                    self.general_occupancy
                };
                op.pixels as f64 * self.kernel_ns_per_pixel * 1e-9 * self.general_occupancy
                    / occupancy
            }
            Kind::Synchronize => 0.0,
        }
    }
}

/// What a replay found, in seconds.
///
/// ```
/// use reproject::gpu::timeline::{replay, Kind, Op, Rates};
/// let rates = Rates { h2d_bytes_per_s: 1e9, d2h_bytes_per_s: 1e9, ..Rates::h100() };
/// // 1 MB up, a 2048 x 2048 block, 1 MB down, on one stream: nothing overlaps.
/// let ops = [
///     Op::copy(Kind::Upload, 1, 0, 1_000_000, 0..1_000_000),
///     Op::launch(1, 0, 2048 * 2048, false, vec![], vec![]),
///     Op::copy(Kind::Download, 1, 0, 1_000_000, 0..1_000_000),
/// ];
/// let t = replay(&ops, &rates);
/// assert!((t.critical_path - (1e-3 + 475e-6 + 1e-3)).abs() < 1e-12);
/// assert!((t.kernels - 475e-6).abs() < 1e-12 && (t.upload - 1e-3).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timeline {
    /// When the last operation finished (the pipeline's critical path).
    pub critical_path: f64,
    /// Busy time of the host → device copy engine.
    pub upload: f64,
    /// Busy time of the SMs.
    pub kernels: f64,
    /// Busy time of the device → host copy engine.
    pub download: f64,
}

impl Timeline {
    /// The floor no schedule can beat: the busiest engine's time.
    ///
    /// ```
    /// let t = reproject::gpu::timeline::Timeline {
    ///     critical_path: 3.0,
    ///     upload: 1.0,
    ///     kernels: 0.5,
    ///     download: 2.0,
    /// };
    /// assert_eq!(t.floor(), 2.0);
    /// ```
    pub fn floor(&self) -> f64 {
        self.upload.max(self.kernels).max(self.download)
    }

    /// The critical path over the floor (1 for a perfect overlap; 0 for an empty sequence).
    ///
    /// ```
    /// let t = reproject::gpu::timeline::Timeline {
    ///     critical_path: 3.0,
    ///     upload: 1.0,
    ///     kernels: 0.5,
    ///     download: 2.0,
    /// };
    /// assert_eq!(t.ratio(), 1.5);
    /// ```
    pub fn ratio(&self) -> f64 {
        if self.floor() > 0.0 {
            self.critical_path / self.floor()
        } else {
            0.0
        }
    }
}

/// The per-op facts a replay needs: its duration, engine and what it waits for.
struct Node {
    engine: Option<Engine>,
    duration: f64,
    /// Earlier ops it waits for (indices).
    after: Vec<usize>,
}

/// The dependencies of every op (see the module documentation), as indices of earlier ops.
fn nodes(ops: &[Op], rates: &Rates) -> Vec<Node> {
    let mut last_on_stream: HashMap<u64, usize> = HashMap::new();
    let mut last_sync_of_thread: HashMap<u64, usize> = HashMap::new();
    let mut nodes = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let mut after: Vec<usize> = Vec::new();
        after.extend(last_on_stream.get(&op.stream));
        after.extend(last_sync_of_thread.get(&op.thread));
        if !op.reads.is_empty() || !op.writes.is_empty() {
            after.extend((0..i).filter(|&j| op.depends_on(&ops[j])));
        }
        last_on_stream.insert(op.stream, i);
        if op.kind == Kind::Synchronize {
            last_sync_of_thread.insert(op.thread, i);
        }
        nodes.push(Node {
            engine: op.engine(),
            duration: rates.duration(op),
            after,
        });
    }
    nodes
}

/// Replays `ops` (in the order they were issued) at `rates`: each engine, when free, starts
/// the ready operation that became ready first (see the module documentation).
///
/// ```
/// use reproject::gpu::timeline::{replay, Rates};
/// assert_eq!(replay(&[], &Rates::h100()).critical_path, 0.0);
/// ```
pub fn replay(ops: &[Op], rates: &Rates) -> Timeline {
    let nodes = nodes(ops, rates);
    let mut finish: Vec<Option<f64>> = vec![None; ops.len()];
    let mut free: HashMap<Engine, f64> = HashMap::new();
    let mut busy: HashMap<Engine, f64> = HashMap::new();
    let mut left = ops.len();
    while left > 0 {
        // The op that can start first among those whose dependencies are all done.
        let mut best: Option<(f64, usize)> = None;
        for (i, node) in nodes.iter().enumerate() {
            if finish[i].is_some() {
                continue;
            }
            let ready = node
                .after
                .iter()
                .map(|&j| finish[j])
                .try_fold(0.0f64, |t, f| f.map(|f| t.max(f)));
            let Some(ready) = ready else { continue };
            let start = match node.engine {
                Some(e) => ready.max(free.get(&e).copied().unwrap_or(0.0)),
                None => ready,
            };
            if best.is_none_or(|(s, _)| start < s) {
                best = Some((start, i));
            }
        }
        let Some((start, i)) = best else { break };
        let end = start + nodes[i].duration;
        finish[i] = Some(end);
        if let Some(e) = nodes[i].engine {
            free.insert(e, end);
            *busy.entry(e).or_default() += nodes[i].duration;
        }
        left -= 1;
    }
    let busy_of = |e| busy.get(&e).copied().unwrap_or(0.0);
    Timeline {
        critical_path: finish.iter().flatten().fold(0.0, |a: f64, &b| a.max(b)),
        upload: busy_of(Engine::H2d),
        kernels: busy_of(Engine::Sm),
        download: busy_of(Engine::D2h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 byte per second and 1 second per pixel everywhere: durations read as counts.
    fn unit() -> Rates {
        Rates {
            h2d_bytes_per_s: 1.0,
            d2h_bytes_per_s: 1.0,
            kernel_ns_per_pixel: 1e9,
            general_occupancy: 1.0,
            specialised_occupancy: 1.0,
            device_bytes_per_s: 1.0,
        }
    }

    fn up(stream: u64, thread: u64, bytes: u64, at: u64) -> Op {
        Op::copy(Kind::Upload, stream, thread, bytes, at..at + bytes)
    }

    fn down(stream: u64, thread: u64, bytes: u64, at: u64) -> Op {
        Op::copy(Kind::Download, stream, thread, bytes, at..at + bytes)
    }

    fn kernel(stream: u64, thread: u64, pixels: u64, reads: Range<u64>, out: Range<u64>) -> Op {
        Op::launch(stream, thread, pixels, false, vec![reads], vec![out])
    }

    #[test]
    fn one_stream_is_serial() {
        let ops = [
            up(1, 0, 4, 0),
            kernel(1, 0, 2, 0..4, 100..104),
            down(1, 0, 4, 100),
            Op::sync(1, 0),
        ];
        let t = replay(&ops, &unit());
        assert_eq!(t.critical_path, 10.0);
        assert_eq!((t.upload, t.kernels, t.download), (4.0, 2.0, 4.0));
        assert_eq!(t.floor(), 4.0);
    }

    #[test]
    fn streams_overlap_across_engines() {
        // Two independent blocks on two threads and streams: the second's upload runs while
        // the first's kernel and download do.
        let ops = [
            up(1, 0, 4, 0),
            kernel(1, 0, 1, 0..4, 100..104),
            down(1, 0, 4, 100),
            up(2, 1, 4, 10),
            kernel(2, 1, 1, 10..14, 200..204),
            down(2, 1, 4, 200),
            Op::sync(1, 0),
            Op::sync(2, 1),
        ];
        let t = replay(&ops, &unit());
        // up1 0-4, k1 4-5, d1 5-9; up2 4-8, k2 8-9, d2 9-13.
        assert_eq!(t.critical_path, 13.0);
        assert_eq!(t.floor(), 8.0);
    }

    #[test]
    fn a_synchronize_blocks_overlap() {
        // The same two blocks from one thread with a synchronize between them: serial.
        let ops = [
            up(1, 0, 4, 0),
            kernel(1, 0, 1, 0..4, 100..104),
            down(1, 0, 4, 100),
            Op::sync(1, 0),
            up(2, 0, 4, 10),
            kernel(2, 0, 1, 10..14, 200..204),
            down(2, 0, 4, 200),
            Op::sync(2, 0),
        ];
        assert_eq!(replay(&ops, &unit()).critical_path, 18.0);
    }

    #[test]
    fn a_data_dependency_crosses_threads() {
        // Thread 1's kernel reads what thread 0 uploads on another stream: it waits for it,
        // though nothing else orders them.
        let ops = [
            up(1, 0, 6, 0),
            Op::sync(1, 0),
            kernel(2, 1, 1, 2..3, 100..101),
            Op::sync(2, 1),
        ];
        assert_eq!(replay(&ops, &unit()).critical_path, 7.0);
        // Reading memory nobody writes, it starts at once.
        let free = [
            up(1, 0, 6, 0),
            Op::sync(1, 0),
            kernel(2, 1, 1, 50..51, 100..101),
            Op::sync(2, 1),
        ];
        let t = replay(&free, &unit());
        assert_eq!(t.critical_path, 6.0);
        assert_eq!(t.kernels, 1.0);
    }

    #[test]
    fn a_write_waits_for_earlier_reads() {
        // The upload rewrites what the kernel on another stream reads: write after read.
        let ops = [
            kernel(1, 0, 3, 0..4, 100..104),
            up(2, 1, 4, 0),
            Op::sync(2, 1),
        ];
        assert_eq!(replay(&ops, &unit()).critical_path, 7.0);
    }

    #[test]
    fn an_engine_runs_one_op_at_a_time() {
        // Two uploads on two streams share the copy engine.
        let ops = [up(1, 0, 3, 0), up(2, 1, 3, 10)];
        let t = replay(&ops, &unit());
        assert_eq!(t.critical_path, 6.0);
        assert_eq!(t.upload, 6.0);
    }

    #[test]
    fn the_engine_takes_the_op_ready_first() {
        // Recorded first but ready late (after a long kernel), a download does not hold up
        // one recorded later that is ready at once.
        let ops = [
            kernel(1, 0, 10, 0..1, 100..104),
            down(1, 0, 4, 100),
            down(2, 1, 4, 200),
        ];
        let t = replay(&ops, &unit());
        assert_eq!(t.critical_path, 14.0);
        assert_eq!(t.download, 8.0);
    }

    #[test]
    fn the_h100_preset_matches_the_budgets() {
        let r = Rates::h100();
        let gib = Op::copy(Kind::Upload, 1, 0, 1 << 30, 0..1 << 30);
        assert!((r.duration(&gib) - 19.52e-3).abs() < 0.01e-3);
        let launch = Op::launch(1, 0, 2048 * 2048, true, vec![], vec![]);
        assert!((r.duration(&launch) - 118.75e-6).abs() < 1e-9);
    }
}

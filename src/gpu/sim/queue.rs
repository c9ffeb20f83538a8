//! The operations queued on a stream, the memory each touches and the ordering hazards
//! between streams that follow: checked as work is queued or memory given up, and recorded.

use std::collections::VecDeque;

use super::state::State;
use super::SimDriver;
use crate::gpu::driver::{
    AccumulateLaunch, BlockLaunch, DriverFault, DriverResult, FaultKind, HostBuffer, SplineLaunch,
    StreamId,
};
use crate::gpu::timeline;

/// A queued operation. Host addresses are those of [`HostBuffer`]s the caller keeps alive.
#[derive(Debug, Clone)]
pub(super) enum Op {
    Upload { src: usize, dst: u64, bytes: usize },
    Copy { src: u64, dst: u64, bytes: usize },
    Download { src: u64, dst: usize, bytes: usize },
    Launch(Box<BlockLaunch>),
    Accumulate(Box<AccumulateLaunch>),
    Spline(Box<SplineLaunch>),
}

/// A memory range an operation touches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Access {
    pub(super) device: bool,
    pub(super) start: u64,
    pub(super) len: u64,
    pub(super) write: bool,
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
    pub(super) fn accesses(&self) -> Vec<Access> {
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

    pub(super) fn describe(&self) -> String {
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
pub(super) fn host_thread() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

pub(super) struct Stream {
    pub(super) queue: VecDeque<Op>,
    /// The first failure of completed work, reported at the next synchronize.
    pub(super) failure: Option<DriverFault>,
}

impl SimDriver {
    pub(super) fn enqueue(&self, st: &mut State, stream: StreamId, op: Op) -> DriverResult<()> {
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
    pub(super) fn given_up_under_a_copy(
        st: &mut State,
        call: &str,
        buffer: &HostBuffer,
        len: usize,
    ) -> bool {
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
    pub(super) fn pending_touches(st: &State, access: Access) -> bool {
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

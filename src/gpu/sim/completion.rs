//! What every call does first (recorded; the injected fault or the sticky error returned),
//! and the completion of queued work at random legal points: executed, or only accounted.

use super::queue::Op;
use super::state::State;
use super::{Call, SimDriver};
use crate::gpu::driver::{DriverFault, DriverResult, FaultKind, StreamId};

impl SimDriver {
    /// Records a call and applies the configured fault and the poisoning; then completes
    /// some queued work at random.
    pub(super) fn begin(
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
    pub(super) fn complete_one(&self, st: &mut State, stream: u64) {
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
}

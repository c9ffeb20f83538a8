//! The simulator's state behind its lock (device and host memory, streams, records), and the
//! bookkeeping of device memory: allocations kept and handed out again, addresses resolved.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::MutexGuard;

use super::queue::Stream;
use super::{Call, SimDriver, SimStats};
use crate::gpu::driver::{FaultKind, HostBuffer};
use crate::gpu::pool::DeviceBlock;
use crate::gpu::timeline;
use crate::gpu::variant::KernelDefines;

/// Makes the bytes of a device allocation's memory past the `bytes` asked for unreadable in
/// the sanitized build (build.rs, `REPROJECT_RS_SANITIZE_SIM=1`), so that a kernel reading or
/// writing past its buffer stops with AddressSanitizer's report. A GPU reads whatever lies in
/// its allocation's rounding there, or faults past it; either way the kernel is wrong. Does
/// nothing in other builds.
pub(super) fn guard_tail(words: &[u64], bytes: usize) {
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

pub(super) struct State {
    pub(super) next_address: u64,
    /// Device allocations by base address (u64 words: 8-byte aligned, as device memory is).
    pub(super) allocations: BTreeMap<u64, (Vec<u64>, usize)>,
    /// Bytes behind each allocation, handed out or kept (rounded up to 256).
    pub(super) capacities: HashMap<u64, usize>,
    /// Device bytes allocated, kept ones included.
    pub(super) used: usize,
    /// Host buffers: address → length.
    pub(super) host: HashMap<usize, usize>,
    pub(super) streams: HashMap<u64, Stream>,
    pub(super) next_stream: u64,
    /// Streams given back with nothing queued, for reuse.
    pub(super) idle_streams: Vec<u64>,
    pub(super) calls: Vec<Call>,
    pub(super) rng: u64,
    pub(super) poisoned: Option<String>,
    pub(super) hazards: Vec<String>,
    pub(super) stats: SimStats,
    /// The variant of each launch queued.
    pub(super) launched: Vec<KernelDefines>,
    /// The variants loaded so far (each compiled once).
    pub(super) loaded: HashSet<KernelDefines>,
    /// The variants compiling in the background ([`SimDriver::finish_compilations`]).
    pub(super) preparing: HashSet<KernelDefines>,
    /// The fault to inject (from the configuration, or [`SimDriver::inject`]).
    pub(super) fail_at: Option<(usize, FaultKind)>,
    /// Every operation queued and every synchronize, for [`SimDriver::timeline`].
    pub(super) timeline: Vec<timeline::Op>,
}

// SAFETY: the host addresses in queued operations belong to HostBuffers whose holders
// promise (by the unsafe contracts of `upload`/`download`) to keep them alive and untouched.
unsafe impl Send for State {}

impl SimDriver {
    /// Frees a page-locked buffer for good.
    pub(super) fn release(st: &mut State, buffer: HostBuffer) {
        let addr = buffer.as_ptr() as usize;
        if let Some(words) = st.host.remove(&addr) {
            // SAFETY: made by alloc_host as a boxed slice of `words` u64s, freed once.
            drop(unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(addr as *mut u64, words))
            });
        }
    }

    /// Frees every device allocation the pool keeps.
    pub(super) fn release_device(&self, st: &mut State) {
        for block in self.device.drain() {
            st.capacities.remove(&block.ptr.0);
            st.used -= block.capacity;
        }
        self.count_device(st);
    }

    /// The device statistics after `st.used` or the pool changed.
    pub(super) fn count_device(&self, st: &mut State) {
        let kept = self.device.kept_bytes();
        st.stats.device_bytes_kept = kept;
        st.stats.device_bytes_in_use = st.used - kept;
    }

    /// Hands `block`, kept by the pool, out again as `bytes`: fresh poison in every word, as a
    /// new allocation has (a kernel that reads what nothing wrote gets garbage either way).
    pub(super) fn reuse(&self, st: &mut State, block: DeviceBlock, bytes: usize) {
        let words = if self.config.record_only {
            Vec::new()
        } else {
            vec![0xdead_beef_dead_beef; block.capacity / 8]
        };
        guard_tail(&words, bytes);
        st.allocations.insert(block.ptr.0, (words, bytes));
        self.count_device(st);
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The host address of device range [ptr, ptr + len) (None: outside every allocation).
    pub(super) fn resolve(st: &mut State, ptr: u64, len: usize) -> Option<*mut u8> {
        let (base, (words, size)) = st.allocations.range_mut(..=ptr).next_back()?;
        let offset = (ptr - base) as usize;
        (offset + len <= *size).then(|| {
            // SAFETY: offset + len is within the allocation's bytes.
            unsafe { (words.as_mut_ptr() as *mut u8).add(offset) }
        })
    }

    /// Whether device range [ptr, ptr + len) lies inside an allocation.
    pub(super) fn fits(st: &State, ptr: u64, len: usize) -> bool {
        st.allocations
            .range(..=ptr)
            .next_back()
            .is_some_and(|(base, (_, size))| (ptr - base) as usize + len <= *size)
    }
}

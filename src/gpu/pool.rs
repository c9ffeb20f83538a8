//! The page-locked host memory a driver keeps for reuse. Allocating page-locked memory
//! (`cuMemHostAlloc`) costs about a millisecond per few megabytes and synchronises the device,
//! and every job needs staging and download buffers: a driver's `free_host` gives buffers to
//! its pool and `alloc_host` takes from it, so that after a first job the same shapes of jobs
//! allocate no page-locked memory at all.
//!
//! ```
//! use reproject::gpu::driver::Driver;
//! use reproject::gpu::sim::{SimConfig, SimDriver};
//! let sim = SimDriver::new(SimConfig::default());
//! let a = sim.alloc_host(1 << 20)?;
//! sim.free_host(a);                // kept by the pool
//! let b = sim.alloc_host(1 << 19)?; // the same buffer, no new allocation
//! assert_eq!(sim.stats().host_allocations, 1);
//! sim.free_host(b);
//! # Ok::<(), reproject::gpu::driver::DriverFault>(())
//! ```

use std::sync::Mutex;

use super::driver::HostBuffer;

/// The most page-locked bytes a pool keeps (buffers beyond are freed).
pub const POOL_LIMIT: usize = 1 << 30;

/// Buffers kept for reuse, at most [`POOL_LIMIT`] bytes (see the module documentation).
///
/// ```
/// use reproject::gpu::pool::HostPool;
/// let pool = HostPool::default();
/// assert!(pool.take(64).is_none());
/// assert_eq!(pool.kept_bytes(), 0);
/// ```
#[derive(Debug, Default)]
pub struct HostPool {
    kept: Mutex<Vec<HostBuffer>>,
}

impl HostPool {
    /// A kept buffer of at least `len` bytes (seen as `len` bytes), the smallest that fits,
    /// unless it would waste much (more than four times `len` plus a megabyte); `None`:
    /// allocate one.
    pub fn take(&self, len: usize) -> Option<HostBuffer> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let wasteful = len.saturating_mul(4).saturating_add(1 << 20);
        let best = kept
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len && b.capacity() <= wasteful)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        Some(kept.swap_remove(best).with_len(len))
    }

    /// Keeps `buffer` (no copy may be pending on it) for a later [`HostPool::take`]; gives it
    /// back when the pool would exceed [`POOL_LIMIT`] bytes (free it then).
    pub fn give(&self, buffer: HostBuffer) -> Option<HostBuffer> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: usize = kept.iter().map(HostBuffer::capacity).sum();
        if bytes.saturating_add(buffer.capacity()) > POOL_LIMIT {
            return Some(buffer);
        }
        kept.push(buffer);
        None
    }

    /// Every kept buffer (to free them when the driver goes).
    pub fn drain(&self) -> Vec<HostBuffer> {
        std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Bytes kept now.
    pub fn kept_bytes(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(HostBuffer::capacity)
            .sum()
    }
}

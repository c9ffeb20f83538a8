//! The memory a driver keeps for reuse, so that after a first job the same shapes of jobs
//! allocate nothing:
//! - page-locked host memory ([`HostPool`]): `cuMemHostAlloc` costs about a millisecond per
//!   few megabytes and synchronises the device, and every job needs staging and download
//!   buffers;
//! - device memory ([`DevicePool`]): every plan uploads its input planes into allocations of
//!   its own and every block thread needs a pair of output buffers; `cuMemFree` waits for the
//!   whole device, and a 16384² job's plane is a gigabyte mapped anew each time.
//!
//! A driver's `free_host` and `free` give buffers to its pools and `alloc_host` and `alloc`
//! take from them. The callers' contract makes the reuse safe: a buffer is freed only once
//! no queued work touches it any more (the simulator records a hazard otherwise).
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
//! let d = sim.alloc(1 << 20)?;
//! sim.free(d);
//! assert_eq!(sim.alloc(1 << 20)?, d); // the same device memory
//! assert_eq!(sim.stats().device_allocations, 1);
//! # Ok::<(), reproject::gpu::driver::DriverFault>(())
//! ```

use std::sync::Mutex;

use super::driver::{DevicePtr, HostBuffer};

/// The most page-locked bytes a [`HostPool`] keeps (buffers beyond are freed).
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::pool::POOL_LIMIT;
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// sim.free_host(sim.alloc_host(POOL_LIMIT + 1)?); // too large to keep: freed
/// sim.free_host(sim.alloc_host(1 << 20)?); // kept
/// sim.alloc_host(POOL_LIMIT + 1)?;
/// sim.alloc_host(1 << 20)?;
/// assert_eq!(sim.stats().host_allocations, 3);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub const POOL_LIMIT: usize = 1 << 30;

/// The most streams a driver keeps for reuse (a job takes one per block thread and two for
/// its uploads).
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::pool::KEPT_STREAMS;
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// let streams = (0..=KEPT_STREAMS).map(|_| sim.create_stream());
/// let streams: Vec<_> = streams.collect::<Result<_, _>>()?;
/// streams.into_iter().for_each(|s| sim.destroy_stream(s)); // one more than are kept
/// for _ in 0..=KEPT_STREAMS {
///     sim.create_stream()?;
/// }
/// assert_eq!(sim.stats().streams_created, KEPT_STREAMS + 2); // one made anew
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub const KEPT_STREAMS: usize = 64;

/// The most device bytes a [`DevicePool`] keeps on a device of `total` bytes: an eighth (10
/// GB of an 80 GB H100: a 16384² float32 job keeps 1.6 GB), so that other users of the device
/// (CuPy, another process) still find most of it free; a failed allocation frees the pool
/// and tries again in any case.
///
/// ```
/// assert_eq!(reproject::gpu::pool::device_pool_limit(80 << 30), 10 << 30);
/// ```
pub fn device_pool_limit(total: usize) -> usize {
    total / 8
}

/// What a pool keeps: something of a capacity, seen by its taker as a smaller length.
///
/// ```
/// use reproject::gpu::pool::{Pool, Pooled};
/// #[derive(Debug, PartialEq)]
/// struct Scratch { bytes: usize, len: usize }
/// impl Pooled for Scratch {
///     fn capacity(&self) -> usize { self.bytes }
///     fn with_len(self, len: usize) -> Self { Scratch { len, ..self } }
/// }
/// let pool = Pool::new(1 << 20);
/// pool.give(Scratch { bytes: 4096, len: 4096 });
/// assert_eq!(pool.take(1000), Some(Scratch { bytes: 4096, len: 1000 }));
/// ```
pub trait Pooled {
    /// Bytes allocated.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, Driver};
    /// use reproject::gpu::pool::{DeviceBlock, Pooled};
    /// # use reproject::gpu::sim::SimDriver;
    /// let block = DeviceBlock { ptr: DevicePtr(4096), capacity: 512 };
    /// assert_eq!(Pooled::capacity(&block), 512);
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(64)?.with_len(16);
    /// assert_eq!(Pooled::capacity(&buf), 64); // not its length
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn capacity(&self) -> usize;
    /// The same allocation seen as `len` bytes (at most its capacity).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, Driver};
    /// use reproject::gpu::pool::{DeviceBlock, Pooled};
    /// # use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = Pooled::with_len(sim.alloc_host(64)?, 16);
    /// assert_eq!((buf.len(), buf.capacity()), (16, 64));
    /// let block = DeviceBlock { ptr: DevicePtr(4096), capacity: 512 };
    /// assert_eq!(Pooled::with_len(block, 16), block); // a device block has no length of its own
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn with_len(self, len: usize) -> Self;
}

impl Pooled for HostBuffer {
    fn capacity(&self) -> usize {
        HostBuffer::capacity(self)
    }
    fn with_len(self, len: usize) -> Self {
        HostBuffer::with_len(self, len)
    }
}

/// A device allocation a [`DevicePool`] keeps: its address and size.
///
/// ```
/// use reproject::gpu::driver::DevicePtr;
/// use reproject::gpu::pool::{DeviceBlock, DevicePool};
/// let pool = DevicePool::new(1 << 20);
/// assert!(pool.give(DeviceBlock { ptr: DevicePtr(4096), capacity: 512 }).is_empty());
/// assert_eq!(pool.take(256).map(|b| b.ptr), Some(DevicePtr(4096)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceBlock {
    /// Where it starts.
    pub ptr: DevicePtr,
    /// Bytes allocated.
    pub capacity: usize,
}

impl Pooled for DeviceBlock {
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn with_len(self, _len: usize) -> Self {
        self
    }
}

/// Buffers kept for reuse, at most a limit of bytes (see the module documentation).
///
/// ```
/// use reproject::gpu::pool::HostPool;
/// let pool = HostPool::default();
/// assert!(pool.take(64).is_none());
/// assert_eq!(pool.kept_bytes(), 0);
/// ```
#[derive(Debug)]
pub struct Pool<B> {
    kept: Mutex<Vec<B>>,
    limit: usize,
}

/// Page-locked host buffers kept for reuse, [`POOL_LIMIT`] bytes at most.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::pool::HostPool;
/// use reproject::gpu::sim::SimDriver;
/// let (sim, pool) = (SimDriver::new(Default::default()), HostPool::default());
/// assert!(pool.give(sim.alloc_host(4096)?).is_empty()); // kept
/// let buf = pool.take(100).expect("the kept buffer fits");
/// assert_eq!((buf.len(), buf.capacity()), (100, 4096));
/// sim.free_host(buf);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub type HostPool = Pool<HostBuffer>;

/// Device allocations kept for reuse (at most [`device_pool_limit`] of the device).
///
/// ```
/// use reproject::gpu::driver::DevicePtr;
/// use reproject::gpu::pool::{device_pool_limit, DeviceBlock, DevicePool};
/// let pool = DevicePool::new(device_pool_limit(1 << 30)); // 128 MiB of a 1 GiB device
/// pool.give(DeviceBlock { ptr: DevicePtr(1 << 20), capacity: 8 << 20 });
/// pool.give(DeviceBlock { ptr: DevicePtr(1 << 30), capacity: 2 << 20 });
/// let taken = pool.take(2 << 20).map(|b| b.ptr);
/// assert_eq!(taken, Some(DevicePtr(1 << 30))); // the smallest that fits
/// ```
pub type DevicePool = Pool<DeviceBlock>;

impl Default for HostPool {
    fn default() -> Self {
        Pool::new(POOL_LIMIT)
    }
}

impl<B: Pooled> Pool<B> {
    /// An empty pool that keeps at most `limit` bytes.
    ///
    /// ```
    /// use reproject::gpu::pool::DevicePool;
    /// assert_eq!(DevicePool::new(0).kept_bytes(), 0);
    /// ```
    pub fn new(limit: usize) -> Self {
        Pool {
            kept: Mutex::new(Vec::new()),
            limit,
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<B>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A kept buffer of at least `len` bytes (seen as `len` bytes), the smallest that fits,
    /// unless it would waste much (more than four times `len` plus a megabyte); `None`:
    /// allocate one.
    ///
    /// ```
    /// use reproject::gpu::driver::DevicePtr;
    /// use reproject::gpu::pool::{DeviceBlock, DevicePool};
    /// let pool = DevicePool::new(1 << 30);
    /// pool.give(DeviceBlock { ptr: DevicePtr(1 << 12), capacity: 64 << 20 });
    /// assert!(pool.take(1 << 10).is_none()); // a 64 MB buffer for a kilobyte: too wasteful
    /// assert!(pool.take(32 << 20).is_some());
    /// ```
    pub fn take(&self, len: usize) -> Option<B> {
        let mut kept = self.kept();
        let wasteful = len.saturating_mul(4).saturating_add(1 << 20);
        let best = kept
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len && b.capacity() <= wasteful)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        // `remove`, not `swap_remove`: the others keep their age order (see `give`).
        Some(kept.remove(best).with_len(len))
    }

    /// Keeps `buffer` (no work may be pending on it) for a later [`Pool::take`] and returns
    /// the buffers to free: the oldest kept ones, as many as make room for it within the
    /// limit, or `buffer` itself when it alone exceeds the limit. The newest buffers are kept
    /// because the next job most likely asks for the same sizes: a pool that kept its first
    /// buffers instead stayed full of a 1 GiB copy buffer that no block's 16 MB request could
    /// use, and every later job allocated afresh (17 `cuMemHostAlloc` a call on the H100,
    /// session 14).
    ///
    /// ```
    /// use reproject::gpu::driver::DevicePtr;
    /// use reproject::gpu::pool::{DeviceBlock, DevicePool};
    /// let block = |at: u64, capacity| DeviceBlock { ptr: DevicePtr(at << 20), capacity };
    /// let pool = DevicePool::new(1000);
    /// assert_eq!(pool.give(block(1, 1024)), vec![block(1, 1024)]); // alone over the limit
    /// assert!(pool.give(block(2, 600)).is_empty());
    /// assert_eq!(pool.give(block(3, 500)), vec![block(2, 600)]); // the oldest makes room
    /// assert_eq!(pool.kept_bytes(), 500);
    /// ```
    pub fn give(&self, buffer: B) -> Vec<B> {
        if buffer.capacity() > self.limit {
            return vec![buffer];
        }
        let mut kept = self.kept();
        let mut bytes: usize = kept.iter().map(Pooled::capacity).sum();
        let mut evicted = Vec::new();
        while bytes + buffer.capacity() > self.limit && !kept.is_empty() {
            let oldest = kept.remove(0);
            bytes -= oldest.capacity();
            evicted.push(oldest);
        }
        kept.push(buffer);
        evicted
    }

    /// Every kept buffer (to free them: when the driver goes, before an allocation that
    /// failed is tried again, when asked to).
    ///
    /// ```
    /// use reproject::gpu::pool::HostPool;
    /// assert!(HostPool::default().drain().is_empty());
    /// ```
    pub fn drain(&self) -> Vec<B> {
        std::mem::take(&mut *self.kept())
    }

    /// Bytes kept now.
    ///
    /// ```
    /// use reproject::gpu::pool::DevicePool;
    /// assert_eq!(DevicePool::new(1 << 20).kept_bytes(), 0);
    /// ```
    pub fn kept_bytes(&self) -> usize {
        self.kept().iter().map(Pooled::capacity).sum()
    }
}

#[cfg(test)]
mod tests {
    use crate::gpu::driver::{Driver, FaultKind};
    use crate::gpu::sim::{SimConfig, SimDriver};

    /// Kept device memory counts as free, and an allocation that needs it frees it first;
    /// beyond the pool's limit a given-back allocation is freed at once.
    #[test]
    fn kept_device_memory_gives_way_to_allocations_that_need_it() {
        let sim = SimDriver::new(SimConfig {
            memory: 64 << 20,
            ..SimConfig::default()
        });
        let small = sim.alloc(4 << 20).unwrap();
        sim.free(small);
        let stats = sim.stats();
        assert_eq!(
            (stats.device_bytes_kept, stats.device_bytes_in_use),
            (4 << 20, 0)
        );
        assert_eq!(
            sim.mem_info().unwrap().0,
            64 << 20,
            "kept memory is free to use"
        );
        // 62 MB only fit once the kept 4 MB are freed.
        let big = sim.alloc(62 << 20).unwrap();
        let stats = sim.stats();
        assert_eq!((stats.device_bytes_kept, stats.device_allocations), (0, 2));
        // 62 MB is more than the pool keeps of 64 MB (8 MB): freed for good.
        sim.free(big);
        assert_eq!(sim.stats().device_bytes_kept, 0);
        assert_eq!(sim.mem_info().unwrap().0, 64 << 20);
        let too_big = sim.alloc(65 << 20).unwrap_err();
        assert_eq!(too_big.kind, FaultKind::OutOfMemory);
    }

    /// A stream given back is handed out again; `release_kept` frees the kept memory and
    /// streams.
    #[test]
    fn release_kept_frees_memory_and_streams() {
        let sim = SimDriver::new(SimConfig::default());
        let d = sim.alloc(1 << 20).unwrap();
        let s = sim.create_stream().unwrap();
        sim.free(d);
        sim.destroy_stream(s);
        assert_eq!(
            sim.create_stream().unwrap(),
            s,
            "the stream is handed out again"
        );
        sim.destroy_stream(s);
        sim.release_kept();
        assert_eq!(sim.stats().device_bytes_kept, 0);
        assert_ne!(
            sim.create_stream().unwrap(),
            s,
            "a new stream once released"
        );
        assert_eq!(sim.stats().streams_created, 2);
    }
}

//! Where a GPU job's time goes, phase by phase: a [`Driver`] that wraps another and waits for
//! each queued copy or launch as it is queued, timing it. The job then runs with nothing
//! overlapped, so its wall time is the sum of its phases: uploads, kernels, downloads, and the
//! host work between them (reading and converting the input, storing the results). The
//! benchmark (`examples/gpu_bench.rs`) prints that breakdown beside the overlapped run's time.
//!
//! ```
//! use std::sync::Arc;
//! use reproject::gpu::driver::Driver;
//! use reproject::gpu::profile::ProfilingDriver;
//! use reproject::gpu::sim::{SimConfig, SimDriver};
//! let sim: Arc<dyn Driver> = Arc::new(SimDriver::new(SimConfig::default()));
//! let profiled = ProfilingDriver::new(sim);
//! let (stream, dev, host) = (
//!     profiled.create_stream()?,
//!     profiled.alloc(64)?,
//!     profiled.alloc_host(64)?,
//! );
//! unsafe { profiled.upload(stream, &host, 0, dev, 64)? };
//! let phases = profiled.phases();
//! assert_eq!((phases.uploads, phases.uploaded), (1, 64));
//! # Ok::<(), reproject::gpu::driver::DriverFault>(())
//! ```

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::driver::{
    AccumulateLaunch, BlockLaunch, CallCount, DevicePtr, Driver, DriverResult, HostBuffer,
    MemoryAt, SplineLaunch, StreamId,
};
use super::variant::KernelDefines;
use super::GpuInfo;

/// The time and bytes of each phase so far.
///
/// ```
/// use std::sync::Arc;
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::profile::ProfilingDriver;
/// use reproject::gpu::sim::SimDriver;
/// let profiled = ProfilingDriver::new(Arc::new(SimDriver::new(Default::default())));
/// let stream = profiled.create_stream()?;
/// let (dev, host) = (profiled.alloc(32)?, profiled.alloc_host(32)?);
/// unsafe { profiled.download(stream, dev, &host, 0, 32)? };
/// unsafe { profiled.download(stream, dev, &host, 0, 16)? };
/// let p = profiled.phases();
/// assert_eq!((p.downloads, p.downloaded, p.uploads), (2, 48, 0));
/// assert_eq!(p.device_time(), p.download_time);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    /// Host-to-device copies: how many, bytes, time.
    pub uploads: usize,
    /// Bytes copied host → device.
    pub uploaded: u64,
    /// Time spent copying host → device.
    pub upload_time: Duration,
    /// Kernel launches (block, accumulate and spline prefilter kernels).
    pub launches: usize,
    /// Time spent in kernels.
    pub kernel_time: Duration,
    /// Of the launches, those of the spline prefilter (values and filter kernels).
    pub prefilter_launches: usize,
    /// Of the kernel time, the spline prefilter's.
    pub prefilter_time: Duration,
    /// Device-to-host copies.
    pub downloads: usize,
    /// Bytes copied device → host.
    pub downloaded: u64,
    /// Time spent copying device → host.
    pub download_time: Duration,
}

impl Phases {
    /// The device's time: copies both ways and kernels.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reproject::gpu::profile::Phases;
    /// let p = Phases {
    ///     upload_time: Duration::from_millis(2),
    ///     kernel_time: Duration::from_millis(3),
    ///     ..Phases::default()
    /// };
    /// assert_eq!(p.device_time(), Duration::from_millis(5));
    /// ```
    pub fn device_time(&self) -> Duration {
        self.upload_time + self.kernel_time + self.download_time
    }
}

/// A driver that times every copy and launch by waiting for it (see the module documentation).
///
/// ```
/// use std::sync::Arc;
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::profile::ProfilingDriver;
/// use reproject::gpu::sim::SimDriver;
/// let profiled = ProfilingDriver::new(Arc::new(SimDriver::new(Default::default())));
/// let stream = profiled.create_stream()?;
/// let (dev, host) = (profiled.alloc(4)?, profiled.alloc_host(4)?);
/// profiled.upload_now(&[1, 2, 3, 4], dev)?;
/// unsafe { profiled.download(stream, dev, &host, 0, 4)? };
/// // Done already, with no synchronize: the profiler waited for it.
/// assert_eq!(unsafe { host.as_slice() }, &[1, 2, 3, 4]);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub struct ProfilingDriver {
    inner: Arc<dyn Driver>,
    phases: Mutex<Phases>,
}

impl ProfilingDriver {
    /// Profiles the work queued on `inner`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::profile::{Phases, ProfilingDriver};
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { ordinal: 3, ..SimConfig::default() });
    /// let profiled = ProfilingDriver::new(Arc::new(sim));
    /// assert_eq!(profiled.ordinal(), 3); // the wrapped device's
    /// assert_eq!(profiled.phases(), Phases::default()); // nothing timed yet
    /// ```
    pub fn new(inner: Arc<dyn Driver>) -> ProfilingDriver {
        ProfilingDriver {
            inner,
            phases: Mutex::new(Phases::default()),
        }
    }

    /// The phases so far.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use reproject::gpu::driver::{Driver, SplineLaunch, SplineOp};
    /// # use reproject::gpu::profile::ProfilingDriver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { record_only: true, ..SimConfig::default() });
    /// let profiled = ProfilingDriver::new(Arc::new(sim));
    /// let stream = profiled.create_stream()?;
    /// let (plane, poles) = (profiled.alloc(8 * 8 * 8)?, profiled.alloc(32)?);
    /// let rows = SplineOp::Filter { axis: 1, poles, npoles: 1, gain: 6.0, source: None };
    /// unsafe { profiled.launch_spline(stream, &SplineLaunch::new(plane, (8, 8), rows)?)? };
    /// let p = profiled.phases();
    /// assert_eq!((p.launches, p.prefilter_launches), (1, 1));
    /// assert_eq!(p.prefilter_time, p.kernel_time); // all of it the prefilter's
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn phases(&self) -> Phases {
        *self.phases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `queue` (which queues one operation on `stream`), waits for it, and adds its time
    /// to the phases with `add`.
    fn timed(
        &self,
        stream: StreamId,
        queue: impl FnOnce() -> DriverResult<()>,
        add: impl FnOnce(&mut Phases, Duration),
    ) -> DriverResult<()> {
        // Work queued before is not this operation's.
        self.inner.synchronize(stream)?;
        let t = Instant::now();
        queue()?;
        self.inner.synchronize(stream)?;
        add(
            &mut self.phases.lock().unwrap_or_else(|e| e.into_inner()),
            t.elapsed(),
        );
        Ok(())
    }
}

impl Driver for ProfilingDriver {
    fn info(&self) -> &GpuInfo {
        self.inner.info()
    }

    fn ordinal(&self) -> usize {
        self.inner.ordinal()
    }

    fn poisoned(&self) -> Option<String> {
        self.inner.poisoned()
    }

    fn mem_info(&self) -> DriverResult<(usize, usize)> {
        self.inner.mem_info()
    }

    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr> {
        self.inner.alloc(bytes)
    }

    fn free(&self, ptr: DevicePtr) {
        self.inner.free(ptr)
    }

    fn memory_at(&self, ptr: DevicePtr) -> DriverResult<MemoryAt> {
        self.inner.memory_at(ptr)
    }

    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer> {
        self.inner.alloc_host(bytes)
    }

    fn free_host(&self, buffer: HostBuffer) {
        self.inner.free_host(buffer)
    }

    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.inner.register_host(ptr, len) }
    }

    fn unregister_host(&self, buffer: HostBuffer) {
        self.inner.unregister_host(buffer)
    }

    fn create_stream(&self) -> DriverResult<StreamId> {
        self.inner.create_stream()
    }

    fn destroy_stream(&self, stream: StreamId) {
        self.inner.destroy_stream(stream)
    }

    fn release_kept(&self) {
        self.inner.release_kept()
    }

    fn call_counts(&self) -> Vec<CallCount> {
        self.inner.call_counts()
    }

    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()> {
        self.inner.upload_now(src, dst)
    }

    unsafe fn upload(
        &self,
        stream: StreamId,
        src: &HostBuffer,
        src_offset: usize,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        self.timed(
            stream,
            // SAFETY: the caller's promises, passed on.
            || unsafe { self.inner.upload(stream, src, src_offset, dst, bytes) },
            |p, t| {
                p.uploads += 1;
                p.uploaded += bytes as u64;
                p.upload_time += t;
            },
        )
    }

    unsafe fn download(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: &HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DriverResult<()> {
        self.timed(
            stream,
            // SAFETY: the caller's promises, passed on.
            || unsafe { self.inner.download(stream, src, dst, dst_offset, bytes) },
            |p, t| {
                p.downloads += 1;
                p.downloaded += bytes as u64;
                p.download_time += t;
            },
        )
    }

    unsafe fn copy_device(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        // SAFETY: the caller's promises, passed on.
        unsafe { self.inner.copy_device(stream, src, dst, bytes) }
    }

    fn load_variant(&self, variant: &KernelDefines) -> DriverResult<()> {
        self.inner.load_variant(variant)
    }

    fn variant_ready(&self, variant: &KernelDefines) -> bool {
        self.inner.variant_ready(variant)
    }

    fn prepare_variant(&self, variant: &KernelDefines) {
        self.inner.prepare_variant(variant)
    }

    unsafe fn launch(&self, stream: StreamId, launch: &BlockLaunch) -> DriverResult<()> {
        self.timed(
            stream,
            // SAFETY: the caller's promises, passed on.
            || unsafe { self.inner.launch(stream, launch) },
            |p, t| {
                p.launches += 1;
                p.kernel_time += t;
            },
        )
    }

    unsafe fn launch_accumulate(
        &self,
        stream: StreamId,
        launch: &AccumulateLaunch,
    ) -> DriverResult<()> {
        self.timed(
            stream,
            // SAFETY: the caller's promises, passed on.
            || unsafe { self.inner.launch_accumulate(stream, launch) },
            |p, t| {
                p.launches += 1;
                p.kernel_time += t;
            },
        )
    }

    unsafe fn launch_spline(&self, stream: StreamId, launch: &SplineLaunch) -> DriverResult<()> {
        self.timed(
            stream,
            // SAFETY: the caller's promises, passed on.
            || unsafe { self.inner.launch_spline(stream, launch) },
            |p, t| {
                p.launches += 1;
                p.kernel_time += t;
                p.prefilter_launches += 1;
                p.prefilter_time += t;
            },
        )
    }

    fn synchronize(&self, stream: StreamId) -> DriverResult<()> {
        self.inner.synchronize(stream)
    }
}

//! The driver seam: every CUDA driver operation a GPU pipeline uses, behind one trait, with two
//! implementations: the real driver (`CudaDriver` in `gpu/cuda/`, through `cudarc`) and a
//! simulator ([`super::sim`]) that runs the kernels compiled as host C++.
//!
//! ```text
//! pipeline ──Driver──▶ CudaDriver (cuMemAlloc, cuMemcpyHtoDAsync, cuLaunchKernel, ...)
//!                  └─▶ SimDriver  (memory in host vectors, queued operations completed in a
//!                                  random legal order, every call recorded, faults injected)
//! ```
//!
//! The operations are asynchronous as on a GPU: copies and launches are queued on a stream
//! and complete some time before [`Driver::synchronize`] of that stream returns. Host buffers
//! ([`HostBuffer`], page-locked memory on a GPU) must not be touched by the host while a copy
//! queued on them is pending.
//!
//! ```
//! use reproject::gpu::driver::{Driver, FaultKind};
//! use reproject::gpu::sim::{SimConfig, SimDriver};
//! let sim = SimDriver::new(SimConfig {
//!     fail_at: Some((0, FaultKind::OutOfMemory)),
//!     ..SimConfig::default()
//! });
//! let fault = sim.alloc(1024).unwrap_err();
//! assert_eq!(fault.kind, FaultKind::OutOfMemory);
//! assert!(sim.alloc(1024).is_ok());
//! ```
//!
//! The parts: `call_count` (the driver API calls counted), `fault` (how a call fails),
//! `memory` (device addresses, streams, page-locked host buffers), and the launch
//! descriptions of the kernels: `block_launch` (the block kernel, and the grid limits every
//! launch shares), `accumulate_launch` and `spline_launch`. The [`Driver`] trait is here.

mod accumulate_launch;
mod block_launch;
mod call_count;
mod fault;
mod memory;
mod spline_launch;

pub use accumulate_launch::{AccumulateLaunch, AccumulateOp};
pub use block_launch::{BlockLaunch, PARSE_PARAMS};
pub use call_count::{calls_between, CallCount};
pub use fault::{DriverFault, DriverResult, FaultKind};
pub use memory::{DevicePtr, HostBuffer, MemoryAt, StreamId};
pub use spline_launch::{SplineLaunch, SplineOp, SplineSamples};

use super::variant::KernelDefines;
use super::GpuInfo;

/// The CUDA driver operations of the GPU pipelines, for one device.
///
/// Implementations: `CudaDriver` (`gpu/cuda/`, a real GPU) and [`super::sim::SimDriver`].
/// Calls may come from several threads at once.
///
/// ```
/// use reproject::gpu::driver::{Driver, DriverResult};
/// # use reproject::gpu::sim::SimDriver;
/// fn round_trip(d: &dyn Driver, bytes: &[u8]) -> DriverResult<Vec<u8>> {
///     let (stream, n) = (d.create_stream()?, bytes.len());
///     let (dev, host) = (d.alloc(n)?, d.alloc_host(n)?);
///     d.upload_now(bytes, dev)?;
///     unsafe { d.download(stream, dev, &host, 0, n)? };
///     d.synchronize(stream)?;
///     Ok(unsafe { host.as_slice() }.to_vec())
/// }
/// assert_eq!(round_trip(&SimDriver::new(Default::default()), b"SIMPLE")?, b"SIMPLE");
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub trait Driver: Send + Sync {
    /// The device.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { memory: 64 << 20, ..SimConfig::default() });
    /// assert_eq!(sim.info().total_memory, 64 << 20);
    /// assert_eq!(sim.info().compute_capability, (9, 0));
    /// ```
    fn info(&self) -> &GpuInfo;

    /// The device's ordinal among the visible ones.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { ordinal: 1, ..SimConfig::default() });
    /// assert_eq!(sim.ordinal(), 1);
    /// ```
    fn ordinal(&self) -> usize;

    /// Why the context cannot be used any more (a sticky error), if so.
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, FaultKind};
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// assert_eq!(sim.poisoned(), None);
    /// sim.inject(Some((0, FaultKind::Sticky)));
    /// assert!(sim.alloc(8).is_err());
    /// assert!(sim.poisoned().unwrap().contains("injected sticky"));
    /// ```
    fn poisoned(&self) -> Option<String>;

    /// (free, total) device memory in bytes; free counts the memory the driver keeps for
    /// reuse (see [`super::pool`]), which an allocation takes back when it needs it.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { memory: 64 << 20, ..SimConfig::default() });
    /// let dev = sim.alloc(1 << 20)?;
    /// assert_eq!(sim.mem_info()?, (63 << 20, 64 << 20));
    /// sim.free(dev); // kept for reuse, which counts as free
    /// assert_eq!(sim.mem_info()?, (64 << 20, 64 << 20));
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn mem_info(&self) -> DriverResult<(usize, usize)>;

    /// At least `bytes` of device memory (content undefined): an allocation kept from before
    /// (see [`super::pool`]), or a new one. Out of memory, the kept ones are freed and the
    /// allocation tried again.
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, FaultKind};
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { memory: 1 << 20, ..SimConfig::default() });
    /// let a = sim.alloc(1000)?;
    /// assert_ne!(sim.alloc(1000)?, a);
    /// assert_eq!(sim.alloc(2 << 20).unwrap_err().kind, FaultKind::OutOfMemory);
    /// assert_eq!(sim.stats().device_allocations, 2);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr>;

    /// Gives an allocation made by [`Driver::alloc`] back, once no queued work touches it:
    /// kept for reuse while the driver's pool has room, else freed.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let dev = sim.alloc(100)?;
    /// sim.free(dev);
    /// assert_eq!(sim.stats().device_bytes_kept, 256); // kept, rounded up as it was allocated
    /// assert_eq!(sim.alloc(100)?, dev); // and handed out again
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn free(&self, ptr: DevicePtr);

    /// What memory `ptr` addresses, as the driver knows it (`cuPointerGetAttributes`): memory
    /// of one device, memory every device can address, or none it knows. Callers check a
    /// caller's device address with it before a kernel reads or writes there, since a fault
    /// would end the context and every allocation in it.
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, MemoryAt};
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig { ordinal: 1, ..SimConfig::default() });
    /// let dev = sim.alloc(100)?;
    /// let inside = MemoryAt::Device { ordinal: Some(1), allocation: Some((dev, 100)) };
    /// assert_eq!(sim.memory_at(dev.offset(40))?, inside);
    /// assert_eq!(sim.memory_at(dev.offset(100))?, MemoryAt::Unknown); // past its end
    /// sim.free(dev);
    /// assert_eq!(sim.memory_at(dev)?, MemoryAt::Unknown); // given back
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn memory_at(&self, ptr: DevicePtr) -> DriverResult<MemoryAt>;

    /// At least `bytes` of page-locked host memory: a buffer kept from before (see
    /// [`super::pool`]), or a new one.
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, FaultKind};
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(1 << 20)?;
    /// assert_eq!((buf.len(), sim.stats().host_allocations), (1 << 20, 1));
    /// sim.inject(Some((sim.calls().len(), FaultKind::OutOfMemory)));
    /// assert_eq!(sim.alloc_host(64).unwrap_err().kind, FaultKind::OutOfMemory);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer>;

    /// Gives page-locked host memory back (no copy may be pending on it): kept for reuse
    /// while the driver's pool has room, else freed.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// sim.free_host(sim.alloc_host(4096)?);
    /// let again = sim.alloc_host(4096)?; // the kept buffer
    /// assert_eq!(sim.stats().host_allocations, 1);
    /// sim.free_host(again);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn free_host(&self, buffer: HostBuffer);

    /// Page-locks `len` bytes of ordinary host memory at `ptr` in place (cuMemHostRegister),
    /// so that copies can use it as they use [`Driver::alloc_host`]'s memory.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes until
    /// [`Driver::unregister_host`] is given the buffer, which must happen before that memory
    /// is freed.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev) = (sim.create_stream()?, sim.alloc(4)?);
    /// sim.upload_now(&[1, 2, 3, 4], dev)?;
    /// let mut memory = vec![0u8; 4];
    /// // SAFETY: `memory` outlives the registration.
    /// let locked = unsafe { sim.register_host(memory.as_mut_ptr(), memory.len())? };
    /// unsafe { sim.download(stream, dev, &locked, 0, 4)? };
    /// sim.synchronize(stream)?;
    /// sim.unregister_host(locked);
    /// assert_eq!(memory, [1, 2, 3, 4]); // copied into the caller's memory in place
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer>;

    /// Unlocks memory locked by [`Driver::register_host`] (no copy may be pending on it).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let mut memory = vec![0u8; 64];
    /// // SAFETY: `memory` outlives the registration.
    /// let locked = unsafe { sim.register_host(memory.as_mut_ptr(), memory.len())? };
    /// sim.unregister_host(locked);
    /// let names: Vec<&str> = sim.calls().iter().map(|c| c.name).collect();
    /// assert_eq!(names, ["cuMemHostRegister", "cuMemHostUnregister"]);
    /// assert!(sim.hazards().is_empty()); // no copy was pending on it
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn unregister_host(&self, buffer: HostBuffer);

    /// A stream with nothing queued: one kept from before, or a new one.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (a, b) = (sim.create_stream()?, sim.create_stream()?);
    /// assert_ne!(a, b);
    /// sim.destroy_stream(a);
    /// assert_eq!(sim.create_stream()?, a); // the kept one
    /// assert_eq!(sim.stats().streams_created, 2);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn create_stream(&self) -> DriverResult<StreamId>;

    /// Gives a stream back (its queued work finishes first): kept for reuse, or destroyed.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(2)?, sim.alloc_host(2)?);
    /// sim.upload_now(&[4, 2], dev)?;
    /// unsafe { sim.download(stream, dev, &host, 0, 2)? };
    /// sim.destroy_stream(stream); // finishes the download first
    /// assert_eq!(unsafe { host.as_slice() }, &[4, 2]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn destroy_stream(&self, stream: StreamId);

    /// Frees the device memory, page-locked memory and streams kept for reuse (for other
    /// users of the device, or of the host's memory).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// sim.free(sim.alloc(1 << 20)?);
    /// assert_eq!(sim.stats().device_bytes_kept, 1 << 20);
    /// sim.release_kept();
    /// assert_eq!(sim.stats().device_bytes_kept, 0);
    /// sim.alloc(1 << 20)?; // a new allocation
    /// assert_eq!(sim.stats().device_allocations, 2);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn release_kept(&self);

    /// The CUDA driver API calls made so far, by function, with their summed times: the real
    /// driver counts every call it makes; a driver that calls no CUDA (the simulator) none.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// sim.alloc(64)?;
    /// assert!(sim.call_counts().is_empty()); // the simulator calls no CUDA
    /// assert_eq!(sim.calls().len(), 1); // it records its own calls instead
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn call_counts(&self) -> Vec<CallCount> {
        Vec::new()
    }

    /// Copies `bytes` from host memory to the device, synchronously (for small parameter
    /// arrays).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let dev = sim.alloc(4)?;
    /// sim.upload_now(&[1, 2, 3, 4], dev)?; // done when it returns
    /// assert_eq!(sim.stats().uploaded, 4);
    /// assert!(sim.upload_now(&[0; 8], dev).is_err()); // more than the allocation holds
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()>;

    /// Queues a copy of `bytes` from `src[src_offset..]` to `dst` on `stream`.
    ///
    /// # Safety
    /// `dst` must hold `bytes` more bytes; `src` must not be written until the copy is done.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, mut host) = (sim.create_stream()?, sim.alloc(2)?, sim.alloc_host(6)?);
    /// unsafe { host.as_mut_slice() }.copy_from_slice(&[0, 0, 0, 0, 8, 9]);
    /// unsafe { sim.upload(stream, &host, 4, dev, 2)? }; // host bytes 4 and 5
    /// unsafe { sim.download(stream, dev, &host, 0, 2)? }; // back into bytes 0 and 1
    /// sim.synchronize(stream)?;
    /// assert_eq!(unsafe { host.as_slice() }, &[8, 9, 0, 0, 8, 9]);
    /// assert!(unsafe { sim.upload(stream, &host, 5, dev, 2) }.is_err()); // past the buffer
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    unsafe fn upload(
        &self,
        stream: StreamId,
        src: &HostBuffer,
        src_offset: usize,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()>;

    /// Queues a copy of `bytes` from `src` to `dst[dst_offset..]` on `stream`.
    ///
    /// # Safety
    /// `src` must hold `bytes` more bytes; `dst` must not be touched until the copy is done.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(3)?, sim.alloc_host(5)?);
    /// sim.upload_now(&[7, 8, 9], dev)?;
    /// unsafe { sim.download(stream, dev, &host, 2, 3)? }; // into host bytes 2..5
    /// sim.synchronize(stream)?;
    /// assert_eq!(unsafe { &host.as_slice()[2..] }, &[7, 8, 9]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    unsafe fn download(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: &HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DriverResult<()>;

    /// Queues a device-to-device copy of `bytes` on `stream`.
    ///
    /// # Safety
    /// Both ranges must lie in device allocations and not overlap.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, host) = (sim.create_stream()?, sim.alloc_host(4)?);
    /// let (a, b) = (sim.alloc(4)?, sim.alloc(4)?);
    /// sim.upload_now(&[1, 2, 3, 4], a)?;
    /// unsafe { sim.copy_device(stream, a, b, 4)?; sim.download(stream, b, &host, 0, 4)? };
    /// sim.synchronize(stream)?;
    /// assert_eq!(unsafe { host.as_slice() }, &[1, 2, 3, 4]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    unsafe fn copy_device(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()>;

    /// Makes `variant` of the block kernel ready to launch (compiled and loaded, once per
    /// process), or says why it cannot be had; a launch of a variant not loaded yet loads it
    /// first.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// use reproject::gpu::variant::KernelDefines;
    /// let sim = SimDriver::new(Default::default());
    /// let unknown = KernelDefines::new(["RP_V_UNKNOWN"])?;
    /// if SimDriver::has_kernels() {
    ///     assert!(sim.load_variant(&unknown).is_err());
    /// }
    /// # Ok::<(), reproject::Error>(())
    /// ```
    fn load_variant(&self, variant: &KernelDefines) -> DriverResult<()>;

    /// Whether `variant` of the block kernel can be had without compiling it now: loaded
    /// already, or in the on-disk cache of compiled kernels. A plan whose variant is not
    /// ready runs the general kernel (the same values) while [`Driver::prepare_variant`]
    /// compiles it for the plans after it: a few seconds of NVRTC on first use measured on an
    /// H100, which a job should not wait for. The general kernel is always ready.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// use reproject::gpu::variant::KernelDefines;
    /// let sim = SimDriver::new(SimConfig { uncached_variants: true, ..SimConfig::default() });
    /// let v = KernelDefines::new([
    ///     "RP_V_HOMOGRAPHY",
    ///     "RP_V_ORDER=1",
    ///     "RP_V_OUT=0",
    ///     "RP_V_NAN=0",
    /// ])?;
    /// assert!(sim.variant_ready(&KernelDefines::general()));
    /// assert!(!sim.variant_ready(&v));
    /// sim.prepare_variant(&v);
    /// sim.finish_compilations(); // the simulator's compilations end when told
    /// assert!(sim.variant_ready(&v) || !SimDriver::has_kernels());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    fn variant_ready(&self, variant: &KernelDefines) -> bool {
        let _ = variant;
        true
    }

    /// Starts compiling and loading `variant` of the block kernel in the background (once per
    /// process and device; nothing when it is loaded or failed already), for later plans.
    /// A build that fails is kept as failed: [`Driver::load_variant`] reports it and plans run
    /// the general kernel. See [`Driver::variant_ready`].
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// use reproject::gpu::variant::KernelDefines;
    /// let sim = SimDriver::new(Default::default());
    /// sim.prepare_variant(&KernelDefines::general()); // always loaded: nothing to do
    /// ```
    fn prepare_variant(&self, variant: &KernelDefines) {
        let _ = variant;
    }

    /// Queues a launch of the block kernel (the build `launch.variant` names) on `stream`.
    ///
    /// # Safety
    /// Every pointer must be device memory of the sizes the arguments describe.
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, Driver};
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// // Record only: the launch is checked, queued and counted, but not run.
    /// let sim = SimDriver::new(SimConfig { record_only: true, ..SimConfig::default() });
    /// let (stream, out) = (sim.create_stream()?, sim.alloc(4096)?);
    /// let (t, s) = (sim.alloc(256)?, sim.alloc(256)?);
    /// let parse = BlockLaunch::parse_params(Default::default(), t, s, out, 4096)?;
    /// unsafe { sim.launch(stream, &parse)? };
    /// sim.synchronize(stream)?;
    /// assert_eq!((sim.stats().launches, sim.stats().parameter_parses), (1, 1));
    /// let empty = BlockLaunch { grid: (0, 1), ..parse };
    /// assert!(unsafe { sim.launch(stream, &empty) }.is_err()); // CUDA refuses an empty grid
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    unsafe fn launch(&self, stream: StreamId, launch: &BlockLaunch) -> DriverResult<()>;

    /// Queues a launch of the accumulate kernel on `stream`.
    ///
    /// # Safety
    /// Every pointer must be device memory of the sizes the arguments describe.
    ///
    /// ```
    /// # use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, Driver};
    /// # use reproject::gpu::sim::SimDriver;
    /// # let sim = SimDriver::new(Default::default());
    /// let (stream, data, footprint) = (sim.create_stream()?, sim.alloc(8)?, sim.alloc(8)?);
    /// let fill = AccumulateLaunch {
    ///     grid: (1, 1), threads: (1, 1), values: None, weights: None, op: AccumulateOp::Fill,
    ///     correction: 0, constants: (1.5, 0.0, 0.0), planes: 1, part: (1, 1), part_origin: (0, 0),
    ///     in_block: (0, 0), block: (1, 1), data, footprint,
    /// };
    /// let host = sim.alloc_host(8)?;
    /// unsafe { sim.launch_accumulate(stream, &fill)?; sim.download(stream, data, &host, 0, 8)? };
    /// if SimDriver::has_kernels() {
    ///     sim.synchronize(stream)?;
    ///     assert_eq!(unsafe { host.as_slice() }, 1.5f64.to_ne_bytes()); // data = the constant
    /// }
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    unsafe fn launch_accumulate(
        &self,
        stream: StreamId,
        launch: &AccumulateLaunch,
    ) -> DriverResult<()>;

    /// Queues a launch of one of the spline prefilter's kernels on `stream`.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, Driver, SplineLaunch, SplineOp};
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (plane, poles) = (sim.alloc(3 * 8)?, sim.alloc(4 * 8)?);
    /// let values: Vec<u8> = [1.0f64, 1.0, 1.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// sim.upload_now(&values, plane)?;
    /// let z = reproject::interp::spline::spline_pole_params(reproject::interp::Order::Bicubic, 3);
    /// sim.upload_now(&z.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>(), poles)?;
    /// // The rows of a 1 x 3 plane, filtered in place.
    /// let op = SplineOp::Filter { axis: 1, poles, npoles: 1, gain: 6.0, source: None };
    /// let stream = sim.create_stream()?;
    /// unsafe { sim.launch_spline(stream, &SplineLaunch::new(plane, (1, 3), op)?)? };
    /// sim.synchronize(stream)?;
    /// if SimDriver::has_kernels() {
    ///     assert_eq!(sim.stats().launches, 1);
    /// }
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    ///
    /// # Safety
    /// Every pointer must be device memory of the sizes the arguments describe
    /// ([`SplineLaunch::data_bytes`], [`SplineLaunch::reads`]).
    unsafe fn launch_spline(&self, stream: StreamId, launch: &SplineLaunch) -> DriverResult<()>;

    /// Waits until everything queued on `stream` is done; reports a failure of any of it.
    ///
    /// ```
    /// use reproject::gpu::driver::{Driver, FaultKind};
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(8)?, sim.alloc_host(16)?);
    /// // 8 bytes more than the allocation holds: the copy fails on the device.
    /// unsafe { sim.download(stream, dev, &host, 0, 16)? };
    /// let fault = sim.synchronize(stream).unwrap_err();
    /// assert_eq!((fault.call, fault.kind), ("cuStreamSynchronize", FaultKind::Sticky));
    /// assert!(fault.message.contains("ILLEGAL_ADDRESS"));
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    fn synchronize(&self, stream: StreamId) -> DriverResult<()>;
}

//! The real driver behind the [`Driver`] seam: one device's primary context, the kernels
//! compiled for it (see [`super::runtime`]), and the CUDA driver calls through `cudarc`'s
//! thin `result` layer. Every call binds the context to the calling thread and runs inside
//! [`guard`], so a panic in `cudarc` is an error, never a crash.
//!
//! A sticky error (an illegal address, a launch failure, ...) poisons the context: this driver
//! then fails every call, and the device registry ([`super::drivers`]) refuses the device for
//! the rest of the process.
//!
//! The kernel variants compiled in the background, and the order of the process's exit
//! against NVRTC's, are in `compilations`.

mod compilations;

pub(crate) use compilations::{
    compile_in_background, stop_background_compilations, wait_for_compilations,
};

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};

use super::driver::{
    AccumulateLaunch, BlockLaunch, CallCount, DevicePtr, Driver, DriverFault, DriverResult,
    FaultKind, HostBuffer, MemoryAt, SplineLaunch, StreamId,
};
use super::kernel_args::{KernelArg, SplineKernel};
use super::pool::{device_pool_limit, DeviceBlock, DevicePool, HostPool, KEPT_STREAMS};
use super::runtime::guard;
use super::variant::KernelDefines;
use super::GpuInfo;
use compilations::{build_variant, order_exit_before_queued_compilation, spawn_compilation};

/// A variant's module (kept loaded) and entry point, or why it cannot be had.
type VariantBuild = std::result::Result<(Arc<CudaModule>, CudaFunction), String>;

/// The entry points of the general module.
pub(crate) struct Kernels {
    /// The general block kernel.
    pub(crate) block: CudaFunction,
    /// The accumulate kernel of mosaics combined on the device.
    pub(crate) accumulate: CudaFunction,
    /// The spline prefilter (`rp_spline_filter`).
    pub(crate) spline_filter: CudaFunction,
    /// The spline prefilter reading a device input's samples (`rp_spline_filter_from`).
    pub(crate) spline_filter_from: CudaFunction,
    /// The spline prefilter's values from a device input (`rp_spline_values`).
    pub(crate) spline_values: CudaFunction,
}

/// One CUDA device with the kernels loaded.
pub(crate) struct CudaDriver {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    /// Keeps the module (and so `func`) loaded.
    _module: Arc<CudaModule>,
    kernels: Kernels,
    info: GpuInfo,
    /// The specialised builds of the block kernel loaded so far (or why one cannot be),
    /// shared with the threads that compile them in the background.
    variants: Arc<Mutex<HashMap<KernelDefines, VariantBuild>>>,
    /// The builds being compiled in the background ([`Driver::prepare_variant`]).
    preparing: Arc<Mutex<std::collections::HashSet<KernelDefines>>>,
    streams: Mutex<HashMap<u64, Arc<CudaStream>>>,
    next_stream: Mutex<u64>,
    poisoned: Mutex<Option<String>>,
    /// Page-locked buffers kept for reuse.
    pinned: HostPool,
    /// Device allocations kept for reuse, and the size of each allocation handed out.
    device: DevicePool,
    sizes: Mutex<HashMap<u64, usize>>,
    /// Streams given back, for reuse.
    idle_streams: Mutex<Vec<Arc<CudaStream>>>,
    /// Every driver API call made, by function ([`Driver::call_counts`]).
    calls: Mutex<Vec<CallCount>>,
}

/// The addresses of `args`' values, as `cuLaunchKernel` takes a kernel's parameters (valid while
/// `args` is neither moved nor dropped).
fn param_addresses(args: &mut [(&str, KernelArg)]) -> Vec<*mut c_void> {
    args.iter_mut()
        .map(|(_, a)| match a {
            KernelArg::Pointer(v) => v as *mut u64 as *mut c_void,
            KernelArg::Int(v) => v as *mut i32 as *mut c_void,
            KernelArg::Long(v) => v as *mut i64 as *mut c_void,
            KernelArg::Double(v) => v as *mut f64 as *mut c_void,
        })
        .collect()
}

/// Whether a driver error leaves the context unusable.
fn is_sticky(e: &DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
            | CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

impl CudaDriver {
    pub(crate) fn new(
        ordinal: usize,
        ctx: Arc<CudaContext>,
        module: Arc<CudaModule>,
        kernels: Kernels,
        info: GpuInfo,
    ) -> CudaDriver {
        CudaDriver {
            ordinal,
            ctx,
            _module: module,
            kernels,
            variants: Arc::new(Mutex::new(HashMap::new())),
            preparing: Arc::new(Mutex::new(std::collections::HashSet::new())),
            streams: Mutex::new(HashMap::new()),
            next_stream: Mutex::new(1),
            poisoned: Mutex::new(None),
            pinned: HostPool::default(),
            device: DevicePool::new(device_pool_limit(info.total_memory)),
            sizes: Mutex::new(HashMap::new()),
            idle_streams: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            info,
        }
    }

    /// Launches `func` on a one-dimensional grid of `l`'s size on stream `s`.
    ///
    /// # Safety
    /// `params` must match `func`'s signature; the pointers must be valid device memory.
    unsafe fn launch_1d(
        &self,
        func: &CudaFunction,
        l: &SplineLaunch,
        s: &CudaStream,
        params: &mut [*mut c_void],
    ) -> DriverResult<()> {
        // SAFETY: the caller's promises.
        self.call("cuLaunchKernel", || unsafe {
            result::launch_kernel(
                func.cu_function(),
                (l.grid, 1, 1),
                (l.threads, 1, 1),
                0,
                s.cu_stream(),
                params,
            )
        })
    }

    /// Runs a driver call with the context bound, turning errors (and panics) into faults
    /// and poisoning the context on a sticky error.
    fn call<R>(
        &self,
        name: &'static str,
        f: impl FnOnce() -> std::result::Result<R, DriverError>,
    ) -> DriverResult<R> {
        if let Some(why) = self.poisoned() {
            return Err(DriverFault::new(name, FaultKind::Sticky, why));
        }
        let t = std::time::Instant::now();
        let r = guard(name, || {
            self.ctx.bind_to_thread()?;
            f()
        });
        self.count(name, t.elapsed());
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                let kind = if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                    FaultKind::OutOfMemory
                } else if is_sticky(&e) {
                    FaultKind::Sticky
                } else {
                    FaultKind::Other
                };
                let fault = DriverFault::new(name, kind, e.to_string());
                if kind == FaultKind::Sticky {
                    *self.poisoned.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(format!("an earlier {fault}"));
                }
                Err(fault)
            }
            Err(panic) => Err(DriverFault::new(name, FaultKind::Other, panic)),
        }
    }

    /// The entry point of `variant` (compiled and loaded on first use, once per process; the
    /// general kernel was loaded with the device).
    fn function(&self, variant: &KernelDefines) -> DriverResult<sys::CUfunction> {
        if variant.is_general() {
            return Ok(self.kernels.block.cu_function());
        }
        let mut variants = self.variants.lock().unwrap_or_else(|p| p.into_inner());
        let build = variants.entry(variant.clone()).or_insert_with(|| {
            super::runtime::load_variant(
                &self.ctx,
                &self.info.arch,
                self.info.nvrtc_version,
                variant,
            )
        });
        match build {
            Ok((_, func)) => Ok(func.cu_function()),
            Err(why) => Err(DriverFault::new(
                "cuModuleLoadData",
                FaultKind::Other,
                why.clone(),
            )),
        }
    }

    fn stream(&self, id: StreamId, name: &'static str) -> DriverResult<Arc<CudaStream>> {
        let streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        streams.get(&id.0).cloned().ok_or_else(|| {
            DriverFault::new(
                name,
                FaultKind::Other,
                "CUDA_ERROR_INVALID_HANDLE: no such stream",
            )
        })
    }
}

impl CudaDriver {
    /// Frees a page-locked buffer for good.
    fn release(&self, buffer: HostBuffer) {
        // SAFETY: made by alloc_host, freed once.
        let _ = self.call("cuMemFreeHost", || unsafe {
            result::free_host(buffer.as_ptr() as *mut c_void)
        });
    }

    /// Frees every device allocation the pool keeps.
    fn release_device(&self) {
        for block in self.device.drain() {
            // SAFETY: made by alloc, kept once no work touched it.
            let _ = self.call("cuMemFree", || unsafe { result::free_sync(block.ptr.0) });
        }
    }

    /// Counts a call of `name` that took `time`.
    fn count(&self, name: &'static str, time: std::time::Duration) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        match calls.iter_mut().find(|c| c.name == name) {
            Some(c) => {
                c.calls += 1;
                c.time += time;
            }
            None => calls.push(CallCount {
                name,
                calls: 1,
                time,
            }),
        }
    }

    fn sizes(&self) -> std::sync::MutexGuard<'_, HashMap<u64, usize>> {
        self.sizes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for CudaDriver {
    fn drop(&mut self) {
        self.release_kept();
    }
}

impl Driver for CudaDriver {
    fn info(&self) -> &GpuInfo {
        &self.info
    }

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn poisoned(&self) -> Option<String> {
        self.poisoned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn mem_info(&self) -> DriverResult<(usize, usize)> {
        let (free, total) = self.call("cuMemGetInfo", result::mem_get_info)?;
        Ok((free + self.device.kept_bytes(), total))
    }

    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr> {
        if let Some(block) = self.device.take(bytes) {
            self.sizes().insert(block.ptr.0, block.capacity);
            return Ok(block.ptr);
        }
        let bytes = bytes.max(1);
        // SAFETY: a plain allocation; the pipeline writes it before reading it.
        let new = || self.call("cuMemAlloc", || unsafe { result::malloc_sync(bytes) });
        let ptr = match new() {
            Err(f) if f.kind == FaultKind::OutOfMemory && self.device.kept_bytes() > 0 => {
                self.release_device();
                new()?
            }
            r => r?,
        };
        self.sizes().insert(ptr, bytes);
        Ok(DevicePtr(ptr))
    }

    fn free(&self, ptr: DevicePtr) {
        let freed = match self.sizes().remove(&ptr.0) {
            Some(capacity) => self.device.give(DeviceBlock { ptr, capacity }),
            None => vec![DeviceBlock { ptr, capacity: 0 }],
        };
        for block in freed {
            // SAFETY: made by `alloc` and freed once, after its work is done (or kept until
            // now, with no work on it since).
            let _ = self.call("cuMemFree", || unsafe { result::free_sync(block.ptr.0) });
        }
    }

    fn memory_at(&self, ptr: DevicePtr) -> DriverResult<MemoryAt> {
        use sys::CUpointer_attribute::*;
        let mut attributes = [
            CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            CU_POINTER_ATTRIBUTE_IS_MANAGED,
            CU_POINTER_ATTRIBUTE_MAPPED,
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ];
        // One zeroed 8-byte slot per attribute, wide enough for each one's type (unsigned
        // int, bool, int, CUdeviceptr, size_t); the narrow ones land in the low bytes.
        let mut values = [0u64; 6];
        let mut data = values.each_mut().map(|v| v as *mut u64 as *mut c_void);
        self.call("cuPointerGetAttributes", || {
            // SAFETY: six attributes, each with a slot of 8 bytes; an address CUDA does not
            // know is not an error here: its attributes keep their null values.
            unsafe {
                sys::cuPointerGetAttributes(
                    attributes.len() as u32,
                    attributes.as_mut_ptr(),
                    data.as_mut_ptr(),
                    ptr.0,
                )
            }
            .result()
        })?;
        let [memory_type, managed, mapped, ordinal, start, bytes] = values;
        let (memory_type, ordinal) = (memory_type as u32, ordinal as u32 as i32);
        let allocation = (bytes > 0).then_some((DevicePtr(start), bytes as usize));
        const HOST: u32 = sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32;
        Ok(match memory_type {
            0 if mapped & 0xff == 0 => MemoryAt::Unknown,
            HOST => MemoryAt::Shared { allocation },
            _ if managed & 0xff != 0 => MemoryAt::Shared { allocation },
            _ => MemoryAt::Device {
                ordinal: usize::try_from(ordinal).ok(),
                allocation,
            },
        })
    }

    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer> {
        if let Some(kept) = self.pinned.take(bytes) {
            return Ok(kept);
        }
        let ptr = self.call("cuMemHostAlloc", || unsafe {
            // SAFETY: a plain page-locked allocation, freed by free_host.
            result::malloc_host(bytes.max(1), 0)
        })?;
        // SAFETY: cuMemHostAlloc returned `bytes` valid bytes, freed only by free_host.
        Ok(unsafe { HostBuffer::from_raw(ptr as *mut u8, bytes) })
    }

    fn free_host(&self, buffer: HostBuffer) {
        for freed in self.pinned.give(buffer) {
            self.release(freed);
        }
    }

    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer> {
        self.call("cuMemHostRegister", || {
            // SAFETY: the caller keeps `len` bytes at `ptr` valid until unregister_host.
            unsafe { sys::cuMemHostRegister_v2(ptr as *mut c_void, len.max(1), 0) }.result()
        })?;
        // SAFETY: as above.
        Ok(unsafe { HostBuffer::from_raw(ptr, len) })
    }

    fn unregister_host(&self, buffer: HostBuffer) {
        let _ = self.call("cuMemHostUnregister", || {
            // SAFETY: registered by register_host, unregistered once.
            unsafe { sys::cuMemHostUnregister(buffer.as_ptr() as *mut c_void) }.result()
        });
    }

    fn create_stream(&self) -> DriverResult<StreamId> {
        let idle = self
            .idle_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let stream = match idle {
            Some(stream) => stream,
            None => self.call("cuStreamCreate", || self.ctx.new_stream())?,
        };
        let mut next = self.next_stream.lock().unwrap_or_else(|p| p.into_inner());
        let id = *next;
        *next += 1;
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, stream);
        Ok(StreamId(id))
    }

    fn destroy_stream(&self, stream: StreamId) {
        let Some(stream) = self
            .streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&stream.0)
        else {
            return;
        };
        // Kept only once its work is done (the next user starts on an empty stream); cudarc
        // destroys the others when their last handle goes, after synchronizing them.
        if self
            .call("cuStreamSynchronize", || stream.synchronize())
            .is_ok()
        {
            let mut idle = self.idle_streams.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < KEPT_STREAMS {
                idle.push(stream);
            }
        }
    }

    fn call_counts(&self) -> Vec<CallCount> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn release_kept(&self) {
        for buffer in self.pinned.drain() {
            self.release(buffer);
        }
        self.release_device();
        self.idle_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()> {
        // SAFETY: `dst` holds src.len() bytes (the caller's allocation); synchronous copy.
        self.call("cuMemcpyHtoD", || unsafe {
            result::memcpy_htod_sync(dst.0, src)
        })
    }

    unsafe fn upload(
        &self,
        stream: StreamId,
        src: &HostBuffer,
        src_offset: usize,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let s = self.stream(stream, "cuMemcpyHtoDAsync")?;
        if src_offset + bytes > src.len() {
            return Err(DriverFault::new(
                "cuMemcpyHtoDAsync",
                FaultKind::Other,
                "source range outside the host buffer",
            ));
        }
        // SAFETY: the caller keeps `src` alive and unwritten until the copy is done; `dst`
        // holds `bytes` bytes.
        self.call("cuMemcpyHtoDAsync", || unsafe {
            let bytes = std::slice::from_raw_parts(src.as_ptr().add(src_offset), bytes);
            result::memcpy_htod_async(dst.0, bytes, s.cu_stream())
        })
    }

    unsafe fn download(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: &HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DriverResult<()> {
        let s = self.stream(stream, "cuMemcpyDtoHAsync")?;
        if dst_offset + bytes > dst.len() {
            return Err(DriverFault::new(
                "cuMemcpyDtoHAsync",
                FaultKind::Other,
                "destination range outside the host buffer",
            ));
        }
        // SAFETY: the caller keeps `dst` alive and untouched until the copy is done; `src`
        // holds `bytes` bytes.
        self.call("cuMemcpyDtoHAsync", || unsafe {
            let bytes = std::slice::from_raw_parts_mut(dst.as_ptr().add(dst_offset), bytes);
            result::memcpy_dtoh_async(bytes, src.0, s.cu_stream())
        })
    }

    unsafe fn copy_device(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let s = self.stream(stream, "cuMemcpyDtoDAsync")?;
        // SAFETY: the caller vouches for both ranges.
        self.call("cuMemcpyDtoDAsync", || unsafe {
            result::memcpy_dtod_async(dst.0, src.0, bytes, s.cu_stream())
        })
    }

    unsafe fn launch(&self, stream: StreamId, l: &BlockLaunch) -> DriverResult<()> {
        let s = self.stream(stream, "cuLaunchKernel")?;
        let mut args = l.kernel_args();
        let mut params = param_addresses(&mut args);
        let func = self.function(&l.variant)?;
        // SAFETY: the argument list is rp_reproject_block's (`BlockLaunch::kernel_args`, held
        // to the kernel's signature by tests/gpu_kernel_args.rs); the caller vouches for the
        // pointers.
        self.call("cuLaunchKernel", || unsafe {
            result::launch_kernel(
                func,
                (l.grid.0, l.grid.1, 1),
                (l.threads.0, l.threads.1, 1),
                0,
                s.cu_stream(),
                &mut params,
            )
        })
    }

    fn load_variant(&self, variant: &KernelDefines) -> DriverResult<()> {
        self.function(variant).map(|_| ())
    }

    fn variant_ready(&self, variant: &KernelDefines) -> bool {
        if variant.is_general() {
            return true;
        }
        if let Some(build) = self
            .variants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(variant)
        {
            return build.is_ok();
        }
        // Launches ask on every block: while the variant compiles, no look at the disk (its
        // key hashes the whole kernel source).
        !self
            .preparing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(variant)
            && super::runtime::is_cached(&self.info.arch, self.info.nvrtc_version, variant)
    }

    fn prepare_variant(&self, variant: &KernelDefines) {
        if variant.is_general()
            || self
                .variants
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(variant)
            || !self
                .preparing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(variant.clone())
        {
            return;
        }
        let (ctx, arch, nvrtc, key) = (
            self.ctx.clone(),
            self.info.arch.clone(),
            self.info.nvrtc_version,
            variant.clone(),
        );
        order_exit_before_queued_compilation(&arch, || {
            super::runtime::is_cached(&arch, nvrtc, variant)
        });
        let (variants, preparing, done) = (
            self.variants.clone(),
            self.preparing.clone(),
            variant.clone(),
        );
        let spawned = spawn_compilation(
            move || build_variant(&ctx, &arch, nvrtc, &key),
            move |build| {
                if let Some(build) = build {
                    variants
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(done.clone())
                        .or_insert(build);
                }
                preparing
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&done);
            },
        );
        if !spawned {
            // No thread to compile on: a later plan compiles it when it loads it.
            self.preparing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(variant);
        }
    }

    unsafe fn launch_accumulate(&self, stream: StreamId, l: &AccumulateLaunch) -> DriverResult<()> {
        let s = self.stream(stream, "cuLaunchKernel")?;
        let mut args = l.kernel_args();
        let mut params = param_addresses(&mut args);
        // SAFETY: the argument list is rp_accumulate's (`AccumulateLaunch::kernel_args`, held
        // to the kernel's signature by tests/gpu_kernel_args.rs); the caller vouches for the
        // pointers.
        self.call("cuLaunchKernel", || unsafe {
            result::launch_kernel(
                self.kernels.accumulate.cu_function(),
                (l.grid.0, l.grid.1, 1),
                (l.threads.0, l.threads.1, 1),
                0,
                s.cu_stream(),
                &mut params,
            )
        })
    }

    unsafe fn launch_spline(&self, stream: StreamId, l: &SplineLaunch) -> DriverResult<()> {
        let s = self.stream(stream, "cuLaunchKernel")?;
        let (kernel, mut args) = l.kernel_args()?;
        let func = match kernel {
            SplineKernel::Values => &self.kernels.spline_values,
            SplineKernel::Filter => &self.kernels.spline_filter,
            SplineKernel::FilterFrom => &self.kernels.spline_filter_from,
        };
        // SAFETY: the argument list is `kernel`'s (`SplineLaunch::kernel_args`, held to the
        // kernel's signature by tests/gpu_kernel_args.rs); the caller vouches for the pointers.
        unsafe { self.launch_1d(func, l, &s, &mut param_addresses(&mut args)) }
    }

    fn synchronize(&self, stream: StreamId) -> DriverResult<()> {
        let s = self.stream(stream, "cuStreamSynchronize")?;
        self.call("cuStreamSynchronize", || s.synchronize())
    }
}

//! [`Driver`] for [`SimDriver`]: each CUDA call on the simulated device, queued on its
//! streams or done at once, and checked as the driver would.

use std::collections::VecDeque;

use super::host_kernels::refuse_configuration;
use super::queue::{host_thread, Access, Op, Stream};
use super::state::guard_tail;
use super::SimDriver;
use crate::gpu::driver::{
    AccumulateLaunch, BlockLaunch, DevicePtr, Driver, DriverFault, DriverResult, FaultKind,
    HostBuffer, MemoryAt, SplineLaunch, StreamId,
};
use crate::gpu::pool::{DeviceBlock, KEPT_STREAMS};
use crate::gpu::timeline;
use crate::gpu::variant::KernelDefines;
use crate::gpu::GpuInfo;

impl Driver for SimDriver {
    fn info(&self) -> &GpuInfo {
        &self.info
    }

    fn ordinal(&self) -> usize {
        self.config.ordinal
    }

    fn poisoned(&self) -> Option<String> {
        self.lock().poisoned.clone()
    }

    fn mem_info(&self) -> DriverResult<(usize, usize)> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemGetInfo", None, 0, true)?;
        Ok((
            self.config.memory.saturating_sub(st.used) + self.device.kept_bytes(),
            self.config.memory,
        ))
    }

    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr> {
        let st = &mut *self.lock();
        if let Some(block) = self.device.take(bytes) {
            self.reuse(st, block, bytes);
            return Ok(block.ptr);
        }
        self.begin(st, "cuMemAlloc", None, bytes, true)?;
        let rounded = bytes.max(1).next_multiple_of(256);
        if st.used + rounded > self.config.memory {
            // The kept allocations go first.
            self.release_device(st);
        }
        if st.used + rounded > self.config.memory {
            return Err(DriverFault::new(
                "cuMemAlloc",
                FaultKind::OutOfMemory,
                "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            ));
        }
        let base = st.next_address;
        st.next_address += rounded as u64 + 256;
        // Record only: no memory behind the allocation.
        let words = if self.config.record_only {
            Vec::new()
        } else {
            vec![0xdead_beef_dead_beef; rounded / 8]
        };
        guard_tail(&words, bytes);
        st.allocations.insert(base, (words, bytes));
        st.capacities.insert(base, rounded);
        st.used += rounded;
        st.stats.device_allocations += 1;
        self.count_device(st);
        Ok(DevicePtr(base))
    }

    fn free(&self, ptr: DevicePtr) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuMemFree", None, 0, false);
        if let Some((_, size)) = st.allocations.get(&ptr.0) {
            let access = Access {
                device: true,
                start: ptr.0,
                len: *size as u64,
                write: true,
            };
            if Self::pending_touches(st, access) {
                st.hazards.push(format!(
                    "cuMemFree of {:#x} while work on it is pending",
                    ptr.0
                ));
            }
            st.allocations.remove(&ptr.0);
            let capacity = st.capacities.get(&ptr.0).copied().unwrap_or(0);
            // Out of the allocations while kept: a kernel that still used it would fault.
            for freed in self.device.give(DeviceBlock { ptr, capacity }) {
                st.capacities.remove(&freed.ptr.0);
                st.used -= freed.capacity;
            }
            self.count_device(st);
        }
    }

    fn memory_at(&self, ptr: DevicePtr) -> DriverResult<MemoryAt> {
        let st = &mut *self.lock();
        self.begin(st, "cuPointerGetAttributes", None, 0, true)?;
        // The simulated kernels address only this device's allocations (not host memory,
        // not another simulated device's): the rest is memory the driver does not know.
        Ok(match st.allocations.range(..=ptr.0).next_back() {
            Some((&start, &(_, bytes))) if ptr.0 < start + bytes as u64 => MemoryAt::Device {
                ordinal: Some(self.config.ordinal),
                allocation: Some((DevicePtr(start), bytes)),
            },
            _ => MemoryAt::Unknown,
        })
    }

    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer> {
        if let Some(kept) = self.pinned.take(bytes) {
            return Ok(kept);
        }
        let st = &mut *self.lock();
        self.begin(st, "cuMemHostAlloc", None, bytes, true)?;
        let words = vec![0u64; bytes.div_ceil(8).max(1)].into_boxed_slice();
        let ptr = Box::into_raw(words) as *mut u8;
        st.host.insert(ptr as usize, bytes.div_ceil(8).max(1));
        st.stats.host_allocations += 1;
        // SAFETY: a fresh allocation of at least `bytes`, freed only by free_host.
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes) })
    }

    fn free_host(&self, buffer: HostBuffer) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuMemFreeHost", None, 0, false);
        if Self::given_up_under_a_copy(st, "cuMemFreeHost", &buffer, buffer.capacity()) {
            // Leaked rather than freed under a pending copy.
            return;
        }
        for freed in self.pinned.give(buffer) {
            Self::release(st, freed);
        }
    }

    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemHostRegister", None, len, true)?;
        // SAFETY: the caller keeps `len` bytes at `ptr` valid until unregister_host.
        Ok(unsafe { HostBuffer::from_raw(ptr, len) })
    }

    fn unregister_host(&self, buffer: HostBuffer) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuMemHostUnregister", None, 0, false);
        Self::given_up_under_a_copy(st, "cuMemHostUnregister", &buffer, buffer.len());
    }

    fn create_stream(&self) -> DriverResult<StreamId> {
        let st = &mut *self.lock();
        if let Some(id) = st.idle_streams.pop() {
            return Ok(StreamId(id));
        }
        self.begin(st, "cuStreamCreate", None, 0, true)?;
        st.stats.streams_created += 1;
        let id = st.next_stream;
        st.next_stream += 1;
        st.streams.insert(
            id,
            Stream {
                queue: VecDeque::new(),
                failure: None,
            },
        );
        Ok(StreamId(id))
    }

    fn destroy_stream(&self, stream: StreamId) {
        let st = &mut *self.lock();
        let _ = self.begin(st, "cuStreamDestroy", Some(stream), 0, false);
        // The driver finishes a destroyed stream's work before releasing it.
        while st
            .streams
            .get(&stream.0)
            .is_some_and(|s| !s.queue.is_empty())
        {
            self.complete_one(st, stream.0);
        }
        let clean = st
            .streams
            .get(&stream.0)
            .is_some_and(|s| s.failure.is_none());
        if clean && st.idle_streams.len() < KEPT_STREAMS && !st.idle_streams.contains(&stream.0) {
            st.idle_streams.push(stream.0);
        } else {
            st.streams.remove(&stream.0);
        }
    }

    fn release_kept(&self) {
        let st = &mut *self.lock();
        for buffer in self.pinned.drain() {
            Self::release(st, buffer);
        }
        self.release_device(st);
        for id in std::mem::take(&mut st.idle_streams) {
            st.streams.remove(&id);
        }
    }

    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyHtoD", None, src.len(), true)?;
        let access = Access {
            device: true,
            start: dst.0,
            len: src.len() as u64,
            write: true,
        };
        if Self::pending_touches(st, access) {
            let hazard = format!("a synchronous upload to {:#x} overlaps pending work", dst.0);
            st.hazards.push(hazard.clone());
            return Err(DriverFault::new("cuMemcpyHtoD", FaultKind::Other, hazard));
        }
        let dst_range = dst.0..dst.0 + src.len() as u64;
        let (up, thread) = (src.len() as u64, host_thread());
        st.timeline.push(timeline::Op::copy(
            timeline::Kind::Upload,
            0,
            thread,
            up,
            dst_range,
        ));
        st.timeline.push(timeline::Op::sync(0, thread));
        if self.config.record_only {
            if !Self::fits(st, dst.0, src.len()) {
                return Err(DriverFault::new(
                    "cuMemcpyHtoD",
                    FaultKind::Other,
                    "CUDA_ERROR_INVALID_VALUE: destination outside an allocation",
                ));
            }
            st.stats.uploaded += src.len() as u64;
            return Ok(());
        }
        let d = Self::resolve(st, dst.0, src.len()).ok_or_else(|| {
            DriverFault::new(
                "cuMemcpyHtoD",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_VALUE: destination outside an allocation",
            )
        })?;
        // SAFETY: resolved inside an allocation of at least src.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), d, src.len()) };
        st.stats.uploaded += src.len() as u64;
        Ok(())
    }

    unsafe fn upload(
        &self,
        stream: StreamId,
        src: &HostBuffer,
        src_offset: usize,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyHtoDAsync", Some(stream), bytes, true)?;
        if src_offset + bytes > src.len() {
            return Err(DriverFault::new(
                "cuMemcpyHtoDAsync",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_VALUE: source range outside the host buffer",
            ));
        }
        let op = Op::Upload {
            src: src.as_ptr() as usize + src_offset,
            dst: dst.0,
            bytes,
        };
        self.enqueue(st, stream, op)
    }

    unsafe fn download(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: &HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyDtoHAsync", Some(stream), bytes, true)?;
        if dst_offset + bytes > dst.len() {
            return Err(DriverFault::new(
                "cuMemcpyDtoHAsync",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_VALUE: destination range outside the host buffer",
            ));
        }
        let op = Op::Download {
            src: src.0,
            dst: dst.as_ptr() as usize + dst_offset,
            bytes,
        };
        self.enqueue(st, stream, op)
    }

    unsafe fn copy_device(
        &self,
        stream: StreamId,
        src: DevicePtr,
        dst: DevicePtr,
        bytes: usize,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuMemcpyDtoDAsync", Some(stream), bytes, true)?;
        self.enqueue(
            st,
            stream,
            Op::Copy {
                src: src.0,
                dst: dst.0,
                bytes,
            },
        )
    }

    unsafe fn launch(&self, stream: StreamId, launch: &BlockLaunch) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuLaunchKernel", Some(stream), 0, true)?;
        refuse_configuration(launch.invalid_configuration())?;
        if Self::has_kernels() && !crate::gpu::sim_variants::has(&launch.variant) {
            return Err(Self::no_variant("cuLaunchKernel", &launch.variant));
        }
        self.enqueue(st, stream, Op::Launch(Box::new(launch.clone())))?;
        st.launched.push(launch.variant.clone());
        Ok(())
    }

    fn load_variant(&self, variant: &KernelDefines) -> DriverResult<()> {
        if Self::has_kernels() && !crate::gpu::sim_variants::has(variant) {
            return Err(Self::no_variant("cuModuleLoadData", variant));
        }
        let st = &mut *self.lock();
        if !variant.is_general() && st.loaded.insert(variant.clone()) {
            st.stats.compilations += 1;
        }
        Ok(())
    }

    fn variant_ready(&self, variant: &KernelDefines) -> bool {
        !self.config.uncached_variants
            || variant.is_general()
            || self.lock().loaded.contains(variant)
    }

    fn prepare_variant(&self, variant: &KernelDefines) {
        let st = &mut *self.lock();
        if !variant.is_general() && !st.loaded.contains(variant) {
            st.preparing.insert(variant.clone());
        }
    }

    unsafe fn launch_accumulate(
        &self,
        stream: StreamId,
        launch: &AccumulateLaunch,
    ) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuLaunchKernel", Some(stream), 0, true)?;
        refuse_configuration(launch.invalid_configuration())?;
        self.enqueue(st, stream, Op::Accumulate(Box::new(launch.clone())))
    }

    unsafe fn launch_spline(&self, stream: StreamId, launch: &SplineLaunch) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuLaunchKernel", Some(stream), 0, true)?;
        refuse_configuration(launch.invalid_configuration())?;
        self.enqueue(st, stream, Op::Spline(Box::new(launch.clone())))
    }

    fn synchronize(&self, stream: StreamId) -> DriverResult<()> {
        let st = &mut *self.lock();
        self.begin(st, "cuStreamSynchronize", Some(stream), 0, true)?;
        st.timeline
            .push(timeline::Op::sync(stream.0, host_thread()));
        while st
            .streams
            .get(&stream.0)
            .is_some_and(|s| !s.queue.is_empty())
        {
            self.complete_one(st, stream.0);
        }
        match st.streams.get_mut(&stream.0) {
            None => Err(DriverFault::new(
                "cuStreamSynchronize",
                FaultKind::Other,
                "CUDA_ERROR_INVALID_HANDLE: no such stream",
            )),
            Some(s) => match s.failure.take() {
                Some(mut fault) => {
                    fault.call = "cuStreamSynchronize";
                    Err(fault)
                }
                None => Ok(()),
            },
        }
    }
}

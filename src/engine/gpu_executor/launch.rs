//! One block on one device: its slot (a stream and buffers), the input window it uploads when
//! the planes are not resident, its launches, and its values back to the host.

use std::sync::Arc;

use super::feed::resident_rows;
use super::input::{input_of, Input};
use super::owned::{DeviceAlloc, HostAlloc};
use super::resident::{KernelInput, Resident};
use super::staging::upload_rows;
use super::store::{fill_empty, store};
use super::{CudaExecutor, Device, Failure};
use crate::engine::blocks::Block;
use crate::engine::executor::BlockOut;
use crate::engine::gpu_times::Step;
use crate::engine::Plan;
use crate::gpu::driver::{DevicePtr, Driver, DriverFault, FaultKind, StreamId};

/// Largest staging buffer for uploads (bytes).
const CHUNK: usize = 64 << 20;

/// One thread's stream and buffers.
pub(super) struct Slot {
    stream: StreamId,
    driver: Arc<dyn Driver>,
    /// Device block outputs (values, footprint), `block_bytes` each.
    out: DeviceAlloc,
    footprint: DeviceAlloc,
    /// The values' host copy (the footprint is derived from them).
    h_out: HostAlloc,
    /// Window mode's buffers.
    windows: WindowBuffers,
}

/// The buffers of window mode (input planes not resident): the page-locked staging buffer and
/// the device window, grown as needed and reused by the blocks of one stream.
#[derive(Default)]
pub(crate) struct WindowBuffers {
    staging: Option<HostAlloc>,
    window: Option<DeviceAlloc>,
    /// Output positions of the block (to find its window).
    xs: Vec<f64>,
    ys: Vec<f64>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Nothing may be in flight when the buffers go.
        let _ = self.driver.synchronize(self.stream);
        self.driver.destroy_stream(self.stream);
    }
}

impl CudaExecutor {
    /// A slot for blocks of up to `block_bytes` per output (reused, or made).
    fn take_slot(
        &self,
        device: &Device,
        block_bytes: usize,
    ) -> std::result::Result<Slot, DriverFault> {
        let reused = {
            let mut slots = device.slots.lock().unwrap_or_else(|e| e.into_inner());
            let at = slots.iter().position(|s| s.out.len >= block_bytes);
            at.map(|i| slots.swap_remove(i))
        };
        if let Some(slot) = reused {
            return Ok(slot);
        }
        self.times.slot_made();
        let driver = &device.driver;
        let stream = driver.create_stream()?;
        let made = (|| {
            Ok::<_, DriverFault>((
                DeviceAlloc::new(driver, block_bytes)?,
                DeviceAlloc::new(driver, block_bytes)?,
                HostAlloc::new(driver, block_bytes)?,
            ))
        })();
        match made {
            Ok((out, footprint, h_out)) => Ok(Slot {
                stream,
                driver: driver.clone(),
                out,
                footprint,
                h_out,
                windows: WindowBuffers::default(),
            }),
            Err(f) => {
                driver.destroy_stream(stream);
                Err(f)
            }
        }
    }

    /// Computes `block` on `device` into `out`.
    pub(super) fn run_block(
        &self,
        device: &Device,
        plan: &Plan,
        block: &Block,
        out: &mut BlockOut<'_>,
    ) -> std::result::Result<(), Failure> {
        let resident = self.resident(device, plan)?;
        // Results rounded to float32 (reproject's rule for float32 inputs) cross the bus as
        // float32 whatever the output type: the same values in half the bytes.
        let out_f64 = matches!(out, BlockOut::F64(..)) && !plan.rounding.rounds_results();
        let elem = if out_f64 { 8 } else { 4 };
        let (by, bx) = plan.block_shape();
        let block_bytes = (by * bx).max(block.len()).max(1) * elem;
        let mut slot = self
            .times
            .time(Step::Slots, || self.take_slot(device, block_bytes))?;
        let r = self.run_block_in(&mut slot, resident, plan, block, out, out_f64);
        if r.is_ok() {
            // Only a slot that finished cleanly is reused.
            device
                .slots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(slot);
        }
        r
    }

    fn run_block_in(
        &self,
        slot: &mut Slot,
        resident: &Resident,
        plan: &Plan,
        block: &Block,
        out: &mut BlockOut<'_>,
        wire_f64: bool,
    ) -> std::result::Result<(), Failure> {
        let driver = slot.driver.clone();
        let stream = slot.stream;
        let blk_nx = block.cols.len();
        for plane in 0..plan.planes {
            let outputs = (slot.out.ptr, slot.footprint.ptr);
            let target = (&driver, stream, &mut slot.windows);
            let t = std::time::Instant::now();
            let launched =
                self.launch_plane(target, resident, plan, block, plane, outputs, wire_f64);
            self.times.add(Step::Launches, t);
            if !launched? {
                // No output pixel maps into the input: NaN, as on the CPU.
                fill_empty(out, plane);
                continue;
            }
            let bytes = block.len() * if wire_f64 { 8 } else { 4 };
            // Only the values come back: the footprint is derived from them on the host.
            // SAFETY: the outputs hold block_bytes >= blk_ny * blk_nx elements; the host copy
            // is read only after the synchronize.
            let t = std::time::Instant::now();
            unsafe { driver.download(stream, slot.out.ptr, slot.h_out.buffer(), 0, bytes)? };
            driver.synchronize(stream)?;
            self.times.add(Step::GpuWaits, t);
            // SAFETY: synchronized: no copy into the host buffer is pending.
            let values = unsafe { slot.h_out.buffer().as_slice() };
            let t = std::time::Instant::now();
            match out {
                BlockOut::F64(d, f) => store(values, wire_f64, d, f, plane, blk_nx),
                BlockOut::F32(d, f) => store(values, wire_f64, d, f, plane, blk_nx),
            }
            self.times.add(Step::Stores, t);
        }
        self.times.block_done();
        Ok(())
    }

    /// Queues on `stream` of `driver` (one of [`CudaExecutor::drivers`]) the computation of
    /// every plane of `block` into float64 device outputs (`values`, `footprint`: planes ×
    /// rows × columns, C order), uploading input windows through `windows` as needed. Nothing
    /// is downloaded: the outputs stay on the device for the caller's next launches on the
    /// same stream. `Ok(false)`: no output pixel of the block maps into the input, nothing
    /// was queued and the outputs were not written.
    pub(crate) fn sample_on_device(
        &self,
        (driver, stream, windows): (&Arc<dyn Driver>, StreamId, &mut WindowBuffers),
        plan: &Plan,
        block: &Block,
        (values, footprint): (DevicePtr, DevicePtr),
    ) -> std::result::Result<bool, Failure> {
        let Some(device) = self.devices.iter().find(|d| Arc::ptr_eq(&d.driver, driver)) else {
            return Err(Failure::Driver(DriverFault::new(
                "(mosaic)",
                FaultKind::Other,
                "the driver is not one of the executor's",
            )));
        };
        let resident = self.resident(device, plan)?;
        let plane_bytes = block.len() * 8;
        for plane in 0..plan.planes {
            let outputs = (
                values.offset(plane * plane_bytes),
                footprint.offset(plane * plane_bytes),
            );
            let target = (driver, stream, &mut *windows);
            if !self.launch_plane(target, resident, plan, block, plane, outputs, true)? {
                // The positions do not depend on the plane: no plane maps into the input.
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Queues on `stream` the launches computing `block` of `plane` into compact device outputs
    /// (`outputs`: values, footprint; float64 when `out_f64`, else float32), after uploading the
    /// input window through `windows` when the planes are not resident. `Ok(false)`: no output
    /// pixel of the block maps into the input (window mode; nothing queued).
    #[allow(clippy::too_many_arguments)]
    fn launch_plane(
        &self,
        (driver, stream, windows): (&Arc<dyn Driver>, StreamId, &mut WindowBuffers),
        resident: &Resident,
        plan: &Plan,
        block: &Block,
        plane: usize,
        outputs: (DevicePtr, DevicePtr),
        out_f64: bool,
    ) -> std::result::Result<bool, Failure> {
        let in_nx = plan.plane_shape_in.1;
        let input = input_of(plan, plane, &resident.decoding);
        let (input_ptr, window, pitch) = match &resident.planes {
            Some(planes) => {
                // Only the rows the block reads, once they are on the device.
                let rows = resident_rows(plan, block);
                if let Some(feed) = &resident.feed {
                    self.times
                        .time(Step::RowWaits, || feed.wait_for(rows.end))?;
                }
                let ptr = planes[plane].ptr.offset(rows.start * in_nx * input.elem());
                (ptr, (rows.start, 0, rows.len(), in_nx), in_nx)
            }
            None => {
                windows.xs.resize(block.len(), 0.0);
                windows.ys.resize(block.len(), 0.0);
                let Some(b) = plan
                    .coords
                    .block_coords(block, &mut windows.xs, &mut windows.ys)
                else {
                    return Ok(false);
                };
                let w = plan.window_for(b);
                // The device prefilter needs whole planes: orders >= 2 sample the CPU's
                // coefficients here.
                let input = match input {
                    Input::Values if plan.options.order.needs_prefilter() => Input::Coefficients,
                    other => other,
                };
                let bytes = (w.rows.len() * w.cols.len() * input.elem()).max(8);
                if windows.window.as_ref().is_none_or(|d| d.len < bytes) {
                    // Launches queued earlier may still read the old window.
                    driver.synchronize(stream)?;
                    windows.window = None;
                    windows.window = Some(DeviceAlloc::new(driver, bytes)?);
                }
                let staging_bytes = bytes.min(CHUNK).max(w.cols.len() * input.elem());
                if windows
                    .staging
                    .as_ref()
                    .is_none_or(|s| s.buffer().len() < staging_bytes)
                {
                    windows.staging = None;
                    windows.staging = Some(HostAlloc::new(driver, staging_bytes)?);
                }
                let (Some(staging), Some(dst)) =
                    (windows.staging.as_mut(), windows.window.as_ref())
                else {
                    unreachable!("allocated above");
                };
                let mut lanes = [(stream, staging)];
                upload_rows(
                    driver,
                    &mut lanes,
                    plan,
                    plane,
                    input,
                    w.rows.clone(),
                    w.cols.clone(),
                    dst.ptr,
                )?;
                let window = (w.rows.start, w.cols.start, w.rows.len(), w.cols.len());
                (dst.ptr, window, w.cols.len())
            }
        };
        let (input_type, big_endian) = input.kernel_type();
        let source = KernelInput {
            ptr: input_ptr,
            input_type,
            big_endian,
            pitch,
            window,
        };
        let launches = resident.launches(driver, plan, block, &source, outputs, out_f64)?;
        // SAFETY: the input holds the window (pitch elements per row); the caller's outputs hold
        // the block's elements.
        unsafe {
            for launch in &launches {
                driver.launch(stream, launch)?;
            }
        }
        Ok(true)
    }
}

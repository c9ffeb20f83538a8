//! Mosaic blocks combined on the GPU: when every input is sampled by the CUDA executor, a
//! block's samples stay on the device and are added into device accumulators there; only the
//! block's sums come back.
//!
//! ```text
//! per output block (each thread its own stream and buffers, blocks round the devices):
//!     rp_accumulate (fill) ─▶ accumulators (data, footprint: float64, on the device)
//!     per input covering the block, in order:
//!         [window ─▶ device] rp_reproject_block ─▶ samples   [weights: likewise]
//!         rp_accumulate ─▶ accumulators     (the CPU's operations, so the CPU's bits)
//!     accumulators ─download─▶ host: means divided, blank where no input has weight
//! ```
//! The mean, sum, first, last, min and max combine this way; the median and the clipped mean
//! need every input's value of a pixel at once and combine on the host, as do inputs whose
//! samples background matching has already brought to the host. A GPU failure sends that
//! block and every later one to the host path (with one warning); the result is the same.

use std::sync::{Arc, Mutex, OnceLock};

use ndarray::ArrayViewMut3;

use super::coadd::{
    finish, initial_value, Combine, Correction, CorrectionForm, MosaicOptions, Prepared,
};
use crate::engine::blocks::Block;
use crate::engine::gpu_executor::{
    grid_dim, kernel_i32 as int, DeviceAlloc, Failure, HostAlloc, WindowBuffers,
};
use crate::engine::CudaExecutor;
use crate::error::Result;
use crate::gpu::driver::{
    AccumulateLaunch, AccumulateOp, DevicePtr, Driver, DriverFault, FaultKind, StreamId,
};

/// Threads per CUDA block of the accumulate kernel (x, y).
const THREADS: (u32, u32) = (32, 8);

/// The accumulate kernel's operation for a combine mode, when it has one.
fn accumulate_op(combine: Combine) -> Option<AccumulateOp> {
    Some(match combine {
        Combine::Mean => AccumulateOp::Mean,
        Combine::Sum => AccumulateOp::Sum,
        Combine::First => AccumulateOp::First,
        Combine::Last => AccumulateOp::Last,
        Combine::Min => AccumulateOp::Min,
        Combine::Max => AccumulateOp::Max,
        Combine::Median | Combine::Clipped { .. } => return None,
    })
}

/// A correction as the kernel takes it (kind, constants), in the form the host path uses.
fn correction_args(c: Correction) -> (i32, (f64, f64, f64)) {
    match c.form() {
        CorrectionForm::None => (0, (0.0, 0.0, 0.0)),
        CorrectionForm::Constant(k) => (1, (k, 0.0, 0.0)),
        CorrectionForm::Plane => (2, (c.offset, c.slope_x, c.slope_y)),
    }
}

/// One thread's stream and buffers, for blocks of up to `bytes` per plane-stack.
struct Slot {
    driver: Arc<dyn Driver>,
    stream: StreamId,
    bytes: usize,
    /// The accumulators.
    data: DeviceAlloc,
    footprint: DeviceAlloc,
    /// One input's samples over a part of the block (values and footprint; weights and
    /// theirs).
    values: DeviceAlloc,
    values_footprint: DeviceAlloc,
    weights: DeviceAlloc,
    weights_footprint: DeviceAlloc,
    /// The accumulators' host copies.
    h_data: HostAlloc,
    h_footprint: HostAlloc,
    windows: WindowBuffers,
}

impl Slot {
    fn new(driver: &Arc<dyn Driver>, bytes: usize) -> std::result::Result<Slot, DriverFault> {
        let stream = driver.create_stream()?;
        let made = (|| {
            let device = || DeviceAlloc::new(driver, bytes);
            Ok::<_, DriverFault>((
                [
                    device()?,
                    device()?,
                    device()?,
                    device()?,
                    device()?,
                    device()?,
                ],
                HostAlloc::new(driver, bytes)?,
                HostAlloc::new(driver, bytes)?,
            ))
        })();
        match made {
            Ok((
                [data, footprint, values, values_footprint, weights, weights_footprint],
                h_data,
                h_footprint,
            )) => Ok(Slot {
                driver: driver.clone(),
                stream,
                bytes,
                data,
                footprint,
                values,
                values_footprint,
                weights,
                weights_footprint,
                h_data,
                h_footprint,
                windows: WindowBuffers::default(),
            }),
            Err(f) => {
                driver.destroy_stream(stream);
                Err(f)
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Nothing may be in flight when the buffers go.
        let _ = self.driver.synchronize(self.stream);
        self.driver.destroy_stream(self.stream);
    }
}

/// Combines a mosaic's blocks on the GPUs its inputs are sampled on (see the module
/// documentation).
pub(super) struct DeviceCombiner {
    combine: Combine,
    op: AccumulateOp,
    drivers: Vec<Arc<dyn Driver>>,
    slots: Mutex<Vec<Slot>>,
    /// Set once a GPU failed: the reason; every later block combines on the host.
    failed: OnceLock<String>,
}

/// The CUDA executor of a plan, when the plan computes on one that has not failed.
fn cuda<'p>(plan: &'p crate::engine::Plan<'_>) -> Option<&'p CudaExecutor> {
    let executor = plan.executor().ok()?;
    executor.failure().is_none().then_some(())?;
    executor.as_cuda()
}

impl DeviceCombiner {
    /// A combiner for `prepared` under `combine`, when the blocks can combine on the device:
    /// a combine mode the accumulate kernel has, and every input (and its weights) sampled
    /// by a working CUDA executor on the same devices, none of them cached on the host.
    pub(super) fn new(prepared: &[(usize, Prepared)], combine: Combine) -> Option<DeviceCombiner> {
        let op = accumulate_op(combine)?;
        let mut drivers: Option<Vec<Arc<dyn Driver>>> = None;
        for (_, input) in prepared {
            if input.cache.is_some() {
                return None;
            }
            for plan in std::iter::once(&input.plan).chain(&input.weights) {
                let mine = cuda(plan)?.drivers();
                match &drivers {
                    None => drivers = Some(mine),
                    Some(d) => {
                        let same = d.len() == mine.len()
                            && d.iter().zip(&mine).all(|(a, b)| Arc::ptr_eq(a, b));
                        if !same {
                            return None;
                        }
                    }
                }
            }
        }
        Some(DeviceCombiner {
            combine,
            op,
            drivers: drivers?,
            slots: Mutex::new(Vec::new()),
            failed: OnceLock::new(),
        })
    }

    /// Combines `block` (the `index`-th of the run, which picks its device) into `data` and
    /// `footprint` (planes × block rows × block columns) on the device. `Ok(false)`: the GPU
    /// failed (now or before) and nothing was written; combine the block on the host.
    ///
    /// Errors: what reading an input fails with, as on the host.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn combine_block(
        &self,
        prepared: &[(usize, Prepared)],
        corrections: &[Correction],
        block: &Block,
        index: usize,
        data: ArrayViewMut3<f64>,
        footprint: ArrayViewMut3<f64>,
        options: &MosaicOptions,
    ) -> Result<bool> {
        if self.failed.get().is_some() {
            return Ok(false);
        }
        let driver = &self.drivers[index % self.drivers.len()];
        let bytes = (data.len() * 8).max(8);
        let run = self
            .take_slot(driver, bytes)
            .map_err(Failure::Driver)
            .and_then(|mut slot| {
                self.accumulate(&mut slot, prepared, corrections, block, data.shape()[0])?;
                Ok(slot)
            });
        match run {
            Ok(slot) => {
                self.unload(&slot, data, footprint, options);
                self.slots
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(slot);
                Ok(true)
            }
            Err(Failure::Engine(e)) => Err(e),
            Err(Failure::Driver(fault)) => {
                let why = format!(
                    "GPU {} failed combining the mosaic block of rows {:?}, columns {:?} ({fault})",
                    driver.ordinal(),
                    block.rows,
                    block.cols
                );
                if self.failed.set(why.clone()).is_ok() {
                    eprintln!(
                        "reproject: warning: {why}; combining the remaining blocks on the host"
                    );
                }
                Ok(false)
            }
        }
    }

    /// A slot of `driver` for blocks of up to `bytes` (reused, or made).
    fn take_slot(
        &self,
        driver: &Arc<dyn Driver>,
        bytes: usize,
    ) -> std::result::Result<Slot, DriverFault> {
        let reused = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let at = slots
                .iter()
                .position(|s| Arc::ptr_eq(&s.driver, driver) && s.bytes >= bytes);
            at.map(|i| slots.swap_remove(i))
        };
        match reused {
            Some(slot) => Ok(slot),
            None => Slot::new(driver, bytes),
        }
    }

    /// Queues the block's accumulation on the slot's stream and waits for its sums in the
    /// slot's host buffers.
    fn accumulate(
        &self,
        slot: &mut Slot,
        prepared: &[(usize, Prepared)],
        corrections: &[Correction],
        block: &Block,
        planes: usize,
    ) -> std::result::Result<(), Failure> {
        let driver = slot.driver.clone();
        let stream = slot.stream;
        let launch = |op, part: &Block, values, weights, correction: Correction| {
            let (kind, constants) = match op {
                AccumulateOp::Fill => (0, (initial_value(self.combine), 0.0, 0.0)),
                _ => correction_args(correction),
            };
            Ok::<_, DriverFault>(AccumulateLaunch {
                grid: (
                    grid_dim(part.cols.len(), THREADS.0)?,
                    grid_dim(part.rows.len(), THREADS.1)?,
                ),
                threads: THREADS,
                values,
                weights,
                op,
                correction: kind,
                constants,
                planes: int(planes)?,
                part: (int(part.rows.len())?, int(part.cols.len())?),
                part_origin: (int(part.rows.start)?, int(part.cols.start)?),
                in_block: (
                    int(part.rows.start - block.rows.start)?,
                    int(part.cols.start - block.cols.start)?,
                ),
                block: (int(block.rows.len())?, int(block.cols.len())?),
                data: slot.data.ptr,
                footprint: slot.footprint.ptr,
            })
        };
        let fill = launch(AccumulateOp::Fill, block, None, None, Correction::default())?;
        // SAFETY: the accumulators hold the block's planes (slot bytes >= planes × block).
        unsafe { driver.launch_accumulate(stream, &fill)? };
        for (k, input) in prepared {
            let Some(part) = input.clip(block) else {
                continue;
            };
            let sample = |plan: &crate::engine::Plan,
                          outputs: (DevicePtr, DevicePtr),
                          windows: &mut WindowBuffers| {
                let Some(executor) = cuda(plan) else {
                    return Err(Failure::Driver(DriverFault::new(
                        "(mosaic)",
                        FaultKind::Other,
                        "an input is no longer sampled on the GPU",
                    )));
                };
                executor.sample_on_device((&driver, stream, windows), plan, &part, outputs)
            };
            let has_values = sample(
                &input.plan,
                (slot.values.ptr, slot.values_footprint.ptr),
                &mut slot.windows,
            )?;
            let has_weights = match &input.weights {
                Some(w) => Some(sample(
                    w,
                    (slot.weights.ptr, slot.weights_footprint.ptr),
                    &mut slot.windows,
                )?),
                None => None,
            };
            // Without samples (of the values, or of the weights) the part adds nothing but
            // zeros, as on the host.
            let values = (has_values && has_weights != Some(false)).then_some(slot.values.ptr);
            let weights = has_weights.map(|_| slot.weights.ptr);
            let add = launch(self.op, &part, values, weights, corrections[*k])?;
            // SAFETY: the samples hold the part's planes (written by the launches queued
            // before on this stream), the accumulators the block's.
            unsafe { driver.launch_accumulate(stream, &add)? };
        }
        let bytes = planes * block.len() * 8;
        // SAFETY: the host buffers hold `bytes`; they are read only after the synchronize.
        unsafe {
            driver.download(stream, slot.data.ptr, slot.h_data.buffer(), 0, bytes)?;
            driver.download(
                stream,
                slot.footprint.ptr,
                slot.h_footprint.buffer(),
                0,
                bytes,
            )?;
        }
        driver.synchronize(stream)?;
        Ok(())
    }

    /// The slot's downloaded sums into the block's views, finished as on the host.
    fn unload(
        &self,
        slot: &Slot,
        mut data: ArrayViewMut3<f64>,
        mut footprint: ArrayViewMut3<f64>,
        options: &MosaicOptions,
    ) {
        // SAFETY: the downloads were synchronized (`accumulate`).
        let (d, f) = unsafe {
            (
                slot.h_data.buffer().as_slice(),
                slot.h_footprint.buffer().as_slice(),
            )
        };
        let value = |bytes: &[u8], i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            f64::from_ne_bytes(b)
        };
        for ((i, o), fp) in data.iter_mut().enumerate().zip(footprint.iter_mut()) {
            *o = value(d, i);
            *fp = value(f, i);
        }
        finish(
            data,
            footprint.view(),
            &[],
            options.combine,
            options.blank_pixel_value,
        );
    }
}

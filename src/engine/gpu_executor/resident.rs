//! What stays on a device for the whole plan (parameters, input planes, spline constants,
//! parsed parameters), and the launches that read it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::feed::Feed;
use super::input::{input_of, sent_of, Input};
use super::owned::{on_stream, DeviceAlloc};
use super::spline::SplinePoles;
use super::{f64_bytes, CudaExecutor, Device, Failure};
use crate::engine::blocks::Block;
use crate::engine::gpu_times::Step;
use crate::engine::kernel_params::InputDecoding;
use crate::engine::kernel_variant::PlanKernel;
use crate::engine::Plan;
use crate::gpu::driver::{BlockLaunch, DevicePtr, Driver, DriverFault, FaultKind, SplineSamples};
use crate::gpu::variant::KernelDefines;

/// Threads per CUDA block (x, y).
const THREADS: (u32, u32) = (32, 8);

/// Bytes of one plane's rows in one band of the resident planes' upload: small enough that the
/// first blocks start early, large enough that a copy amortises its launch (16 MiB: 0.3 ms at
/// 55 GB/s).
const BAND: usize = 16 << 20;

/// The smallest band worth a copy of its own (bytes of one plane's rows).
const MIN_BAND: usize = 1 << 20;

/// Device memory kept free per block thread for its block buffers when deciding whether the
/// input planes fit: two float64 outputs of 2048 × 2048 pixels, room for the GPU's blocks
/// and larger ones a caller asks for.
const WORKING_PER_THREAD: usize = 2 * 2048 * 2048 * 8;

/// What stays on a device for the whole plan.
pub(crate) struct Resident {
    transform: DeviceAlloc,
    sampling: DeviceAlloc,
    /// Every input plane, when they fit (else each block uploads its window).
    pub(super) planes: Option<Vec<DeviceAlloc>>,
    /// The planes' upload, band by band (with the planes).
    pub(super) feed: Option<Feed>,
    /// How the kernels decode the stored samples.
    pub(super) decoding: InputDecoding,
    /// The plan's part of the kernel variant key (the launch's input type is the rest).
    kernel: PlanKernel,
    /// The spline prefilter's constants (orders ≥ 2).
    pub(super) spline: Option<SplinePoles>,
    /// Device-resident jobs of orders ≥ 2: the coefficients made on the device from the
    /// caller's device input, on first use ([`Plan::compute_block_on_device`]).
    device_coefficients: Mutex<Option<Vec<DeviceAlloc>>>,
    /// The kernel parameters parsed once per build of the block kernel (the parsed layout is
    /// the build's), on first use: the launches read them instead of parsing them again in
    /// every thread block.
    parsed: Mutex<HashMap<KernelDefines, DeviceAlloc>>,
}

/// Bytes of device memory for one build's parsed parameters (`RpBlockParams`: 3.6 KB for the
/// general kernel; the kernel refuses to parse into less than it needs, every pixel then NaN).
const PARSED_BYTES: usize = 16 << 10;

/// The input of one launch: where, of what type, and which window of the plane.
pub(super) struct KernelInput {
    pub(super) ptr: DevicePtr,
    pub(super) input_type: i32,
    pub(super) big_endian: i32,
    /// Elements per row.
    pub(super) pitch: usize,
    /// First row, first column, rows, columns of the plane.
    pub(super) window: (usize, usize, usize, usize),
}

/// A size as a kernel's 32-bit argument; beyond, a fault (so the block goes to the CPU).
pub(crate) fn kernel_i32(v: usize) -> std::result::Result<i32, DriverFault> {
    i32::try_from(v).map_err(|_| {
        DriverFault::new(
            "cuLaunchKernel",
            FaultKind::Other,
            format!("{v} exceeds the kernel's 32-bit indices"),
        )
    })
}

/// The thread blocks covering `n` threads `per_block` at a time along one grid dimension.
pub(crate) fn grid_dim(n: usize, per_block: u32) -> std::result::Result<u32, DriverFault> {
    u32::try_from(n.div_ceil(per_block as usize)).map_err(|_| {
        DriverFault::new(
            "cuLaunchKernel",
            FaultKind::Other,
            format!("a grid of {n} threads is too large"),
        )
    })
}

/// The most thread blocks a launch may have along y (CUDA's grid limit).
const MAX_GRID_Y: usize = 65_535;

impl Resident {
    /// Device-resident jobs of orders ≥ 2: the spline coefficients of every input plane, made
    /// on the device from the caller's `input` (of kernel type `input_type`) on the first call
    /// (from its samples, [`SplineSamples`]) and kept; `None` for orders 0 and 1.
    pub(super) fn coefficients_from_device(
        &self,
        driver: &Arc<dyn Driver>,
        plan: &Plan,
        input: &crate::gpu::DeviceImage,
        input_type: i32,
    ) -> std::result::Result<Option<Vec<DevicePtr>>, DriverFault> {
        let Some(spline) = &self.spline else {
            return Ok(None);
        };
        let mut made = self
            .device_coefficients
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if made.is_none() {
            let (ny, nx) = plan.plane_shape_in;
            let elem = crate::io::sample_size(input.sample);
            let planes = (0..plan.planes_in)
                .map(|_| DeviceAlloc::new(driver, (ny * nx * 8).max(8)))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let values = |p: usize| SplineSamples {
                input: DevicePtr(input.ptr).offset(p * ny * input.pitch * elem),
                input_type,
                big_endian: i32::from(input.big_endian),
                pitch: input.pitch as i64,
                values_f32: i32::from(plan.rounding.rounds_values()),
            };
            let ptrs: Vec<DevicePtr> = planes.iter().map(|p| p.ptr).collect();
            let ops: Vec<Option<SplineSamples>> =
                (0..planes.len()).map(|p| Some(values(p))).collect();
            // SAFETY: the caller vouches for the input (compute_block_on_device's contract).
            unsafe { spline.run(driver, &ptrs, &ops)? };
            *made = Some(planes);
        }
        Ok(made
            .as_ref()
            .map(|planes| planes.iter().map(|p| p.ptr).collect()))
    }

    /// The launches computing `block` of one plane from `input` into compact block outputs
    /// (values, footprint) of float64 (`out_f64`) or float32: one, or bands of rows when the
    /// block is taller than one grid may be (each band writing its rows of the outputs).
    ///
    /// A size beyond the kernels' 32-bit indices
    /// ([`kernel_support`](crate::engine::kernel_params::kernel_support) refuses such plans) is a
    /// fault, so the block goes to the CPU.
    pub(super) fn launches(
        &self,
        driver: &Arc<dyn Driver>,
        plan: &Plan,
        block: &Block,
        input: &KernelInput,
        (out, footprint): (DevicePtr, DevicePtr),
        out_f64: bool,
    ) -> std::result::Result<Vec<BlockLaunch>, DriverFault> {
        let int = kernel_i32;
        let (in_ny, in_nx) = plan.plane_shape_in;
        let blk_nx = block.cols.len();
        let w = input.window;
        let elem = if out_f64 { 8 } else { 4 };
        let band = MAX_GRID_Y * THREADS.1 as usize;
        let variant = ready_build(
            driver,
            self.kernel.variant(input.input_type, out_f64).defines(),
        );
        let grid_x = grid_dim(blk_nx, THREADS.0 * variant.pixels_per_thread())?;
        let parsed = self.parsed(driver, &variant)?;
        let mut launches = Vec::new();
        for first in (0..block.rows.len()).step_by(band) {
            let rows = band.min(block.rows.len() - first);
            let offset = first * blk_nx * elem;
            launches.push(BlockLaunch {
                variant: variant.clone(),
                grid: (grid_x, rows.div_ceil(THREADS.1 as usize) as u32),
                threads: THREADS,
                transform: parsed,
                sampling: DevicePtr(0),
                input: input.ptr,
                input_type: input.input_type,
                big_endian: input.big_endian,
                // The kernels' element offsets take the pitch as a 32-bit factor.
                in_pitch: i64::from(int(input.pitch)?),
                window: (int(w.0)?, int(w.1)?, int(w.2)?, int(w.3)?),
                plane: (int(in_ny)?, int(in_nx)?),
                out_origin: (int(block.rows.start + first)?, int(block.cols.start)?),
                block: (int(rows)?, int(blk_nx)?),
                out: out.offset(offset),
                footprint: footprint.offset(offset),
                out_f64: i32::from(out_f64),
                out_pitch: i64::from(int(blk_nx)?),
            });
        }
        Ok(launches)
    }

    /// The parameters parsed by `variant`'s build, on `driver` (made on first use, on a
    /// stream of its own that is waited for, so that every later launch, on any stream,
    /// reads them complete).
    fn parsed(
        &self,
        driver: &Arc<dyn Driver>,
        variant: &KernelDefines,
    ) -> std::result::Result<DevicePtr, DriverFault> {
        let mut parsed = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(made) = parsed.get(variant) {
            return Ok(made.ptr);
        }
        let out = DeviceAlloc::new(driver, PARSED_BYTES)?;
        let launch = BlockLaunch::parse_params(
            variant.clone(),
            self.transform.ptr,
            self.sampling.ptr,
            out.ptr,
            PARSED_BYTES,
        )?;
        // SAFETY: the parameter arrays are the plan's, `out` holds PARSED_BYTES.
        on_stream(driver, |stream| unsafe { driver.launch(stream, &launch) })?;
        let ptr = out.ptr;
        parsed.insert(variant.clone(), out);
        Ok(ptr)
    }
}

impl CudaExecutor {
    pub(super) fn resident<'d>(
        &self,
        device: &'d Device,
        plan: &Plan,
    ) -> std::result::Result<&'d Resident, Failure> {
        let made = device.resident.get_or_init(|| {
            self.times.time(Step::Setup, || {
                self.make_resident(&device.driver, plan, true)
            })
        });
        let resident = made.as_ref().map_err(|f| Failure::Driver(f.clone()))?;
        self.feed(&device.driver, plan, resident);
        Ok(resident)
    }

    /// Uploads the parameters and, when asked and they fit, every input plane.
    pub(super) fn make_resident(
        &self,
        driver: &Arc<dyn Driver>,
        plan: &Plan,
        with_planes: bool,
    ) -> std::result::Result<Resident, DriverFault> {
        let upload = |values: &[f64]| -> std::result::Result<DeviceAlloc, DriverFault> {
            let bytes = f64_bytes(values);
            let d = DeviceAlloc::new(driver, bytes.len())?;
            driver.upload_now(&bytes, d.ptr)?;
            Ok(d)
        };
        let transform = upload(&self.params.transform)?;
        let sampling = upload(&self.params.sampling)?;
        let (ny, nx) = plan.plane_shape_in;
        let sizes: Vec<usize> = (0..plan.planes_in)
            .map(|p| ny * nx * input_of(plan, p, &self.params.decoding).elem())
            .collect();
        // Spline orders' stored samples sit on the device too while their values are made.
        let transient: usize = (0..plan.planes_in)
            .map(|p| match sent_of(plan, p, &self.params.decoding) {
                Input::Raw(raw, _) if plan.options.order.needs_prefilter() => {
                    ny * nx * crate::io::sample_size(raw.sample)
                }
                _ => 0,
            })
            .sum();
        let total: usize = sizes.iter().sum::<usize>() + transient;
        // Block buffers of the threads that may run at once (GPU-sized blocks, float64).
        let working = WORKING_PER_THREAD * rayon::current_num_threads().max(2);
        let (free, _) = driver.mem_info()?;
        let spline = SplinePoles::new(driver, plan)?;
        let planes = if with_planes && total.saturating_add(working) < free / 10 * 9 {
            let allocated: std::result::Result<Vec<_>, _> = sizes
                .iter()
                .map(|&size| DeviceAlloc::new(driver, size.max(8)))
                .collect();
            match allocated {
                Ok(planes) => Some(planes),
                Err(f) if f.kind == FaultKind::OutOfMemory => None,
                Err(f) => return Err(f),
            }
        } else {
            None
        };
        // Bands of the widest plane's rows: BAND bytes at most, a sixteenth of the plane at
        // most (so the first blocks start early) but MIN_BAND bytes at least, and two bands
        // at least (both lanes busy).
        let row_bytes = sizes.iter().max().map_or(8, |s| s / ny.max(1)).max(1);
        let band_rows = (BAND / row_bytes)
            .min(ny.div_ceil(16))
            .max(MIN_BAND / row_bytes)
            .min(ny.div_ceil(2))
            .max(1);
        let feed = planes.as_ref().map(|_| Feed::new(band_rows));
        Ok(Resident {
            transform,
            sampling,
            planes,
            feed,
            decoding: self.params.decoding,
            kernel: self.kernel(),
            spline,
            device_coefficients: Mutex::new(None),
            parsed: Mutex::new(HashMap::new()),
        })
    }
}

/// The build a launch runs: `wanted` when `driver` has it compiled and loads it, else the
/// general kernel (the same values), with `wanted`'s compilation set off in the background
/// so that a job never waits for NVRTC (a few seconds a variant on the H100 machine) and later
/// launches run it once it is ready.
pub(super) fn ready_build(driver: &Arc<dyn Driver>, wanted: KernelDefines) -> KernelDefines {
    if wanted.is_general() {
        return wanted;
    }
    if !driver.variant_ready(&wanted) {
        driver.prepare_variant(&wanted);
        return KernelDefines::general();
    }
    match driver.load_variant(&wanted) {
        Ok(()) => wanted,
        Err(f) => {
            crate::engine::log_once(
                "variant",
                &format!(
                    "GPU {}: the kernel variant {wanted} cannot be loaded ({f}): running the \
                     general kernel",
                    driver.ordinal()
                ),
            );
            KernelDefines::general()
        }
    }
}

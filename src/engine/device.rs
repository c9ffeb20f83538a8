//! The GPU path of [`Plan::compute_into`]: chooses the backend, runs the transfer pipeline
//! (src/gpu has the CUDA runtime), and falls back to the CPU when the GPU cannot do the job.
//!
//! ```text
//! per plane: input plane (or spline coefficients) ─several threads─▶ pinned chunks ─H2D─▶ device
//!            (the whole plane once when it fits; otherwise each block's input window)
//! per block, alternating between two streams:
//!            rp_reproject_block ─▶ D2H into pinned ─▶ (while the other stream runs) output rows
//! ```
//! Out of memory: the blocks shrink (halved down to 64×64), then the CPU takes over with a
//! warning. Any other GPU failure is an [`Error::Gpu`] naming the block (with
//! [`Backend::Cuda`]) or a warning and the CPU (with [`Backend::Auto`]).

use ndarray::ArrayViewMut3;

use super::{OutputSample, Plan};
use crate::error::{Error, Result};
use crate::gpu::Backend;

/// What the GPU did with a job.
pub(super) enum Outcome {
    /// Every block is computed.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Done,
    /// The CPU must compute it (Auto only; the reason has been logged when worth it).
    Cpu,
}

/// Prints `msg` on stderr once per process per key.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn log_once(key: &'static str, msg: &str) {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(key) {
        eprintln!("reproject: {msg}");
    }
}

/// Why the GPU kernels cannot compute this plan into outputs of `T`, if they cannot
/// ([`super::kernel_params::kernel_support`], and the output type).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn unsupported<T: 'static>(plan: &Plan) -> Option<String> {
    use std::any::TypeId;
    if let Err(why) = super::kernel_params::kernel_support(plan) {
        return Some(why);
    }
    if TypeId::of::<T>() != TypeId::of::<f64>() && TypeId::of::<T>() != TypeId::of::<f32>() {
        return Some("the output type is neither float32 nor float64".into());
    }
    None
}

/// Computes the plan on the backend its options ask for, when that is a GPU.
pub(super) fn compute<T: OutputSample>(
    plan: &Plan,
    data: ArrayViewMut3<T>,
    footprint: ArrayViewMut3<T>,
) -> Result<Outcome> {
    let backend = plan.options.backend;
    if backend == Backend::Cpu {
        return Ok(Outcome::Cpu);
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (data, footprint);
        match backend {
            Backend::Cuda => Err(Error::GpuUnavailable(
                "reproject was built without its `cuda` feature".into(),
            )),
            _ => Ok(Outcome::Cpu),
        }
    }
    #[cfg(feature = "cuda")]
    {
        let refuse = |why: String| -> Result<Outcome> {
            if backend == Backend::Cuda {
                Err(Error::GpuUnavailable(why))
            } else {
                log_once("unsupported", &format!("computing on the CPU: {why}"));
                Ok(Outcome::Cpu)
            }
        };
        if let Some(why) = unsupported::<T>(plan) {
            return refuse(why);
        }
        let gpu = match crate::gpu::runtime::gpu() {
            Ok(g) => g,
            Err(e) => {
                if backend == Backend::Cuda {
                    return Err(e);
                }
                // Machines without an NVIDIA driver are the common case: silent there.
                if crate::gpu::runtime::driver_present() {
                    log_once(
                        "nogpu",
                        &format!("no usable GPU, computing on the CPU ({e})"),
                    );
                }
                return Ok(Outcome::Cpu);
            }
        };
        let Some((transform, sampling)) = pipeline::encode(plan) else {
            return refuse("this transform is not covered by the GPU kernels".into());
        };
        if backend == Backend::Auto {
            log_once("using", &format!("computing on the GPU {}", gpu.info));
        }
        match pipeline::run(&gpu, plan, data, footprint, &transform, &sampling) {
            Ok(()) => Ok(Outcome::Done),
            Err(pipeline::Failure::OutOfMemory(block)) => {
                // Never crash on a full GPU: the CPU computes the whole job.
                eprintln!(
                    "reproject: warning: the GPU ran out of memory even with small blocks \
                     (block {block}); computing on the CPU"
                );
                Ok(Outcome::Cpu)
            }
            Err(pipeline::Failure::Error(e)) => {
                if backend == Backend::Cuda {
                    Err(e)
                } else {
                    eprintln!("reproject: warning: {e}; computing on the CPU");
                    Ok(Outcome::Cpu)
                }
            }
        }
    }
}

#[cfg(feature = "cuda")]
pub(super) mod pipeline {
    use std::any::TypeId;
    use std::ops::Range;
    use std::sync::Arc;

    use cudarc::driver::{
        CudaSlice, CudaStream, DriverError, LaunchConfig, PinnedHostSlice, PushKernelArg,
    };
    use ndarray::{ArrayViewMut3, Axis};
    use rayon::prelude::*;

    use super::super::{blocks::blocks, Block, OutputSample, Plan};
    use crate::error::Error;
    use crate::gpu::runtime::{guard, is_oom, Gpu};
    use crate::io::{RawPlane, SampleType};

    /// How a GPU run ended early.
    pub(crate) enum Failure {
        /// Out of device memory even with the smallest blocks (the block named).
        OutOfMemory(String),
        /// Anything else, as an [`Error::Gpu`] naming the block.
        Error(Error),
    }

    impl Failure {
        /// As an error value (out of memory included).
        pub(crate) fn into_error(self) -> Error {
            match self {
                Failure::OutOfMemory(block) => Error::Gpu {
                    block,
                    message: "out of GPU memory".into(),
                },
                Failure::Error(e) => e,
            }
        }
    }

    /// Smallest block edge tried after out-of-memory errors.
    const MIN_BLOCK: usize = 64;
    /// Host → device staging chunk (bytes), two of them in flight.
    const CHUNK: usize = 64 << 20;
    /// Threads per CUDA block (x, y).
    const THREADS: (u32, u32) = (32, 8);

    /// The flat parameter arrays of the kernels for this plan (None: not covered).
    pub(crate) fn encode(plan: &Plan) -> Option<(Vec<f64>, Vec<f64>)> {
        use crate::engine::kernel_params::{encode_sampling, encode_transform, InputDecoding};
        let transform = encode_transform(plan)?;
        // Inputs reach the kernel decoded: plain raw samples (no scaling, no blank: see
        // `RawPlane`) or values already read and rounded as the CPU path reads them.
        let sampling = encode_sampling(plan, &InputDecoding::default());
        Some((transform, sampling))
    }

    /// The kernel's `input_type` code of a sample type it reads directly.
    pub(crate) fn input_type(sample: SampleType) -> Option<i32> {
        match sample {
            SampleType::F32 => Some(0),
            SampleType::F64 => Some(1),
            SampleType::U8 => Some(2),
            SampleType::I16 => Some(3),
            SampleType::I32 => Some(4),
            SampleType::I64 => Some(5),
            _ => None,
        }
    }

    fn describe(block: &Block, plane: usize) -> String {
        format!(
            "rows {:?}, columns {:?} of plane {plane}",
            block.rows, block.cols
        )
    }

    /// A driver result in this block's terms.
    fn at<R>(
        r: std::result::Result<std::result::Result<R, DriverError>, String>,
        block: &str,
    ) -> std::result::Result<R, Failure> {
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) if is_oom(&e) => Err(Failure::OutOfMemory(block.to_string())),
            Ok(Err(e)) => Err(Failure::Error(Error::Gpu {
                block: block.to_string(),
                message: e.to_string(),
            })),
            Err(panic) => Err(Failure::Error(Error::Gpu {
                block: block.to_string(),
                message: panic,
            })),
        }
    }

    /// Runs the whole plan on the GPU into host outputs, shrinking blocks on out-of-memory.
    pub(crate) fn run<T: OutputSample>(
        gpu: &Arc<Gpu>,
        plan: &Plan,
        mut data: ArrayViewMut3<T>,
        mut footprint: ArrayViewMut3<T>,
        transform: &[f64],
        sampling: &[f64],
    ) -> std::result::Result<(), Failure> {
        let (mut by, mut bx) = plan.block_shape();
        // Larger blocks than the CPU's: one launch per block must fill the GPU.
        if plan.options.block_size.is_none() {
            let (ny, nx) = plan.plane_shape_out();
            (by, bx) = (ny.min(2048), nx.min(2048));
        }
        // After an out-of-memory error the input goes up block window by block window.
        let mut allow_whole = true;
        loop {
            let r = run_with_blocks(
                gpu,
                plan,
                data.view_mut(),
                footprint.view_mut(),
                transform,
                sampling,
                (by, bx),
                allow_whole,
            );
            // Whatever happened, nothing may still be in flight when buffers are dropped.
            let _ = guard("synchronize", || gpu.ctx.synchronize());
            match r {
                Err(Failure::OutOfMemory(block)) => {
                    if by <= MIN_BLOCK && bx <= MIN_BLOCK {
                        return Err(Failure::OutOfMemory(block));
                    }
                    (by, bx) = ((by / 2).max(MIN_BLOCK), (bx / 2).max(MIN_BLOCK));
                    allow_whole = false;
                    eprintln!(
                        "reproject: GPU out of memory on block {block}; retrying with \
                         {by}x{bx} blocks"
                    );
                }
                other => return other,
            }
        }
    }

    /// Output staging of one stream: device block buffers and pinned host copies.
    struct Slot {
        stream: Arc<CudaStream>,
        d_out: CudaSlice<u8>,
        d_fp: CudaSlice<u8>,
        h_out: PinnedHostSlice<u8>,
        h_fp: PinnedHostSlice<u8>,
        /// Per-block input window (window mode only).
        d_win: Option<CudaSlice<u8>>,
        /// The block whose result is on its way to `h_out`/`h_fp`.
        pending: Option<(Block, usize)>,
    }

    /// Where the kernel's input comes from for one plane.
    #[derive(Clone, Copy)]
    enum Input<'a> {
        /// The stored samples, uploaded as they are.
        Raw(RawPlane<'a>, i32),
        /// f64 values read (and rounded) as the CPU reads them, or spline coefficients.
        Values,
    }

    impl Input<'_> {
        fn elem(&self) -> usize {
            match self {
                Input::Raw(r, _) => crate::io::decode_sample_size(r.sample),
                Input::Values => 8,
            }
        }
        /// (input_type, big_endian) kernel arguments.
        fn kernel_type(&self) -> (i32, i32) {
            match self {
                Input::Raw(r, t) => (*t, i32::from(r.big_endian)),
                Input::Values => (1, 0),
            }
        }
    }

    /// The input of `plane` for the kernel.
    fn input_of<'a>(plan: &'a Plan, plane: usize) -> Input<'a> {
        if plan.coefficients.is_some() {
            return Input::Values;
        }
        match plan.source.raw_plane(plane) {
            Some(raw) => match input_type(raw.sample) {
                Some(t) => Input::Raw(raw, t),
                None => Input::Values,
            },
            None => Input::Values,
        }
    }

    /// Fills `out` (rows × cols of the plane, row-major, `input.elem()` bytes per sample) on
    /// several threads.
    fn fill_rows(
        plan: &Plan,
        plane: usize,
        input: Input,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [u8],
    ) -> crate::error::Result<()> {
        let elem = input.elem();
        let row_bytes = cols.len() * elem;
        let band = rows
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(8);
        let (_, nx) = plan.shape_in;
        out[..rows.len() * row_bytes]
            .par_chunks_mut(band * row_bytes)
            .enumerate()
            .try_for_each(|(i, chunk)| {
                let r0 = rows.start + i * band;
                let r1 = r0 + chunk.len() / row_bytes;
                match (input, &plan.coefficients) {
                    (Input::Raw(raw, _), _) => {
                        for (r, row) in (r0..r1).zip(chunk.chunks_exact_mut(row_bytes)) {
                            let at = (r * nx + cols.start) * elem;
                            row.copy_from_slice(&raw.bytes[at..at + row_bytes]);
                        }
                        Ok(())
                    }
                    (Input::Values, Some(c)) => {
                        let values = as_f64(chunk);
                        let src = c.planes.plane(plane);
                        for (r, row) in (r0..r1).zip(values.chunks_exact_mut(cols.len())) {
                            match src.row(r).as_slice() {
                                Some(s) => row.copy_from_slice(&s[cols.clone()]),
                                None => {
                                    for (o, x) in row.iter_mut().zip(cols.clone()) {
                                        *o = src[[r, x]];
                                    }
                                }
                            }
                        }
                        Ok(())
                    }
                    (Input::Values, None) => {
                        let values = as_f64(chunk);
                        plan.source
                            .read_window(plane, r0..r1, cols.clone(), values)?;
                        plan.rounding.convert_values(values);
                        Ok(())
                    }
                }
            })
    }

    /// A staging chunk seen as f64 (pinned buffers are page-aligned and chunks start at
    /// multiples of 8 bytes).
    fn as_f64(bytes: &mut [u8]) -> &mut [f64] {
        debug_assert_eq!(bytes.as_ptr() as usize % 8, 0, "staging is 8-byte aligned");
        // SAFETY: aligned (checked), any bit pattern is a valid f64, length in whole f64s.
        unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut f64, bytes.len() / 8) }
    }

    /// Device bytes for `bytes` uploaded by [`upload`]: rounded up, plus one chunk.
    fn padded(bytes: usize) -> usize {
        bytes.next_multiple_of(CHUNK) + CHUNK
    }

    /// Uploads rows × cols of a plane into `dst` through the two pinned chunks: while one
    /// chunk's copy runs, several threads fill the other.
    #[allow(clippy::too_many_arguments)]
    fn upload(
        streams: &[Arc<CudaStream>; 2],
        staging: &mut [PinnedHostSlice<u8>; 2],
        plan: &Plan,
        plane: usize,
        input: Input,
        rows: Range<usize>,
        cols: Range<usize>,
        dst: &mut CudaSlice<u8>,
        where_: &str,
    ) -> std::result::Result<(), Failure> {
        let row_bytes = (cols.len() * input.elem()).max(1);
        if row_bytes > CHUNK {
            return Err(Failure::Error(Error::Gpu {
                block: where_.into(),
                message: format!("input rows of {row_bytes} bytes exceed the staging chunk"),
            }));
        }
        let chunk_rows = CHUNK / row_bytes;
        let mut offset = 0usize;
        for (k, r0) in rows.clone().step_by(chunk_rows).enumerate() {
            let r1 = (r0 + chunk_rows).min(rows.end);
            let slot = k % 2;
            // Waits for this chunk's previous copy, then fills it.
            let host = at(guard("pinned", || staging[slot].as_mut_slice()), where_)?;
            fill_rows(plan, plane, input, r0..r1, cols.clone(), host).map_err(Failure::Error)?;
            let stream = &streams[slot];
            let src = &staging[slot];
            // The whole chunk is copied (device buffers are padded by a chunk: see `padded`),
            // so the pinned buffer's own event orders its next fill after this copy.
            at(
                guard("H2D", || {
                    let mut view = dst.slice_mut(offset..offset + CHUNK);
                    stream.memcpy_htod(src, &mut view)
                }),
                where_,
            )?;
            offset += (r1 - r0) * row_bytes;
        }
        Ok(())
    }

    /// The kernel launch for one block.
    struct Launch<'a> {
        transform: &'a CudaSlice<f64>,
        sampling: &'a CudaSlice<f64>,
        /// (input_type, big_endian), pitch in elements, window (y0, x0, ny, nx), plane shape.
        input_type: (i32, i32),
        pitch: usize,
        window: (usize, usize, usize, usize),
        plane: (usize, usize),
        block: &'a Block,
        out_f64: i32,
        out_pitch: usize,
    }

    impl Launch<'_> {
        /// Launches `rp_reproject_block` on `stream`; `input`, `out`, `fp` are device pointers
        /// (the output pointers at the block's first pixel).
        ///
        /// # Safety
        /// The pointers must be valid device memory of the sizes the arguments describe.
        unsafe fn launch(
            &self,
            gpu: &Gpu,
            stream: &CudaStream,
            input: u64,
            out: u64,
            fp: u64,
        ) -> std::result::Result<(), DriverError> {
            let (blk_ny, blk_nx) = (self.block.rows.len(), self.block.cols.len());
            let cfg = LaunchConfig {
                grid_dim: (
                    (blk_nx as u32).div_ceil(THREADS.0),
                    (blk_ny as u32).div_ceil(THREADS.1),
                    1,
                ),
                block_dim: (THREADS.0, THREADS.1, 1),
                shared_mem_bytes: 0,
            };
            let ints = [
                self.window.0 as i32,
                self.window.1 as i32,
                self.window.2 as i32,
                self.window.3 as i32,
                self.plane.0 as i32,
                self.plane.1 as i32,
                self.block.rows.start as i32,
                self.block.cols.start as i32,
                blk_ny as i32,
                blk_nx as i32,
            ];
            let (pitch, out_pitch) = (self.pitch as i64, self.out_pitch as i64);
            let mut b = stream.launch_builder(&gpu.func);
            b.arg(self.transform)
                .arg(self.sampling)
                .arg(&input)
                .arg(&self.input_type.0)
                .arg(&self.input_type.1)
                .arg(&pitch);
            for v in &ints {
                b.arg(v);
            }
            b.arg(&out).arg(&fp).arg(&self.out_f64).arg(&out_pitch);
            b.launch(cfg).map(|_| ())
        }
    }

    /// The device pointer of a buffer, for a kernel argument on `stream` (cudarc orders the
    /// access after earlier writes on other streams while the guard lives).
    fn ptr<'a>(
        d: &'a CudaSlice<u8>,
        stream: &'a CudaStream,
    ) -> (u64, cudarc::driver::SyncOnDrop<'a>) {
        use cudarc::driver::DevicePtr;
        d.device_ptr(stream)
    }

    fn ptr_mut<'a>(
        d: &'a mut CudaSlice<u8>,
        stream: &'a CudaStream,
    ) -> (u64, cudarc::driver::SyncOnDrop<'a>) {
        use cudarc::driver::DevicePtrMut;
        d.device_ptr_mut(stream)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_with_blocks<T: OutputSample>(
        gpu: &Arc<Gpu>,
        plan: &Plan,
        mut data: ArrayViewMut3<T>,
        mut footprint: ArrayViewMut3<T>,
        transform: &[f64],
        sampling: &[f64],
        (by, bx): (usize, usize),
        allow_whole: bool,
    ) -> std::result::Result<(), Failure> {
        let ctx = &gpu.ctx;
        let setup = "(setup)";
        let elem = std::mem::size_of::<T>();
        let out_f64 = i32::from(TypeId::of::<T>() == TypeId::of::<f64>());
        let (in_ny, in_nx) = plan.shape_in;
        let (ny, nx) = plan.plane_shape_out();
        let streams = [
            at(guard("stream", || ctx.new_stream()), setup)?,
            at(guard("stream", || ctx.new_stream()), setup)?,
        ];
        let d_transform = at(guard("H2D", || streams[0].clone_htod(transform)), setup)?;
        let d_sampling = at(guard("H2D", || streams[0].clone_htod(sampling)), setup)?;

        // The whole input plane on the device when it fits with room to spare.
        let max_elem = (0..plan.planes_in)
            .map(|p| input_of(plan, p).elem())
            .max()
            .unwrap_or(8);
        let plane_bytes = padded(in_ny * in_nx * max_elem);
        let block_bytes = by * bx * elem;
        let (free, _) = at(guard("cuMemGetInfo", || ctx.mem_get_info()), setup)?;
        let whole = allow_whole && plane_bytes + 4 * block_bytes + 2 * CHUNK < free / 10 * 9;
        // SAFETY (all allocations): every buffer is written (fill, copy, kernel) before it is
        // read. No write-combined staging: rounding reads the values back on the host.
        let pinned = || unsafe { ctx.alloc_pinned_with_flags::<u8>(CHUNK, 0) };
        let mut staging = [
            at(guard("pinned", pinned), setup)?,
            at(guard("pinned", pinned), setup)?,
        ];
        let mut slots = Vec::with_capacity(2);
        for stream in &streams {
            let stream = stream.clone();
            let dev = || unsafe { stream.alloc::<u8>(block_bytes) };
            let host = || unsafe { ctx.alloc_pinned_with_flags::<u8>(block_bytes, 0) };
            slots.push(Slot {
                d_out: at(guard("alloc", dev), setup)?,
                d_fp: at(guard("alloc", dev), setup)?,
                h_out: at(guard("pinned", host), setup)?,
                h_fp: at(guard("pinned", host), setup)?,
                stream,
                d_win: None,
                pending: None,
            });
        }
        let mut d_plane = match whole {
            true => Some(at(
                guard("alloc", || unsafe { streams[0].alloc::<u8>(plane_bytes) }),
                setup,
            )?),
            false => None,
        };
        let block_list: Vec<Block> = blocks((ny, nx), (by, bx)).collect();
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for plane in 0..plan.planes {
            let input = input_of(plan, plane);
            if let Some(d) = d_plane.as_mut() {
                let where_ = format!("(upload of input plane {plane})");
                upload(
                    &streams,
                    &mut staging,
                    plan,
                    plane,
                    input,
                    0..in_ny,
                    0..in_nx,
                    d,
                    &where_,
                )?;
            }
            for (i, block) in block_list.iter().enumerate() {
                let slot_i = i % 2;
                let name = describe(block, plane);
                // First hand the slot's previous block to the output (waits for its copy).
                drain(&mut slots[slot_i], &mut data, &mut footprint, elem)?;
                // The input window: the whole plane, or what this block needs.
                let (window, pitch) = if d_plane.is_some() {
                    ((0, 0, in_ny, in_nx), in_nx)
                } else {
                    let n = block.len();
                    xs.resize(n, 0.0);
                    ys.resize(n, 0.0);
                    let Some(b) = plan.coords.block_coords(block, &mut xs, &mut ys) else {
                        // No output pixel of the block maps into the input: NaN, as on the
                        // CPU, without a launch.
                        fill_empty(block, plane, &mut data, &mut footprint);
                        continue;
                    };
                    let w = plan.window_for(b);
                    let bytes = padded(w.rows.len() * w.cols.len() * input.elem());
                    let slot = &mut slots[slot_i];
                    if slot.d_win.as_ref().is_none_or(|d| d.len() < bytes) {
                        slot.d_win = None;
                        let s = slot.stream.clone();
                        let d = at(guard("alloc", || unsafe { s.alloc::<u8>(bytes) }), &name)?;
                        slot.d_win = Some(d);
                    }
                    let d = slot.d_win.as_mut().expect("allocated above");
                    upload(
                        &streams,
                        &mut staging,
                        plan,
                        plane,
                        input,
                        w.rows.clone(),
                        w.cols.clone(),
                        d,
                        &name,
                    )?;
                    (
                        (w.rows.start, w.cols.start, w.rows.len(), w.cols.len()),
                        w.cols.len(),
                    )
                };
                let launch = Launch {
                    transform: &d_transform,
                    sampling: &d_sampling,
                    input_type: input.kernel_type(),
                    pitch,
                    window,
                    plane: (in_ny, in_nx),
                    block,
                    out_f64,
                    out_pitch: block.cols.len(),
                };
                let slot = &mut slots[slot_i];
                let stream = slot.stream.clone();
                let source = d_plane.as_ref().or(slot.d_win.as_ref());
                let Some(source) = source else {
                    return Err(Failure::Error(Error::Gpu {
                        block: name,
                        message: "no input buffer".into(),
                    }));
                };
                let launched = guard("launch", || {
                    let (input_ptr, _r) = ptr(source, &stream);
                    let (out_ptr, _w1) = ptr_mut(&mut slot.d_out, &stream);
                    let (fp_ptr, _w2) = ptr_mut(&mut slot.d_fp, &stream);
                    // SAFETY: the input holds the window (pitch elements per row), the outputs
                    // block_bytes >= blk_ny * blk_nx elements of the output type.
                    unsafe { launch.launch(gpu, &stream, input_ptr, out_ptr, fp_ptr) }
                });
                at(launched, &name)?;
                let copied = guard("D2H", || {
                    stream.memcpy_dtoh(&slot.d_out, &mut slot.h_out)?;
                    stream.memcpy_dtoh(&slot.d_fp, &mut slot.h_fp)
                });
                at(copied, &name)?;
                slot.pending = Some((block.clone(), plane));
            }
        }
        for slot in &mut slots {
            drain(slot, &mut data, &mut footprint, elem)?;
        }
        Ok(())
    }

    /// A block no output pixel of which maps into the input: NaN values, zero footprint.
    fn fill_empty<T: OutputSample>(
        block: &Block,
        plane: usize,
        data: &mut ArrayViewMut3<T>,
        footprint: &mut ArrayViewMut3<T>,
    ) {
        let s = ndarray::s![plane, block.rows.clone(), block.cols.clone()];
        data.slice_mut(s).fill(T::from_f64(f64::NAN));
        footprint.slice_mut(s).fill(T::from_f64(0.0));
    }

    /// Copies a slot's finished block from pinned memory into the output arrays.
    fn drain<T: OutputSample>(
        slot: &mut Slot,
        data: &mut ArrayViewMut3<T>,
        footprint: &mut ArrayViewMut3<T>,
        elem: usize,
    ) -> std::result::Result<(), Failure> {
        let Some((block, plane)) = slot.pending.take() else {
            return Ok(());
        };
        let name = describe(&block, plane);
        // Waits for the block's copies to finish.
        let values = at(guard("pinned", || slot.h_out.as_slice()), &name)?;
        copy_block(values, data, &block, plane, elem)?;
        let fp = at(guard("pinned", || slot.h_fp.as_slice()), &name)?;
        copy_block(fp, footprint, &block, plane, elem)
    }

    /// Copies a compact block (rows of `block.cols.len()` elements) into the output plane.
    fn copy_block<T: OutputSample>(
        bytes: &[u8],
        out: &mut ArrayViewMut3<T>,
        block: &Block,
        plane: usize,
        elem: usize,
    ) -> std::result::Result<(), Failure> {
        let width = block.cols.len();
        let mut plane_view = out.index_axis_mut(Axis(0), plane);
        for (r, y) in block.rows.clone().enumerate() {
            let mut row = plane_view.index_axis_mut(Axis(0), y);
            let Some(dst) = row.as_slice_mut() else {
                return Err(Failure::Error(Error::ShapeMismatch(
                    "output arrays must be contiguous (C order)".into(),
                )));
            };
            let dst = &mut dst[block.cols.clone()];
            let src = &bytes[r * width * elem..(r + 1) * width * elem];
            // SAFETY: T is f32 or f64 (checked by `unsupported`), the kernel wrote that type,
            // and the lengths match (width elements of `elem` bytes).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.as_ptr(),
                    dst.as_mut_ptr() as *mut u8,
                    width * elem,
                );
            }
        }
        Ok(())
    }

    /// Device-resident job: the input planes and the outputs are device memory already.
    ///
    /// # Safety
    /// See [`Plan::compute_on_device`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn run_on_device(
        gpu: &Arc<Gpu>,
        plan: &Plan,
        input: &crate::gpu::DeviceImage,
        data: u64,
        footprint: u64,
        out_f64: bool,
        transform: &[f64],
        sampling: &[f64],
    ) -> std::result::Result<(), Failure> {
        let setup = "(setup)";
        let ctx = &gpu.ctx;
        let stream = at(guard("stream", || ctx.new_stream()), setup)?;
        let d_transform = at(guard("H2D", || stream.clone_htod(transform)), setup)?;
        let d_sampling = at(guard("H2D", || stream.clone_htod(sampling)), setup)?;
        let (in_ny, in_nx) = plan.shape_in;
        let (ny, nx) = plan.plane_shape_out();
        let out_elem = if out_f64 { 8 } else { 4 };
        // Orders >= 2 sample the plan's prefiltered coefficients, uploaded once per plane.
        let mut coefficients = None;
        let mut staging = None;
        let whole = Block {
            rows: 0..ny,
            cols: 0..nx,
        };
        for plane in 0..plan.planes {
            let where_ = describe(&whole, plane);
            let (in_ptr, input_type, pitch) = if plan.coefficients.is_some() {
                let streams = [stream.clone(), stream.clone()];
                if staging.is_none() {
                    let pinned = || ctx.alloc_pinned_with_flags::<u8>(CHUNK, 0);
                    staging = Some([
                        at(guard("pinned", pinned), setup)?,
                        at(guard("pinned", pinned), setup)?,
                    ]);
                    let bytes = padded(in_ny * in_nx * 8);
                    coefficients = Some(at(guard("alloc", || stream.alloc::<u8>(bytes)), setup)?);
                }
                let (Some(st), Some(d)) = (staging.as_mut(), coefficients.as_mut()) else {
                    unreachable!("allocated above");
                };
                upload(
                    &streams,
                    st,
                    plan,
                    plane,
                    Input::Values,
                    0..in_ny,
                    0..in_nx,
                    d,
                    &where_,
                )?;
                let (p, _r) = ptr(d, &stream);
                (p, (1, 0), in_nx)
            } else {
                let elem = crate::io::decode_sample_size(input.sample) as u64;
                let t = input_type(input.sample).ok_or_else(|| {
                    Failure::Error(Error::GpuUnavailable(format!(
                        "device inputs of {:?} samples are not supported",
                        input.sample
                    )))
                })?;
                let plane_ptr = input.ptr + plane as u64 * (in_ny * input.pitch) as u64 * elem;
                (plane_ptr, (t, i32::from(input.big_endian)), input.pitch)
            };
            let launch = Launch {
                transform: &d_transform,
                sampling: &d_sampling,
                input_type,
                pitch,
                window: (0, 0, in_ny, in_nx),
                plane: (in_ny, in_nx),
                block: &whole,
                out_f64: i32::from(out_f64),
                out_pitch: nx,
            };
            let offset = (plane * ny * nx * out_elem) as u64;
            let launched = guard("launch", || {
                launch.launch(gpu, &stream, in_ptr, data + offset, footprint + offset)
            });
            at(launched, &where_)?;
        }
        at(guard("synchronize", || stream.synchronize()), setup)
    }
}

#[cfg(feature = "cuda")]
impl Plan<'_> {
    /// Computes the whole output on the GPU with the input and the outputs in GPU memory
    /// (device-resident: no host copies at all). The plan's source describes the input (shape,
    /// sample type; for orders ≥ 2 its pixels give the spline coefficients); `input` holds the
    /// same pixels on the device. `data` and `footprint` are device addresses of the full
    /// output (planes × rows × columns, C order) of float64 (`out_f64`) or float32.
    ///
    /// Errors: [`Error::GpuUnavailable`] without a usable GPU or for a job the kernels do not
    /// cover; [`Error::Gpu`] when a launch fails.
    ///
    /// # Safety
    /// `input`, `data` and `footprint` must be valid memory of device 0's primary context, of
    /// at least the sizes described, not written by anything else until this returns.
    ///
    /// ```no_run
    /// use ndarray::Array2;
    /// use reproject::engine::{Options, Plan};
    /// use reproject::gpu::{DeviceBuffer, DeviceImage};
    /// use reproject::io::{ArraySource, SampleType};
    /// use reproject::wcs::Wcs;
    /// let h = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 32\nCRPIX2 = 32\n\
    ///          CRVAL1 = 10\nCRVAL2 = 20\nCDELT1 = -0.01\nCDELT2 = 0.01\n";
    /// let wcs = Wcs::from_header_str(h)?;
    /// let image = Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &Options::default())?;
    /// let bytes: Vec<u8> = image.iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let input = DeviceBuffer::from_host(&bytes)?;
    /// let (data, footprint) = (DeviceBuffer::zeros(64 * 64 * 8)?, DeviceBuffer::zeros(64 * 64 * 8)?);
    /// let image = DeviceImage { ptr: input.device_ptr(), sample: SampleType::F32, big_endian: false, pitch: 64 };
    /// unsafe { plan.compute_on_device(&image, data.device_ptr(), footprint.device_ptr(), true)? };
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub unsafe fn compute_on_device(
        &self,
        input: &crate::gpu::DeviceImage,
        data: u64,
        footprint: u64,
        out_f64: bool,
    ) -> Result<()> {
        let kind = if out_f64 {
            unsupported::<f64>(self)
        } else {
            unsupported::<f32>(self)
        };
        if let Some(why) = kind {
            return Err(Error::GpuUnavailable(why));
        }
        if input.pitch < self.shape_in.1 {
            return Err(Error::InvalidArgument(format!(
                "device input pitch {} is narrower than the input's {} columns",
                input.pitch, self.shape_in.1
            )));
        }
        let gpu = crate::gpu::runtime::gpu()?;
        let Some((transform, sampling)) = pipeline::encode(self) else {
            return Err(Error::GpuUnavailable(
                "this transform is not covered by the GPU kernels".into(),
            ));
        };
        pipeline::run_on_device(
            &gpu, self, input, data, footprint, out_f64, &transform, &sampling,
        )
        .map_err(pipeline::Failure::into_error)
    }
}

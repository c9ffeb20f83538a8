//! The CUDA block executor: computes a plan's blocks with the block kernel on one or more GPUs
//! (or the CUDA simulator), through the driver seam ([`crate::gpu::driver::Driver`]).
//!
//! ```text
//! per device, once per plan:  kernel parameters ─upload─▶ device
//!                             every input plane allocated on the device, when they fit
//! the first thread to need the planes (the uploader), band by band of rows across the planes:
//!     rows (raw samples, or values) ─page-locked staging (two lanes: fill one while the other
//!     crosses)─▶ device ─synchronize─▶ publish "rows 0..r are on the device" (Feed: Mutex +
//!     Condvar); orders 2-5: once every row is up, rp_spline_filter (columns, then rows) makes
//!     the resident values the spline coefficients in place, and then every row is published
//! per block (each thread its own stream and buffers, blocks taken in the order of the last
//! input row they read):
//!     [resident: wait until the rows of its window are published; launch on those rows only]
//!     [input window ─staging─▶ device, when the planes did not fit; orders 2-5: a window
//!      of the CPU's coefficients (the device prefilter needs whole planes)]
//!     rp_reproject_block ─▶ block buffers ─download values─▶ page-locked ─▶ output views
//! ```
//! So the bus carries the input up while the first blocks compute and come down: the uploads,
//! the kernels and the downloads overlap, on separate streams, with several blocks in flight.
//! A block's window is the bounds of its corners' input positions for a homography (exact:
//! see `CoordinateMap::corner_bounds`); any other transform waits for whole planes. The
//! uploader reads the input on a crew of host threads of its own, spawned once per upload
//! ([`super::crew`]), never on the rayon pool the block threads wait in. Every step of the host
//! threads is timed ([`CudaExecutor::host_times`]). `tests/gpu_timeline.rs` replays the 16384²
//! job at H100 rates ([`crate::gpu::timeline`]): the critical path is within 1.2x of the
//! busiest engine.
//!
//! The spline orders' values are read and rounded as the CPU reads them before its own
//! prefilter, and the device filters them with the CPU's operations in the CPU's order, so the
//! coefficients are the CPU's bits; the CPU computes its own only when it needs them (a block
//! falling back after a GPU fault, window mode). Device-resident jobs (CuPy inputs) make the
//! values on the device from the caller's input (`rp_spline_values`) and filter them there:
//! nothing of the input crosses to the host.
//!
//! Each launch runs the build of the block kernel specialised for the plan and the launch's
//! input and output types ([`super::kernel_variant`]; the general kernel where the key does
//! not cover it), loaded when the executor is made if it is compiled already (loaded, or in
//! the on-disk cache; both output types' builds where the plan may write either). If it is
//! not, its compilation runs in the background and the launches run the general kernel,
//! which gives the same values, until it is ready; a build that fails leaves them on the
//! general kernel. So no job waits for NVRTC, which takes a few seconds per variant
//! on the H100 machine.
//! Blocks go round-robin over the devices. A GPU failure (out of memory, a sticky error, a
//! launch failure) stops the GPU for the rest of the plan: that block and every later one are
//! computed on the CPU, with one warning; blocks already done are kept. A device whose context
//! was poisoned is never used again (see [`crate::gpu::drivers`]).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use ndarray::{ArrayViewMut3, Axis};

use super::blocks::Block;
use super::crew::{Crew, Job, RawPart};
use super::executor::{BlockExecutor, BlockOut, CpuExecutor};
use super::gpu_times::{HostTimes, Step, Timers};
use super::kernel_params::{encode_sampling, encode_transform, kernel_support, InputDecoding};
use super::kernel_variant::PlanKernel;
use super::streaming::{self, store_f32_row, store_f64_row, StreamedSample};
use super::{in_row_bands, OutputSample, Parallel, Plan};
use crate::error::{Error, Result};
use crate::gpu::driver::{
    BlockLaunch, DevicePtr, Driver, DriverFault, FaultKind, HostBuffer, MemoryAt, SplineLaunch,
    SplineOp, SplineSamples, StreamId,
};
use crate::gpu::variant::KernelDefines;
use crate::interp::spline::{filter_gain, filter_poles, spline_pole_params};
use crate::io::{RawPlane, SampleType};

/// Threads per CUDA block (x, y).
const THREADS: (u32, u32) = (32, 8);
/// Largest staging buffer for uploads (bytes).
const CHUNK: usize = 64 << 20;
/// Bytes of one plane's rows in one band of the resident planes' upload: small enough that the
/// first blocks start early, large enough that a copy amortises its launch (16 MiB: 0.3 ms at
/// 55 GB/s).
const BAND: usize = 16 << 20;
/// Fewest bytes one crew thread stages of a band ([`fill_rows_on`]).
const MIN_STAGING_SHARE: usize = 1 << 20;
/// The smallest band worth a copy of its own (bytes of one plane's rows).
const MIN_BAND: usize = 1 << 20;
/// The GPU's block width when the options leave it open ([`gpu_block`]).
const GPU_BLOCK_COLS: usize = 2048;
/// The GPU's block height into outputs written before ([`gpu_block`]): a block of 2M pixels,
/// so that one launch fills the device (an H100 holds 270K threads) and each copy amortises
/// its fixed costs. The job is bound by the bus and the copies there: the 16384² bilinear
/// job into reused float32 outputs, its plan called again (the input already on the device),
/// took 38.5 ms with these blocks and 55.3 ms with 128-row ones, with a new plan 56.9 and
/// 62.4 ms (docs/measurements/h100-2026-11-27-session18, runs 1 and 5).
const GPU_BLOCK_ROWS: usize = 1024;
/// The GPU's block height into fresh outputs ([`gpu_block`]). There the host's memory bounds
/// the job (each first write faults a page in and zeroes it), and each block thread's
/// page-locked slot, which the copy engine fills with a block's values and the thread reads
/// back at once to store them, should still be in the host's last-level cache when it is
/// read: 16 threads × 2 MiB of float64 values, against 16 MiB each for 1024-row blocks. The
/// 16384² bilinear call from numpy into fresh float64 outputs took 179.5-193.4 ms (best of
/// 3) with these blocks against 236.8-256.7 ms with 1024-row ones (256 rows: 196.7-212.9,
/// 64 rows: 199.6), and 192-196 ms against 274-280 ms from Rust (session 18, runs 1, 4, 5).
const GPU_FRESH_BLOCK_ROWS: usize = 128;
/// Device memory kept free per block thread for its block buffers when deciding whether the
/// input planes fit: two float64 outputs of 2048 × 2048 pixels, room for the GPU's blocks
/// and larger ones a caller asks for.
const WORKING_PER_THREAD: usize = 2 * 2048 * 2048 * 8;

/// The GPU's block shape for an output plane of `shape` when the options leave it open,
/// into `fresh` outputs ([`Plan::with_fresh_outputs`]) or not: [`GPU_BLOCK_COLS`] columns
/// and [`GPU_FRESH_BLOCK_ROWS`] or [`GPU_BLOCK_ROWS`] rows at most.
pub(crate) fn gpu_block((ny, nx): (usize, usize), fresh: bool) -> (usize, usize) {
    let rows = if fresh {
        GPU_FRESH_BLOCK_ROWS
    } else {
        GPU_BLOCK_ROWS
    };
    (ny.clamp(1, rows), nx.clamp(1, GPU_BLOCK_COLS))
}

/// Why a block did not finish on the GPU.
#[derive(Clone)]
pub(crate) enum Failure {
    /// The GPU failed: the block goes to the CPU.
    Driver(DriverFault),
    /// The input could not be read, or similar: the run fails as on the CPU.
    Engine(Error),
}

impl From<DriverFault> for Failure {
    fn from(f: DriverFault) -> Self {
        Failure::Driver(f)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Engine(e)
    }
}

/// Device memory, freed when dropped.
pub(crate) struct DeviceAlloc {
    driver: Arc<dyn Driver>,
    pub(crate) ptr: DevicePtr,
    pub(crate) len: usize,
}

impl DeviceAlloc {
    /// `len` bytes of device memory on `driver`.
    pub(crate) fn new(
        driver: &Arc<dyn Driver>,
        len: usize,
    ) -> std::result::Result<Self, DriverFault> {
        let ptr = driver.alloc(len)?;
        Ok(DeviceAlloc {
            driver: driver.clone(),
            ptr,
            len,
        })
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        self.driver.free(self.ptr);
    }
}

/// Page-locked host memory, freed when dropped.
pub(crate) struct HostAlloc {
    driver: Arc<dyn Driver>,
    buffer: Option<HostBuffer>,
}

impl HostAlloc {
    /// `len` bytes of page-locked memory from `driver`.
    pub(crate) fn new(
        driver: &Arc<dyn Driver>,
        len: usize,
    ) -> std::result::Result<Self, DriverFault> {
        Ok(HostAlloc {
            driver: driver.clone(),
            buffer: Some(driver.alloc_host(len)?),
        })
    }

    /// The buffer.
    pub(crate) fn buffer(&self) -> &HostBuffer {
        self.buffer.as_ref().expect("present until dropped")
    }

    /// The bytes, for writing.
    ///
    /// # Safety
    /// No copy from or into the buffer may be pending.
    unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the caller's promises (# Safety above).
        unsafe {
            self.buffer
                .as_mut()
                .expect("present until dropped")
                .as_mut_slice()
        }
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.driver.free_host(b);
        }
    }
}

/// Where the kernel's input comes from for one plane.
#[derive(Clone, Copy)]
enum Input<'a> {
    /// The stored samples, uploaded as they are, with the kernel's type code.
    Raw(RawPlane<'a>, i32),
    /// f64 values read (and rounded) as the CPU reads them: for orders ≥ 2, the values the
    /// spline prefilter starts from (filtered on the device once resident).
    Values,
    /// The CPU's spline coefficients (orders ≥ 2 in window mode: the device prefilter needs
    /// whole planes).
    Coefficients,
}

impl Input<'_> {
    fn elem(&self) -> usize {
        match self {
            Input::Raw(r, _) => crate::io::sample_size(r.sample),
            Input::Values | Input::Coefficients => 8,
        }
    }

    /// (input_type, big_endian) kernel arguments.
    fn kernel_type(&self) -> (i32, i32) {
        match self {
            Input::Raw(r, t) => (*t, i32::from(r.big_endian)),
            Input::Values | Input::Coefficients => (1, 0),
        }
    }
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

/// The input of `plane` for kernels that decode stored samples with `decoding`: the stored
/// samples when they are of a type the kernels read and decode that way, else values.
fn input_of<'a>(plan: &'a Plan, plane: usize, decoding: &InputDecoding) -> Input<'a> {
    if plan.options.order.needs_prefilter() {
        return Input::Values;
    }
    stored_input(plan, plane, decoding)
}

/// The stored samples of `plane` when they are of a type the kernels read and their decoding
/// is `decoding`, else values.
fn stored_input<'a>(plan: &'a Plan, plane: usize, decoding: &InputDecoding) -> Input<'a> {
    match plan.source.encoded_plane(plane) {
        Some((raw, d)) if d == *decoding => match input_type(raw.sample) {
            Some(t) => Input::Raw(raw, t),
            None => Input::Values,
        },
        _ => Input::Values,
    }
}

/// What of input plane `plane` crosses the bus to the resident planes: what the kernels read
/// ([`input_of`]), except for the spline orders, whose plain stored samples (no scaling, no
/// blank value) go up as they are and become the prefilter's values on the device
/// ([`SplineSamples`]: half the bytes of float64 values for float32 inputs).
fn sent_of<'a>(plan: &'a Plan, plane: usize, decoding: &InputDecoding) -> Input<'a> {
    if plan.options.order.needs_prefilter() {
        stored_input(plan, plane, &InputDecoding::default())
    } else {
        input_of(plan, plane, decoding)
    }
}

/// The decoding the kernels apply to the input (FITS BZERO/BSCALE and BLANK, decoded on the
/// device): the source's, when every plane is uploaded as stored samples with that same
/// decoding (orders 0 and 1); none otherwise, and the planes not plain go up as values.
fn kernel_decoding(plan: &Plan) -> InputDecoding {
    let plain = InputDecoding::default();
    if plan.options.order.needs_prefilter() {
        return plain;
    }
    let mut common = None;
    for plane in 0..plan.planes_in {
        match plan.source.encoded_plane(plane) {
            Some((raw, d)) if input_type(raw.sample).is_some() && common.is_none_or(|c| c == d) => {
                common = Some(d)
            }
            _ => return plain,
        }
    }
    common.unwrap_or(plain)
}

/// The bytes of input the executor would upload for `plan`: every plane, as sent (stored
/// samples the kernels decode, or float64 values or spline coefficients).
pub(crate) fn upload_bytes(plan: &Plan) -> u64 {
    let decoding = kernel_decoding(plan);
    let (ny, nx) = plan.plane_shape_in;
    (0..plan.planes_in)
        .map(|p| (ny * nx * sent_of(plan, p, &decoding).elem()) as u64)
        .sum()
}

/// Fills `out` with rows × cols of input plane `plane` as the kernel reads it
/// (`input.elem()` bytes per sample, row-major), on several threads of the current rayon pool.
fn fill_rows(
    plan: &Plan,
    plane: usize,
    input: Input,
    rows: Range<usize>,
    cols: Range<usize>,
    out: &mut [u8],
) -> Result<()> {
    let row_bytes = cols.len() * input.elem();
    if row_bytes == 0 || rows.is_empty() {
        return Ok(());
    }
    // The CPU's coefficients made (once per plan) before the threads fan out.
    if matches!(input, Input::Coefficients) {
        plan.coefficients()?;
    }
    in_row_bands(
        &mut out[..rows.len() * row_bytes],
        row_bytes,
        rows.start,
        |r0, chunk| fill_band(plan, plane, input, r0, cols.clone(), chunk),
    )
}

/// The host threads that keep the GPU's copies fed: every core, at most 8. Host memory
/// bandwidth, not the options' `parallel`, bounds the host side of the pipeline (staging the
/// input, draining the results into the caller's arrays, the footprint): on the H100 machine
/// a 16384² job took 63 ms with 16 block threads, and 730 ms from Python, where
/// `parallel=False` left it two (and float64 results)
/// (docs/measurements/h100-2026-11-26).
fn host_copy_threads() -> usize {
    copy_threads_of(std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`host_copy_threads`] on a machine of `cores` cores.
fn copy_threads_of(cores: usize) -> usize {
    cores.clamp(1, 8)
}

/// The most block threads a GPU job into fresh outputs takes on its own ([`block_threads`]):
/// as many as were measured (16, the H100 machine's cores). Each block thread holds a slot
/// (page-locked memory for a block's values, at most 16 MiB for a 1024 × 2048 float64 block,
/// and two device buffers of that size). At 16 threads the slots stay well within the host pool
/// ([`crate::gpu::pool::POOL_LIMIT`]), so no call after the first allocates page-locked
/// memory.
const FRESH_WRITERS_MAX: usize = 16;

/// The block threads of a GPU job asked for `requested` on `devices` devices, on a machine of
/// `cores` cores: the host's copy threads, and two blocks in flight per device at least, so
/// that copies overlap kernels, whether the CPU's parallelism asks for one thread
/// (`parallel=False` is reproject's default) or every core; only an explicit larger count is
/// taken as given. Every core is not more: extra threads only add stores that compete for host
/// memory with the staging every block waits for. On the H100 machine's 16 cores the 16384²
/// host-resident bilinear job took 81 ms with 16 block threads and 66 ms with 8, and 8 were
/// faster in each of six such pairs (bilinear and bicubic,
/// docs/measurements/h100-2026-11-27-session14).
///
/// Into `fresh` outputs (memory the job writes first, such as the arrays a Python call
/// returns) every core up to [`FRESH_WRITERS_MAX`]: there the block threads' stores are most
/// of the job, since each first write faults in a page and zeroes it, and that work is shared
/// by the threads that store. The 16384² bilinear call as Python makes it (float64 outputs)
/// took 283 and 232 ms on 16 block threads against 395 and 310 ms on 8, in two runs on the
/// H100 machine, and 342 → 301 ms from Python (docs/measurements/h100-2026-11-27-session17).
fn block_threads(requested: Parallel, devices: usize, cores: usize, fresh: bool) -> usize {
    let copy = if fresh {
        cores.clamp(1, FRESH_WRITERS_MAX)
    } else {
        copy_threads_of(cores)
    };
    let floor = (2 * devices).max(copy);
    match requested {
        Parallel::Threads(n) => n.max(floor),
        Parallel::Serial | Parallel::AllCores => floor,
    }
}

/// The host threads that write a one-GPU job's results when the CPU's parallelism asks for
/// `requested`, into `fresh` outputs or not ([`block_threads`] on this machine's cores): what
/// the cost model counts for fresh outputs.
pub(super) fn host_writers(requested: Parallel, fresh: bool) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    block_threads(requested, 1, cores, fresh)
}

/// [`fill_rows`] on `crew`, never on a rayon pool: for the thread that uploads the resident
/// planes while block threads of the pool wait for its rows (a rayon wait could run one of
/// those blocks on this thread, which would then wait for itself; see [`super::crew`]).
fn fill_rows_on<'env>(
    crew: &Crew<'env>,
    plan: &'env Plan<'env>,
    plane: usize,
    input: Input<'env>,
    rows: Range<usize>,
    cols: Range<usize>,
    out: &mut [u8],
) -> Result<()> {
    let row_bytes = cols.len() * input.elem();
    if row_bytes == 0 || rows.is_empty() {
        return Ok(());
    }
    let band = staging_share(rows.len(), row_bytes, crew.threads());
    let out = &mut out[..rows.len() * row_bytes];
    if band >= rows.len() {
        return fill_band(plan, plane, input, rows.start, cols, out);
    }
    let jobs = out
        .chunks_mut(band * row_bytes)
        .enumerate()
        .map(|(i, chunk)| {
            let part = RawPart::new(chunk);
            let cols = cols.clone();
            let r0 = rows.start + i * band;
            Box::new(move || {
                // SAFETY: `crew.run` returns once every job is done; the chunks are disjoint
                // parts of `out`, which nothing else touches meanwhile.
                let chunk = unsafe { part.bytes() };
                fill_band(plan, plane, input, r0, cols, chunk)
            }) as Job<'env>
        })
        .collect();
    crew.run(jobs)
}

/// The rows each of `threads` crew threads stages of a band of `rows` rows of `row_bytes`:
/// an equal share for every thread, of [`MIN_STAGING_SHARE`] at least (a job's dispatch costs
/// microseconds). A minimum of 64 rows left half of an 8-thread crew idle on a 16 MB band of
/// 64 KB rows: staging ran at 7.8 GB/s on the H100 machine (session 14).
fn staging_share(rows: usize, row_bytes: usize, threads: usize) -> usize {
    rows.div_ceil(threads.max(1))
        .max(MIN_STAGING_SHARE.div_ceil(row_bytes.max(1)))
}

/// Fills `chunk` (whole rows of `cols`) with input rows from `r0` of plane `plane`.
fn fill_band(
    plan: &Plan,
    plane: usize,
    input: Input,
    r0: usize,
    cols: Range<usize>,
    chunk: &mut [u8],
) -> Result<()> {
    let elem = input.elem();
    let row_bytes = cols.len() * elem;
    let r1 = r0 + chunk.len() / row_bytes;
    let (_, nx) = plan.plane_shape_in;
    match input {
        Input::Raw(raw, _) => {
            for (r, row) in (r0..r1).zip(chunk.chunks_exact_mut(row_bytes)) {
                let at = (r * nx + cols.start) * elem;
                // Streamed: the copy engine alone reads the staging.
                streaming::copy(row, &raw.bytes[at..at + row_bytes]);
            }
            streaming::finish();
            Ok(())
        }
        Input::Coefficients => {
            let Some(c) = plan.coefficients()? else {
                return Err(Error::InvalidArgument(
                    "spline coefficients of an order without a prefilter".into(),
                ));
            };
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
        Input::Values => plan.read_values(plane, r0..r1, cols, as_f64(chunk)),
    }
}

/// A staging chunk seen as f64 (host buffers are 8-byte aligned, chunks start at multiples
/// of 8 bytes).
fn as_f64(bytes: &mut [u8]) -> &mut [f64] {
    assert_eq!(bytes.as_ptr() as usize % 8, 0, "staging is 8-byte aligned");
    // SAFETY: aligned (checked), any bit pattern is a valid f64, length in whole f64s.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut f64, bytes.len() / 8) }
}

/// Uploads rows × cols of input plane `plane` into `dst`, chunk by chunk, through the lanes
/// (a page-locked staging buffer and the stream its copies go on) in turn: with two lanes the
/// next chunk is read and converted on the host while the previous one crosses the bus. A
/// lane's buffer is filled again only once its copy is done; every copy is done on return.
/// The buffers must have no copy pending on entry.
#[allow(clippy::too_many_arguments)]
fn upload_rows(
    driver: &Arc<dyn Driver>,
    lanes: &mut [(StreamId, &mut HostAlloc)],
    plan: &Plan,
    plane: usize,
    input: Input,
    rows: Range<usize>,
    cols: Range<usize>,
    dst: DevicePtr,
) -> std::result::Result<(), Failure> {
    let row_bytes = (cols.len() * input.elem()).max(1);
    let capacity = lanes
        .iter()
        .map(|(_, s)| s.buffer().len())
        .min()
        .unwrap_or(0);
    if row_bytes > capacity {
        return Err(Failure::Engine(Error::InvalidArgument(format!(
            "input rows of {row_bytes} bytes exceed the GPU staging buffer"
        ))));
    }
    let chunk_rows = capacity / row_bytes;
    let mut offset = 0usize;
    let mut used = vec![false; lanes.len()];
    for (k, r0) in rows.clone().step_by(chunk_rows).enumerate() {
        let r1 = (r0 + chunk_rows).min(rows.end);
        let bytes = (r1 - r0) * row_bytes;
        let lane = k % lanes.len();
        let (stream, staging) = &mut lanes[lane];
        if used[lane] {
            // Its previous chunk must be on the device before the buffer is refilled.
            driver.synchronize(*stream)?;
        }
        used[lane] = true;
        // SAFETY: no copy from this buffer is pending (synchronized above, or none queued).
        let host = unsafe { staging.bytes_mut() };
        fill_rows(plan, plane, input, r0..r1, cols.clone(), &mut host[..bytes])?;
        // SAFETY: dst holds the rows (the caller sized it); the buffer is not touched until
        // its stream is synchronized.
        unsafe { driver.upload(*stream, staging.buffer(), 0, dst.offset(offset), bytes)? };
        offset += bytes;
    }
    for ((stream, _), used) in lanes.iter().zip(used) {
        if used {
            driver.synchronize(*stream)?;
        }
    }
    Ok(())
}

/// Fails the feed if the uploading thread unwinds (a panic), so that no block waits for rows
/// that will never come: they fall back to the CPU.
struct ReleaseWaiters<'f>(&'f Feed);

impl Drop for ReleaseWaiters<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail(Failure::Driver(DriverFault::new(
                "(upload)",
                FaultKind::Other,
                "the thread uploading the input planes stopped",
            )));
        }
    }
}

/// Where the banded upload of the resident planes stands.
#[derive(Default)]
struct FeedState {
    /// Whether a thread has taken the upload on.
    claimed: bool,
    /// Rows `0..ready` of every plane are on the device (their copies synchronized).
    ready: usize,
    /// Why the upload stopped, if it failed.
    failed: Option<Failure>,
}

/// The resident planes' upload in bands of rows, band by band across the planes, by the first
/// thread that needs the planes; a launch waits only for the rows its input window needs
/// ([`Feed::wait_for`]), so the first blocks compute while later bands cross the bus.
struct Feed {
    /// Rows per band.
    band_rows: usize,
    state: Mutex<FeedState>,
    changed: Condvar,
}

impl Feed {
    fn new(band_rows: usize) -> Feed {
        Feed {
            band_rows: band_rows.max(1),
            state: Mutex::new(FeedState::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the caller is the first to ask (and so uploads the planes).
    fn claim(&self) -> bool {
        !std::mem::replace(&mut self.lock().claimed, true)
    }

    /// Rows `0..rows` of every plane are on the device.
    fn publish(&self, rows: usize) {
        let mut st = self.lock();
        st.ready = st.ready.max(rows);
        self.changed.notify_all();
    }

    /// The upload stopped: every waiter gets `why`.
    fn fail(&self, why: Failure) {
        self.lock().failed.get_or_insert(why);
        self.changed.notify_all();
    }

    /// Waits until rows `0..rows` of every plane are on the device (or the upload failed).
    fn wait_for(&self, rows: usize) -> std::result::Result<(), Failure> {
        let mut st = self.lock();
        loop {
            if st.ready >= rows {
                return Ok(());
            }
            if let Some(why) = &st.failed {
                return Err(why.clone());
            }
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The input rows the launches of `block` read from resident planes: the window of the bounds
/// of its corners' input positions for a homography (see `CoordinateMap::corner_bounds`; a
/// row at least, so a block that sees no input waits for nothing), every row otherwise.
fn resident_rows(plan: &Plan, block: &Block) -> Range<usize> {
    let ny = plan.plane_shape_in.0;
    match plan.coords.corner_bounds(block) {
        Some(b) => {
            let rows = plan.window_for(b).rows;
            if rows.is_empty() {
                0..ny.min(1)
            } else {
                rows
            }
        }
        None => 0..ny,
    }
}

/// What stays on a device for the whole plan.
pub(crate) struct Resident {
    transform: DeviceAlloc,
    sampling: DeviceAlloc,
    /// Every input plane, when they fit (else each block uploads its window).
    planes: Option<Vec<DeviceAlloc>>,
    /// The planes' upload, band by band (with the planes).
    feed: Option<Feed>,
    /// How the kernels decode the stored samples.
    decoding: InputDecoding,
    /// The plan's part of the kernel variant key (the launch's input type is the rest).
    kernel: PlanKernel,
    /// The spline prefilter's constants (orders ≥ 2).
    spline: Option<SplinePoles>,
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

/// The spline prefilter's pole constants on a device (orders ≥ 2): those of the columns
/// (lines of the plane's rows) then those of the rows (`spline_pole_params`), and the gain.
struct SplinePoles {
    constants: DeviceAlloc,
    npoles: usize,
    gain: f64,
    /// The input plane (rows, columns).
    plane: (usize, usize),
}

impl SplinePoles {
    /// The constants of `plan`'s order and input plane, uploaded to `driver`; `None` for
    /// orders 0 and 1.
    fn new(
        driver: &Arc<dyn Driver>,
        plan: &Plan,
    ) -> std::result::Result<Option<Self>, DriverFault> {
        let order = plan.options.order;
        let poles = filter_poles(order);
        if poles.is_empty() {
            return Ok(None);
        }
        let (ny, nx) = plan.plane_shape_in;
        let mut constants = spline_pole_params(order, ny);
        constants.extend(spline_pole_params(order, nx));
        let bytes = f64_bytes(&constants);
        let alloc = DeviceAlloc::new(driver, bytes.len())?;
        driver.upload_now(&bytes, alloc.ptr)?;
        Ok(Some(SplinePoles {
            constants: alloc,
            npoles: poles.len(),
            gain: filter_gain(poles),
            plane: (ny, nx),
        }))
    }

    /// Queues on `stream` the prefilter of the plane at `plane` in place: every column, then
    /// every row (scipy's order, the CPU's), skipping an axis whose lines have fewer than 2
    /// values (which the filter leaves as they are). With `samples`, the plane's values are
    /// those device samples: the column pass reads them itself where it can (4- and 8-byte
    /// samples, columns of at least 2), else the values kernel writes them into the plane first.
    fn queue(
        &self,
        driver: &Arc<dyn Driver>,
        stream: StreamId,
        plane: DevicePtr,
        samples: Option<SplineSamples>,
    ) -> std::result::Result<(), DriverFault> {
        let (ny, nx) = self.plane;
        if ny == 0 || nx == 0 {
            return Ok(());
        }
        let source = samples.filter(|s| ny >= 2 && s.filter_reads());
        if let (Some(s), None) = (samples, source) {
            let launch = SplineLaunch::new(plane, self.plane, SplineOp::Values(s))?;
            // SAFETY: the caller vouches for the samples; the plane holds ny × nx values.
            unsafe { driver.launch_spline(stream, &launch)? };
        }
        for (axis, n) in [(0u8, ny), (1u8, nx)] {
            if n < 2 {
                continue;
            }
            let op = SplineOp::Filter {
                axis,
                poles: self
                    .constants
                    .ptr
                    .offset(usize::from(axis) * self.npoles * 4 * 8),
                npoles: self.npoles as i32,
                gain: self.gain,
                source: source.filter(|_| axis == 0),
            };
            let launch = SplineLaunch::new(plane, self.plane, op)?;
            // SAFETY: the plane holds ny × nx values, the constants 4 × npoles per axis; the
            // caller vouches for the samples.
            unsafe { driver.launch_spline(stream, &launch)? };
        }
        Ok(())
    }

    /// Prefilters every plane of `planes` in place on a stream of its own, and waits for it;
    /// a plane with samples in `values` gets its values from those device samples.
    ///
    /// # Safety
    /// The samples `values` names must be on the device, each a whole plane.
    unsafe fn run(
        &self,
        driver: &Arc<dyn Driver>,
        planes: &[DevicePtr],
        values: &[Option<SplineSamples>],
    ) -> std::result::Result<(), DriverFault> {
        on_stream(driver, |stream| {
            for (k, &plane) in planes.iter().enumerate() {
                self.queue(driver, stream, plane, values.get(k).copied().flatten())?;
            }
            Ok(())
        })
    }
}

/// Runs `queue` with a new stream of `driver`, then waits for the stream and destroys it
/// (after waiting, whatever failed).
fn on_stream(
    driver: &Arc<dyn Driver>,
    queue: impl FnOnce(StreamId) -> std::result::Result<(), DriverFault>,
) -> std::result::Result<(), DriverFault> {
    let stream = driver.create_stream()?;
    let r = queue(stream).and_then(|()| driver.synchronize(stream));
    if r.is_err() {
        let _ = driver.synchronize(stream);
    }
    driver.destroy_stream(stream);
    r
}

/// The input of one launch: where, of what type, and which window of the plane.
struct KernelInput {
    ptr: DevicePtr,
    input_type: i32,
    big_endian: i32,
    /// Elements per row.
    pitch: usize,
    /// First row, first column, rows, columns of the plane.
    window: (usize, usize, usize, usize),
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
    fn coefficients_from_device(
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
    /// A size beyond the kernels' 32-bit indices ([`kernel_support`] refuses such plans) is a
    /// fault, so the block goes to the CPU.
    fn launches(
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

/// One thread's stream and buffers.
struct Slot {
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

/// One device's part of the executor.
struct Device {
    driver: Arc<dyn Driver>,
    resident: OnceLock<std::result::Result<Resident, DriverFault>>,
    slots: Mutex<Vec<Slot>>,
}

/// The plan's kernel parameters.
struct Params {
    transform: Vec<f64>,
    sampling: Vec<f64>,
    /// How the kernels decode stored samples (see [`kernel_decoding`]).
    decoding: InputDecoding,
}

/// Computes blocks on GPUs (see the module documentation).
pub struct CudaExecutor {
    devices: Vec<Device>,
    params: Params,
    next: AtomicUsize,
    /// Set once the GPU failed: the reason; every later block goes to the CPU.
    failed: OnceLock<String>,
    /// Where the host threads spent their time ([`CudaExecutor::host_times`]).
    times: Timers,
}

fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

impl CudaExecutor {
    /// An executor of `plan` on `drivers` (one per device, blocks spread across them).
    ///
    /// Errors: [`Error::GpuUnavailable`] when the kernels do not cover the plan or no
    /// driver is given.
    pub fn new(plan: &Plan, drivers: Vec<Arc<dyn Driver>>) -> Result<CudaExecutor> {
        Self::with_decoding(plan, drivers, kernel_decoding(plan))
    }

    /// [`CudaExecutor::new`] with the input decoded by the kernels as `decoding` says (none
    /// for inputs given on the device as values).
    fn with_decoding(
        plan: &Plan,
        drivers: Vec<Arc<dyn Driver>>,
        decoding: InputDecoding,
    ) -> Result<CudaExecutor> {
        kernel_support(plan).map_err(Error::GpuUnavailable)?;
        if drivers.is_empty() {
            return Err(Error::GpuUnavailable("no GPU given".into()));
        }
        let Some(transform) = encode_transform(plan) else {
            return Err(Error::GpuUnavailable(
                "this transform is not covered by the GPU kernels".into(),
            ));
        };
        // Inputs reach the kernel as stored samples it decodes with `decoding` (see
        // `kernel_decoding`), or as values already read and rounded as the CPU path reads them.
        let sampling = encode_sampling(plan, &decoding);
        // The kernel variant the plan's blocks will launch, loaded now when a device has it
        // compiled (loaded, or in the on-disk cache); else its compilation starts in the
        // background, and the launches run the general kernel (the same values) until it is
        // ready ([`ready_build`]), as they do when the variant fails.
        // The output type is the launch's: float32 where the plan rounds its results, else
        // float32 or float64 as the caller's outputs are, so both are readied.
        let (input_type, _) = input_of(plan, 0, &decoding).kernel_type();
        let kernel = PlanKernel::from_params(&transform, &sampling);
        let outputs: &[bool] = match plan.rounding.rounds_results() {
            true => &[false],
            false => &[false, true],
        };
        for driver in &drivers {
            for &out_f64 in outputs {
                ready_build(driver, kernel.variant(input_type, out_f64).defines());
            }
        }
        Ok(CudaExecutor {
            devices: drivers
                .into_iter()
                .map(|driver| Device {
                    driver,
                    resident: OnceLock::new(),
                    slots: Mutex::new(Vec::new()),
                })
                .collect(),
            params: Params {
                transform,
                sampling,
                decoding,
            },
            next: AtomicUsize::new(0),
            failed: OnceLock::new(),
            times: Timers::default(),
        })
    }

    /// Where this executor's host threads have spent their time so far, summed over threads
    /// and calls (see [`HostTimes`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ndarray::Array2;
    /// use reproject::engine::{CudaExecutor, Options, Plan};
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
    ///                                 CRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n")?;
    /// let image = Array2::<f32>::ones((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &Options::default())?;
    /// let sim: Arc<dyn Driver> = Arc::new(SimDriver::new(SimConfig::default()));
    /// let executor = Arc::new(CudaExecutor::new(&plan, vec![sim])?);
    /// let plan = plan.with_executor(executor.clone());
    /// let mut data = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[64, 64]));
    /// let mut footprint = data.clone();
    /// plan.compute_into(data.view_mut(), footprint.view_mut())?;
    /// assert!(executor.host_times().blocks > 0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn host_times(&self) -> HostTimes {
        self.times.read()
    }

    /// The plan's part of the kernel variant key.
    fn kernel(&self) -> PlanKernel {
        PlanKernel::from_params(&self.params.transform, &self.params.sampling)
    }

    fn resident<'d>(
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
    fn make_resident(
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

    /// Makes sure the resident planes of `resident` get uploaded: the first caller uploads
    /// them, band by band, before it returns (the others wait for rows as they need them).
    fn feed(&self, driver: &Arc<dyn Driver>, plan: &Plan, resident: &Resident) {
        let (Some(planes), Some(feed)) = (&resident.planes, &resident.feed) else {
            return;
        };
        if feed.claim() {
            // Should this thread unwind, the blocks waiting for rows go to the CPU.
            let _released = ReleaseWaiters(feed);
            let spline = resident.spline.as_ref();
            if let Err(why) = self.upload_bands(driver, plan, planes, feed, spline) {
                feed.fail(why);
            }
        }
    }

    /// Uploads every plane into `planes` band by band (the band's rows of each plane in
    /// turn) through two lanes (a page-locked staging buffer and a stream each): a band is
    /// read on the host while the previous one crosses the bus, and the rows of a band are
    /// published ([`Feed::publish`]) once its copies are synchronized, so that no launch
    /// reads rows a copy still writes. With `spline` (orders ≥ 2) the rows are the values the
    /// prefilter starts from: once every row is up the planes are prefiltered in place, and
    /// only then is any row published.
    fn upload_bands(
        &self,
        driver: &Arc<dyn Driver>,
        plan: &Plan,
        planes: &[DeviceAlloc],
        feed: &Feed,
        spline: Option<&SplinePoles>,
    ) -> std::result::Result<(), Failure> {
        let (ny, nx) = plan.plane_shape_in;
        let inputs: Vec<Input> = (0..planes.len())
            .map(|p| sent_of(plan, p, &self.params.decoding))
            .collect();
        // Where each plane's rows go: the plane, or (spline orders' stored samples) a buffer
        // of samples the plane's values are made from once every row is up.
        let samples = inputs
            .iter()
            .map(|input| match (input, spline) {
                (Input::Raw(raw, t), Some(_)) => Ok(Some((
                    DeviceAlloc::new(driver, (ny * nx * input.elem()).max(8))?,
                    *t,
                    i32::from(raw.big_endian),
                ))),
                _ => Ok(None),
            })
            .collect::<std::result::Result<Vec<_>, DriverFault>>()?;
        let targets: Vec<DevicePtr> = planes
            .iter()
            .zip(&samples)
            .map(|(plane, s)| s.as_ref().map_or(plane.ptr, |(buffer, ..)| buffer.ptr))
            .collect();
        let row_bytes = inputs.iter().map(|i| nx * i.elem()).max().unwrap_or(8);
        let staging = (feed.band_rows.min(ny) * row_bytes).max(8);
        let mut buffers = [
            HostAlloc::new(driver, staging)?,
            HostAlloc::new(driver, staging)?,
        ];
        let first = driver.create_stream()?;
        let streams = match driver.create_stream() {
            Ok(second) => [first, second],
            Err(f) => {
                driver.destroy_stream(first);
                return Err(f.into());
            }
        };
        // The buffers outlive the streams' work, whatever fails. The staging is filled on a
        // crew of host threads spawned once for every band.
        let r = std::thread::scope(|scope| -> std::result::Result<(), Failure> {
            let crew = &Crew::spawn(scope, host_copy_threads());
            // Per lane, while its copy is pending: the rows published once it is done (the
            // band's end after its last plane, else none).
            let mut pending: [Option<usize>; 2] = [None, None];
            let finish = |pending: &mut [Option<usize>; 2], lane: usize| {
                if let Some(rows) = pending[lane].take() {
                    let t = std::time::Instant::now();
                    driver.synchronize(streams[lane])?;
                    self.times.add(Step::UploadWaits, t);
                    if spline.is_none() {
                        feed.publish(rows);
                    }
                }
                Ok::<(), DriverFault>(())
            };
            let pieces: Vec<(usize, usize)> = (0..ny)
                .step_by(feed.band_rows)
                .flat_map(|r0| (0..planes.len()).map(move |p| (r0, p)))
                .collect();
            for (k, &(r0, plane)) in pieces.iter().enumerate() {
                let lane = k % 2;
                // Its previous band must be on the device before the buffer is refilled.
                finish(&mut pending, lane)?;
                let r1 = (r0 + feed.band_rows).min(ny);
                let input = inputs[plane];
                let bytes = (r1 - r0) * nx * input.elem();
                // SAFETY: no copy from this buffer is pending (synchronized above, or none).
                let host = unsafe { buffers[lane].bytes_mut() };
                let t = std::time::Instant::now();
                fill_rows_on(crew, plan, plane, input, r0..r1, 0..nx, &mut host[..bytes])?;
                self.times.add(Step::Staging, t);
                let dst = targets[plane].offset(r0 * nx * input.elem());
                // SAFETY: the plane holds its rows; the buffer is not touched until its
                // stream is synchronized.
                unsafe { driver.upload(streams[lane], buffers[lane].buffer(), 0, dst, bytes)? };
                pending[lane] = Some(if plane + 1 == planes.len() { r1 } else { 0 });
            }
            // The older of the last two pieces first, so rows are published in order.
            let n = pieces.len();
            finish(&mut pending, n % 2)?;
            finish(&mut pending, (n + 1) % 2)?;
            if let Some(spline) = spline {
                let values_f32 = i32::from(plan.rounding.rounds_values());
                let pitch = i64::from(kernel_i32(nx)?);
                let ops: Vec<Option<SplineSamples>> = samples
                    .iter()
                    .map(|s| {
                        s.as_ref()
                            .map(|(buffer, input_type, big_endian)| SplineSamples {
                                input: buffer.ptr,
                                input_type: *input_type,
                                big_endian: *big_endian,
                                pitch,
                                values_f32,
                            })
                    })
                    .collect();
                let ptrs: Vec<DevicePtr> = planes.iter().map(|p| p.ptr).collect();
                // SAFETY: every row of the samples is on the device (synchronized above).
                self.times.time(Step::Prefilter, || unsafe {
                    spline.run(driver, &ptrs, &ops)
                })?;
                feed.publish(ny);
            }
            Ok(())
        });
        for stream in streams {
            if r.is_err() {
                let _ = driver.synchronize(stream);
            }
            driver.destroy_stream(stream);
        }
        r
    }

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
    fn run_block(
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

    /// The order to compute `blocks` in (indices): by the last input row they read from
    /// resident planes (row-major among equals), so the blocks run in the order their rows
    /// arrive ([`Feed`]).
    pub(crate) fn block_order(&self, plan: &Plan, blocks: &[Block]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by_key(|&i| resident_rows(plan, &blocks[i]).end);
        order
    }

    /// The drivers of the devices this executor computes on, in the order blocks go round
    /// them.
    pub(crate) fn drivers(&self) -> Vec<Arc<dyn Driver>> {
        self.devices.iter().map(|d| d.driver.clone()).collect()
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

/// Copies a compact block of kernel values (rows of `width` float64 values when `wire_f64`,
/// else float32) into plane `plane` of the block views, converted to `T` (float32 values widen
/// exactly), with the footprint derived from them as the kernel derives it (1 where the value
/// is not NaN, else 0), so that only the values cross the bus.
fn store<T: OutputSample + StreamedSample>(
    values: &[u8],
    wire_f64: bool,
    data: &mut ArrayViewMut3<T>,
    fp: &mut ArrayViewMut3<T>,
    plane: usize,
    width: usize,
) {
    let data = data.index_axis_mut(Axis(0), plane);
    let fp = fp.index_axis_mut(Axis(0), plane);
    if wire_f64 {
        store_rows(as_wire::<f64>(values), data, fp, width, store_f64_row);
    } else {
        store_rows(as_wire::<f32>(values), data, fp, width, store_f32_row);
    }
    streaming::finish();
}

/// Results in the host buffer as `V` (page-locked buffers are page-aligned).
fn as_wire<V: Copy>(bytes: &[u8]) -> &[V] {
    // SAFETY: any bit pattern is a valid float; align_to leaves what is not aligned aside.
    let (head, values, _) = unsafe { bytes.align_to::<V>() };
    assert!(head.is_empty(), "host buffers are aligned");
    values
}

/// [`store`] row by row: `row` where the views' rows are contiguous (streaming stores, see
/// [`streaming`]), the same conversion one element at a time elsewhere.
fn store_rows<V: Copy, T>(
    values: &[V],
    mut data: ndarray::ArrayViewMut2<T>,
    mut fp: ndarray::ArrayViewMut2<T>,
    width: usize,
    row: fn(&[V], &mut [T], &mut [T]),
) {
    for (r, (mut d, mut f)) in data.outer_iter_mut().zip(fp.outer_iter_mut()).enumerate() {
        let src = &values[r * width..(r + 1) * width];
        match (d.as_slice_mut(), f.as_slice_mut()) {
            (Some(d), Some(f)) => row(src, d, f),
            _ => {
                // A strided view: through contiguous rows of one element each.
                for ((o, f), &v) in d.iter_mut().zip(f.iter_mut()).zip(src) {
                    row(&[v], std::slice::from_mut(o), std::slice::from_mut(f));
                }
            }
        }
    }
}

/// A block no output pixel of which maps into the input: NaN values, zero footprint.
fn fill_empty(out: &mut BlockOut<'_>, plane: usize) {
    match out {
        BlockOut::F64(d, f) => {
            d.index_axis_mut(Axis(0), plane).fill(f64::NAN);
            f.index_axis_mut(Axis(0), plane).fill(0.0);
        }
        BlockOut::F32(d, f) => {
            d.index_axis_mut(Axis(0), plane).fill(f32::NAN);
            f.index_axis_mut(Axis(0), plane).fill(0.0);
        }
    }
}

impl BlockExecutor for CudaExecutor {
    fn name(&self) -> String {
        let ordinals: Vec<String> = self
            .devices
            .iter()
            .map(|d| d.driver.ordinal().to_string())
            .collect();
        format!("cuda:{}", ordinals.join(","))
    }

    fn compute(&self, plan: &Plan, block: &Block, mut out: BlockOut<'_>) -> Result<()> {
        if self.failed.get().is_none() {
            let i = self.next.fetch_add(1, Ordering::Relaxed) % self.devices.len();
            match self.run_block(&self.devices[i], plan, block, &mut out) {
                Ok(()) => return Ok(()),
                Err(Failure::Engine(e)) => return Err(e),
                Err(Failure::Driver(fault)) => {
                    let why = format!(
                        "GPU {} failed on block rows {:?}, columns {:?} ({fault})",
                        self.devices[i].driver.ordinal(),
                        block.rows,
                        block.cols
                    );
                    if self.failed.set(why.clone()).is_ok() {
                        eprintln!(
                            "reproject: warning: {why}; computing the remaining blocks on the CPU"
                        );
                    }
                }
            }
        }
        CpuExecutor.compute(plan, block, out)
    }

    fn preferred_block(
        &self,
        shape: (usize, usize),
        fresh_outputs: bool,
    ) -> Option<(usize, usize)> {
        Some(gpu_block(shape, fresh_outputs))
    }

    fn failure(&self) -> Option<String> {
        self.failed.get().cloned()
    }

    fn as_cuda(&self) -> Option<&CudaExecutor> {
        Some(self)
    }

    fn parallel(&self, requested: Parallel, fresh_outputs: bool) -> Parallel {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Parallel::Threads(block_threads(
            requested,
            self.devices.len(),
            cores,
            fresh_outputs,
        ))
    }
}

impl Plan<'_> {
    /// The plan's executor for device-resident jobs: made once (the parameters and, for
    /// orders ≥ 2, the prefilter's constants uploaded to the first device), reused by every
    /// call.
    fn device_resident(&self) -> Result<&(CudaExecutor, Resident)> {
        let made = self.device_resident.get_or_init(|| {
            // The device the options name (the first of them for `cuda:all`).
            let mut drivers = crate::gpu::drivers(self.options.devices)?;
            drivers.truncate(1);
            // The caller's device inputs are values: nothing to decode.
            let executor = CudaExecutor::with_decoding(self, drivers, InputDecoding::default())?;
            let driver = executor.devices[0].driver.clone();
            // Nothing of the input goes up: every order reads the caller's device input
            // (orders >= 2 through coefficients made from it on the device).
            let resident = executor
                .make_resident(&driver, self, false)
                .map_err(|f| gpu_error("(device-resident job)", &f))?;
            Ok(Arc::new((executor, resident)))
        });
        match made {
            Ok(made) => Ok(made),
            Err(e) => Err(e.clone()),
        }
    }

    /// Makes the device-resident state now ([`Plan::compute_block_on_device`] makes it on
    /// first use otherwise): the GPU opened, the kernels compiled, the parameters uploaded. A
    /// GPU that cannot do the plan fails here. (For orders ≥ 2 the spline coefficients are
    /// made on the device from the device input, at the first block.)
    ///
    /// Errors: [`Error::GpuUnavailable`] without a usable GPU or for a job the kernels do not
    /// cover; [`Error::Gpu`] when the GPU fails.
    ///
    /// ```
    /// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Backend, Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
    ///                                 CRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n")?;
    /// let image = Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let options = Options { backend: Backend::Cuda, ..Options::default() };
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &options)?;
    /// let gpu = reproject::gpu::simulated_device(0).unwrap();
    /// let in_use = gpu.stats().device_bytes_in_use;
    /// plan.prepare_on_device()?;
    /// assert!(gpu.stats().device_bytes_in_use > in_use); // the parameters are on the device
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn prepare_on_device(&self) -> Result<()> {
        self.device_resident().map(|_| ())
    }

    /// Computes the whole output on the GPU with the input and the outputs in GPU memory
    /// (device-resident: no host copies of the input or outputs):
    /// [`Plan::compute_block_on_device`] for one block covering the output plane. `data` and
    /// `footprint` are device addresses of the full output (planes × rows × columns, C order)
    /// of float64 (`out_f64`) or float32.
    ///
    /// # Safety
    /// As for [`Plan::compute_block_on_device`].
    ///
    /// ```
    /// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
    /// # use ndarray::{Array2, ArrayD};
    /// # use reproject::engine::{Backend, Options, Plan};
    /// # use reproject::gpu::{DeviceBuffer, DeviceImage};
    /// # use reproject::io::{ArraySource, SampleType};
    /// # use reproject::wcs::Wcs;
    /// # let h = |cdelt: f64| format!("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    /// #     CRPIX1 = 32.5\nCRPIX2 = 32.5\nCRVAL1 = 10\nCRVAL2 = 20\n\
    /// #     CDELT1 = -{cdelt}\nCDELT2 = {cdelt}\n");
    /// # let wcs_in = Wcs::from_header_str(&h(0.01))?;
    /// # let wcs_out = Wcs::from_header_str(&h(0.005))?; // a zoom on the input's centre
    /// # let image = Array2::from_shape_fn((64, 64), |(y, x)| (y * x) as f32);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// # let options = Options { backend: Backend::Cpu, ..Options::default() };
    /// # let bytes_of = |a: &ArrayD<f64>| -> Vec<u8> {
    /// #     a.iter().flat_map(|v| v.to_ne_bytes()).collect()
    /// # };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[64, 64], &options)?;
    /// let bytes: Vec<u8> = image.iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let input = DeviceBuffer::from_host(&bytes)?;
    /// let image = DeviceImage { ptr: input.device_ptr(), sample: SampleType::F32,
    ///                           big_endian: false, pitch: 64 };
    /// let data = DeviceBuffer::zeros(64 * 64 * 8)?; // float64 values
    /// let footprint = DeviceBuffer::zeros(64 * 64 * 8)?;
    /// unsafe { plan.compute_on_device(&image, data.device_ptr(), footprint.device_ptr(), true)? };
    /// # let mut cpu = ArrayD::<f64>::zeros(vec![64, 64]);
    /// # let mut cpu_footprint = cpu.clone();
    /// plan.compute_into(cpu.view_mut(), cpu_footprint.view_mut())?; // the same plan on the CPU
    /// # assert!(cpu_footprint.iter().all(|&f| f == 1.0)); // every pixel covered: no NaN
    /// assert_eq!(data.to_host()?, bytes_of(&cpu)); // the CPU's bits
    /// assert_eq!(footprint.to_host()?, bytes_of(&cpu_footprint));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub unsafe fn compute_on_device(
        &self,
        input: &crate::gpu::DeviceImage,
        data: u64,
        footprint: u64,
        out_f64: bool,
    ) -> Result<()> {
        let (ny, nx) = self.plane_shape_out();
        let whole = Block {
            rows: 0..ny,
            cols: 0..nx,
        };
        // SAFETY: the caller's promises (# Safety above), for the whole output.
        unsafe { self.compute_block_on_device(&whole, input, data, footprint, out_f64) }
    }

    /// Computes one block on the GPU with the input and the block's outputs in GPU memory
    /// (e.g. one chunk of a dask array of CuPy arrays). The plan's source describes the input
    /// (shape, sample type; its pixels are not read); `input` holds the pixels on the device.
    /// For orders ≥ 2 the first call makes the spline coefficients of every input plane from
    /// `input` on the device (its values as the CPU reads them, then the prefilter, so they
    /// are the CPU's bits) and later calls reuse them: `input` must hold the same pixels at
    /// every call of a plan. No byte of the input crosses to the host. `data` and `footprint` are
    /// device addresses of the block's outputs (planes × block rows × block columns, C order)
    /// of float64 (`out_f64`) or float32.
    ///
    /// Errors: [`Error::GpuUnavailable`] without a usable GPU or for a job the kernels do not
    /// cover; [`Error::Gpu`] when the GPU fails; [`Error::InvalidArgument`], before anything
    /// runs, for a pitch the kernels cannot read, an address that is null or not a multiple
    /// of its elements' size, or an address the driver says the kernels cannot reach: not
    /// GPU memory it knows (host memory, memory freed), another GPU's memory, or an
    /// allocation that ends before the job's last byte (the GPU would fault on each, and its
    /// context with the caller's work be lost, or write past the caller's array).
    ///
    /// # Safety
    /// `input`, `data` and `footprint` must be valid memory of the primary context of the
    /// device the plan's [`Options::devices`](super::Options::devices) names (the first of them
    /// for all devices; the simulator's under `REPROJECT_RS_CUDA_SIM`), of at least the sizes
    /// described, not written by anything else until this returns. (The checks above catch
    /// the usual mistakes where the driver answers; they cannot see memory that another
    /// stream still writes, nor one allocation's bytes the caller meant for another array.)
    ///
    /// ```
    /// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::blocks::Block;
    /// # use reproject::engine::{Backend, Options, Plan};
    /// # use reproject::gpu::{DeviceBuffer, DeviceImage};
    /// # use reproject::io::{ArraySource, SampleType};
    /// # use reproject::wcs::Wcs;
    /// # let h = |cdelt: f64| format!("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    /// #     CRPIX1 = 32.5\nCRPIX2 = 32.5\nCRVAL1 = 10\nCRVAL2 = 20\n\
    /// #     CDELT1 = -{cdelt}\nCDELT2 = {cdelt}\n");
    /// # let wcs_in = Wcs::from_header_str(&h(0.01))?;
    /// # let wcs_out = Wcs::from_header_str(&h(0.005))?; // a zoom on the input's centre
    /// # let image = Array2::from_shape_fn((64, 64), |(y, x)| (y * x) as f32);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// # let options = Options { backend: Backend::Cpu, ..Options::default() };
    /// # let bytes_of = |a: &Array3<f32>| -> Vec<u8> {
    /// #     a.iter().flat_map(|v| v.to_ne_bytes()).collect()
    /// # };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[64, 64], &options)?;
    /// let bytes: Vec<u8> = image.iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let input = DeviceBuffer::from_host(&bytes)?;
    /// let image = DeviceImage { ptr: input.device_ptr(), sample: SampleType::F32,
    ///                           big_endian: false, pitch: 64 };
    /// let block = Block { rows: 32..64, cols: 0..16 };
    /// let data = DeviceBuffer::zeros(32 * 16 * 4)?; // float32 values
    /// let footprint = DeviceBuffer::zeros(32 * 16 * 4)?;
    /// let (d, f) = (data.device_ptr(), footprint.device_ptr());
    /// unsafe { plan.compute_block_on_device(&block, &image, d, f, false)? };
    /// # let mut cpu = Array3::<f32>::zeros((1, 32, 16)); // planes × block rows × block columns
    /// # let mut cpu_footprint = cpu.clone();
    /// plan.compute_block(&block, cpu.view_mut(), cpu_footprint.view_mut())?; // on the CPU
    /// # assert!(cpu_footprint.iter().all(|&f| f == 1.0)); // every pixel covered: no NaN
    /// assert_eq!(data.to_host()?, bytes_of(&cpu)); // the CPU's bits
    /// assert_eq!(footprint.to_host()?, bytes_of(&cpu_footprint));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub unsafe fn compute_block_on_device(
        &self,
        block: &Block,
        input: &crate::gpu::DeviceImage,
        data: u64,
        footprint: u64,
        out_f64: bool,
    ) -> Result<()> {
        let (in_ny, in_nx) = self.plane_shape_in;
        if input.pitch < in_nx {
            return Err(Error::InvalidArgument(format!(
                "device input pitch {} is narrower than the input's {in_nx} columns",
                input.pitch
            )));
        }
        if i32::try_from(input.pitch).is_err() {
            return Err(Error::InvalidArgument(format!(
                "device input pitch {} exceeds the kernels' {} elements",
                input.pitch,
                i32::MAX
            )));
        }
        self.check_block(block, None)?;
        if block.is_empty() {
            return Ok(());
        }
        let out_elem = if out_f64 { 8 } else { 4 };
        let elem = crate::io::sample_size(input.sample);
        check_device_addresses(&[
            ("input", input.ptr, elem),
            ("data output", data, out_elem),
            ("footprint output", footprint, out_elem),
        ])?;
        let Some(input_type) = input_type(input.sample) else {
            return Err(Error::GpuUnavailable(format!(
                "device inputs of {:?} samples are not supported",
                input.sample
            )));
        };
        let (executor, resident) = self.device_resident()?;
        let driver = executor.devices[0].driver.clone();
        let (blk_ny, blk_nx) = (block.rows.len(), block.cols.len());
        // The bytes the kernels reach from each address: every plane's rows at the pitch (the
        // last row to its last column), and the block's outputs.
        let input_bytes = (self.planes * in_ny)
            .saturating_sub(1)
            .saturating_mul(input.pitch)
            .saturating_add(in_nx)
            .saturating_mul(elem);
        let out_bytes = self.planes * blk_ny * blk_nx * out_elem;
        for (what, address, bytes) in [
            ("input", input.ptr, input_bytes),
            ("data output", data, out_bytes),
            ("footprint output", footprint, out_bytes),
        ] {
            check_device_memory(driver.as_ref(), what, DevicePtr(address), bytes)?;
        }
        let coefficients = resident
            .coefficients_from_device(&driver, self, input, input_type)
            .map_err(|f| gpu_error("(device-resident job: the spline prefilter)", &f))?;
        let stream = driver
            .create_stream()
            .map_err(|f| gpu_error("(device-resident job)", &f))?;
        let launched = || -> std::result::Result<(), DriverFault> {
            for plane in 0..self.planes {
                // Orders >= 2 sample the coefficients made on the device.
                let (ptr, (t, big), pitch) = match &coefficients {
                    Some(planes) => (planes[plane], (1, 0), in_nx),
                    None => (
                        DevicePtr(input.ptr).offset(plane * in_ny * input.pitch * elem),
                        (input_type, i32::from(input.big_endian)),
                        input.pitch,
                    ),
                };
                let offset = plane * blk_ny * blk_nx * out_elem;
                let source = KernelInput {
                    ptr,
                    input_type: t,
                    big_endian: big,
                    pitch,
                    window: (0, 0, in_ny, in_nx),
                };
                let outputs = (
                    DevicePtr(data).offset(offset),
                    DevicePtr(footprint).offset(offset),
                );
                for launch in resident.launches(&driver, self, block, &source, outputs, out_f64)? {
                    // SAFETY: the caller vouches for the device memory (see the function's
                    // safety section); the parameters and coefficients are the plan's.
                    unsafe { driver.launch(stream, &launch)? };
                }
            }
            driver.synchronize(stream)
        };
        let r = launched().map_err(|f| {
            let at = format!("rows {:?}, columns {:?}", block.rows, block.cols);
            gpu_error(&at, &f)
        });
        if r.is_err() {
            let _ = driver.synchronize(stream);
        }
        driver.destroy_stream(stream);
        r
    }
}

/// The build a launch runs: `wanted` when `driver` has it compiled and loads it, else the
/// general kernel (the same values), with `wanted`'s compilation set off in the background
/// so that a job never waits for NVRTC (a few seconds a variant on the H100 machine) and later
/// launches run it once it is ready.
fn ready_build(driver: &Arc<dyn Driver>, wanted: KernelDefines) -> KernelDefines {
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

/// Refuses device addresses a kernel cannot read or write: null, or not a multiple of the
/// size of their elements (`(what, address, element bytes)`). The GPU would fault on either,
/// and its faults (illegal or misaligned address) leave the context, the caller's CuPy work
/// included, unusable for the rest of the process.
fn check_device_addresses(addresses: &[(&str, u64, usize)]) -> Result<()> {
    for &(what, address, size) in addresses {
        if address == 0 {
            return Err(Error::InvalidArgument(format!(
                "the device {what} address is null"
            )));
        }
        if address % size as u64 != 0 {
            return Err(Error::InvalidArgument(format!(
                "the device {what} address {address:#x} is not a multiple of its {size}-byte \
                 elements"
            )));
        }
    }
    Ok(())
}

/// Refuses a caller's device address whose `bytes` the kernels could not reach on the plan's
/// device (see [`judge_device_memory`]). A query the driver refuses checks nothing (the
/// launch then reports a broken context) unless the context is already broken.
fn check_device_memory(
    driver: &dyn Driver,
    what: &str,
    ptr: DevicePtr,
    bytes: usize,
) -> Result<()> {
    match driver.memory_at(ptr) {
        Ok(memory) => judge_device_memory(memory, driver.ordinal(), what, ptr, bytes),
        Err(fault) if fault.kind == FaultKind::Sticky => {
            Err(gpu_error("(device-resident job)", &fault))
        }
        Err(_) => Ok(()),
    }
}

/// Whether `bytes` from `ptr` in `memory` are reachable by the kernels of GPU `ordinal`: not
/// memory the driver does not know (host memory, memory given back), nor memory of another
/// GPU, nor past the end of the allocation. The GPU would fault there (ending its context,
/// and the caller's work with it) or write into the caller's other arrays.
fn judge_device_memory(
    memory: MemoryAt,
    ordinal: usize,
    what: &str,
    ptr: DevicePtr,
    bytes: usize,
) -> Result<()> {
    let refused = |why: String| {
        Err(Error::InvalidArgument(format!(
            "the device {what} address {:#x} {why}",
            ptr.0
        )))
    };
    if let MemoryAt::Device {
        ordinal: Some(owner),
        ..
    } = memory
        && owner != ordinal
    {
        return refused(format!(
            "is memory of GPU {owner}, not of the plan's GPU {ordinal}"
        ));
    }
    match memory.room_from(ptr) {
        Some(0) => refused("is not in GPU memory the driver knows (host memory, or freed?)".into()),
        Some(room) if room < bytes => refused(format!(
            "has {room} bytes to the end of its allocation, where the job reaches {bytes}"
        )),
        _ => Ok(()),
    }
}

/// A driver fault as an error naming where it happened.
fn gpu_error(block: &str, fault: &DriverFault) -> Error {
    Error::Gpu {
        block: block.to_string(),
        message: fault.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Null addresses and addresses off their elements' alignment are refused, each named.
    #[test]
    fn device_addresses_must_be_aligned_to_their_elements() {
        assert!(check_device_addresses(&[("input", 0x1001, 1), ("data", 0x1008, 8)]).is_ok());
        for (bad, named) in [
            (
                [("input", 0x1002, 4), ("data", 0x1008, 8)],
                "input address 0x1002",
            ),
            (
                [("input", 0x1004, 4), ("data", 0x1004, 8)],
                "data address 0x1004",
            ),
            (
                [("input", 0, 1), ("data", 0x1008, 8)],
                "input address is null",
            ),
        ] {
            let e = check_device_addresses(&bad).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(e.to_string().contains(named), "{e}");
        }
    }

    /// Caller's device memory the kernels cannot reach is refused, each case named: memory
    /// the driver does not know, another GPU's, or an allocation that ends before the job's
    /// last byte. Memory every GPU addresses, or whose extent the driver does not tell, is
    /// taken.
    #[test]
    fn device_memory_must_be_the_plans_gpu_s_and_hold_the_job() {
        let (start, at) = (DevicePtr(0x10_0000), DevicePtr(0x10_0100));
        let device = |ordinal| MemoryAt::Device {
            ordinal: Some(ordinal),
            allocation: Some((start, 0x1000)),
        };
        let judge = |memory, bytes| judge_device_memory(memory, 1, "input", at, bytes);
        assert!(judge(device(1), 0xf00).is_ok()); // to the allocation's last byte
        let shared = MemoryAt::Shared {
            allocation: Some((start, 0x1000)),
        };
        assert!(judge(shared, 0xf00).is_ok());
        let untold = MemoryAt::Device {
            ordinal: None,
            allocation: None,
        };
        assert!(judge(untold, usize::MAX).is_ok());
        for (memory, bytes, named) in [
            (
                device(1),
                0xf01,
                "has 3840 bytes to the end of its allocation",
            ),
            (shared, 0xf01, "has 3840 bytes"),
            (device(0), 8, "memory of GPU 0, not of the plan's GPU 1"),
            (MemoryAt::Unknown, 8, "not in GPU memory the driver knows"),
        ] {
            let e = judge(memory, bytes).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(e.to_string().contains(named), "{named}: {e}");
            assert!(e.to_string().contains("input address 0x100100"), "{e}");
        }
    }

    /// Each crew thread stages its share of a band, a megabyte at least.
    #[test]
    fn every_crew_thread_stages_a_share_of_a_band() {
        // A 16 MB band of a 16384-wide float32 plane on 8 threads: 32 rows (2 MB) each.
        assert_eq!(staging_share(256, 65536, 8), 32);
        assert_eq!(256usize.div_ceil(staging_share(256, 65536, 8)), 8);
        // Narrow rows: a megabyte a thread at least.
        assert_eq!(staging_share(4096, 1024, 8), 1024);
        assert_eq!(staging_share(10, 4, 0), 1 << 18);
        // Rows wider than the minimum: one row at least.
        assert_eq!(staging_share(3, 4 << 20, 8), 1);
    }

    /// Blocks of 1024 rows, of 128 into fresh outputs, 2048 columns; smaller planes whole.
    #[test]
    fn gpu_blocks_are_short_into_fresh_outputs() {
        assert_eq!(gpu_block((16384, 16384), false), (1024, 2048));
        assert_eq!(gpu_block((16384, 16384), true), (128, 2048));
        assert_eq!(gpu_block((100, 300), true), (100, 300));
        assert_eq!(gpu_block((0, 0), false), (1, 1));
    }

    /// A GPU job on the H100 machine's 16 cores runs 8 block threads, serial or on every core
    /// (a serial one had two: 730 ms against 63 ms for a 16384² job from Python; sixteen were
    /// slower than eight), two per device at least; an explicit larger count is given. Into
    /// fresh outputs, every core up to 16.
    #[test]
    fn gpu_jobs_keep_a_copy_thread_per_core_up_to_8() {
        use Parallel::{AllCores, Serial, Threads};
        let reused = |requested, devices, cores| block_threads(requested, devices, cores, false);
        assert_eq!(reused(Serial, 1, 16), 8);
        assert_eq!(reused(AllCores, 1, 16), 8);
        assert_eq!(reused(Threads(2), 1, 16), 8);
        assert_eq!(reused(Threads(12), 1, 16), 12);
        assert_eq!(reused(AllCores, 1, 4), 4);
        assert_eq!(reused(Serial, 4, 2), 8);
        assert_eq!(reused(AllCores, 8, 16), 16);
        assert_eq!(reused(Serial, 1, 1), 2);
        assert_eq!(copy_threads_of(0), 1);
        let fresh = |requested, devices, cores| block_threads(requested, devices, cores, true);
        assert_eq!(fresh(Serial, 1, 16), 16);
        assert_eq!(fresh(AllCores, 1, 16), 16);
        assert_eq!(fresh(AllCores, 1, 64), 16);
        assert_eq!(fresh(Threads(24), 1, 16), 24);
        assert_eq!(fresh(AllCores, 1, 4), 4);
        assert_eq!(fresh(Serial, 4, 2), 8);
        assert_eq!(fresh(Serial, 1, 0), 2);
    }
}

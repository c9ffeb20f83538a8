//! The driver seam: every CUDA driver operation a GPU pipeline uses, behind one trait, with two
//! implementations: the real driver (`CudaDriver` in `gpu/cuda.rs`, through `cudarc`) and a simulator
//! ([`super::sim`]) that runs the kernels compiled as host C++.
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
//! let sim = SimDriver::new(SimConfig { fail_at: Some((0, FaultKind::OutOfMemory)), ..SimConfig::default() });
//! let fault = sim.alloc(1024).unwrap_err();
//! assert_eq!(fault.kind, FaultKind::OutOfMemory);
//! assert!(sim.alloc(1024).is_ok());
//! ```

use std::fmt;

use super::variant::KernelDefines;
use super::GpuInfo;

/// How many times a driver called one function of the CUDA driver API, and how long those
/// calls took in all (see [`Driver::call_counts`]): for reading on hardware where a job's
/// host threads wait.
///
/// ```
/// use reproject::gpu::driver::CallCount;
/// use std::time::Duration;
/// let c = CallCount { name: "cuMemAlloc", calls: 2, time: Duration::from_millis(3) };
/// assert_eq!(c.to_string(), "cuMemAlloc 2 (3.0 ms)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallCount {
    /// The driver API function.
    pub name: &'static str,
    /// How many times it was called.
    pub calls: u64,
    /// The calls' time, summed over threads.
    pub time: std::time::Duration,
}

impl fmt::Display for CallCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} ({:.1} ms)",
            self.name,
            self.calls,
            self.time.as_secs_f64() * 1e3
        )
    }
}

/// The calls made between two readings of [`Driver::call_counts`], `before` and `after`:
/// the functions called meanwhile, with their counts and times in that span.
///
/// ```
/// use reproject::gpu::driver::{calls_between, CallCount};
/// use std::time::Duration;
/// let at = |calls, ms| CallCount { name: "cuMemAlloc", calls, time: Duration::from_millis(ms) };
/// let span = calls_between(&[at(1, 2)], &[at(3, 5)]);
/// assert_eq!(span, vec![at(2, 3)]);
/// assert!(calls_between(&[at(1, 2)], &[at(1, 2)]).is_empty());
/// ```
pub fn calls_between(before: &[CallCount], after: &[CallCount]) -> Vec<CallCount> {
    after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.name == a.name);
            let calls = a.calls - b.map_or(0, |b| b.calls);
            (calls > 0).then(|| CallCount {
                name: a.name,
                calls,
                time: a
                    .time
                    .saturating_sub(b.map_or(Default::default(), |b| b.time)),
            })
        })
        .collect()
}

/// How a driver call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Out of device (or page-locked host) memory; the context stays usable.
    OutOfMemory,
    /// A sticky error (an illegal address, say): the context is poisoned and every later call
    /// on it fails.
    Sticky,
    /// Any other failure of one call (a launch that did not start, an invalid value).
    Other,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultKind::OutOfMemory => "out of memory",
            FaultKind::Sticky => "sticky error (context poisoned)",
            FaultKind::Other => "error",
        })
    }
}

/// A failed driver call: which call, what kind of failure, the driver's message.
///
/// ```
/// use reproject::gpu::driver::{DriverFault, FaultKind};
/// let f = DriverFault::new("cuMemAlloc", FaultKind::OutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY");
/// assert_eq!(f.to_string(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverFault {
    /// The driver call, e.g. `cuLaunchKernel`.
    pub call: &'static str,
    /// What kind of failure.
    pub kind: FaultKind,
    /// The driver's words.
    pub message: String,
}

impl DriverFault {
    /// A fault of `call`.
    pub fn new(call: &'static str, kind: FaultKind, message: impl Into<String>) -> DriverFault {
        DriverFault {
            call,
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for DriverFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.message)
    }
}

/// The result of a driver call.
pub type DriverResult<T> = std::result::Result<T, DriverFault>;

/// A device address (of an allocation, or inside one).
///
/// ```
/// use reproject::gpu::driver::DevicePtr;
/// assert_eq!(DevicePtr(4096).offset(8), DevicePtr(4104));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The address `bytes` further.
    pub fn offset(self, bytes: usize) -> DevicePtr {
        DevicePtr(self.0 + bytes as u64)
    }
}

/// A stream: operations queued on one stream run in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId(pub u64);

/// Page-locked host memory allocated by a driver ([`Driver::alloc_host`]); freed with
/// [`Driver::free_host`].
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::{SimConfig, SimDriver};
/// let sim = SimDriver::new(SimConfig::default());
/// let mut buf = sim.alloc_host(16)?;
/// // SAFETY: no copy is queued on the buffer.
/// unsafe { buf.as_mut_slice() }.fill(7);
/// assert_eq!(unsafe { buf.as_slice() }[15], 7);
/// sim.free_host(buf);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug)]
pub struct HostBuffer {
    ptr: *mut u8,
    len: usize,
    /// Bytes allocated (`len` or more, for a buffer reused for a smaller request).
    capacity: usize,
}

// SAFETY: the buffer is plain memory owned by whoever holds the handle; the driver only
// reads or writes it through copies the holder queued.
unsafe impl Send for HostBuffer {}
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// A handle to `len` bytes at `ptr` (for driver implementations).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes until the buffer is freed by
    /// the driver that made it.
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> HostBuffer {
        HostBuffer {
            ptr,
            len,
            capacity: len,
        }
    }

    /// The same allocation seen as `len` bytes (at most its capacity).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig::default());
    /// let buf = sim.alloc_host(64)?.with_len(16);
    /// assert_eq!((buf.len(), buf.capacity()), (16, 64));
    /// sim.free_host(buf);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn with_len(self, len: usize) -> HostBuffer {
        HostBuffer {
            len: len.min(self.capacity),
            ..self
        }
    }

    /// Bytes allocated.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The bytes.
    ///
    /// # Safety
    /// No copy into the buffer may be pending (synchronize the stream it was queued on).
    pub unsafe fn as_slice(&self) -> &[u8] {
        std::slice::from_raw_parts(self.ptr, self.len)
    }

    /// The bytes, for writing.
    ///
    /// # Safety
    /// No copy from or into the buffer may be pending.
    pub unsafe fn as_mut_slice(&mut self) -> &mut [u8] {
        std::slice::from_raw_parts_mut(self.ptr, self.len)
    }
}

/// The arguments of one launch of the block kernel `rp_reproject_block` (see
/// `kernels/reproject.cu` for their meaning), with its grid and the build of the kernel it
/// runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockLaunch {
    /// Which build of the kernel runs it (the general one, or a specialised variant).
    pub variant: KernelDefines,
    /// Thread blocks (x, y).
    pub grid: (u32, u32),
    /// Threads per block (x, y).
    pub threads: (u32, u32),
    /// The transform parameters (f64 array), or the parameters parsed once
    /// ([`BlockLaunch::parse_params`]) when `sampling` is null.
    pub transform: DevicePtr,
    /// The sampling parameters (f64 array); null (0) when `transform` holds parsed parameters.
    pub sampling: DevicePtr,
    /// Window element (0, 0).
    pub input: DevicePtr,
    /// Input element type code (0 f32, 1 f64, 2 u8, 3 i16, 4 i32, 5 i64).
    pub input_type: i32,
    /// Whether input samples are big-endian.
    pub big_endian: i32,
    /// Input elements per row.
    pub in_pitch: i64,
    /// The window: first row, first column, rows, columns.
    pub window: (i32, i32, i32, i32),
    /// The input plane (rows, columns).
    pub plane: (i32, i32),
    /// The block's first output pixel (row, column).
    pub out_origin: (i32, i32),
    /// The block (rows, columns).
    pub block: (i32, i32),
    /// Output values at block element (0, 0).
    pub out: DevicePtr,
    /// Output footprint at block element (0, 0).
    pub footprint: DevicePtr,
    /// Whether outputs are float64 (else float32); [`PARSE_PARAMS`]: the launch parses the
    /// parameters into `out` instead ([`BlockLaunch::parse_params`]).
    pub out_f64: i32,
    /// Output elements per row (bytes of `out` for a parse).
    pub out_pitch: i64,
}

/// `BlockLaunch::out_f64` of a launch that parses the parameters once into its `out`
/// (`RP_PARSE_PARAMS` in `kernels/reproject.cu`).
pub const PARSE_PARAMS: i32 = 2;

impl BlockLaunch {
    /// The launch of `variant` that parses the parameter arrays `transform` and `sampling`
    /// once into `out` (`capacity` bytes), for the launches of that build that then read them
    /// from there (their `transform`, with a null `sampling`): one thread, no pixel.
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let parse = BlockLaunch::parse_params(Default::default(), DevicePtr(256), DevicePtr(512), DevicePtr(4096), 16384)?;
    /// assert!(parse.parses() && parse.output_bytes() == 16384 && parse.input_bytes() == 0);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn parse_params(
        variant: KernelDefines,
        transform: DevicePtr,
        sampling: DevicePtr,
        out: DevicePtr,
        capacity: usize,
    ) -> Result<BlockLaunch, DriverFault> {
        let out_pitch = i64::try_from(capacity).map_err(|_| {
            DriverFault::new(
                "cuLaunchKernel",
                FaultKind::Other,
                format!("{capacity} bytes exceed 64 bits"),
            )
        })?;
        Ok(BlockLaunch {
            variant,
            grid: (1, 1),
            threads: (1, 1),
            transform,
            sampling,
            input: DevicePtr(0),
            input_type: 0,
            big_endian: 0,
            in_pitch: 0,
            window: (0, 0, 0, 0),
            plane: (0, 0),
            out_origin: (0, 0),
            block: (0, 0),
            out,
            footprint: DevicePtr(0),
            out_f64: PARSE_PARAMS,
            out_pitch,
        })
    }

    /// Whether this launch parses the parameters ([`BlockLaunch::parse_params`]).
    pub fn parses(&self) -> bool {
        self.out_f64 == PARSE_PARAMS
    }

    /// What CUDA refuses in this launch's configuration (`CUDA_ERROR_INVALID_VALUE`): a
    /// grid of 0 or more than 2^31 - 1 blocks along x or 65,535 along y, or a thread block of
    /// 0 or more than 1024 threads; `None` when it may launch.
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let mut launch = BlockLaunch {
    ///     variant: Default::default(),
    ///     grid: (4, 65_535), threads: (32, 8), transform: DevicePtr(256), sampling: DevicePtr(512),
    ///     input: DevicePtr(1024), input_type: 0, big_endian: 0, in_pitch: 64,
    ///     window: (0, 0, 64, 64), plane: (64, 64), out_origin: (0, 0), block: (524_280, 128),
    ///     out: DevicePtr(4096), footprint: DevicePtr(8192), out_f64: 1, out_pitch: 128,
    /// };
    /// assert_eq!(launch.invalid_configuration(), None);
    /// launch.grid.1 += 1;
    /// assert!(launch.invalid_configuration().unwrap().contains("65536"));
    /// launch.grid.1 = 1;
    /// launch.threads = (64, 32);
    /// assert!(launch.invalid_configuration().is_some());
    /// ```
    pub fn invalid_configuration(&self) -> Option<String> {
        invalid_grid(self.grid, self.threads)
    }

    /// Bytes per input element of `input_type` (0 for an unknown code).
    pub fn input_elem(&self) -> usize {
        input_elem(self.input_type)
    }

    /// Bytes per output element.
    pub fn out_elem(&self) -> usize {
        if self.out_f64 != 0 {
            8
        } else {
            4
        }
    }

    /// The bytes of input the kernel reads, from `input`.
    pub fn input_bytes(&self) -> usize {
        let (_, _, ny, nx) = self.window;
        if ny <= 0 || nx <= 0 {
            return 0;
        }
        ((ny as usize - 1) * self.in_pitch.max(0) as usize + nx as usize) * self.input_elem()
    }

    /// The bytes of each output the kernel writes, from `out` and `footprint` (for a parse,
    /// the bytes of `out` it may write; no footprint).
    pub fn output_bytes(&self) -> usize {
        if self.parses() {
            return usize::try_from(self.out_pitch).unwrap_or(0);
        }
        let (ny, nx) = self.block;
        if ny <= 0 || nx <= 0 {
            return 0;
        }
        ((ny as usize - 1) * self.out_pitch.max(0) as usize + nx as usize) * self.out_elem()
    }
}

/// What one launch of the accumulate kernel `rp_accumulate` does (see
/// `kernels/accumulate.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccumulateOp {
    /// Every accumulator pixel of the block: data = the first constant, footprint = 0.
    Fill,
    /// data += v·w, footprint += w (a mean's sums).
    Mean,
    /// As `Mean` (a sum's).
    Sum,
    /// Where the footprint is 0: data = v, footprint = w.
    First,
    /// Where w > 0: data = v, footprint = w.
    Last,
    /// Where w > 0 and v < data: data = v, footprint = w.
    Min,
    /// Where w > 0 and v > data: data = v, footprint = w.
    Max,
}

impl AccumulateOp {
    /// The kernel's `op` code.
    ///
    /// ```
    /// use reproject::gpu::driver::AccumulateOp;
    /// assert_eq!(AccumulateOp::Fill.code(), 0);
    /// assert_eq!(AccumulateOp::Max.code(), 6);
    /// ```
    pub fn code(self) -> i32 {
        match self {
            AccumulateOp::Fill => 0,
            AccumulateOp::Mean => 1,
            AccumulateOp::Sum => 2,
            AccumulateOp::First => 3,
            AccumulateOp::Last => 4,
            AccumulateOp::Min => 5,
            AccumulateOp::Max => 6,
        }
    }
}

/// The arguments of one launch of the accumulate kernel `rp_accumulate`
/// (`kernels/accumulate.cu`): one input's samples over a part of an output block added into
/// the block's float64 accumulators, with its grid (one thread per pixel of the part).
#[derive(Debug, Clone, PartialEq)]
pub struct AccumulateLaunch {
    /// Thread blocks (x, y).
    pub grid: (u32, u32),
    /// Threads per block (x, y).
    pub threads: (u32, u32),
    /// The input's float64 samples over the part (planes × rows × columns; not read by
    /// [`AccumulateOp::Fill`]); `None` when it has none there (every sample NaN).
    pub values: Option<DevicePtr>,
    /// Its reprojected weights in the same layout, if it has weights.
    pub weights: Option<DevicePtr>,
    /// What the launch does.
    pub op: AccumulateOp,
    /// The background correction: 0 none, 1 the constant `constants.0`, 2 the plane
    /// `constants.0 + constants.1·x + constants.2·y`. `constants.0` is the fill value of
    /// [`AccumulateOp::Fill`].
    pub correction: i32,
    /// The correction's (or the fill's) constants.
    pub constants: (f64, f64, f64),
    /// Planes.
    pub planes: i32,
    /// The part (rows, columns).
    pub part: (i32, i32),
    /// The output pixel (row, column) of part element (0, 0).
    pub part_origin: (i32, i32),
    /// The block element (row, column) of part element (0, 0).
    pub in_block: (i32, i32),
    /// The block (rows, columns).
    pub block: (i32, i32),
    /// The block's value accumulator (planes × rows × columns).
    pub data: DevicePtr,
    /// The block's footprint accumulator.
    pub footprint: DevicePtr,
}

impl AccumulateLaunch {
    /// What CUDA refuses in this launch's configuration, as [`BlockLaunch::invalid_configuration`].
    ///
    /// ```
    /// use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// let launch = AccumulateLaunch {
    ///     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    ///     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    ///     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    ///     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// };
    /// assert_eq!(launch.invalid_configuration(), None);
    /// assert_eq!(launch.block_bytes(), 256 * 256 * 8);
    /// ```
    pub fn invalid_configuration(&self) -> Option<String> {
        invalid_grid(self.grid, self.threads)
    }

    /// The bytes of each accumulator (the whole block, every plane).
    pub fn block_bytes(&self) -> usize {
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        n(self.planes) * n(self.block.0) * n(self.block.1) * 8
    }

    /// The bytes of samples (and of weights) the launch reads; 0 for [`AccumulateOp::Fill`].
    pub fn part_bytes(&self) -> usize {
        if self.op == AccumulateOp::Fill {
            return 0;
        }
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        n(self.planes) * n(self.part.0) * n(self.part.1) * 8
    }
}

/// The samples of a device input plane as the spline prefilter reads them: no decoding (device
/// inputs are values), rounded to float32 where `values_f32` is set.
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, SplineSamples};
/// // A float32 plane of 4 rows of 5 samples, 6 per row in memory.
/// let s = SplineSamples { input: DevicePtr(1 << 20), input_type: 0, big_endian: 0, pitch: 6, values_f32: 0 };
/// assert_eq!(s.bytes((4, 5)), (3 * 6 + 5) * 4);
/// assert!(s.filter_reads());
/// assert!(!SplineSamples { input_type: 3, ..s }.filter_reads()); // int16: by the values kernel
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplineSamples {
    /// The input's element (0, 0).
    pub input: DevicePtr,
    /// Input element type code (as [`BlockLaunch::input_type`]).
    pub input_type: i32,
    /// Whether input samples are big-endian.
    pub big_endian: i32,
    /// Input elements per row.
    pub pitch: i64,
    /// Whether values are rounded to float32 (reproject's cast of integer input).
    pub values_f32: i32,
}

impl SplineSamples {
    /// The bytes from the plane's first sample to its last, for a plane of `plane` (rows,
    /// columns); 0 for an empty one or an unknown type.
    pub fn bytes(&self, plane: (usize, usize)) -> usize {
        let (ny, nx) = plane;
        if ny == 0 || nx == 0 {
            return 0;
        }
        let pitch = usize::try_from(self.pitch).unwrap_or(0);
        ((ny - 1) * pitch + nx) * input_elem(self.input_type)
    }

    /// Whether the filter's column pass reads these samples itself ([`SplineOp::Filter`]'s
    /// `source`): 4- and 8-byte types (float32, float64, int32, int64), which `cp.async`
    /// copies whole. The others go through [`SplineOp::Values`] first.
    pub fn filter_reads(&self) -> bool {
        matches!(self.input_type, 0 | 1 | 4 | 5)
    }
}

/// What one launch of the spline prefilter's kernels does (`kernels/spline_values.cu`,
/// `kernels/spline.cu`) to a plane of float64 values.
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
/// // The values of a 4 x 5 float32 input (5 elements per row), not rounded.
/// let s = SplineSamples { input: DevicePtr(1 << 20), input_type: 0, big_endian: 0, pitch: 5, values_f32: 0 };
/// let launch = SplineLaunch::new(DevicePtr(4096), (4, 5), SplineOp::Values(s))?;
/// assert_eq!(launch.reads(), (DevicePtr(1 << 20), 4 * 5 * 4));
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplineOp {
    /// `rp_spline_values`: writes the plane from a device input's samples.
    Values(SplineSamples),
    /// `rp_spline_filter`: filters every line along `axis` (0: the columns, 1: the rows) in
    /// place, with the pole constants of that axis (`4 × npoles` doubles, see
    /// `spline_pole_params` in `src/interp/spline.rs`) and the filter's gain; with a `source`,
    /// the lines' values are read from those samples (4- and 8-byte types,
    /// [`SplineSamples::filter_reads`]) and the plane is only written, so no values launch
    /// precedes it.
    Filter {
        /// 0 (columns) or 1 (rows).
        axis: u8,
        /// The pole constants.
        poles: DevicePtr,
        /// Poles (1 or 2).
        npoles: i32,
        /// The filter's gain.
        gain: f64,
        /// The samples the values are read from, if not the plane's.
        source: Option<SplineSamples>,
    },
}

/// The arguments of one launch of the spline prefilter's kernels on a row-major plane of
/// float64 values (`data`, `plane.0 × plane.1`), with its one-dimensional grid: one thread per
/// pixel ([`SplineOp::Values`]) or per line ([`SplineOp::Filter`]).
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
/// let filter = SplineOp::Filter { axis: 0, poles: DevicePtr(256), npoles: 1, gain: 6.0, source: None };
/// let launch = SplineLaunch::new(DevicePtr(4096), (100, 300), filter)?;
/// assert_eq!(launch.filter_lines(), Some((300, 100, 1, 300))); // 300 columns of 100
/// assert_eq!(launch.data_bytes(), 100 * 300 * 8);
/// assert_eq!(launch.invalid_configuration(), None);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SplineLaunch {
    /// Thread blocks (one-dimensional).
    pub grid: u32,
    /// Threads per block.
    pub threads: u32,
    /// The plane of values (read and written in place; written by [`SplineOp::Values`]).
    pub data: DevicePtr,
    /// The plane (rows, columns).
    pub plane: (i32, i32),
    /// What the launch does.
    pub op: SplineOp,
}

/// Threads per block of the spline values launches (one thread per pixel).
const SPLINE_THREADS: u32 = 128;

/// Threads per block of the spline filter launches (one thread per line): a plane has few lines
/// (16384 fill only 4 warps of each of an H100's 132 SMs), so warp-sized blocks spread them over
/// every SM (4096 lines in blocks of 128 would leave 100 SMs idle). The kernel's shared ring has
/// a lane for each (`RP_RING_LANES` of `kernels/spline.cu`).
const FILTER_THREADS: u32 = 32;

impl SplineLaunch {
    /// The launch of `op` on the `plane` (rows, columns) of values at `data`, with a grid
    /// covering its threads. Errors: a plane whose sizes exceed the kernels' 32-bit indices,
    /// or a grid too large (as `cuLaunchKernel` faults).
    pub fn new(data: DevicePtr, plane: (usize, usize), op: SplineOp) -> DriverResult<SplineLaunch> {
        let fault = |what: String| DriverFault::new("cuLaunchKernel", FaultKind::Other, what);
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| fault(format!("{v} exceeds the kernels' 32-bit indices")))
        };
        let plane32 = (int(plane.0)?, int(plane.1)?);
        if let SplineOp::Filter {
            source: Some(s), ..
        } = op
        {
            if !s.filter_reads() {
                return Err(fault(format!(
                    "the filter reads 4- and 8-byte samples, not input type {}",
                    s.input_type
                )));
            }
        }
        let threads = match op {
            SplineOp::Values { .. } => plane.0 * plane.1,
            SplineOp::Filter { axis: 0, .. } => plane.1,
            SplineOp::Filter { .. } => plane.0,
        };
        let per_block = match op {
            SplineOp::Values { .. } => SPLINE_THREADS,
            SplineOp::Filter { .. } => FILTER_THREADS,
        };
        let grid = u32::try_from(threads.div_ceil(per_block as usize).max(1))
            .map_err(|_| fault(format!("a grid of {threads} threads is too large")))?;
        Ok(SplineLaunch {
            grid,
            threads: per_block,
            data,
            plane: plane32,
            op,
        })
    }

    /// What CUDA refuses in this launch's configuration, as [`BlockLaunch::invalid_configuration`].
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// let op = SplineOp::Filter { axis: 0, poles: DevicePtr(256), npoles: 1, gain: 6.0, source: None };
    /// let mut launch = SplineLaunch::new(DevicePtr(4096), (8, 8), op)?;
    /// assert_eq!(launch.invalid_configuration(), None);
    /// launch.threads = 2048;
    /// assert!(launch.invalid_configuration().is_some());
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn invalid_configuration(&self) -> Option<String> {
        invalid_grid((self.grid, 1), (self.threads, 1))
    }

    /// `rp_spline_filter`'s line arguments of a [`SplineOp::Filter`] launch: (lines, line
    /// length, elements between line starts, elements between a line's elements); `None` for
    /// [`SplineOp::Values`].
    pub fn filter_lines(&self) -> Option<(i64, i32, i64, i64)> {
        let (ny, nx) = self.plane;
        match self.op {
            SplineOp::Values { .. } => None,
            SplineOp::Filter { axis: 0, .. } => Some((i64::from(nx), ny, 1, i64::from(nx))),
            SplineOp::Filter { .. } => Some((i64::from(ny), nx, i64::from(nx), 1)),
        }
    }

    /// The bytes of the plane of values (read and written).
    pub fn data_bytes(&self) -> usize {
        let (ny, nx) = self.plane_size();
        ny * nx * 8
    }

    /// The other device memory the launch reads: (address, bytes) of the input samples
    /// ([`SplineOp::Values`]) or of the pole constants ([`SplineOp::Filter`]; its source's
    /// samples are [`SplineLaunch::source_reads`]).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// let filter = SplineOp::Filter { axis: 1, poles: DevicePtr(256), npoles: 2, gain: 1.0, source: None };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), filter)?;
    /// assert_eq!(launch.reads(), (DevicePtr(256), 2 * 4 * 8));
    /// assert_eq!(launch.filter_lines(), Some((3, 7, 7, 1))); // 3 rows of 7
    /// assert_eq!(launch.source_reads(), None);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn reads(&self) -> (DevicePtr, usize) {
        match self.op {
            SplineOp::Values(s) => (s.input, s.bytes(self.plane_size())),
            SplineOp::Filter { poles, npoles, .. } => {
                (poles, usize::try_from(npoles).unwrap_or(0) * 4 * 8)
            }
        }
    }

    /// The samples a [`SplineOp::Filter`] launch with a source reads its values from:
    /// (address, bytes), and `rp_spline_filter_from`'s steps of the source's lines (samples
    /// between line starts, between a line's elements).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let s = SplineSamples { input: DevicePtr(1 << 20), input_type: 1, big_endian: 0, pitch: 9, values_f32: 0 };
    /// let columns = SplineOp::Filter { axis: 0, poles: DevicePtr(256), npoles: 1, gain: 6.0, source: Some(s) };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), columns)?;
    /// assert_eq!(launch.source_reads(), Some(((DevicePtr(1 << 20), (2 * 9 + 7) * 8), (1, 9))));
    /// // int16 samples go through the values kernel: a filter reading them is refused.
    /// let int16 = SplineSamples { input_type: 3, ..s };
    /// let refused = SplineOp::Filter { axis: 0, poles: DevicePtr(256), npoles: 1, gain: 6.0, source: Some(int16) };
    /// assert!(SplineLaunch::new(DevicePtr(4096), (3, 7), refused).is_err());
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn source_reads(&self) -> Option<((DevicePtr, usize), (i64, i64))> {
        match self.op {
            SplineOp::Filter {
                axis,
                source: Some(s),
                ..
            } => {
                let steps = if axis == 0 {
                    (1, s.pitch)
                } else {
                    (s.pitch, 1)
                };
                Some(((s.input, s.bytes(self.plane_size())), steps))
            }
            _ => None,
        }
    }

    /// The bytes the launch reads and writes in device memory, as its kernel moves them: the
    /// values kernel reads the samples and writes the plane; each pole of the filter reads its
    /// values twice (the source's samples for the first pole of a launch with a source) and
    /// writes the plane once, plus its checkpoints (1/32 written, read again). The initial
    /// sum's reads, which stop early on long lines, are left out.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// use reproject::gpu::driver::SplineSamples;
    /// let plane = 64 * 64 * 8;
    /// let rows = SplineOp::Filter { axis: 1, poles: DevicePtr(256), npoles: 1, gain: 6.0, source: None };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (64, 64), rows)?;
    /// assert_eq!(launch.traffic_bytes(), 3 * plane + 2 * plane / 32);
    /// // The columns from float32 samples read half the bytes of float64 values, twice.
    /// let f32s = SplineSamples { input: DevicePtr(1 << 20), input_type: 0, big_endian: 0, pitch: 64, values_f32: 0 };
    /// let columns = SplineOp::Filter { axis: 0, poles: DevicePtr(256), npoles: 1, gain: 6.0, source: Some(f32s) };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (64, 64), columns)?;
    /// assert_eq!(launch.traffic_bytes(), 2 * plane / 2 + plane + 2 * plane / 32);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn traffic_bytes(&self) -> usize {
        let plane = self.data_bytes();
        match self.op {
            SplineOp::Values(s) => s.bytes(self.plane_size()) + plane,
            SplineOp::Filter { npoles, source, .. } => {
                let poles = usize::try_from(npoles).unwrap_or(0);
                let first = source.map_or(plane, |s| s.bytes(self.plane_size()));
                let reads = if poles == 0 {
                    0
                } else {
                    2 * first + 2 * (poles - 1) * plane
                };
                reads + poles * (plane + 2 * plane / 32)
            }
        }
    }

    /// The plane's (rows, columns) as sizes.
    fn plane_size(&self) -> (usize, usize) {
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        (n(self.plane.0), n(self.plane.1))
    }
}

/// Bytes per input element of the kernels' `input_type` code (0 for an unknown code).
fn input_elem(input_type: i32) -> usize {
    match input_type {
        0 | 4 => 4,
        1 | 5 => 8,
        2 => 1,
        3 => 2,
        _ => 0,
    }
}

/// What CUDA refuses in a launch of `grid` thread blocks of `threads` (x, y): a grid of 0 or
/// more than 2^31 - 1 blocks along x or 65,535 along y, or a thread block of 0 or more than
/// 1024 threads.
fn invalid_grid((gx, gy): (u32, u32), (tx, ty): (u32, u32)) -> Option<String> {
    if gx == 0 || gx > i32::MAX as u32 || gy == 0 || gy > 65_535 {
        return Some(format!("grid of {gx} x {gy} blocks"));
    }
    if tx == 0 || ty == 0 || u64::from(tx) * u64::from(ty) > 1024 {
        return Some(format!("thread block of {tx} x {ty}"));
    }
    None
}

/// The CUDA driver operations of the GPU pipelines, for one device.
///
/// Implementations: `CudaDriver` (`gpu/cuda.rs`, a real GPU) and [`super::sim::SimDriver`].
/// Calls may come from several threads at once.
pub trait Driver: Send + Sync {
    /// The device.
    fn info(&self) -> &GpuInfo;

    /// The device's ordinal among the visible ones.
    fn ordinal(&self) -> usize;

    /// Why the context cannot be used any more (a sticky error), if so.
    fn poisoned(&self) -> Option<String>;

    /// (free, total) device memory in bytes; free counts the memory the driver keeps for
    /// reuse (see [`super::pool`]), which an allocation takes back when it needs it.
    fn mem_info(&self) -> DriverResult<(usize, usize)>;

    /// At least `bytes` of device memory (content undefined): an allocation kept from before
    /// (see [`super::pool`]), or a new one. Out of memory, the kept ones are freed and the
    /// allocation tried again.
    fn alloc(&self, bytes: usize) -> DriverResult<DevicePtr>;

    /// Gives an allocation made by [`Driver::alloc`] back, once no queued work touches it:
    /// kept for reuse while the driver's pool has room, else freed.
    fn free(&self, ptr: DevicePtr);

    /// At least `bytes` of page-locked host memory: a buffer kept from before (see
    /// [`super::pool`]), or a new one.
    fn alloc_host(&self, bytes: usize) -> DriverResult<HostBuffer>;

    /// Gives page-locked host memory back (no copy may be pending on it): kept for reuse
    /// while the driver's pool has room, else freed.
    fn free_host(&self, buffer: HostBuffer);

    /// Page-locks `len` bytes of ordinary host memory at `ptr` in place (cuMemHostRegister),
    /// so that copies can use it as they use [`Driver::alloc_host`]'s memory.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes until
    /// [`Driver::unregister_host`] is given the buffer, which must happen before that memory
    /// is freed.
    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> DriverResult<HostBuffer>;

    /// Unlocks memory locked by [`Driver::register_host`] (no copy may be pending on it).
    fn unregister_host(&self, buffer: HostBuffer);

    /// A stream with nothing queued: one kept from before, or a new one.
    fn create_stream(&self) -> DriverResult<StreamId>;

    /// Gives a stream back (its queued work finishes first): kept for reuse, or destroyed.
    fn destroy_stream(&self, stream: StreamId);

    /// Frees the device memory, page-locked memory and streams kept for reuse (for other
    /// users of the device, or of the host's memory).
    fn release_kept(&self);

    /// The CUDA driver API calls made so far, by function, with their summed times: the real
    /// driver counts every call it makes; a driver that calls no CUDA (the simulator) none.
    fn call_counts(&self) -> Vec<CallCount> {
        Vec::new()
    }

    /// Copies `bytes` from host memory to the device, synchronously (for small parameter
    /// arrays).
    fn upload_now(&self, src: &[u8], dst: DevicePtr) -> DriverResult<()>;

    /// Queues a copy of `bytes` from `src[src_offset..]` to `dst` on `stream`.
    ///
    /// # Safety
    /// `dst` must hold `bytes` more bytes; `src` must not be written until the copy is done.
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
    /// let v = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1", "RP_V_OUT=0", "RP_V_NAN=0"])?;
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
    unsafe fn launch(&self, stream: StreamId, launch: &BlockLaunch) -> DriverResult<()>;

    /// Queues a launch of the accumulate kernel on `stream`.
    ///
    /// # Safety
    /// Every pointer must be device memory of the sizes the arguments describe.
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
    fn synchronize(&self, stream: StreamId) -> DriverResult<()>;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_launches_as_many_threads_as_its_ring_has_lanes() {
        let lanes = format!("#define RP_RING_LANES {}", super::FILTER_THREADS);
        assert!(crate::gpu::spline_source().contains(&lanes));
    }
}

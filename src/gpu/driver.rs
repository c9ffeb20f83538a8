//! The driver seam: every CUDA driver operation a GPU pipeline uses, behind one trait, with two
//! implementations: the real driver (`CudaDriver` in `gpu/cuda.rs`, through `cudarc`) and a
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
///
/// ```
/// use reproject::gpu::driver::{Driver, FaultKind};
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// sim.inject(Some((0, FaultKind::Other)));
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Other);
/// assert!(sim.alloc(8).is_ok()); // one call failed: the next succeeds
/// sim.inject(Some((sim.calls().len(), FaultKind::Sticky)));
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Sticky);
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Sticky); // poisoned for good
/// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::{DriverFault, FaultKind};
    /// let why = format!("grid of {} blocks", 0);
    /// let f = DriverFault::new("cuLaunchKernel", FaultKind::Other, why);
    /// assert_eq!((f.call, f.kind), ("cuLaunchKernel", FaultKind::Other));
    /// assert_eq!(f.message, "grid of 0 blocks");
    /// ```
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
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, Driver, DriverResult, FaultKind};
/// use reproject::gpu::sim::SimDriver;
/// fn staged(d: &dyn Driver, bytes: &[u8]) -> DriverResult<DevicePtr> {
///     let ptr = d.alloc(bytes.len())?;
///     d.upload_now(bytes, ptr)?;
///     Ok(ptr)
/// }
/// let sim = SimDriver::new(Default::default());
/// assert!(staged(&sim, &[1, 2, 3]).is_ok());
/// sim.inject(Some((sim.calls().len(), FaultKind::OutOfMemory)));
/// assert_eq!(staged(&sim, &[1, 2, 3]).unwrap_err().call, "cuMemAlloc");
/// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let base = sim.alloc(16)?;
    /// assert_eq!(base.offset(8).0, base.0 + 8);
    /// sim.upload_now(&[9; 8], base.offset(8))?; // the allocation's second half
    /// assert!(sim.upload_now(&[9; 8], base.offset(9)).is_err()); // a byte past its end
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn offset(self, bytes: usize) -> DevicePtr {
        DevicePtr(self.0 + bytes as u64)
    }
}

/// What memory a device address lies in ([`Driver::memory_at`]).
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, MemoryAt};
/// let at = MemoryAt::Device { ordinal: Some(0), allocation: Some((DevicePtr(4096), 256)) };
/// assert_eq!(at.room_from(DevicePtr(4096 + 56)), Some(200)); // bytes left in the allocation
/// assert_eq!(MemoryAt::Unknown.room_from(DevicePtr(4096)), Some(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryAt {
    /// Memory of one device (`cuMemAlloc`, a CuPy array): the device's ordinal and the
    /// allocation the address lies in (start, bytes), each where the driver tells it.
    Device {
        /// The device's ordinal among the visible ones.
        ordinal: Option<usize>,
        /// The allocation's first address and size in bytes.
        allocation: Option<(DevicePtr, usize)>,
    },
    /// Memory every device can address: managed memory, or page-locked host memory mapped
    /// for the devices; the allocation where the driver tells it.
    Shared {
        /// The allocation's first address and size in bytes.
        allocation: Option<(DevicePtr, usize)>,
    },
    /// No memory the driver knows: ordinary host memory, memory given back, or no allocation.
    Unknown,
}

impl MemoryAt {
    /// The bytes from `ptr` to the end of its allocation: `Some(0)` for memory the driver
    /// does not know, `None` where it does not tell the allocation's extent.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, MemoryAt};
    /// let shared = MemoryAt::Shared { allocation: None };
    /// assert_eq!(shared.room_from(DevicePtr(64)), None); // no extent to check against
    /// ```
    pub fn room_from(&self, ptr: DevicePtr) -> Option<usize> {
        let allocation = match *self {
            MemoryAt::Device { allocation, .. } | MemoryAt::Shared { allocation } => allocation,
            MemoryAt::Unknown => return Some(0),
        };
        let (start, bytes) = allocation?;
        let end = start.0.saturating_add(bytes as u64);
        Some(if (start.0..end).contains(&ptr.0) {
            (end - ptr.0) as usize
        } else {
            0
        })
    }
}

/// A stream: operations queued on one stream run in order.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// let (stream, dev) = (sim.create_stream()?, sim.alloc(4)?);
/// let (mut up, down) = (sim.alloc_host(4)?, sim.alloc_host(4)?);
/// unsafe { up.as_mut_slice() }.copy_from_slice(b"WCS!");
/// // Queued after the upload on the same stream, the download sees its bytes.
/// unsafe { sim.upload(stream, &up, 0, dev, 4)?; sim.download(stream, dev, &down, 0, 4)? };
/// sim.synchronize(stream)?;
/// assert_eq!(unsafe { down.as_slice() }, b"WCS!");
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::HostBuffer;
    /// let mut memory = vec![5u8; 32];
    /// // SAFETY: `memory` outlives the handle, and no driver is asked to free it.
    /// let buf = unsafe { HostBuffer::from_raw(memory.as_mut_ptr(), memory.len()) };
    /// assert_eq!((buf.len(), buf.capacity()), (32, 32));
    /// assert_eq!(unsafe { buf.as_slice() }, &[5u8; 32][..]);
    /// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(100)?;
    /// assert_eq!(buf.capacity(), 100);
    /// sim.free_host(buf);
    /// let again = sim.alloc_host(10)?; // the kept buffer, seen as 10 bytes
    /// assert_eq!((again.len(), again.capacity()), (10, 100));
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Size in bytes.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(24)?;
    /// assert_eq!(buf.len(), 24);
    /// assert_eq!(buf.with_len(1000).len(), 24); // at most its capacity
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no byte.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(16)?;
    /// assert!(!buf.is_empty());
    /// let buf = buf.with_len(0);
    /// assert!(buf.is_empty());
    /// sim.free_host(buf);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(16)?;
    /// let addr = buf.as_ptr();
    /// assert_eq!(unsafe { buf.as_slice() }.as_ptr(), addr);
    /// sim.free_host(buf);
    /// assert_eq!(sim.alloc_host(8)?.as_ptr(), addr); // the pool hands the same memory out again
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The bytes.
    ///
    /// # Safety
    /// No copy into the buffer may be pending (synchronize the stream it was queued on).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(4)?, sim.alloc_host(4)?);
    /// sim.upload_now(&[1, 2, 3, 4], dev)?;
    /// unsafe { sim.download(stream, dev, &host, 0, 4)? };
    /// sim.synchronize(stream)?;
    /// // SAFETY: the stream is synchronized: the copy is done.
    /// assert_eq!(unsafe { host.as_slice() }, &[1, 2, 3, 4]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub unsafe fn as_slice(&self) -> &[u8] {
        // SAFETY: the caller's promises (# Safety above).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, for writing.
    ///
    /// # Safety
    /// No copy from or into the buffer may be pending.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let mut buf = sim.alloc_host(8)?.with_len(4);
    /// // SAFETY: no copy is queued on the buffer.
    /// let bytes = unsafe { buf.as_mut_slice() };
    /// assert_eq!(bytes.len(), 4); // its length, not its capacity
    /// bytes.copy_from_slice(&[1, 2, 3, 4]);
    /// assert_eq!(unsafe { buf.as_slice() }, &[1, 2, 3, 4]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub unsafe fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the caller's promises (# Safety above).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// The arguments of one launch of the block kernel `rp_reproject_block` (see
/// `kernels/reproject.cu` for their meaning), with its grid and the build of the kernel it
/// runs.
///
/// ```
/// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
/// let (t, s) = (DevicePtr(256), DevicePtr(512));
/// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 512)?;
/// // A 64 x 64 float64 block from a 70 x 70 float32 window of a 1000-column plane.
/// let launch = BlockLaunch {
///     grid: (8, 16), threads: (8, 4), input: DevicePtr(1 << 20), in_pitch: 1000,
///     window: (0, 0, 70, 70), plane: (1000, 1000), block: (64, 64), out_f64: 1, out_pitch: 64,
///     ..parse
/// };
/// assert_eq!(launch.input_bytes(), (69 * 1000 + 70) * 4);
/// assert_eq!(launch.output_bytes(), 64 * 64 * 8);
/// assert_eq!(launch.invalid_configuration(), None);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
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
///
/// ```
/// use reproject::gpu::driver::{BlockLaunch, DevicePtr, PARSE_PARAMS};
/// let (t, s) = (DevicePtr(256), DevicePtr(512));
/// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 1024)?;
/// assert_eq!(parse.out_f64, PARSE_PARAMS);
/// assert_eq!(parse.output_bytes(), 1024); // the capacity, not a block of pixels
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let (t, s) = (DevicePtr(256), DevicePtr(512));
    /// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 1024)?;
    /// assert!(parse.parses());
    /// let pixels = BlockLaunch { out_f64: 1, block: (8, 8), out_pitch: 8, ..parse };
    /// assert!(!pixels.parses());
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let (t, s) = (DevicePtr(256), DevicePtr(512));
    /// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 1024)?;
    /// assert_eq!(BlockLaunch { input_type: 3, ..parse.clone() }.input_elem(), 2); // int16
    /// assert_eq!(BlockLaunch { input_type: 5, ..parse.clone() }.input_elem(), 8); // int64
    /// assert_eq!(BlockLaunch { input_type: 9, ..parse }.input_elem(), 0); // unknown
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn input_elem(&self) -> usize {
        input_elem(self.input_type)
    }

    /// Bytes per output element.
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let (t, s) = (DevicePtr(256), DevicePtr(512));
    /// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 1024)?;
    /// assert_eq!(BlockLaunch { out_f64: 0, ..parse.clone() }.out_elem(), 4);
    /// assert_eq!(BlockLaunch { out_f64: 1, ..parse }.out_elem(), 8);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn out_elem(&self) -> usize {
        if self.out_f64 != 0 {
            8
        } else {
            4
        }
    }

    /// The bytes of input the kernel reads, from `input`.
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let (t, s) = (DevicePtr(256), DevicePtr(512));
    /// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 1024)?;
    /// assert_eq!(parse.input_bytes(), 0); // a parse reads no input
    /// // A float64 window of 4 rows of 5 samples, rows 6 samples apart.
    /// let launch = BlockLaunch { input_type: 1, in_pitch: 6, window: (10, 20, 4, 5), ..parse };
    /// assert_eq!(launch.input_bytes(), (3 * 6 + 5) * 8);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn input_bytes(&self) -> usize {
        let (_, _, ny, nx) = self.window;
        if ny <= 0 || nx <= 0 {
            return 0;
        }
        ((ny as usize - 1) * self.in_pitch.max(0) as usize + nx as usize) * self.input_elem()
    }

    /// The bytes of each output the kernel writes, from `out` and `footprint` (for a parse,
    /// the bytes of `out` it may write; no footprint).
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// let (t, s) = (DevicePtr(256), DevicePtr(512));
    /// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 1024)?;
    /// assert_eq!(parse.output_bytes(), 1024); // a parse: the bytes of `out` it may write
    /// let block = BlockLaunch { out_f64: 0, block: (16, 32), out_pitch: 40, ..parse };
    /// assert_eq!(block.output_bytes(), (15 * 40 + 32) * 4); // float32 rows 40 elements apart
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
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
///
/// ```
/// use reproject::gpu::driver::AccumulateOp::*;
/// let codes: Vec<i32> = [Fill, Mean, Sum, First, Last, Min, Max].map(|op| op.code()).to_vec();
/// assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6]); // RP_ACC_FILL ... RP_ACC_MAX
/// ```
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
///
/// ```
/// use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
/// // A 100 x 200 part of one input's samples, added into the sums of a 256 x 256 block.
/// let mean = AccumulateLaunch {
///     grid: (7, 13), threads: (32, 8), values: Some(DevicePtr(1 << 30)), weights: None,
///     op: AccumulateOp::Mean, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
///     part: (100, 200), part_origin: (40, 30), in_block: (40, 30), block: (256, 256),
///     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
/// };
/// assert_eq!(mean.part_bytes(), 100 * 200 * 8);
/// assert_eq!(mean.invalid_configuration(), None);
/// ```
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
    ///
    /// ```
    /// # use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// # let fill = AccumulateLaunch {
    /// #     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    /// #     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    /// #     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    /// #     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// # };
    /// // `fill`: a launch filling a 256 x 256 block.
    /// assert_eq!(fill.block_bytes(), 256 * 256 * 8);
    /// let cube = AccumulateLaunch { planes: 3, ..fill };
    /// assert_eq!(cube.block_bytes(), 3 * 256 * 256 * 8); // float64, every plane
    /// ```
    pub fn block_bytes(&self) -> usize {
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        n(self.planes) * n(self.block.0) * n(self.block.1) * 8
    }

    /// The bytes of samples (and of weights) the launch reads; 0 for [`AccumulateOp::Fill`].
    ///
    /// ```
    /// # use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// # let fill = AccumulateLaunch {
    /// #     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    /// #     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    /// #     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    /// #     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// # };
    /// // `fill`: a launch filling a 256 x 256 block.
    /// assert_eq!(fill.part_bytes(), 0); // a fill reads no samples
    /// let values = Some(DevicePtr(1 << 30));
    /// let mean = AccumulateLaunch { op: AccumulateOp::Mean, values, ..fill };
    /// assert_eq!(mean.part_bytes(), 256 * 256 * 8);
    /// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(4096), input_type: 3, big_endian: 1, pitch: 10, values_f32: 1,
    /// };
    /// assert_eq!(s.bytes((2, 8)), (10 + 8) * 2); // int16: a row of 10, then 8 samples
    /// assert_eq!(s.bytes((0, 8)), 0);
    /// assert_eq!(SplineSamples { input_type: 9, ..s }.bytes((2, 8)), 0); // unknown type
    /// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(4096), input_type: 3, big_endian: 1, pitch: 10, values_f32: 1,
    /// };
    /// let read = |t| SplineSamples { input_type: t, ..s }.filter_reads();
    /// assert_eq!((0..6).filter(|&t| read(t)).collect::<Vec<i32>>(), [0, 1, 4, 5]);
    /// ```
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
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// let poles = DevicePtr(256);
    /// let rows = SplineOp::Filter { axis: 1, poles, npoles: 1, gain: 6.0, source: None };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (100, 300), rows)?;
    /// assert_eq!((launch.grid, launch.threads), (4, 32)); // a thread per row: 100 rows
    /// assert!(SplineLaunch::new(DevicePtr(4096), (1 << 31, 1), rows).is_err()); // 32-bit indices
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn new(data: DevicePtr, plane: (usize, usize), op: SplineOp) -> DriverResult<SplineLaunch> {
        let fault = |what: String| DriverFault::new("cuLaunchKernel", FaultKind::Other, what);
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| fault(format!("{v} exceeds the kernels' 32-bit indices")))
        };
        let plane32 = (int(plane.0)?, int(plane.1)?);
        if let SplineOp::Filter {
            source: Some(s), ..
        } = op
            && !s.filter_reads()
        {
            return Err(fault(format!(
                "the filter reads 4- and 8-byte samples, not input type {}",
                s.input_type
            )));
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
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let poles = DevicePtr(256);
    /// let columns = SplineOp::Filter { axis: 0, poles, npoles: 1, gain: 6.0, source: None };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), columns)?;
    /// assert_eq!(launch.filter_lines(), Some((7, 3, 1, 7))); // 7 columns of 3, a row apart
    /// let s = SplineSamples {
    ///     input: poles, input_type: 1, big_endian: 0, pitch: 7, values_f32: 0,
    /// };
    /// let values = SplineLaunch::new(DevicePtr(4096), (3, 7), SplineOp::Values(s))?;
    /// assert_eq!(values.filter_lines(), None);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn filter_lines(&self) -> Option<(i64, i32, i64, i64)> {
        let (ny, nx) = self.plane;
        match self.op {
            SplineOp::Values { .. } => None,
            SplineOp::Filter { axis: 0, .. } => Some((i64::from(nx), ny, 1, i64::from(nx))),
            SplineOp::Filter { .. } => Some((i64::from(ny), nx, i64::from(nx), 1)),
        }
    }

    /// The bytes of the plane of values (read and written).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(1 << 20), input_type: 0, big_endian: 0, pitch: 7, values_f32: 0,
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), SplineOp::Values(s))?;
    /// assert_eq!(launch.data_bytes(), 3 * 7 * 8); // float64 values, from float32 samples
    /// assert_eq!(launch.reads().1, 3 * 7 * 4);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_launches_as_many_threads_as_its_ring_has_lanes() {
        let lanes = format!("#define RP_RING_LANES {}", super::FILTER_THREADS);
        assert!(crate::gpu::spline_source().contains(&lanes));
    }
}

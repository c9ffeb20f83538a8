//! A launch of the block kernel `rp_reproject_block`, its parameter-parsing launch, and the
//! limits every launch shares (element sizes, what CUDA refuses in a grid).

use super::{DevicePtr, DriverFault, FaultKind};
use crate::gpu::variant::KernelDefines;

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
    /// let parse = BlockLaunch::parse_params(
    ///     Default::default(),
    ///     DevicePtr(256),
    ///     DevicePtr(512),
    ///     DevicePtr(4096),
    ///     16384,
    /// )?;
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
    ///     grid: (4, 65_535), threads: (32, 8),
    ///     transform: DevicePtr(256), sampling: DevicePtr(512),
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

/// Bytes per input element of the kernels' `input_type` code (0 for an unknown code).
pub(super) fn input_elem(input_type: i32) -> usize {
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
pub(super) fn invalid_grid((gx, gy): (u32, u32), (tx, ty): (u32, u32)) -> Option<String> {
    if gx == 0 || gx > i32::MAX as u32 || gy == 0 || gy > 65_535 {
        return Some(format!("grid of {gx} x {gy} blocks"));
    }
    if tx == 0 || ty == 0 || u64::from(tx) * u64::from(ty) > 1024 {
        return Some(format!("thread block of {tx} x {ty}"));
    }
    None
}

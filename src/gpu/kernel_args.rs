//! The argument list of each kernel launch: each argument with the name and type of the entry
//! point's parameter it is, in the parameters' order. The CUDA driver hands their addresses to
//! `cuLaunchKernel`. A kernel reads its parameters at the offsets their declared types give, so
//! one argument of the wrong width shifts every later one, and two swapped ones of a width swap
//! meanings. `tests/gpu_kernel_args.rs` holds every list to its entry point: the names to the
//! kernel source's signature, the types to the PTX that NVRTC compiles. The simulator
//! ([`super::sim`]) calls the host-compiled kernels with typed signatures, which would see
//! neither mistake; it takes its values from these lists by name, so its runs check each
//! argument's value too.
//!
//! ```
//! use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
//! use reproject::gpu::kernel_args::KernelArg;
//! let rows = SplineOp::Filter {
//!     axis: 1,
//!     poles: DevicePtr(256),
//!     npoles: 1,
//!     gain: 6.0,
//!     source: None,
//! };
//! let (kernel, args) = SplineLaunch::new(DevicePtr(4096), (4, 5), rows)?.kernel_args()?;
//! assert_eq!(kernel.entry(), reproject::gpu::SPLINE_FILTER_ENTRY);
//! assert_eq!(args[0], ("data", KernelArg::Pointer(4096)));
//! assert_eq!(args[7], ("gain", KernelArg::Double(6.0)));
//! # Ok::<(), reproject::gpu::driver::DriverFault>(())
//! ```

use super::driver::{
    AccumulateLaunch, BlockLaunch, DevicePtr, DriverFault, DriverResult, FaultKind, SplineLaunch,
    SplineOp,
};
use super::{SPLINE_FILTER_ENTRY, SPLINE_FILTER_FROM_ENTRY, SPLINE_VALUES_ENTRY};

/// One argument of a kernel launch, as the kernel's parameter is declared.
///
/// ```
/// use reproject::gpu::kernel_args::KernelArg;
/// assert_eq!(KernelArg::Int(3).ptx_type(), "u32");
/// assert_eq!(KernelArg::Double(0.5).ptx_type(), "f64");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KernelArg {
    /// A device pointer (0 for a null one).
    Pointer(u64),
    /// An `int`.
    Int(i32),
    /// A `long long`.
    Long(i64),
    /// A `double`.
    Double(f64),
}

impl KernelArg {
    /// The PTX type NVRTC declares such a parameter with (`.param .u64` for a pointer or a
    /// `long long`, `.u32` for an `int`, `.f64` for a `double`).
    ///
    /// ```
    /// use reproject::gpu::kernel_args::KernelArg;
    /// // A pointer and a `long long` are both 64-bit parameters: only their names tell them apart.
    /// assert_eq!(KernelArg::Pointer(4096).ptx_type(), KernelArg::Long(-1).ptx_type());
    /// assert_eq!(KernelArg::Int(7).ptx_type(), "u32");
    /// ```
    pub fn ptx_type(&self) -> &'static str {
        match self {
            KernelArg::Pointer(_) | KernelArg::Long(_) => "u64",
            KernelArg::Int(_) => "u32",
            KernelArg::Double(_) => "f64",
        }
    }
}

/// The spline prefilter's kernels: which one a [`SplineLaunch`] runs.
///
/// ```
/// use reproject::gpu::kernel_args::SplineKernel;
/// assert_eq!(SplineKernel::FilterFrom.entry(), reproject::gpu::SPLINE_FILTER_FROM_ENTRY);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplineKernel {
    /// `rp_spline_values` (`kernels/spline_values.cu`).
    Values,
    /// `rp_spline_filter` (`kernels/spline.cu`).
    Filter,
    /// `rp_spline_filter_from` (`kernels/spline.cu`).
    FilterFrom,
}

impl SplineKernel {
    /// The kernel's entry point.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let u8s = SplineSamples {
    ///     input: DevicePtr(1 << 20), input_type: 2, big_endian: 0, pitch: 5, values_f32: 1,
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (4, 5), SplineOp::Values(u8s))?;
    /// assert_eq!(launch.kernel_args()?.0.entry(), "rp_spline_values");
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn entry(self) -> &'static str {
        match self {
            SplineKernel::Values => SPLINE_VALUES_ENTRY,
            SplineKernel::Filter => SPLINE_FILTER_ENTRY,
            SplineKernel::FilterFrom => SPLINE_FILTER_FROM_ENTRY,
        }
    }
}

/// A launch's arguments: each with its parameter's name in the kernel's signature.
///
/// ```
/// use reproject::gpu::driver::{BlockLaunch, DevicePtr, PARSE_PARAMS};
/// use reproject::gpu::kernel_args::{KernelArg, KernelArgs};
/// let (t, s) = (DevicePtr(256), DevicePtr(512));
/// let parse = BlockLaunch::parse_params(Default::default(), t, s, DevicePtr(4096), 64)?;
/// let args: KernelArgs = parse.kernel_args();
/// let arg = |name: &str| args.iter().find(|(n, _)| *n == name).map(|(_, a)| *a);
/// assert_eq!(arg("out_f64"), Some(KernelArg::Int(PARSE_PARAMS)));
/// assert_eq!(arg("sampling"), Some(KernelArg::Pointer(512)));
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
pub type KernelArgs = Vec<(&'static str, KernelArg)>;

fn pointer(p: DevicePtr) -> KernelArg {
    KernelArg::Pointer(p.0)
}

impl BlockLaunch {
    /// The arguments of `rp_reproject_block` (`kernels/reproject.cu`; every build of it has
    /// this signature).
    ///
    /// ```
    /// use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    /// use reproject::gpu::kernel_args::KernelArg;
    /// let parse = BlockLaunch::parse_params(
    ///     Default::default(),
    ///     DevicePtr(256),
    ///     DevicePtr(512),
    ///     DevicePtr(4096),
    ///     16384,
    /// )?;
    /// let args = parse.kernel_args();
    /// assert_eq!(args.len(), 20);
    /// assert_eq!(args[19], ("out_pitch", KernelArg::Long(16384))); // the parse's capacity
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn kernel_args(&self) -> KernelArgs {
        use KernelArg::{Int, Long};
        vec![
            ("transform", pointer(self.transform)),
            ("sampling", pointer(self.sampling)),
            ("input", pointer(self.input)),
            ("input_type", Int(self.input_type)),
            ("big_endian", Int(self.big_endian)),
            ("in_pitch", Long(self.in_pitch)),
            ("win_y0", Int(self.window.0)),
            ("win_x0", Int(self.window.1)),
            ("win_ny", Int(self.window.2)),
            ("win_nx", Int(self.window.3)),
            ("in_ny", Int(self.plane.0)),
            ("in_nx", Int(self.plane.1)),
            ("out_y0", Int(self.out_origin.0)),
            ("out_x0", Int(self.out_origin.1)),
            ("blk_ny", Int(self.block.0)),
            ("blk_nx", Int(self.block.1)),
            ("out", pointer(self.out)),
            ("footprint", pointer(self.footprint)),
            ("out_f64", Int(self.out_f64)),
            ("out_pitch", Long(self.out_pitch)),
        ]
    }
}

impl AccumulateLaunch {
    /// The arguments of `rp_accumulate` (`kernels/accumulate.cu`): absent values or weights
    /// are null pointers.
    ///
    /// ```
    /// use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// use reproject::gpu::kernel_args::KernelArg;
    /// let launch = AccumulateLaunch {
    ///     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    ///     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    ///     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    ///     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// };
    /// let args = launch.kernel_args();
    /// assert_eq!(args[0], ("values", KernelArg::Pointer(0)));
    /// assert_eq!(args.len(), 18);
    /// ```
    pub fn kernel_args(&self) -> KernelArgs {
        use KernelArg::{Double, Int};
        let null = DevicePtr(0);
        vec![
            ("values", pointer(self.values.unwrap_or(null))),
            ("weights", pointer(self.weights.unwrap_or(null))),
            ("op", Int(self.op.code())),
            ("correction", Int(self.correction)),
            ("c0", Double(self.constants.0)),
            ("c1", Double(self.constants.1)),
            ("c2", Double(self.constants.2)),
            ("planes", Int(self.planes)),
            ("part_ny", Int(self.part.0)),
            ("part_nx", Int(self.part.1)),
            ("part_y0", Int(self.part_origin.0)),
            ("part_x0", Int(self.part_origin.1)),
            ("blk_r0", Int(self.in_block.0)),
            ("blk_c0", Int(self.in_block.1)),
            ("blk_ny", Int(self.block.0)),
            ("blk_nx", Int(self.block.1)),
            ("data", pointer(self.data)),
            ("footprint", pointer(self.footprint)),
        ]
    }
}

impl SplineLaunch {
    /// The kernel this launch runs (the values kernel, the filter or, for a filter reading a
    /// device input's samples, the filter from them) and its arguments.
    /// Errors: a filter launch without lines (a hand-made [`SplineLaunch`]; `SplineLaunch::new`
    /// makes none).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// use reproject::gpu::kernel_args::KernelArg;
    /// let f32s = SplineSamples {
    ///     input: DevicePtr(1 << 20),
    ///     input_type: 0,
    ///     big_endian: 0,
    ///     pitch: 5,
    ///     values_f32: 0,
    /// };
    /// let columns = SplineOp::Filter {
    ///     axis: 0,
    ///     poles: DevicePtr(256),
    ///     npoles: 1,
    ///     gain: 6.0,
    ///     source: Some(f32s),
    /// };
    /// let (kernel, args) = SplineLaunch::new(DevicePtr(4096), (4, 5), columns)?.kernel_args()?;
    /// assert_eq!(kernel.entry(), reproject::gpu::SPLINE_FILTER_FROM_ENTRY);
    /// assert_eq!(args[8], ("source", KernelArg::Pointer(1 << 20)));
    /// assert_eq!(args[9], ("source_line_step", KernelArg::Long(1))); // columns side by side
    /// assert_eq!(args[10], ("source_elem_step", KernelArg::Long(5))); // their samples a row apart
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn kernel_args(&self) -> DriverResult<(SplineKernel, KernelArgs)> {
        use KernelArg::{Double, Int, Long};
        let (ny, nx) = self.plane;
        let (poles, npoles, gain, source) = match self.op {
            SplineOp::Values(s) => {
                let args = vec![
                    ("input", pointer(s.input)),
                    ("input_type", Int(s.input_type)),
                    ("big_endian", Int(s.big_endian)),
                    ("pitch", Long(s.pitch)),
                    ("ny", Int(ny)),
                    ("nx", Int(nx)),
                    ("values_f32", Int(s.values_f32)),
                    ("out", pointer(self.data)),
                ];
                return Ok((SplineKernel::Values, args));
            }
            SplineOp::Filter {
                poles,
                npoles,
                gain,
                source,
                ..
            } => (poles, npoles, gain, source),
        };
        let Some((lines, n, line_step, elem_step)) = self.filter_lines() else {
            return Err(DriverFault::new(
                "cuLaunchKernel",
                FaultKind::Other,
                "a filter launch without lines",
            ));
        };
        let mut args = vec![
            ("data", pointer(self.data)),
            ("lines", Long(lines)),
            ("n", Int(n)),
            ("line_step", Long(line_step)),
            ("elem_step", Long(elem_step)),
            ("poles", pointer(poles)),
            ("npoles", Int(npoles)),
            ("gain", Double(gain)),
        ];
        let (Some(samples), Some(((input, _), (line, elem)))) = (source, self.source_reads())
        else {
            return Ok((SplineKernel::Filter, args));
        };
        args.extend([
            ("source", pointer(input)),
            ("source_line_step", Long(line)),
            ("source_elem_step", Long(elem)),
            ("source_type", Int(samples.input_type)),
            ("big_endian", Int(samples.big_endian)),
            ("values_f32", Int(samples.values_f32)),
        ]);
        Ok((SplineKernel::FilterFrom, args))
    }
}

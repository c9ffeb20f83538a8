//! Kernel launches run by the host-compiled kernels: each pointer argument resolved inside an
//! allocation, the arguments read by name, the launch configurations CUDA refuses refused.

use super::state::State;
use super::SimDriver;
#[cfg(rp_sim_kernels)]
use crate::gpu::driver::SplineOp;
use crate::gpu::driver::{
    AccumulateLaunch, BlockLaunch, DevicePtr, DriverFault, DriverResult, FaultKind, SplineLaunch,
};
use crate::gpu::kernel_args::{KernelArg, KernelArgs, SplineKernel};

impl SimDriver {
    /// The host address of the `len` bytes a kernel touches at its pointer argument `name`
    /// (an error naming it when they lie outside every allocation).
    fn resolve_arg(
        st: &mut State,
        args: &NamedArgs,
        name: &str,
        len: usize,
    ) -> std::result::Result<*mut u8, String> {
        let p = args.pointer(name)?;
        Self::resolve(st, p.0, len).ok_or_else(|| format!("the kernel's {name} at {:#x}", p.0))
    }

    /// Runs the host-compiled kernel over the launch's grid.
    pub(super) fn run_kernel(
        &self,
        st: &mut State,
        l: &BlockLaunch,
    ) -> std::result::Result<(), String> {
        // The pointers the CUDA driver passes, each resolved over the bytes the kernel
        // touches there.
        let v = NamedArgs(l.kernel_args());
        let mut ptr = |name: &str, len: usize| Self::resolve_arg(st, &v, name, len);
        // The parameter arrays are read as far as their own lengths say; they must at least
        // hold their headers. A null sampling array: `transform` holds parsed parameters.
        let transform = ptr("transform", 16)?;
        let sampling = match v.pointer("sampling")? {
            DevicePtr(0) => std::ptr::null_mut(),
            _ => ptr("sampling", 8)?,
        };
        let out = ptr("out", l.output_bytes().max(1))?;
        if l.parses() {
            let none = std::ptr::null_mut();
            return launch_host(l, &v, transform, sampling, none, out, none);
        }
        let input = ptr("input", l.input_bytes().max(1))?;
        let footprint = ptr("footprint", l.output_bytes().max(1))?;
        launch_host(l, &v, transform, sampling, input, out, footprint)
    }

    /// Runs the host-compiled accumulate kernel over the launch's grid.
    pub(super) fn run_accumulate(
        &self,
        st: &mut State,
        l: &AccumulateLaunch,
    ) -> std::result::Result<(), String> {
        let v = NamedArgs(l.kernel_args());
        let mut ptr = |name: &str, len: usize| Self::resolve_arg(st, &v, name, len);
        // Null (none, or a part of no pixels): not read.
        let part = l.part_bytes();
        let mut read = |name: &str| match v.pointer(name)? {
            DevicePtr(0) => Ok(std::ptr::null_mut()),
            _ if part == 0 => Ok(std::ptr::null_mut()),
            _ => ptr(name, part),
        };
        let (values, weights) = (read("values")?, read("weights")?);
        let data = ptr("data", l.block_bytes().max(1))?;
        let footprint = ptr("footprint", l.block_bytes().max(1))?;
        accumulate_host(l, &v, values, weights, data, footprint)
    }

    /// Runs the host-compiled spline kernel of the launch over its grid.
    pub(super) fn run_spline(
        &self,
        st: &mut State,
        l: &SplineLaunch,
    ) -> std::result::Result<(), String> {
        let (kernel, args) = l.kernel_args().map_err(|f| f.message)?;
        let v = NamedArgs(args);
        let mut ptr = |name: &str, len: usize| Self::resolve_arg(st, &v, name, len);
        // The plane, and what the launch reads besides: the input's samples (the values
        // kernel), or the poles' constants (the filter).
        let (plane, reads) = match kernel {
            SplineKernel::Values => ("out", "input"),
            SplineKernel::Filter | SplineKernel::FilterFrom => ("data", "poles"),
        };
        let data = ptr(plane, l.data_bytes().max(1))?;
        let read = ptr(reads, l.reads().1.max(1))?;
        let source = match l.source_reads() {
            Some(((_, bytes), _)) => ptr("source", bytes.max(1))?,
            None => std::ptr::null_mut(),
        };
        spline_host(l, kernel, &v, data, read, source)
    }
}

#[cfg(rp_sim_kernels)]
fn launch_host(
    l: &BlockLaunch,
    v: &NamedArgs,
    transform: *mut u8,
    sampling: *mut u8,
    input: *mut u8,
    out: *mut u8,
    footprint: *mut u8,
) -> std::result::Result<(), String> {
    use std::ffi::c_void;
    // The build of the variant the launch names: never another one in its place.
    let Some(kernel) = crate::gpu::sim_variants::launcher(&l.variant) else {
        return Err(format!(
            "the simulator has no build of the kernel variant {}",
            l.variant
        ));
    };
    // SAFETY: every pointer was resolved inside an allocation large enough for what the
    // kernel reads or writes with these arguments (BlockLaunch::input_bytes/output_bytes);
    // device allocations are 8-byte aligned. Every build has rp_sim_launch's signature.
    unsafe {
        kernel(
            l.grid.0,
            l.grid.1,
            l.threads.0,
            l.threads.1,
            transform as *const f64,
            sampling as *const f64,
            input as *const c_void,
            v.int("input_type")?,
            v.int("big_endian")?,
            v.long("in_pitch")?,
            v.int("win_y0")?,
            v.int("win_x0")?,
            v.int("win_ny")?,
            v.int("win_nx")?,
            v.int("in_ny")?,
            v.int("in_nx")?,
            v.int("out_y0")?,
            v.int("out_x0")?,
            v.int("blk_ny")?,
            v.int("blk_nx")?,
            out as *mut c_void,
            footprint as *mut c_void,
            v.int("out_f64")?,
            v.long("out_pitch")?,
        );
    }
    Ok(())
}

#[cfg(rp_sim_kernels)]
fn accumulate_host(
    l: &AccumulateLaunch,
    v: &NamedArgs,
    values: *mut u8,
    weights: *mut u8,
    data: *mut u8,
    footprint: *mut u8,
) -> std::result::Result<(), String> {
    use std::ffi::{c_int, c_uint};
    unsafe extern "C" {
        fn rp_sim_accumulate(
            grid_x: c_uint,
            grid_y: c_uint,
            block_x: c_uint,
            block_y: c_uint,
            values: *const f64,
            weights: *const f64,
            op: c_int,
            correction: c_int,
            c0: f64,
            c1: f64,
            c2: f64,
            planes: c_int,
            part_ny: c_int,
            part_nx: c_int,
            part_y0: c_int,
            part_x0: c_int,
            blk_r0: c_int,
            blk_c0: c_int,
            blk_ny: c_int,
            blk_nx: c_int,
            data: *mut f64,
            footprint: *mut f64,
        );
    }
    // The part must lie inside the block (the kernel indexes the block with it).
    let inside = l.in_block.0 >= 0
        && l.in_block.1 >= 0
        && i64::from(l.in_block.0) + i64::from(l.part.0) <= i64::from(l.block.0)
        && i64::from(l.in_block.1) + i64::from(l.part.1) <= i64::from(l.block.1);
    if !inside {
        return Err(format!(
            "a part of {:?} at {:?} outside the {:?} block",
            l.part, l.in_block, l.block
        ));
    }
    // SAFETY: every pointer was resolved inside an allocation large enough for what the
    // kernel reads or writes with these arguments (part_bytes, block_bytes; the part checked
    // inside the block); null pointers are not read (Fill, no weights); device allocations
    // are 8-byte aligned.
    unsafe {
        rp_sim_accumulate(
            l.grid.0,
            l.grid.1,
            l.threads.0,
            l.threads.1,
            values as *const f64,
            weights as *const f64,
            v.int("op")?,
            v.int("correction")?,
            v.double("c0")?,
            v.double("c1")?,
            v.double("c2")?,
            v.int("planes")?,
            v.int("part_ny")?,
            v.int("part_nx")?,
            v.int("part_y0")?,
            v.int("part_x0")?,
            v.int("blk_r0")?,
            v.int("blk_c0")?,
            v.int("blk_ny")?,
            v.int("blk_nx")?,
            data as *mut f64,
            footprint as *mut f64,
        );
    }
    Ok(())
}

#[cfg(rp_sim_kernels)]
fn spline_host(
    l: &SplineLaunch,
    kernel: SplineKernel,
    v: &NamedArgs,
    data: *mut u8,
    read: *mut u8,
    source: *mut u8,
) -> std::result::Result<(), String> {
    use std::ffi::{c_int, c_uint, c_void};
    unsafe extern "C" {
        fn rp_sim_spline_values(
            grid_x: c_uint,
            block_x: c_uint,
            input: *const c_void,
            input_type: c_int,
            big_endian: c_int,
            pitch: i64,
            ny: c_int,
            nx: c_int,
            values_f32: c_int,
            out: *mut f64,
        );
        fn rp_sim_spline_filter(
            grid_x: c_uint,
            block_x: c_uint,
            data: *mut f64,
            lines: i64,
            n: c_int,
            line_step: i64,
            elem_step: i64,
            poles: *const f64,
            npoles: c_int,
            gain: f64,
        );
        fn rp_sim_spline_filter_from(
            grid_x: c_uint,
            block_x: c_uint,
            data: *mut f64,
            lines: i64,
            n: c_int,
            line_step: i64,
            elem_step: i64,
            poles: *const f64,
            npoles: c_int,
            gain: f64,
            source: *const c_void,
            source_line_step: i64,
            source_elem_step: i64,
            source_type: c_int,
            big_endian: c_int,
            values_f32: c_int,
        );
    }
    match kernel {
        SplineKernel::Values => {
            let (input_type, pitch, nx) = (v.int("input_type")?, v.long("pitch")?, v.int("nx")?);
            if !(0..=5).contains(&input_type) || pitch < i64::from(nx) {
                return Err(format!("input type {input_type}, pitch {pitch}"));
            }
            // SAFETY: the input and the plane were resolved inside allocations of the sizes
            // the kernel reads and writes (SplineLaunch::reads, data_bytes); allocations are
            // 8-byte aligned.
            unsafe {
                rp_sim_spline_values(
                    l.grid,
                    l.threads,
                    read as *const c_void,
                    input_type,
                    v.int("big_endian")?,
                    pitch,
                    v.int("ny")?,
                    nx,
                    v.int("values_f32")?,
                    data as *mut f64,
                )
            }
        }
        SplineKernel::Filter => {
            // SAFETY: as above: the lines lie in the plane (filter_lines), the constants in
            // their allocation (4 × npoles doubles, SplineLaunch::reads).
            unsafe {
                rp_sim_spline_filter(
                    l.grid,
                    l.threads,
                    data as *mut f64,
                    v.long("lines")?,
                    v.int("n")?,
                    v.long("line_step")?,
                    v.long("elem_step")?,
                    read as *const f64,
                    v.int("npoles")?,
                    v.double("gain")?,
                )
            }
        }
        SplineKernel::FilterFrom => {
            let SplineOp::Filter {
                source: Some(samples),
                ..
            } = l.op
            else {
                return Err("a filter from samples without samples".into());
            };
            if samples.pitch < i64::from(l.plane.1) {
                return Err("a filter source with a pitch below the plane's width".into());
            }
            // SAFETY: as above, and the source's lines lie in its samples
            // (SplineLaunch::source_reads), resolved inside an allocation.
            unsafe {
                rp_sim_spline_filter_from(
                    l.grid,
                    l.threads,
                    data as *mut f64,
                    v.long("lines")?,
                    v.int("n")?,
                    v.long("line_step")?,
                    v.long("elem_step")?,
                    read as *const f64,
                    v.int("npoles")?,
                    v.double("gain")?,
                    source as *const c_void,
                    v.long("source_line_step")?,
                    v.long("source_elem_step")?,
                    v.int("source_type")?,
                    v.int("big_endian")?,
                    v.int("values_f32")?,
                )
            }
        }
    }
    Ok(())
}

/// A launch's arguments as the CUDA driver passes them ([`SplineLaunch::kernel_args`] and the
/// others), read by the kernel's parameter names: the simulator hands the host-compiled kernels
/// these values, so its runs check them as well as the kernels.
struct NamedArgs(KernelArgs);

impl NamedArgs {
    fn get(&self, name: &str) -> std::result::Result<KernelArg, String> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| *a)
            .ok_or_else(|| format!("the launch has no argument {name}"))
    }

    #[cfg_attr(not(rp_sim_kernels), allow(dead_code))]
    fn int(&self, name: &str) -> std::result::Result<i32, String> {
        match self.get(name)? {
            KernelArg::Int(v) => Ok(v),
            a => Err(format!("argument {name} is {a:?}, not an int")),
        }
    }

    #[cfg_attr(not(rp_sim_kernels), allow(dead_code))]
    fn long(&self, name: &str) -> std::result::Result<i64, String> {
        match self.get(name)? {
            KernelArg::Long(v) => Ok(v),
            a => Err(format!("argument {name} is {a:?}, not a long long")),
        }
    }

    #[cfg_attr(not(rp_sim_kernels), allow(dead_code))]
    fn double(&self, name: &str) -> std::result::Result<f64, String> {
        match self.get(name)? {
            KernelArg::Double(v) => Ok(v),
            a => Err(format!("argument {name} is {a:?}, not a double")),
        }
    }

    fn pointer(&self, name: &str) -> std::result::Result<DevicePtr, String> {
        match self.get(name)? {
            KernelArg::Pointer(v) => Ok(DevicePtr(v)),
            a => Err(format!("argument {name} is {a:?}, not a pointer")),
        }
    }
}

#[cfg(not(rp_sim_kernels))]
fn spline_host(
    _: &SplineLaunch,
    _: SplineKernel,
    _: &NamedArgs,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
) -> std::result::Result<(), String> {
    Err("the CUDA simulator was built without its host kernels (no C++ compiler)".into())
}

#[cfg(not(rp_sim_kernels))]
fn accumulate_host(
    _: &AccumulateLaunch,
    _: &NamedArgs,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
) -> std::result::Result<(), String> {
    Err("the CUDA simulator was built without its host kernels (no C++ compiler)".into())
}

#[cfg(not(rp_sim_kernels))]
fn launch_host(
    _: &BlockLaunch,
    _: &NamedArgs,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
    _: *mut u8,
) -> std::result::Result<(), String> {
    Err("the CUDA simulator was built without its host kernels (no C++ compiler)".into())
}

/// A launch configuration CUDA refuses (`why`), as the fault of `cuLaunchKernel`.
pub(super) fn refuse_configuration(why: Option<String>) -> DriverResult<()> {
    match why {
        Some(why) => Err(DriverFault::new(
            "cuLaunchKernel",
            FaultKind::Other,
            format!("CUDA_ERROR_INVALID_VALUE: {why}"),
        )),
        None => Ok(()),
    }
}

//! The host builds of the block kernel the CUDA simulator runs ([`super::sim`]): the general
//! kernel (`kernels/host/sim_launch.cpp`) and one build per specialised variant of
//! `kernels/variants.txt` (build.rs compiles `kernels/host/sim_variant.cpp` once per line, with
//! that line's defines and a launcher of its own, and writes the table below). A line's `*`
//! values are variables of its build, which a setter gives before each launch: one host build
//! serves every projection pair of a sky variant, say.

use super::variant::KernelDefines;

/// A host launcher: runs the kernel over a launch's grid, thread by thread (the arguments of
/// `rp_sim_launch` in `kernels/host/sim_launch.cpp`).
#[cfg(rp_sim_kernels)]
pub(super) type SimLaunch = unsafe extern "C" fn(
    grid_x: std::ffi::c_uint,
    grid_y: std::ffi::c_uint,
    block_x: std::ffi::c_uint,
    block_y: std::ffi::c_uint,
    transform: *const f64,
    sampling: *const f64,
    input: *const std::ffi::c_void,
    input_type: std::ffi::c_int,
    big_endian: std::ffi::c_int,
    in_pitch: std::ffi::c_longlong,
    win_y0: std::ffi::c_int,
    win_x0: std::ffi::c_int,
    win_ny: std::ffi::c_int,
    win_nx: std::ffi::c_int,
    in_ny: std::ffi::c_int,
    in_nx: std::ffi::c_int,
    out_y0: std::ffi::c_int,
    out_x0: std::ffi::c_int,
    blk_ny: std::ffi::c_int,
    blk_nx: std::ffi::c_int,
    out: *mut std::ffi::c_void,
    footprint: *mut std::ffi::c_void,
    out_f64: std::ffi::c_int,
    out_pitch: std::ffi::c_longlong,
);

/// Declares host launchers named `$name`, all of [`SimLaunch`]'s signature.
#[cfg(rp_sim_kernels)]
macro_rules! declare_launchers {
    ($($name:ident),*) => {
        unsafe extern "C" {
            $(
                fn $name(
                    grid_x: std::ffi::c_uint, grid_y: std::ffi::c_uint,
                    block_x: std::ffi::c_uint, block_y: std::ffi::c_uint,
                    transform: *const f64, sampling: *const f64,
                    input: *const std::ffi::c_void, input_type: std::ffi::c_int,
                    big_endian: std::ffi::c_int, in_pitch: std::ffi::c_longlong,
                    win_y0: std::ffi::c_int, win_x0: std::ffi::c_int,
                    win_ny: std::ffi::c_int, win_nx: std::ffi::c_int,
                    in_ny: std::ffi::c_int, in_nx: std::ffi::c_int,
                    out_y0: std::ffi::c_int, out_x0: std::ffi::c_int,
                    blk_ny: std::ffi::c_int, blk_nx: std::ffi::c_int,
                    out: *mut std::ffi::c_void, footprint: *mut std::ffi::c_void,
                    out_f64: std::ffi::c_int, out_pitch: std::ffi::c_longlong,
                );
            )*
        }
    };
}

/// A host build's setter of the defines its pattern leaves to run time (`*` values,
/// [`KernelDefines::pattern`]): their values, in order, for the launches that follow on the
/// calling thread.
#[cfg(rp_sim_kernels)]
type SimSet = unsafe extern "C" fn(values: *const std::ffi::c_int);

/// Declares the launchers and setters build.rs compiled and the table of their defines.
#[cfg(rp_sim_kernels)]
macro_rules! sim_variants {
    ($($entry:ident $set:ident: [$($define:literal),*];)*) => {
        declare_launchers!($($entry),*);
        unsafe extern "C" {
            $(fn $set(values: *const std::ffi::c_int);)*
        }
        /// Each specialised build's defines (a pattern), launcher and setter.
        const BUILDS: &[(&[&str], SimLaunch, SimSet)] =
            &[$((&[$($define),*], $entry as SimLaunch, $set as SimSet)),*];
    };
}

#[cfg(rp_sim_kernels)]
include!(concat!(env!("OUT_DIR"), "/sim_variants.rs"));

/// The specialised build of `variant`: its launcher, setter and the values at its pattern's
/// `*`s; `None` when the simulator has none. The patterns are parsed once.
#[cfg(rp_sim_kernels)]
fn build_of(variant: &KernelDefines) -> Option<(SimLaunch, SimSet, Vec<i32>)> {
    static PATTERNS: std::sync::OnceLock<Vec<Option<KernelDefines>>> = std::sync::OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        BUILDS
            .iter()
            .map(|(defines, _, _)| KernelDefines::pattern(defines.iter().copied()).ok())
            .collect()
    });
    BUILDS
        .iter()
        .zip(patterns)
        .find_map(|((_, entry, set), pattern)| {
            let values = variant.instance_of(pattern.as_ref()?)?;
            Some((*entry, *set, values))
        })
}

/// The launcher of `variant` (the general kernel's for the general kernel), with the values
/// its build takes at run time already given to the build for the calling thread, or `None`
/// when the simulator has no build of it.
#[cfg(rp_sim_kernels)]
pub(super) fn launcher(variant: &KernelDefines) -> Option<SimLaunch> {
    declare_launchers!(rp_sim_launch);
    if variant.is_general() {
        return Some(rp_sim_launch as SimLaunch);
    }
    let (entry, set, values) = build_of(variant)?;
    // SAFETY: the setter reads one int per `*` of its pattern: `values` holds that many.
    unsafe { set(values.as_ptr()) };
    Some(entry)
}

/// Whether the simulator has a build of `variant`.
pub(super) fn has(variant: &KernelDefines) -> bool {
    #[cfg(rp_sim_kernels)]
    {
        variant.is_general() || build_of(variant).is_some()
    }
    #[cfg(not(rp_sim_kernels))]
    {
        let _ = variant;
        false
    }
}

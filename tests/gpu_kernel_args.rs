//! CI check, no GPU needed: every launch the CUDA driver makes passes its kernel's parameters
//! in order, each where the kernel reads it and with its width (`reproject::gpu::kernel_args`).
//! A kernel reads its parameters at the offsets their declared types give, so an `int` passed
//! as a `long long` (or a parameter left out) shifts every later one, and two swapped
//! parameters of one width swap meanings; the simulator calls host-compiled launchers with
//! typed signatures and would see neither. The names are held to the kernels' source, the
//! types to the PTX that NVRTC compiles from it, whose `.entry` declarations list them.
//!
//! When libnvrtc cannot be found the PTX test prints why and passes, unless
//! `REPROJECT_RS_REQUIRE_NVRTC=1` (scripts/test.sh sets it and `REPROJECT_RS_NVRTC`).
#![cfg(feature = "cuda")]

use reproject::gpu::driver::{
    AccumulateLaunch, AccumulateOp, BlockLaunch, DevicePtr, SplineLaunch, SplineOp, SplineSamples,
};
use reproject::gpu::kernel_args::{KernelArg, KernelArgs};
use reproject::gpu::{
    compile_source, kernel_source, nvrtc_version, ACCUMULATE_ENTRY, KERNEL_ENTRY,
    SPLINE_FILTER_ENTRY, SPLINE_FILTER_FROM_ENTRY, SPLINE_VALUES_ENTRY,
};

/// The parameter types of entry point `entry` in `ptx` (`u64`, `u32`, `f64`, ...; a parameter
/// passed as bytes, such as a struct by value, as `b8[N]`), or `None` without such an entry.
fn entry_parameters(ptx: &str, entry: &str) -> Option<Vec<String>> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    let list = &ptx[start..start + ptx[start..].find(')')?];
    let types = list
        .split(".param")
        .skip(1)
        .map(|param| {
            let words: Vec<&str> = param.split_whitespace().collect();
            let ty = words
                .iter()
                .find(|w| {
                    w.starts_with('.')
                        && !w.starts_with(".align")
                        && !w.starts_with(".ptr")
                        && !w.starts_with(".global")
                })
                .map_or("?", |w| &w[1..]);
            let bytes = words
                .last()
                .and_then(|name| name.split_once('['))
                .map(|(_, n)| n);
            match (ty, bytes) {
                ("b8", Some(n)) => format!("b8[{}", n.trim_end_matches(',')),
                // Signed and untyped integers are the same width as unsigned ones.
                (t, _) => t.replacen('s', "u", 1).replacen('b', "u", 1),
            }
        })
        .collect();
    Some(types)
}

/// The parameter names of kernel `entry` in the CUDA source `src` (its `RP_GLOBAL void`
/// definition), or `None` without one.
fn source_parameters(src: &str, entry: &str) -> Option<Vec<String>> {
    let at = src
        .match_indices(&format!(" {entry}("))
        .find_map(|(i, _)| {
            let line = &src[src[..i].rfind('\n').map_or(0, |n| n + 1)..i];
            line.starts_with("RP_GLOBAL void").then_some(i)
        })?;
    let open = at + entry.len() + 2;
    let list = &src[open..open + src[open..].find(')')?];
    let names = list
        .split(',')
        .map(|param| {
            let last = param.split_whitespace().last().unwrap_or("");
            last.trim_start_matches('*').to_string()
        })
        .collect();
    Some(names)
}

fn names(args: &KernelArgs) -> Vec<&str> {
    args.iter().map(|(name, _)| *name).collect()
}

fn types(args: &KernelArgs) -> Vec<String> {
    args.iter().map(|(_, a)| a.ptx_type().to_string()).collect()
}

/// One launch of each kind the CUDA driver makes, with the entry point it runs.
fn launches() -> Vec<(String, &'static str, KernelArgs)> {
    let parse = BlockLaunch::parse_params(
        Default::default(),
        DevicePtr(256),
        DevicePtr(512),
        DevicePtr(4096),
        16384,
    )
    .unwrap();
    let block = BlockLaunch {
        out_f64: 0,
        out_pitch: 300,
        ..parse.clone()
    };
    let accumulate = AccumulateLaunch {
        grid: (8, 32),
        threads: (32, 8),
        values: Some(DevicePtr(8192)),
        weights: None,
        op: AccumulateOp::Mean,
        correction: 2,
        constants: (1.0, 0.5, 0.25),
        planes: 1,
        part: (256, 256),
        part_origin: (0, 0),
        in_block: (0, 0),
        block: (256, 256),
        data: DevicePtr(4096),
        footprint: DevicePtr(1 << 20),
    };
    let samples = SplineSamples {
        input: DevicePtr(1 << 20),
        input_type: 0,
        big_endian: 0,
        pitch: 300,
        values_f32: 1,
    };
    let filter = |axis, source| SplineOp::Filter {
        axis,
        poles: DevicePtr(256),
        npoles: 2,
        gain: 120.0,
        source,
    };
    let mut all = vec![
        ("a parse".to_string(), KERNEL_ENTRY, parse.kernel_args()),
        ("a block".to_string(), KERNEL_ENTRY, block.kernel_args()),
        (
            "an accumulation".to_string(),
            ACCUMULATE_ENTRY,
            accumulate.kernel_args(),
        ),
    ];
    for (what, op) in [
        ("the values", SplineOp::Values(samples)),
        ("the columns", filter(0, None)),
        ("the rows", filter(1, None)),
        ("the columns from samples", filter(0, Some(samples))),
    ] {
        let launch = SplineLaunch::new(DevicePtr(1 << 24), (200, 300), op).unwrap();
        let (kernel, args) = launch.kernel_args().unwrap();
        all.push((what.to_string(), kernel.entry(), args));
    }
    all
}

#[test]
fn the_spline_launches_run_the_entry_point_of_their_operation() {
    let entries: Vec<&str> = launches()[3..].iter().map(|l| l.1).collect();
    assert_eq!(
        entries,
        [
            SPLINE_VALUES_ENTRY,
            SPLINE_FILTER_ENTRY,
            SPLINE_FILTER_ENTRY,
            SPLINE_FILTER_FROM_ENTRY
        ]
    );
}

#[test]
fn every_launch_names_its_entry_points_parameters_in_order() {
    let src = kernel_source();
    for (what, entry, args) in launches() {
        let declared = source_parameters(&src, entry)
            .unwrap_or_else(|| panic!("no definition of {entry} in the kernel source"));
        assert_eq!(names(&args), declared, "{what}: the arguments of {entry}");
    }
}

#[test]
fn every_launch_passes_its_entry_points_parameter_types() {
    if let Err(e) = nvrtc_version() {
        assert!(
            !std::env::var("REPROJECT_RS_REQUIRE_NVRTC").is_ok_and(|v| v == "1"),
            "REPROJECT_RS_REQUIRE_NVRTC=1 but libnvrtc is not usable: {e}"
        );
        eprintln!("SKIPPED every_launch_passes_its_entry_points_parameter_types: {e}");
        return;
    }
    // A virtual architecture: NVRTC stops at the PTX.
    let ptx = compile_source(&kernel_source(), "compute_90").expect("the kernels compile");
    let ptx = String::from_utf8_lossy(&ptx);
    for (what, entry, args) in launches() {
        let declared = entry_parameters(&ptx, entry)
            .unwrap_or_else(|| panic!("no entry point {entry} in the PTX"));
        eprintln!("{entry} ({what}): {}", declared.join(", "));
        assert_eq!(types(&args), declared, "{what}: the arguments of {entry}");
    }
}

#[test]
fn the_parameter_reader_tells_widths_apart() {
    let ptx = ".visible .entry k(\n\t.param .u64 .ptr .align 1 k_param_0,\n\t.param .u32 \
               k_param_1,\n\t.param .f64 k_param_2,\n\t.param .s64 k_param_3,\n\t.param .align 8 \
               .b8 k_param_4[24]\n)\n{\n}\n";
    assert_eq!(
        entry_parameters(ptx, "k").unwrap(),
        ["u64", "u32", "f64", "u64", "b8[24]"]
    );
    assert_eq!(entry_parameters(ptx, "other"), None);
    let args = vec![
        ("p", KernelArg::Pointer(0)),
        ("n", KernelArg::Long(0)),
        ("x", KernelArg::Double(0.0)),
    ];
    assert_ne!(types(&args), ["u64", "u32", "f64"]);
}

#[test]
fn the_signature_reader_takes_the_definition_and_its_names() {
    let src = "// k(int a) is launched\nRP_DEVICE void k_helper(int a);\nRP_GLOBAL void \
               RP_BOUNDS k(const double* values, long long\n  pitch, int n, void* out) {\n}\n";
    assert_eq!(
        source_parameters(src, "k").unwrap(),
        ["values", "pitch", "n", "out"]
    );
    assert_eq!(source_parameters(src, "k_helper"), None);
}

//! CI check: every kernel in kernels/ compiles with NVRTC, no GPU needed, within its resource
//! budgets: the general block kernel, one variant of each family the engine can launch
//! (`KernelVariant::representatives`, kernels/variants.txt) and sky variants that compile each
//! of the 28 projections (`projection_cover`).
//!
//! Compiles as the runtime does (`reproject::gpu::resources::variant_resources`: the runtime's
//! source order and options, `--fmad=false`, the variant's defines, plus ptxas's report) for
//! the architectures of the GPUs we target, prints each build's registers, stack frame,
//! spills, shared memory and occupancy, and holds them to budgets (see `budget`). When
//! libnvrtc cannot be found the test prints why and passes; set `REPROJECT_RS_REQUIRE_NVRTC=1`
//! (as scripts/test.sh does after installing the `nvidia-cuda-nvrtc-cu12` wheel) to make a
//! missing libnvrtc a failure too. Point
//! `REPROJECT_RS_NVRTC` (or `LD_LIBRARY_PATH`) at the wheel's `nvidia/cuda_nvrtc/lib` folder.
//!
//! Each build's CUBIN is also read on its own (`cubin_resources`) and must say what ptxas's
//! report says: that reader stands in for the report when NVRTC answers from its compute cache
//! with an empty log (NVRTC 13.0, docs/measurements/h100-2026-11-27-session17).
#![cfg(feature = "cuda")]

use reproject::engine::kernel_variant::{KernelVariant, VariantInput, VariantNan, VariantOutput};
use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
use reproject::gpu::resources::{
    cubin_resources, variant_resources, KernelResources, ReportSource,
};
use reproject::gpu::{
    kernel_source, nvrtc_version, ACCUMULATE_ENTRY, KERNEL_ENTRY, KERNEL_FILES,
    SPLINE_FILTER_ENTRY, SPLINE_FILTER_FROM_ENTRY, SPLINE_VALUES_ENTRY,
};
use reproject::Error;

/// Architectures checked: Ampere (A100) and Hopper (H100/H200), plus the device's own when
/// there is one.
fn architectures() -> Vec<String> {
    let mut archs = vec!["sm_80".to_string(), "sm_90".to_string()];
    if let Ok(info) = reproject::gpu::gpu_info()
        && !archs.contains(&info.arch)
    {
        archs.push(info.arch);
    }
    archs
}

fn require_nvrtc() -> bool {
    std::env::var("REPROJECT_RS_REQUIRE_NVRTC").is_ok_and(|v| v == "1")
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    let version = match nvrtc_version() {
        Ok(v) => v,
        Err(e) => {
            assert!(
                !require_nvrtc(),
                "REPROJECT_RS_REQUIRE_NVRTC=1 but libnvrtc is not usable: {e}"
            );
            eprintln!("SKIPPED every_kernel_compiles_with_nvrtc: {e}");
            return;
        }
    };
    let files: Vec<_> = KERNEL_FILES.iter().map(|(n, _)| *n).collect();
    eprintln!("NVRTC {}.{}; sources {files:?}", version.0, version.1);
    let mut over = Vec::new();
    // The general kernel and the homography variants on every architecture; the sky variants
    // (about 5 s each to compile, twice where launch bounds are tried) on sm_90: one per
    // family, and the projection pairs that compile each of the 28 projections once (the
    // runtime compiles any pair on first use).
    let mut builds: Vec<(String, KernelVariant)> = Vec::new();
    for arch in architectures() {
        let sky = |v: &KernelVariant| matches!(v, KernelVariant::Sky { .. });
        builds.extend(
            KernelVariant::representatives()
                .into_iter()
                .filter(|v| arch == "sm_90" || !sky(v))
                .map(|v| (arch.clone(), v)),
        );
    }
    builds.extend(
        projection_cover()
            .into_iter()
            .map(|v| ("sm_90".to_string(), v)),
    );
    // Compiled on every core (NVRTC is single-threaded per program), checked in order.
    let compiled = compile_all(&builds);
    for ((arch, variant), (result, seconds)) in builds.into_iter().zip(compiled) {
        let defines = variant.defines();
        match result {
            Ok((cubin, kernels)) => {
                assert!(cubin.len() > 16, "empty image for {arch} {defines}");
                // An ELF CUBIN.
                assert_eq!(&cubin[..4], b"\x7fELF", "not a CUBIN for {arch} {defines}");
                let block = kernels
                    .iter()
                    .find(|k| k.name == KERNEL_ENTRY)
                    .unwrap_or_else(|| {
                        panic!("no ptxas report of {KERNEL_ENTRY} for {arch} {defines}")
                    });
                eprintln!(
                    "{arch} [{defines}]: {} bytes of CUBIN in {seconds:.1} s",
                    cubin.len()
                );
                over.extend(cubin_disagreements(&arch, &defines, &cubin, &kernels));
                over.extend(over_budget(&arch, &variant, block));
                // The accumulate kernel of mosaics and the spline prefilter's kernels are
                // in the general build only, launched from its module; a variant's module
                // is the block kernel alone (`build_source`).
                if variant != KernelVariant::General {
                    let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
                    assert_eq!(names, [KERNEL_ENTRY], "{arch} [{defines}]");
                } else {
                    let (filter, values) = (filter_threads(), values_threads());
                    for (entry, threads, registers, shared) in [
                        // Mosaics launch it in blocks of 32 x 8 (src/mosaic/device.rs).
                        (ACCUMULATE_ENTRY, THREADS, 40, 0),
                        (
                            SPLINE_FILTER_ENTRY,
                            filter,
                            SPLINE_FILTER_REGISTERS,
                            SPLINE_RING_BYTES,
                        ),
                        (
                            SPLINE_FILTER_FROM_ENTRY,
                            filter,
                            SPLINE_FILTER_REGISTERS,
                            SPLINE_RING_BYTES,
                        ),
                        (SPLINE_VALUES_ENTRY, values, 40, 0),
                    ] {
                        let k = kernels
                            .iter()
                            .find(|k| k.name == entry)
                            .unwrap_or_else(|| panic!("no ptxas report of {entry} for {arch}"));
                        over.extend(small_kernel_over_budget(
                            &arch, k, threads, registers, shared,
                        ));
                    }
                }
            }
            Err(e) => panic!("kernels/ does not compile for {arch} [{defines}]:\n{e}"),
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// Where the CUBIN's own attributes (`cubin_resources`) disagree with ptxas's report of the
/// build: registers, stack frame or shared memory of an entry point. A build whose log had no
/// report (its figures already read from the CUBIN) is said so, not compared.
fn cubin_disagreements(
    arch: &str,
    defines: &impl std::fmt::Display,
    cubin: &[u8],
    reported: &[KernelResources],
) -> Vec<String> {
    if reported.iter().any(|k| k.source == ReportSource::Cubin) {
        eprintln!("{arch} [{defines}]: NVRTC's log has no ptxas report; read from the CUBIN");
        return Vec::new();
    }
    let figures = |ks: &[KernelResources]| {
        let mut f: Vec<_> = ks
            .iter()
            .map(|k| (k.name.clone(), k.registers, k.stack_frame, k.shared_memory))
            .collect();
        f.sort();
        f
    };
    match cubin_resources(cubin) {
        Ok(read) if figures(&read) == figures(reported) => Vec::new(),
        Ok(read) => vec![format!(
            "{arch} [{defines}]: the CUBIN says {:?}, ptxas {:?}",
            figures(&read),
            figures(reported)
        )],
        Err(e) => vec![format!("{arch} [{defines}]: the CUBIN cannot be read: {e}")],
    }
}

/// What [`variant_resources`] gives: the CUBIN and each entry point's resources.
type Compiled = reproject::Result<(Vec<u8>, Vec<KernelResources>)>;

/// Each build's [`variant_resources`] and the seconds it took, in the order given, compiled on
/// as many threads as there are cores: the longest first (the general kernel, then the sky
/// variants, 10-25 s each; the homography variants take 1-2 s), so that no core waits at the
/// end for a long build started last.
fn compile_all(builds: &[(String, KernelVariant)]) -> Vec<(Compiled, f64)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut queue: Vec<usize> = (0..builds.len()).collect();
    queue.sort_by_key(|&i| match builds[i].1 {
        KernelVariant::General => 0,
        KernelVariant::Sky { .. } => 1,
        _ => 2,
    });
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = queue.get(k) else {
                    break;
                };
                let (arch, variant) = &builds[i];
                let started = std::time::Instant::now();
                let r = variant_resources(arch, &variant.defines());
                let seconds = started.elapsed().as_secs_f64();
                results.lock().unwrap().push((i, r, seconds));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _, _)| *i);
    results.into_iter().map(|(_, r, s)| (r, s)).collect()
}

/// Sky variants (bilinear, float32) that compile each of the 28 projections once: projections
/// 2k and 2k + 1 (a variant compiles both directions of both, for the round trip), with and
/// without the frame change in turn; CAR galactic -> TAN ICRS, the benchmark's and the command
/// line probe's job (docs/measurements/h100-2026-11-27-session21; the cover's CAR pair has no
/// frame change); and TAN-SIP -> TAN, bilinear and bicubic.
fn projection_cover() -> Vec<KernelVariant> {
    (0..14u8)
        .map(|k| KernelVariant::Sky {
            out_prj: 2 * k,
            in_prj: 2 * k + 1,
            frame: k % 2 == 0,
            sip: false,
            order: 1,
            input: VariantInput::F32,
        })
        .chain([KernelVariant::Sky {
            out_prj: TAN,
            in_prj: CAR,
            frame: true,
            sip: false,
            order: 1,
            input: VariantInput::F32,
        }])
        .chain([1, 3].map(|order| KernelVariant::Sky {
            out_prj: TAN,
            in_prj: TAN,
            frame: false,
            sip: true,
            order,
            input: VariantInput::F64,
        }))
        .collect()
}

/// What the block kernel may use (as the compiler reports it, `--ptxas-options=-v`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Budget {
    registers: u32,
    stack_frame: u32,
    shared_memory: u32,
    /// The least occupancy at [`THREADS`] threads per block.
    occupancy: f64,
}

/// The budgets of each build of the block kernel.
///
/// - The general kernel (every plan the variants do not cover) is held where it is (sm_90:
///   162 registers, a 496-byte stack frame, 3.6 KB of shared memory): it must not grow.
/// - The homography variants of orders 0 and 1 (issue 17): at most 64 registers, so at least
///   50% occupancy at 256 threads, and no stack frame. The benchmark's build (float32 in and
///   out, NaN propagated: four pixels per thread) at most 40, so 75% (sm_80 and sm_90: 40).
/// - The homography splines: no stack frame (their loops unroll), at most 104 registers (sm_90
///   order 5: 80 with launch bounds), so at least 25% occupancy.
/// - The sky variants: TAN -> TAN of orders 0 to 3, with or without SIP, at most 64 registers
///   (50% occupancy; sm_90: 54-64), every other projection pair and orders 4 and 5 at most 128
///   (25%, twice the general kernel's occupancy; sm_90: 50-70 for bilinear, 80 and 94 for
///   orders 4 and 5); no stack frame beyond CUDA's own `sin`/`cos` (40 B).
///
/// No build may spill.
fn budget(variant: &KernelVariant) -> Budget {
    match variant {
        KernelVariant::General => Budget {
            registers: 164,
            stack_frame: 512,
            shared_memory: 3_700,
            occupancy: 0.125,
        },
        KernelVariant::Homography {
            order: 1,
            input: VariantInput::F32,
            output: VariantOutput::F32,
            nan: VariantNan::Propagate,
        } => Budget {
            registers: 40,
            stack_frame: 0,
            shared_memory: 256,
            occupancy: 0.75,
        },
        KernelVariant::Homography { order: 0 | 1, .. } => Budget {
            registers: 64,
            stack_frame: 0,
            shared_memory: 256,
            occupancy: 0.5,
        },
        KernelVariant::Homography { .. } => Budget {
            registers: 104,
            stack_frame: 0,
            shared_memory: 256,
            occupancy: 0.25,
        },
        KernelVariant::Sky {
            out_prj: TAN,
            in_prj: TAN,
            order: 0..=3,
            ..
        } => Budget {
            registers: 64,
            stack_frame: MATH_LIBRARY_FRAME,
            shared_memory: 3_700,
            occupancy: 0.5,
        },
        KernelVariant::Sky { .. } => Budget {
            registers: 128,
            stack_frame: MATH_LIBRARY_FRAME,
            shared_memory: 3_700,
            occupancy: 0.25,
        },
    }
}

/// `RP_PRJ_TAN`.
const TAN: u8 = reproject::wcs::projection::ProjectionCode::Tan as u8;
/// `RP_PRJ_CAR`.
const CAR: u8 = reproject::wcs::projection::ProjectionCode::Car as u8;

/// The stack frame of CUDA's double-precision `sin` and `cos`: the Payne-Hanek reduction of
/// huge arguments keeps its digits in a local array (a kernel that is one `sin` call has it).
/// The sky variants call them; nothing else may have a frame.
const MATH_LIBRARY_FRAME: u32 = 40;

/// Threads per block of the launches (`THREADS` in src/engine/gpu_executor/resident.rs).
const THREADS: u32 = 256;

/// Prints the kernel's resources and occupancy on `arch`; what exceeds the variant's budget,
/// in words.
fn over_budget(arch: &str, variant: &KernelVariant, k: &KernelResources) -> Vec<String> {
    let b = budget(variant);
    let defines = variant.defines();
    let occupancy = k.occupancy(THREADS, arch);
    let shown = occupancy.map_or("?".to_string(), |o| format!("{:.1}%", 100.0 * o));
    eprintln!(
        "{arch} {} [{defines}]: {} registers, {} B stack frame, {} B spill stores, {} B spill \
         loads, {} B shared memory; occupancy at {THREADS} threads {shown}",
        k.name, k.registers, k.stack_frame, k.spill_stores, k.spill_loads, k.shared_memory
    );
    let mut over = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            over.push(format!("{arch} {} [{defines}]: {what}", k.name));
        }
    };
    check(k.registers > 0, "no register count in the report".into());
    check(
        k.registers <= b.registers,
        format!("{} registers > {}", k.registers, b.registers),
    );
    check(
        k.stack_frame <= b.stack_frame,
        format!("{} B stack frame > {}", k.stack_frame, b.stack_frame),
    );
    // Read from a CUBIN, spills are known only without a stack frame (the stack-frame budget
    // still holds).
    if k.spills_known() {
        check(
            k.spill_stores == 0 && k.spill_loads == 0,
            format!(
                "spills ({} B stored, {} B loaded)",
                k.spill_stores, k.spill_loads
            ),
        );
    } else {
        eprintln!(
            "{arch} {} [{defines}]: spills unknown (read from the CUBIN)",
            k.name
        );
    }
    check(
        k.shared_memory <= b.shared_memory,
        format!("{} B shared memory > {}", k.shared_memory, b.shared_memory),
    );
    if let Some(o) = occupancy {
        check(
            o >= b.occupancy,
            format!("occupancy {:.1}% < {:.1}%", 100.0 * o, 100.0 * b.occupancy),
        );
    }
    over
}

/// The budget check can fail: a homography bilinear build one register over 64 (so below 50%
/// occupancy), with a stack frame or a spill, and a general kernel grown past its budget, are
/// each reported; the budgets' own limits pass.
#[test]
fn the_budgets_reject_what_exceeds_them() {
    let bilinear = KernelVariant::Homography {
        order: 1,
        input: VariantInput::F64,
        output: VariantOutput::F64,
        nan: VariantNan::Propagate,
    };
    let at_limit = KernelResources {
        name: KERNEL_ENTRY.into(),
        registers: 64,
        shared_memory: 232,
        ..KernelResources::default()
    };
    assert_eq!(
        over_budget("sm_90", &bilinear, &at_limit),
        Vec::<String>::new()
    );
    let cases = [
        (
            "registers",
            KernelResources {
                registers: 65,
                ..at_limit.clone()
            },
        ),
        (
            "stack frame",
            KernelResources {
                stack_frame: 8,
                ..at_limit.clone()
            },
        ),
        (
            "spills",
            KernelResources {
                spill_loads: 4,
                ..at_limit.clone()
            },
        ),
        (
            "shared memory",
            KernelResources {
                shared_memory: 3_624,
                ..at_limit.clone()
            },
        ),
    ];
    for (what, k) in cases {
        let over = over_budget("sm_90", &bilinear, &k);
        assert!(over.iter().any(|o| o.contains(what)), "{what}: {over:?}");
    }
    // 65 registers is also below 50% occupancy.
    let k = KernelResources {
        registers: 65,
        ..at_limit.clone()
    };
    assert!(over_budget("sm_90", &bilinear, &k)
        .iter()
        .any(|o| o.contains("occupancy")));
    let general = KernelResources {
        name: KERNEL_ENTRY.into(),
        registers: 170,
        stack_frame: 496,
        shared_memory: 3_624,
        ..KernelResources::default()
    };
    assert_eq!(
        over_budget("sm_90", &KernelVariant::General, &general).len(),
        1
    );
}

/// The shared memory of the spline filter: its ring (`kernels/spline.cu`), two streams of two
/// stages of 32 elements for each of its 32 threads, 32 KB (six thread blocks fit an SM).
const SPLINE_RING_BYTES: u32 = 2 * 2 * 32 * 32 * 8;

/// The spline filter's registers at most (both entry points). Its thread blocks are one warp,
/// and its ring's shared memory lets six of them share an SM: registers would limit that only
/// beyond 341 a thread. 96 (its launch bounds) leaves the compiler its choice without a spill
/// (80 on sm_80 and 96 on sm_90 without bounds, with the rows streamed by warp and the initial
/// sum stopped early), where a cap of 64 spilled 4 bytes on sm_90. The filter reading a device
/// input's samples is an entry point of its own: in one kernel with the rows by warp the two
/// took 138 without bounds and spilled 12 bytes on sm_80 at 96.
const SPLINE_FILTER_REGISTERS: u32 = 96;

/// Threads per block of the spline filter's launches (one warp: `SplineLaunch::new`).
fn filter_threads() -> u32 {
    let op = SplineOp::Filter {
        axis: 0,
        poles: DevicePtr(256),
        npoles: 1,
        gain: 6.0,
        source: None,
    };
    SplineLaunch::new(DevicePtr(4096), (64, 64), op)
        .unwrap()
        .threads
}

/// Threads per block of the spline values kernel's launches (`SplineLaunch::new`).
fn values_threads() -> u32 {
    let samples = SplineSamples {
        input: DevicePtr(1 << 20),
        input_type: 3,
        big_endian: 0,
        pitch: 64,
        values_f32: 0,
    };
    SplineLaunch::new(DevicePtr(4096), (64, 64), SplineOp::Values(samples))
        .unwrap()
        .threads
}

/// The kernels beside the block kernel, each a few loads and stores per pixel or line: at most
/// `registers` registers, no stack frame, no spill, exactly `shared` bytes of shared memory.
/// The accumulate kernel of mosaics gets 40 (75% occupancy at 256 threads; sm_90 uses 40
/// today, and capping it at 32 with launch bounds spills), the spline prefilter's kernels
/// their own. The occupancy printed is that of the kernel's launches, `threads` a block.
fn small_kernel_over_budget(
    arch: &str,
    k: &KernelResources,
    threads: u32,
    registers: u32,
    shared: u32,
) -> Vec<String> {
    let occupancy = k
        .occupancy(threads, arch)
        .map_or("?".to_string(), |o| format!("{:.1}%", 100.0 * o));
    eprintln!(
        "{arch} {}: {} registers, {} B stack frame, {} B spill stores, {} B shared memory; \
         occupancy at {threads} threads {occupancy}",
        k.name, k.registers, k.stack_frame, k.spill_stores, k.shared_memory
    );
    let fits = k.registers > 0
        && k.registers <= registers
        && k.stack_frame == 0
        && k.spill_stores == 0
        && k.spill_loads == 0
        && k.shared_memory == shared;
    if fits {
        Vec::new()
    } else {
        vec![format!("{arch} {}: over its budget ({k:?})", k.name)]
    }
}

#[test]
fn the_entry_point_is_in_the_sources_once_reproject_cu_is() {
    let src = kernel_source();
    if KERNEL_FILES.iter().any(|(n, _)| *n == "reproject.cu") {
        assert!(
            src.contains(KERNEL_ENTRY),
            "reproject.cu lacks {KERNEL_ENTRY}"
        );
    }
    assert_eq!(KERNEL_FILES[0].0, "common.cuh");
    // The spline prefilter is part of the runtime's module.
    // (A kernel's line: `RP_GLOBAL void [launch bounds] name(`.)
    for entry in [
        SPLINE_FILTER_ENTRY,
        SPLINE_FILTER_FROM_ENTRY,
        SPLINE_VALUES_ENTRY,
    ] {
        let declared = src
            .lines()
            .any(|l| l.starts_with("RP_GLOBAL void ") && l.contains(&format!(" {entry}(")));
        assert!(declared, "{entry}");
    }
}

#[test]
fn a_broken_kernel_is_reported_with_the_compiler_log() {
    if nvrtc_version().is_err() {
        eprintln!("SKIPPED a_broken_kernel_is_reported_with_the_compiler_log: no libnvrtc");
        return;
    }
    // The check must be able to fail: a source with an error gives Error::Gpu with the log.
    let broken = format!(
        "{}\nRP_GLOBAL void broken() {{ undeclared_name = 1; }}\n",
        kernel_source()
    );
    let err = reproject::gpu::compile_source(&broken, "sm_80").unwrap_err();
    match err {
        Error::Gpu { message, .. } => assert!(message.contains("undeclared_name"), "{message}"),
        other => panic!("unexpected error {other:?}"),
    }
}

/// The device spline prefilter (`kernels/spline.cu`) compiles on its own too (it needs only
/// `common.cuh`) for every architecture, both entry points within their budget: at most
/// [`SPLINE_FILTER_REGISTERS`] registers, no stack frame, no spill, their ring of shared
/// memory, and no fewer blocks an SM than that shared memory allows. (The runtime's module
/// has them: see `every_kernel_compiles_with_nvrtc`.)
#[test]
fn the_spline_prefilter_compiles_within_its_budget() {
    if let Err(e) = nvrtc_version() {
        assert!(
            !require_nvrtc(),
            "REPROJECT_RS_REQUIRE_NVRTC=1 but libnvrtc is not usable: {e}"
        );
        eprintln!("SKIPPED the_spline_prefilter_compiles_within_its_budget: {e}");
        return;
    }
    for arch in architectures() {
        let (cubin, kernels) =
            reproject::gpu::resources::source_resources(&reproject::gpu::spline_source(), &arch)
                .unwrap_or_else(|e| panic!("kernels/spline.cu does not compile for {arch}:\n{e}"));
        assert_eq!(&cubin[..4], b"\x7fELF");
        for entry in [SPLINE_FILTER_ENTRY, SPLINE_FILTER_FROM_ENTRY] {
            let k = kernels
                .iter()
                .find(|k| k.name == entry)
                .unwrap_or_else(|| panic!("no ptxas report of {entry} for {arch}"));
            // Its launches' blocks, one warp each: the ring's shared memory bounds how many
            // an SM holds, and the registers must not bound them more tightly.
            let threads = filter_threads();
            let blocks = k.blocks_per_sm(threads, &arch).unwrap_or(0);
            let without_registers = KernelResources {
                registers: 0,
                ..k.clone()
            };
            let by_shared_memory = without_registers.blocks_per_sm(threads, &arch).unwrap_or(0);
            eprintln!(
                "{arch} {entry}: {} registers, {} B stack, {} B spilled; {blocks} blocks of \
                 {threads} threads an SM (shared memory allows {by_shared_memory})",
                k.registers, k.stack_frame, k.spill_stores
            );
            assert!(
                blocks > 0 && blocks == by_shared_memory,
                "{arch} {entry}: the registers leave {blocks} blocks an SM, where its shared \
                 memory allows {by_shared_memory}"
            );
            assert!(
                k.registers > 0 && k.registers <= SPLINE_FILTER_REGISTERS,
                "{arch} {entry}: {} registers",
                k.registers
            );
            assert_eq!(
                (
                    k.stack_frame,
                    k.spill_stores,
                    k.spill_loads,
                    k.shared_memory
                ),
                (0, 0, 0, SPLINE_RING_BYTES),
                "{arch} {entry}"
            );
        }
    }
}

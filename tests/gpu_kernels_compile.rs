//! CI check: every kernel in kernels/ compiles with NVRTC, no GPU needed, within its resource
//! budgets.
//!
//! Compiles as the runtime does (`reproject::gpu::resources::kernel_resources`: the runtime's
//! source order and options, `--fmad=false`, plus ptxas's report) for the architectures of the
//! GPUs we target, prints each kernel's registers, stack frame, spills, shared memory and
//! occupancy, and holds them to budgets. When libnvrtc cannot be found the test prints why and
//! passes; set `REPROJECT_RS_REQUIRE_NVRTC=1` (as scripts/test.sh does after installing the
//! `nvidia-cuda-nvrtc-cu12` wheel) to make a missing libnvrtc a failure too. Point
//! `REPROJECT_RS_NVRTC` (or `LD_LIBRARY_PATH`) at the wheel's `nvidia/cuda_nvrtc/lib` folder.
#![cfg(feature = "cuda")]

use reproject::gpu::resources::{kernel_resources, KernelResources};
use reproject::gpu::{kernel_source, nvrtc_version, ACCUMULATE_ENTRY, KERNEL_ENTRY, KERNEL_FILES};
use reproject::Error;

/// Architectures checked: Ampere (A100) and Hopper (H100/H200), plus the device's own when
/// there is one.
fn architectures() -> Vec<String> {
    let mut archs = vec!["sm_80".to_string(), "sm_90".to_string()];
    if let Ok(info) = reproject::gpu::gpu_info() {
        if !archs.contains(&info.arch) {
            archs.push(info.arch);
        }
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
    for arch in architectures() {
        match kernel_resources(&arch) {
            Ok((cubin, kernels)) => {
                assert!(cubin.len() > 16, "empty image for {arch}");
                // An ELF CUBIN.
                assert_eq!(&cubin[..4], b"\x7fELF", "not a CUBIN for {arch}");
                eprintln!("{arch}: {} bytes of CUBIN", cubin.len());
                let block = kernels
                    .iter()
                    .find(|k| k.name == KERNEL_ENTRY)
                    .unwrap_or_else(|| panic!("no ptxas report of {KERNEL_ENTRY} for {arch}"));
                over.extend(over_budget(&arch, block));
                let accumulate = kernels
                    .iter()
                    .find(|k| k.name == ACCUMULATE_ENTRY)
                    .unwrap_or_else(|| panic!("no ptxas report of {ACCUMULATE_ENTRY} for {arch}"));
                over.extend(accumulate_over_budget(&arch, accumulate));
            }
            Err(e) => panic!("kernels/ does not compile for {arch}:\n{e}"),
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// The budgets of the block kernel as the compiler reports it (`--ptxas-options=-v`): what the
/// one kernel for every plan uses today (sm_90: 164 registers, a 528-byte stack frame, 3.6 KB
/// of shared memory, no spill), held so that it does not grow. Issue 17's kernels specialised
/// per plan aim lower (homography orders 0 and 1: at most 64 registers, no stack frame).
const REGISTERS: u32 = 168;
const STACK_FRAME: u32 = 544;
const SHARED_MEMORY: u32 = 3_700;
/// Threads per block of the launches (`THREADS` in src/engine/gpu_executor.rs).
const THREADS: u32 = 256;

/// Prints the kernel's resources and occupancy on `arch`; what exceeds a budget, in words.
fn over_budget(arch: &str, k: &KernelResources) -> Vec<String> {
    let occupancy = k
        .occupancy(THREADS, arch)
        .map_or("?".to_string(), |o| format!("{:.1}%", 100.0 * o));
    eprintln!(
        "{arch} {}: {} registers, {} B stack frame, {} B spill stores, {} B spill loads, \
         {} B shared memory; occupancy at {THREADS} threads {occupancy}",
        k.name, k.registers, k.stack_frame, k.spill_stores, k.spill_loads, k.shared_memory
    );
    let mut over = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            over.push(format!("{arch} {}: {what}", k.name));
        }
    };
    check(k.registers > 0, "no register count in the report".into());
    check(
        k.registers <= REGISTERS,
        format!("{} registers > {REGISTERS}", k.registers),
    );
    check(
        k.stack_frame <= STACK_FRAME,
        format!("{} B stack frame > {STACK_FRAME}", k.stack_frame),
    );
    check(
        k.spill_stores == 0 && k.spill_loads == 0,
        format!(
            "spills ({} B stored, {} B loaded)",
            k.spill_stores, k.spill_loads
        ),
    );
    check(
        k.shared_memory <= SHARED_MEMORY,
        format!("{} B shared memory > {SHARED_MEMORY}", k.shared_memory),
    );
    over
}

/// The accumulate kernel of mosaics (a few loads, adds and stores per pixel, bound by memory):
/// at most 40 registers (75% occupancy at 256 threads; sm_90 uses 40 today, and capping it at
/// 32 with launch bounds spills), no stack frame, no spill, no shared memory.
fn accumulate_over_budget(arch: &str, k: &KernelResources) -> Vec<String> {
    let occupancy = k
        .occupancy(THREADS, arch)
        .map_or("?".to_string(), |o| format!("{:.1}%", 100.0 * o));
    eprintln!(
        "{arch} {}: {} registers, {} B stack frame, {} B spill stores, {} B shared memory; \
         occupancy at {THREADS} threads {occupancy}",
        k.name, k.registers, k.stack_frame, k.spill_stores, k.shared_memory
    );
    let fits = k.registers > 0
        && k.registers <= 40
        && k.stack_frame == 0
        && k.spill_stores == 0
        && k.spill_loads == 0
        && k.shared_memory == 0;
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

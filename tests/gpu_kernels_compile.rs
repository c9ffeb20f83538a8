//! CI check: every kernel in kernels/ compiles with NVRTC, no GPU needed.
//!
//! Uses the runtime's own compile function (`reproject::gpu::compile_kernels`, same source
//! order and options, `--fmad=false`) for the architectures of the GPUs we target. When libnvrtc
//! cannot be found the test prints why and passes; set `REPROJECT_RS_REQUIRE_NVRTC=1` (as
//! scripts/test.sh does after installing the `nvidia-cuda-nvrtc-cu12` wheel) to make a missing
//! libnvrtc a failure too. Point `REPROJECT_RS_NVRTC` (or `LD_LIBRARY_PATH`) at the wheel's
//! `nvidia/cuda_nvrtc/lib` folder.
#![cfg(feature = "cuda")]

use reproject::gpu::{compile_kernels, kernel_source, nvrtc_version, KERNEL_ENTRY, KERNEL_FILES};
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
    for arch in architectures() {
        match compile_kernels(&arch) {
            Ok(cubin) => {
                assert!(cubin.len() > 16, "empty image for {arch}");
                // An ELF CUBIN.
                assert_eq!(&cubin[..4], b"\x7fELF", "not a CUBIN for {arch}");
                eprintln!("{arch}: {} bytes of CUBIN", cubin.len());
            }
            Err(e) => panic!("kernels/ does not compile for {arch}:\n{e}"),
        }
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

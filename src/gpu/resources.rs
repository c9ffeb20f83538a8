//! What the compiler says the kernels use (registers, stack frame, spills, shared memory),
//! read from NVRTC's log with `--ptxas-options=-v` (or, when that log has no report, from the
//! CUBIN itself: [`cubin_resources`]), and the occupancy that gives: checked in CI without a
//! GPU (`tests/gpu_kernels_compile.rs`).

pub use super::cubin::cubin_resources;
pub use super::ptxas::{parse_ptxas_log, KernelResources, ReportSource};
use super::variant::KernelDefines;
use crate::error::Result;

/// Compiles the kernels for `arch` as the runtime does, with ptxas's report: the CUBIN and
/// each entry point's resources.
///
/// Errors: [`crate::Error::GpuUnavailable`] when libnvrtc cannot be loaded;
/// [`crate::Error::Gpu`] with the compiler's log when the kernels do not compile.
///
/// ```
/// if let Ok((cubin, kernels)) = reproject::gpu::resources::kernel_resources("sm_90") {
///     assert_eq!(&cubin[..4], b"\x7fELF");
///     assert!(kernels.iter().any(|k| k.name == "rp_reproject_block"));
/// }
/// ```
pub fn kernel_resources(arch: &str) -> Result<(Vec<u8>, Vec<KernelResources>)> {
    variant_resources(arch, &KernelDefines::general())
}

/// [`kernel_resources`] of one build of the kernels: the general one, or a variant of the
/// block kernel specialised by its defines, as the runtime compiles it (with the launch bounds
/// the runtime chooses for it: the tightest under which ptxas reports no spill).
///
/// Where the log has no ptxas report (NVRTC 13.0 answering from its compute cache), the
/// figures are the CUBIN's ([`cubin_resources`]).
///
/// Errors: as [`kernel_resources`], and [`crate::Error::Gpu`] with the compiler's whole log
/// when neither ptxas's report nor the CUBIN names the block kernel.
///
/// ```
/// use reproject::gpu::resources::variant_resources;
/// use reproject::gpu::variant::KernelDefines;
/// let v = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=0"])?;
/// if let Ok((_, kernels)) = variant_resources("sm_90", &v) {
///     let k = kernels.iter().find(|k| k.name == "rp_reproject_block").unwrap();
///     assert_eq!(k.stack_frame, 0);
/// }
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn variant_resources(
    arch: &str,
    variant: &KernelDefines,
) -> Result<(Vec<u8>, Vec<KernelResources>)> {
    #[cfg(feature = "cuda")]
    {
        let (cubin, log) =
            super::runtime::compile_variant(&super::build_source(variant), arch, variant)?;
        let kernels = super::cubin::build_resources(&cubin, &log);
        if !kernels.iter().any(|k| k.name == super::KERNEL_ENTRY) {
            return Err(crate::Error::Gpu {
                block: "(compilation)".into(),
                message: format!(
                    "ptxas's report for {arch} [{variant}] names no {}; the compiler's log:\n{log}",
                    super::KERNEL_ENTRY
                ),
            });
        }
        Ok((cubin, kernels))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = variant;
        compile_with_report(&super::kernel_source(), arch, &[])
    }
}

/// [`kernel_resources`] of any CUDA source (the runtime's options), e.g. a kernel on its own
/// ([`super::spline_source`]).
///
/// Errors: as [`kernel_resources`].
///
/// ```
/// let src = reproject::gpu::spline_source();
/// if let Ok((_, kernels)) = reproject::gpu::resources::source_resources(&src, "sm_90") {
///     assert!(kernels.iter().any(|k| k.name == "rp_spline_filter"));
/// }
/// ```
pub fn source_resources(src: &str, arch: &str) -> Result<(Vec<u8>, Vec<KernelResources>)> {
    compile_with_report(src, arch, &[])
}

/// Compiles `src` for `arch` with the runtime's options, `extra` options and ptxas's report.
fn compile_with_report(
    src: &str,
    arch: &str,
    extra: &[String],
) -> Result<(Vec<u8>, Vec<KernelResources>)> {
    #[cfg(feature = "cuda")]
    {
        let mut options = vec!["--ptxas-options=-v".to_string()];
        options.extend_from_slice(extra);
        let (cubin, log) = super::runtime::compile_with(src, arch, &options)?;
        let kernels = super::cubin::build_resources(&cubin, &log);
        Ok((cubin, kernels))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (src, arch, extra);
        Err(crate::Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

//! The GPU backend: per-block CUDA kernels (sources in `kernels/`) compiled at run time with
//! NVRTC through `cudarc`, loaded dynamically so that the crate builds and runs without CUDA.
//!
//! ```text
//! Backend::Auto ──probe (dlopen libcuda, libnvrtc; cuInit; a device)──▶ GPU found and working?
//!     yes ─▶ kernels/ concatenated ─NVRTC (sm_XY of the device, --fmad=false), once per process─▶
//!            per output block: input window (whole plane once when it fits) ─H2D, pinned─▶
//!            rp_reproject_block ─D2H, pinned─▶ output block    (two streams overlap the three)
//!     no  ─▶ the CPU engine, with one line on stderr saying why
//! ```
//!
//! Nothing here touches `cudarc` before the probe has found both shared libraries: `cudarc`'s
//! dynamic loading panics when a library is absent, so the probe `dlopen`s them first and turns
//! every absence into [`crate::Error::GpuUnavailable`].
//!
//! ```
//! use reproject::gpu::{gpu_info, Backend};
//! assert_eq!("auto".parse::<Backend>()?, Backend::Auto);
//! match gpu_info() {
//!     Ok(info) => println!("GPU: {}", info.name),
//!     Err(e) => println!("CPU only: {e}"),
//! }
//! # Ok::<(), reproject::Error>(())
//! ```

pub mod encode;
#[cfg(feature = "cuda")]
pub(crate) mod runtime;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Where blocks are computed.
///
/// ```
/// use reproject::gpu::Backend;
/// assert_eq!("cuda".parse::<Backend>()?, Backend::Cuda);
/// assert_eq!(Backend::Cpu.to_string(), "cpu");
/// assert!("tpu".parse::<Backend>().is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Backend {
    /// The GPU when one is present and works (and the job is one the kernels cover), else the
    /// CPU; says which on stderr when it falls back for a reason worth knowing.
    Auto,
    /// The CPU engine (default until the GPU path has been validated on hardware by the
    /// parity suite: see `tests/gpu_parity.rs`).
    #[default]
    Cpu,
    /// The GPU; an error ([`Error::GpuUnavailable`]) when there is none or it cannot be used.
    Cuda,
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Backend> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" | "gpu" => Ok(Backend::Cuda),
            _ => Err(Error::InvalidArgument(format!(
                "unknown device '{s}': expected auto, cpu or cuda"
            ))),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        })
    }
}

/// The CUDA sources, in the order NVRTC sees them concatenated (see `kernels/README.md`).
///
/// ```
/// let names: Vec<_> = reproject::gpu::KERNEL_FILES.iter().map(|(n, _)| *n).collect();
/// assert_eq!(names[0], "common.cuh");
/// ```
pub const KERNEL_FILES: &[(&str, &str)] =
    &[("common.cuh", include_str!("../../kernels/common.cuh"))];

/// Name of the kernel entry point in [`KERNEL_FILES`].
pub const KERNEL_ENTRY: &str = "rp_reproject_block";

/// The translation unit NVRTC compiles: every file of [`KERNEL_FILES`] in order, each preceded
/// by a `#line` directive so that compiler messages name the original file and line.
///
/// ```
/// let src = reproject::gpu::kernel_source();
/// assert!(src.starts_with("#line 1 \"common.cuh\""));
/// ```
pub fn kernel_source() -> String {
    let mut src = String::new();
    for (name, text) in KERNEL_FILES {
        src.push_str(&format!("#line 1 \"{name}\"\n"));
        src.push_str(text);
        if !text.ends_with('\n') {
            src.push('\n');
        }
    }
    src
}

/// The NVRTC options every compilation uses, for a `sm_XY` (or `compute_XY`) architecture:
/// no fused multiply-add contraction, so products and sums round as they do on the CPU.
///
/// ```
/// let opts = reproject::gpu::compile_options("sm_90");
/// assert!(opts.contains(&"--fmad=false".to_string()));
/// assert!(opts.contains(&"--gpu-architecture=sm_90".to_string()));
/// ```
pub fn compile_options(arch: &str) -> Vec<String> {
    vec![
        "--fmad=false".to_string(),
        "--std=c++14".to_string(),
        format!("--gpu-architecture={arch}"),
    ]
}

/// What was found of the GPU: the device the backend uses and the libraries it loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Device memory in bytes.
    pub total_memory: usize,
    /// CUDA version the driver supports, e.g. 13000 for 13.0.
    pub driver_version: i32,
    /// NVRTC version (major, minor).
    pub nvrtc_version: (i32, i32),
    /// The architecture the kernels were compiled for, e.g. "sm_90".
    pub arch: String,
}

impl fmt::Display for GpuInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (compute capability {}.{}, {:.1} GiB, driver CUDA {}.{}, NVRTC {}.{}, kernels \
             built for {})",
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.total_memory as f64 / (1u64 << 30) as f64,
            self.driver_version / 1000,
            self.driver_version % 1000 / 10,
            self.nvrtc_version.0,
            self.nvrtc_version.1,
            self.arch
        )
    }
}

/// Initialises the GPU backend once per process (probe, context, NVRTC compilation of the
/// kernels for the device, module load) and describes it, or says why there is none.
///
/// ```
/// match reproject::gpu::gpu_info() {
///     Ok(info) => assert!(info.arch.starts_with("sm_")),
///     Err(e) => assert!(matches!(e, reproject::Error::GpuUnavailable(_))),
/// }
/// ```
pub fn gpu_info() -> Result<GpuInfo> {
    #[cfg(feature = "cuda")]
    {
        runtime::gpu().map(|g| g.info.clone())
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(Error::GpuUnavailable(
            "reproject was built without its `cuda` feature".into(),
        ))
    }
}

/// The NVRTC version, loading libnvrtc if it can be found (no GPU needed).
///
/// The library is looked for under its usual names on the loader path (`LD_LIBRARY_PATH`),
/// then in `$REPROJECT_RS_NVRTC` (the library file or its folder), `$CUDA_HOME/lib64`,
/// `$CUDA_PATH/lib64` and `/usr/local/cuda/lib64`.
///
/// ```
/// match reproject::gpu::nvrtc_version() {
///     Ok((major, _)) => assert!(major >= 11),
///     Err(e) => println!("{e}"),
/// }
/// ```
pub fn nvrtc_version() -> Result<(i32, i32)> {
    #[cfg(feature = "cuda")]
    {
        runtime::nvrtc_version().map_err(Error::GpuUnavailable)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(Error::GpuUnavailable(
            "reproject was built without its `cuda` feature".into(),
        ))
    }
}

/// Compiles [`kernel_source`] with NVRTC for `arch` (`sm_XY`) with [`compile_options`] and
/// returns the CUBIN. This is the function the runtime uses (through a per-process cache), and
/// the one the CI check `tests/gpu_kernels_compile.rs` calls for several architectures.
///
/// Errors: [`Error::GpuUnavailable`] when libnvrtc cannot be loaded; [`Error::Gpu`] with the
/// compiler's log when the kernels do not compile.
///
/// ```
/// match reproject::gpu::compile_kernels("sm_80") {
///     Ok(cubin) => assert!(!cubin.is_empty()),
///     Err(reproject::Error::GpuUnavailable(why)) => println!("no NVRTC: {why}"),
///     Err(e) => panic!("the kernels do not compile: {e}"),
/// }
/// ```
pub fn compile_kernels(arch: &str) -> Result<Vec<u8>> {
    compile_source(&kernel_source(), arch)
}

/// Compiles any CUDA source as [`compile_kernels`] does (same options), e.g. to check that a
/// broken source is reported with the compiler's log.
///
/// ```
/// let src = "extern \"C\" __global__ void k(double* x) { x[0] = 1.0; }";
/// if let Ok(cubin) = reproject::gpu::compile_source(src, "sm_80") {
///     assert_eq!(&cubin[..4], b"\x7fELF");
/// }
/// ```
pub fn compile_source(src: &str, arch: &str) -> Result<Vec<u8>> {
    #[cfg(feature = "cuda")]
    {
        runtime::compile(src, arch)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (src, arch);
        Err(Error::GpuUnavailable(
            "reproject was built without its `cuda` feature".into(),
        ))
    }
}

/// A one-paragraph description of what the GPU backend found, for `reproject-rs info`.
///
/// ```
/// let text = reproject::gpu::describe();
/// assert!(text.contains("GPU"));
/// ```
pub fn describe() -> String {
    let nvrtc = match nvrtc_version() {
        Ok((a, b)) => format!("NVRTC {a}.{b}"),
        Err(e) => format!("NVRTC: {e}"),
    };
    match gpu_info() {
        Ok(info) => format!("GPU: {info}"),
        Err(e) => format!("GPU: none usable ({e}); {nvrtc}"),
    }
}

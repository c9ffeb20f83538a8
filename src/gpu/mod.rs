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
pub const KERNEL_FILES: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../../kernels/common.cuh")),
    (
        "projections.cuh",
        include_str!("../../kernels/projections.cuh"),
    ),
    ("wcs.cuh", include_str!("../../kernels/wcs.cuh")),
    ("interp.cuh", include_str!("../../kernels/interp.cuh")),
    ("reproject.cu", include_str!("../../kernels/reproject.cu")),
];

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

/// What the GPU backend finds (device and NVRTC), without compiling the kernels, for
/// `reproject-rs info`.
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
    #[cfg(feature = "cuda")]
    let device = runtime::probe_device();
    #[cfg(not(feature = "cuda"))]
    let device: std::result::Result<String, String> =
        Err("reproject was built without its `cuda` feature".into());
    match device {
        Ok(d) => format!("GPU: {d}; {nvrtc}"),
        Err(e) => format!("GPU: none ({e}); {nvrtc}"),
    }
}

/// An input image already in GPU memory (device 0's primary context, as CuPy and PyTorch use
/// it): a device pointer to plane 0's first sample, planes one after the other.
///
/// ```no_run
/// use reproject::gpu::{DeviceBuffer, DeviceImage};
/// use reproject::io::SampleType;
/// let pixels = vec![0f32; 64 * 64];
/// let bytes: Vec<u8> = pixels.iter().flat_map(|v| v.to_ne_bytes()).collect();
/// let buffer = DeviceBuffer::from_host(&bytes)?;
/// let image = DeviceImage { ptr: buffer.device_ptr(), sample: SampleType::F32,
///                           big_endian: false, pitch: 64 };
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceImage {
    /// Device address of the first sample.
    pub ptr: u64,
    /// Sample type: f32, f64, u8, i16, i32 or i64.
    pub sample: crate::io::SampleType,
    /// Whether the samples are big-endian (FITS bytes); swapped as the kernel loads them.
    pub big_endian: bool,
    /// Elements per row (at least the plane's width).
    pub pitch: usize,
}

/// GPU memory owned by the backend (device 0), e.g. for device-resident inputs and outputs
/// of the engine's `Plan::compute_on_device`.
///
/// ```no_run
/// let buffer = reproject::gpu::DeviceBuffer::zeros(1024)?;
/// assert_eq!(buffer.to_host()?, vec![0u8; 1024]);
/// # Ok::<(), reproject::Error>(())
/// ```
#[cfg(feature = "cuda")]
pub struct DeviceBuffer {
    slice: cudarc::driver::CudaSlice<u8>,
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
}

#[cfg(feature = "cuda")]
impl DeviceBuffer {
    fn gpu_err(e: impl fmt::Display) -> Error {
        Error::Gpu {
            block: "(device buffer)".into(),
            message: e.to_string(),
        }
    }

    /// `len` zero bytes on the GPU.
    pub fn zeros(len: usize) -> Result<DeviceBuffer> {
        let gpu = runtime::gpu()?;
        runtime::guard("alloc", || {
            let stream = gpu.ctx.default_stream();
            let slice = stream.alloc_zeros::<u8>(len)?;
            stream.synchronize()?;
            Ok(DeviceBuffer { slice, stream })
        })
        .map_err(Self::gpu_err)?
        .map_err(|e: cudarc::driver::DriverError| Self::gpu_err(e))
    }

    /// A copy of `bytes` on the GPU.
    pub fn from_host(bytes: &[u8]) -> Result<DeviceBuffer> {
        let gpu = runtime::gpu()?;
        runtime::guard("H2D", || {
            let stream = gpu.ctx.default_stream();
            let slice = stream.clone_htod(bytes)?;
            stream.synchronize()?;
            Ok(DeviceBuffer { slice, stream })
        })
        .map_err(Self::gpu_err)?
        .map_err(|e: cudarc::driver::DriverError| Self::gpu_err(e))
    }

    /// The bytes, copied back to the host.
    pub fn to_host(&self) -> Result<Vec<u8>> {
        runtime::guard("D2H", || self.stream.clone_dtoh(&self.slice))
            .map_err(Self::gpu_err)?
            .map_err(Self::gpu_err)
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// The device address (valid while the buffer lives).
    pub fn device_ptr(&self) -> u64 {
        use cudarc::driver::DevicePtr;
        let (p, _sync) = self.slice.device_ptr(&self.stream);
        p
    }
}

/// Host ↔ device copy bandwidth measured here, for benchmarks: (pinned H2D + D2H of `bytes`,
/// D2D copy of `bytes`) in seconds, each the best of `repeats` runs.
///
/// ```no_run
/// let (h2d_d2h, d2d) = reproject::gpu::copy_times(1 << 28, 3)?;
/// println!("PCIe round trip {h2d_d2h} s, device copy {d2d} s");
/// # Ok::<(), reproject::Error>(())
/// ```
#[cfg(feature = "cuda")]
pub fn copy_times(bytes: usize, repeats: usize) -> Result<(f64, f64)> {
    let gpu = runtime::gpu()?;
    runtime::guard(
        "copies",
        || -> std::result::Result<(f64, f64), cudarc::driver::DriverError> {
            let stream = gpu.ctx.new_stream()?;
            // SAFETY: the buffers are filled before being read (memset, then copies).
            let mut host = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, 0)? };
            host.as_mut_slice()?.fill(1);
            let mut a = stream.alloc_zeros::<u8>(bytes)?;
            let mut b = stream.alloc_zeros::<u8>(bytes)?;
            stream.synchronize()?;
            let (mut best_pcie, mut best_d2d) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..repeats.max(1) {
                let t = std::time::Instant::now();
                stream.memcpy_htod(&host, &mut a)?;
                stream.memcpy_dtoh(&a, &mut host)?;
                stream.synchronize()?;
                best_pcie = best_pcie.min(t.elapsed().as_secs_f64());
                let t = std::time::Instant::now();
                stream.memcpy_dtod(&a, &mut b)?;
                stream.synchronize()?;
                best_d2d = best_d2d.min(t.elapsed().as_secs_f64());
            }
            Ok((best_pcie, best_d2d))
        },
    )
    .map_err(DeviceBuffer::gpu_err)?
    .map_err(DeviceBuffer::gpu_err)
}

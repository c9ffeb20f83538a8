//! The GPU backend: per-block CUDA kernels (sources in `kernels/`) compiled at run time with
//! NVRTC through `cudarc`, loaded dynamically so that the crate builds and runs without CUDA.
//!
//! ```text
//! Backend::Auto ──cost model (engine::cost): GPU estimated faster? no ─▶ the CPU engine
//!     yes ─probe (dlopen libcuda, libnvrtc; cuInit; a device)──▶ GPU found and working?
//!     yes ─▶ kernels/ concatenated ─NVRTC (sm_XY of the device, --fmad=false), once per process─▶
//!            input planes in bands of rows (when they fit; else each block's window) ─H2D,
//!            pinned─▶ per output block, once its rows are there: rp_reproject_block ─D2H,
//!            pinned─▶ output block    (uploads, kernels and downloads overlap, each block on
//!            its own stream)
//!     no  ─▶ the CPU engine, with one line on stderr saying why
//! ```
//!
//! Without a GPU, [`sim`] runs the pipelines on the CUDA simulator, and [`timeline`] replays
//! what it recorded at a GPU's rates (how long the pipeline would take on an H100).
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

mod cubin;
#[cfg(feature = "cuda")]
mod cuda;
pub mod driver;
mod helper;
pub mod kernel_args;
pub mod pool;
pub mod profile;
mod ptxas;
mod registry;
pub mod resources;
#[cfg(feature = "cuda")]
pub(crate) mod runtime;
pub mod sim;
mod sim_variants;
pub mod timeline;
pub mod variant;

use std::fmt;
use std::str::FromStr;

pub use helper::{set_compile_helper, CompileHelper};
pub use registry::{
    cached_kernels, compile_build_in_background, compile_kernels_in_background, drivers,
    kernels_cache_file, kernels_cached, parse_device, readiness, release_kept_memory,
    simulated_device, simulated_devices, visible_devices, warm_build, warm_kernels, warmup,
    Devices, Readiness,
};
pub(crate) use registry::{compile_for_in_background, driver_installed};

/// Blocks until the kernel variants this process compiles in the background are ready (a
/// plan whose variant is not compiled yet runs the general kernel meanwhile, see
/// [`driver::Driver::variant_ready`]): for benchmarks that time the specialised kernels, or
/// before a job that should start on them. Returns at once when nothing is compiling.
///
/// ```
/// reproject::gpu::wait_for_compilations();
/// ```
pub fn wait_for_compilations() {
    #[cfg(feature = "cuda")]
    cuda::wait_for_compilations();
}

/// For a process about to exit: the kernel builds queued to compile in the background give
/// up, later ones do not start (their plans keep the general kernel, with the same values),
/// and a thread inside NVRTC or the CUDA driver (compiling here, or loading a build) is
/// waited for, at most 60 s, so that a hung compilation cannot hold the exit. A build that a
/// [`CompileHelper`] process compiles is not waited for: that process finishes it into the
/// disk cache by itself.
///
/// The library calls it from an `atexit` hook, which must run before NVRTC's own exit
/// handlers: a compile thread that ran on after them crashed the process (SIGSEGV, or SIGABRT
/// after "LLVM ERROR: out of memory" or a stack overflow: `tests/gpu_helper_exit.rs`), and
/// corrupted the heap of a Python process on the H100 ("free(): invalid pointer"). Exit
/// handlers run in the reverse order of their registration, and NVRTC registers its handlers
/// while it compiles, so before this process first compiles for an architecture in the
/// background, it compiles a small program for it on the calling thread (about 0.3 s) and
/// registers the hook after that. Calling this function before the process exits (the
/// command-line tool does at the end of `main`, the Python package from Python's `atexit`)
/// does not depend on that order at all.
///
/// ```
/// reproject::gpu::stop_background_compilations();
/// ```
pub fn stop_background_compilations() {
    #[cfg(feature = "cuda")]
    cuda::stop_background_compilations();
}

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
    /// The default: the GPU when the job is large enough for it to pay (a cost model:
    /// [`crate::engine::cost`]), one is present and works, and the kernels cover the job;
    /// else the CPU. Says which on stderr when it uses a GPU or cannot use one that is there.
    /// A machine without a GPU (or a job too small for it) computes on the CPU, with the
    /// same values as [`Backend::Cpu`]; a GPU's are within 1e-9 relative of them (the H100
    /// parity runs: at most 9.3e-16), with the same footprints.
    #[default]
    Auto,
    /// The CPU engine.
    Cpu,
    /// The GPU; an error ([`Error::GpuUnavailable`]) when there is none or it cannot be used.
    Cuda,
}

impl Backend {
    /// The backend of options serialised before there was one: the CPU.
    pub(crate) fn before_backends() -> Backend {
        Backend::Cpu
    }
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
    ("accumulate.cu", include_str!("../../kernels/accumulate.cu")),
    ("spline.cu", include_str!("../../kernels/spline.cu")),
    (
        "spline_values.cu",
        include_str!("../../kernels/spline_values.cu"),
    ),
];

/// Name of the kernel entry point in [`KERNEL_FILES`].
///
/// ```
/// use reproject::gpu::{kernel_source, KERNEL_ENTRY};
/// assert!(kernel_source().contains(&format!("RP_BLOCK_BOUNDS {KERNEL_ENTRY}(")));
/// ```
pub const KERNEL_ENTRY: &str = "rp_reproject_block";

/// Name of the accumulate kernel's entry point in [`KERNEL_FILES`] (mosaics combined on the
/// device).
///
/// ```
/// use reproject::gpu::{kernel_source, ACCUMULATE_ENTRY};
/// assert!(kernel_source().contains(&format!("void {ACCUMULATE_ENTRY}(")));
/// ```
pub const ACCUMULATE_ENTRY: &str = "rp_accumulate";

/// Name of the spline prefilter's entry point in [`KERNEL_FILES`] (`kernels/spline.cu`: the
/// lines of a plane of values filtered in place, orders 2-5).
///
/// ```
/// use reproject::gpu::{kernel_source, SPLINE_FILTER_ENTRY};
/// assert!(kernel_source().contains(&format!("RP_FILTER_BOUNDS {SPLINE_FILTER_ENTRY}(")));
/// ```
pub const SPLINE_FILTER_ENTRY: &str = "rp_spline_filter";

/// Name of the spline prefilter's entry point in [`KERNEL_FILES`] that reads the values from a
/// device input's samples (`kernels/spline.cu`: the column pass of a plane whose values are
/// not made first).
///
/// ```
/// use reproject::gpu::{kernel_source, SPLINE_FILTER_FROM_ENTRY};
/// assert!(kernel_source().contains(&format!("RP_FILTER_BOUNDS {SPLINE_FILTER_FROM_ENTRY}(")));
/// ```
pub const SPLINE_FILTER_FROM_ENTRY: &str = "rp_spline_filter_from";

/// Name of the entry point in [`KERNEL_FILES`] that makes the values the spline prefilter
/// starts from out of a device-resident input (`kernels/spline_values.cu`).
///
/// ```
/// use reproject::gpu::{kernel_source, SPLINE_VALUES_ENTRY};
/// assert!(kernel_source().contains(&format!("void {SPLINE_VALUES_ENTRY}(")));
/// ```
pub const SPLINE_VALUES_ENTRY: &str = "rp_spline_values";

/// The translation unit NVRTC compiles: every file of [`KERNEL_FILES`] in order, each preceded
/// by a `#line` directive so that compiler messages name the original file and line.
///
/// ```
/// let src = reproject::gpu::kernel_source();
/// assert!(src.starts_with("#line 1 \"common.cuh\""));
/// ```
pub fn kernel_source() -> String {
    translation_unit(KERNEL_FILES)
}

/// The translation unit NVRTC compiles for `build`: [`kernel_source`] for the general kernels;
/// for a specialised variant, only the block kernel's files (through `reproject.cu`). The
/// runtime takes nothing but [`KERNEL_ENTRY`] from a variant's module (the other entry points
/// come from the general build's), so NVRTC need not compile them again: 1-2 s less per
/// variant on 2 cores.
///
/// ```
/// use reproject::gpu::{build_source, kernel_source, variant::KernelDefines};
/// assert_eq!(build_source(&KernelDefines::general()), kernel_source());
/// let v = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1"])?;
/// assert!(build_source(&v).contains("rp_reproject_block"));
/// assert!(!build_source(&v).contains("rp_spline_filter"));
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn build_source(build: &variant::KernelDefines) -> String {
    if build.is_general() {
        return kernel_source();
    }
    let through = KERNEL_FILES
        .iter()
        .position(|(name, _)| *name == "reproject.cu")
        .map_or(KERNEL_FILES.len(), |i| i + 1);
    translation_unit(&KERNEL_FILES[..through])
}

/// `files` in order, each preceded by a `#line` directive naming it.
fn translation_unit(files: &[(&str, &str)]) -> String {
    let mut src = String::new();
    for (name, text) in files {
        src.push_str(&format!("#line 1 \"{name}\"\n"));
        src.push_str(text);
        if !text.ends_with('\n') {
            src.push('\n');
        }
    }
    src
}

/// The spline prefilter kernel (`kernels/spline.cu`, after `common.cuh`) on its own, as NVRTC
/// compiles it: the filter needs nothing else (the runtime's module, [`kernel_source`], has it
/// too, with `rp_spline_values`).
///
/// ```
/// assert!(reproject::gpu::spline_source().contains("rp_spline_filter"));
/// ```
pub fn spline_source() -> String {
    let files = [
        ("common.cuh", include_str!("../../kernels/common.cuh")),
        ("spline.cu", include_str!("../../kernels/spline.cu")),
    ];
    files
        .iter()
        .map(|(name, text)| format!("#line 1 \"{name}\"\n{text}\n"))
        .collect()
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
///
/// ```
/// let info = reproject::gpu::GpuInfo {
///     name: "NVIDIA H100 80GB HBM3".into(), compute_capability: (9, 0), total_memory: 80 << 30,
///     driver_version: 12080, nvrtc_version: (12, 8), arch: "sm_90".into(),
/// };
/// let text = "NVIDIA H100 80GB HBM3 (compute capability 9.0, 80.0 GiB, driver CUDA 12.8, \
///             NVRTC 12.8, kernels built for sm_90)";
/// assert_eq!(info.to_string(), text);
/// ```
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
/// kernels for the device, module load) and describes the first device, or says why there is
/// none. Under `REPROJECT_RS_CUDA_SIM=1` it describes the simulator ([`sim`]).
///
/// ```
/// match reproject::gpu::gpu_info() {
///     Ok(info) => assert!(info.arch.starts_with("sm_")),
///     Err(e) => assert!(matches!(e, reproject::Error::GpuUnavailable(_))),
/// }
/// ```
pub fn gpu_info() -> Result<GpuInfo> {
    let drivers = drivers(Devices::First)?;
    Ok(drivers[0].info().clone())
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
        Err(Error::GpuUnavailable(NO_CUDA_FEATURE.into()))
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

/// Compiles one build of the block kernel ([`variant::KernelDefines`]: the general kernel, or a
/// variant specialised by its defines) for `arch` as the runtime does, and returns the CUBIN.
///
/// Errors: as [`compile_kernels`].
///
/// ```
/// use reproject::gpu::variant::KernelDefines;
/// let v = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1", "RP_V_INPUT=0"])?;
/// match reproject::gpu::compile_variant("sm_90", &v) {
///     Ok(cubin) => assert_eq!(&cubin[..4], b"\x7fELF"),
///     Err(reproject::Error::GpuUnavailable(why)) => println!("no NVRTC: {why}"),
///     Err(e) => panic!("the variant does not compile: {e}"),
/// }
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn compile_variant(arch: &str, variant: &variant::KernelDefines) -> Result<Vec<u8>> {
    #[cfg(feature = "cuda")]
    {
        runtime::compile_variant(&build_source(variant), arch, variant).map(|(image, _)| image)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (arch, variant);
        Err(Error::GpuUnavailable(NO_CUDA_FEATURE.into()))
    }
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
        Err(Error::GpuUnavailable(NO_CUDA_FEATURE.into()))
    }
}

/// Why there is no GPU in a build without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
const NO_CUDA_FEATURE: &str = "reproject was built without its `cuda` feature";

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
    if let Some(n) = simulated_devices() {
        return format!("GPU: CUDA simulator, {n} device(s) (REPROJECT_RS_CUDA_SIM); {nvrtc}");
    }
    #[cfg(feature = "cuda")]
    let device = runtime::probe_device();
    #[cfg(not(feature = "cuda"))]
    let device: std::result::Result<String, String> = Err(NO_CUDA_FEATURE.into());
    match device {
        Ok(d) => format!("GPU: {d}; {nvrtc}; {}", kernels_line(Devices::First)),
        Err(e) => format!("GPU: none ({e}); {nvrtc}"),
    }
}

/// Whether the first device's kernels are compiled (what `auto` counts before using it).
fn kernels_line(devices: Devices) -> String {
    match readiness(devices) {
        Ok(Readiness::Open | Readiness::Cached) => "kernels compiled (disk cache)".into(),
        Ok(Readiness::Uncompiled) => "kernels not compiled yet: the first GPU job compiles \
             them (about 20 s, once; `auto` computes on the CPU meanwhile)"
            .into(),
        Err(e) => format!("kernels: {e}"),
    }
}

/// An input image already in GPU memory (device 0's primary context, as CuPy and PyTorch use
/// it): a device pointer to plane 0's first sample, planes one after the other.
///
/// ```
/// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
/// use reproject::gpu::{DeviceBuffer, DeviceImage};
/// use reproject::io::SampleType;
/// let pixels: Vec<f32> = (0..64 * 64).map(|i| i as f32).collect();
/// let bytes: Vec<u8> = pixels.iter().flat_map(|v| v.to_ne_bytes()).collect();
/// let buffer = DeviceBuffer::from_host(&bytes)?;
/// let image = DeviceImage { ptr: buffer.device_ptr(), sample: SampleType::F32,
///                           big_endian: false, pitch: 64 };
/// // Pixel (row 3, column 5) lies 3 pitches and 5 samples past `ptr`.
/// let at = (3 * image.pitch + 5) * 4;
/// assert_eq!(buffer.to_host()?[at..at + 4], (3.0 * 64.0 + 5.0f32).to_ne_bytes());
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

/// GPU memory owned by the backend (the first device, or the simulator's), e.g. for
/// device-resident inputs and outputs of the engine's `Plan::compute_on_device`; freed when
/// dropped.
///
/// ```
/// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
/// let buffer = reproject::gpu::DeviceBuffer::zeros(1024)?;
/// assert_eq!(buffer.to_host()?, vec![0u8; 1024]);
/// # Ok::<(), reproject::Error>(())
/// ```
pub struct DeviceBuffer {
    driver: std::sync::Arc<dyn driver::Driver>,
    ptr: driver::DevicePtr,
    len: usize,
}

impl DeviceBuffer {
    fn gpu_err(e: impl fmt::Display) -> Error {
        Error::Gpu {
            block: "(device buffer)".into(),
            message: e.to_string(),
        }
    }

    /// `len` bytes of device memory (not initialised) on `driver`'s device.
    fn alloc(driver: &std::sync::Arc<dyn driver::Driver>, len: usize) -> Result<DeviceBuffer> {
        Ok(DeviceBuffer {
            driver: driver.clone(),
            ptr: driver.alloc(len).map_err(Self::gpu_err)?,
            len,
        })
    }

    /// A copy of `bytes` on the first GPU.
    ///
    /// ```
    /// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
    /// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    /// let buffer = reproject::gpu::DeviceBuffer::from_host(b"NAXIS1 = 64")?;
    /// assert_eq!(buffer.len(), 11);
    /// assert_eq!(buffer.to_host()?, b"NAXIS1 = 64");
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_host(bytes: &[u8]) -> Result<DeviceBuffer> {
        let buffer = DeviceBuffer::alloc(&drivers(Devices::First)?.remove(0), bytes.len())?;
        buffer
            .driver
            .upload_now(bytes, buffer.ptr)
            .map_err(Self::gpu_err)?;
        Ok(buffer)
    }

    /// `len` zero bytes on the first GPU.
    ///
    /// ```
    /// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
    /// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    /// let buffer = reproject::gpu::DeviceBuffer::zeros(16)?;
    /// assert_eq!(buffer.to_host()?, vec![0u8; 16]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn zeros(len: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::from_host(&vec![0u8; len])
    }

    /// The bytes, copied back to the host.
    ///
    /// ```
    /// use reproject::gpu::DeviceBuffer;
    /// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
    /// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    /// let pixels = [1.5f32, -2.0, f32::NAN];
    /// let bytes: Vec<u8> = pixels.iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let buffer = DeviceBuffer::from_host(&bytes)?;
    /// assert_eq!(buffer.to_host()?, bytes); // the same bits, NaN included
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn to_host(&self) -> Result<Vec<u8>> {
        let d = &self.driver;
        let stream = d.create_stream().map_err(Self::gpu_err)?;
        let host = d.alloc_host(self.len).map_err(Self::gpu_err);
        let copied = host.and_then(|host| {
            // SAFETY: the buffer holds `len` bytes; `host` is read only after the sync.
            let r = unsafe { d.download(stream, self.ptr, &host, 0, self.len) }
                .and_then(|()| d.synchronize(stream))
                .map_err(Self::gpu_err)
                .map(|()| unsafe { host.as_slice() }.to_vec());
            d.free_host(host);
            r
        });
        d.destroy_stream(stream);
        copied
    }

    /// Size in bytes.
    ///
    /// ```
    /// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
    /// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    /// assert_eq!(reproject::gpu::DeviceBuffer::zeros(1000)?.len(), 1000);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no byte.
    ///
    /// ```
    /// use reproject::gpu::DeviceBuffer;
    /// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
    /// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    /// assert!(DeviceBuffer::zeros(0)?.is_empty());
    /// assert!(!DeviceBuffer::zeros(1)?.is_empty());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address (valid while the buffer lives).
    ///
    /// ```
    /// use reproject::gpu::DeviceBuffer;
    /// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
    /// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    /// let a = DeviceBuffer::zeros(64)?;
    /// let at = a.device_ptr();
    /// assert_ne!(at, 0);
    /// drop(a); // freed: the simulator's pool hands the address out again
    /// assert_eq!(DeviceBuffer::zeros(64)?.device_ptr(), at);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn device_ptr(&self) -> u64 {
        self.ptr.0
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        self.driver.free(self.ptr);
    }
}

/// Host ↔ device copy bandwidth measured here, for benchmarks: (page-locked H2D + D2H of
/// `bytes`, D2D copy of `bytes`) in seconds, each the best of `repeats` runs.
///
/// ```
/// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
/// let (h2d_d2h, d2d) = reproject::gpu::copy_times(1 << 20, 3)?;
/// println!("PCIe round trip {h2d_d2h} s, device copy {d2d} s");
/// assert!(h2d_d2h > 0.0 && d2d > 0.0 && h2d_d2h.is_finite() && d2d.is_finite());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn copy_times(bytes: usize, repeats: usize) -> Result<(f64, f64)> {
    let d = drivers(Devices::First)?.remove(0);
    let err = DeviceBuffer::gpu_err;
    let (a, b) = (
        DeviceBuffer::alloc(&d, bytes)?,
        DeviceBuffer::alloc(&d, bytes)?,
    );
    let stream = d.create_stream().map_err(err)?;
    let mut host = d.alloc_host(bytes).map_err(err)?;
    // SAFETY: no copy is queued on `host` yet.
    unsafe { host.as_mut_slice() }.fill(1);
    let timed = (|| {
        let (mut best_pcie, mut best_d2d) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..repeats.max(1) {
            let t = std::time::Instant::now();
            // SAFETY: both buffers hold `bytes` bytes; the host one is not touched meanwhile.
            unsafe {
                d.upload(stream, &host, 0, a.ptr, bytes)?;
                d.download(stream, a.ptr, &host, 0, bytes)?;
            }
            d.synchronize(stream)?;
            best_pcie = best_pcie.min(t.elapsed().as_secs_f64());
            let t = std::time::Instant::now();
            // SAFETY: two distinct allocations of `bytes` bytes.
            unsafe { d.copy_device(stream, a.ptr, b.ptr, bytes)? };
            d.synchronize(stream)?;
            best_d2d = best_d2d.min(t.elapsed().as_secs_f64());
        }
        Ok((best_pcie, best_d2d))
    })();
    let _ = d.synchronize(stream);
    d.destroy_stream(stream);
    d.free_host(host);
    timed.map_err(|e: driver::DriverFault| err(e))
}

/// What page-locking a caller's buffer in place costs and gives, from
/// [`registered_copy_times`]: seconds, each the best of the runs.
///
/// ```
/// // The CUDA simulator stands in for a GPU (SAFETY: no other thread yet).
/// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
/// let r = reproject::gpu::registered_copy_times(1 << 16, 2)?;
/// assert!([r.register, r.copies, r.unregister].iter().all(|t| t.is_finite() && *t >= 0.0));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegisteredCopy {
    /// cuMemHostRegister of the buffer.
    pub register: f64,
    /// The buffer up to the device and back down again, once registered.
    pub copies: f64,
    /// cuMemHostUnregister of the buffer.
    pub unregister: f64,
}

/// What it costs to page-lock `bytes` of ordinary (pageable, already touched) host memory in
/// place, as a job would lock a caller's array instead of staging it through its pinned
/// buffers, and how fast copies from it then go, on the first GPU. Against [`copy_times`], it
/// says whether locking a caller's buffers pays for one call.
///
/// Errors: [`Error::GpuUnavailable`] without a GPU; [`Error::Gpu`] when a call fails.
///
/// ```
/// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
/// let r = reproject::gpu::registered_copy_times(1 << 20, 3)?;
/// println!("lock {} s, copies {} s, unlock {} s", r.register, r.copies, r.unregister);
/// assert!(r.copies > 0.0 && r.register >= 0.0 && r.unregister >= 0.0);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn registered_copy_times(bytes: usize, repeats: usize) -> Result<RegisteredCopy> {
    let d = drivers(Devices::First)?.remove(0);
    let err = DeviceBuffer::gpu_err;
    let on_device = DeviceBuffer::alloc(&d, bytes)?;
    let stream = d.create_stream().map_err(err)?;
    let mut memory = vec![1u8; bytes.max(1)];
    let timed = (|| {
        let mut best = RegisteredCopy {
            register: f64::INFINITY,
            copies: f64::INFINITY,
            unregister: f64::INFINITY,
        };
        for _ in 0..repeats.max(1) {
            let t = std::time::Instant::now();
            // SAFETY: `memory` outlives the registration, which ends below.
            let host = unsafe { d.register_host(memory.as_mut_ptr(), bytes)? };
            best.register = best.register.min(t.elapsed().as_secs_f64());
            let t = std::time::Instant::now();
            // SAFETY: both hold `bytes` bytes; `memory` is not touched meanwhile.
            let copied = unsafe {
                d.upload(stream, &host, 0, on_device.ptr, bytes)
                    .and_then(|()| d.download(stream, on_device.ptr, &host, 0, bytes))
            }
            .and_then(|()| d.synchronize(stream));
            let copy_s = t.elapsed().as_secs_f64();
            if copied.is_err() {
                let _ = d.synchronize(stream);
            }
            let t = std::time::Instant::now();
            d.unregister_host(host);
            best.unregister = best.unregister.min(t.elapsed().as_secs_f64());
            copied?;
            best.copies = best.copies.min(copy_s);
        }
        Ok(best)
    })();
    d.destroy_stream(stream);
    drop(memory);
    timed.map_err(|e: driver::DriverFault| err(e))
}

/// The best time of `repeats` runs of `bytes` going up (page-locked host → device) on one
/// stream while as many come down (device → page-locked host) on another, on the first GPU:
/// the time both directions of PCIe take at once. Against [`copy_times`]' one direction after
/// the other, it says how much of the bus's duplex the machine gives, which bounds how far a
/// host-resident job's uploads and downloads can overlap.
///
/// Errors: [`Error::GpuUnavailable`] without a GPU; [`Error::Gpu`] when a call fails.
///
/// ```
/// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
/// let (one_way_after_other, _) = reproject::gpu::copy_times(1 << 20, 3)?;
/// let both_at_once = reproject::gpu::duplex_time(1 << 20, 3)?;
/// println!("duplex gain {:.2}x", one_way_after_other / both_at_once);
/// assert!(both_at_once > 0.0 && both_at_once.is_finite());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn duplex_time(bytes: usize, repeats: usize) -> Result<f64> {
    let d = drivers(Devices::First)?.remove(0);
    let err = DeviceBuffer::gpu_err;
    let (up_to, down_from) = (
        DeviceBuffer::alloc(&d, bytes)?,
        DeviceBuffer::alloc(&d, bytes)?,
    );
    let mut up_from = d.alloc_host(bytes).map_err(err)?;
    let down_to = match d.alloc_host(bytes) {
        Ok(h) => h,
        Err(e) => {
            d.free_host(up_from);
            return Err(err(e));
        }
    };
    let streams = match (d.create_stream(), d.create_stream()) {
        (Ok(a), Ok(b)) => [a, b],
        (a, b) => {
            let why = [&a, &b]
                .iter()
                .find_map(|r| r.as_ref().err().map(|f| f.to_string()))
                .unwrap_or_default();
            for stream in [a, b].into_iter().flatten() {
                d.destroy_stream(stream);
            }
            d.free_host(up_from);
            d.free_host(down_to);
            return Err(DeviceBuffer::gpu_err(why));
        }
    };
    // SAFETY: no copy is queued on `up_from` yet.
    unsafe { up_from.as_mut_slice() }.fill(1);
    let timed = (|| {
        let mut best = f64::INFINITY;
        for _ in 0..repeats.max(1) {
            let t = std::time::Instant::now();
            // SAFETY: every buffer holds `bytes` bytes; the host ones are not touched meanwhile.
            unsafe {
                d.upload(streams[0], &up_from, 0, up_to.ptr, bytes)?;
                d.download(streams[1], down_from.ptr, &down_to, 0, bytes)?;
            }
            d.synchronize(streams[0])?;
            d.synchronize(streams[1])?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok(best)
    })();
    for s in streams {
        let _ = d.synchronize(s);
        d.destroy_stream(s);
    }
    d.free_host(up_from);
    d.free_host(down_to);
    timed.map_err(|e: driver::DriverFault| err(e))
}

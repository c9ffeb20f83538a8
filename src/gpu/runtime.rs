//! The `cudarc` side of the GPU backend: finding the libraries without panicking, NVRTC
//! compilation, and the per-process device state (context, compiled module, streams).
//!
//! Every call into `cudarc` goes through [`guard`], which also turns a panic inside `cudarc`
//! (a missing driver symbol, say) into an error instead of a crash.

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{sys as dsys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{result as nresult, sys as nsys, Ptx};

use super::variant::KernelDefines;
use super::{
    build_source, compile_options, GpuInfo, ACCUMULATE_ENTRY, KERNEL_ENTRY, SPLINE_FILTER_ENTRY,
    SPLINE_FILTER_FROM_ENTRY, SPLINE_VALUES_ENTRY,
};
use crate::error::{Error, Result};

/// Runs `f`, turning a panic into an error message.
pub(crate) fn guard<R>(what: &str, f: impl FnOnce() -> R) -> std::result::Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        format!("{what}: {msg}")
    })
}

/// Folders where libnvrtc may be when it is not on the loader path.
fn nvrtc_folders() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = std::env::var_os("REPROJECT_RS_NVRTC") {
        dirs.push(PathBuf::from(p));
    }
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(p) = std::env::var_os(var) {
            dirs.push(PathBuf::from(p).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    dirs
}

/// `dlopen`s a library file globally (so that `cudarc`'s later `dlopen` by soname finds it
/// already loaded); never closed.
fn preload(path: &std::path::Path) -> bool {
    let Some(c) = path.to_str().and_then(|s| CString::new(s).ok()) else {
        return false;
    };
    // SAFETY: dlopen with a valid C string; the handle is deliberately leaked so the library
    // stays loaded for the process, as cudarc expects of the libraries it uses.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    !handle.is_null()
}

/// Makes sure libnvrtc can be loaded by `cudarc`, looking beyond the loader path if needed.
pub(crate) fn ensure_nvrtc() -> std::result::Result<(), String> {
    static FOUND: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            // SAFETY: only tries to dlopen candidate names (libloading), then closes them.
            if unsafe { nsys::is_culib_present() } {
                return Ok(());
            }
            let mut tried = Vec::new();
            for dir in nvrtc_folders() {
                let files = if dir.is_file() {
                    vec![dir.clone()]
                } else {
                    [
                        "libnvrtc.so.13",
                        "libnvrtc.so.12",
                        "libnvrtc.so.11.2",
                        "libnvrtc.so",
                    ]
                    .iter()
                    .map(|n| dir.join(n))
                    .collect()
                };
                for f in files {
                    if f.is_file() && preload(&f) && unsafe { nsys::is_culib_present() } {
                        return Ok(());
                    }
                }
                tried.push(dir.display().to_string());
            }
            Err(format!(
                "libnvrtc (CUDA's run-time compiler) not found on the loader path nor in {}; \
                 set LD_LIBRARY_PATH or REPROJECT_RS_NVRTC to its folder (`pip install \
                 nvidia-cuda-nvrtc-cu12` provides one)",
                tried.join(", ")
            ))
        })
        .clone()
}

/// Whether an NVIDIA driver library is installed at all.
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to dlopen candidate names, then closes them.
    unsafe { dsys::is_culib_present() }
}

/// Makes sure libcuda (the driver) can be loaded by `cudarc` and initialised.
fn ensure_driver() -> std::result::Result<(), String> {
    // SAFETY: only tries to dlopen candidate names, then closes them.
    if !unsafe { dsys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so) on this machine".into());
    }
    guard("cuInit", cudarc::driver::result::init)?
        .map_err(|e| format!("the CUDA driver did not initialise: {e}"))?;
    let n = guard(
        "cuDeviceGetCount",
        cudarc::driver::result::device::get_count,
    )?
    .map_err(|e| format!("cannot count CUDA devices: {e}"))?;
    if n < 1 {
        return Err("the CUDA driver sees no device".into());
    }
    Ok(())
}

/// The NVRTC version.
pub(crate) fn nvrtc_version() -> std::result::Result<(i32, i32), String> {
    ensure_nvrtc()?;
    guard("nvrtcVersion", || {
        let (mut a, mut b) = (0, 0);
        // SAFETY: two valid out-pointers.
        let r = unsafe { nsys::nvrtcVersion(&mut a, &mut b) };
        if r == nsys::nvrtcResult::NVRTC_SUCCESS {
            Ok((a, b))
        } else {
            Err(format!("nvrtcVersion failed: {r:?}"))
        }
    })?
}

/// Reads the program's log (empty when there is none).
///
/// # Safety
/// `prog` must be a live program.
unsafe fn program_log(prog: nsys::nvrtcProgram) -> String {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        match nresult::get_program_log(prog) {
            Ok(log) if !log.is_empty() => {
                CStr::from_ptr(log.as_ptr()).to_string_lossy().into_owned()
            }
            _ => String::new(),
        }
    }
}

/// Compiles `src` for `arch` with NVRTC and returns the CUBIN (or the PTX for a `compute_XY`
/// architecture).
pub(crate) fn compile(src: &str, arch: &str) -> Result<Vec<u8>> {
    compile_with(src, arch, &[]).map(|(image, _)| image)
}

/// [`compile`] with `extra` options after the runtime's (e.g. `--ptxas-options=-v`): the
/// image and the compiler's log.
pub(crate) fn compile_with(src: &str, arch: &str, extra: &[String]) -> Result<(Vec<u8>, String)> {
    ensure_nvrtc().map_err(Error::GpuUnavailable)?;
    let c_src = CString::new(src)
        .map_err(|_| Error::InvalidArgument("kernel source contains a NUL byte".into()))?;
    let name = CString::new("reproject.cu").map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let mut options = compile_options(arch);
    options.extend(extra.iter().cloned());
    let compile_err = |message: String| Error::Gpu {
        block: "(compilation)".into(),
        message,
    };
    guard("NVRTC", || -> Result<(Vec<u8>, String)> {
        let prog = nresult::create_program(&c_src, Some(&name))
            .map_err(|e| compile_err(format!("nvrtcCreateProgram: {e:?}")))?;
        // SAFETY: `prog` is live until destroy_program below; c_src and name outlive it.
        let out = unsafe {
            match nresult::compile_program(prog, &options) {
                Err(e) => Err(compile_err(format!(
                    "the kernels do not compile for {arch} ({e:?}, options {options:?}):\n{}",
                    program_log(prog)
                ))),
                Ok(()) => get_image(prog, arch.starts_with("sm_"))
                    .map(|image| (image, program_log(prog)))
                    .map_err(compile_err),
            }
        };
        // SAFETY: created above, destroyed once.
        let _ = unsafe { nresult::destroy_program(prog) };
        out
    })
    .map_err(compile_err)?
}

/// The CUBIN (`cubin` true) or the PTX of a compiled program.
///
/// # Safety
/// `prog` must be a live, successfully compiled program.
unsafe fn get_image(prog: nsys::nvrtcProgram, cubin: bool) -> std::result::Result<Vec<u8>, String> {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        type SizeFn = unsafe fn(nsys::nvrtcProgram, *mut usize) -> nsys::nvrtcResult;
        type GetFn = unsafe fn(nsys::nvrtcProgram, *mut c_char) -> nsys::nvrtcResult;
        let mut size = 0usize;
        let (size_fn, get_fn): (SizeFn, GetFn) = if cubin {
            (nsys::nvrtcGetCUBINSize, nsys::nvrtcGetCUBIN)
        } else {
            (nsys::nvrtcGetPTXSize, nsys::nvrtcGetPTX)
        };
        let r = size_fn(prog, &mut size);
        if r != nsys::nvrtcResult::NVRTC_SUCCESS {
            return Err(format!("cannot get the compiled image's size: {r:?}"));
        }
        let mut image = vec![0u8; size];
        let r = get_fn(prog, image.as_mut_ptr() as *mut c_char);
        if r != nsys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
            return Err(format!("cannot get the compiled image: {r:?}"));
        }
        Ok(image)
    }
}

/// The kernels' CUBIN for `arch`, built with `variant`'s defines, from the on-disk cache
/// (`$XDG_CACHE_HOME/reproject-rs` or `~/.cache/reproject-rs`, keyed by a hash of the source,
/// options, defines and NVRTC version) or compiled now and stored there (compilation takes
/// minutes for the general kernel; a cache that cannot be written is skipped silently).
pub(crate) fn cached_compile(
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> Result<Vec<u8>> {
    let src = build_source(variant);
    let file = cache_file(&src, arch, nvrtc, variant);
    cached(file.as_deref(), || {
        compile_variant(&src, arch, variant).map(|(image, _)| image)
    })
}

/// Whether the on-disk cache holds the general kernels built for `arch` by this process's
/// NVRTC (what opening a device of that architecture would otherwise compile first).
pub(crate) fn general_cached(arch: &str) -> std::result::Result<bool, String> {
    Ok(is_cached(arch, nvrtc_version()?, &KernelDefines::general()))
}

/// Where the on-disk cache keeps the general kernels built for `arch` by this process's NVRTC.
pub(crate) fn general_cache_file(arch: &str) -> Result<PathBuf> {
    build_cache_file(arch, &KernelDefines::general())
}

/// Where the on-disk cache keeps the kernels built for `arch` with `variant`'s defines by this
/// process's NVRTC.
pub(crate) fn build_cache_file(arch: &str, variant: &KernelDefines) -> Result<PathBuf> {
    let nvrtc = nvrtc_version().map_err(Error::GpuUnavailable)?;
    cache_file(&build_source(variant), arch, nvrtc, variant).ok_or_else(|| {
        Error::GpuUnavailable("no cache folder: neither XDG_CACHE_HOME nor HOME is set".into())
    })
}

/// Compiles the kernels for `arch` built with `build`'s defines into the on-disk cache,
/// unless they are there already or another process is compiling them (it holds the cache
/// file's lock: see [`crate::io::OutputLock`]). No GPU is needed, only libnvrtc.
pub(crate) fn compile_into_cache(arch: &str, build: &KernelDefines) -> Result<()> {
    let file = build_cache_file(arch, build)?;
    let _compiling = match lock_cache_file(&file) {
        Ok(lock) => lock,
        Err(Error::OutputBusy(_)) => return Ok(()),
        Err(e) => return Err(e),
    };
    let nvrtc = nvrtc_version().map_err(Error::GpuUnavailable)?;
    cached_compile(arch, nvrtc, build).map(|_| ())
}

/// How long [`cached_build`] waits for a compilation of the same kernels that is already
/// running before it compiles them itself: the general kernels take about 20 s on the H100
/// machine's NVRTC.
const COMPILATION_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The general kernels' CUBIN for `arch` by NVRTC `nvrtc`, as opening a device gets it (see
/// [`cached_build`]).
pub(crate) fn general_kernels(arch: &str, nvrtc: (i32, i32)) -> Result<Vec<u8>> {
    cached_build(arch, nvrtc, &KernelDefines::general())
}

/// The CUBIN of the kernels built for `arch` with `variant`'s defines by NVRTC `nvrtc`: from
/// the on-disk cache, or compiled now and stored there. A compilation of them already running
/// (in this process's background, or in another process: either holds the cache file's lock)
/// is waited for, up to [`COMPILATION_WAIT`], rather than repeated; compiling here holds the
/// lock, so that others wait in turn.
pub(crate) fn cached_build(
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> Result<Vec<u8>> {
    let compile = || cached_compile(arch, nvrtc, variant);
    let Ok(file) = build_cache_file(arch, variant) else {
        return compile();
    };
    let give_up = std::time::Instant::now() + COMPILATION_WAIT;
    loop {
        if file.is_file() {
            return compile(); // read from the cache (compiled again if it is damaged)
        }
        match lock_cache_file(&file) {
            Ok(_compiling) => return compile(),
            Err(Error::OutputBusy(_)) if std::time::Instant::now() < give_up => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            // A cache folder that cannot be locked, or a compilation that never ends.
            Err(_) => return compile(),
        }
    }
}

/// The kernels built for `arch` with `variant`'s defines by NVRTC `nvrtc` as the on-disk cache
/// holds them, whole (`None` when it does not: nothing is compiled).
pub(crate) fn cached_image(
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> Option<Vec<u8>> {
    read_cached(&cache_file(&build_source(variant), arch, nvrtc, variant)?)
}

/// Takes the lock of the cache file `file` (creating its folder): held while its kernels
/// compile. [`Error::OutputBusy`] while another compilation holds it.
fn lock_cache_file(file: &std::path::Path) -> Result<crate::io::OutputLock> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    crate::io::OutputLock::acquire(file)
}

/// The architecture (`sm_XY`) of device `ordinal`, asked of the driver without a context.
pub(crate) fn device_arch(ordinal: usize) -> std::result::Result<String, String> {
    ensure_driver()?;
    let device = guard("cuDeviceGet", || {
        cudarc::driver::result::device::get(ordinal as i32)
    })?
    .map_err(|e| format!("no CUDA device {ordinal}: {e}"))?;
    let attribute = |which| {
        // SAFETY: `device` came from cuDeviceGet; the driver is initialised (ensure_driver).
        guard("cuDeviceGetAttribute", || unsafe {
            cudarc::driver::result::device::get_attribute(device, which)
        })?
        .map_err(|e| format!("cannot read device {ordinal}'s compute capability: {e}"))
    };
    use dsys::CUdevice_attribute::*;
    let major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    Ok(format!("sm_{major}{minor}"))
}

/// Where the on-disk cache keeps `src` built for `arch` with `variant`'s defines by NVRTC
/// `nvrtc` (`None` without a cache folder: no `XDG_CACHE_HOME` nor `HOME`).
fn cache_file(
    src: &str,
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> Option<PathBuf> {
    let key = cache_key(src, arch, nvrtc, variant);
    let dir = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("reproject-rs"))?;
    Some(dir.join(format!("kernels-{arch}-{key:016x}.cubin")))
}

/// Whether the on-disk cache holds the kernels built for `arch` with `variant`'s defines by
/// NVRTC `nvrtc` (a file of that name: [`cached`] still checks it when it is read).
pub(crate) fn is_cached(arch: &str, nvrtc: (i32, i32), variant: &KernelDefines) -> bool {
    cache_file(&build_source(variant), arch, nvrtc, variant).is_some_and(|f| f.is_file())
}

/// The launch bounds a specialised build may take, best first: `__launch_bounds__(256, n)`
/// asks ptxas to fit `n` thread blocks of 256 threads on an SM (at most 64 registers for 4:
/// 50% occupancy instead of 25% for a sky variant's 96, kernels/README.md).
const MIN_BLOCKS: [u32; 3] = [4, 3, 2];

/// Compiles `src` with `variant`'s defines and ptxas's report (`--ptxas-options=-v`): the image and
/// the log. A specialised build whose block kernel fits fewer than `n` thread blocks of 256 threads
/// per SM by its registers is rebuilt with the first of [`MIN_BLOCKS`] above that under which ptxas
/// reports no spill and no larger stack frame (`-DRP_V_MIN_BLOCKS=n`, kernels/common.cuh); builds
/// that fit already are left alone (bounds would let ptxas use more registers), and the general
/// kernel has none (it would spill).
pub(crate) fn compile_variant(
    src: &str,
    arch: &str,
    variant: &KernelDefines,
) -> Result<(Vec<u8>, String)> {
    let mut options = vec!["--ptxas-options=-v".to_string()];
    options.extend(variant.options());
    let plain = compile_with(src, arch, &options)?;
    if variant.is_general() {
        return Ok(plain);
    }
    let block = |(cubin, log): &(Vec<u8>, String)| {
        super::cubin::build_resources(cubin, log)
            .into_iter()
            .find(|k| k.name == KERNEL_ENTRY)
    };
    let Some(unbounded) = block(&plain) else {
        return Ok(plain);
    };
    // Unknown architectures: as many blocks as the registers allow on the ones we know.
    let fits = unbounded
        .blocks_per_sm(BLOCK_THREADS, arch)
        .or_else(|| unbounded.blocks_per_sm(BLOCK_THREADS, "sm_90"))
        .unwrap_or(0);
    for n in MIN_BLOCKS {
        if fits >= n {
            break;
        }
        let mut bounded = options.clone();
        bounded.push(format!("-DRP_V_MIN_BLOCKS={n}"));
        let build = compile_with(src, arch, &bounded)?;
        // No spill, and no more local memory than without bounds.
        let clean = |k: &super::ptxas::KernelResources| {
            k.spills_known()
                && k.spill_stores == 0
                && k.spill_loads == 0
                && k.stack_frame <= unbounded.stack_frame
        };
        if block(&build).is_some_and(|k| clean(&k)) {
            return Ok(build);
        }
    }
    Ok(plain)
}

/// The threads of the block kernel's thread blocks (`THREADS` of the GPU executor), which
/// `__launch_bounds__` of kernels/reproject.cu assumes.
const BLOCK_THREADS: u32 = 256;

/// The on-disk cache's key of `src` built for `arch` with `variant`'s defines by NVRTC
/// `nvrtc`: a hash of all four (the general kernel's key is the one it had before there were
/// variants).
fn cache_key(src: &str, arch: &str, nvrtc: (i32, i32), variant: &KernelDefines) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (src, compile_options(arch), nvrtc).hash(&mut h);
    if !variant.is_general() {
        (variant.options(), MIN_BLOCKS).hash(&mut h);
    }
    h.finish()
}

/// The check trailer of a cached image: a marker and a hash of the image.
fn trailer(image: &[u8]) -> [u8; 16] {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    image.hash(&mut h);
    let mut t = [0u8; 16];
    t[..8].copy_from_slice(b"RPCUBIN1");
    t[8..].copy_from_slice(&h.finish().to_le_bytes());
    t
}

/// The image in `file` when its trailer vouches for it; otherwise `make()`'s, stored in
/// `file` (atomically, with its trailer) for next time. A corrupt or truncated cache file is
/// rebuilt, never trusted.
pub(crate) fn cached(
    file: Option<&std::path::Path>,
    make: impl FnOnce() -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    if let Some(image) = file.and_then(read_cached) {
        return Ok(image);
    }
    let image = make()?;
    if let Some(file) = file {
        let mut stored = image.clone();
        stored.extend_from_slice(&trailer(&image));
        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
        let made = file
            .parent()
            .is_none_or(|d| std::fs::create_dir_all(d).is_ok());
        if made && std::fs::write(&tmp, &stored).is_ok() && std::fs::rename(&tmp, file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(image)
}

/// The image a cache file holds, if it is whole (its trailer checks out).
fn read_cached(file: &std::path::Path) -> Option<Vec<u8>> {
    let stored = std::fs::read(file).ok()?;
    if stored.len() <= 16 {
        return None;
    }
    let (image, t) = stored.split_at(stored.len() - 16);
    (t == trailer(image)).then(|| image.to_vec())
}

/// A light look at device 0 (no compilation): name, compute capability, memory, driver.
pub(crate) fn probe_device() -> std::result::Result<String, String> {
    ensure_driver()?;
    let ctx = guard("cuDevicePrimaryCtxRetain", || CudaContext::new(0))?
        .map_err(|e| format!("cannot create a CUDA context on device 0: {e}"))?;
    let name = guard("cuDeviceGetName", || ctx.name())?.map_err(|e| e.to_string())?;
    let (major, minor) =
        guard("cuDeviceGetAttribute", || ctx.compute_capability())?.map_err(|e| e.to_string())?;
    let mem = guard("cuDeviceTotalMem", || ctx.total_mem())?.map_err(|e| e.to_string())?;
    let mut driver = 0;
    // SAFETY: a valid out-pointer; the driver library is loaded (ensure_driver).
    guard("cuDriverGetVersion", || unsafe {
        dsys::cuDriverGetVersion(&mut driver)
    })?;
    Ok(format!(
        "{name} (compute capability {major}.{minor}, {:.1} GiB, driver CUDA {}.{})",
        mem as f64 / (1u64 << 30) as f64,
        driver / 1000,
        driver % 1000 / 10
    ))
}

/// The number of CUDA devices the driver sees (an error when there is no usable driver).
pub(crate) fn device_count() -> std::result::Result<usize, String> {
    ensure_driver()?;
    let n = guard(
        "cuDeviceGetCount",
        cudarc::driver::result::device::get_count,
    )?
    .map_err(|e| format!("cannot count CUDA devices: {e}"))?;
    Ok(n.max(0) as usize)
}

/// Opens device `ordinal`: its primary context, the kernels compiled for it (from the on-disk
/// cache when there) and loaded.
pub(crate) fn open_device(ordinal: usize) -> std::result::Result<super::cuda::CudaDriver, String> {
    ensure_driver()?;
    ensure_nvrtc()?;
    let nvrtc_version = nvrtc_version()?;
    let ctx = guard("cuDevicePrimaryCtxRetain", || CudaContext::new(ordinal))?
        .map_err(|e| format!("cannot create a CUDA context on device {ordinal}: {e}"))?;
    let name = guard("cuDeviceGetName", || ctx.name())?.map_err(|e| e.to_string())?;
    let (major, minor) =
        guard("cuDeviceGetAttribute", || ctx.compute_capability())?.map_err(|e| e.to_string())?;
    let total_memory = guard("cuDeviceTotalMem", || ctx.total_mem())?.map_err(|e| e.to_string())?;
    let mut driver_version = 0;
    // SAFETY: a valid out-pointer; the driver library is loaded (ensure_driver).
    guard("cuDriverGetVersion", || unsafe {
        dsys::cuDriverGetVersion(&mut driver_version)
    })?;
    let arch = format!("sm_{major}{minor}");
    let image = general_kernels(&arch, nvrtc_version).map_err(|e| e.to_string())?;
    let module = guard("cuModuleLoadData", || {
        ctx.load_module(Ptx::from_binary(image))
    })?
    .map_err(|e| format!("the driver cannot load the kernels built for {arch}: {e}"))?;
    let func = guard("cuModuleGetFunction", || module.load_function(KERNEL_ENTRY))?
        .map_err(|e| format!("no {KERNEL_ENTRY} in the compiled kernels: {e}"))?;
    let accumulate = guard("cuModuleGetFunction", || {
        module.load_function(ACCUMULATE_ENTRY)
    })?
    .map_err(|e| format!("no {ACCUMULATE_ENTRY} in the compiled kernels: {e}"))?;
    let spline_filter = guard("cuModuleGetFunction", || {
        module.load_function(SPLINE_FILTER_ENTRY)
    })?
    .map_err(|e| format!("no {SPLINE_FILTER_ENTRY} in the compiled kernels: {e}"))?;
    let spline_filter_from = guard("cuModuleGetFunction", || {
        module.load_function(SPLINE_FILTER_FROM_ENTRY)
    })?
    .map_err(|e| format!("no {SPLINE_FILTER_FROM_ENTRY} in the compiled kernels: {e}"))?;
    let spline_values = guard("cuModuleGetFunction", || {
        module.load_function(SPLINE_VALUES_ENTRY)
    })?
    .map_err(|e| format!("no {SPLINE_VALUES_ENTRY} in the compiled kernels: {e}"))?;
    let info = GpuInfo {
        name,
        compute_capability: (major, minor),
        total_memory,
        driver_version,
        nvrtc_version,
        arch,
    };
    let kernels = super::cuda::Kernels {
        block: func,
        accumulate,
        spline_filter,
        spline_filter_from,
        spline_values,
    };
    Ok(super::cuda::CudaDriver::new(
        ordinal, ctx, module, kernels, info,
    ))
}

/// The block kernel built with `variant`'s defines for the device of `ctx` (`arch`, e.g.
/// `sm_90`): compiled (or read from the on-disk cache), loaded, and its entry point found.
pub(crate) fn load_variant(
    ctx: &Arc<CudaContext>,
    arch: &str,
    nvrtc: (i32, i32),
    variant: &KernelDefines,
) -> std::result::Result<(Arc<CudaModule>, CudaFunction), String> {
    let image = cached_compile(arch, nvrtc, variant)
        .map_err(|e| format!("the kernel variant {variant} does not compile: {e}"))?;
    load_image(ctx, image, variant)
}

/// The block kernel of `variant`'s compiled `image`, loaded into the context `ctx`, and its
/// entry point.
pub(crate) fn load_image(
    ctx: &Arc<CudaContext>,
    image: Vec<u8>,
    variant: &KernelDefines,
) -> std::result::Result<(Arc<CudaModule>, CudaFunction), String> {
    let module = guard("cuModuleLoadData", || {
        ctx.load_module(Ptx::from_binary(image))
    })?
    .map_err(|e| format!("the driver cannot load the kernel variant {variant}: {e}"))?;
    let func = guard("cuModuleGetFunction", || module.load_function(KERNEL_ENTRY))?
        .map_err(|e| format!("no {KERNEL_ENTRY} in the kernel variant {variant}: {e}"))?;
    Ok((module, func))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_has_its_own_cache_key() {
        let v = |d: &[&str]| KernelDefines::new(d.iter().copied()).unwrap();
        let general = KernelDefines::general();
        let h1 = v(&["RP_V_HOMOGRAPHY", "RP_V_ORDER=1"]);
        let h0 = v(&["RP_V_HOMOGRAPHY", "RP_V_ORDER=0"]);
        let key = |src: &str, arch: &str, nvrtc, variant: &KernelDefines| {
            cache_key(src, arch, nvrtc, variant)
        };
        let base = key("src", "sm_90", (12, 9), &general);
        assert_eq!(
            base,
            key("src", "sm_90", (12, 9), &KernelDefines::general())
        );
        assert_eq!(
            key("src", "sm_90", (12, 9), &h1),
            key("src", "sm_90", (12, 9), &h1)
        );
        let others = [
            key("src", "sm_90", (12, 9), &h1),
            key("src", "sm_90", (12, 9), &h0),
            key("src", "sm_80", (12, 9), &general),
            key("src", "sm_90", (12, 8), &general),
            key("src2", "sm_90", (12, 9), &general),
        ];
        for (i, k) in others.iter().enumerate() {
            assert_ne!(*k, base, "{i}");
        }
        assert_ne!(others[0], others[1]);
    }

    #[test]
    fn a_corrupt_cache_file_is_rebuilt_not_trusted() {
        let dir = std::env::temp_dir().join(format!("rp-cache-test-{}", std::process::id()));
        let file = dir.join("kernels.cubin");
        let made = std::cell::Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            Ok(b"\x7fELF the image".to_vec())
        };
        assert_eq!(cached(Some(&file), make).unwrap(), b"\x7fELF the image");
        assert_eq!(cached(Some(&file), make).unwrap(), b"\x7fELF the image");
        assert_eq!(made.get(), 1, "the second call reads the cache");
        // One flipped byte, then a truncation: each rebuilt.
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[6] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(cached(Some(&file), make).unwrap(), b"\x7fELF the image");
        assert_eq!(made.get(), 2);
        std::fs::write(&file, &bytes[..10]).unwrap();
        assert_eq!(cached(Some(&file), make).unwrap(), b"\x7fELF the image");
        assert_eq!(made.get(), 3);
        assert_eq!(cached(Some(&file), make).unwrap(), b"\x7fELF the image");
        assert_eq!(made.get(), 3, "the rebuilt file is good");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

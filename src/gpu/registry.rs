//! The process's GPUs: which devices a job uses ([`Devices`]), each opened once per process
//! (context, kernels compiled and loaded), or the simulator in their place when
//! `REPROJECT_RS_CUDA_SIM` is set. A device whose context a sticky error poisoned is never
//! handed out again.

use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use super::driver::Driver;
use super::sim::{SimConfig, SimDriver};
use super::Backend;
use crate::error::{Error, Result};

/// Which GPUs a job runs on.
///
/// ```
/// use reproject::gpu::Devices;
/// assert_eq!("1".parse::<Devices>()?, Devices::Ordinal(1));
/// assert_eq!("all".parse::<Devices>()?, Devices::All);
/// assert_eq!(Devices::First.to_string(), "0");
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Devices {
    /// Device 0.
    #[default]
    First,
    /// The device of this ordinal (`cuda:N`).
    Ordinal(usize),
    /// Every visible device, blocks spread across them (`cuda:all`).
    All,
}

impl FromStr for Devices {
    type Err = Error;
    fn from_str(s: &str) -> Result<Devices> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(Devices::All),
            n => n.parse::<usize>().map(Devices::Ordinal).map_err(|_| {
                Error::InvalidArgument(format!(
                    "unknown GPU '{s}': expected a device number or 'all'"
                ))
            }),
        }
    }
}

impl std::fmt::Display for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Devices::First => f.write_str("0"),
            Devices::Ordinal(n) => write!(f, "{n}"),
            Devices::All => f.write_str("all"),
        }
    }
}

/// Parses a device string as Python and the CLI take it: `cpu`, `auto`, `cuda` (or `gpu`),
/// `cuda:N`, `cuda:all`.
///
/// ```
/// use reproject::gpu::{parse_device, Backend, Devices};
/// assert_eq!(parse_device("cuda:1")?, (Backend::Cuda, Devices::Ordinal(1)));
/// assert_eq!(parse_device("auto")?, (Backend::Auto, Devices::First));
/// assert!(parse_device("cpu:1").is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn parse_device(s: &str) -> Result<(Backend, Devices)> {
    match s.split_once(':') {
        None => Ok((s.parse()?, Devices::First)),
        Some((backend, devices)) => {
            let backend: Backend = backend.parse()?;
            if backend == Backend::Cpu {
                return Err(Error::InvalidArgument(format!(
                    "unknown device '{s}': the CPU takes no device number"
                )));
            }
            Ok((backend, devices.parse()?))
        }
    }
}

/// The number of simulated devices `REPROJECT_RS_CUDA_SIM` asks for (`1` or `true`: one,
/// `N`: N), or `None` when the real driver is used.
///
/// ```
/// use reproject::gpu::simulated_devices;
/// // SAFETY: no other thread reads the environment meanwhile.
/// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "2") };
/// assert_eq!(simulated_devices(), Some(2));
/// // SAFETY: no other thread reads the environment meanwhile.
/// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "off") };
/// assert_eq!(simulated_devices(), None);
/// ```
pub fn simulated_devices() -> Option<usize> {
    let v = std::env::var("REPROJECT_RS_CUDA_SIM").ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "off" => None,
        "true" | "yes" | "on" => Some(1),
        n => Some(n.parse::<usize>().unwrap_or(1).max(1)),
    }
}

/// Whether there is a driver to talk to at all: the simulator, or an installed NVIDIA driver
/// (machines without one are the common case, where falling back to the CPU is not news).
pub(crate) fn driver_installed() -> bool {
    if simulated_devices().is_some() {
        return true;
    }
    #[cfg(feature = "cuda")]
    {
        super::runtime::driver_present()
    }
    #[cfg(not(feature = "cuda"))]
    {
        false
    }
}

fn simulators() -> &'static [Arc<SimDriver>] {
    static SIM: OnceLock<Vec<Arc<SimDriver>>> = OnceLock::new();
    SIM.get_or_init(|| {
        (0..simulated_devices().unwrap_or(1))
            .map(|i| Arc::new(SimDriver::new(SimConfig::from_env(i))))
            .collect()
    })
}

/// The simulated device `ordinal` the registry hands out under `REPROJECT_RS_CUDA_SIM` (to
/// read its records in tests); `None` when the simulator is not in use or has no such device.
///
/// ```
/// use reproject::gpu::simulated_device;
/// // SAFETY: no other thread reads the environment meanwhile.
/// unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
/// let first = simulated_device(0).expect("one simulated device");
/// assert!(std::sync::Arc::ptr_eq(&first, &simulated_device(0).unwrap())); // the same one
/// assert!(simulated_device(1).is_none());
/// ```
pub fn simulated_device(ordinal: usize) -> Option<Arc<SimDriver>> {
    simulated_devices()?;
    simulators().get(ordinal).cloned()
}

/// The real devices this process has opened (or failed to open), by ordinal.
#[cfg(feature = "cuda")]
type OpenDevices =
    std::collections::HashMap<usize, std::result::Result<Arc<super::cuda::CudaDriver>, String>>;

/// The process's [`OpenDevices`], locked.
#[cfg(feature = "cuda")]
fn open_devices() -> std::sync::MutexGuard<'static, OpenDevices> {
    static OPEN: OnceLock<std::sync::Mutex<OpenDevices>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

#[cfg(feature = "cuda")]
fn real(ordinal: usize) -> std::result::Result<Arc<dyn Driver>, String> {
    let mut open = open_devices();
    let opened = open
        .entry(ordinal)
        .or_insert_with(|| super::runtime::open_device(ordinal).map(Arc::new));
    opened.clone().map(|d| d as Arc<dyn Driver>)
}

/// How far a process is from computing on a GPU: what its first job there pays before the
/// kernels run (the cost model's start, [`crate::engine::cost`]).
///
/// ```
/// use reproject::gpu::{readiness, Devices, Readiness};
/// match readiness(Devices::First) {
///     Ok(Readiness::Open) => println!("open in this process"),
///     Ok(Readiness::Cached) => println!("its kernels are in the disk cache"),
///     Ok(Readiness::Uncompiled) => println!("its kernels would be compiled first"),
///     Err(e) => println!("no GPU: {e}"),
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Open in this process (context made, kernels loaded; always so for the simulator).
    Open,
    /// Not open, its kernels in the on-disk cache: a job makes the context and loads them.
    Cached,
    /// Not open, and its kernels were never compiled for its architecture by this NVRTC: a
    /// job would compile them first (about 17 s for the general kernels on the H100 machine).
    Uncompiled,
}

/// The readiness of the first device `devices` names, found without opening it: no context is
/// made and nothing compiled (the driver is initialised, the device's architecture read and
/// the disk cache looked at).
///
/// Errors: [`Error::GpuUnavailable`] when there is no usable driver, device or libnvrtc, or
/// the device's context was poisoned; always without the `cuda` feature (and never for the
/// simulator).
///
/// ```
/// use reproject::gpu::{readiness, Devices};
/// if let Ok(r) = readiness(Devices::First) {
///     println!("GPU 0: {r:?}");
/// }
/// ```
pub fn readiness(devices: Devices) -> Result<Readiness> {
    if simulated_devices().is_some() {
        return Ok(Readiness::Open);
    }
    #[cfg(feature = "cuda")]
    {
        let ordinal = first_ordinal(devices);
        if let Some(opened) = open_devices().get(&ordinal) {
            return match opened {
                Ok(driver) => match driver.poisoned() {
                    None => Ok(Readiness::Open),
                    Some(why) => Err(Error::GpuUnavailable(format!(
                        "GPU {ordinal}'s context was poisoned by {why}"
                    ))),
                },
                Err(e) => Err(Error::GpuUnavailable(e.clone())),
            };
        }
        let arch = super::runtime::device_arch(ordinal).map_err(Error::GpuUnavailable)?;
        match super::runtime::general_cached(&arch).map_err(Error::GpuUnavailable)? {
            true => Ok(Readiness::Cached),
            false => Ok(Readiness::Uncompiled),
        }
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = devices;
        Err(Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

/// The device a job on `devices` starts on.
#[cfg(feature = "cuda")]
fn first_ordinal(devices: Devices) -> usize {
    match devices {
        Devices::Ordinal(n) => n,
        Devices::First | Devices::All => 0,
    }
}

/// Compiles the kernels for the first device `devices` names into the on-disk cache on a
/// background thread, without opening it ([`compile_kernels_in_background`] for its
/// architecture). Whether a compilation started.
pub(crate) fn compile_for_in_background(devices: Devices) -> Result<bool> {
    #[cfg(feature = "cuda")]
    {
        let arch =
            super::runtime::device_arch(first_ordinal(devices)).map_err(Error::GpuUnavailable)?;
        compile_kernels_in_background(&arch)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = devices;
        compile_kernels_in_background("")
    }
}

/// Whether the on-disk cache (`$XDG_CACHE_HOME/reproject-rs` or `~/.cache/reproject-rs`)
/// holds the kernels built for GPUs of architecture `arch` (e.g. `sm_90`) by this process's
/// libnvrtc: then opening such a GPU compiles nothing.
///
/// Errors: [`Error::GpuUnavailable`] without libnvrtc or the `cuda` feature.
///
/// ```
/// if let Ok(cached) = reproject::gpu::kernels_cached("sm_90") {
///     println!("H100 kernels cached: {cached}");
/// }
/// ```
pub fn kernels_cached(arch: &str) -> Result<bool> {
    #[cfg(feature = "cuda")]
    {
        super::runtime::general_cached(arch).map_err(Error::GpuUnavailable)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = arch;
        Err(Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

/// The file where the on-disk cache keeps (or would keep) the kernels built for GPUs of
/// architecture `arch` (e.g. `sm_90`) by this process's libnvrtc.
///
/// Errors: [`Error::GpuUnavailable`] without libnvrtc, the `cuda` feature or a cache folder
/// (neither `XDG_CACHE_HOME` nor `HOME` set).
///
/// ```
/// if let Ok(file) = reproject::gpu::kernels_cache_file("sm_90") {
///     assert!(file.to_string_lossy().contains("kernels-sm_90-"));
/// }
/// ```
pub fn kernels_cache_file(arch: &str) -> Result<std::path::PathBuf> {
    #[cfg(feature = "cuda")]
    {
        super::runtime::general_cache_file(arch)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = arch;
        Err(Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

/// The kernels' CUBIN for GPUs of architecture `arch` (e.g. `sm_90`), as opening such a GPU
/// gets them: from the on-disk cache, or compiled now by this process's libnvrtc and stored
/// there (no GPU is needed). A compilation of them already running, in this process's
/// background ([`compile_kernels_in_background`]) or in another process, is waited for
/// rather than repeated.
///
/// Errors: [`Error::GpuUnavailable`] without libnvrtc or the `cuda` feature;
/// [`Error::Gpu`] when NVRTC rejects the kernels.
///
/// ```no_run
/// let cubin = reproject::gpu::cached_kernels("sm_90")?; // compiles once per machine
/// assert!(reproject::gpu::kernels_cached("sm_90")?);
/// assert_eq!(reproject::gpu::cached_kernels("sm_90")?, cubin); // from the cache
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn cached_kernels(arch: &str) -> Result<Vec<u8>> {
    #[cfg(feature = "cuda")]
    {
        let nvrtc = super::runtime::nvrtc_version().map_err(Error::GpuUnavailable)?;
        super::runtime::general_kernels(arch, nvrtc)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = arch;
        Err(Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

/// [`cached_kernels`] for a person (`reproject-rs warmup --arch`, Python's
/// `warmup(arch=...)`): the kernels for GPUs of architecture `arch` compiled into the on-disk
/// cache unless they are there, and one line saying so and where, e.g. `kernels for sm_90:
/// compiled in 14.2 s, in /home/me/.cache/reproject-rs/kernels-sm_90-….cubin`.
///
/// Errors: [`Error::InvalidArgument`] for an `arch` that is not `sm_` and digits; those of
/// [`cached_kernels`].
///
/// ```
/// assert!(reproject::gpu::warm_kernels("9.0").unwrap_err().to_string().contains("sm_90"));
/// ```
pub fn warm_kernels(arch: &str) -> Result<String> {
    warm_build(arch, None)
}

/// [`warm_kernels`] for the build of the kernels that `variant` names (its NVRTC defines,
/// space separated, as [`super::variant::KernelDefines`] prints them; `None` for the general
/// kernels): what a [`super::CompileHelper`] runs (`reproject-rs warmup --arch ARCH --variant
/// DEFINES`). A compilation of the same build already running in another process is waited
/// for, and then read from the cache. The line names the build, e.g. `kernels for sm_90
/// [RP_V_HOMOGRAPHY RP_V_ORDER=1]: compiled in 1.9 s, in ...`.
///
/// Errors: those of [`warm_kernels`]; [`Error::InvalidArgument`] for defines that are not
/// `NAME` or `NAME=VALUE`; [`Error::Gpu`] when NVRTC rejects the build.
///
/// ```
/// let e = reproject::gpu::warm_build("sm_90", Some("RP_V_ORDER=")).unwrap_err();
/// assert!(e.to_string().contains("not a kernel define"), "{e}");
/// ```
pub fn warm_build(arch: &str, variant: Option<&str>) -> Result<String> {
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::InvalidArgument(format!(
            "'{arch}' is not a GPU architecture: expected sm_80, sm_90, ... (`nvidia-smi \
             --query-gpu=compute_cap --format=csv` gives 9.0 for sm_90)"
        )));
    }
    let build = named_build(variant)?;
    #[cfg(feature = "cuda")]
    {
        use super::runtime;
        let nvrtc = runtime::nvrtc_version().map_err(Error::GpuUnavailable)?;
        let was_cached = runtime::is_cached(arch, nvrtc, &build);
        let t = std::time::Instant::now();
        runtime::cached_build(arch, nvrtc, &build)?;
        let how = if was_cached {
            "already compiled".to_string()
        } else {
            format!("compiled in {:.1} s", t.elapsed().as_secs_f64())
        };
        let file = runtime::build_cache_file(arch, &build)?;
        let name = if build.is_general() {
            String::new()
        } else {
            format!(" [{build}]")
        };
        Ok(format!(
            "kernels for {arch}{name}: {how}, in {}",
            file.display()
        ))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = build;
        Err(Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

/// The build of the kernels that `variant`'s defines (space separated) name, the general one
/// for `None`.
fn named_build(variant: Option<&str>) -> Result<super::variant::KernelDefines> {
    match variant {
        Some(defines) => super::variant::KernelDefines::new(defines.split_whitespace()),
        None => Ok(super::variant::KernelDefines::general()),
    }
}

/// Compiles the kernels for GPUs of architecture `arch` (e.g. `sm_90`) into the on-disk cache
/// on a background thread: only libnvrtc is needed, no GPU (a container image can be given
/// its kernels when it is built). Nothing starts while this process compiles them already;
/// the thread does nothing when they are cached or another process holds the cache file's
/// lock ([`crate::io::OutputLock`]). Whether a compilation started;
/// [`super::wait_for_compilations`] waits for it. A process that exits first waits for it
/// only while it compiles on this process's thread: with a [`super::CompileHelper`] set, the
/// helper's process finishes it (see [`super::stop_background_compilations`]).
///
/// [`crate::engine::Plan`]s with [`super::Backend::Auto`] start this when a job would be
/// faster on a GPU whose kernels were never compiled, and compute that job on the CPU.
///
/// Errors: [`Error::GpuUnavailable`] without libnvrtc or the `cuda` feature.
///
/// ```no_run
/// reproject::gpu::compile_kernels_in_background("sm_90")?;
/// reproject::gpu::wait_for_compilations();
/// assert!(reproject::gpu::kernels_cached("sm_90")?);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn compile_kernels_in_background(arch: &str) -> Result<bool> {
    compile_build_in_background(arch, None)
}

/// [`compile_kernels_in_background`] for the build of the kernels that `variant` names (its
/// NVRTC defines, as for [`warm_build`]; `None`: the general kernels), e.g. the variant of a
/// kind of job a worker will run, compiled while it does other work. With a
/// [`super::CompileHelper`] set, the helper compiles it in a process of its own, and a process
/// that exits meanwhile neither waits for it nor loses it.
///
/// Errors: [`Error::InvalidArgument`] for defines that are not `NAME` or `NAME=VALUE`; those
/// of [`compile_kernels_in_background`].
///
/// ```no_run
/// let bilinear = "RP_V_HOMOGRAPHY RP_V_ORDER=1 RP_V_INPUT=0 RP_V_OUT=0 RP_V_NAN=0";
/// reproject::gpu::compile_build_in_background("sm_90", Some(bilinear))?;
/// reproject::gpu::wait_for_compilations();
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn compile_build_in_background(arch: &str, variant: Option<&str>) -> Result<bool> {
    let build = named_build(variant)?;
    #[cfg(feature = "cuda")]
    {
        super::runtime::nvrtc_version().map_err(Error::GpuUnavailable)?;
        Ok(super::cuda::compile_in_background(arch, &build))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (arch, build);
        Err(Error::GpuUnavailable(super::NO_CUDA_FEATURE.into()))
    }
}

#[cfg(not(feature = "cuda"))]
fn real(_ordinal: usize) -> std::result::Result<Arc<dyn Driver>, String> {
    Err(super::NO_CUDA_FEATURE.into())
}

fn device_count() -> std::result::Result<usize, String> {
    if let Some(n) = simulated_devices() {
        return Ok(n);
    }
    #[cfg(feature = "cuda")]
    {
        super::runtime::device_count()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(super::NO_CUDA_FEATURE.into())
    }
}

/// The ordinals `devices` names among the visible devices, found without opening them (a
/// count of the devices, no context, no compilation): for spreading worker processes over
/// GPUs.
///
/// ```
/// use reproject::gpu::{visible_devices, Devices};
/// if let Ok(ordinals) = visible_devices(Devices::All) {
///     assert!(!ordinals.is_empty());
/// }
/// ```
pub fn visible_devices(devices: Devices) -> Result<Vec<usize>> {
    let count = device_count().map_err(Error::GpuUnavailable)?;
    let wanted: Vec<usize> = match devices {
        Devices::First => vec![0],
        Devices::Ordinal(n) => vec![n],
        Devices::All => (0..count).collect(),
    };
    match wanted.iter().find(|&&n| n >= count) {
        Some(n) => Err(Error::GpuUnavailable(format!(
            "no GPU {n}: {count} device(s) visible"
        ))),
        None if wanted.is_empty() => Err(Error::GpuUnavailable(
            "the CUDA driver sees no device".into(),
        )),
        None => Ok(wanted),
    }
}

/// Device `ordinal`, unless its context is poisoned.
fn device(ordinal: usize) -> Result<Arc<dyn Driver>> {
    let driver: Arc<dyn Driver> = match simulated_devices() {
        Some(n) => match simulators().get(ordinal) {
            Some(sim) => sim.clone(),
            None => {
                return Err(Error::GpuUnavailable(format!(
                    "no GPU {ordinal}: the CUDA simulator has {n} device(s)"
                )))
            }
        },
        None => real(ordinal).map_err(Error::GpuUnavailable)?,
    };
    if let Some(why) = driver.poisoned() {
        return Err(Error::GpuUnavailable(format!(
            "GPU {ordinal} is not used again in this process: its context was poisoned by {why}"
        )));
    }
    Ok(driver)
}

/// The drivers of the devices `devices` names, each opened (and its kernels compiled) once
/// per process; under `REPROJECT_RS_CUDA_SIM` the simulated devices.
///
/// Errors: [`Error::GpuUnavailable`] when there is no such device, no usable driver, or the
/// device's context was poisoned by an earlier sticky error.
///
/// ```
/// use reproject::gpu::{drivers, Devices};
/// match drivers(Devices::All) {
///     Ok(gpus) => println!("{} GPU(s), first: {}", gpus.len(), gpus[0].info().name),
///     Err(e) => println!("no GPU: {e}"),
/// }
/// ```
pub fn drivers(devices: Devices) -> Result<Vec<Arc<dyn Driver>>> {
    if devices == Devices::First {
        return Ok(vec![device(0)?]);
    }
    let mut found = Vec::new();
    let mut why = Vec::new();
    for n in visible_devices(devices)? {
        match device(n) {
            Ok(d) => found.push(d),
            Err(e) => why.push(e.to_string()),
        }
    }
    if found.is_empty() {
        return Err(Error::GpuUnavailable(why.join("; ")));
    }
    Ok(found)
}

/// Opens the devices and compiles the kernels ahead of the first job (for a dask worker's
/// set-up hook, say), so that no job pays for it; returns a line per device.
///
/// ```
/// match reproject::gpu::warmup(reproject::gpu::Devices::First) {
///     Ok(lines) => println!("{}", lines.join("\n")),
///     Err(e) => println!("no GPU: {e}"),
/// }
/// ```
pub fn warmup(devices: Devices) -> Result<Vec<String>> {
    Ok(drivers(devices)?
        .iter()
        .map(|d| format!("GPU {}: {}", d.ordinal(), d.info()))
        .collect())
}

/// Frees the device memory, page-locked host memory and streams the opened devices keep for
/// the next jobs (see [`super::pool`]): for a process that is done reprojecting and wants the
/// GPU's memory for something else. Opens nothing; the next job allocates again.
///
/// ```
/// reproject::gpu::release_kept_memory();
/// ```
pub fn release_kept_memory() {
    if simulated_devices().is_some() {
        simulators().iter().for_each(|sim| sim.release_kept());
    } else {
        // Collected first: the registry's lock is not held while they release.
        #[cfg(feature = "cuda")]
        {
            let open: Vec<Arc<super::cuda::CudaDriver>> = open_devices()
                .values()
                .filter_map(|d| d.clone().ok())
                .collect();
            open.iter().for_each(|driver| driver.release_kept());
        }
    }
}

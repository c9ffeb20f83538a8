//! `reproject-rs warmup`: a machine's GPUs opened and their kernels compiled into the disk
//! cache once, so that the first job uses them (`auto` keeps a job on the CPU while the
//! kernels compile, and a process that ends first waits for them); with `--arch`, the
//! kernels of an architecture compiled without a GPU (a container image's build).

use std::time::Instant;

use reproject::gpu::{self, Backend};

use crate::{parse_device, CliResult};

/// Opens the GPUs `device` names and prints a line per GPU, or, with `arch`, compiles the
/// kernels for that architecture into the disk cache and prints where they are.
pub fn run(device: &str, arch: Option<&str>) -> CliResult<()> {
    for line in match arch {
        Some(arch) => compile(arch)?,
        None => open(device)?,
    } {
        println!("{line}");
    }
    Ok(())
}

/// The kernels for GPUs of architecture `arch` (`sm_XY`), compiled into the disk cache
/// unless they are there (a compilation already running, here or elsewhere, is waited for).
fn compile(arch: &str) -> CliResult<Vec<String>> {
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "--arch {arch}: expected a GPU architecture such as sm_80 or sm_90 (`nvidia-smi \
             --query-gpu=compute_cap --format=csv` gives 9.0 for sm_90)"
        ));
    }
    let was_cached = gpu::kernels_cached(arch).map_err(|e| e.to_string())?;
    let t = Instant::now();
    gpu::cached_kernels(arch).map_err(|e| e.to_string())?;
    let file = gpu::kernels_cache_file(arch).map_err(|e| e.to_string())?;
    let how = if was_cached {
        "already compiled".to_string()
    } else {
        format!("compiled in {:.1} s", t.elapsed().as_secs_f64())
    };
    Ok(vec![format!(
        "kernels for {arch}: {how}, in {}",
        file.display()
    )])
}

/// The GPUs of `device` opened (their kernels compiled or loaded): a line per GPU.
fn open(device: &str) -> CliResult<Vec<String>> {
    let (backend, devices) = parse_device(device)?;
    match backend {
        Backend::Cpu => Ok(vec!["cpu: nothing to prepare".into()]),
        Backend::Auto => {
            Ok(gpu::warmup(devices)
                .unwrap_or_else(|e| vec![format!("auto: the CPU computes ({e})")]))
        }
        Backend::Cuda => gpu::warmup(devices).map_err(|e| e.to_string()),
    }
}

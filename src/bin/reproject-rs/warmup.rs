//! `reproject-rs warmup`: a machine's GPUs opened and their kernels compiled into the disk
//! cache once, so that the first job uses them (`auto` keeps a job on the CPU while the
//! kernels compile); with `--arch`, the kernels of an architecture compiled without a GPU (a
//! container image's build), and with `--variant` one specialised build of them: the
//! command's jobs run `warmup --arch ARCH [--variant DEFINES]` as their compile helper
//! (`reproject::gpu::CompileHelper`), a process that finishes the build after they exit.

use reproject::gpu::{self, Backend};

use crate::{parse_device, CliResult};

/// Opens the GPUs `device` names and prints a line per GPU, or, with `arch`, compiles the
/// kernels for that architecture (the build `variant`'s defines name, or the general one) into
/// the disk cache and prints where they are.
pub fn run(device: &str, arch: Option<&str>, variant: Option<&str>) -> CliResult<()> {
    for line in match arch {
        Some(arch) => vec![gpu::warm_build(arch, variant).map_err(|e| e.to_string())?],
        None => open(device)?,
    } {
        println!("{line}");
    }
    Ok(())
}

/// The GPUs of `device` opened (their kernels compiled or loaded): a line per GPU.
fn open(device: &str) -> CliResult<Vec<String>> {
    let (backend, devices) = parse_device(device)?;
    match backend {
        Backend::Cpu => Ok(vec!["cpu: nothing to prepare".into()]),
        Backend::Auto => {
            Ok(gpu::warmup(devices)
                .unwrap_or_else(|e| vec![format!("cpu: no GPU can be used ({e})")]))
        }
        Backend::Cuda => gpu::warmup(devices).map_err(|e| e.to_string()),
    }
}

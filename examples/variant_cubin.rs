//! Writes the CUBIN of builds of the block kernel, compiled with NVRTC as the runtime compiles
//! them (the same options, launch bounds where the runtime adds them), and prints each one's
//! resources from ptxas: for reading the machine code of a variant on a machine without a GPU,
//! e.g. with `cuobjdump -sass` (the `nvidia-cuda-cuobjdump` wheel has it). That is how the
//! per-pixel instruction count of issue 17 was read (kernels/README.md).
//!
//! ```text
//! cargo run --release --example variant_cubin -- [ARCH] [OUT_DIR]
//!     (ARCH defaults to sm_90, OUT_DIR to the current folder: one ARCH-DEFINES.cubin per
//!      build of `KernelVariant::representatives`: the general kernel, every homography
//!      build and one sky build per family)
//! cuobjdump -sass -fun rp_reproject_block OUT_DIR/sm_90-RP_V_HOMOGRAPHY-RP_V_ORDER=1-RP_V_INPUT=0.cubin
//! ```
//! Needs libnvrtc (`REPROJECT_RS_NVRTC` or the loader path); prints `SKIPPED` without it.

#[cfg(not(feature = "cuda"))]
fn main() {
    println!("SKIPPED variant_cubin: built without the `cuda` feature");
}

#[cfg(feature = "cuda")]
fn main() {
    use reproject::engine::kernel_variant::KernelVariant;
    use reproject::gpu::resources::variant_resources;

    let mut args = std::env::args().skip(1);
    let arch = args.next().unwrap_or_else(|| "sm_90".to_string());
    let out = std::path::PathBuf::from(args.next().unwrap_or_else(|| ".".to_string()));
    if let Err(e) = reproject::gpu::nvrtc_version() {
        println!("SKIPPED variant_cubin: {e}");
        return;
    }
    for variant in KernelVariant::representatives() {
        let defines = variant.defines();
        let name = format!("{arch}-{defines}").replace(' ', "-");
        match variant_resources(&arch, &defines) {
            Ok((cubin, kernels)) => {
                let path = out.join(format!("{name}.cubin"));
                if let Err(e) = std::fs::write(&path, cubin) {
                    eprintln!("cannot write {}: {e}", path.display());
                    std::process::exit(1);
                }
                let block = kernels
                    .iter()
                    .find(|k| k.name == reproject::gpu::KERNEL_ENTRY);
                match block {
                    Some(k) => println!(
                        "{}: {} registers, {} B stack frame, {} B spilled",
                        path.display(),
                        k.registers,
                        k.stack_frame,
                        k.spill_stores
                    ),
                    None => println!("{}: (no ptxas report)", path.display()),
                }
            }
            Err(e) => {
                eprintln!("{name} does not compile: {e}");
                std::process::exit(1);
            }
        }
    }
}

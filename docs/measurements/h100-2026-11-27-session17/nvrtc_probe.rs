//! Run 4's probe (built as `examples/nvrtc_probe.rs` of 921d731's parent for the run, kept
//! here for the record): compiles the whole kernel source with ptxas's report, for sm_90, for
//! sm_90 again with a comment appended, for sm_80, and for sm_90 a third time, printing each
//! one's time, CUBIN size and the report's figures, and writing the CUBINs to the folder given.
fn main() {
    use reproject::gpu::resources::source_resources;
    let out = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    println!("NVRTC {:?}", reproject::gpu::nvrtc_version());
    let src = reproject::gpu::kernel_source();
    for (tag, arch, text) in [
        ("plain", "sm_90", src.clone()),
        ("nonce", "sm_90", format!("{src}\n// probe {}\n", std::process::id())),
        ("plain80", "sm_80", src.clone()),
        ("again", "sm_90", src.clone()),
    ] {
        let t = std::time::Instant::now();
        match source_resources(&text, arch) {
            Ok((cubin, kernels)) => {
                println!(
                    "{tag} {arch}: {:.1} s, {} bytes, report of {:?}",
                    t.elapsed().as_secs_f64(),
                    cubin.len(),
                    kernels
                        .iter()
                        .map(|k| (&k.name, k.registers, k.stack_frame, k.spill_stores))
                        .collect::<Vec<_>>()
                );
                let _ = std::fs::write(out.join(format!("{tag}.cubin")), cubin);
            }
            Err(e) => println!("{tag} {arch}: {:.1} s, error {e}", t.elapsed().as_secs_f64()),
        }
    }
}

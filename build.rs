//! Compiles the CUDA kernels as host C++ for the CUDA simulator (`src/gpu/sim.rs`), which
//! `REPROJECT_RS_CUDA_SIM=1` puts in place of the driver. Without a C++ compiler the library
//! still builds; the simulator then says it has no kernels.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rp_sim_kernels)");
    println!("cargo::rerun-if-changed=kernels");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let built = cc::Build::new()
        .cpp(true)
        .file("kernels/host/sim_launch.cpp")
        .include("kernels")
        .opt_level(2)
        .flag_if_supported("-std=c++14")
        .flag_if_supported("-ffp-contract=off")
        .warnings(false)
        .cargo_warnings(false)
        .try_compile("rp_sim_kernels");
    match built {
        Ok(()) => println!("cargo::rustc-cfg=rp_sim_kernels"),
        Err(e) => {
            println!("cargo::warning=the CUDA simulator has no kernels (no C++ compiler?): {e}")
        }
    }
}

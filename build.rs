//! Compiles the CUDA kernels as host C++ for the CUDA simulator (`src/gpu/sim/`), which
//! `REPROJECT_RS_CUDA_SIM=1` puts in place of the driver: the general kernel
//! (`kernels/host/sim_launch.cpp`) and one build per specialised variant listed in
//! `kernels/variants.txt` (`kernels/host/sim_variant.cpp` with that variant's defines), with
//! the table of those builds for `src/gpu/sim_variants.rs`. Without a C++ compiler the library
//! still builds; the simulator then says it has no kernels.
//!
//! With `REPROJECT_RS_SANITIZE_SIM=1` (a test build of its own, in its own target directory:
//! the test binaries link the sanitizers' runtimes) the simulator's kernels are built under
//! AddressSanitizer and UBSan, as the test harnesses' are, and `rp_sim_sanitized` is set: the
//! simulator then also makes the bytes of an allocation past those asked for unreadable, so
//! a kernel that reads past its buffers stops the test.

use std::fmt::Write as _;
use std::path::PathBuf;

include!("kernels/host/sanitizers.rs");

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rp_sim_kernels)");
    println!("cargo::rustc-check-cfg=cfg(rp_sim_sanitized)");
    println!("cargo::rerun-if-changed=kernels");
    println!("cargo::rerun-if-env-changed=REPROJECT_RS_SANITIZE_SIM");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let list = std::fs::read_to_string("kernels/variants.txt").expect("kernels/variants.txt");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("kernels/host/sim_launch.cpp")
        .include("kernels")
        .opt_level(2)
        .flag_if_supported("-std=c++14")
        .flag_if_supported("-ffp-contract=off")
        .warnings(false)
        .cargo_warnings(false);
    let mut table = String::from("sim_variants! {\n");
    let lines = list
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty());
    for (i, line) in lines.enumerate() {
        let entry = format!("rp_sim_launch_v{i}");
        let mut cpp = String::new();
        let mut quoted = Vec::new();
        // A `*` value is taken at run time: a variable of this build, which the setter
        // `{entry}_set` gives the values of the launch's variant (src/gpu/sim_variants.rs).
        let mut setter = format!("extern \"C\" void {entry}_set(const int* v) {{\n");
        for define in line.split_whitespace() {
            let (name, value) = define.split_once('=').unwrap_or((define, "1"));
            if value == "*" {
                let k = quoted.len();
                writeln!(cpp, "static thread_local int rp_sim_value_{k};").expect("a String");
                writeln!(cpp, "#define {name} rp_sim_value_{k}").expect("a String");
                writeln!(setter, "    rp_sim_value_{k} = *v++;").expect("a String");
            } else {
                writeln!(cpp, "#define {name} {value}").expect("a String");
            }
            quoted.push(format!("{define:?}"));
        }
        setter.push_str("    (void)v;\n}\n");
        writeln!(cpp, "#define RP_SIM_ENTRY {entry}").expect("a String");
        writeln!(cpp, "#define RP_SIM_KERNEL rp_reproject_block_v{i}").expect("a String");
        cpp.push_str("#include \"host/sim_variant.cpp\"\n");
        cpp.push_str(&setter);
        let file = out.join(format!("rp_sim_variant_{i}.cpp"));
        std::fs::write(&file, cpp).expect("OUT_DIR is writable");
        build.file(file);
        writeln!(table, "    {entry} {entry}_set: [{}];", quoted.join(", ")).expect("a String");
    }
    table.push_str("}\n");
    std::fs::write(out.join("sim_variants.rs"), table).expect("OUT_DIR is writable");
    let sanitize = std::env::var_os("REPROJECT_RS_SANITIZE_SIM").is_some_and(|v| v == "1");
    if sanitize {
        for flag in SANITIZER_FLAGS {
            build.flag(flag);
        }
        build.define("RP_SIM_SANITIZED", None);
    }
    match build.try_compile("rp_sim_kernels") {
        Ok(()) => {
            println!("cargo::rustc-cfg=rp_sim_kernels");
            if sanitize {
                println!("cargo::rustc-cfg=rp_sim_sanitized");
                // The runtimes, linked where rustc puts this library's own native libraries:
                // before the C and Rust runtimes', so AddressSanitizer's comes first, as it
                // must to replace malloc.
                println!("cargo::rustc-link-lib=dylib=asan");
                println!("cargo::rustc-link-lib=dylib=ubsan");
            }
        }
        Err(e) => {
            println!("cargo::warning=the CUDA simulator has no kernels (no C++ compiler?): {e}")
        }
    }
}

//! The kernels compiled in the background into the on-disk cache, with NVRTC and no GPU: what
//! `Backend::Auto` starts when a job would be faster on a GPU whose kernels were never
//! compiled (see `Plan::executor`).
//!
//! Runs in its own process (it points `XDG_CACHE_HOME` at a fresh folder). When libnvrtc
//! cannot be found the test prints why and passes, unless `REPROJECT_RS_REQUIRE_NVRTC=1` (as
//! scripts/test.sh sets, with `REPROJECT_RS_NVRTC` at the `nvidia-cuda-nvrtc-cu12` wheel's
//! library folder).
#![cfg(feature = "cuda")]

use std::path::Path;

use reproject::gpu::{
    compile_kernels_in_background, kernels_cache_file, kernels_cached, wait_for_compilations,
};
use reproject::io::OutputLock;

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn kernels_compile_in_the_background_into_the_disk_cache_once() {
    let root = std::env::temp_dir().join(format!("rp-background-compile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    // SAFETY: set before any thread of this test process reads the environment (this is the
    // binary's only test).
    unsafe { std::env::set_var("XDG_CACHE_HOME", &root) };
    let cache = root.join("reproject-rs");

    let arch = "sm_90";
    match kernels_cached(arch) {
        Err(e) if std::env::var("REPROJECT_RS_REQUIRE_NVRTC").is_ok_and(|v| v == "1") => {
            panic!("REPROJECT_RS_REQUIRE_NVRTC=1 but libnvrtc cannot be used: {e}")
        }
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
        Ok(cached) => assert!(!cached, "a fresh cache folder holds kernels"),
    }

    let started = compile_kernels_in_background(arch).unwrap();
    assert!(started);
    assert!(
        !compile_kernels_in_background(arch).unwrap(),
        "a second compilation of the same kernels started while the first runs"
    );
    let t = std::time::Instant::now();
    wait_for_compilations();
    println!(
        "general kernels for {arch}: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert!(kernels_cached(arch).unwrap());
    let files = files_in(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].starts_with("kernels-sm_90-") && files[0].ends_with(".cubin"),
        "{files:?}"
    );

    // Cached: the thread starts, finds them there, and compiles nothing.
    let t = std::time::Instant::now();
    assert!(compile_kernels_in_background(arch).unwrap());
    wait_for_compilations();
    assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
    assert_eq!(files_in(&cache), files);

    // While another owner holds the lock of the file that sm_80's kernels go to (another
    // process compiling them; a lock is the kernel's, per open file, so this process's own
    // refuses the compilation's the same way), the compilation leaves them to it.
    let sm80 = kernels_cache_file("sm_80").unwrap();
    assert_eq!(sm80.parent(), Some(cache.as_path()));
    let owner = OutputLock::acquire(&sm80).unwrap();
    assert!(compile_kernels_in_background("sm_80").unwrap());
    wait_for_compilations();
    assert!(!kernels_cached("sm_80").unwrap());
    assert!(!sm80.exists());
    drop(owner);
    assert_eq!(files_in(&cache), files, "the lock file was left behind");
    let _ = std::fs::remove_dir_all(&root);
}

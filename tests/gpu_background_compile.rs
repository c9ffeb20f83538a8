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
    cached_kernels, compile_kernels_in_background, kernels_cache_file, kernels_cached,
    wait_for_compilations,
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

    // Opening an sm_80 GPU meanwhile (`cached_kernels`, what it calls) waits for that owner
    // rather than compiling the same kernels a second time, and then reads what the owner
    // stored: here sm_90's file, put there by the test (the cache checks only that a file is
    // whole), so that an image compiled for sm_80 instead shows.
    let opening = std::thread::spawn(|| cached_kernels("sm_80"));
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!opening.is_finished(), "cached_kernels did not wait");
    let stored = std::fs::read(cache.join(&files[0])).unwrap();
    std::fs::write(sm80.with_extension("writing"), &stored).unwrap();
    std::fs::rename(sm80.with_extension("writing"), &sm80).unwrap();
    drop(owner);
    let image = opening.join().unwrap().unwrap();
    assert_eq!(
        image,
        stored[..stored.len() - 16],
        "the kernels were compiled again instead of read from the cache"
    );
    assert_eq!(cached_kernels(arch).unwrap(), image);
    let mut all = files.clone();
    all.push(sm80.file_name().unwrap().to_string_lossy().into_owned());
    all.sort();
    assert_eq!(files_in(&cache), all, "a lock file was left behind");

    // `reproject-rs warmup --arch` finds sm_90's kernels where the background put them. (A
    // foreground compilation, the same code, runs in the Python suite: test_gpu_paths.py's
    // warmup(arch=...) test, with the same NVRTC.)
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_reproject-rs"))
        .args(["warmup", "--arch", arch])
        .env("XDG_CACHE_HOME", &root)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file = kernels_cache_file(arch).unwrap();
    assert_eq!(
        said.trim(),
        format!("kernels for sm_90: already compiled, in {}", file.display())
    );
    assert_eq!(files_in(&cache), all);
    let _ = std::fs::remove_dir_all(&root);
}

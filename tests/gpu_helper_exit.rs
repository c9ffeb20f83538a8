//! A process that exits while its kernels compile in a helper process (`gpu::CompileHelper`)
//! does not wait for them, and the helper still puts them into the on-disk cache: on the H100
//! machine a finished CLI job waited 60 s at its exit for a kernel variant compiling on one
//! of its threads, which was then abandoned (docs/measurements/h100-2026-11-27-session21).
//!
//! The test runs this binary again as the exiting process: it makes the command-line tool
//! (`reproject-rs warmup`) its helper, starts compiling a kernel variant in the background (a
//! sky variant: about 10 s of NVRTC on the development machine, as a job that has just run the
//! general kernel leaves one), and returns. Then, without a helper, a process
//! that calls `gpu::stop_background_compilations` before it returns (as the command-line
//! tool and the Python package do) waits for its compilation and exits cleanly, and so does
//! one that leaves that to the library's exit hook. Before the library ordered its hook after
//! NVRTC's own exit handlers (which NVRTC registers during a process's first compilation for
//! an architecture), those ran first, and the compile thread, running on, died (SIGABRT after
//! a stack overflow or "LLVM ERROR: out of memory", or SIGSEGV: NVRTC 12.9 and 13.0).
//! Needs libnvrtc; without it the test prints why and passes, unless
//! `REPROJECT_RS_REQUIRE_NVRTC=1` (scripts/test.sh sets it).
#![cfg(all(feature = "cuda", feature = "cli"))]

use std::time::{Duration, Instant};

use std::path::{Path, PathBuf};

use reproject::gpu::{
    compile_build_in_background, set_compile_helper, stop_background_compilations, warm_build,
    CompileHelper,
};

/// Set in the process this test starts: it is the one that exits (`helper`: with the
/// command-line tool as its helper, `stop`: without one, stopping its compilations itself,
/// `hook`: without one, leaving them to the library's exit hook).
const EXITING: &str = "RP_TEST_EXITING_PROCESS";
/// The architectures the exiting processes compile for (fresh in the test's cache). NVRTC
/// registers more exit handlers the first time it compiles for sm_120 (and sm_100).
const ARCH: &str = "sm_86";
const ARCH_STOPPED: &str = "sm_89";
const ARCH_HOOK: &str = "sm_120";
/// The build they compile: TAN to TAN, bilinear, float32 input.
const VARIANT: &str =
    "RP_V_SKY RP_V_PRJ_OUT=2 RP_V_PRJ_IN=2 RP_V_FRAME=0 RP_V_SIP=0 RP_V_ORDER=1 RP_V_INPUT=0";

/// The exiting process: starts compiling [`VARIANT`] for its architecture in the background
/// and returns once it is under way, as a job ends while its variant compiles.
fn exit_while_compiling(how: &str) {
    if how == "helper" {
        set_compile_helper(Some(
            CompileHelper::new(env!("CARGO_BIN_EXE_reproject-rs")).arg("warmup"),
        ));
    }
    let arch = match how {
        "helper" => ARCH,
        "stop" => ARCH_STOPPED,
        _ => ARCH_HOOK,
    };
    assert!(compile_build_in_background(arch, Some(VARIANT)).unwrap());
    // Under way (one still queued at the exit gives up, whoever would run it).
    std::thread::sleep(Duration::from_secs(1));
    if how == "stop" {
        stop_background_compilations();
    }
    // Returning ends the process: the library's exit hook runs.
}

/// Runs this binary's test as the exiting process `how`: how long it took.
fn run_exiting(how: &str) -> Duration {
    let t = Instant::now();
    let exiting = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "an_exiting_process_leaves_its_compilation_to_the_helper",
        ])
        .env(EXITING, how)
        .output()
        .unwrap();
    assert!(
        exiting.status.success(),
        "the exiting process ({how}) ended with {}: {}{}",
        exiting.status,
        String::from_utf8_lossy(&exiting.stdout),
        String::from_utf8_lossy(&exiting.stderr)
    );
    t.elapsed()
}

#[test]
fn an_exiting_process_leaves_its_compilation_to_the_helper() {
    if let Ok(how) = std::env::var(EXITING) {
        exit_while_compiling(&how);
        return;
    }
    let root = std::env::temp_dir().join(format!("rp-helper-exit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    // SAFETY: set before any other thread of this test process reads the environment (this
    // is the binary's only test).
    unsafe { std::env::set_var("XDG_CACHE_HOME", &root) };
    let cache = root.join("reproject-rs");
    if let Err(e) = reproject::gpu::nvrtc_version() {
        if std::env::var("REPROJECT_RS_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
            panic!("REPROJECT_RS_REQUIRE_NVRTC=1 but libnvrtc cannot be used: {e}");
        }
        println!("skipped: {e}");
        return;
    }

    let t = Instant::now();
    let took = run_exiting("helper");
    // The variant takes about 10 s to compile on the development machine (2 cores): a
    // process that waited for it would take that long (it waits up to 60 s).
    assert!(
        took < Duration::from_secs(4),
        "the exiting process took {took:?}"
    );
    assert!(cubins(&cache, ARCH).is_empty(), "compiled before the exit?");
    let give_up = Instant::now() + Duration::from_secs(240);
    while cubins(&cache, ARCH).is_empty() {
        assert!(
            Instant::now() < give_up,
            "the helper never put the variant in the cache"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    println!(
        "the exiting process took {:.2} s; the helper's variant was in the cache {:.1} s after it started",
        took.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    // Whole (it is renamed into place): found, not compiled again. Once the helper lets its
    // lock go, nothing else is left in the cache.
    let said = warm_build(ARCH, Some(VARIANT)).unwrap();
    assert!(said.contains(": already compiled, in "), "{said}");
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let names = names_in(&cache);
        if names.len() == 1 {
            break;
        }
        assert!(Instant::now() < give_up, "left in the cache: {names:?}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Without a helper, stopped by the process itself: it waits for its compilation, which
    // is in the cache when it has exited.
    let took = run_exiting("stop");
    assert_eq!(cubins(&cache, ARCH_STOPPED).len(), 1, "after {took:?}");
    println!(
        "without a helper, the process that stopped its compilations took {:.1} s",
        took.as_secs_f64()
    );

    // Without a helper, left to the library's exit hook: the same.
    let took = run_exiting("hook");
    assert_eq!(cubins(&cache, ARCH_HOOK).len(), 1, "after {took:?}");
    println!(
        "without a helper, the process left to the exit hook took {:.1} s",
        took.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// The names of the files in `dir` (none when it does not exist).
fn names_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The finished builds for `arch` in the cache folder `dir`.
fn cubins(dir: &Path, arch: &str) -> Vec<PathBuf> {
    names_in(dir)
        .into_iter()
        .filter(|n| n.starts_with(&format!("kernels-{arch}-")) && n.ends_with(".cubin"))
        .map(|n| dir.join(n))
        .collect()
}

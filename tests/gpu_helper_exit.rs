//! A process that exits while its kernels compile in a helper process (`gpu::CompileHelper`)
//! does not wait for them, and the helper still puts them into the on-disk cache: on the H100
//! machine a finished CLI job waited 60 s at its exit for a kernel variant compiling on one
//! of its threads, which was then abandoned (docs/measurements/h100-2026-11-27-session21).
//!
//! The test runs this binary again as the exiting process: it makes the command-line tool
//! (`reproject-rs warmup`) its helper, starts the background compilation `Auto` starts for a
//! GPU whose kernels were never compiled, and returns. Then, without a helper, a process
//! that calls `gpu::stop_background_compilations` before it returns (as the command-line
//! tool and the Python package do) waits for its compilation and exits cleanly: left to the
//! exit hook, the compile thread ran on after NVRTC's own exit handlers (registered during
//! the compilation, so run before the hook) and died of a stack overflow.
//! Needs libnvrtc; without it the test prints why and passes, unless
//! `REPROJECT_RS_REQUIRE_NVRTC=1` (scripts/test.sh sets it).
#![cfg(all(feature = "cuda", feature = "cli"))]

use std::time::{Duration, Instant};

use reproject::gpu::{
    compile_kernels_in_background, kernels_cache_file, kernels_cached, set_compile_helper,
    stop_background_compilations, CompileHelper,
};

/// Set in the process this test starts: it is the one that exits (`helper`: with the
/// command-line tool as its helper, `stop`: without one, stopping its compilations itself).
const EXITING: &str = "RP_TEST_EXITING_PROCESS";
/// The architectures the two exiting processes compile for (fresh in the test's cache).
const ARCH: &str = "sm_86";
const ARCH_STOPPED: &str = "sm_89";

/// The exiting process: starts the general kernels' compilation for its architecture in the
/// background and returns once it is under way, as a job ends while its kernels compile.
fn exit_while_compiling(how: &str) {
    if how == "helper" {
        set_compile_helper(Some(
            CompileHelper::new(env!("CARGO_BIN_EXE_reproject-rs")).arg("warmup"),
        ));
    }
    let arch = if how == "helper" { ARCH } else { ARCH_STOPPED };
    assert!(compile_kernels_in_background(arch).unwrap());
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
    match kernels_cached(ARCH) {
        Err(e) if std::env::var("REPROJECT_RS_REQUIRE_NVRTC").is_ok_and(|v| v == "1") => {
            panic!("REPROJECT_RS_REQUIRE_NVRTC=1 but libnvrtc cannot be used: {e}")
        }
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
        Ok(cached) => assert!(!cached, "a fresh cache folder holds kernels"),
    }

    let t = Instant::now();
    let took = run_exiting("helper");
    // The general kernels take about 20 s to compile on the development machine (2 cores):
    // a process that waited for them would take that long (it waits up to 60 s).
    assert!(
        took < Duration::from_secs(6),
        "the exiting process took {took:?}"
    );
    assert!(!kernels_cached(ARCH).unwrap(), "compiled before the exit?");

    let give_up = Instant::now() + Duration::from_secs(240);
    while !kernels_cached(ARCH).unwrap() {
        assert!(
            Instant::now() < give_up,
            "the helper never put the kernels in the cache"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    println!(
        "the exiting process took {:.2} s; the helper's kernels were in the cache {:.1} s after it started",
        took.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    // The cache file is whole (it is renamed into place), and the helper left nothing else
    // once its lock is let go.
    let file = kernels_cache_file(ARCH).unwrap();
    assert!(reproject::gpu::cached_kernels(ARCH).is_ok());
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let names: Vec<String> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        if names == [file.file_name().unwrap().to_string_lossy().into_owned()] {
            break;
        }
        assert!(Instant::now() < give_up, "left in the cache: {names:?}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Without a helper, stopped by the process itself: it waits for its compilation, which
    // is in the cache when it has exited.
    let took = run_exiting("stop");
    assert!(kernels_cached(ARCH_STOPPED).unwrap(), "after {took:?}");
    println!(
        "without a helper, the process that stopped its compilations took {:.1} s",
        took.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&root);
}

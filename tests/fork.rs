//! A process forked from one that has computed (as Python's `multiprocessing` forks its
//! workers on Linux) computes too, and the same values, instead of waiting for ever on thread
//! pools whose threads stayed in the parent (`src/pools.rs`). A real fork; the child runs the
//! jobs the parent ran (one thread, two threads, every core), on the pools it inherited.
//!
//! One test in this file: the fork happens with no other test running.

use std::time::{Duration, Instant};

use ndarray::{Array2, ArrayD, IxDyn};
use reproject::engine::{reproject_interp_into, Backend, Options, Parallel};
use reproject::interp::Order;
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

/// The jobs, and their results in the calling process.
fn run_jobs() -> Vec<ArrayD<f64>> {
    let header = |crpix: f64, cdelt: f64| {
        format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 40\n\
             CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -{cdelt}\nCDELT2 = {cdelt}\n"
        )
    };
    let wcs_in = Wcs::from_header_str(&header(40.0, 0.001)).unwrap();
    let wcs_out = Wcs::from_header_str(&header(37.5, 0.0011)).unwrap();
    let image = Array2::from_shape_fn((80, 80), |(y, x)| ((x * 7 + y * 13) % 17) as f64);
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let mut results = Vec::new();
    for (order, parallel) in [
        (Order::Bicubic, Parallel::Serial),
        (Order::Bicubic, Parallel::Threads(2)),
        (Order::Bilinear, Parallel::Threads(2)),
        (Order::Bicubic, Parallel::AllCores),
        (Order::Bilinear, Parallel::AllCores),
    ] {
        let options = Options {
            order,
            parallel,
            backend: Backend::Cpu,
            block_size: Some((16, 16)),
            ..Options::default()
        };
        let mut data = ArrayD::<f64>::zeros(IxDyn(&[80, 80]));
        let mut footprint = data.clone();
        reproject_interp_into(
            &source,
            &wcs_in,
            &wcs_out,
            data.view_mut(),
            footprint.view_mut(),
            &options,
        )
        .unwrap();
        assert!(footprint.sum() > 1000.0);
        results.push(data);
    }
    results
}

#[test]
fn a_forked_process_computes_on_pools_of_its_own() {
    // The parent's pools (and rayon's global pool) exist from here on.
    let expected = run_jobs();
    // SAFETY: the child runs only this crate's code and rayon's, then leaves by `_exit`
    // without running the parent's destructors or the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let same = std::panic::catch_unwind(|| {
            run_jobs()
                .iter()
                .zip(&expected)
                .all(|(a, b)| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()))
        });
        let code = match same {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(_) => 2,
        };
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(code) };
    }
    let started = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child without blocking.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            // SAFETY: kills and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("the forked process did not finish its jobs in 60 s (a pool without threads)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        libc::WIFEXITED(status),
        "the child ended by a signal: {status}"
    );
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "the child's results differ (1) or it panicked (2)"
    );
}

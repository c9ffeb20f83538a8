//! The host pipeline at the PCIe limit, checked on a timeline model (issue 17): the 16384²
//! float32 bilinear TAN -> TAN host-resident job (numpy in, numpy out) is recorded on the
//! record-only CUDA simulator with the threads the executor uses on a 16-core host, then
//! replayed at H100 rates ([`Rates::h100`]: 55 GB/s each way, the kernel budgets): the
//! critical path must be within 1.2x of the busiest engine's time, max(upload, kernels,
//! download), and the bytes moved the minimum (the input once up, float32 values once down).
//!
//! The 16384² job takes 3 GiB of host memory (the 1 GiB input, 2 GiB of outputs) and about
//! 15 s in a debug build, so it is ignored in the default run; `scripts/test.sh` runs
//! `cargo test --release --test gpu_timeline -- --ignored --nocapture`.

use std::sync::Arc;

use ndarray::{Array2, ArrayD, IxDyn};
use reproject::engine::{CudaExecutor, Options, Parallel, Plan};
use reproject::gpu::driver::Driver;
use reproject::gpu::sim::{SimConfig, SimDriver};
use reproject::gpu::timeline::{replay, Kind, Op, Rates, Timeline};
use reproject::gpu::Backend;
use reproject::interp::Order;
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

#[path = "../examples/support/headers.rs"]
#[allow(dead_code)]
mod headers;

/// The benchmark's TAN header (`examples/gpu_bench.rs`).
fn tan(crval: (f64, f64), crpix: f64, cdelt: f64, rot: f64) -> Wcs {
    Wcs::from_header_str(&headers::rotated_tan(crval, crpix, cdelt, rot)).unwrap()
}

/// The block threads the executor runs on a 16-core host, serial or on every core: its 8
/// copy threads. Asked for explicitly, so that a smaller machine records the same pipeline.
const HOST_THREADS: usize = 8;

/// The benchmark's job (`examples/gpu_bench.rs`) at `size`² recorded on the record-only
/// simulator (no hazard), with the bytes moved checked to be the minimum: the input once up
/// (plus the kernel parameters), the float32 values once down.
fn record(size: usize) -> Vec<Op> {
    let image = Array2::<f32>::zeros((size, size));
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let wcs_in = tan((150.0, 2.0), size as f64 / 2.0 + 0.5, 1e-4, 0.0);
    let wcs_out = tan((150.01, 2.01), size as f64 / 2.0 + 0.5, 1.05e-4, 12.0);
    let options = Options {
        order: Order::Bilinear,
        backend: Backend::Cuda,
        parallel: Parallel::Threads(HOST_THREADS),
        ..Options::default()
    };
    let plan = Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &options).unwrap();
    let sim = Arc::new(SimDriver::new(SimConfig {
        record_only: true,
        memory: 80 << 30,
        ..SimConfig::default()
    }));
    let executor = CudaExecutor::new(&plan, vec![sim.clone() as Arc<dyn Driver>]).unwrap();
    let plan = plan.with_executor(Arc::new(executor));
    let mut data = ArrayD::<f32>::zeros(IxDyn(&[size, size]));
    let mut footprint = data.clone();
    plan.compute_into(data.view_mut(), footprint.view_mut())
        .unwrap();
    assert!(sim.hazards().is_empty(), "{:?}", sim.hazards());
    let ops = sim.timeline();
    let input = (size * size * 4) as u64;
    let sum = |kind| {
        ops.iter()
            .filter(|op| op.kind == kind)
            .map(|op| op.bytes)
            .sum::<u64>()
    };
    let (up, down) = (sum(Kind::Upload), sum(Kind::Download));
    assert!(
        (input..input + (1 << 20)).contains(&up),
        "uploaded {up} bytes"
    );
    assert_eq!(down, input, "downloaded {down} bytes");
    assert_eq!(sim.stats().downloaded, input);
    ops
}

/// Replays `ops` at H100 rates and prints the breakdown.
fn replay_h100(what: &str, ops: &[Op]) -> Timeline {
    let t = replay(ops, &Rates::h100());
    let launches = ops.iter().filter(|op| op.kind == Kind::Launch).count();
    let syncs = ops.iter().filter(|op| op.kind == Kind::Synchronize).count();
    println!(
        "{what} on an H100 timeline ({} ops: {launches} launches, {syncs} synchronizes): \
         critical path {:.2} ms; upload {:.2} ms, kernels {:.2} ms, download {:.2} ms; \
         critical path / max = {:.3}",
        ops.len(),
        t.critical_path * 1e3,
        t.upload * 1e3,
        t.kernels * 1e3,
        t.download * 1e3,
        t.ratio()
    );
    t
}

#[test]
#[ignore = "3 GiB of host memory: run in release (scripts/test.sh)"]
fn the_16384_job_runs_at_the_pcie_limit_on_an_h100_timeline() {
    let ops = record(16384);
    let t = replay_h100("16384² f32 bilinear TAN->TAN", &ops);
    assert!(
        t.ratio() <= 1.2,
        "critical path {:.2} ms is {:.2}x max(upload, kernels, download) = {:.2} ms",
        t.critical_path * 1e3,
        t.ratio(),
        t.floor() * 1e3
    );
}

/// A smaller job of the same kind, for every run: blocks launch while the input still goes
/// up (a launch is issued before the last upload), and the replay beats the old pipeline's
/// upload-then-compute (about 2x) by far.
#[test]
fn a_4096_job_overlaps_uploads_kernels_and_downloads() {
    let ops = record(4096);
    let first_launch = ops.iter().position(|op| op.kind == Kind::Launch);
    let last_upload = ops.iter().rposition(|op| op.kind == Kind::Upload);
    assert!(
        first_launch < last_upload,
        "every upload came before the first launch"
    );
    let t = replay_h100("4096² f32 bilinear TAN->TAN", &ops);
    assert!(t.ratio() <= 1.6, "{t:?}");
}

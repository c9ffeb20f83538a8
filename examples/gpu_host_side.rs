//! The host side of a GPU job, measured on any machine: a SIZE² float32 bilinear TAN → TAN job
//! (the benchmark's, `gpu_bench`) on the record-only CUDA simulator, which queues no kernel
//! and copies nothing, so the time is the host threads' own: staging the input into
//! page-locked buffers, waiting for rows, storing the results and the footprint into the
//! caller's arrays. Each call makes a new plan (as a Python call does) and prints its wall
//! time and its host threads' timings (`CudaExecutor::host_times`), then the driver's
//! counts: after the first call nothing is allocated and no stream is made.
//!
//! ```text
//! cargo run --release --example gpu_host_side [-- SIZE [CALLS]]   (8192 and 4 by default)
//! ```
//! The first call also touches the outputs' pages for the first time.

#[path = "support/headers.rs"]
#[allow(dead_code)]
mod headers;

use std::sync::Arc;
use std::time::Instant;

use ndarray::{Array2, ArrayD, IxDyn};
use reproject::engine::{Backend, CudaExecutor, Options, Parallel, Plan};
use reproject::gpu::driver::Driver;
use reproject::gpu::sim::{SimConfig, SimDriver};
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

fn main() -> reproject::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().ok());
    let size = args.next().flatten().unwrap_or(8192);
    let calls = args.next().flatten().unwrap_or(4);
    let input = Array2::from_shape_fn((size, size), |(y, x)| {
        ((x as f32) * 0.001).sin() * 100.0 + (y as f32) * 0.01
    });
    let crpix = size as f64 / 2.0 + 0.5;
    let tan =
        |crval, cdelt, rot| Wcs::from_header_str(&headers::rotated_tan(crval, crpix, cdelt, rot));
    let (wcs_in, wcs_out) = (
        tan((150.0, 2.0), 1e-4, 0.0)?,
        tan((150.01, 2.01), 1.05e-4, 12.0)?,
    );
    let source = ArraySource::new(input.view().into_dyn())?;
    let options = Options {
        backend: Backend::Cuda,
        parallel: Parallel::AllCores,
        ..Options::default()
    };
    let sim = Arc::new(SimDriver::new(SimConfig {
        record_only: true,
        memory: 80 << 30,
        ..SimConfig::default()
    }));
    let mut data = ArrayD::<f32>::zeros(IxDyn(&[size, size]));
    let mut footprint = data.clone();
    println!("{size}² float32 bilinear TAN -> TAN, host side only (record-only simulator)");
    for call in 0..calls {
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &options)?;
        let executor = Arc::new(CudaExecutor::new(
            &plan,
            vec![sim.clone() as Arc<dyn Driver>],
        )?);
        let plan = plan.with_executor(executor.clone());
        let t = Instant::now();
        plan.compute_into(data.view_mut(), footprint.view_mut())?;
        let wall = t.elapsed().as_secs_f64() * 1e3;
        let times = executor.host_times();
        let t = Instant::now();
        drop((plan, executor));
        let dropped = t.elapsed().as_secs_f64() * 1e3;
        println!("call {call}: {wall:.1} ms, then {dropped:.1} ms to drop the plan; {times}");
    }
    println!("{:?}", sim.stats());
    Ok(())
}

//! Eager vs lazy: the whole output at once (`LazyReprojection::compute`, i.e. the eager path)
//! against every block computed through its own handle into its window of the output.
//! 4096x4096 float32 bilinear TAN -> TAN rotated 30 degrees (the job), serial and two
//! threads.
//! Run with `cargo bench --bench lazy`. (Processes: `scripts/bench_peers.sh` times the CLI
//! with and without `--processes`.)

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::{s, Array2, ArrayD, IxDyn};
use reproject::engine::lazy::LazyReprojection;
use reproject::engine::{Options, Parallel, Plan};
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

const N: usize = 4096;

fn header(crpix: (f64, f64), crval: (f64, f64), rot: f64) -> Wcs {
    let (sn, cs) = rot.to_radians().sin_cos();
    let d = 1.0 / 3600.0;
    Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {}\nCRPIX2 = {}\nCRVAL1 = {}\n\
         CRVAL2 = {}\nCDELT1 = {}\nCDELT2 = {d}\nPC1_1 = {cs}\nPC1_2 = {}\nPC2_1 = {sn}\nPC2_2 = {cs}\n",
        crpix.0, crpix.1, crval.0, crval.1, -d, -sn
    ))
    .unwrap()
}

fn eager_vs_lazy(c: &mut Criterion) {
    let image = Array2::from_shape_fn((N, N), |(y, x)| ((x * 7 + y * 13) % 1000) as f32);
    let source = Arc::new(ArraySource::new(image.view().into_dyn()).unwrap());
    let c0 = N as f64 / 2.0;
    let wcs_in = header((c0, c0), (150.0, 30.0), 0.0);
    let wcs_out = header((c0 + 3.7, c0 - 2.2), (150.002, 29.999), 30.0);
    let mut group = c.benchmark_group("eager_vs_lazy_4096");
    group.sample_size(10);
    for (name, parallel) in [
        ("serial", Parallel::Serial),
        ("2 threads", Parallel::Threads(2)),
    ] {
        let options = Options {
            parallel,
            ..Options::default()
        };
        let plan =
            Plan::with_shared_source(source.clone(), &wcs_in, &wcs_out, &[N, N], &options).unwrap();
        let lazy = LazyReprojection::new(plan);
        // Both write into the same preallocated output, so only the computation is timed.
        let mut data = ArrayD::<f64>::zeros(IxDyn(&[N, N]));
        let mut footprint = data.clone();
        group.bench_function(format!("eager {name}"), |b| {
            b.iter(|| {
                lazy.plan()
                    .compute_into(data.view_mut(), footprint.view_mut())
                    .unwrap()
            })
        });
        if parallel == Parallel::Serial {
            // Each block through its handle, into its window of the caller's output.
            group.bench_function(format!("lazy handles {name}"), |b| {
                b.iter(|| {
                    for h in lazy.blocks() {
                        let w = s![h.block().rows.clone(), h.block().cols.clone()];
                        let d = data
                            .slice_mut(w)
                            .insert_axis(ndarray::Axis(0))
                            .into_dimensionality()
                            .unwrap();
                        let f = footprint
                            .slice_mut(w)
                            .insert_axis(ndarray::Axis(0))
                            .into_dimensionality()
                            .unwrap();
                        h.compute_into(d, f).unwrap();
                    }
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, eager_vs_lazy);
criterion_main!(benches);

//! Interpolation kernels on a 4096×4096 f64 plane (single thread for sampling).
//!
//! * `sample_1M/<order>/random`: 1M points uniformly random over the plane (every sample is
//!   a cache miss: memory-latency bound);
//! * `sample_1M/<order>/scan`: 1M points of a 1000×1000 output grid, rotated by 30° and
//!   scaled by 1.7 into the plane, in output order (the access pattern of a reprojection);
//! * `sample_1M/<order>/cached`: 1M random points inside a 96×96 patch of the plane (the
//!   patch stays in cache: the cost of the kernel itself);
//! * `prefilter_4096/<order>`: the spline prefilter of the whole plane (rayon, all cores).
//!
//! Run with `cargo bench --bench interp`; ns/sample = 1e9 / (elements per second).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ndarray::Array2;
use reproject::interp::spline::prefilter;
use reproject::interp::{Order, Plane};

const N: usize = 4096;
const POINTS: usize = 1_000_000;

/// splitmix64, for reproducible points without a rand dependency.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn plane_data() -> Array2<f64> {
    Array2::from_shape_fn((N, N), |(r, c)| {
        ((r * 31 + c * 17) % 1009) as f64 * 0.25 + (c as f64) * 1e-3
    })
}

fn points() -> [(&'static str, Vec<f64>, Vec<f64>); 3] {
    let mut rng = Rng(42);
    let lim = N as f64 + 0.5;
    let (ry, rx): (Vec<f64>, Vec<f64>) = (0..POINTS)
        .map(|_| (rng.next_f64() * lim - 0.75, rng.next_f64() * lim - 0.75))
        .unzip();
    let (s, c) = (
        30f64.to_radians().sin() * 1.7,
        30f64.to_radians().cos() * 1.7,
    );
    let (sy, sx): (Vec<f64>, Vec<f64>) = (0..POINTS)
        .map(|i| {
            let (oy, ox) = ((i / 1000) as f64 - 500.0, (i % 1000) as f64 - 500.0);
            (2048.3 + c * oy + s * ox, 2047.6 - s * oy + c * ox)
        })
        .unzip();
    let (cy, cx): (Vec<f64>, Vec<f64>) = (0..POINTS)
        .map(|_| {
            (
                1000.0 + rng.next_f64() * 96.0,
                3000.0 + rng.next_f64() * 96.0,
            )
        })
        .unzip();
    [("random", ry, rx), ("scan", sy, sx), ("cached", cy, cx)]
}

fn sampling(cr: &mut Criterion) {
    let data = plane_data();
    let plane = Plane::full(data.as_slice().unwrap(), N, N).unwrap();
    let pts = points();
    let mut group = cr.benchmark_group("sample_1M");
    group.throughput(Throughput::Elements(POINTS as u64));
    group.sample_size(20);
    let mut out = vec![0.0; POINTS];
    for order in [
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Bicubic,
        Order::Quintic,
    ] {
        for (name, ys, xs) in &pts {
            group.bench_function(format!("{order}/{name}"), |b| {
                b.iter(|| plane.sample_many(order, ys, xs, &mut out))
            });
        }
    }
    group.finish();
}

fn prefiltering(cr: &mut Criterion) {
    let data = plane_data();
    let mut group = cr.benchmark_group("prefilter_4096");
    group.throughput(Throughput::Elements((N * N) as u64));
    group.sample_size(10);
    for order in [Order::Bicubic, Order::Quintic] {
        group.bench_function(format!("{order}"), |b| {
            b.iter_batched_ref(
                || data.clone(),
                |a| prefilter(a.view_mut(), order),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, sampling, prefiltering);
criterion_main!(benches);

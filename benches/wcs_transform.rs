//! pixel -> world -> pixel throughput on 1M points for TAN, SIN, CAR, AIT, ZPN.
//! Run with `cargo bench --bench wcs_transform`; criterion reports time per 1M-point batch and
//! elements/s (ns/point = 1e9 / elements per second).

#[path = "../examples/support/headers.rs"]
#[allow(dead_code)]
mod headers;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reproject::wcs::Wcs;

const N: usize = 1000;

fn round_trip(c: &mut Criterion) {
    let mut group = c.benchmark_group("pixel_to_world_to_pixel_1M");
    group.throughput(Throughput::Elements((N * N) as u64));
    group.sample_size(10);
    let xs: Vec<f64> = (0..N * N).map(|i| (i % N) as f64).collect();
    let ys: Vec<f64> = (0..N * N).map(|i| (i / N) as f64).collect();
    for (code, text) in headers::all_projections(N) {
        if !["TAN", "SIN", "CAR", "AIT", "ZPN"].contains(&code) {
            continue;
        }
        let wcs = Wcs::from_header_str(&text).unwrap();
        let (mut lon, mut lat) = (vec![0.0; N * N], vec![0.0; N * N]);
        let (mut bx, mut by) = (vec![0.0; N * N], vec![0.0; N * N]);
        group.bench_function(code, |b| {
            b.iter(|| {
                wcs.pixel_to_world_slice(&xs, &ys, &mut lon, &mut lat)
                    .unwrap();
                wcs.world_to_pixel_slice(&lon, &lat, &mut bx, &mut by)
                    .unwrap();
            })
        });
    }
    group.finish();
}

/// Output pixel -> input pixel for a galactic CAR input seen from an ICRS TAN output (frame
/// change), through the unit-vector path and through WCSLIB's celestial path.
fn galactic_to_icrs(c: &mut Criterion) {
    use reproject::pixel_transform::PixelTransform;
    let mut group = c.benchmark_group("pixel_to_pixel_1M_galactic_car_to_icrs_tan");
    group.throughput(Throughput::Elements((N * N) as u64));
    group.sample_size(10);
    let car = headers::header("CAR", ("GLON", "GLAT"), 0.0, 0.0, N, 0.001, "");
    let tan = headers::header("TAN", ("RA", "DEC"), 266.40499, -28.93617, N, 0.001, "");
    let (wcs_in, wcs_out) = (
        Wcs::from_header_str(&car).unwrap(),
        Wcs::from_header_str(&tan).unwrap(),
    );
    for (name, t) in [
        ("vector", PixelTransform::new(&wcs_out, &wcs_in).unwrap()),
        (
            "celestial",
            PixelTransform::general(&wcs_out, &wcs_in).unwrap(),
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut acc = 0.0;
                for i in 0..N {
                    for j in 0..N {
                        if let Some((x, _)) = t.map(j as f64, i as f64) {
                            acc += x;
                        }
                    }
                }
                acc
            })
        });
    }
    group.finish();
}

criterion_group!(benches, round_trip, galactic_to_icrs);
criterion_main!(benches);

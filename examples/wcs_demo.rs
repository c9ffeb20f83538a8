//! The main job until the reprojection engine lands: for each of WCSLIB's 28 projections, build
//! a WCS from embedded header text, map a full pixel grid to the sky and back, and report the
//! valid fraction, the worst round-trip error and the speed.
//!
//! Run with `cargo run --release --example wcs_demo [-- GRID_SIZE]`.

#[path = "support/headers.rs"]
#[allow(dead_code)]
mod headers;

use std::time::Instant;

use reproject::wcs::Wcs;

fn main() -> Result<(), reproject::Error> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    println!("reproject-rs WCS engine demo: {n}x{n} pixel grid per projection, pixel -> world -> pixel\n");
    println!(
        "{:<5} {:>8} {:>14} {:>12} {:>12}",
        "proj", "valid %", "max err (px)", "p2w ns/pt", "w2p ns/pt"
    );
    let total = Instant::now();
    for (code, text) in headers::all_projections(n) {
        let wcs = Wcs::from_header_str(&text)?;
        let xs: Vec<f64> = (0..n * n).map(|i| (i % n) as f64).collect();
        let ys: Vec<f64> = (0..n * n).map(|i| (i / n) as f64).collect();
        let (mut lon, mut lat) = (vec![0.0; n * n], vec![0.0; n * n]);
        let t = Instant::now();
        wcs.pixel_to_world_slice(&xs, &ys, &mut lon, &mut lat)?;
        let p2w = t.elapsed().as_secs_f64();
        let (mut bx, mut by) = (vec![0.0; n * n], vec![0.0; n * n]);
        let t = Instant::now();
        wcs.world_to_pixel_slice(&lon, &lat, &mut bx, &mut by)?;
        let w2p = t.elapsed().as_secs_f64();
        // Pixels whose sky point maps back to them (within 1e-6 px), and the worst error among
        // those; the rest sit where the projection is not one-to-one (quad-cube and HEALPix
        // layouts repeat the sky outside their facets).
        let (mut valid, mut round_trip) = (0usize, 0usize);
        let mut max_err = 0.0f64;
        for i in 0..n * n {
            if lon[i].is_finite() {
                valid += 1;
                let err = (bx[i] - xs[i]).abs().max((by[i] - ys[i]).abs());
                if err <= 1e-6 {
                    round_trip += 1;
                    max_err = max_err.max(err);
                }
            }
        }
        let per_point = |s: f64| s * 1e9 / (n * n) as f64;
        println!(
            "{code:<5} {:>8.2} {:>10.2} {:>14.2e} {:>10.1} {:>10.1}",
            100.0 * valid as f64 / (n * n) as f64,
            100.0 * round_trip as f64 / valid.max(1) as f64,
            max_err,
            per_point(p2w),
            per_point(w2p)
        );
    }
    println!(
        "\ndone in {:.2} s (single thread)",
        total.elapsed().as_secs_f64()
    );
    Ok(())
}

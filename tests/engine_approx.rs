//! The opt-in approximate transform stays within its tolerance of the exact one.

#[path = "../examples/support/headers.rs"]
#[allow(dead_code)]
mod headers;

use reproject::engine::blocks::Block;
use reproject::engine::coords::CoordinateMap;
use reproject::wcs::Wcs;

fn compare(out: &Wcs, inp: &Wcs, n: usize, tolerance: f64) -> (f64, usize) {
    let exact = CoordinateMap::new(out, inp, true, (n, n)).unwrap();
    let approx = exact.clone().with_approximation(tolerance);
    let (mut worst, mut validity) = (0.0f64, 0usize);
    // Blocks of an odd size: cells straddle them.
    for r0 in (0..n).step_by(37) {
        for c0 in (0..n).step_by(53) {
            let block = Block {
                rows: r0..(r0 + 37).min(n),
                cols: c0..(c0 + 53).min(n),
            };
            let len = block.len();
            let (mut ex, mut ey, mut ax, mut ay) = (
                vec![0.0; len],
                vec![0.0; len],
                vec![0.0; len],
                vec![0.0; len],
            );
            exact.block_coords(&block, &mut ex, &mut ey);
            approx.block_coords(&block, &mut ax, &mut ay);
            for i in 0..len {
                match (ex[i].is_nan(), ax[i].is_nan()) {
                    (false, false) => {
                        worst = worst.max((ex[i] - ax[i]).abs().max((ey[i] - ay[i]).abs()))
                    }
                    (true, true) => {}
                    _ => validity += 1,
                }
            }
        }
    }
    (worst, validity)
}

#[test]
fn approximation_error_is_within_tolerance() {
    let n = 512;
    let gal_car = Wcs::from_header_str(&headers::header(
        "CAR",
        ("GLON", "GLAT"),
        0.0,
        0.0,
        n,
        0.004,
        "",
    ))
    .unwrap();
    let icrs_tan = Wcs::from_header_str(&headers::header(
        "TAN",
        ("RA", "DEC"),
        266.4,
        -28.9,
        n,
        0.004,
        "",
    ))
    .unwrap();
    let sin = Wcs::from_header_str(&headers::header(
        "SIN",
        ("RA", "DEC"),
        266.0,
        -29.0,
        n,
        0.005,
        "",
    ))
    .unwrap();
    let allsky_ait = Wcs::from_header_str(&headers::header(
        "AIT",
        ("GLON", "GLAT"),
        0.0,
        0.0,
        n,
        0.7,
        "",
    ))
    .unwrap();
    let allsky_car = Wcs::from_header_str(&headers::header(
        "CAR",
        ("GLON", "GLAT"),
        0.0,
        0.0,
        n,
        0.7,
        "",
    ))
    .unwrap();
    for (name, out, inp) in [
        ("CAR gal -> TAN icrs", &icrs_tan, &gal_car),
        ("SIN -> TAN", &icrs_tan, &sin),
        ("AIT all-sky -> CAR", &allsky_car, &allsky_ait),
    ] {
        let tolerance = 1e-3;
        let (worst, validity) = compare(out, inp, n, tolerance);
        eprintln!("{name}: max approximation error {worst:e} px, {validity} validity differences");
        assert!(worst <= tolerance, "{name}: {worst:e} px");
        // Interpolated positions near the image edge can cross the half-pixel boundary.
        assert!(validity * 1000 < n * n, "{name}: {validity}");
    }
}

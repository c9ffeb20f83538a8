//! The unit-vector path of `PixelTransform` (one rotation between the two native spheres)
//! agrees with the general path through celestial coordinates (WCSLIB's `sphx2s`/`sphs2x`
//! with the frame conversion in between) for every projection as input and as output.

#[path = "../examples/support/headers.rs"]
#[allow(dead_code)]
mod headers;

use reproject::pixel_transform::PixelTransform;
use reproject::wcs::Wcs;

#[test]
fn vector_path_matches_the_spherical_path() {
    let n = 64;
    let all = headers::all_projections(n);
    let tan = Wcs::from_header_str(&headers::header(
        "TAN",
        ("RA", "DEC"),
        266.4,
        -28.9,
        n,
        2.0,
        "",
    ))
    .unwrap();
    let (mut compared, mut validity_diff, mut worst) = (0usize, 0usize, 0.0f64);
    for (code, text) in &all {
        let wcs = Wcs::from_header_str(text).unwrap();
        for (out, inp) in [(&tan, &wcs), (&wcs, &tan)] {
            let fast = PixelTransform::new(out, inp).unwrap();
            let slow = PixelTransform::general(out, inp).unwrap();
            for i in 0..n {
                for j in 0..n {
                    let (x, y) = (i as f64 + 0.25, j as f64 - 0.1);
                    match (fast.map(x, y), slow.map(x, y)) {
                        (Some(a), Some(b)) => {
                            let d = (a.0 - b.0).abs().max((a.1 - b.1).abs());
                            // Non-one-to-one layouts (quad cube, HEALPix, the CAR seam) can
                            // legitimately pick another copy; those are far apart.
                            if d < 1.0 {
                                // Near the 64 px images: absolute; far away (1e6 px, near a
                                // divergence): relative to the coordinate.
                                let scale = b.0.abs().max(b.1.abs()).max(1e3) / 1e3;
                                worst = worst.max(d / scale);
                                compared += 1;
                                assert!(d < 1e-7 * scale, "{code}: ({x}, {y}) -> {a:?} vs {b:?}");
                            }
                        }
                        (None, None) => {}
                        _ => validity_diff += 1,
                    }
                }
            }
        }
    }
    eprintln!(
        "{compared} points, max difference {worst:e} px (scaled beyond 1e3 px), {validity_diff} validity differences"
    );
    assert!(compared > 100_000);
    assert!(
        validity_diff * 10_000 < compared,
        "{validity_diff} validity differences"
    );
}

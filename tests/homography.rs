//! The exact TAN -> TAN homography agrees with the full spherical path.

use reproject::pixel_transform::PixelTransform;
use reproject::wcs::Wcs;

struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// A TAN header with a general (rotated, skewed, flipped) CD matrix.
fn random_tan(rng: &mut Lcg, lon: f64, lat: f64, scale: f64) -> String {
    let rot = rng.uniform(0.0, 360.0).to_radians();
    let skew = rng.uniform(-0.05, 0.05);
    let aspect = rng.uniform(0.8, 1.25);
    let (s, c) = rot.sin_cos();
    let lonpole = if rng.uniform(0.0, 1.0) < 0.2 {
        "LONPOLE = 170.0\n"
    } else {
        ""
    };
    format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {:.6}\nCRPIX2 = {:.6}\n\
         CRVAL1 = {lon:.10}\nCRVAL2 = {lat:.10}\nCD1_1 = {:.15E}\nCD1_2 = {:.15E}\n\
         CD2_1 = {:.15E}\nCD2_2 = {:.15E}\n{lonpole}",
        rng.uniform(-500.0, 2500.0),
        rng.uniform(-500.0, 2500.0),
        -scale * (c + skew * s),
        scale * (s + skew * c),
        scale * aspect * s,
        scale * aspect * c,
    )
}

/// Output pixels mapped both ways over 300 random TAN pairs (rotated, skewed, flipped CD
/// matrices, LONPOLE, fields near the pole, input fields on the far side of the sky).
///
/// The spherical path goes through longitudes of up to 360 deg, whose f64 spacing is
/// 5.7e-14 deg, and through several transcendental functions; the homography does not. So
/// their agreement is bounded by the spherical path's own rounding, about 2e-13 deg: that is
/// 1e-10 px for pixels of 2e-3 deg and coarser, which is asserted there, and the same angular
/// bound is asserted for the finer pixels (1e-5 .. 2e-3 deg) where 1e-10 px is below what the
/// spherical path can resolve.
#[test]
fn homography_matches_the_spherical_path() {
    let mut rng = Lcg(7);
    let (mut worst_px, mut worst_deg, mut compared) = (0.0f64, 0.0f64, 0usize);
    for case in 0..300 {
        let lon = rng.uniform(0.0, 360.0);
        let lat = if case % 10 == 0 {
            89.99
        } else {
            rng.uniform(-89.0, 89.0)
        };
        // 2000 px fields of at most 20 deg.
        let scale = 10f64.powf(rng.uniform(-5.0, -2.0));
        let out = random_tan(&mut rng, lon, lat, scale);
        // The input is nearby (overlapping fields) or on the other side of the sky.
        let far = case % 7 == 0;
        let (dlon, dlat) = if far {
            (180.0, 0.0)
        } else {
            (
                rng.uniform(-2.0, 2.0) * scale * 1e3,
                rng.uniform(-2.0, 2.0) * scale * 1e3,
            )
        };
        let lat_in = (lat + dlat).clamp(-89.9, 89.9);
        let lat_in = if far { -lat_in } else { lat_in };
        let scale_in = scale * rng.uniform(0.5, 2.0);
        let inp = random_tan(&mut rng, (lon + dlon).rem_euclid(360.0), lat_in, scale_in);
        let wcs_out = Wcs::from_header_str(&out).unwrap();
        let wcs_in = Wcs::from_header_str(&inp).unwrap();
        let fast = PixelTransform::new(&wcs_out, &wcs_in).unwrap();
        assert!(fast.is_homography());
        let slow = PixelTransform::general(&wcs_out, &wcs_in).unwrap();
        for i in 0..40 {
            for j in 0..40 {
                let (x, y) = (i as f64 * 50.0 - 3.7, j as f64 * 50.0 + 1.3);
                match (fast.map(x, y), slow.map(x, y)) {
                    (Some(a), Some(b)) => {
                        let d = (a.0 - b.0).abs().max((a.1 - b.1).abs());
                        let deg = d * scale_in;
                        compared += 1;
                        worst_deg = worst_deg.max(deg);
                        assert!(
                            deg < 2e-13,
                            "case {case}: ({x}, {y}) -> {a:?} vs {b:?}: {deg:e} deg\n{out}\n{inp}"
                        );
                        if scale_in >= 2e-3 {
                            worst_px = worst_px.max(d);
                            assert!(d < 1e-10, "case {case}: ({x}, {y}) -> {a:?} vs {b:?}");
                        }
                    }
                    (None, None) => {}
                    (a, b) => panic!(
                        "case {case}: validity differs at ({x}, {y}): {a:?} vs {b:?}\n{out}\n{inp}"
                    ),
                }
            }
        }
    }
    assert!(compared > 100_000, "only {compared} points compared");
    eprintln!(
        "homography vs spherical path: {compared} points, max {worst_deg:e} deg, \
         max {worst_px:e} px for pixels >= 2e-3 deg"
    );
}

/// A frame change that is a rotation (Galactic -> ICRS, FK5 J1975 -> ICRS) is folded into the
/// homography; FK4's E-terms are not a rotation and take the spherical path.
#[test]
fn frame_changes_fold_into_the_homography_when_they_are_rotations() {
    let header = |ctype: (&str, &str), lon: f64, lat: f64, extra: &str| {
        format!(
            "CTYPE1 = '{}'\nCTYPE2 = '{}'\nCRPIX1 = 500\nCRPIX2 = 500\nCRVAL1 = {lon}\n\
             CRVAL2 = {lat}\nCDELT1 = -1E-3\nCDELT2 = 1E-3\nPC1_2 = 0.2\n{extra}",
            ctype.0, ctype.1
        )
    };
    let icrs = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        266.4,
        -28.9,
        "RADESYS = 'ICRS'\n",
    ))
    .unwrap();
    let inputs = [
        (header(("GLON-TAN", "GLAT-TAN"), 359.9, 0.05, ""), true),
        (
            header(
                ("RA---TAN", "DEC--TAN"),
                265.7,
                -28.85,
                "RADESYS = 'FK5'\nEQUINOX = 1975.0\n",
            ),
            true,
        ),
        (
            header(
                ("RA---TAN", "DEC--TAN"),
                265.6,
                -28.9,
                "RADESYS = 'FK4'\nEQUINOX = 1950.0\n",
            ),
            false,
        ),
    ];
    for (text, rotation) in inputs {
        let wcs_in = Wcs::from_header_str(&text).unwrap();
        let fast = PixelTransform::new(&icrs, &wcs_in).unwrap();
        assert_eq!(fast.is_homography(), rotation, "{text}");
        let slow = PixelTransform::general(&icrs, &wcs_in).unwrap();
        let mut worst = 0.0f64;
        for i in 0..50 {
            for j in 0..50 {
                let (x, y) = (i as f64 * 20.0, j as f64 * 20.0);
                let (a, b) = (fast.map(x, y).unwrap(), slow.map(x, y).unwrap());
                worst = worst.max((a.0 - b.0).abs().max((a.1 - b.1).abs()));
            }
        }
        // 1e-3 deg pixels: 1e-10 px is 1e-13 deg, the spherical path's own rounding.
        assert!(worst < 1e-9, "{text}: {worst:e} px");
    }
}

/// TAN with SIP or TPV distortion is not a plain gnomonic projection: no homography.
#[test]
fn distorted_tan_takes_the_spherical_path() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/wcs-vectors");
    let dir = std::env::var("WCS_VECTORS").map(Into::into).unwrap_or(dir);
    for name in ["extra_siponly", "tpvonly"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.hdr"))).unwrap();
        let distorted = Wcs::from_header_str(&text).unwrap();
        let mut plain = distorted.params().clone();
        plain.sip = None;
        plain.tpv = None;
        let plain = Wcs::from_params(plain).unwrap();
        let t = PixelTransform::new(&plain, &distorted).unwrap();
        assert!(!t.is_homography(), "{name}");
        let (x, y) = t.map(100.0, 100.0).unwrap();
        let back = distorted.pixel_to_world(x, y).unwrap();
        let want = plain.pixel_to_world(100.0, 100.0).unwrap();
        assert!(
            (back.0 - want.0).abs() < 1e-9 && (back.1 - want.1).abs() < 1e-9,
            "{name}"
        );
    }
}

/// Images whose first axis is latitude (CTYPE1 = 'DEC--TAN') keep image pixel order.
#[test]
fn latitude_first_images() {
    let ra_first = Wcs::from_header_str(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 40\nCRPIX2 = 60\nCRVAL1 = 150\n\
         CRVAL2 = 30\nCDELT1 = -1E-3\nCDELT2 = 1E-3\nPC1_2 = 0.1\n",
    )
    .unwrap();
    let dec_first = Wcs::from_header_str(
        "CTYPE1 = 'DEC--TAN'\nCTYPE2 = 'RA---TAN'\nCRPIX1 = 55\nCRPIX2 = 45\nCRVAL1 = 30.01\n\
         CRVAL2 = 150.02\nCDELT1 = 1.2E-3\nCDELT2 = -1.1E-3\nPC2_1 = 0.05\n",
    )
    .unwrap();
    for (out, inp) in [(&ra_first, &dec_first), (&dec_first, &ra_first)] {
        let fast = PixelTransform::new(out, inp).unwrap();
        assert!(fast.is_homography());
        let slow = PixelTransform::general(out, inp).unwrap();
        for (x, y) in [(0.0, 0.0), (10.0, 80.0), (70.0, 5.0)] {
            let (a, b) = (fast.map(x, y).unwrap(), slow.map(x, y).unwrap());
            assert!(
                (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9,
                "{a:?} {b:?}"
            );
            // The input pixel shows the same sky point as the output pixel.
            let (w_out, w_in) = (
                out.pixel_to_world(x, y).unwrap(),
                inp.pixel_to_world(a.0, a.1).unwrap(),
            );
            assert!((w_out.0 - w_in.0).abs() < 1e-10 && (w_out.1 - w_in.1).abs() < 1e-10);
        }
    }
}

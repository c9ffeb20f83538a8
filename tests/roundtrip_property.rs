//! Property test: for random celestial WCS (projection, reference point, rotation, scale,
//! LONPOLE) and random pixels, pixel -> world -> pixel returns the pixel wherever the
//! projection is one-to-one, and pixel -> world -> pixel -> world returns the same sky point
//! everywhere (also where several pixels show the same sky point).

use proptest::prelude::*;
use reproject::wcs::Wcs;

/// Projection codes with the extra header cards they need.
const PROJECTIONS: &[(&str, &str, bool)] = &[
    // (code, extra cards, one-to-one over the whole valid plane)
    ("AZP", "PV2_1 = 2.0\nPV2_2 = 20.0\n", true),
    ("SZP", "PV2_1 = 2.0\nPV2_2 = 180.0\nPV2_3 = 60.0\n", true),
    ("TAN", "", true),
    ("STG", "", true),
    ("SIN", "", true),
    ("SIN", "PV2_1 = 0.1\nPV2_2 = -0.2\n", true),
    ("ARC", "", true),
    ("ZPN", "PV2_0 = 0.0\nPV2_1 = 1.0\nPV2_3 = -0.05\n", true),
    ("ZEA", "", true),
    ("AIR", "PV2_1 = 45.0\n", true),
    ("CYP", "PV2_1 = 1.0\nPV2_2 = 0.7\n", true),
    ("CEA", "PV2_1 = 0.8\n", true),
    ("CAR", "", true),
    ("MER", "", true),
    ("SFL", "", true),
    ("PAR", "", true),
    ("MOL", "", true),
    ("AIT", "", true),
    ("COP", "PV2_1 = 40.0\nPV2_2 = 10.0\n", true),
    ("COE", "PV2_1 = -30.0\nPV2_2 = 15.0\n", true),
    ("COD", "PV2_1 = 60.0\nPV2_2 = 20.0\n", true),
    ("COO", "PV2_1 = 45.0\nPV2_2 = 10.0\n", true),
    ("BON", "PV2_1 = 30.0\n", true),
    ("PCO", "", true),
    // Quad-cube and HEALPix layouts repeat the sky outside their facets, so only the
    // world-level round trip holds everywhere. (CSC is left out: WCSLIB's forward and inverse
    // CSC polynomials disagree by up to 0.2 px by design.)
    ("TSC", "", false),
    ("QSC", "", false),
    ("HPX", "", false),
    ("XPH", "", false),
];

fn header(
    code: &str,
    extra: &str,
    lon: f64,
    lat: f64,
    rot: f64,
    scale: f64,
    lonpole: Option<f64>,
) -> String {
    let (s, c) = rot.to_radians().sin_cos();
    let mut h = format!(
        "CTYPE1 = 'RA---{code}'\nCTYPE2 = 'DEC--{code}'\nCRPIX1 = 256.5\nCRPIX2 = 256.5\n\
         CRVAL1 = {lon:.12}\nCRVAL2 = {lat:.12}\nCD1_1 = {:.15E}\nCD1_2 = {:.15E}\n\
         CD2_1 = {:.15E}\nCD2_2 = {:.15E}\n{extra}",
        -scale * c,
        scale * s,
        scale * s,
        scale * c
    );
    if let Some(p) = lonpole {
        h.push_str(&format!("LONPOLE = {p:.6}\n"));
    }
    h
}

/// Angular distance in degrees (haversine, accurate for tiny separations).
fn separation(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (l1, b1) = (a.0.to_radians(), a.1.to_radians());
    let (l2, b2) = (b.0.to_radians(), b.1.to_radians());
    let h = ((b2 - b1) / 2.0).sin().powi(2) + b1.cos() * b2.cos() * ((l2 - l1) / 2.0).sin().powi(2);
    2.0 * h.sqrt().min(1.0).asin().to_degrees()
}

proptest! {
    // A fixed seed keeps CI deterministic; `PROPTEST_RNG_SEED` does not override it, change
    // it here to explore other cases.
    #![proptest_config(ProptestConfig {
        cases: 3000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20261122),
        ..ProptestConfig::default()
    })]

    #[test]
    fn pixel_world_pixel(
        which in 0..PROJECTIONS.len(),
        lon in 0.0f64..360.0,
        lat in -89.0f64..89.0,
        rot in 0.0f64..360.0,
        log_scale in -4.0f64..-0.3,
        lonpole in prop::option::of(prop::sample::select(vec![0.0, 90.0, 180.0, 270.0])),
        x in -200.0f64..712.0,
        y in -200.0f64..712.0,
    ) {
        let (code, extra, one_to_one) = PROJECTIONS[which];
        let scale = 10f64.powf(log_scale);
        let text = header(code, extra, lon, lat, rot, scale, lonpole);
        // Some random pole choices have no valid celestial rotation: WCSLIB rejects them too.
        let Ok(wcs) = Wcs::from_header_str(&text) else { return Ok(()); };
        let Some(world) = wcs.pixel_to_world(x, y) else { return Ok(()); };
        let back = wcs.world_to_pixel(world.0, world.1);
        // AZP and SZP with |mu| > 1 overlap themselves near the horizon: WCSLIB's x2s returns
        // the solution nearest the pole, which its s2x may flag as the far side (astropy gives
        // NaN there too), so there a valid pixel may have no way back.
        if back.is_none() && matches!(code, "AZP" | "SZP") {
            return Ok(());
        }
        prop_assert!(back.is_some(), "{code}: ({x}, {y}) -> {world:?} has no pixel\n{text}");
        let (bx, by) = back.unwrap();
        let again = wcs.pixel_to_world(bx, by);
        prop_assert!(again.is_some(), "{code}: pixel ({bx}, {by}) of {world:?} has no world\n{text}");
        // The sky point is reproduced to 1e-10 deg, except where WCSLIB's inverse is known to
        // give up digits: the iterative inverses of AIR, ZPN, MOL and PCO stop their
        // bisections at 1e-12..1e-13 (astropy's own AIR vectors round-trip to 1.7e-9 px =
        // 1.1e-10 deg; 4.3e-10 deg seen for PCO), and the perspective projections AZP, SZP
        // and SIN with obliqueness recover theta from sin(theta) through a quadratic, which
        // is ill-conditioned near the native pole (1.2e-10 deg seen for SIN(0.1, -0.2)): 1e-9
        // deg there, the accuracy asked of pixel -> world.
        let loses_digits = matches!(code, "AIR" | "ZPN" | "MOL" | "PCO" | "AZP" | "SZP")
            || (code == "SIN" && !extra.is_empty());
        let angular_tol = if loses_digits { 1e-9 } else { 1e-10 };
        let sep = separation(world, again.unwrap());
        prop_assert!(sep < angular_tol, "{code}: world round trip off by {sep:e} deg\n{text}");
        if one_to_one {
            // 1e-7 px, or 1e-10 deg on the sky where that is more: near the pole of a
            // perspective projection (SZP, AZP, SIN) WCSLIB recovers theta from sin(theta) and
            // loses digits there (1.5e-11 deg measured), which is 1.5e-7 px at 1e-4 deg/px.
            let tol = 1e-7f64.max(angular_tol / scale);
            prop_assert!(
                (bx - x).abs() < tol && (by - y).abs() < tol,
                "{code}: ({x}, {y}) -> {world:?} -> ({bx}, {by})\n{text}"
            );
        }
    }
}

/// The property above must not pass vacuously: every projection's sample header parses and
/// most pixels of the central region have a sky position.
#[test]
fn sample_headers_are_valid() {
    for &(code, extra, _) in PROJECTIONS {
        let wcs = Wcs::from_header_str(&header(code, extra, 30.0, 20.0, 15.0, 0.01, None))
            .unwrap_or_else(|e| panic!("{code}: {e}"));
        let valid = (0..100)
            .flat_map(|i| (0..100).map(move |j| (200.0 + i as f64, 200.0 + j as f64)))
            .filter(|&(x, y)| wcs.pixel_to_world(x, y).is_some())
            .count();
        assert!(valid > 5000, "{code}: only {valid} of 10000 pixels valid");
    }
}

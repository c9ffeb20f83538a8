//! SIP and TPV distortions against astropy's vectors (cases `sip`, `irac_sip`,
//! `extra_siponly`, `tpvonly`).
//!
//! * pixel → world (`pix` → `world`) within 1e-9 deg, the same invalid set;
//! * focal plane (`pix` → `foc`, the pixel after SIP) within 1e-9 px;
//! * world → pixel (`world` → `pix_roundtrip`) within 1e-6 px;
//! * sky → pixel (`sky` → `sky_pix`) within 1e-6 px (relative beyond 1e6 px), the same invalid
//!   set: for tpvonly 679 of 884 points, where WCSLIB's TPV inverse does not converge or the
//!   point is behind the TAN plane; for SIP the far-away points where astropy's iteration
//!   diverges keep astropy's `best_solution`, as astropy (and reproject) do;
//! * the wide grids: pixel → world on `wide_pix` with the same invalid set, and back onto
//!   `wide_pix_roundtrip`.

mod common;

use common::{angle_diff, Case};
use reproject::wcs::Wcs;

const WORLD_TOL_DEG: f64 = 1e-9;
const FOC_TOL_PX: f64 = 1e-9;
const PIX_TOL_PX: f64 = 1e-6;

/// Largest errors seen, for the report printed by each test.
#[derive(Default, Debug)]
struct Stats {
    world_deg: f64,
    foc_px: f64,
    roundtrip_px: f64,
    sky_px: f64,
    wide_world_deg: f64,
    wide_roundtrip_px: f64,
    sky_invalid: usize,
    wide_invalid: usize,
    /// Sky points where the SIP iteration converged: largest error (px).
    sky_converged_px: f64,
    /// Sky points where it diverged (astropy's best_solution kept).
    sky_diverged: usize,
}

fn check_pixel_to_world(
    case: &mut Case,
    wcs: &Wcs,
    pix_key: &str,
    world_key: &str,
    failures: &mut Vec<String>,
) -> (f64, usize) {
    let pix = case.pairs(pix_key);
    let world = case.pairs(world_key);
    let (mut max_err, mut invalid) = (0.0f64, 0);
    for i in 0..pix.nrows() {
        let (x, y) = (pix[[i, 0]], pix[[i, 1]]);
        let (lon, lat) = (world[[i, 0]], world[[i, 1]]);
        match (wcs.pixel_to_world(x, y), lon.is_nan()) {
            (None, true) => invalid += 1,
            (Some((a, d)), false) => {
                let err = angle_diff(a, lon).max((d - lat).abs());
                max_err = max_err.max(err);
                if err > WORLD_TOL_DEG {
                    failures.push(format!(
                        "{pix_key}[{i}] ({x}, {y}) -> ({a}, {d}), astropy ({lon}, {lat})"
                    ));
                }
            }
            (got, _) => failures.push(format!(
                "{pix_key}[{i}] ({x}, {y}) -> {got:?}, astropy ({lon}, {lat})"
            )),
        }
    }
    (max_err, invalid)
}

/// world → pixel; beyond 1e6 px the tolerance is relative (1e-12 of the coordinate).
fn check_world_to_pixel(
    case: &mut Case,
    wcs: &Wcs,
    world_key: &str,
    pix_key: &str,
    failures: &mut Vec<String>,
) -> (f64, usize) {
    let world = case.pairs(world_key);
    let want = case.pairs(pix_key);
    let (mut max_err, mut invalid) = (0.0f64, 0);
    for i in 0..world.nrows() {
        let (lon, lat) = (world[[i, 0]], world[[i, 1]]);
        let (px, py) = (want[[i, 0]], want[[i, 1]]);
        match (wcs.world_to_pixel(lon, lat), px.is_nan()) {
            (None, true) => invalid += 1,
            (Some((x, y)), false) => {
                let scale = (px.abs().max(py.abs()) / 1e6).max(1.0);
                let err = (x - px).abs().max((y - py).abs()) / scale;
                max_err = max_err.max(err);
                if err > PIX_TOL_PX {
                    failures.push(format!(
                        "{world_key}[{i}] ({lon}, {lat}) -> ({x}, {y}), astropy ({px}, {py})"
                    ));
                }
            }
            (got, _) => failures.push(format!(
                "{world_key}[{i}] ({lon}, {lat}) -> {got:?}, astropy ({px}, {py})"
            )),
        }
    }
    (max_err, invalid)
}

fn check_focal(case: &mut Case, wcs: &Wcs, failures: &mut Vec<String>) -> f64 {
    let pix = case.pairs("pix");
    let foc = case.pairs("foc");
    let mut max_err = 0.0f64;
    for i in 0..pix.nrows() {
        let (fx, fy) = wcs.pixel_to_focal(pix[[i, 0]], pix[[i, 1]]);
        let err = (fx - foc[[i, 0]]).abs().max((fy - foc[[i, 1]]).abs());
        max_err = max_err.max(err);
        if err.is_nan() || err > FOC_TOL_PX {
            failures.push(format!(
                "foc[{i}] ({}, {}) -> ({fx}, {fy}), astropy ({}, {})",
                pix[[i, 0]],
                pix[[i, 1]],
                foc[[i, 0]],
                foc[[i, 1]]
            ));
        }
    }
    max_err
}

/// SIP: the undistorted WCS gives `sky_pix_nodist` (astropy `wcs_world2pix`); from there the
/// iteration either converges (then within 1e-9 px of astropy) or diverges (astropy keeps
/// the last point, so do we). Returns (largest error where converged, number diverged).
fn check_sip_iteration(case: &mut Case, wcs: &Wcs, failures: &mut Vec<String>) -> (f64, usize) {
    let mut params = wcs.params().clone();
    params.sip = None;
    let nodist = Wcs::from_params(params).unwrap();
    let sip = wcs.sip().unwrap();
    let sky = case.pairs("sky");
    let want_nodist = case.pairs("sky_pix_nodist");
    let want = case.pairs("sky_pix");
    let (mut max_err, mut diverged) = (0.0f64, 0);
    for i in 0..sky.nrows() {
        let Some((x0, y0)) = nodist.world_to_pixel(sky[[i, 0]], sky[[i, 1]]) else {
            assert!(want_nodist[[i, 0]].is_nan());
            continue;
        };
        let scale = (x0.abs().max(y0.abs()) / 1e6).max(1.0);
        let err0 = (x0 - want_nodist[[i, 0]])
            .abs()
            .max((y0 - want_nodist[[i, 1]]).abs());
        if err0.is_nan() || err0 / scale > 1e-9 {
            failures.push(format!(
                "sky_pix_nodist[{i}]: ({x0}, {y0}) vs {}",
                want_nodist.row(i)
            ));
        }
        let s = sip.invert(x0, y0, &Default::default());
        if s.converged {
            let err = (s.x - want[[i, 0]]).abs().max((s.y - want[[i, 1]]).abs());
            max_err = max_err.max(err);
            if err.is_nan() || err > 1e-9 {
                failures.push(format!(
                    "sky_pix[{i}] converged: ({}, {}) vs {}",
                    s.x,
                    s.y,
                    want.row(i)
                ));
            }
        } else {
            diverged += 1;
        }
    }
    (max_err, diverged)
}

fn check_case(name: &str) -> Stats {
    let mut case = Case::load(name);
    let wcs = Wcs::from_header_str(&case.header)
        .unwrap_or_else(|e| panic!("{name}: header rejected: {e}"));
    assert!(wcs.has_distortion(), "{name}: no distortion found");
    let mut failures = Vec::new();
    let mut stats = Stats::default();
    let (err, invalid) = check_pixel_to_world(&mut case, &wcs, "pix", "world", &mut failures);
    assert_eq!(invalid, 0, "{name}: astropy's pix grid is all valid");
    stats.world_deg = err;
    stats.foc_px = check_focal(&mut case, &wcs, &mut failures);
    (stats.roundtrip_px, _) =
        check_world_to_pixel(&mut case, &wcs, "world", "pix_roundtrip", &mut failures);
    (stats.sky_px, stats.sky_invalid) =
        check_world_to_pixel(&mut case, &wcs, "sky", "sky_pix", &mut failures);
    (stats.wide_world_deg, stats.wide_invalid) =
        check_pixel_to_world(&mut case, &wcs, "wide_pix", "wide_world", &mut failures);
    (stats.wide_roundtrip_px, _) = check_world_to_pixel(
        &mut case,
        &wcs,
        "wide_world",
        "wide_pix_roundtrip",
        &mut failures,
    );

    if wcs.sip().is_some() {
        (stats.sky_converged_px, stats.sky_diverged) =
            check_sip_iteration(&mut case, &wcs, &mut failures);
    }

    // The invalid sets are astropy's: the sky grid's NaN count is in the vectors.
    let sky_nan = case
        .pairs("sky_pix")
        .column(0)
        .iter()
        .filter(|v| v.is_nan())
        .count();
    assert_eq!(stats.sky_invalid, sky_nan, "{name}: sky invalid count");

    // Serialising and rebuilding gives the same transformation, distortion included.
    // (serde_json without `float_roundtrip` may change the last bit of a coefficient.)
    let json = serde_json::to_string(&wcs).unwrap();
    let back: Wcs = serde_json::from_str(&json).unwrap();
    assert_eq!(back.params().sip.is_some(), wcs.params().sip.is_some());
    assert_eq!(back.params().tpv.is_some(), wcs.params().tpv.is_some());
    let pix = case.pairs("pix");
    for i in (0..pix.nrows()).step_by(37) {
        let (x, y) = (pix[[i, 0]], pix[[i, 1]]);
        let (lon, lat) = wcs.pixel_to_world(x, y).unwrap();
        let (blon, blat) = back.pixel_to_world(x, y).unwrap();
        assert!(angle_diff(lon, blon) < 1e-12 && (lat - blat).abs() < 1e-12);
        let (px, py) = wcs.world_to_pixel(lon, lat).unwrap();
        let (bx, by) = back.world_to_pixel(lon, lat).unwrap();
        assert!((px - bx).abs() < 1e-9 && (py - by).abs() < 1e-9);
    }

    println!("{name}: {stats:?}");
    if !failures.is_empty() {
        let n = failures.len();
        failures.truncate(20);
        panic!(
            "{name}: {n} mismatches, first ones:\n{}",
            failures.join("\n")
        );
    }
    stats
}

#[test]
fn sip() {
    check_case("sip");
}

#[test]
fn irac_sip() {
    check_case("irac_sip");
}

#[test]
fn extra_siponly() {
    check_case("extra_siponly");
}

#[test]
fn tpvonly() {
    let stats = check_case("tpvonly");
    assert_eq!(stats.sky_invalid, 679);
}

/// Every distorted case of the vectors parses, and has a test above.
#[test]
fn every_distorted_case_parses() {
    for name in common::DISTORTED {
        let case = Case::load(name);
        let wcs = Wcs::from_header_str(&case.header)
            .unwrap_or_else(|e| panic!("{name}: header rejected: {e}"));
        assert!(wcs.has_distortion(), "{name}");
        assert!(["sip", "irac_sip", "extra_siponly", "tpvonly"].contains(name));
    }
}

/// The batch and N-d forms apply the distortion like the point forms.
#[test]
fn batch_and_nd_forms_apply_the_distortion() {
    for name in common::DISTORTED {
        let mut case = Case::load(name);
        let wcs = Wcs::from_header_str(&case.header).unwrap();
        let pix = case.pairs("pix");
        let xs: Vec<f64> = pix.column(0).to_vec();
        let ys: Vec<f64> = pix.column(1).to_vec();
        let (mut lon, mut lat) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        wcs.pixel_to_world_slice(&xs, &ys, &mut lon, &mut lat)
            .unwrap();
        let (mut bx, mut by) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        wcs.world_to_pixel_slice(&lon, &lat, &mut bx, &mut by)
            .unwrap();
        let (alon, alat) = wcs
            .pixel_to_world_array(pix.column(0), pix.column(1))
            .unwrap();
        for i in 0..xs.len() {
            let (a, d) = wcs.pixel_to_world(xs[i], ys[i]).unwrap();
            assert_eq!((lon[i], lat[i]), (a, d));
            assert_eq!((alon[i], alat[i]), (a, d));
            assert_eq!(Some((bx[i], by[i])), wcs.world_to_pixel(a, d));
            let w = wcs.pixel_to_world_nd(&[xs[i], ys[i]]).unwrap();
            assert_eq!((w[0], w[1]), (a, d), "{name} nd [{i}]");
            let p = wcs.world_to_pixel_nd(&[a, d]).unwrap();
            assert_eq!((p[0], p[1]), (bx[i], by[i]), "{name} nd inverse [{i}]");
        }
    }
}

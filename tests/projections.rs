//! Each projection on its own against WCSLIB's intermediates in the astropy vectors:
//! `imgcrd -> (phi, theta)` (x2s) and `(phi, theta) -> imgcrd` (s2x), with the same invalid
//! points. Run one projection with `cargo test --test projections -- azp`.

mod common;

use common::{angle_diff, Case};
use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};

/// Angles (deg) for x2s and plane coordinates (deg) for s2x.
const TOL_DEG: f64 = 1e-9;

fn projection_of(case: &Case) -> Projection {
    let code: ProjectionCode = case.param("prj_code").as_str().unwrap().parse().unwrap();
    let mut params = ProjectionParams::default();
    for (m, v) in case.param("prj_pv").as_array().unwrap().iter().enumerate() {
        params.pv[m] = v.as_f64();
    }
    let x0 = case.param("prj_x0").as_f64().unwrap();
    let y0 = case.param("prj_y0").as_f64().unwrap();
    if x0 != 0.0 || y0 != 0.0 {
        params.fiducial = Some((
            case.param("phi0").as_f64().unwrap(),
            case.param("theta0").as_f64().unwrap(),
        ));
    }
    let p = Projection::new(code, &params)
        .unwrap_or_else(|e| panic!("{}: building {code:?}: {e}", case.name));
    let (px0, py0) = p.offset();
    assert!(
        (px0 - x0).abs() < 1e-12 && (py0 - y0).abs() < 1e-12,
        "offset"
    );
    p
}

/// Compares x2s over one grid; returns the number of points checked.
fn check_x2s(
    case: &mut Case,
    prj: &Projection,
    pix_key: &str,
    prefix: &str,
    failures: &mut Vec<String>,
) {
    let lin = case.meta_linear();
    let pix = case.pairs(pix_key);
    let phi = case.values(&format!("{prefix}phi"));
    let theta = case.values(&format!("{prefix}theta"));
    let stat = case.flags(&format!("{prefix}p2s_stat"));
    for i in 0..pix.nrows() {
        let (x, y) = lin.pix_to_img(pix[[i, 0]], pix[[i, 1]]);
        // WCSLIB sometimes returns NaN with stat 0 (PCO at x = 0: its bisection starts with
        // 0/0); astropy then reports NaN, which is what `None` means here.
        let invalid = stat[i] || !(phi[i].is_finite() && theta[i].is_finite());
        match (prj.x2s(x, y), invalid) {
            (None, true) => {}
            (Some((p, t)), false) => {
                if angle_diff(p, phi[i]) > TOL_DEG && (t.abs() - 90.0).abs() > 1e-9
                    || (t - theta[i]).abs() > TOL_DEG
                {
                    failures.push(format!(
                        "{pix_key}[{i}] x2s({x}, {y}) = ({p}, {t}), astropy ({}, {})",
                        phi[i], theta[i]
                    ));
                }
            }
            (got, _) => failures.push(format!(
                "{pix_key}[{i}] x2s({x}, {y}) = {got:?}, astropy valid={} ({}, {})",
                !invalid, phi[i], theta[i]
            )),
        }
    }
}

/// Compares s2x: the native coordinates of valid pixels must map back to their plane point.
fn check_s2x_pix(case: &mut Case, prj: &Projection, tol: f64, failures: &mut Vec<String>) {
    // The plane point of each pixel through the linear step (astropy's `imgcrd` array is
    // offset by CRVAL-like constants for some CD headers, so it is not used directly).
    let lin = case.meta_linear();
    let pix = case.pairs("pix");
    let phi = case.values("phi");
    let theta = case.values("theta");
    let stat = case.flags("p2s_stat");
    for i in 0..pix.nrows() {
        if stat[i] {
            continue;
        }
        let (u, v) = lin.pix_to_img(pix[[i, 0]], pix[[i, 1]]);
        match prj.s2x(phi[i], theta[i]) {
            Some((x, y)) if close(x, y, u, v, tol) => {}
            got => failures.push(format!(
                "pix[{i}] s2x({}, {}) = {got:?}, plane ({u}, {v})",
                phi[i], theta[i]
            )),
        }
    }
}

/// s2x over the sky grid: astropy's native coordinates -> the plane point of `sky_pix_nodist`.
fn check_s2x_sky(case: &mut Case, prj: &Projection, tol: f64, failures: &mut Vec<String>) {
    let lin = case.meta_linear();
    let pix = case.pairs("sky_pix_nodist");
    let phi = case.values("sky_phi");
    let theta = case.values("sky_theta");
    let stat = case.flags("sky_s2p_stat");
    for i in 0..pix.nrows() {
        if !(phi[i].is_finite() && theta[i].is_finite()) {
            continue;
        }
        let got = prj.s2x(phi[i], theta[i]);
        if stat[i] {
            if got.is_some() {
                failures.push(format!(
                    "sky[{i}] s2x({}, {}) = {got:?}, astropy invalid",
                    phi[i], theta[i]
                ));
            }
            continue;
        }
        let (u, v) = lin.pix_to_img(pix[[i, 0]], pix[[i, 1]]);
        match got {
            Some((x, y)) if close(x, y, u, v, tol) => {}
            _ => failures.push(format!(
                "sky[{i}] s2x({}, {}) = {got:?}, astropy ({u}, {v})",
                phi[i], theta[i]
            )),
        }
    }
}

/// Plane points agree within `tol` degrees, relative for points far out (near theta = 0 of
/// a zenithal projection the plane coordinates reach 1e18).
fn close(x: f64, y: f64, u: f64, v: f64, tol: f64) -> bool {
    let scale = 1f64.max(u.abs()).max(v.abs());
    (x - u).abs() <= tol * scale && (y - v).abs() <= tol * scale
}

fn check_case(name: &str) {
    let mut case = Case::load(name);
    let prj = projection_of(&case);
    let code = prj.code();
    let mut failures = Vec::new();
    check_x2s(&mut case, &prj, "pix", "", &mut failures);
    check_x2s(&mut case, &prj, "wide_pix", "wide_", &mut failures);
    // CSC's forward and inverse are separate float32 polynomials that disagree by up to
    // 0.2 px, so only its sky check (astropy's own s2x numbers) is exact.
    if code != ProjectionCode::Csc {
        check_s2x_pix(&mut case, &prj, TOL_DEG, &mut failures);
    }
    check_s2x_sky(&mut case, &prj, TOL_DEG, &mut failures);
    if !failures.is_empty() {
        let n = failures.len();
        failures.truncate(20);
        panic!(
            "{name}: {n} mismatches, first ones:\n{}",
            failures.join("\n")
        );
    }
}

macro_rules! cases {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check_case($name);
            }
        )*
    };
}

cases! {
    azp => "1904-66_AZP",
    szp => "1904-66_SZP",
    tan => "1904-66_TAN",
    stg => "1904-66_STG",
    sin => "1904-66_SIN",
    sin_ncp_file => "1904-66_NCP",
    sin_ncp_legacy => "extra_NCP_legacy_synth",
    sin_outside_sky => "extra_outside_sky",
    sin_crota2 => "extra_SIN_CROTA2_synth",
    arc => "1904-66_ARC",
    zpn => "1904-66_ZPN",
    zpn_hole => "extra_zpn-hole",
    zea => "1904-66_ZEA",
    zea_fk4 => "extra_ZEA_FK4_B1950_synth",
    air => "1904-66_AIR",
    cyp => "1904-66_CYP",
    cea => "1904-66_CEA",
    car => "1904-66_CAR",
    car_allsky => "extra_CAR_allsky_synth",
    mer => "1904-66_MER",
    sfl => "1904-66_SFL",
    sfl_gls_legacy => "extra_GLS_legacy_synth",
    par => "1904-66_PAR",
    mol => "1904-66_MOL",
    ait => "1904-66_AIT",
    ait_galactic_allsky => "extra_AIT_gal_allsky_synth",
    cop => "1904-66_COP",
    coe => "1904-66_COE",
    coe_simple => "extra_COE_simple_synth",
    cod => "1904-66_COD",
    coo => "1904-66_COO",
    bon => "1904-66_BON",
    pco => "1904-66_PCO",
    tsc => "1904-66_TSC",
    csc => "1904-66_CSC",
    qsc => "1904-66_QSC",
    hpx => "1904-66_HPX",
    xph => "extra_XPH_synth",
    tan_galactic_cd => "extra_GAL_TAN_CDrot_synth",
}

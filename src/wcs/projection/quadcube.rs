//! Quad-cube projections (TSC CSC QSC), prj.c.
//!
//! All three lay the six faces of a cube out in a sideways cross: faces 1 to 4 side by side
//! along the equator (centred on φ = 0, 90, 180, 270 at x = 0, 90, 180, 270 deg), face 0 above
//! and face 5 below face 1. Plane coordinates are in units of 45 deg per half face; x below
//! -45 deg wraps round to the far end of the strip. They differ only in how a direction on a
//! face maps to a point on it.

use std::f64::consts::SQRT_2;
use std::ops::{Add, Sub};

use super::{bounds_check, Project, ProjectionParams};
use crate::error::Result;
use crate::wcs::trig::{asind, atan2d, atand, copysign, deg_to_rad, sincosd};

/// Half a face in plane degrees: WCSLIB's `w[0]` for r0 = 180/π (`r0·π/4`, set exactly).
const W0: f64 = 45.0;
/// Its reciprocal, `w[1]`, as WCSLIB rounds it (`1.0/45.0`, used as a multiplier).
const W1: f64 = 1.0 / 45.0;
/// The prjbchk tolerance of the quad-cube x2s routines.
const BCHK_TOL: f64 = 1.0e-13;

/// A cube face, numbered as in WCSLIB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Face {
    /// Face 0, centred on θ = 90 (direction +n).
    Top,
    /// Face 1, centred on φ = 0 (+l).
    Phi0,
    /// Face 2, centred on φ = 90 (+m).
    Phi90,
    /// Face 3, centred on φ = 180 (−l).
    Phi180,
    /// Face 4, centred on φ = 270 (−m).
    Phi270,
    /// Face 5, centred on θ = −90 (−n).
    Bottom,
}

impl Face {
    /// The face centre in the cross layout, in half-face units (`x0`, `y0` of the s2x routines).
    fn offset(self) -> (i8, i8) {
        match self {
            Face::Top => (0, 2),
            Face::Phi0 => (0, 0),
            Face::Phi90 => (2, 0),
            Face::Phi180 => (4, 0),
            Face::Phi270 => (6, 0),
            Face::Bottom => (0, -2),
        }
    }

    /// The face a unit vector (l, m, n) points through, and its largest component ζ: the first
    /// of n, l, m, −l, −m, −n to be strictly largest, as the s2x routines break ties.
    fn select(l: f64, m: f64, n: f64) -> (Face, f64) {
        let mut best = (Face::Top, n);
        for (face, v) in [
            (Face::Phi0, l),
            (Face::Phi90, m),
            (Face::Phi180, -l),
            (Face::Phi270, -m),
            (Face::Bottom, -n),
        ] {
            if v > best.1 {
                best = (face, v);
            }
        }
        best
    }

    /// The two in-face components (ξ, η) of (l, m, n), along the face's x and y directions.
    fn in_face(self, l: f64, m: f64, n: f64) -> (f64, f64) {
        match self {
            Face::Top => (m, -l),
            Face::Phi0 => (m, n),
            Face::Phi90 => (-l, n),
            Face::Phi180 => (-m, n),
            Face::Phi270 => (l, n),
            Face::Bottom => (m, l),
        }
    }

    /// The inverse of [`Face::in_face`]: (l, m, n) from the component ζ along the face normal
    /// and the in-face components (u, v).
    fn to_lmn(self, zeta: f64, u: f64, v: f64) -> (f64, f64, f64) {
        match self {
            Face::Top => (-v, u, zeta),
            Face::Phi0 => (zeta, u, v),
            Face::Phi90 => (-u, zeta, v),
            Face::Phi180 => (-zeta, -u, v),
            Face::Phi270 => (u, -zeta, v),
            Face::Bottom => (v, u, -zeta),
        }
    }
}

/// The bounds check and face determination shared by `tscx2s`, `cscx2s` (in float32) and
/// `qscx2s`: `(xf, yf)` in half-face units to the face and the face-local coordinates, or
/// `None` outside the cross. x < −1 is mapped to the far end of the strip (x + 8).
fn unfold<T>(xf: T, yf: T) -> Option<(Face, T, T)>
where
    T: Copy + PartialOrd + Add<Output = T> + Sub<Output = T> + From<i8>,
{
    let c = |v: i8| T::from(v);
    let within = |v: T, lim: i8| c(-lim) <= v && v <= c(lim);
    if within(xf, 1) {
        if !within(yf, 3) {
            return None;
        }
    } else if !within(xf, 7) || !within(yf, 1) {
        return None;
    }
    let xf = if xf < c(-1) { xf + c(8) } else { xf };
    Some(if xf > c(5) {
        (Face::Phi270, xf - c(6), yf)
    } else if xf > c(3) {
        (Face::Phi180, xf - c(4), yf)
    } else if xf > c(1) {
        (Face::Phi90, xf - c(2), yf)
    } else if yf > c(1) {
        (Face::Top, xf, yf - c(2))
    } else if yf < c(-1) {
        (Face::Bottom, xf, yf + c(2))
    } else {
        (Face::Phi0, xf, yf)
    })
}

/// (l, m, n) to native (φ, θ) with the quad-cube x2s routines' pole convention and prjbchk.
fn to_native(l: f64, m: f64, n: f64) -> Option<(f64, f64)> {
    let phi = if l == 0.0 && m == 0.0 {
        0.0
    } else {
        atan2d(m, l)
    };
    bounds_check(phi, asind(n), BCHK_TOL)
}

/// Native (φ, θ) to the face, the in-face components (ξ, η), ζ, and (cos φ, sin φ).
fn to_face(phi: f64, theta: f64) -> (Face, f64, f64, f64, f64, f64) {
    let (sin_phi, cos_phi) = sincosd(phi);
    let (sin_theta, cos_theta) = sincosd(theta);
    let (l, m, n) = (cos_theta * cos_phi, cos_theta * sin_phi, sin_theta);
    let (face, zeta) = Face::select(l, m, n);
    let (xi, eta) = face.in_face(l, m, n);
    (face, xi, eta, zeta, cos_phi, sin_phi)
}

/// The s2x edge check: a face coordinate beyond ±1 by more than `tol` is invalid, within it
/// clamped to ±1.
fn clamp_edge(v: f64, tol: f64) -> Option<f64> {
    if v.abs() > 1.0 {
        if v.abs() > 1.0 + tol {
            return None;
        }
        return Some(copysign(1.0, v));
    }
    Some(v)
}

/// Face-local (xf, yf) and the face to plane coordinates.
fn to_plane(face: Face, xf: f64, yf: f64) -> (f64, f64) {
    let (x0, y0) = face.offset();
    (W0 * (xf + f64::from(x0)), W0 * (yf + f64::from(y0)))
}

/// TSC: tangential spherical cube (prj.c `tscset`/`tscx2s`/`tscs2x`), a gnomonic projection
/// of each face. No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Tsc;

impl Tsc {
    /// `tscset`: nothing to set up.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Tsc)
    }
}

impl Project for Tsc {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `tscx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (face, xf, yf) = unfold(x * W1, y * W1)?;
        let t = 1.0 / (1.0 + xf * xf + yf * yf).sqrt();
        let (l, m, n) = face.to_lmn(t, t * xf, t * yf);
        to_native(l, m, n)
    }

    /// `tscs2x`.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (face, xi, eta, zeta, _, _) = to_face(phi, theta);
        let xf = clamp_edge(xi / zeta, 1.0e-12);
        let yf = clamp_edge(eta / zeta, 1.0e-12);
        Some(to_plane(face, xf?, yf?))
    }
}

/// CSC: COBE quadrilateralized spherical cube (prj.c `cscset`/`cscx2s`/`cscs2x`). Forward and
/// inverse are separate float32 polynomial fits, evaluated here in f32 with WCSLIB's operation
/// order so that the results agree to the bit; they are not exact inverses of each other.
/// No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Csc;

impl Csc {
    /// `cscset`: nothing to set up.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Csc)
    }
}

/// Coefficients of the `cscx2s` polynomial, `P[i][j]` being WCSLIB's `pij` (the term in
/// x^(2i) y^(2j) of the fit), zero where WCSLIB has none.
#[allow(clippy::excessive_precision)]
const CSC_P: [[f32; 7]; 7] = [
    [
        -0.27292696,
        -0.02819452,
        0.27058160,
        -0.60441560,
        0.93412077,
        -0.63915306,
        0.14381585,
    ],
    [
        -0.07629969,
        -0.01471565,
        -0.56800938,
        1.50880086,
        -1.41601920,
        0.52032238,
        0.0,
    ],
    [
        -0.22797056,
        0.48051509,
        0.30803317,
        -0.93678576,
        0.33887446,
        0.0,
        0.0,
    ],
    [
        0.54852384,
        -1.74114454,
        0.98938102,
        0.08693841,
        0.0,
        0.0,
        0.0,
    ],
    [-0.62930065, 1.71547508, -0.83180469, 0.0, 0.0, 0.0, 0.0],
    [0.25795794, -0.53022337, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.02584375, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
];

/// The `cscx2s` distortion of one face coordinate `a` given the other, `b` (squares `aa`,
/// `bb`): `a + a(1 − a²) Σ_j b^(2j) Σ_i P[i][j] a^(2i)`, in WCSLIB's Horner order.
#[inline]
fn csc_inverse_axis(a: f32, aa: f32, bb: f32) -> f32 {
    // z_j = Σ_i P[i][j] aa^i for i = 0 ..= 6 - j, by Horner from the highest power.
    let z = |j: usize| {
        (1..=6 - j)
            .rev()
            .fold(CSC_P[6 - j][j], |acc, i| CSC_P[i - 1][j] + aa * acc)
    };
    let sum = (0..6).rev().fold(z(6), |acc, j| z(j) + bb * acc);
    a + a * (1.0 - aa) * sum
}

/// Coefficients of the `cscs2x` polynomial (WCSLIB's names).
#[allow(clippy::excessive_precision)]
mod csc_fwd {
    pub(super) const GSTAR: f32 = 1.37484847732;
    pub(super) const MM: f32 = 0.004869491981;
    pub(super) const GAMMA: f32 = -0.13161671474;
    pub(super) const OMEGA1: f32 = -0.159596235474;
    pub(super) const D0: f32 = 0.0759196200467;
    pub(super) const D1: f32 = -0.0217762490699;
    pub(super) const C00: f32 = 0.141189631152;
    pub(super) const C10: f32 = 0.0809701286525;
    pub(super) const C01: f32 = -0.281528535557;
    pub(super) const C11: f32 = 0.15384112876;
    pub(super) const C20: f32 = -0.178251207466;
    pub(super) const C02: f32 = 0.106959469314;
}

/// The `cscs2x` polynomial for one face coordinate: `a` (with `a2 = a²`, `a4`, `a2co = 1 − a²`)
/// given the other coordinate's `b2`, `b4`, `b2co`, and `a2b2 = a²b²`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn csc_forward_axis(
    a: f32,
    a2: f32,
    a4: f32,
    a2co: f32,
    b2: f32,
    b4: f32,
    b2co: f32,
    a2b2: f32,
) -> f32 {
    use csc_fwd::*;
    let cross = C00 + C10 * a2 + C01 * b2 + C11 * a2b2 + C20 * a4 + C02 * b4;
    a * (a2
        + a2co
            * (GSTAR
                + b2 * (GAMMA * a2co + MM * a2 + b2co * cross)
                + a2 * (OMEGA1 - a2co * (D0 + D1 * a2))))
}

impl Project for Csc {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `cscx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (face, xf, yf) = unfold((x * W1) as f32, (y * W1) as f32)?;
        let (xx, yy) = (xf * xf, yf * yf);
        let chi = csc_inverse_axis(xf, xx, yy);
        let psi = csc_inverse_axis(yf, yy, xx);
        let t = 1.0 / (f64::from(chi * chi + psi * psi) + 1.0).sqrt();
        let (l, m, n) = face.to_lmn(t, f64::from(chi) * t, f64::from(psi) * t);
        to_native(l, m, n)
    }

    /// `cscs2x`.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (face, xi, eta, zeta, _, _) = to_face(phi, theta);
        let chi = (xi / zeta) as f32;
        let psi = (eta / zeta) as f32;

        let (chi2, psi2) = (chi * chi, psi * psi);
        let (chi2co, psi2co) = (1.0 - chi2, 1.0 - psi2);
        // Tiny terms are zeroed to avoid float underflow, as WCSLIB does.
        let chipsi = (chi * psi).abs();
        let chi4 = if chi2 > 1.0e-16 { chi2 * chi2 } else { 0.0 };
        let psi4 = if psi2 > 1.0e-16 { psi2 * psi2 } else { 0.0 };
        let chi2psi2 = if chipsi > 1.0e-16 { chi2 * psi2 } else { 0.0 };

        let xf = csc_forward_axis(chi, chi2, chi4, chi2co, psi2, psi4, psi2co, chi2psi2);
        let yf = csc_forward_axis(psi, psi2, psi4, psi2co, chi2, chi4, chi2co, chi2psi2);

        let clamp = |v: f32| clamp_edge(f64::from(v), 1.0e-7).map(|c| c as f32);
        let (xf, yf) = (clamp(xf)?, clamp(yf)?);
        let (x0, y0) = face.offset();
        // The face offset is added in float32 too.
        Some((
            W0 * f64::from(xf + f32::from(x0)),
            W0 * f64::from(yf + f32::from(y0)),
        ))
    }
}

/// QSC: quadrilateralized spherical cube (prj.c `qscset`/`qscx2s`/`qscs2x`), equal-area on each
/// face. No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Qsc;

impl Qsc {
    /// `qscset`: nothing to set up.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Qsc)
    }
}

/// `qscs2x`'s in-face solution: the face coordinate along the dominant component `major` of
/// (ξ, η) and the one along `minor`, from ζ's complement `zeco`.
#[inline]
fn qsc_forward_axis(major: f64, minor: f64, zeco: f64) -> (f64, f64) {
    let omega = minor / major;
    let tau = 1.0 + omega * omega;
    let a = (zeco / (1.0 - 1.0 / (1.0 + tau).sqrt())).sqrt();
    let a = if major < 0.0 { -a } else { a };
    let b = (a / 15.0) * (atand(omega) - asind(omega / (tau + tau).sqrt()));
    (a, b)
}

impl Project for Qsc {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `qscx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (face, xf, yf) = unfold(x * W1, y * W1)?;
        // Work along the dominant face coordinate `a`; `b` is the other.
        let direct = xf.abs() > yf.abs();
        let (a, b) = if direct { (xf, yf) } else { (yf, xf) };
        let (omega, tau, zeta, zeco) = if a == 0.0 {
            (0.0, 1.0, 1.0, 0.0)
        } else {
            let (sin_w, cos_w) = sincosd(15.0 * b / a);
            // C: `cosd(w) - SQRT2INV` with `#define SQRT2INV 1.0/SQRT2`: the quotient
            // 1.0/√2 rounded, one ulp below FRAC_1_SQRT_2.
            let omega = sin_w / (cos_w - 1.0 / SQRT_2);
            let tau = 1.0 + omega * omega;
            let zeco = a * a * (1.0 - 1.0 / (1.0 + tau).sqrt());
            (omega, tau, 1.0 - zeco, zeco)
        };
        let (zeta, w) = if zeta < -1.0 {
            if zeta < -1.0 - 1.0e-12 {
                return None;
            }
            (-1.0, 0.0)
        } else {
            (zeta, (zeco * (2.0 - zeco) / tau).sqrt())
        };
        // In-face components along x (u) and y (v), the dominant one carrying the sign of its
        // face coordinate.
        let (u, v) = if direct {
            let u = if xf < 0.0 { -w } else { w };
            (u, u * omega)
        } else {
            let v = if yf < 0.0 { -w } else { w };
            (v * omega, v)
        };
        let (l, m, n) = face.to_lmn(zeta, u, v);
        to_native(l, m, n)
    }

    /// `qscs2x`.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        if theta.abs() == 90.0 {
            // C: `*xp = -prj->x0`, which is −0.
            return Some((-0.0, copysign(2.0 * W0, theta)));
        }
        let (face, xi, eta, zeta, cos_phi, sin_phi) = to_face(phi, theta);
        let mut zeco = 1.0 - zeta;
        if zeco < 1.0e-8 {
            // Near the face centre: 1 − ζ from the small-angle series.
            let pi = std::f64::consts::PI;
            // C: `(*thetap)*D2R` etc., i.e. `θ*PI/180.0`.
            let t = deg_to_rad(theta);
            let polar = |t: f64| t * t / 2.0;
            let azimuthal = |p: f64| (p * p + t * t) / 2.0;
            zeco = match face {
                Face::Phi0 => azimuthal(sin_phi.atan2(cos_phi)),
                Face::Phi90 => azimuthal(sin_phi.atan2(cos_phi) - pi / 2.0),
                Face::Phi180 => {
                    let p = sin_phi.atan2(cos_phi);
                    azimuthal(p - copysign(pi, p))
                }
                Face::Phi270 => azimuthal(sin_phi.atan2(cos_phi) + pi / 2.0),
                Face::Bottom => polar(deg_to_rad(theta + 90.0)),
                Face::Top => polar(deg_to_rad(90.0 - theta)),
            };
        }

        let (xf, yf) = if xi == 0.0 && eta == 0.0 {
            (0.0, 0.0)
        } else if xi.abs() > eta.abs() {
            qsc_forward_axis(xi, eta, zeco)
        } else if eta.abs() >= xi.abs() {
            let (yf, xf) = qsc_forward_axis(eta, xi, zeco);
            (xf, yf)
        } else {
            (0.0, 0.0)
        };
        let xf = clamp_edge(xf, 1.0e-12);
        let yf = clamp_edge(yf, 1.0e-12);
        Some(to_plane(face, xf?, yf?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> ProjectionParams {
        ProjectionParams::default()
    }

    #[test]
    fn face_centres_and_poles() {
        let tsc = Tsc::new(&params()).unwrap();
        let qsc = Qsc::new(&params()).unwrap();
        let csc = Csc::new(&params()).unwrap();
        for p in [&tsc as &dyn Project, &qsc, &csc] {
            for (phi, theta, x, y) in [
                (0.0, 0.0, 0.0, 0.0),
                (90.0, 0.0, 90.0, 0.0),
                (180.0, 0.0, 180.0, 0.0),
                (-90.0, 0.0, 270.0, 0.0),
                (0.0, 90.0, 0.0, 90.0),
                (0.0, -90.0, 0.0, -90.0),
            ] {
                let (u, v) = p.s2x(phi, theta).unwrap();
                assert!(
                    (u - x).abs() < 1e-12 && (v - y).abs() < 1e-12,
                    "{phi} {theta}: {u} {v}"
                );
            }
        }
    }

    #[test]
    fn negative_x_wraps_to_the_far_face() {
        let tsc = Tsc::new(&params()).unwrap();
        let (phi, theta) = tsc.x2s(-90.0, 0.0).unwrap();
        assert!((phi + 90.0).abs() < 1e-12 && theta.abs() < 1e-12);
        assert_eq!(tsc.x2s(-90.0, 0.0), tsc.x2s(270.0, 0.0));
        // Outside the cross.
        assert!(tsc.x2s(90.0, 90.0).is_none());
        assert!(tsc.x2s(0.0, 136.0).is_none());
        assert!(tsc.x2s(316.0, 0.0).is_none());
    }

    #[test]
    fn tsc_and_qsc_round_trip() {
        let tsc = Tsc::new(&params()).unwrap();
        let qsc = Qsc::new(&params()).unwrap();
        for p in [&tsc as &dyn Project, &qsc] {
            for &(phi, theta) in &[
                (10.0, 20.0),
                (-170.0, -60.0),
                (100.0, 80.0),
                (45.0, 0.0),
                (-30.0, -89.0),
            ] {
                let (x, y) = p.s2x(phi, theta).unwrap();
                let (p2, t2) = p.x2s(x, y).unwrap();
                assert!(
                    (p2 - phi).abs() < 1e-10 && (t2 - theta).abs() < 1e-10,
                    "{phi} {theta}"
                );
            }
        }
    }

    #[test]
    fn csc_is_close_to_its_own_inverse() {
        let csc = Csc::new(&params()).unwrap();
        for &(phi, theta) in &[(10.0, 20.0), (-170.0, -60.0), (100.0, 80.0), (30.0, 5.0)] {
            let (x, y) = csc.s2x(phi, theta).unwrap();
            let (p2, t2) = csc.x2s(x, y).unwrap();
            // The float32 fits disagree by up to about 0.02 deg.
            assert!(
                (p2 - phi).abs() < 0.05 && (t2 - theta).abs() < 0.05,
                "{phi} {theta}: {p2} {t2}"
            );
        }
    }

    #[test]
    fn qsc_small_angle_branch() {
        let qsc = Qsc::new(&params()).unwrap();
        let (x, y) = qsc.s2x(1e-5, 2e-5).unwrap();
        let (phi, theta) = qsc.x2s(x, y).unwrap();
        assert!(
            (phi - 1e-5).abs() < 1e-9 && (theta - 2e-5).abs() < 1e-9,
            "{phi} {theta}"
        );
    }
}

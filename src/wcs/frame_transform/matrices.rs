//! Matrices: products, rotations, and the fixed and precession matrices of the steps.

use super::epoch::{Epoch, DAS2R, DJ00, DJC, DJM0, DJM00};
use super::Mat3;

pub(super) fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

pub(super) fn transpose(a: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in a.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            r[j][i] = x;
        }
    }
    r
}

#[inline]
pub(super) fn mat_vec(m: &Mat3, v: [f64; 3]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// Passive rotation by `angle` radians about axis 0 (x), 1 (y) or 2 (z): astropy's
/// `rotation_matrix` and ERFA's `eraRx/Ry/Rz`.
pub(super) fn rotation(axis: usize, angle: f64) -> Mat3 {
    let (s, c) = angle.sin_cos();
    let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut r = [[0.0; 3]; 3];
    r[axis][axis] = 1.0;
    r[a1][a1] = c;
    r[a1][a2] = s;
    r[a2][a1] = -s;
    r[a2][a2] = c;
    r
}

/// `rotation_matrix(angle_deg, axis)`.
fn rotation_deg(axis: usize, angle: f64) -> Mat3 {
    rotation(axis, angle.to_radians())
}

const X: usize = 0;
const Y: usize = 1;
const Z: usize = 2;

/// ICRS → FK5(J2000) frame bias, USNO Circular 179 (astropy `_icrs_to_fk5_matrix`).
pub(super) fn bias() -> Mat3 {
    let eta0 = -19.9 / 3600000.0;
    let xi0 = 9.1 / 3600000.0;
    let da0 = -22.9 / 3600000.0;
    mat_mul(
        &mat_mul(&rotation_deg(X, -eta0), &rotation_deg(Y, xi0)),
        &rotation_deg(Z, da0),
    )
}

/// FK5(equinox) → Galactic (galactic.py: NGP and l0 in FK5 J2000).
pub(super) fn fk5_to_galactic(equinox: Epoch) -> Mat3 {
    let ra = 192.8594812065348;
    let dec = 27.12825118085622;
    let lon0 = 122.9319185680026;
    let r = mat_mul(
        &mat_mul(&rotation_deg(Z, 180.0 - lon0), &rotation_deg(Y, 90.0 - dec)),
        &rotation_deg(Z, ra),
    );
    mat_mul(&r, &fk5_precession(equinox, Epoch::julian(2000.0)))
}

/// FK4NoETerms(equinox) → Galactic (galactic.py: NGP and l0 in FK4NoETerms B1950).
pub(super) fn fk4noe_to_galactic(equinox: Epoch) -> Mat3 {
    let r = mat_mul(
        &mat_mul(
            &rotation_deg(Z, 180.0 - 123.0),
            &rotation_deg(Y, 90.0 - 27.4),
        ),
        &rotation_deg(Z, 192.25),
    );
    mat_mul(&r, &newcomb_precession(equinox, Epoch::besselian(1950.0)))
}

/// Galactic → Supergalactic (supergalactic.py: north supergalactic pole l = 47.37°,
/// b = 6.32°).
pub(super) fn galactic_to_supergalactic() -> Mat3 {
    mat_mul(
        &mat_mul(&rotation_deg(Z, 90.0), &rotation_deg(Y, 90.0 - 6.32)),
        &rotation_deg(Z, 47.37),
    )
}

/// B1950 → J2000 matrix of Murray (1989) eq. 28 (fk4_fk5_transforms.py).
const B1950_TO_J2000: Mat3 = [
    [0.9999256794956877, -0.0111814832204662, -0.0048590038153592],
    [0.0111814832391717, 0.9999374848933135, -0.0000271625947142],
    [0.0048590037723143, -0.0000271702937440, 0.9999881946023742],
];

/// Murray (1989) eq. 29 correction for FK4 being a rotating system, ×1e6.
const FK4_CORR: Mat3 = [
    [-0.0026455262, -1.1539918689, 2.1111346190],
    [1.1540628161, -0.0129042997, 0.0236021478],
    [-2.1112979048, -0.0056024448, 0.0102587734],
];

/// astropy `_fk4_B_matrix(obstime)`: FK4NoETerms(B1950) → FK5(J2000) at `obstime`.
pub(super) fn fk4_b_matrix(obstime: Epoch) -> Mat3 {
    let t = (obstime.jyear() - 1950.0) / 100.0;
    let mut m = B1950_TO_J2000;
    for (row, corr) in m.iter_mut().zip(FK4_CORR.iter()) {
        for (x, c) in row.iter_mut().zip(corr.iter()) {
            *x += c * 1.0e-6 * t;
        }
    }
    m
}

/// Newcomb precession between Besselian equinoxes (FK4NoETerms `_precession_matrix`).
pub(super) fn newcomb_precession(old: Epoch, new: Epoch) -> Mat3 {
    let t1 = (old.byear() - 1850.0) / 1000.0;
    let dt = (new.byear() - 1850.0) / 1000.0 - t1;
    let dt_over_3600 = dt / 3600.0;

    let zeta1 = (0.060 * t1 + 139.720) * t1 + 23035.545;
    let z1 = zeta1;
    let zeta2 = -0.27 * t1 + 30.240;
    let zeta = ((17.995 * dt + zeta2) * dt + zeta1) * dt_over_3600;

    let z2 = 109.480 + 0.39 * t1;
    let z = ((18.325 * dt + z2) * dt + z1) * dt_over_3600;

    let theta1 = (-0.37 * t1 - 85.29) * t1 + 20051.12;
    let theta2 = -0.37 * t1 - 42.65;
    let theta = ((-41.8 * dt + theta2) * dt + theta1) * dt_over_3600;

    mat_mul(
        &mat_mul(&rotation_deg(Z, -z), &rotation_deg(Y, theta)),
        &rotation_deg(Z, -zeta),
    )
}

/// FK5 precession between equinoxes (FK5 `_precession_matrix`): IAU 2006 precession without
/// frame bias, through J2000.
pub(super) fn fk5_precession(old: Epoch, new: Epoch) -> Mat3 {
    mat_mul(&bp06_rp(new), &transpose(&bp06_rp(old)))
}

/// The precession matrix `rp` of ERFA `eraBp06`: P×B at the date times the transpose of B.
pub(super) fn bp06_rp(t: Epoch) -> Mat3 {
    let rb = fw2m(pfw06(DJM0, DJM00));
    let rbpw = fw2m(pfw06(t.jd1, t.jd2));
    mat_mul(&rbpw, &transpose(&rb))
}

/// ERFA `eraPfw06`: Fukushima-Williams angles (γ̄, φ̄, ψ̄, εA), radians, IAU 2006.
fn pfw06(date1: f64, date2: f64) -> [f64; 4] {
    let t = ((date1 - DJ00) + date2) / DJC;
    let gamb = (-0.052928
        + (10.556378
            + (0.4932044 + (-0.00031238 + (-0.000002788 + (0.0000000260) * t) * t) * t) * t)
            * t)
        * DAS2R;
    let phib = (84381.412819
        + (-46.811016
            + (0.0511268 + (0.00053289 + (-0.000000440 + (-0.0000000176) * t) * t) * t) * t)
            * t)
        * DAS2R;
    let psib = (-0.041775
        + (5038.481484
            + (1.5584175 + (-0.00018522 + (-0.000026452 + (-0.0000000148) * t) * t) * t) * t)
            * t)
        * DAS2R;
    [gamb, phib, psib, obl06(date1, date2)]
}

/// ERFA `eraObl06`: mean obliquity of the ecliptic, IAU 2006, radians.
fn obl06(date1: f64, date2: f64) -> f64 {
    let t = ((date1 - DJ00) + date2) / DJC;
    (84381.406
        + (-46.836769
            + (-0.0001831 + (0.00200340 + (-0.000000576 + (-0.0000000434) * t) * t) * t) * t)
            * t)
        * DAS2R
}

/// ERFA `eraObl80`: mean obliquity of the ecliptic, IAU 1980, radians.
pub(super) fn obl80(date1: f64, date2: f64) -> f64 {
    let t = ((date1 - DJ00) + date2) / DJC;
    DAS2R * (84381.448 + (-46.8150 + (-0.00059 + (0.001813) * t) * t) * t)
}

/// ERFA `eraFw2m`: Fukushima-Williams angles → rotation matrix.
fn fw2m([gamb, phib, psi, eps]: [f64; 4]) -> Mat3 {
    let mut r = rotation(Z, gamb);
    r = mat_mul(&rotation(X, phib), &r);
    r = mat_mul(&rotation(Z, -psi), &r);
    mat_mul(&rotation(X, -eps), &r)
}

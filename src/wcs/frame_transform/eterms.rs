//! FK4 E-terms of aberration (fk4.py).

use super::epoch::Epoch;
use super::matrices::obl80;

/// The E-terms vector A of an FK4 equinox (astropy `fk4_e_terms`).
pub(super) fn eterms(equinox: Epoch) -> [f64; 3] {
    // Constant of aberration at J2000, degrees.
    let k: f64 = 0.0056932;
    let jd1950 = Epoch::besselian(1950.0).jd();
    let t = (equinox.jd() - jd1950) / 36525.0;
    // Eccentricity of the Earth's orbit.
    let ek = k.to_radians() * ((-0.000000126 * t - 0.00004193) * t + 0.01673011);
    // Mean longitude of perigee of the solar orbit.
    let g = ((((0.012 * t + 1.65) * t + 6190.67) * t + 1015489.951) / 3600.0).to_radians();
    let minus_ek_cos_g = -ek * g.cos();
    let o = obl80(equinox.jd(), 0.0);
    [
        ek * g.sin(),
        minus_ek_cos_g * o.cos(),
        minus_ek_cos_g * o.sin(),
    ]
}

#[inline]
fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn norm(a: &[f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// FK4 → FK4NoETerms: `r' = r − A + (A·r) r`, renormalised (astropy `fk4_to_fk4_no_e`).
#[inline]
pub(super) fn eterms_remove(v: [f64; 3], a: &[f64; 3]) -> [f64; 3] {
    let d_orig = norm(&v);
    let r = v.map(|x| x / d_orig);
    let ar = dot(a, &r);
    let r = [
        r[0] - a[0] + ar * r[0],
        r[1] - a[1] + ar * r[1],
        r[2] - a[2] + ar * r[2],
    ];
    let s = d_orig / norm(&r);
    r.map(|x| x * s)
}

/// FK4NoETerms → FK4: ten fixed-point iterations of `r = (A + r₀) / (1 + A·r)`,
/// renormalised (astropy `fk4_no_e_to_fk4`).
#[inline]
pub(super) fn eterms_add(v: [f64; 3], a: &[f64; 3]) -> [f64; 3] {
    let d_orig = norm(&v);
    let r0 = v.map(|x| x / d_orig);
    let init = [a[0] + r0[0], a[1] + r0[1], a[2] + r0[2]];
    let mut r = r0;
    for _ in 0..10 {
        let d = 1.0 + dot(a, &r);
        r = init.map(|x| x / d);
    }
    let s = d_orig / norm(&r);
    r.map(|x| x * s)
}

//! Zenithal projections (AZP SZP TAN STG SIN ARC ZPN ZEA AIR), prj.c.
//!
//! All of them use `x = R sin φ, y = −R cos φ` (AZP and SZP with a tilt on top) and have the
//! default fiducial point (φ0, θ0) = (0, 90).

use std::f64::consts::PI;

use super::{bad_params, bounds_check, Project, ProjectionParams, R0};
use crate::error::Result;
use crate::wcs::trig::{
    acosd, asind, atan2d, atand, copysign, cosd, deg_to_rad, rad_to_deg, sincosd, sind, D2R, R2D,
};

/// C's `(a > b) ? a : b`, which (unlike `f64::max`) returns `b` when `a` is NaN.
#[inline(always)]
fn c_max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// C's `(a < b) ? a : b`.
#[inline(always)]
fn c_min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// The two candidate latitudes `s − t` and `s + t + 180`, each folded below 90, and the
/// larger of them: the latitude nearest the pole, as AZP and SZP pick it.
#[inline]
fn perspective_theta(s: f64, t: f64) -> f64 {
    let mut a = s - t;
    let mut b = s + t + 180.0;
    if a > 90.0 {
        a -= 360.0;
    }
    if b > 90.0 {
        b -= 360.0;
    }
    c_max(a, b)
}

/// The root of the quadratic `a·s² + 2b·s + c = 0` in s = sin θ nearest the pole, for
/// SZP and the SIN synthesis case, with their 1e-13 tolerance at ±1; `None` without a root
/// in [−1, 1].
#[inline]
fn sin_theta_nearest_pole(a: f64, b: f64, c: f64) -> Option<f64> {
    const TOL: f64 = 1.0e-13;
    let d = b * b - a * c;
    if d < 0.0 {
        return None;
    }
    let d = d.sqrt();
    let sinth1 = (-b + d) / a;
    let sinth2 = (-b - d) / a;
    let mut sinthe = c_max(sinth1, sinth2);
    if sinthe > 1.0 {
        if sinthe - 1.0 < TOL {
            sinthe = 1.0;
        } else {
            sinthe = c_min(sinth1, sinth2);
        }
    }
    if sinthe < -1.0 && sinthe + 1.0 > -TOL {
        sinthe = -1.0;
    }
    if !(-1.0..=1.0).contains(&sinthe) {
        return None;
    }
    Some(sinthe)
}

/// The azimuth `atan2(x, −y)` of a zenithal plane point, 0 at the origin.
#[inline(always)]
fn azimuth(x: f64, y: f64, r: f64) -> f64 {
    if r == 0.0 {
        0.0
    } else {
        atan2d(x, -y)
    }
}

/// AZP: zenithal/azimuthal perspective (prj.c `azpset`/`azpx2s`/`azps2x`).
///
/// `PVi_1` = μ (distance of the point of projection, default 0), `PVi_2` = γ (tilt, default 0).
#[derive(Debug, Clone)]
pub(crate) struct Azp {
    mu: f64,
    /// r0 (μ + 1).
    w0: f64,
    tan_gamma: f64,
    sec_gamma: f64,
    cos_gamma: f64,
    sin_gamma: f64,
    /// asin(−1/μ) for |μ| > 1, −90 otherwise: the overlap limit.
    theta_overlap: f64,
    /// |μ cos γ| < 1: the divergence check applies.
    check_divergence: bool,
}

impl Azp {
    /// `azpset`.
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let mu = params.get_or(1, 0.0);
        let gamma = params.get_or(2, 0.0);
        let w0 = R0 * (mu + 1.0);
        if w0 == 0.0 {
            return Err(bad_params("AZP", "mu = PV2_1 must not be -1"));
        }
        let cos_gamma = cosd(gamma);
        if cos_gamma == 0.0 {
            return Err(bad_params("AZP", "cos(gamma) = cos(PV2_2) is zero"));
        }
        let sin_gamma = sind(gamma);
        let theta_overlap = if mu.abs() > 1.0 {
            asind(-1.0 / mu)
        } else {
            -90.0
        };
        Ok(Azp {
            mu,
            w0,
            tan_gamma: sin_gamma / cos_gamma,
            sec_gamma: 1.0 / cos_gamma,
            cos_gamma,
            sin_gamma,
            theta_overlap,
            check_divergence: (mu * cos_gamma).abs() < 1.0,
        })
    }
}

impl Project for Azp {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `azpx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1.0e-13;
        let yc = y * self.cos_gamma;
        let r = (x * x + yc * yc).sqrt();
        if r == 0.0 {
            return bounds_check(0.0, 90.0, TOL);
        }
        let phi = atan2d(x, -yc);
        let q = self.w0 + y * self.sin_gamma;
        let s = r / q;
        let t = s * self.mu / (s * s + 1.0).sqrt();
        let s = atan2d(1.0, s);
        let t = if t.abs() > 1.0 {
            if t.abs() > 1.0 + TOL {
                return None;
            }
            copysign(90.0, t)
        } else {
            asind(t)
        };
        bounds_check(phi, perspective_theta(s, t), TOL)
    }

    /// `azps2x`.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (sin_phi, cos_phi) = sincosd(phi);
        let (sin_theta, cos_theta) = sincosd(theta);
        let s = self.tan_gamma * cos_phi;
        let t = (self.mu + sin_theta) + cos_theta * s;
        if t == 0.0 {
            return None;
        }
        let r = self.w0 * cos_theta / t;
        if theta < self.theta_overlap {
            return None;
        }
        if self.check_divergence {
            let t = self.mu / (1.0 + s * s).sqrt();
            if t.abs() <= 1.0 && theta < perspective_theta(atand(-s), asind(t)) {
                return None;
            }
        }
        Some((r * sin_phi, -r * cos_phi * self.sec_gamma))
    }
}

/// SZP: slant zenithal perspective (prj.c `szpset`/`szpx2s`/`szps2x`).
///
/// `PVi_1` = μ (default 0), `PVi_2` = φc (default 0), `PVi_3` = θc (default 90).
#[derive(Debug, Clone)]
pub(crate) struct Szp {
    mu: f64,
    /// xp = −μ cos θc sin φc.
    xp: f64,
    /// yp = μ cos θc cos φc.
    yp: f64,
    /// zp = μ sin θc + 1.
    zp: f64,
    /// (zp − 1) zp − 1.
    w7: f64,
    /// asin(1 − zp) if |1 − zp| < 1, −90 otherwise: the divergence limit.
    theta_divergence: f64,
}

impl Szp {
    /// `szpset`.
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let mu = params.get_or(1, 0.0);
        let phi_c = params.get_or(2, 0.0);
        let theta_c = params.get_or(3, 90.0);
        let zp = mu * sind(theta_c) + 1.0;
        if zp == 0.0 {
            return Err(bad_params("SZP", "mu sin(theta_c) + 1 is zero"));
        }
        let theta_divergence = if (zp - 1.0).abs() < 1.0 {
            asind(1.0 - zp)
        } else {
            -90.0
        };
        Ok(Szp {
            mu,
            xp: -mu * cosd(theta_c) * sind(phi_c),
            yp: mu * cosd(theta_c) * cosd(phi_c),
            zp,
            w7: (zp - 1.0) * zp - 1.0,
            theta_divergence,
        })
    }
}

impl Project for Szp {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `szpx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let w0 = 1.0 / R0;
        let xr = x * w0;
        let yr = y * w0;
        let r2 = xr * xr + yr * yr;
        let x1 = (xr - self.xp) / self.zp;
        let y1 = (yr - self.yp) / self.zp;
        let xy = xr * x1 + yr * y1;

        let (theta, z) = if r2 < 1.0e-10 {
            (90.0 - R2D * (r2 / (1.0 + xy)).sqrt(), r2 / 2.0)
        } else {
            let t = x1 * x1 + y1 * y1;
            let a = t + 1.0;
            let b = xy - t;
            let c = r2 - xy - xy + t - 1.0;
            let sinthe = sin_theta_nearest_pole(a, b, c)?;
            (asind(sinthe), 1.0 - sinthe)
        };
        let phi = atan2d(xr - x1 * z, -(yr - y1 * z));
        bounds_check(phi, theta, 1.0e-13)
    }

    /// `szps2x`.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let s = 1.0 - sind(theta);
        let t = self.zp - s;
        if t == 0.0 {
            return None;
        }
        let r = R0 * self.zp * cosd(theta) / t;
        let u = R0 * self.xp * s / t;
        let v = R0 * self.yp * s / t;
        let (sin_phi, cos_phi) = sincosd(phi);

        if theta < self.theta_divergence {
            return None;
        }
        if self.mu.abs() > 1.0 {
            let s = self.xp * sin_phi - self.yp * cos_phi;
            let t = 1.0 / (self.w7 + s * s).sqrt();
            if t.abs() <= 1.0 && theta < perspective_theta(atan2d(s, self.zp - 1.0), asind(t)) {
                return None;
            }
        }
        Some((r * sin_phi - u, -r * cos_phi - v))
    }
}

/// TAN: gnomonic (prj.c `tanset`/`tanx2s`/`tans2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Tan;

impl Tan {
    /// `tanset`.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Tan)
    }
}

impl Project for Tan {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `tanx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let r = (x * x + y * y).sqrt();
        let phi = if r == 0.0 { 0.0 } else { atan2d(x, -y) };
        bounds_check(phi, atan2d(R0, r), 1e-13)
    }

    /// `tans2x`.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (sin_theta, cos_theta) = sincosd(theta);
        // theta = 0 has no image; the far hemisphere (theta < 0) is flagged (bounds & 1).
        if sin_theta <= 0.0 {
            return None;
        }
        let r = R0 * cos_theta / sin_theta;
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

/// STG: stereographic (prj.c `stgset`/`stgx2s`/`stgs2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Stg;

impl Stg {
    /// 2 r0, as `stgset` computes it for the default r0.
    const TWO_R0: f64 = 360.0 / PI;
    /// 1 / (2 r0).
    const INV_TWO_R0: f64 = PI / 360.0;

    /// `stgset`.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Stg)
    }
}

impl Project for Stg {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `stgx2s`: every plane point is valid (WCSLIB does no bounds check here).
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let r = (x * x + y * y).sqrt();
        let phi = azimuth(x, y, r);
        Some((phi, 90.0 - 2.0 * atand(r * Self::INV_TWO_R0)))
    }

    /// `stgs2x`: only θ = −90 has no image.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let s = 1.0 + sind(theta);
        if s == 0.0 {
            return None;
        }
        let r = Self::TWO_R0 * cosd(theta) / s;
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

/// SIN: orthographic/synthesis (prj.c `sinset`/`sinx2s`/`sins2x`).
///
/// `PVi_1` = ξ, `PVi_2` = η (default 0): with both zero the plain orthographic projection,
/// otherwise the "synthesis" form (NCP is SIN with ξ = 0, η = cot δ0).
#[derive(Debug, Clone)]
pub(crate) struct Sin {
    xi: f64,
    eta: f64,
    /// ξ² + η².
    w1: f64,
    /// ξ² + η² + 1.
    w2: f64,
    /// ξ² + η² − 1.
    w3: f64,
}

impl Sin {
    /// `sinset`.
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let xi = params.get_or(1, 0.0);
        let eta = params.get_or(2, 0.0);
        let w1 = xi * xi + eta * eta;
        Ok(Sin {
            xi,
            eta,
            w1,
            w2: w1 + 1.0,
            w3: w1 - 1.0,
        })
    }
}

impl Project for Sin {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `sinx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let w0 = 1.0 / R0;
        let x0 = x * w0;
        let y0 = y * w0;
        let r2 = x0 * x0 + y0 * y0;

        if self.w1 == 0.0 {
            let phi = if r2 != 0.0 { atan2d(x0, -y0) } else { 0.0 };
            let theta = if r2 < 0.5 {
                acosd(r2.sqrt())
            } else if r2 <= 1.0 {
                asind((1.0 - r2).sqrt())
            } else {
                return None;
            };
            return bounds_check(phi, theta, 1.0e-13);
        }

        let xy = x0 * self.xi + y0 * self.eta;
        let (theta, z) = if r2 < 1.0e-10 {
            (90.0 - R2D * (r2 / (1.0 + xy)).sqrt(), r2 / 2.0)
        } else {
            let b = xy - self.w1;
            let c = r2 - xy - xy + self.w3;
            let sinthe = sin_theta_nearest_pole(self.w2, b, c)?;
            (asind(sinthe), 1.0 - sinthe)
        };
        let x1 = -y0 + self.eta * z;
        let y1 = x0 - self.xi * z;
        let phi = if x1 == 0.0 && y1 == 0.0 {
            0.0
        } else {
            atan2d(y1, x1)
        };
        bounds_check(phi, theta, 1.0e-13)
    }

    /// `sins2x`, with its small-angle form within 1e-5 rad of either pole.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        // C: `(90.0 - fabs(*thetap))*D2R`, i.e. `(...)*PI/180.0`.
        let t = deg_to_rad(90.0 - theta.abs());
        let (z, cos_theta) = if t < 1.0e-5 {
            let z = if theta > 0.0 {
                t * t / 2.0
            } else {
                2.0 - t * t / 2.0
            };
            (z, t)
        } else {
            (1.0 - sind(theta), cosd(theta))
        };
        let r = R0 * cos_theta;
        let (sin_phi, cos_phi) = sincosd(phi);

        if self.w1 == 0.0 {
            if theta < 0.0 {
                return None;
            }
            return Some((r * sin_phi, -r * cos_phi));
        }

        let z = z * R0;
        let z1 = self.xi * z;
        let z2 = self.eta * z;
        if theta < -atand(self.xi * sin_phi - self.eta * cos_phi) {
            return None;
        }
        Some((r * sin_phi + z1, -r * cos_phi + z2))
    }
}

/// ARC: zenithal/azimuthal equidistant (prj.c `arcset`/`arcx2s`/`arcs2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Arc;

impl Arc {
    /// `arcset` (for the default r0 both of its constants are 1).
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Arc)
    }
}

impl Project for Arc {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `arcx2s`: θ = 90 − R, invalid beyond R = 180 (the bounds check).
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let r = (x * x + y * y).sqrt();
        if r == 0.0 {
            return bounds_check(0.0, 90.0, 1.0e-13);
        }
        bounds_check(atan2d(x, -y), 90.0 - r, 1.0e-13)
    }

    /// `arcs2x`: R = 90 − θ, always valid.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let r = 90.0 - theta;
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

/// ZPN: zenithal/azimuthal polynomial (prj.c `zpnset`/`zpnx2s`/`zpns2x`).
///
/// R = r0 Σ `PVi_m` ζᵐ, ζ = (90 − θ) in radians, m = 0..29 (absent coefficients are 0).
#[derive(Debug, Clone)]
pub(crate) struct Zpn {
    /// The coefficients `PVi_0` .. `PVi_n`.
    coeffs: Vec<f64>,
    /// ζ of the first point of inflection (π when there is none), radians.
    zd_max: f64,
    /// R/r0 there (only used for degree ≥ 3).
    r_max: f64,
}

impl Zpn {
    /// `zpnset`: the degree and, for degree ≥ 2, the first point of inflection.
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        const TOL: f64 = 1.0e-13;
        let pv: Vec<f64> = (0..super::PV_COUNT)
            .map(|m| params.get_or(m, 0.0))
            .collect();
        let Some(n) = pv.iter().rposition(|&c| c != 0.0) else {
            return Err(bad_params("ZPN", "all coefficients PV2_m are zero"));
        };
        let coeffs = pv[..=n].to_vec();
        let derivative = |zd: f64| {
            coeffs
                .iter()
                .enumerate()
                .skip(1)
                .rev()
                .fold(0.0, |d, (m, &c)| d * zd + m as f64 * c)
        };

        if n < 2 {
            return Ok(Zpn {
                coeffs,
                zd_max: PI,
                r_max: 0.0,
            });
        }

        let mut zd1 = 0.0;
        let mut d1 = coeffs[1];
        if d1 <= 0.0 {
            return Err(bad_params(
                "ZPN",
                "PV2_1 must be positive for a polynomial of degree 2 or more",
            ));
        }
        // Step out one degree at a time to where the derivative first goes negative.
        let mut bracket = None;
        for j in 0..180 {
            // C: `j*D2R`, i.e. `j*PI/180.0`.
            let zd2 = deg_to_rad(f64::from(j));
            let d2 = derivative(zd2);
            if d2 <= 0.0 {
                bracket = Some((zd2, d2));
                break;
            }
            zd1 = zd2;
            d1 = d2;
        }

        let zd = match bracket {
            None => PI,
            Some((mut zd2, mut d2)) => {
                // Regula falsi for the zero of the derivative.
                let mut zd = 0.0;
                for _ in 1..=10 {
                    zd = zd1 - d1 * (zd2 - zd1) / (d2 - d1);
                    let d = derivative(zd);
                    if d.abs() < TOL {
                        break;
                    }
                    if d < 0.0 {
                        zd2 = zd;
                        d2 = d;
                    } else {
                        zd1 = zd;
                        d1 = d;
                    }
                }
                zd
            }
        };

        let r_max = Self::poly(&coeffs, zd);
        Ok(Zpn {
            coeffs,
            zd_max: zd,
            r_max,
        })
    }

    /// Σ c_m ζᵐ by Horner's rule from the highest coefficient.
    #[inline]
    fn poly(coeffs: &[f64], zd: f64) -> f64 {
        coeffs.iter().rev().fold(0.0, |r, &c| r * zd + c)
    }
}

impl Project for Zpn {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `zpnx2s`: linear and quadratic polynomials in closed form, higher degrees by weighted
    /// bisection on [0, ζ_max].
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1.0e-13;
        let c = &self.coeffs;
        let r = (x * x + y * y).sqrt() / R0;
        let phi = azimuth(x, y, r);

        let zd = match c.len() - 1 {
            // A constant has no inverse: WCSLIB fails the whole call.
            0 => return None,
            1 => (r - c[0]) / c[1],
            2 => {
                let (a, b, c0) = (c[2], c[1], c[0] - r);
                let d = b * b - 4.0 * a * c0;
                if d < 0.0 {
                    return None;
                }
                let d = d.sqrt();
                let zd1 = (-b + d) / (2.0 * a);
                let zd2 = (-b - d) / (2.0 * a);
                let mut zd = c_min(zd1, zd2);
                if zd < -TOL {
                    zd = c_max(zd1, zd2);
                }
                if zd < 0.0 {
                    if zd < -TOL {
                        return None;
                    }
                    0.0
                } else if zd > PI {
                    if zd > PI + TOL {
                        return None;
                    }
                    PI
                } else {
                    zd
                }
            }
            _ => {
                let (mut zd1, mut r1) = (0.0, c[0]);
                let (mut zd2, mut r2) = (self.zd_max, self.r_max);
                if r < r1 {
                    if r < r1 - TOL {
                        return None;
                    }
                    zd1
                } else if r > r2 {
                    if r > r2 + TOL {
                        return None;
                    }
                    zd2
                } else {
                    let mut zd = zd2;
                    for _ in 0..100 {
                        let lambda = ((r2 - r) / (r2 - r1)).clamp(0.1, 0.9);
                        zd = zd2 - lambda * (zd2 - zd1);
                        let rt = Self::poly(c, zd);
                        if rt < r {
                            if r - rt < TOL {
                                break;
                            }
                            r1 = rt;
                            zd1 = zd;
                        } else {
                            if rt - r < TOL {
                                break;
                            }
                            r2 = rt;
                            zd2 = zd;
                        }
                        if (zd2 - zd1).abs() < TOL {
                            break;
                        }
                    }
                    zd
                }
            }
        };
        // C: `90.0 - zd*R2D`, i.e. `90.0 - zd*180.0/PI`.
        bounds_check(phi, 90.0 - rad_to_deg(zd), TOL)
    }

    /// `zpns2x`: beyond the first point of inflection the point is flagged (bounds & 1).
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        // C: `(90.0 - *thetap)*D2R`, i.e. `(...)*PI/180.0`.
        let s = deg_to_rad(90.0 - theta);
        let r = Self::poly(&self.coeffs, s) * R0;
        if s > self.zd_max {
            return None;
        }
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

/// ZEA: zenithal/azimuthal equal area (prj.c `zeaset`/`zeax2s`/`zeas2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Zea;

impl Zea {
    /// 2 r0, as `zeaset` computes it for the default r0.
    const TWO_R0: f64 = 360.0 / PI;
    /// 1 / (2 r0).
    const INV_TWO_R0: f64 = PI / 360.0;

    /// `zeaset`.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Zea)
    }
}

impl Project for Zea {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `zeax2s`: invalid beyond R = 2 r0, except within 1e-12 of it (the antipode).
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let r = (x * x + y * y).sqrt();
        let phi = azimuth(x, y, r);
        let s = r * Self::INV_TWO_R0;
        let theta = if s.abs() > 1.0 {
            if (r - Self::TWO_R0).abs() < 1.0e-12 {
                -90.0
            } else {
                return None;
            }
        } else {
            90.0 - 2.0 * asind(s)
        };
        bounds_check(phi, theta, 1.0e-13)
    }

    /// `zeas2x`: always valid.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let r = Self::TWO_R0 * sind((90.0 - theta) / 2.0);
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

/// AIR: Airy's zenithal (prj.c `airset`/`airx2s`/`airs2x`).
///
/// `PVi_1` = θb, the latitude within which the error is minimised (default 90).
#[derive(Debug, Clone)]
pub(crate) struct Air {
    /// ln(cos ξb)/tan²ξb, ξb = (90 − θb)/2 (−½ for θb = 90).
    w1: f64,
    /// 2 r0 (½ − w1): the small-angle slope of R(ξ).
    w3: f64,
    /// (½ − w1) · 1e-4: below this R/(2 r0) the small-angle inverse is used.
    w5: f64,
    /// (180/π)/(½ − w1).
    w6: f64,
}

impl Air {
    /// 2 r0.
    const W0: f64 = 2.0 * R0;
    /// ξ (radians) below which the small-angle forms are used.
    const SMALL: f64 = 1.0e-4;

    /// `airset`.
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let theta_b = params.get_or(1, 90.0);
        let (w1, w2) = if theta_b == 90.0 {
            (-0.5, 1.0)
        } else if theta_b > -90.0 {
            let cos_xi = cosd((90.0 - theta_b) / 2.0);
            let w1 = cos_xi.ln() * (cos_xi * cos_xi) / (1.0 - cos_xi * cos_xi);
            (w1, 0.5 - w1)
        } else {
            return Err(bad_params(
                "AIR",
                "theta_b = PV2_1 must be greater than -90",
            ));
        };
        Ok(Air {
            w1,
            w3: Self::W0 * w2,
            w5: w2 * Self::SMALL,
            w6: R2D / w2,
        })
    }

    /// R/(2 r0) as a function of cos ξ.
    #[inline(always)]
    fn radius(&self, cos_xi: f64) -> f64 {
        let tan_xi = (1.0 - cos_xi * cos_xi).sqrt() / cos_xi;
        -(cos_xi.ln() / tan_xi + self.w1 * tan_xi)
    }
}

impl Project for Air {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// `airx2s`: bracket cos ξ by halving (30 steps), then weighted bisection (100 steps,
    /// tolerance 1e-12 in R/(2 r0)).
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1.0e-12;
        let r = (x * x + y * y).sqrt() / Self::W0;
        let phi = azimuth(x, y, r);

        let xi = if r == 0.0 {
            0.0
        } else if r < self.w5 {
            r * self.w6
        } else {
            let (mut x1, mut r1) = (1.0, 0.0);
            let mut bracket = None;
            for _ in 0..30 {
                let x2 = x1 / 2.0;
                let r2 = self.radius(x2);
                if r2 >= r {
                    bracket = Some((x2, r2));
                    break;
                }
                x1 = x2;
                r1 = r2;
            }
            let (mut x2, mut r2) = bracket?;

            let mut solution = None;
            for _ in 0..100 {
                let lambda = ((r2 - r) / (r2 - r1)).clamp(0.1, 0.9);
                let cos_xi = x2 - lambda * (x2 - x1);
                let rt = self.radius(cos_xi);
                if rt < r {
                    if r - rt < TOL {
                        solution = Some(cos_xi);
                        break;
                    }
                    r1 = rt;
                    x1 = cos_xi;
                } else {
                    if rt - r < TOL {
                        solution = Some(cos_xi);
                        break;
                    }
                    r2 = rt;
                    x2 = cos_xi;
                }
            }
            acosd(solution?)
        };
        bounds_check(phi, 90.0 - 2.0 * xi, 1.0e-13)
    }

    /// `airs2x`: θ = −90 and below have no image.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let r = if theta == 90.0 {
            0.0
        } else if theta > -90.0 {
            let xi = D2R * (90.0 - theta) / 2.0;
            if xi < Self::SMALL {
                xi * self.w3
            } else {
                Self::W0 * self.radius(cosd((90.0 - theta) / 2.0))
            }
        } else {
            return None;
        };
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pv: &[(usize, f64)]) -> ProjectionParams {
        let mut p = ProjectionParams::default();
        for &(m, v) in pv {
            p.pv[m] = Some(v);
        }
        p
    }

    fn round_trip(p: &dyn Project, phi: f64, theta: f64) {
        let (x, y) = p.s2x(phi, theta).expect("s2x");
        let (ph, th) = p.x2s(x, y).expect("x2s");
        assert!((th - theta).abs() < 1e-9, "theta {th} vs {theta}");
        assert!((ph - phi).abs() < 1e-9, "phi {ph} vs {phi}");
    }

    #[test]
    fn parameter_validation() {
        assert!(Azp::new(&params(&[(1, -1.0)])).is_err());
        assert!(Szp::new(&params(&[(1, -1.0)])).is_err());
        assert!(Zpn::new(&params(&[])).is_err());
        // Degree >= 2 needs a positive linear term.
        assert!(Zpn::new(&params(&[(1, 0.0), (3, 1.0)])).is_err());
        assert!(Zpn::new(&params(&[(1, -1.0), (2, 1.0)])).is_err());
        assert!(Air::new(&params(&[(1, -90.0)])).is_err());
        assert!(Air::new(&params(&[(1, 45.0)])).is_ok());
    }

    #[test]
    fn round_trips() {
        let all: Vec<Box<dyn Project>> = vec![
            Box::new(Azp::new(&params(&[(1, 2.0), (2, 30.0)])).unwrap()),
            Box::new(Szp::new(&params(&[(1, 2.0), (2, 180.0), (3, 60.0)])).unwrap()),
            Box::new(Stg::new(&params(&[])).unwrap()),
            Box::new(Sin::new(&params(&[])).unwrap()),
            Box::new(Sin::new(&params(&[(1, 0.1), (2, -0.2)])).unwrap()),
            Box::new(Arc::new(&params(&[])).unwrap()),
            Box::new(Zpn::new(&params(&[(1, 1.0), (3, -0.05)])).unwrap()),
            Box::new(Zpn::new(&params(&[(0, 0.01), (1, 0.9), (2, 0.05)])).unwrap()),
            Box::new(Zea::new(&params(&[])).unwrap()),
            Box::new(Air::new(&params(&[(1, 45.0)])).unwrap()),
        ];
        for p in &all {
            for &(phi, theta) in &[(30.0, 80.0), (-120.0, 60.0), (170.0, 45.0), (0.0, 89.99999)] {
                round_trip(p.as_ref(), phi, theta);
            }
        }
    }

    #[test]
    fn far_side_is_flagged() {
        // Orthographic: the far hemisphere has no image.
        let sin = Sin::new(&params(&[])).unwrap();
        assert!(sin.s2x(0.0, -1.0).is_none());
        assert!(sin.x2s(60.0, 0.0).is_none());
        // STG: only the antipode.
        let stg = Stg::new(&params(&[])).unwrap();
        assert!(stg.s2x(0.0, -90.0).is_none());
        assert!(stg.s2x(0.0, -89.0).is_some());
        // ZEA: the antipode is the circle R = 2 r0, within 1e-12.
        let zea = Zea::new(&params(&[])).unwrap();
        assert_eq!(zea.x2s(0.0, -Zea::TWO_R0).map(|p| p.1), Some(-90.0));
        assert!(zea.x2s(0.0, -Zea::TWO_R0 - 1e-9).is_none());
        // ZPN beyond the point of inflection of R = ζ − 0.05 ζ³ (ζ = √(20/3) rad).
        let zpn = Zpn::new(&params(&[(1, 1.0), (3, -0.05)])).unwrap();
        assert!((zpn.zd_max - (20.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!(zpn.s2x(0.0, 90.0 - 150.0).is_none());
        assert!(zpn.x2s(0.0, -zpn.r_max * R0 - 1e-6).is_none());
        // AIR: the antipode.
        let air = Air::new(&params(&[])).unwrap();
        assert!(air.s2x(0.0, -90.0).is_none());
    }

    #[test]
    fn zpn_constant_has_no_inverse() {
        let zpn = Zpn::new(&params(&[(0, 0.5)])).unwrap();
        assert!(zpn.x2s(1.0, 1.0).is_none());
        assert!(zpn.s2x(0.0, 10.0).is_some());
    }
}

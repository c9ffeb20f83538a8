//! Polyconic and pseudoconic projections (BON PCO), prj.c.

use super::{bad_params, bounds_check, Project, ProjectionParams, R0};
use crate::error::Result;
use crate::wcs::trig::{atan2d, copysign, cosd, deg_to_rad, sincosd, sind, tand, D2R};
use std::f64::consts::PI;

/// BON: Bonne's equal area (prj.c `bonset`/`bonx2s`/`bons2x`).
///
/// `PVi_1` (θ1) is required. θ1 = 0 is Sanson-Flamsteed: WCSLIB's `bonset` then hands over
/// to `sflset`/`sflx2s`/`sfls2x`, and so does this.
#[derive(Debug, Clone)]
pub(crate) enum Bon {
    /// θ1 ≠ 0.
    Bonne {
        /// θ1 (`PVi_1`).
        theta1: f64,
        /// Y0 = r0 cot θ1 + θ1 (degrees, r0 = 180/π).
        y0: f64,
    },
    /// θ1 = 0: the Sanson-Flamsteed projection.
    Sfl,
}

impl Bon {
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let theta1 = params
            .get(1)
            .ok_or_else(|| bad_params("BON", "PVi_1 (theta_1) is required"))?;
        if theta1 == 0.0 {
            return Ok(Bon::Sfl);
        }
        Ok(Bon::Bonne {
            theta1,
            y0: R0 * cosd(theta1) / sind(theta1) + theta1,
        })
    }
}

/// SFL's inverse as `sflx2s` computes it (r0 = 180/π, so its `w[0] = w[1] = 1`).
#[inline]
fn sfl_x2s(x: f64, y: f64) -> Option<(f64, f64)> {
    let s = (y / R0).cos();
    if s == 0.0 {
        return None;
    }
    bounds_check(x * (1.0 / s), y, 1e-12)
}

/// SFL's forward projection as `sfls2x` computes it.
#[inline]
fn sfl_s2x(phi: f64, theta: f64) -> (f64, f64) {
    (cosd(theta) * phi, theta)
}

impl Project for Bon {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let Bon::Bonne { theta1, y0 } = *self else {
            return sfl_x2s(x, y);
        };
        let dy = y0 - y;
        let r = (x * x + dy * dy).sqrt();
        let r = if theta1 < 0.0 { -r } else { r };
        let alpha = if r == 0.0 { 0.0 } else { atan2d(x / r, dy / r) };
        let theta = y0 - r;
        let cos_theta = cosd(theta);
        let phi = if cos_theta == 0.0 {
            0.0
        } else {
            alpha * (r / R0) / cos_theta
        };
        bounds_check(phi, theta, 1e-11)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let Bon::Bonne { y0, .. } = *self else {
            return Some(sfl_s2x(phi, theta));
        };
        let r = y0 - theta;
        let alpha = cosd(theta) / r * (R0 * phi);
        let (sin_alpha, cos_alpha) = sincosd(alpha);
        Some((r * sin_alpha, -r * cos_alpha + y0))
    }
}

/// PCO: polyconic (prj.c `pcoset`/`pcox2s`/`pcos2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Pco;

impl Pco {
    /// 2 r0.
    const TWO_R0: f64 = 360.0 / PI;
    /// (π/180)/(2 r0).
    const W3: f64 = D2R / Self::TWO_R0;

    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Pco)
    }
}

impl Project for Pco {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1e-12;
        let w = y.abs();
        if w < TOL {
            return bounds_check(x, 0.0, TOL);
        }
        if (w - 90.0).abs() < TOL {
            return bounds_check(0.0, copysign(90.0, y), TOL);
        }

        let (theta, y_minus_theta, tan_theta) = if w < 1e-4 {
            // Near the equator, where cot θ blows up.
            let theta = y / (1.0 + Self::W3 * x * x);
            (theta, y - theta, tand(theta))
        } else {
            // Weighted bisection of [0, y] on f(θ) = x² + (y − θ)(y − θ − 2 r0 cot θ).
            let xx = x * x;
            let (mut pos, mut neg) = (y, 0.0);
            // fneg = -fpos makes the first step a plain halving. On the central meridian
            // (x = 0) that first step is 0/0: WCSLIB then returns NaN with stat 0, and so
            // does this (astropy shows NaN there).
            let (mut f_pos, mut f_neg) = (xx, -xx);
            let mut step = (0.0, 0.0, 0.0);
            for _ in 0..64 {
                let lambda = (f_pos / (f_pos - f_neg)).clamp(0.1, 0.9);
                let theta = pos - lambda * (pos - neg);
                let y_minus_theta = y - theta;
                let tan_theta = tand(theta);
                step = (theta, y_minus_theta, tan_theta);
                let f = xx + y_minus_theta * (y_minus_theta - Self::TWO_R0 / tan_theta);
                if f.abs() < TOL || (pos - neg).abs() < TOL {
                    break;
                }
                if f > 0.0 {
                    pos = theta;
                    f_pos = f;
                } else {
                    neg = theta;
                    f_neg = f;
                }
            }
            step
        };

        let x1 = R0 - y_minus_theta * tan_theta;
        let y1 = x * tan_theta;
        let phi = if x1 == 0.0 && y1 == 0.0 {
            0.0
        } else {
            atan2d(y1, x1) / sind(theta)
        };
        bounds_check(phi, theta, TOL)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        if theta == 0.0 {
            // C: `*yp = -prj->y0`, which is −0.
            return Some((phi, -0.0));
        }
        if theta.abs() < 1e-4 {
            // Near the equator, where cot θ blows up.
            let x = phi * cosd(theta);
            return Some((x, (1.0 + Self::W3 * x * x) * theta));
        }
        let (sin_theta, cos_theta) = sincosd(theta);
        let (sin_psi, cos_psi) = sincosd(phi * sin_theta);
        let cot_theta = cos_theta / sin_theta;
        Some((
            R0 * cot_theta * sin_psi,
            // C: `therad = (*thetap)*D2R`, i.e. `θ*PI/180.0`.
            R0 * (cot_theta * (1.0 - cos_psi) + deg_to_rad(theta)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bon(theta1: Option<f64>) -> Result<Bon> {
        let mut p = ProjectionParams::default();
        p.pv[1] = theta1;
        Bon::new(&p)
    }

    #[test]
    fn bon_needs_theta1() {
        assert!(bon(None).is_err());
    }

    #[test]
    fn bon_theta1_zero_is_sfl() {
        let b = bon(Some(0.0)).unwrap();
        assert!(matches!(b, Bon::Sfl));
        assert_eq!(b.default_fiducial(), (0.0, 0.0));
        let (x, y) = b.s2x(60.0, 60.0).unwrap();
        assert!((x - 30.0).abs() < 1e-12 && y == 60.0);
        let (phi, theta) = b.x2s(x, y).unwrap();
        assert!((phi - 60.0).abs() < 1e-12 && theta == 60.0);
        // Beyond phi = 180 on the equator.
        assert!(b.x2s(181.0, 0.0).is_none());
    }

    #[test]
    fn bon_round_trip() {
        for theta1 in [45.0, -30.0] {
            let b = bon(Some(theta1)).unwrap();
            assert_eq!(b.s2x(0.0, 0.0).unwrap().0, 0.0);
            assert!(b.s2x(0.0, 0.0).unwrap().1.abs() < 1e-12);
            for (phi, theta) in [(0.0, theta1), (100.0, 20.0), (-170.0, -60.0), (30.0, 80.0)] {
                let (x, y) = b.s2x(phi, theta).unwrap();
                let (p, t) = b.x2s(x, y).unwrap();
                assert!(
                    (p - phi).abs() < 1e-10 && (t - theta).abs() < 1e-10,
                    "{p} {t}"
                );
            }
            // Outside the heart-shaped boundary.
            assert!(b.x2s(250.0, 0.0).is_none());
        }
    }

    #[test]
    fn pco_round_trip_all_branches() {
        let p = Pco::new(&ProjectionParams::default()).unwrap();
        for (phi, theta) in [
            (10.0, 0.0),
            (120.0, 5e-5),
            (-150.0, -3e-5),
            (170.0, 1e-3),
            (45.0, 30.0),
            (-179.0, -85.0),
        ] {
            let (x, y) = p.s2x(phi, theta).unwrap();
            let (ph, th) = p.x2s(x, y).unwrap();
            assert!(
                (ph - phi).abs() < 1e-9 && (th - theta).abs() < 1e-9,
                "{ph} {th}"
            );
        }
        assert_eq!(p.x2s(0.0, 90.0), Some((0.0, 90.0)));
        assert_eq!(p.x2s(3.0, -90.0), Some((0.0, -90.0)));
        assert!(p.x2s(200.0, 0.0).is_none());
    }

    #[test]
    fn pco_central_meridian_is_nan_as_in_wcslib() {
        // pcox2s: lambda = fpos/(fpos - fneg) = 0/0 for x = 0 and 1e-4 <= |y| < 90.
        let p = Pco::new(&ProjectionParams::default()).unwrap();
        let (phi, theta) = p.x2s(0.0, 30.0).unwrap();
        assert!(phi.is_nan() && theta.is_nan());
        // The special forms near the equator and at the poles are fine.
        assert_eq!(p.x2s(0.0, 5e-5).unwrap().0, 0.0);
        assert_eq!(p.x2s(0.0, 90.0), Some((0.0, 90.0)));
    }
}

//! Pseudo-cylindrical and conventional projections (SFL PAR MOL AIT), prj.c.
//!
//! None takes parameters and all have their default fiducial point at (0, 0).

use std::f64::consts::{PI, SQRT_2};

use super::{bounds_check, Project, ProjectionParams, R0};
use crate::error::Result;
use crate::wcs::trig::{asind, atan2d, copysign, cosd, sincosd, sind};

/// SFL: Sanson-Flamsteed, the global sinusoid (prj.c `sflset`/`sflx2s`/`sfls2x`).
#[derive(Debug, Clone)]
pub(crate) struct Sfl;

impl Sfl {
    /// `sflset`: nothing to precompute.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Sfl)
    }
}

impl Project for Sfl {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `sflx2s`: the poles (cos θ = 0) are invalid; `prjbchk` with tolerance 1e-12.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let s = (y / R0).cos();
        if s == 0.0 {
            return None;
        }
        bounds_check(x * (1.0 / s), y, 1e-12)
    }

    /// `sfls2x`: defined everywhere.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        Some((cosd(theta) * phi, theta))
    }
}

/// PAR: parabolic (prj.c `parset`/`parx2s`/`pars2x`).
#[derive(Debug, Clone)]
pub(crate) struct Par;

/// π r0 for r0 = 180/π (`w[2]` of `parset`).
const PAR_PI_R0: f64 = 180.0;

impl Par {
    /// `parset`: nothing to precompute.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Par)
    }
}

impl Project for Par {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `parx2s`: |y| > π r0 is invalid; at the poles (1 − 4r² = 0) only x = 0 (within 1e-13)
    /// is valid; `prjbchk` with tolerance 1e-12.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let r = (1.0 / PAR_PI_R0) * y;
        if !(-1.0..=1.0).contains(&r) {
            return None;
        }
        let s = 1.0 - 4.0 * r * r;
        let phi = if s == 0.0 {
            if x.abs() - 1e-13 >= 0.0 {
                return None;
            }
            x * s
        } else {
            x * (1.0 / s)
        };
        // C: `3.0*asind(r)` expands to `3.0*asin(r)*180.0/PI`, evaluated left to right.
        bounds_check(phi, 3.0 * r.asin() * 180.0 / PI, 1e-12)
    }

    /// `pars2x`: defined everywhere.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let s = sind(theta / 3.0);
        Some(((1.0 - 4.0 * s * s) * phi, PAR_PI_R0 * s))
    }
}

/// MOL: Mollweide (prj.c `molset`/`molx2s`/`mols2x`).
#[derive(Debug, Clone)]
pub(crate) struct Mol {
    /// √2 r0 (`w[0]`).
    sqrt2_r0: f64,
    /// √2 r0/90 (`w[1]`).
    x_scale: f64,
    /// 1/(√2 r0) (`w[2]`).
    inv_sqrt2_r0: f64,
    /// 90/r0 (`w[3]`).
    phi_scale: f64,
    /// 2/π (`w[4]`).
    two_over_pi: f64,
}

impl Mol {
    /// `molset`: the constants of the ellipse.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        let sqrt2_r0 = SQRT_2 * R0;
        Ok(Mol {
            sqrt2_r0,
            x_scale: sqrt2_r0 / 90.0,
            inv_sqrt2_r0: 1.0 / sqrt2_r0,
            phi_scale: 90.0 / R0,
            two_over_pi: 2.0 / PI,
        })
    }
}

impl Project for Mol {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `molx2s`: outside the ellipse (beyond tolerance 1e-12) is invalid, at its top and
    /// bottom only x = 0 (within 1e-12) is valid; `prjbchk` with tolerance 1e-11.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1e-12;
        let y0 = y / R0;
        let r = 2.0 - y0 * y0;
        let (r, s) = if r <= TOL {
            if r < -TOL {
                return None;
            }
            // On the pole, valid only on the central meridian.
            if x.abs() - TOL >= 0.0 {
                return None;
            }
            (0.0, 0.0)
        } else {
            let r = r.sqrt();
            (r, 1.0 / r)
        };

        let z = y * self.inv_sqrt2_r0;
        let z = if z.abs() > 1.0 {
            if z.abs() > 1.0 + TOL {
                return None;
            }
            copysign(1.0, z) + y0 * r / PI
        } else {
            z.asin() * self.two_over_pi + y0 * r / PI
        };
        let z = if z.abs() > 1.0 {
            if z.abs() > 1.0 + TOL {
                return None;
            }
            copysign(1.0, z)
        } else {
            z
        };

        bounds_check(self.phi_scale * x * s, asind(z), 1e-11)
    }

    /// `mols2x`: solves v + sin v = π sin θ by bisection (tolerance 1e-13, at most 100 steps).
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (xi, eta) = if theta.abs() == 90.0 {
            (0.0, copysign(self.sqrt2_r0, theta))
        } else if theta == 0.0 {
            (1.0, 0.0)
        } else {
            let gamma = mollweide_auxiliary(PI * sind(theta)) / 2.0;
            (gamma.cos(), self.sqrt2_r0 * gamma.sin())
        };
        Some((xi * (self.x_scale * phi), eta))
    }
}

/// The root v of v + sin v = u in [−π, π], by `mols2x`'s bisection.
#[inline]
fn mollweide_auxiliary(u: f64) -> f64 {
    const TOL: f64 = 1e-13;
    let (mut v0, mut v1) = (-PI, PI);
    let mut v = u;
    for _ in 0..100 {
        let resid = (v - u) + v.sin();
        if resid < 0.0 {
            if resid > -TOL {
                break;
            }
            v0 = v;
        } else {
            if resid < TOL {
                break;
            }
            v1 = v;
        }
        v = (v0 + v1) / 2.0;
    }
    v
}

/// AIT: Hammer-Aitoff (prj.c `aitset`/`aitx2s`/`aits2x`).
#[derive(Debug, Clone)]
pub(crate) struct Ait {
    /// 2 r0² (`w[0]`).
    two_r0_sq: f64,
    /// 1/(2 r0)² (`w[1]`).
    inv_2r0_sq: f64,
    /// 1/(4 r0)² (`w[2]`).
    inv_4r0_sq: f64,
    /// 1/(2 r0) (`w[3]`).
    inv_2r0: f64,
}

impl Ait {
    /// `aitset`: the constants of the ellipse.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        let two_r0_sq = 2.0 * R0 * R0;
        let inv_2r0_sq = 1.0 / (2.0 * two_r0_sq);
        Ok(Ait {
            two_r0_sq,
            inv_2r0_sq,
            inv_4r0_sq: inv_2r0_sq / 4.0,
            inv_2r0: 1.0 / (2.0 * R0),
        })
    }
}

impl Project for Ait {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `aitx2s`: outside the ellipse (z² < 1/2 beyond tolerance 1e-13) is invalid.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1e-13;
        let s = (1.0 - x * x * self.inv_4r0_sq) - y * y * self.inv_2r0_sq;
        let s = if s < 0.5 {
            if s < 0.5 - TOL {
                return None;
            }
            0.5
        } else {
            s
        };
        let z = s.sqrt();
        let xp = 2.0 * z * z - 1.0;
        let yp = z * (x * self.inv_2r0);
        let phi = if xp == 0.0 && yp == 0.0 {
            0.0
        } else {
            2.0 * atan2d(yp, xp)
        };
        let t = z * y / R0;
        let theta = if t.abs() > 1.0 {
            if t.abs() > 1.0 + TOL {
                return None;
            }
            copysign(90.0, t)
        } else {
            asind(t)
        };
        bounds_check(phi, theta, 1e-13)
    }

    /// `aits2x`: defined everywhere.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (sin_phi, cos_phi) = sincosd(phi / 2.0);
        let (sin_theta, cos_theta) = sincosd(theta);
        let w = (self.two_r0_sq / (1.0 + cos_theta * cos_phi)).sqrt();
        Some((2.0 * w * cos_theta * sin_phi, w * sin_theta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> ProjectionParams {
        ProjectionParams::default()
    }

    fn round_trip(p: &dyn Project, tol: f64) {
        for &(phi, theta) in &[
            (0.0, 0.0),
            (120.0, 45.0),
            (-170.0, -80.0),
            (33.0, 89.0),
            (179.0, -1.0),
        ] {
            let (x, y) = p.s2x(phi, theta).unwrap();
            let (pp, tt) = p.x2s(x, y).unwrap();
            assert!(
                (pp - phi).abs() < tol && (tt - theta).abs() < tol,
                "({phi}, {theta}) -> ({x}, {y}) -> ({pp}, {tt})"
            );
        }
    }

    #[test]
    fn round_trips() {
        round_trip(&Sfl::new(&params()).unwrap(), 1e-11);
        round_trip(&Par::new(&params()).unwrap(), 1e-11);
        round_trip(&Mol::new(&params()).unwrap(), 1e-9);
        round_trip(&Ait::new(&params()).unwrap(), 1e-11);
    }

    #[test]
    fn sfl_pole_only_on_meridian() {
        let sfl = Sfl::new(&params()).unwrap();
        // cos(90/R0) is 6e-17, not 0, so the pole row is valid only for tiny x.
        assert!(sfl.x2s(1.0, 90.0).is_none());
        assert_eq!(sfl.x2s(0.0, 90.0), Some((0.0, 90.0)));
    }

    #[test]
    fn par_poles_valid_only_at_x_zero() {
        let par = Par::new(&params()).unwrap();
        // y = 90 makes r = 0.5 exactly, so 1 - 4r^2 = 0 (the deferred test).
        assert_eq!(par.x2s(0.0, 90.0), Some((0.0, 90.0)));
        assert!(par.x2s(1e-3, 90.0).is_none());
        assert!(par.x2s(0.0, 180.5).is_none());
    }

    #[test]
    fn mol_limits() {
        let mol = Mol::new(&params()).unwrap();
        let top = SQRT_2 * R0;
        let (phi, theta) = mol.x2s(0.0, top).unwrap();
        assert_eq!(phi, 0.0);
        assert!((theta - 90.0).abs() < 1e-6);
        assert!(mol.x2s(1.0, top).is_none());
        assert!(mol.x2s(0.0, top * 1.001).is_none());
        assert_eq!(mol.s2x(10.0, 90.0), Some((0.0, top)));
        assert_eq!(mol.s2x(10.0, 0.0), Some((10.0 * mol.x_scale, 0.0)));
    }

    #[test]
    fn mollweide_auxiliary_solves() {
        for &u in &[-3.0, -1.0, 0.3, 2.9] {
            let v = mollweide_auxiliary(u);
            assert!((v + v.sin() - u).abs() < 1e-12);
        }
    }

    #[test]
    fn ait_outside_ellipse() {
        let ait = Ait::new(&params()).unwrap();
        // The ellipse has semi-axes 2√2 r0 and √2 r0.
        assert!(ait.x2s(2.0 * SQRT_2 * R0 * 1.001, 0.0).is_none());
        assert!(ait.x2s(0.0, SQRT_2 * R0 * 1.001).is_none());
        let (phi, theta) = ait.x2s(0.0, 0.0).unwrap();
        assert_eq!((phi, theta), (0.0, 0.0));
    }
}

//! Conic projections (COP COE COD COO), prj.c.
//!
//! All four share the plane geometry `x = R sin(Cφ)`, `y = Y0 − R cos(Cφ)` and its inverse
//! `R = sign(θa)·√(x² + (Y0 − y)²)`, `φ = atan2(x/R, (Y0 − y)/R)/C`; they differ in R(θ).
//! `PVi_1` (σ = θa) is required, `PVi_2` (η) defaults to 0, and the default fiducial point is
//! (0, θa).

use super::{bad_params, bounds_check, Project, ProjectionParams, R0};
use crate::error::Result;
use crate::wcs::trig::{asind, atan2d, atand, cosd, deg_to_rad, sincosd, sind, tand};

/// The required `PVi_1` (θa) and optional `PVi_2` (η, default 0) of a conic's `*set` routine.
fn conic_params(code: &str, params: &ProjectionParams) -> Result<(f64, f64)> {
    let sigma = params
        .get(1)
        .ok_or_else(|| bad_params(code, "PVi_1 (theta_a) is required for conic projections"))?;
    Ok((sigma, params.get_or(2, 0.0)))
}

/// The common inverse step of the conic `*x2s` routines: `(R, α)` from the plane point, with
/// R negative for a southern conic (`sigma < 0`) and α = 0 at R = 0.
#[inline]
fn conic_polar(x: f64, y: f64, y0: f64, sigma: f64) -> (f64, f64) {
    let dy = y0 - y;
    let r = (x * x + dy * dy).sqrt();
    let r = if sigma < 0.0 { -r } else { r };
    let alpha = if r == 0.0 { 0.0 } else { atan2d(x / r, dy / r) };
    (r, alpha)
}

/// The common forward step of the conic `*s2x` routines: the plane point at radius `r` and
/// cone angle `c·φ`, relative to the apex at (0, `y0`).
#[inline]
fn conic_plane(r: f64, c: f64, phi: f64, y0: f64) -> (f64, f64) {
    let (sin_alpha, cos_alpha) = sincosd(c * phi);
    (r * sin_alpha, -r * cos_alpha + y0)
}

/// COP: conic perspective (prj.c `copset`/`copx2s`/`cops2x`).
#[derive(Debug, Clone)]
pub(crate) struct Cop {
    /// θa (`PVi_1`).
    sigma: f64,
    /// C = sin θa.
    c: f64,
    /// 1/C.
    c_inv: f64,
    /// Y0 = r0 cos η cot θa.
    y0: f64,
    /// r0 cos η.
    r0_cos_eta: f64,
    /// 1/(r0 cos η).
    r0_cos_eta_inv: f64,
    /// cot θa.
    cot_sigma: f64,
}

impl Cop {
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let (sigma, eta) = conic_params("COP", params)?;
        let c = sind(sigma);
        if c == 0.0 {
            return Err(bad_params("COP", "sin(theta_a) = 0"));
        }
        let r0_cos_eta = R0 * cosd(eta);
        if r0_cos_eta == 0.0 {
            return Err(bad_params("COP", "cos(eta) = 0"));
        }
        let cot_sigma = 1.0 / tand(sigma);
        Ok(Cop {
            sigma,
            c,
            c_inv: 1.0 / c,
            y0: r0_cos_eta * cot_sigma,
            r0_cos_eta,
            r0_cos_eta_inv: 1.0 / r0_cos_eta,
            cot_sigma,
        })
    }
}

impl Project for Cop {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, self.sigma)
    }

    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (r, alpha) = conic_polar(x, y, self.y0, self.sigma);
        let theta = self.sigma + atand(self.cot_sigma - r * self.r0_cos_eta_inv);
        bounds_check(alpha * self.c_inv, theta, 1e-13)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let t = theta - self.sigma;
        let s = cosd(t);
        let r = if s == 0.0 {
            // The latitude of divergence.
            return None;
        } else if theta.abs() == 90.0 {
            // The pole, exactly; only the one on the same side as the cone is on the image.
            if (theta < 0.0) != (self.sigma < 0.0) {
                return None;
            }
            0.0
        } else {
            let r = self.y0 - self.r0_cos_eta * sind(t) / s;
            // Beyond the apex: the far side (bounds & 1).
            if r * self.c < 0.0 {
                return None;
            }
            r
        };
        Some(conic_plane(r, self.c, phi, self.y0))
    }
}

/// COE: conic equal area (prj.c `coeset`/`coex2s`/`coes2x`).
#[derive(Debug, Clone)]
pub(crate) struct Coe {
    /// θa (`PVi_1`).
    sigma: f64,
    /// C = (sin θ1 + sin θ2)/2.
    c: f64,
    /// 1/C.
    c_inv: f64,
    /// Y0 = χ √(ψ − 2C sin θa).
    y0: f64,
    /// χ = r0/C.
    chi: f64,
    /// ψ = 1 + sin θ1 sin θ2.
    psi: f64,
    /// 2C.
    two_c: f64,
    /// ψ χ².
    psi_chi2: f64,
    /// 1/(2 r0 χ) = C/(2 r0²).
    w7: f64,
    /// R at θ = −90: χ √(ψ + 2C).
    r_south: f64,
}

impl Coe {
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let (sigma, eta) = conic_params("COE", params)?;
        let theta1 = sigma - eta;
        let theta2 = sigma + eta;
        let c = (sind(theta1) + sind(theta2)) / 2.0;
        if c == 0.0 {
            return Err(bad_params("COE", "sin(theta_1) + sin(theta_2) = 0"));
        }
        let chi = R0 / c;
        let psi = 1.0 + sind(theta1) * sind(theta2);
        let two_c = 2.0 * c;
        Ok(Coe {
            sigma,
            c,
            c_inv: 1.0 / c,
            y0: chi * (psi - two_c * sind(sigma)).sqrt(),
            chi,
            psi,
            two_c,
            psi_chi2: chi * chi * psi,
            w7: 1.0 / (2.0 * R0 * chi),
            r_south: chi * (psi + two_c).sqrt(),
        })
    }
}

impl Project for Coe {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, self.sigma)
    }

    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        const TOL: f64 = 1e-12;
        let (r, alpha) = conic_polar(x, y, self.y0, self.sigma);
        let theta = if (r - self.r_south).abs() < TOL {
            -90.0
        } else {
            let w = (self.psi_chi2 - r * r) * self.w7;
            if w.abs() > 1.0 {
                if (w - 1.0).abs() < TOL {
                    90.0
                } else if (w + 1.0).abs() < TOL {
                    -90.0
                } else {
                    return None;
                }
            } else {
                asind(w)
            }
        };
        bounds_check(alpha * self.c_inv, theta, 1e-13)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let r = if theta == -90.0 {
            self.r_south
        } else {
            self.chi * (self.psi - self.two_c * sind(theta)).sqrt()
        };
        Some(conic_plane(r, self.c, phi, self.y0))
    }
}

/// COD: conic equidistant (prj.c `codset`/`codx2s`/`cods2x`).
#[derive(Debug, Clone)]
pub(crate) struct Cod {
    /// θa (`PVi_1`).
    sigma: f64,
    /// C = r0 sin θa sin η/η (r0 sin θa π/180 for η = 0).
    c: f64,
    /// 1/C.
    c_inv: f64,
    /// Y0 = r0 cos η cos θa/C.
    y0: f64,
    /// Y0 + θa.
    y0_sigma: f64,
}

impl Cod {
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let (sigma, eta) = conic_params("COD", params)?;
        let c = if eta == 0.0 {
            // C: `prj->r0*sind(prj->pv[1])*D2R`, i.e. `((r0*sind)*PI)/180.0`.
            deg_to_rad(R0 * sind(sigma))
        } else {
            R0 * sind(sigma) * sind(eta) / eta
        };
        if c == 0.0 {
            return Err(bad_params("COD", "sin(theta_a) sin(eta) = 0"));
        }
        let y0 = R0 * cosd(eta) * cosd(sigma) / c;
        Ok(Cod {
            sigma,
            c,
            c_inv: 1.0 / c,
            y0,
            y0_sigma: y0 + sigma,
        })
    }
}

impl Project for Cod {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, self.sigma)
    }

    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (r, alpha) = conic_polar(x, y, self.y0, self.sigma);
        bounds_check(alpha * self.c_inv, self.y0_sigma - r, 1e-13)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        Some(conic_plane(self.y0_sigma - theta, self.c, phi, self.y0))
    }
}

/// COO: conic orthomorphic (prj.c `cooset`/`coox2s`/`coos2x`).
#[derive(Debug, Clone)]
pub(crate) struct Coo {
    /// θa (`PVi_1`).
    sigma: f64,
    /// C = ln(cos θ2/cos θ1)/ln(tan τ2/tan τ1), τ = (90 − θ)/2 (sin θ1 if θ1 = θ2).
    c: f64,
    /// 1/C.
    c_inv: f64,
    /// Y0 = ψ tan^C((90 − θa)/2).
    y0: f64,
    /// ψ = (r0 cos θ1/C)/tan^C(τ1).
    psi: f64,
    /// 1/ψ.
    psi_inv: f64,
}

impl Coo {
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let (sigma, eta) = conic_params("COO", params)?;
        let theta1 = sigma - eta;
        let theta2 = sigma + eta;
        let tan1 = tand((90.0 - theta1) / 2.0);
        let cos1 = cosd(theta1);
        let c = if theta1 == theta2 {
            sind(theta1)
        } else {
            let tan2 = tand((90.0 - theta2) / 2.0);
            let cos2 = cosd(theta2);
            (cos2 / cos1).ln() / (tan2 / tan1).ln()
        };
        if c == 0.0 {
            return Err(bad_params("COO", "the cone constant C is 0"));
        }
        let psi = R0 * (cos1 / c) / tan1.powf(c);
        if psi == 0.0 {
            return Err(bad_params("COO", "the scale psi is 0"));
        }
        Ok(Coo {
            sigma,
            c,
            c_inv: 1.0 / c,
            y0: psi * tand((90.0 - sigma) / 2.0).powf(c),
            psi,
            psi_inv: 1.0 / psi,
        })
    }
}

impl Project for Coo {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, self.sigma)
    }

    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (r, alpha) = conic_polar(x, y, self.y0, self.sigma);
        let theta = if r == 0.0 {
            // The apex is the pole θ = −90 only for a cone opening southwards.
            if self.c < 0.0 {
                -90.0
            } else {
                return None;
            }
        } else {
            90.0 - 2.0 * atand((r * self.psi_inv).powf(self.c_inv))
        };
        bounds_check(alpha * self.c_inv, theta, 1e-13)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let r = if theta == -90.0 {
            if self.c >= 0.0 {
                return None;
            }
            0.0
        } else {
            self.psi * tand((90.0 - theta) / 2.0).powf(self.c)
        };
        Some(conic_plane(r, self.c, phi, self.y0))
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

    #[test]
    fn theta_a_is_required() {
        let p = params(&[(2, 10.0)]);
        assert!(Cop::new(&p).is_err());
        assert!(Coe::new(&p).is_err());
        assert!(Cod::new(&p).is_err());
        assert!(Coo::new(&p).is_err());
    }

    #[test]
    fn degenerate_parameters_are_rejected() {
        // theta_a = 0: no cone.
        let p = params(&[(1, 0.0)]);
        assert!(Cop::new(&p).is_err());
        assert!(Coe::new(&p).is_err());
        assert!(Cod::new(&p).is_err());
        assert!(Coo::new(&p).is_err());
        // COP with cos(eta) = 0 exactly cannot happen in degrees (cosd(90) = 6e-17), but
        // symmetric standard parallels about the equator give C = 0 for COE.
        assert!(Coe::new(&params(&[(1, 0.0), (2, 30.0)])).is_err());
    }

    #[test]
    fn default_fiducial_is_theta_a() {
        let p = params(&[(1, 45.0), (2, 10.0)]);
        assert_eq!(Cop::new(&p).unwrap().default_fiducial(), (0.0, 45.0));
        assert_eq!(Coe::new(&p).unwrap().default_fiducial(), (0.0, 45.0));
        assert_eq!(Cod::new(&p).unwrap().default_fiducial(), (0.0, 45.0));
        assert_eq!(Coo::new(&p).unwrap().default_fiducial(), (0.0, 45.0));
    }

    #[test]
    fn round_trips_north_and_south() {
        for sigma in [45.0, -30.0] {
            let p = params(&[(1, sigma), (2, 5.0)]);
            let projections: [Box<dyn Project>; 4] = [
                Box::new(Cop::new(&p).unwrap()),
                Box::new(Coe::new(&p).unwrap()),
                Box::new(Cod::new(&p).unwrap()),
                Box::new(Coo::new(&p).unwrap()),
            ];
            for prj in &projections {
                for (phi, theta) in [(0.0, sigma), (30.0, sigma + 10.0), (-120.0, sigma - 20.0)] {
                    let (x, y) = prj.s2x(phi, theta).unwrap();
                    let (p2, t2) = prj.x2s(x, y).unwrap();
                    assert!((p2 - phi).abs() < 1e-10, "{sigma} {phi} {theta}: {p2}");
                    assert!((t2 - theta).abs() < 1e-10, "{sigma} {phi} {theta}: {t2}");
                }
            }
        }
    }

    #[test]
    fn fiducial_point_is_on_the_y_axis_at_the_origin() {
        let p = params(&[(1, 45.0)]);
        let (x, y) = Cod::new(&p).unwrap().s2x(0.0, 45.0).unwrap();
        assert_eq!(x, 0.0);
        assert!(y.abs() < 1e-13);
    }

    #[test]
    fn cop_far_side_and_pole() {
        let cop = Cop::new(&params(&[(1, 45.0)])).unwrap();
        // The north pole (same side as the cone) maps to the apex; the south pole is flagged.
        assert!(cop.s2x(10.0, 90.0).is_some());
        assert!(cop.s2x(10.0, -90.0).is_none());
        // Beyond the apex (R < 0) is the far side.
        assert!(cop.s2x(10.0, 89.0).is_some());
        assert!(cop.s2x(10.0, -50.0).is_none());
    }

    #[test]
    fn coo_apex() {
        let north = Coo::new(&params(&[(1, 45.0)])).unwrap();
        assert!(north.s2x(0.0, -90.0).is_none());
        let (x, y) = north.s2x(0.0, 90.0).unwrap();
        assert!(
            north.x2s(x, y).is_none(),
            "apex of a northern COO has no inverse"
        );
        let south = Coo::new(&params(&[(1, -45.0)])).unwrap();
        let (x, y) = south.s2x(0.0, -90.0).unwrap();
        assert_eq!(south.x2s(x, y).unwrap().1, -90.0);
    }

    #[test]
    fn coe_outside_the_disc_is_invalid() {
        let coe = Coe::new(&params(&[(1, 45.0)])).unwrap();
        let (_, y_south) = coe.s2x(0.0, -90.0).unwrap();
        assert_eq!(coe.x2s(0.0, y_south).unwrap().1, -90.0);
        assert!(coe.x2s(0.0, y_south - 1.0).is_none());
    }
}

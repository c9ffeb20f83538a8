//! Cylindrical projections (CYP CEA CAR MER), prj.c.
//!
//! All four have their default fiducial point at (0, 0) and do not wrap: plane points whose
//! native longitude falls beyond ±180° are invalid (WCSLIB's `prjbchk`), as in astropy.

use super::{bad_params, bounds_check, Project, ProjectionParams, R0};
use crate::error::Result;
use crate::wcs::trig::{asind, atan2d, atand, copysign, cosd, sind, tand, R2D};

/// CYP: cylindrical perspective (prj.c `cypset`/`cypx2s`/`cyps2x`).
///
/// `PVi_1` = μ (default 1), `PVi_2` = λ (default 1); λ = 0 and μ + λ = 0 are rejected.
#[derive(Debug, Clone)]
pub(crate) struct Cyp {
    /// μ, the distance of the point of projection from the centre, in units of r0.
    mu: f64,
    /// λ, the radius of the cylinder (`w[0]`).
    lambda: f64,
    /// 1/λ (`w[1]`).
    inv_lambda: f64,
    /// r0 (μ + λ) (`w[2]`).
    scale: f64,
    /// 1/(r0 (μ + λ)) (`w[3]`).
    inv_scale: f64,
}

impl Cyp {
    /// `cypset`: defaults and constants, rejecting λ = 0 and μ + λ = 0.
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let mu = params.get_or(1, 1.0);
        let lambda = params.get_or(2, 1.0);
        if lambda == 0.0 {
            return Err(bad_params("CYP", "lambda (PV2_2) must be non-zero"));
        }
        let scale = R2D * (mu + lambda);
        if scale == 0.0 {
            return Err(bad_params(
                "CYP",
                "mu + lambda (PV2_1 + PV2_2) must be non-zero",
            ));
        }
        Ok(Cyp {
            mu,
            lambda,
            inv_lambda: 1.0 / lambda,
            scale,
            inv_scale: 1.0 / scale,
        })
    }
}

impl Project for Cyp {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `cypx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let phi = self.inv_lambda * x;
        let eta = self.inv_scale * y;
        let theta = atan2d(eta, 1.0) + asind(eta * self.mu / (eta * eta + 1.0).sqrt());
        bounds_check(phi, theta, 1e-13)
    }

    /// `cyps2x`: the latitude where μ + cos θ = 0 has no image.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let x = self.lambda * phi;
        let eta = self.mu + cosd(theta);
        if eta == 0.0 {
            return None;
        }
        Some((x, self.scale * sind(theta) / eta))
    }
}

/// CEA: cylindrical equal area (prj.c `ceaset`/`ceax2s`/`ceas2x`).
///
/// `PVi_1` = λ (default 1), which must satisfy 0 < λ ≤ 1.
#[derive(Debug, Clone)]
pub(crate) struct Cea {
    /// r0/λ (`w[2]`).
    r0_over_lambda: f64,
    /// λ/r0 (`w[3]`).
    lambda_over_r0: f64,
}

impl Cea {
    /// `ceaset`: rejects λ outside (0, 1].
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let lambda = params.get_or(1, 1.0);
        if lambda <= 0.0 || lambda > 1.0 {
            return Err(bad_params(
                "CEA",
                format!("lambda (PV2_1) = {lambda} is outside (0, 1]"),
            ));
        }
        Ok(Cea {
            r0_over_lambda: R0 / lambda,
            lambda_over_r0: lambda / R0,
        })
    }
}

impl Project for Cea {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `ceax2s`: sin θ beyond ±1 by more than 1e-13 is invalid, within it θ = ±90.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let s = self.lambda_over_r0 * y;
        let theta = if s.abs() > 1.0 {
            if s.abs() > 1.0 + 1e-13 {
                return None;
            }
            copysign(90.0, s)
        } else {
            asind(s)
        };
        bounds_check(x, theta, 1e-13)
    }

    /// `ceas2x`: defined everywhere.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        Some((phi, self.r0_over_lambda * sind(theta)))
    }
}

/// CAR: plate carrée (prj.c `carset`/`carx2s`/`cars2x`). No parameters.
///
/// The plane is the native sphere itself; |x| > 180 or |y| > 90 is invalid (no wrapping).
#[derive(Debug, Clone)]
pub(crate) struct Car;

impl Car {
    /// `carset`: nothing to precompute.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Car)
    }
}

impl Project for Car {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `carx2s`: the identity, then `prjbchk`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        bounds_check(x, y, 1e-13)
    }

    /// `cars2x`: the identity.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        Some((phi, theta))
    }
}

/// MER: Mercator (prj.c `merset`/`merx2s`/`mers2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Mer;

impl Mer {
    /// `merset`: nothing to precompute.
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Mer)
    }
}

impl Project for Mer {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// `merx2s`.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let theta = 2.0 * atand((y / R0).exp()) - 90.0;
        bounds_check(x, theta, 1e-13)
    }

    /// `mers2x`: the poles (|θ| ≥ 90) have no image.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        if theta <= -90.0 || theta >= 90.0 {
            return None;
        }
        Some((phi, R0 * tand((theta + 90.0) / 2.0).ln()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(values: &[(usize, f64)]) -> ProjectionParams {
        let mut p = ProjectionParams::default();
        for &(m, v) in values {
            p.pv[m] = Some(v);
        }
        p
    }

    #[test]
    fn cyp_rejects_degenerate_parameters() {
        assert!(Cyp::new(&pv(&[(2, 0.0)])).is_err());
        assert!(Cyp::new(&pv(&[(1, -1.0), (2, 1.0)])).is_err());
        assert!(Cyp::new(&pv(&[(1, 0.5), (2, 2.0)])).is_ok());
    }

    #[test]
    fn cyp_divergent_latitude_has_no_image() {
        // mu = -cos(60 deg) puts the divergence at theta = 60 (cosd(60) is not exactly 0.5,
        // so pick mu to cancel it exactly).
        let cyp = Cyp::new(&pv(&[(1, -cosd(60.0)), (2, 1.0)])).unwrap();
        assert!(cyp.s2x(10.0, 60.0).is_none());
        assert!(cyp.s2x(10.0, 30.0).is_some());
    }

    #[test]
    fn cyp_round_trip() {
        let cyp = Cyp::new(&pv(&[(1, 0.7), (2, 0.9)])).unwrap();
        for &(phi, theta) in &[(0.0, 0.0), (120.0, 45.0), (-170.0, -80.0), (33.0, 89.0)] {
            let (x, y) = cyp.s2x(phi, theta).unwrap();
            let (p, t) = cyp.x2s(x, y).unwrap();
            assert!((p - phi).abs() < 1e-11 && (t - theta).abs() < 1e-11);
        }
    }

    #[test]
    fn cea_validates_lambda() {
        assert!(Cea::new(&pv(&[(1, 0.0)])).is_err());
        assert!(Cea::new(&pv(&[(1, 1.5)])).is_err());
        assert!(Cea::new(&pv(&[(1, 1.0)])).is_ok());
        assert!(Cea::new(&pv(&[(1, 0.25)])).is_ok());
    }

    #[test]
    fn cea_clamps_near_the_poles() {
        let cea = Cea::new(&ProjectionParams::default()).unwrap();
        let (_, t) = cea.x2s(0.0, R0 * (1.0 + 1e-14)).unwrap();
        assert_eq!(t, 90.0);
        assert!(cea.x2s(0.0, R0 * (1.0 + 1e-12)).is_none());
    }

    #[test]
    fn car_does_not_wrap() {
        let car = Car::new(&ProjectionParams::default()).unwrap();
        assert_eq!(car.x2s(180.0 + 1e-14, 0.0), Some((180.0, 0.0)));
        assert!(car.x2s(181.0, 0.0).is_none());
        assert!(car.x2s(0.0, -90.5).is_none());
    }

    #[test]
    fn mer_poles_have_no_image() {
        let mer = Mer::new(&ProjectionParams::default()).unwrap();
        assert!(mer.s2x(0.0, 90.0).is_none());
        assert!(mer.s2x(0.0, -90.0).is_none());
        let (x, y) = mer.s2x(10.0, 45.0).unwrap();
        let (p, t) = mer.x2s(x, y).unwrap();
        assert!((p - 10.0).abs() < 1e-12 && (t - 45.0).abs() < 1e-12);
    }
}

//! HEALPix projections (HPX XPH), prj.c.

use super::{bad_params, bounds_check, Project, ProjectionParams};
use crate::error::Result;
use crate::wcs::trig::{asind, deg_to_rad, rad_to_deg, sind};

/// Tolerance of the HEALPix `prjbchk` calls and of XPH's facet checks.
const TOL: f64 = 1e-12;

/// HPX: HEALPix (prj.c `hpxset`/`hpxx2s`/`hpxs2x`).
///
/// `PV2_1` is H, the number of facets in longitude (default 4), `PV2_2` is K, the number of
/// facets in latitude (default 3); both must be positive.
#[derive(Debug, Clone)]
pub(crate) struct Hpx {
    /// K.
    k: f64,
    /// Whether H (rounded) is odd.
    h_odd: bool,
    /// Whether K (rounded) is odd.
    k_odd: bool,
    /// (K−1)/K: |sin θ| limit of the equatorial zone.
    sin_limit: f64,
    /// 90K/H: y scale of the equatorial zone.
    y_scale: f64,
    /// (K+1)/2.
    half_k1: f64,
    /// 90(K−1)/H: |y| limit of the equatorial zone.
    y_equator: f64,
    /// 180/H: half a facet width.
    half_facet: f64,
    /// H/360.
    facets_per_degree: f64,
}

impl Hpx {
    /// WCSLIB's `hpxset`: defaults, validation and the precomputed constants (r0 = 180/π).
    pub(crate) fn new(params: &ProjectionParams) -> Result<Self> {
        let h = params.get_or(1, 4.0);
        let k = params.get_or(2, 3.0);
        if h <= 0.0 || k <= 0.0 {
            return Err(bad_params(
                "HPX",
                format!("H = PV2_1 ({h}) and K = PV2_2 ({k}) must be positive"),
            ));
        }
        Ok(Hpx {
            k,
            h_odd: ((h + 0.5) as i64) % 2 != 0,
            k_odd: ((k + 0.5) as i64) % 2 != 0,
            sin_limit: (k - 1.0) / k,
            y_scale: 90.0 * k / h,
            half_k1: (k + 1.0) / 2.0,
            y_equator: 90.0 * (k - 1.0) / h,
            half_facet: 180.0 / h,
            facets_per_degree: h / 360.0,
        })
    }

    /// Centre of the facet holding `a` (x or φ), for K odd or the northern half.
    #[inline]
    fn facet_centre(&self, a: f64) -> f64 {
        -180.0 + (2.0 * ((a + 180.0) * self.facets_per_degree).floor() + 1.0) * self.half_facet
    }

    /// The southern polar half-facets of even K sit half a facet off the centre `a` lies in:
    /// the offset (±180/H) to add to `a − a_c`.
    #[inline]
    fn south_offset(&self, a: f64) -> f64 {
        // Wrapping: for |a| beyond 2^63 facets the saturated cast must not overflow (panic).
        let h = ((a / self.half_facet).floor() as i64).wrapping_add(i64::from(self.h_odd));
        if h % 2 != 0 {
            -self.half_facet
        } else {
            self.half_facet
        }
    }
}

impl Project for Hpx {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// WCSLIB's `hpxx2s` for one point.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let absy = y.abs();
        if absy <= self.y_equator {
            return bounds_check(x, asind(y / self.y_scale), TOL);
        }
        if absy > self.half_facet * self.half_k1 {
            return None;
        }

        // Polar regime.
        let mut dx = x - self.facet_centre(x);
        if !(self.k_odd || y > 0.0) {
            dx += self.south_offset(x);
        }
        let sigma = self.half_k1 - absy / self.half_facet;
        let (s, theta) = if sigma == 0.0 {
            (1e9, 90.0)
        } else {
            let t = 1.0 - sigma * sigma / self.k;
            if t < -1.0 {
                return None;
            }
            (1.0 / sigma, asind(t))
        };
        let theta = if y < 0.0 { -theta } else { theta };

        let mut r = s * dx;
        // Outside the polar facet (bounds & 2).
        if self.half_facet + 1e-12 <= r.abs() {
            return None;
        }
        if r != 0.0 {
            r -= dx;
        }
        bounds_check(x + r, theta, TOL)
    }

    /// WCSLIB's `hpxs2x` for one point; it never fails.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let sin_theta = sind(theta);
        let abs_sin = sin_theta.abs();
        if abs_sin <= self.sin_limit {
            return Some((phi, self.y_scale * sin_theta));
        }

        // Polar regime.
        let mut dphi = phi - self.facet_centre(phi);
        if !(self.k_odd || theta > 0.0) {
            dphi += self.south_offset(phi);
        }
        let sigma = (self.k * (1.0 - abs_sin)).sqrt();
        let eta = self.half_facet * (self.half_k1 - sigma);
        let eta = if theta < 0.0 { -eta } else { eta };
        let x = phi + dphi * (sigma - 1.0);
        // The φ = 180 meridian goes to the right-hand edge of its facet.
        let x = if 180.0 < x { 360.0 - x } else { x };
        Some((x, eta))
    }
}

/// XPH: HEALPix polar, "butterfly" (prj.c `xphset`/`xphx2s`/`xphs2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Xph {
    /// 1/√2: plane scale (r0 = 180/π).
    scale: f64,
    /// √(2/3)·180/π: slope of θ near the pole in the small-σ series.
    sigma_to_theta: f64,
    /// 90 − 1e-4·√(2/3)·180/π: θ above which σ uses the series.
    theta_series: f64,
    /// √(3/2)·π/180: slope of σ near the pole.
    theta_to_sigma: f64,
}

impl Xph {
    /// σ below which θ is computed from the series.
    const SIGMA_SERIES: f64 = 1e-4;

    /// WCSLIB's `xphset`: the precomputed constants (r0 = 180/π).
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        // C: `sqrt(prj->w[2])*R2D`, i.e. `sqrt(2/3)*180.0/PI`.
        let sigma_to_theta = rad_to_deg((2.0f64 / 3.0).sqrt());
        Ok(Xph {
            scale: 1.0 / 2.0f64.sqrt(),
            sigma_to_theta,
            theta_series: 90.0 - Self::SIGMA_SERIES * sigma_to_theta,
            // C: `sqrt(1.5)*D2R`, i.e. `sqrt(1.5)*PI/180.0`.
            theta_to_sigma: deg_to_rad(1.5f64.sqrt()),
        })
    }
}

impl Project for Xph {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    /// WCSLIB's `xphx2s` for one point.
    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let xr = x * self.scale;
        let yr = y * self.scale;

        // Rotate the quadrant onto the HPX polar facet layout.
        let (xi1, eta1, base) = if xr <= 0.0 && 0.0 < yr {
            (-xr - yr, xr - yr, -180.0)
        } else if xr < 0.0 && yr <= 0.0 {
            (xr - yr, xr + yr, -90.0)
        } else if 0.0 <= xr && yr < 0.0 {
            (xr + yr, -xr + yr, 0.0)
        } else {
            (-xr + yr, -xr - yr, 90.0)
        };

        let xi = xi1 + 45.0;
        let eta = eta1 + 90.0;
        let abseta = eta.abs();
        if abseta > 90.0 {
            return None;
        }

        if abseta <= 45.0 {
            // Equatorial regime; outside the facet (bounds & 2) is invalid.
            if 45.0 + TOL < xi1.abs() {
                return None;
            }
            return bounds_check(base + xi, asind(eta / 67.5), TOL);
        }

        // Polar regime.
        let sigma = (90.0 - abseta) / 45.0;
        let phi = if xr == 0.0 {
            if yr <= 0.0 {
                0.0
            } else {
                180.0
            }
        } else if yr == 0.0 {
            if xr < 0.0 {
                -90.0
            } else {
                90.0
            }
        } else {
            base + (45.0 + xi1 / sigma)
        };
        let theta = if sigma < Self::SIGMA_SERIES {
            90.0 - sigma * self.sigma_to_theta
        } else {
            asind(1.0 - sigma * sigma / 3.0)
        };
        let theta = if eta < 0.0 { -theta } else { theta };

        // Outside the southern polar triangles (bounds & 2).
        if eta < -45.0 && eta + 90.0 + TOL < xi1.abs() {
            return None;
        }
        bounds_check(phi, theta, TOL)
    }

    /// WCSLIB's `xphs2x` for one point; it never fails.
    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let mut chi = phi;
        if 180.0 <= chi.abs() {
            chi %= 360.0;
            if chi < -180.0 {
                chi += 360.0;
            } else if 180.0 <= chi {
                chi -= 360.0;
            }
        }
        // φ is recomputed from χ so that the quadrant test sees the same rounding.
        chi += 180.0;
        let psi = chi % 90.0;
        let phi = chi - 180.0;

        let sin_theta = sind(theta);
        let abs_sin = sin_theta.abs();
        let (xi, eta) = if abs_sin <= 2.0 / 3.0 {
            (psi, 67.5 * sin_theta)
        } else {
            let sigma = if theta < self.theta_series {
                (3.0 * (1.0 - abs_sin)).sqrt()
            } else {
                (90.0 - theta) * self.theta_to_sigma
            };
            let eta = 45.0 * (2.0 - sigma);
            (
                45.0 + (psi - 45.0) * sigma,
                if theta < 0.0 { -eta } else { eta },
            )
        };
        let xi = xi - 45.0;
        let eta = eta - 90.0;

        let w = self.scale;
        Some(if phi < -90.0 {
            (w * (-xi + eta), w * (-xi - eta))
        } else if phi < 0.0 {
            (w * (xi + eta), w * (-xi + eta))
        } else if phi < 90.0 {
            (w * (xi - eta), w * (xi + eta))
        } else {
            (w * (-xi - eta), w * (xi - eta))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(h: Option<f64>, k: Option<f64>) -> ProjectionParams {
        let mut p = ProjectionParams::default();
        p.pv[1] = h;
        p.pv[2] = k;
        p
    }

    #[test]
    fn hpx_rejects_non_positive_h_or_k() {
        assert!(Hpx::new(&pv(Some(0.0), None)).is_err());
        assert!(Hpx::new(&pv(None, Some(-3.0))).is_err());
        assert!(Hpx::new(&pv(Some(4.0), Some(3.0))).is_ok());
    }

    #[test]
    fn hpx_defaults_are_h4_k3() {
        let hpx = Hpx::new(&ProjectionParams::default()).unwrap();
        // The equatorial zone reaches |y| = 90 (K−1)/H = 45 at sin θ = 2/3.
        let (x, y) = hpx.s2x(30.0, asind(2.0 / 3.0)).unwrap();
        assert_eq!(x, 30.0);
        assert!((y - 45.0).abs() < 1e-12);
        // The pole is the facet corner at y = (180/H)(K+1)/2 = 90.
        let (x, y) = hpx.s2x(10.0, 90.0).unwrap();
        assert!((x - 45.0).abs() < 1e-12 && (y - 90.0).abs() < 1e-12);
    }

    #[test]
    fn hpx_polar_round_trip_even_k() {
        // Even K offsets the southern polar half-facets by half a facet.
        let hpx = Hpx::new(&pv(Some(4.0), Some(4.0))).unwrap();
        for &(phi, theta) in &[(10.0, -70.0), (-100.0, -80.0), (170.0, -65.0), (60.0, 75.0)] {
            let (x, y) = hpx.s2x(phi, theta).unwrap();
            let (p, t) = hpx.x2s(x, y).unwrap();
            assert!(
                (p - phi).abs() < 1e-9 && (t - theta).abs() < 1e-9,
                "{phi} {theta}"
            );
        }
    }

    #[test]
    fn hpx_rejects_points_between_polar_facets() {
        let hpx = Hpx::new(&ProjectionParams::default()).unwrap();
        // Facet centres at x = ±45, ±135; x = 0 at y = 80 lies between two polar triangles.
        assert!(hpx.x2s(0.0, 80.0).is_none());
        assert!(hpx.x2s(45.0, 80.0).is_some());
        // Beyond the latitude range.
        assert!(hpx.x2s(45.0, 90.0 + 1e-9).is_none());
    }

    #[test]
    fn xph_series_branch_near_the_pole() {
        let xph = Xph::new(&ProjectionParams::default()).unwrap();
        assert_eq!(xph.default_fiducial(), (0.0, 90.0));
        // theta just below 90 uses the linear series for sigma, both ways.
        for &phi in &[-135.0, -45.0, 30.0, 120.0] {
            let theta = 90.0 - 1e-6;
            let (x, y) = xph.s2x(phi, theta).unwrap();
            let (p, t) = xph.x2s(x, y).unwrap();
            assert!((t - theta).abs() < 1e-12, "{phi}: {t}");
            assert!((p - phi).abs() < 1e-6, "{phi}: {p}");
        }
        assert_eq!(xph.x2s(0.0, 0.0), Some((0.0, 90.0)));
    }

    #[test]
    fn xph_rejects_points_outside_the_butterfly() {
        let xph = Xph::new(&ProjectionParams::default()).unwrap();
        // The plane corner beyond the southern triangles, and beyond |eta| = 90.
        assert!(xph.x2s(180.0, 0.0).is_none());
        assert!(xph.x2s(200.0, 200.0).is_none());
        let (x, y) = xph.s2x(45.0, -60.0).unwrap();
        assert!(xph.x2s(x, y).is_some());
    }
}

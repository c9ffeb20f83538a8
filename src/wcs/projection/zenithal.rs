//! Zenithal projections (AZP SZP TAN STG SIN ARC ZPN ZEA AIR), prj.c.

super::not_yet_written! {
    Azp = "AZP",
    Szp = "SZP",
    Stg = "STG",
    Sin = "SIN",
    Arc = "ARC",
    Zpn = "ZPN",
    Zea = "ZEA",
    Air = "AIR",
}

use super::{bounds_check, Project, ProjectionParams, R0};
use crate::error::Result;
use crate::wcs::trig::{atan2d, sincosd};

/// TAN: gnomonic (prj.c `tanset`/`tanx2s`/`tans2x`). No parameters.
#[derive(Debug, Clone)]
pub(crate) struct Tan;

impl Tan {
    pub(crate) fn new(_params: &ProjectionParams) -> Result<Self> {
        Ok(Tan)
    }
}

impl Project for Tan {
    fn default_fiducial(&self) -> (f64, f64) {
        (0.0, 90.0)
    }

    #[inline]
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let r = (x * x + y * y).sqrt();
        let phi = if r == 0.0 { 0.0 } else { atan2d(x, -y) };
        bounds_check(phi, atan2d(R0, r), 1e-13)
    }

    #[inline]
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        let (sin_theta, cos_theta) = sincosd(theta);
        // theta = 0 has no image; the far hemisphere (theta < 0) is flagged (bounds & 1).
        if sin_theta == 0.0 || sin_theta < 0.0 {
            return None;
        }
        let r = R0 * cos_theta / sin_theta;
        let (sin_phi, cos_phi) = sincosd(phi);
        Some((r * sin_phi, -r * cos_phi))
    }
}

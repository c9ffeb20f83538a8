//! The 28 spherical map projections of FITS WCS Paper II, as WCSLIB's `prj.c` computes them.
//!
//! A [`Projection`] maps native spherical coordinates (φ, θ) to projection-plane coordinates
//! (x, y) (`s2x`) and back (`x2s`), all in degrees. Points outside a projection's domain give
//! `None`, never an extrapolated value: this is where astropy returns NaN.
//!
//! Families live in their own files; each projection is a small struct built once from its
//! `PVi_m` parameters (the precomputed constants of WCSLIB's `*set` routines) and implementing
//! the crate-internal `Project` trait.
//!
//! ```
//! use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
//! let tan = Projection::new(ProjectionCode::Tan, &ProjectionParams::default()).unwrap();
//! let (x, y) = tan.s2x(0.0, 45.0).unwrap();
//! assert!(x.abs() < 1e-12 && (y + 57.29577951308232).abs() < 1e-9);
//! let (phi, theta) = tan.x2s(x, y).unwrap();
//! assert!((theta - 45.0).abs() < 1e-12 && phi.abs() < 1e-12);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod conic;
mod cylindrical;
mod healpix;
mod polyconic;
mod pseudocylindrical;
mod quadcube;
mod zenithal;

/// Number of projection parameters WCSLIB keeps (`PVi_0` .. `PVi_29` of the latitude axis).
///
/// ```
/// use reproject::wcs::projection::{ProjectionParams, PV_COUNT};
/// let mut p = ProjectionParams::default();
/// p.pv[PV_COUNT - 1] = Some(1.0); // PVi_29, the last one kept
/// assert_eq!((p.get(PV_COUNT - 1), p.get(PV_COUNT)), (Some(1.0), None));
/// ```
pub const PV_COUNT: usize = 30;

/// The radius of the generating sphere, `r0 = 180/π`, so that plane coordinates are degrees.
pub(crate) const R0: f64 = crate::wcs::trig::R2D;

/// What each projection implements: WCSLIB's `*x2s` and `*s2x` for one point.
///
/// Inputs are finite; the caller ([`Projection`]) handles the fiducial offset (x0, y0) and
/// non-finite values. Return `None` wherever WCSLIB sets a non-zero `stat` (including the
/// far-side "overlap" checks of `bounds & 1` and the `prjbchk` bounds check of `bounds & 4`).
pub(crate) trait Project {
    /// The projection's default fiducial point (φ0, θ0) in degrees.
    fn default_fiducial(&self) -> (f64, f64);
    /// Plane (x, y) to native (φ, θ).
    fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)>;
    /// Native (φ, θ) to plane (x, y).
    fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)>;
}

/// The projection parameters as given in a header.
///
/// `pv[m]` is `PVi_m` of the latitude axis (`None` when absent: WCSLIB's `UNDEFINED`).
/// `fiducial` is the user-given native fiducial point (φ0, θ0) from `PVj_1`/`PVj_2` of the
/// longitude axis, present only when `PVj_0` is non-zero (WCSLIB's `cel.offset`); the projection
/// then shifts its plane so that this point maps to (0, 0).
///
/// ```
/// use reproject::wcs::projection::ProjectionParams;
/// let mut p = ProjectionParams::default();
/// p.pv[1] = Some(45.0);
/// assert_eq!(p.get(1), Some(45.0));
/// assert_eq!(p.get(2), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ProjectionParams {
    /// `PVi_m` of the latitude axis, m = 0..29.
    pub pv: [Option<f64>; PV_COUNT],
    /// User-given fiducial point (φ0, θ0) for an offset projection.
    pub fiducial: Option<(f64, f64)>,
}

impl ProjectionParams {
    /// `PVi_m`, or `None` if absent (or m out of range).
    ///
    /// ```
    /// use reproject::wcs::projection::ProjectionParams;
    /// let mut p = ProjectionParams::default();
    /// p.pv[0] = Some(2.0);
    /// assert_eq!((p.get(0), p.get(1), p.get(99)), (Some(2.0), None, None));
    /// ```
    pub fn get(&self, m: usize) -> Option<f64> {
        self.pv.get(m).copied().flatten()
    }

    /// `PVi_m`, or `default` if absent.
    ///
    /// ```
    /// use reproject::wcs::projection::ProjectionParams;
    /// let mut p = ProjectionParams::default();
    /// p.pv[1] = Some(45.0);
    /// assert_eq!((p.get_or(1, 0.0), p.get_or(2, 90.0)), (45.0, 90.0));
    /// ```
    pub fn get_or(&self, m: usize, default: f64) -> f64 {
        self.get(m).unwrap_or(default)
    }
}

/// WCSLIB's `prjbchk`: native coordinates beyond ±180/±90 by more than `tol` are invalid;
/// those within `tol` are clamped onto the boundary.
#[inline]
pub(crate) fn bounds_check(phi: f64, theta: f64, tol: f64) -> Option<(f64, f64)> {
    let phi = if phi < -180.0 {
        if phi < -180.0 - tol {
            return None;
        }
        -180.0
    } else if phi > 180.0 {
        if phi > 180.0 + tol {
            return None;
        }
        180.0
    } else {
        phi
    };
    let theta = if theta < -90.0 {
        if theta < -90.0 - tol {
            return None;
        }
        -90.0
    } else if theta > 90.0 {
        if theta > 90.0 + tol {
            return None;
        }
        90.0
    } else {
        theta
    };
    Some((phi, theta))
}

/// Error for parameters a projection's `*set` routine rejects.
pub(crate) fn bad_params(code: &str, reason: impl Into<String>) -> Error {
    Error::InvalidProjectionParameters {
        code: code.to_string(),
        reason: reason.into(),
    }
}

macro_rules! projections {
    ($($variant:ident = $code:literal => $module:ident :: $ty:ident),* $(,)?) => {
        /// The three-letter projection codes of FITS WCS (WCSLIB's 28).
        ///
        /// ```
        /// use reproject::wcs::projection::ProjectionCode;
        /// let code: ProjectionCode = "ZEA".parse().unwrap();
        /// assert_eq!(code, ProjectionCode::Zea);
        /// assert_eq!(code.as_str(), "ZEA");
        /// assert_eq!(ProjectionCode::ALL.len(), 28);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum ProjectionCode {
            $(
                #[doc = concat!("`", $code, "`")]
                $variant,
            )*
        }

        impl ProjectionCode {
            /// Every code, in WCSLIB's order.
            ///
            /// ```
            /// use reproject::wcs::projection::ProjectionCode::{self, Azp, Szp, Tan};
            /// assert_eq!(ProjectionCode::ALL[..3], [Azp, Szp, Tan]);
            /// for code in ProjectionCode::ALL {
            ///     assert_eq!(code.as_str().parse::<ProjectionCode>()?, *code);
            /// }
            /// # Ok::<(), reproject::Error>(())
            /// ```
            pub const ALL: &'static [ProjectionCode] = &[$(ProjectionCode::$variant),*];

            /// The three-letter code.
            ///
            /// ```
            /// use reproject::wcs::projection::ProjectionCode;
            /// assert_eq!(ProjectionCode::Hpx.as_str(), "HPX");
            /// assert_eq!(ProjectionCode::Tan.as_str(), "TAN");
            /// ```
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ProjectionCode::$variant => $code,)*
                }
            }
        }

        impl std::str::FromStr for ProjectionCode {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                match s {
                    $($code => Ok(ProjectionCode::$variant),)*
                    other => Err(Error::UnknownProjection(other.to_string())),
                }
            }
        }

        /// One built projection of each kind.
        #[derive(Debug, Clone)]
        enum Kind {
            $($variant($module::$ty),)*
        }

        impl Kind {
            fn new(code: ProjectionCode, params: &ProjectionParams) -> Result<Kind> {
                Ok(match code {
                    $(ProjectionCode::$variant => Kind::$variant($module::$ty::new(params)?),)*
                })
            }

            #[inline]
            fn as_project(&self) -> &dyn Project {
                match self {
                    $(Kind::$variant(p) => p,)*
                }
            }

            #[inline]
            fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
                match self {
                    $(Kind::$variant(p) => p.x2s(x, y),)*
                }
            }

            #[inline]
            fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
                match self {
                    $(Kind::$variant(p) => p.s2x(phi, theta),)*
                }
            }
        }
    };
}

projections! {
    Azp = "AZP" => zenithal::Azp,
    Szp = "SZP" => zenithal::Szp,
    Tan = "TAN" => zenithal::Tan,
    Stg = "STG" => zenithal::Stg,
    Sin = "SIN" => zenithal::Sin,
    Arc = "ARC" => zenithal::Arc,
    Zpn = "ZPN" => zenithal::Zpn,
    Zea = "ZEA" => zenithal::Zea,
    Air = "AIR" => zenithal::Air,
    Cyp = "CYP" => cylindrical::Cyp,
    Cea = "CEA" => cylindrical::Cea,
    Car = "CAR" => cylindrical::Car,
    Mer = "MER" => cylindrical::Mer,
    Sfl = "SFL" => pseudocylindrical::Sfl,
    Par = "PAR" => pseudocylindrical::Par,
    Mol = "MOL" => pseudocylindrical::Mol,
    Ait = "AIT" => pseudocylindrical::Ait,
    Cop = "COP" => conic::Cop,
    Coe = "COE" => conic::Coe,
    Cod = "COD" => conic::Cod,
    Coo = "COO" => conic::Coo,
    Bon = "BON" => polyconic::Bon,
    Pco = "PCO" => polyconic::Pco,
    Tsc = "TSC" => quadcube::Tsc,
    Csc = "CSC" => quadcube::Csc,
    Qsc = "QSC" => quadcube::Qsc,
    Hpx = "HPX" => healpix::Hpx,
    Xph = "XPH" => healpix::Xph,
}

/// A ready-to-use projection: code, parameters, the precomputed constants and the fiducial
/// offset (x0, y0).
///
/// It serialises as its code and parameters and is rebuilt on deserialisation.
///
/// ```
/// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
/// let ait = Projection::new(ProjectionCode::Ait, &ProjectionParams::default())?;
/// let (x, y) = ait.s2x(120.0, -35.0).unwrap();
/// let (phi, theta) = ait.x2s(x, y).unwrap();
/// assert!((phi - 120.0).abs() < 1e-9 && (theta + 35.0).abs() < 1e-9);
/// let json = serde_json::to_string(&ait).unwrap();
/// let back: Projection = serde_json::from_str(&json).unwrap();
/// assert_eq!(back.s2x(120.0, -35.0), Some((x, y)));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "ProjectionSpec", into = "ProjectionSpec")]
pub struct Projection {
    code: ProjectionCode,
    params: ProjectionParams,
    kind: Kind,
    phi0: f64,
    theta0: f64,
    x0: f64,
    y0: f64,
}

/// The serialised form of a [`Projection`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ProjectionSpec {
    code: ProjectionCode,
    params: ProjectionParams,
}

impl TryFrom<ProjectionSpec> for Projection {
    type Error = Error;
    fn try_from(spec: ProjectionSpec) -> Result<Self> {
        Projection::new(spec.code, &spec.params)
    }
}

impl From<Projection> for ProjectionSpec {
    fn from(p: Projection) -> Self {
        ProjectionSpec {
            code: p.code,
            params: p.params,
        }
    }
}

impl Projection {
    /// Builds a projection (WCSLIB's `prjset`), validating its parameters.
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// // Conics need PV2_1 (theta_a).
    /// assert!(Projection::new(ProjectionCode::Cop, &ProjectionParams::default()).is_err());
    /// ```
    pub fn new(code: ProjectionCode, params: &ProjectionParams) -> Result<Self> {
        if let Some((m, _)) = params
            .pv
            .iter()
            .enumerate()
            .find(|(_, v)| v.is_some_and(|v| !v.is_finite()))
        {
            return Err(Error::InvalidValue {
                keyword: format!("PV (projection parameter {m})"),
                reason: "not a finite number".into(),
            });
        }
        let kind = Kind::new(code, params)?;
        let (mut phi0, mut theta0) = kind.as_project().default_fiducial();
        let (mut x0, mut y0) = (0.0, 0.0);
        if let Some((p0, t0)) = params.fiducial {
            if !(p0.is_finite() && t0.is_finite()) {
                return Err(bad_params(code.as_str(), "non-finite fiducial point"));
            }
            (phi0, theta0) = (p0, t0);
            (x0, y0) = kind.s2x(phi0, theta0).ok_or_else(|| {
                bad_params(
                    code.as_str(),
                    format!("the fiducial point ({phi0}, {theta0}) cannot be projected"),
                )
            })?;
        }
        Ok(Projection {
            code,
            params: *params,
            kind,
            phi0,
            theta0,
            x0,
            y0,
        })
    }

    /// The projection code.
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let car = Projection::new(ProjectionCode::Car, &ProjectionParams::default())?;
    /// assert_eq!(car.code(), ProjectionCode::Car);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn code(&self) -> ProjectionCode {
        self.code
    }

    /// The parameters it was built from.
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let mut params = ProjectionParams::default();
    /// params.pv[1] = Some(45.0); // COP's θa
    /// let cop = Projection::new(ProjectionCode::Cop, &params)?;
    /// assert_eq!(cop.params(), &params);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn params(&self) -> &ProjectionParams {
        &self.params
    }

    /// The native fiducial point (φ0, θ0) in degrees (user-given or the projection's default).
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let default = ProjectionParams::default();
    /// assert_eq!(Projection::new(ProjectionCode::Tan, &default)?.fiducial(), (0.0, 90.0));
    /// assert_eq!(Projection::new(ProjectionCode::Car, &default)?.fiducial(), (0.0, 0.0));
    /// let user = ProjectionParams { fiducial: Some((10.0, 60.0)), ..default };
    /// assert_eq!(Projection::new(ProjectionCode::Tan, &user)?.fiducial(), (10.0, 60.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn fiducial(&self) -> (f64, f64) {
        (self.phi0, self.theta0)
    }

    /// The plane offset (x0, y0) that puts the fiducial point at the origin.
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let plain = Projection::new(ProjectionCode::Tan, &ProjectionParams::default())?;
    /// assert_eq!(plain.offset(), (0.0, 0.0));
    /// let params = ProjectionParams { fiducial: Some((0.0, 80.0)), ..Default::default() };
    /// let shifted = Projection::new(ProjectionCode::Tan, &params)?;
    /// assert_eq!(shifted.offset(), plain.s2x(0.0, 80.0).unwrap());
    /// assert_eq!(shifted.s2x(0.0, 80.0), Some((0.0, 0.0)));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn offset(&self) -> (f64, f64) {
        (self.x0, self.y0)
    }

    /// The length of [`Projection::device_params`] (`RP_PRJ_PARAMS` of the kernels).
    ///
    /// ```
    /// assert_eq!(reproject::wcs::projection::Projection::DEVICE_PARAMS, 35);
    /// ```
    #[doc(hidden)]
    pub const DEVICE_PARAMS: usize = 35;

    /// The flat parameter array the CUDA kernels read (`RP_PRJ_PARAMS` = 35 doubles, see
    /// `kernels/projections.cuh`, whose `rp_prj_setup` rebuilds this projection from it):
    ///
    /// - `[0]` the index of the code in [`ProjectionCode::ALL`];
    /// - `[1]` a bit mask (below 2^30) of the `PVi_m`, m = 0..29, that are present;
    /// - `[2..32)` `PVi_0` .. `PVi_29`, 0.0 where absent;
    /// - `[32]` 1.0 with a user fiducial point, else 0.0;
    /// - `[33]`, `[34]` that point (φ0, θ0), 0.0 without one.
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let mut params = ProjectionParams::default();
    /// params.pv[1] = Some(45.0);
    /// let cop = Projection::new(ProjectionCode::Cop, &params).unwrap();
    /// let flat = cop.device_params();
    /// assert_eq!((flat[0], flat[1], flat[3], flat[32]), (17.0, 2.0, 45.0, 0.0));
    /// ```
    #[doc(hidden)]
    pub fn device_params(&self) -> [f64; Projection::DEVICE_PARAMS] {
        let mut flat = [0.0; Projection::DEVICE_PARAMS];
        // Fieldless enum: the discriminant is the declaration order, which is ALL's order.
        flat[0] = self.code as usize as f64;
        let mut mask = 0u32;
        for (m, v) in self.params.pv.iter().enumerate() {
            if let Some(v) = v {
                mask |= 1 << m;
                flat[2 + m] = *v;
            }
        }
        flat[1] = f64::from(mask);
        if let Some((phi0, theta0)) = self.params.fiducial {
            flat[32] = 1.0;
            flat[33] = phi0;
            flat[34] = theta0;
        }
        flat
    }

    /// Projection plane (x, y) to native spherical (φ, θ), degrees; `None` outside the domain.
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let sin = Projection::new(ProjectionCode::Sin, &ProjectionParams::default())?;
    /// let (phi, theta) = sin.x2s(10.0, -20.0).unwrap();
    /// let (x, y) = sin.s2x(phi, theta).unwrap();
    /// assert!((x - 10.0).abs() < 1e-9 && (y + 20.0).abs() < 1e-9);
    /// // SIN's plane is the disc of radius 180/π ≈ 57.3 degrees.
    /// assert_eq!(sin.x2s(60.0, 0.0), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn x2s(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let (phi, theta) = self.kind.x2s(x + self.x0, y + self.y0)?;
        (phi.is_finite() && theta.is_finite()).then_some((phi, theta))
    }

    /// Projection plane (x, y) → native unit vector `[cos θ cos φ, cos θ sin φ, sin θ]`;
    /// `None` outside the domain (where [`Projection::x2s`] is `None`).
    ///
    /// TAN needs no trigonometry here: the plane point (x, y) is the direction (−y, x, r0).
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let tan = Projection::new(ProjectionCode::Tan, &ProjectionParams::default()).unwrap();
    /// let v = tan.x2v(0.0, 0.0).unwrap();
    /// assert_eq!(v, [0.0, 0.0, 1.0]);
    /// ```
    #[inline]
    pub fn x2v(&self, x: f64, y: f64) -> Option<[f64; 3]> {
        if self.is_plain_tan() {
            if !(x.is_finite() && y.is_finite()) {
                return None;
            }
            let norm = (x * x + y * y + R0 * R0).sqrt();
            return Some([-y / norm, x / norm, R0 / norm]);
        }
        let (phi, theta) = self.x2s(x, y)?;
        let (sin_phi, cos_phi) = crate::wcs::trig::sincosd(phi);
        let (sin_theta, cos_theta) = crate::wcs::trig::sincosd(theta);
        Some([cos_theta * cos_phi, cos_theta * sin_phi, sin_theta])
    }

    /// Native direction (any length) → projection plane (x, y); `None` where
    /// [`Projection::s2x`] is `None` (TAN: the far hemisphere).
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let tan = Projection::new(ProjectionCode::Tan, &ProjectionParams::default())?;
    /// assert_eq!(tan.v2x([0.0, 0.0, 2.0]), Some((0.0, 0.0))); // the native pole
    /// let (x, y) = tan.v2x(tan.x2v(3.0, -4.0).unwrap()).unwrap();
    /// assert!((x - 3.0).abs() < 1e-9 && (y + 4.0).abs() < 1e-9);
    /// assert_eq!(tan.v2x([0.0, 0.0, -1.0]), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn v2x(&self, v: [f64; 3]) -> Option<(f64, f64)> {
        if self.is_plain_tan() {
            if v[2].is_nan() || v[2] <= 0.0 {
                return None;
            }
            let (x, y) = (R0 * v[1] / v[2], -R0 * v[0] / v[2]);
            return (x.is_finite() && y.is_finite()).then_some((x, y));
        }
        let phi = crate::wcs::trig::atan2d(v[1], v[0]);
        let theta = crate::wcs::trig::atan2d(v[2], (v[0] * v[0] + v[1] * v[1]).sqrt());
        self.s2x(phi, theta)
    }

    fn is_plain_tan(&self) -> bool {
        self.code == ProjectionCode::Tan && self.x0 == 0.0 && self.y0 == 0.0
    }

    /// Native spherical (φ, θ) to projection plane (x, y), degrees; `None` where WCSLIB flags
    /// the point (outside the domain, or on the far side of a perspective projection).
    ///
    /// ```
    /// use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
    /// let stg = Projection::new(ProjectionCode::Stg, &ProjectionParams::default())?;
    /// let (x, y) = stg.s2x(30.0, 20.0).unwrap();
    /// let (phi, theta) = stg.x2s(x, y).unwrap();
    /// assert!((phi - 30.0).abs() < 1e-9 && (theta - 20.0).abs() < 1e-9);
    /// let tan = Projection::new(ProjectionCode::Tan, &ProjectionParams::default())?;
    /// assert_eq!(tan.s2x(30.0, -20.0), None); // TAN's far hemisphere
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn s2x(&self, phi: f64, theta: f64) -> Option<(f64, f64)> {
        if !(phi.is_finite() && theta.is_finite()) {
            return None;
        }
        let (x, y) = self.kind.s2x(phi, theta)?;
        let (x, y) = (x - self.x0, y - self.y0);
        (x.is_finite() && y.is_finite()).then_some((x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for code in ProjectionCode::ALL {
            assert_eq!(code.as_str().parse::<ProjectionCode>().unwrap(), *code);
        }
        assert!(matches!(
            "XYZ".parse::<ProjectionCode>(),
            Err(Error::UnknownProjection(_))
        ));
    }

    #[test]
    fn bounds_check_clamps_within_tolerance() {
        assert_eq!(bounds_check(180.0 + 1e-14, 0.0, 1e-13), Some((180.0, 0.0)));
        assert_eq!(bounds_check(0.0, -90.0 - 1e-14, 1e-13), Some((0.0, -90.0)));
        assert_eq!(bounds_check(180.1, 0.0, 1e-13), None);
        assert_eq!(bounds_check(0.0, 90.1, 1e-13), None);
    }
}

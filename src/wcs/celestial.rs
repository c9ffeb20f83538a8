//! The rotation between native spherical (φ, θ) and celestial (α, δ) coordinates:
//! WCSLIB `cel.c` (`celset`) for the Euler angles and `sph.c` (`sphx2s`, `sphs2x`) for the
//! rotation itself, with the same special cases and longitude ranges.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::wcs::trig::{acosd, asind, atan2d, cosd, sincosd, sind};

/// Tolerance of `celset`.
const CEL_TOL: f64 = 1.0e-10;
/// Tolerance of the rearranged formulas in `sph.c`.
const SPH_TOL: f64 = 1.0e-5;

/// The Euler angles of the native → celestial rotation, built as WCSLIB's `celset` does.
///
/// ```
/// use reproject::wcs::celestial::SphericalRotation;
/// // A zenithal projection at (RA, Dec) = (150, 30): the native pole is the reference point.
/// let rot = SphericalRotation::new(150.0, 30.0, 0.0, 90.0, None, None).unwrap();
/// let (ra, dec) = rot.native_to_celestial(0.0, 90.0);
/// assert!((ra - 150.0).abs() < 1e-12 && (dec - 30.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SphericalRotation {
    /// `[αp, 90 − δp, φp, cos(90 − δp), sin(90 − δp)]` (WCSLIB `cel.euler`).
    euler: [f64; 5],
    /// LATPOLE actually used (δp).
    latpole: f64,
}

impl SphericalRotation {
    /// Computes the rotation from the reference point (`lng0`, `lat0`) = CRVAL, the native
    /// fiducial point (`phi0`, `theta0`), LONPOLE (`None` or 999 = default) and LATPOLE
    /// (`None` = +90).
    ///
    /// ```
    /// use reproject::wcs::celestial::SphericalRotation;
    /// // A cylindrical projection (θ0 = 0) at CRVAL = (0, 0): the identity rotation.
    /// let car = SphericalRotation::new(0.0, 0.0, 0.0, 0.0, None, None)?;
    /// assert_eq!(car.native_to_celestial(10.0, 20.0), (10.0, 20.0));
    /// // A zenithal projection cannot have its reference point beyond the pole.
    /// assert!(SphericalRotation::new(0.0, 95.0, 0.0, 90.0, None, None).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(
        lng0: f64,
        lat0: f64,
        phi0: f64,
        theta0: f64,
        lonpole: Option<f64>,
        latpole: Option<f64>,
    ) -> Result<SphericalRotation> {
        let bad = |msg: &str| Error::InvalidCelestial(msg.to_string());
        if ![lng0, lat0, phi0, theta0].iter().all(|v| v.is_finite())
            || lonpole.is_some_and(|v| !v.is_finite())
            || latpole.is_some_and(|v| !v.is_finite())
        {
            return Err(bad("non-finite reference point or pole"));
        }
        let mut theta0 = theta0;
        if theta0.abs() > 90.0 {
            if theta0.abs() > 90.0 + CEL_TOL {
                return Err(bad("theta0 > 90"));
            }
            theta0 = 90.0f64.copysign(theta0);
        }

        let phip = match lonpole {
            Some(v) if v != 999.0 => v,
            _ => {
                let mut p = if lat0 < theta0 { 180.0 } else { 0.0 } + phi0;
                if p < -180.0 {
                    p += 360.0;
                } else if p > 180.0 {
                    p -= 360.0;
                }
                p
            }
        };
        let mut latp = latpole.unwrap_or(90.0);

        let lngp;
        if theta0 == 90.0 {
            lngp = lng0;
            latp = lat0;
        } else {
            let (slat0, clat0) = sincosd(lat0);
            let (sthe0, cthe0) = sincosd(theta0);
            let (sphip, u, v, latp_only);
            if phip == phi0 {
                sphip = 0.0;
                u = theta0;
                v = 90.0 - lat0;
                latp_only = false;
            } else {
                let (s, cphip) = sincosd(phip - phi0);
                sphip = s;
                let x = cthe0 * cphip;
                let y = sthe0;
                let z = (x * x + y * y).sqrt();
                if z == 0.0 {
                    if slat0 != 0.0 {
                        return Err(bad(
                            "lat0 == 0 is required for |phip - phi0| = 90 and theta0 == 0",
                        ));
                    }
                    // δp determined by LATPOLE alone.
                    latp = latp.clamp(-90.0, 90.0);
                    u = 0.0;
                    v = 0.0;
                    latp_only = true;
                } else {
                    let mut slz = slat0 / z;
                    if slz.abs() > 1.0 {
                        if slz.abs() - 1.0 < CEL_TOL {
                            slz = slz.signum();
                        } else {
                            return Err(Error::InvalidCelestial(format!(
                                "|lat0| <= {:.3} is required for these values of phip, phi0 \
                                 and theta0",
                                asind(z)
                            )));
                        }
                    }
                    u = atan2d(y, x);
                    v = acosd(slz);
                    latp_only = false;
                }
            }

            if !latp_only {
                let wrap = |mut a: f64| {
                    if a > 180.0 {
                        a -= 360.0;
                    } else if a < -180.0 {
                        a += 360.0;
                    }
                    a
                };
                let latp1 = wrap(u + v);
                let latp2 = wrap(u - v);
                let ok = |a: f64| a.abs() < 90.0 + CEL_TOL;
                latp = if (latp - latp1).abs() < (latp - latp2).abs() {
                    if ok(latp1) {
                        latp1
                    } else {
                        latp2
                    }
                } else if ok(latp2) {
                    latp2
                } else {
                    latp1
                };
                if ok(latp) {
                    latp = latp.clamp(-90.0, 90.0);
                }
            }

            let z = cosd(latp) * clat0;
            let mut lp = if z.abs() < CEL_TOL {
                if clat0.abs() < CEL_TOL {
                    lng0
                } else if latp > 0.0 {
                    lng0 + phip - phi0 - 180.0
                } else {
                    lng0 - phip + phi0
                }
            } else {
                let x = (sthe0 - sind(latp) * slat0) / z;
                let y = sphip * cthe0 / clat0;
                if x == 0.0 && y == 0.0 {
                    return Err(bad("degenerate pole computation"));
                }
                lng0 - atan2d(y, x)
            };
            if lng0 >= 0.0 {
                if lp < 0.0 {
                    lp += 360.0;
                } else if lp > 360.0 {
                    lp -= 360.0;
                }
            } else if lp > 0.0 {
                lp -= 360.0;
            } else if lp < -360.0 {
                lp += 360.0;
            }
            lngp = lp;
        }

        if latp.abs() > 90.0 + CEL_TOL {
            return Err(bad(
                "ill-conditioned parameters: no valid pole latitude for these phip, phi0, theta0",
            ));
        }
        let e1 = 90.0 - latp;
        let (s1, c1) = sincosd(e1);
        Ok(SphericalRotation {
            euler: [lngp, e1, phip, c1, s1],
            latpole: latp,
        })
    }

    /// WCSLIB's Euler angles `[αp, 90 − δp, φp, cos(90 − δp), sin(90 − δp)]`.
    ///
    /// ```
    /// use reproject::wcs::celestial::SphericalRotation;
    /// let rot = SphericalRotation::new(150.0, 30.0, 0.0, 90.0, None, None)?;
    /// let e = rot.euler();
    /// assert_eq!(e[..3], [150.0, 60.0, 180.0]); // αp = CRVAL1, 90 − δp, default LONPOLE
    /// assert!((e[3] - 0.5).abs() < 1e-15 && (e[4] - 0.75f64.sqrt()).abs() < 1e-15);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn euler(&self) -> [f64; 5] {
        self.euler
    }

    /// The celestial latitude of the native pole actually used (LATPOLE after `celset`).
    ///
    /// ```
    /// use reproject::wcs::celestial::SphericalRotation;
    /// // Two poles fit CRVAL2 = 30 for a cylindrical projection; LATPOLE picks the nearer.
    /// let north = SphericalRotation::new(0.0, 30.0, 0.0, 0.0, None, None)?;
    /// assert_eq!(north.latpole(), 60.0);
    /// let south = SphericalRotation::new(0.0, 30.0, 0.0, 0.0, None, Some(-90.0))?;
    /// assert_eq!(south.latpole(), -60.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn latpole(&self) -> f64 {
        self.latpole
    }

    /// Native (φ, θ) → celestial (α, δ), degrees (`sphx2s`). Longitudes are in [0, 360] when
    /// αp ≥ 0 and in [−360, 0] otherwise, as in WCSLIB.
    ///
    /// ```
    /// use reproject::wcs::celestial::SphericalRotation;
    /// let car = SphericalRotation::new(0.0, 0.0, 0.0, 0.0, None, None)?;
    /// assert_eq!(car.euler()[0], 180.0); // αp ≥ 0, so α is in [0, 360]
    /// assert_eq!(car.native_to_celestial(-10.0, 20.0), (350.0, 20.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn native_to_celestial(&self, phi: f64, theta: f64) -> (f64, f64) {
        let eul = &self.euler;
        let normalize = |mut lng: f64| {
            if eul[0] >= 0.0 {
                if lng < 0.0 {
                    lng += 360.0;
                }
            } else if lng > 0.0 {
                lng -= 360.0;
            }
            if lng > 360.0 {
                lng -= 360.0;
            } else if lng < -360.0 {
                lng += 360.0;
            }
            lng
        };

        if eul[4] == 0.0 {
            return if eul[1] == 0.0 {
                let dlng = (eul[0] + 180.0 - eul[2]) % 360.0;
                (normalize(phi + dlng), theta)
            } else {
                let dlng = (eul[0] + eul[2]) % 360.0;
                (normalize(dlng - phi), -theta)
            };
        }

        let dphi = phi - eul[2];
        let (sinthe, costhe) = sincosd(theta);
        let (sinphi, cosphi) = sincosd(dphi);
        let mut x = sinthe * eul[4] - costhe * eul[3] * cosphi;
        if x.abs() < SPH_TOL {
            x = -cosd(theta + eul[1]) + costhe * eul[3] * (1.0 - cosphi);
        }
        let y = -costhe * sinphi;
        let dlng = if x != 0.0 || y != 0.0 {
            atan2d(y, x)
        } else if eul[1] < 90.0 {
            dphi + 180.0
        } else {
            -dphi
        };
        let lng = normalize(eul[0] + dlng);

        let lat = if dphi % 180.0 == 0.0 {
            let mut lat = theta + cosphi * eul[1];
            if lat > 90.0 {
                lat = 180.0 - lat;
            }
            if lat < -90.0 {
                lat = -180.0 - lat;
            }
            lat
        } else {
            let z = sinthe * eul[3] + costhe * eul[4] * cosphi;
            if z.abs() > 0.99 {
                acosd((x * x + y * y).sqrt()).copysign(z)
            } else {
                asind(z)
            }
        };
        (lng, lat)
    }

    /// Celestial (α, δ) → native (φ, θ), degrees (`sphs2x`); φ in [−180, 180].
    ///
    /// ```
    /// use reproject::wcs::celestial::SphericalRotation;
    /// let car = SphericalRotation::new(0.0, 0.0, 0.0, 0.0, None, None)?;
    /// assert_eq!(car.celestial_to_native(350.0, 20.0), (-10.0, 20.0)); // φ in [−180, 180]
    /// let tan = SphericalRotation::new(150.0, 30.0, 0.0, 90.0, None, None)?;
    /// let (phi, theta) = tan.celestial_to_native(151.0, 29.5);
    /// let (ra, dec) = tan.native_to_celestial(phi, theta);
    /// assert!((ra - 151.0).abs() < 1e-12 && (dec - 29.5).abs() < 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn celestial_to_native(&self, lng: f64, lat: f64) -> (f64, f64) {
        let eul = &self.euler;
        let normalize = |mut phi: f64| {
            if phi > 180.0 {
                phi -= 360.0;
            } else if phi < -180.0 {
                phi += 360.0;
            }
            phi
        };

        if eul[4] == 0.0 {
            return if eul[1] == 0.0 {
                let dphi = (eul[2] - 180.0 - eul[0]) % 360.0;
                (normalize((lng + dphi) % 360.0), lat)
            } else {
                let dphi = (eul[2] + eul[0]) % 360.0;
                (normalize((dphi - lng) % 360.0), -lat)
            };
        }

        let dlng = lng - eul[0];
        let (sinlat, coslat) = sincosd(lat);
        let (sinlng, coslng) = sincosd(dlng);
        let mut x = sinlat * eul[4] - coslat * eul[3] * coslng;
        if x.abs() < SPH_TOL {
            x = -cosd(lat + eul[1]) + coslat * eul[3] * (1.0 - coslng);
        }
        let y = -coslat * sinlng;
        let dphi = if x != 0.0 || y != 0.0 {
            atan2d(y, x)
        } else if eul[1] < 90.0 {
            dlng - 180.0
        } else {
            -dlng
        };
        let phi = normalize((eul[2] + dphi) % 360.0);

        let theta = if dlng % 180.0 == 0.0 {
            let mut t = lat + coslng * eul[1];
            if t > 90.0 {
                t = 180.0 - t;
            }
            if t < -90.0 {
                t = -180.0 - t;
            }
            t
        } else {
            let z = sinlat * eul[3] + coslat * eul[4] * coslng;
            if z.abs() > 0.99 {
                acosd((x * x + y * y).sqrt()).copysign(z)
            } else {
                asind(z)
            }
        };
        (phi, theta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_astropy_euler_angles() {
        // 1904-66_TAN: CRVAL = (0, -90), zenithal; astropy euler [0, 180, 180, -1, 1.22e-16].
        let r = SphericalRotation::new(0.0, -90.0, 0.0, 90.0, Some(180.0), None).unwrap();
        assert_eq!(r.euler()[..3], [0.0, 180.0, 180.0]);
        // extra_GLS_legacy_synth after the GLS -> SFL translation: euler [210, 0, 0, 1, 0].
        let r = SphericalRotation::new(30.0, 20.0, 0.0, 20.0, None, None).unwrap();
        assert_eq!(r.euler(), [210.0, 0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn rejects_ill_conditioned() {
        // CRVAL2 = 95 for a zenithal projection: astropy raises InvalidTransformError.
        assert!(SphericalRotation::new(0.0, 95.0, 0.0, 90.0, None, None).is_err());
    }

    #[test]
    fn round_trip() {
        let r = SphericalRotation::new(83.6, 22.0, 0.0, 0.0, None, Some(10.0)).unwrap();
        for &(phi, theta) in &[(10.0, 20.0), (-170.0, -80.0), (0.0, 0.0), (179.0, 45.0)] {
            let (a, d) = r.native_to_celestial(phi, theta);
            let (p2, t2) = r.celestial_to_native(a, d);
            assert!((p2 - phi).abs() < 1e-10 && (t2 - theta).abs() < 1e-10);
        }
    }
}

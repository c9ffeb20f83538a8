//! Conversions between the celestial frames a FITS WCS can have, as astropy.coordinates does
//! them: ICRS, FK5 at any Julian equinox, FK4 and FK4-without-E-terms at any Besselian
//! equinox (obstime = equinox, astropy's default for WCS frames), Galactic and Supergalactic.
//!
//! A [`FrameTransform`] is built once per (from, to) pair. Construction follows astropy's
//! frame graph step by step — the same shortest path, the same frame attributes on the
//! intermediate frames (astropy takes them from the target frame, then from the source) and
//! the same formulae in each step — and folds all rotations into one 3×3 matrix. The FK4
//! E-terms of aberration are not a rotation: they stay as an explicit step before the matrix
//! (FK4 input) and/or after it (FK4 output).
//!
//! ```
//! use reproject::wcs::frame::CelestialFrame;
//! use reproject::wcs::frame_transform::FrameTransform;
//! let t = FrameTransform::new(&CelestialFrame::Icrs, &CelestialFrame::Galactic).unwrap();
//! let (l, b) = t.apply(266.40498829, -28.93617776); // ICRS of the galactic centre
//! assert!(l < 1e-6 && b.abs() < 1e-6);
//! ```
//!
//! Because the path and its intermediate frames are astropy's, a few transformations are not
//! exact inverses of their reverse, exactly as in astropy: FK4 → FK5 passes through an
//! FK4-without-E-terms frame at the FK5 equinox, so Newcomb's precession is applied forward
//! and back, and the Newcomb polynomials are not exactly reversible (astropy's round trips
//! FK4 ↔ FK5, or through FK4 at a second equinox, are off by 2e-9° to 4e-8°).

use serde::{Deserialize, Serialize};

use super::frame::CelestialFrame;
use crate::error::Result;

mod epoch;
mod eterms;
mod graph;
mod matrices;

use eterms::{eterms_add, eterms_remove};
use graph::{fold_ops, path_ops, Node};
use matrices::mat_vec;

/// A 3×3 matrix, row-major; applies as `v_to = M · v_from`.
type Mat3 = [[f64; 3]; 3];

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// A precomputed conversion of celestial positions from one [`CelestialFrame`] to another.
///
/// It holds one rotation matrix for the whole path plus, where FK4 (with E-terms) is the
/// input or the output, the E-terms vector of that frame's equinox. It is `Send + Sync` and
/// serialisable, so it can be shipped to worker threads or processes.
///
/// ```
/// use reproject::wcs::frame::CelestialFrame;
/// use reproject::wcs::frame_transform::FrameTransform;
/// let fk4 = CelestialFrame::Fk4 { equinox: 1950.0 };
/// let t = FrameTransform::new(&fk4, &CelestialFrame::Icrs).unwrap();
/// assert!(!t.is_identity());
/// assert!(t.matrix().is_none()); // the E-terms are not a rotation
/// let (ra, dec) = t.apply(0.0, 0.0);
/// assert!((ra - 0.64068461).abs() < 1e-8 && (dec - 0.27840697).abs() < 1e-8);
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameTransform {
    from: CelestialFrame,
    to: CelestialFrame,
    /// `from == to`.
    identity: bool,
    /// The rotation between the E-term steps (the whole transformation if there are none).
    matrix: Mat3,
    /// E-terms vector A to remove from FK4 input positions before the matrix.
    remove_eterms: Option<[f64; 3]>,
    /// E-terms vector A to add to positions after the matrix, for FK4 output.
    add_eterms: Option<[f64; 3]>,
}

impl FrameTransform {
    /// Precomputes the conversion `from` → `to`.
    ///
    /// Supported: [`CelestialFrame::Icrs`], [`CelestialFrame::Fk5`],
    /// [`CelestialFrame::Fk4`], [`CelestialFrame::Fk4NoETerms`], [`CelestialFrame::Galactic`]
    /// and [`CelestialFrame::Supergalactic`], in any combination. Two equal frames give the
    /// identity, including two equal [`CelestialFrame::Other`] frames. Anything else is
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument):
    /// [`CelestialFrame::GeocentricApparent`] needs an observation date the frame does not
    /// carry, and `Other` frames (planetary, terrestrial, unknown systems) have no known
    /// relation to the sky frames. Equinoxes must be finite.
    ///
    /// ```
    /// use reproject::wcs::frame::CelestialFrame;
    /// use reproject::wcs::frame_transform::FrameTransform;
    /// use reproject::Error;
    /// let fk5 = CelestialFrame::Fk5 { equinox: 1975.0 };
    /// assert!(FrameTransform::new(&fk5, &CelestialFrame::Galactic).is_ok());
    /// let gappt = CelestialFrame::GeocentricApparent;
    /// let err = FrameTransform::new(&gappt, &CelestialFrame::Icrs).unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument(_)));
    /// ```
    pub fn new(from: &CelestialFrame, to: &CelestialFrame) -> Result<FrameTransform> {
        if from == to {
            // Equal frames are the identity (astropy's self-transforms are the identity up to
            // rounding). Equal `Other` frames need no knowledge of what the frame is; any
            // other frame must still be valid (a finite equinox; not GAPPT, whose date the
            // frame does not carry).
            if !matches!(from, CelestialFrame::Other(_)) {
                Node::from_frame(from)?;
            }
            return Ok(FrameTransform {
                from: from.clone(),
                to: to.clone(),
                identity: true,
                matrix: IDENTITY,
                remove_eterms: None,
                add_eterms: None,
            });
        }
        let source = Node::from_frame(from)?;
        let target = Node::from_frame(to)?;
        let ops = path_ops(source, target);
        let (remove_eterms, matrix, add_eterms) = fold_ops(&ops);
        Ok(FrameTransform {
            from: from.clone(),
            to: to.clone(),
            identity: false,
            matrix,
            remove_eterms,
            add_eterms,
        })
    }

    /// The frame positions are converted from.
    ///
    /// ```
    /// # use reproject::wcs::frame::CelestialFrame;
    /// # use reproject::wcs::frame_transform::FrameTransform;
    /// let t = FrameTransform::new(&CelestialFrame::Galactic, &CelestialFrame::Icrs).unwrap();
    /// assert_eq!(t.from_frame(), &CelestialFrame::Galactic);
    /// ```
    pub fn from_frame(&self) -> &CelestialFrame {
        &self.from
    }

    /// The frame positions are converted to.
    ///
    /// ```
    /// # use reproject::wcs::frame::CelestialFrame;
    /// # use reproject::wcs::frame_transform::FrameTransform;
    /// let t = FrameTransform::new(&CelestialFrame::Galactic, &CelestialFrame::Icrs).unwrap();
    /// assert_eq!(t.to_frame(), &CelestialFrame::Icrs);
    /// ```
    pub fn to_frame(&self) -> &CelestialFrame {
        &self.to
    }

    /// Whether the two frames are the same, so that callers can skip the conversion.
    ///
    /// ```
    /// # use reproject::wcs::frame::CelestialFrame;
    /// # use reproject::wcs::frame_transform::FrameTransform;
    /// let j2000 = CelestialFrame::Fk5 { equinox: 2000.0 };
    /// assert!(FrameTransform::new(&j2000, &j2000).unwrap().is_identity());
    /// assert!(!FrameTransform::new(&j2000, &CelestialFrame::Icrs).unwrap().is_identity());
    /// ```
    pub fn is_identity(&self) -> bool {
        self.identity
    }

    /// The whole conversion as one rotation matrix (`v_to = M · v_from`), or `None` when
    /// FK4 E-terms are involved and the conversion is not a rotation.
    ///
    /// Where an FK4-without-E-terms frame at an obstime other than B1950 is on the path, the
    /// matrix is astropy's, which includes Murray's linearised correction for FK4's rotation
    /// and so is orthogonal only to ~1e-12: take the direction of the product.
    ///
    /// ```
    /// # use reproject::wcs::frame::CelestialFrame;
    /// # use reproject::wcs::frame_transform::FrameTransform;
    /// let t = FrameTransform::new(&CelestialFrame::Icrs, &CelestialFrame::Galactic).unwrap();
    /// let m = t.matrix().unwrap();
    /// assert!((m[0][0] + 0.0548756577125917).abs() < 1e-15);
    /// let fk4 = CelestialFrame::Fk4 { equinox: 1950.0 };
    /// assert!(FrameTransform::new(&fk4, &CelestialFrame::Galactic).unwrap().matrix().is_none());
    /// ```
    pub fn matrix(&self) -> Option<[[f64; 3]; 3]> {
        (self.remove_eterms.is_none() && self.add_eterms.is_none()).then_some(self.matrix)
    }

    /// The steps of [`FrameTransform::apply_vector`]: E-terms removed, rotation, E-terms
    /// added, for the GPU encoder.
    pub(crate) fn steps(&self) -> (Option<[f64; 3]>, Mat3, Option<[f64; 3]>) {
        (self.remove_eterms, self.matrix, self.add_eterms)
    }

    /// Converts a Cartesian direction vector (pass unit vectors). The E-term steps keep the
    /// length, as astropy does; the matrix may change it by ~1e-12 (see
    /// [`FrameTransform::matrix`]), so normalise if a unit vector is needed.
    ///
    /// ```
    /// # use reproject::wcs::frame::CelestialFrame;
    /// # use reproject::wcs::frame_transform::FrameTransform;
    /// let t = FrameTransform::new(&CelestialFrame::Galactic, &CelestialFrame::Icrs).unwrap();
    /// let v = t.apply_vector([0.0, 0.0, 1.0]); // the north galactic pole
    /// let dec = v[2].asin().to_degrees();
    /// assert!((dec - 27.1282).abs() < 1e-4);
    /// ```
    #[inline]
    pub fn apply_vector(&self, v: [f64; 3]) -> [f64; 3] {
        let mut r = v;
        if let Some(a) = &self.remove_eterms {
            r = eterms_remove(r, a);
        }
        r = mat_vec(&self.matrix, r);
        if let Some(a) = &self.add_eterms {
            r = eterms_add(r, a);
        }
        r
    }

    /// Converts (lon, lat) in degrees; the longitude comes back in [0, 360). Non-finite
    /// input gives NaN.
    ///
    /// ```
    /// # use reproject::wcs::frame::CelestialFrame;
    /// # use reproject::wcs::frame_transform::FrameTransform;
    /// let t = FrameTransform::new(
    ///     &CelestialFrame::Galactic,
    ///     &CelestialFrame::Fk5 { equinox: 2000.0 },
    /// )
    /// .unwrap();
    /// let (ra, dec) = t.apply(0.0, 90.0);
    /// assert!((ra - 192.8594812065348).abs() < 1e-9 && (dec - 27.12825118085622).abs() < 1e-9);
    /// ```
    #[inline]
    pub fn apply(&self, lon: f64, lat: f64) -> (f64, f64) {
        if !(lon.is_finite() && lat.is_finite()) {
            return (f64::NAN, f64::NAN);
        }
        if self.is_identity() {
            return (wrap_360(lon), lat);
        }
        vector_to_lonlat(self.apply_vector(lonlat_to_vector(lon, lat)))
    }
}

/// (lon, lat) degrees → unit vector.
#[inline]
fn lonlat_to_vector(lon: f64, lat: f64) -> [f64; 3] {
    let (sl, cl) = lon.to_radians().sin_cos();
    let (sb, cb) = lat.to_radians().sin_cos();
    [cb * cl, cb * sl, sb]
}

/// Vector → (lon in [0, 360), lat) degrees, as astropy's `UnitSphericalRepresentation`.
#[inline]
fn vector_to_lonlat(v: [f64; 3]) -> (f64, f64) {
    let lon = v[1].atan2(v[0]).to_degrees();
    let lat = v[2].atan2(v[0].hypot(v[1])).to_degrees();
    (wrap_360(lon), lat)
}

#[inline]
fn wrap_360(lon: f64) -> f64 {
    let w = lon.rem_euclid(360.0);
    if w >= 360.0 {
        0.0
    } else {
        w
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // values printed by astropy, kept verbatim
mod tests;

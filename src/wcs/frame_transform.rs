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
use crate::error::{Error, Result};

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
    /// [`Error::InvalidArgument`]: [`CelestialFrame::GeocentricApparent`] needs an
    /// observation date the frame does not carry, and `Other` frames (planetary, terrestrial,
    /// unknown systems) have no known relation to the sky frames. Equinoxes must be finite.
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

// ---------------------------------------------------------------------------------------
// Times, as astropy.time keeps them: a two-part TT Julian date.

const DJ00: f64 = 2451545.0;
const DJM0: f64 = 2400000.5;
const DJM00: f64 = 51544.5;
const DJC: f64 = 36525.0;
const DJY: f64 = 365.25;
/// Tropical year in days (ERFA `ERFA_DTY`).
const DTY: f64 = 365.242198781;
/// Arcseconds to radians (ERFA `ERFA_DAS2R`).
const DAS2R: f64 = 4.848_136_811_095_36e-6;

/// A TT time as astropy's `Time` stores it (`jd1` integral, `jd2` in [-0.5, 0.5]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Epoch {
    jd1: f64,
    jd2: f64,
}

impl Epoch {
    /// `Time(year, format='byear')` (ERFA `epb2jd`, then astropy's `day_frac`).
    fn besselian(year: f64) -> Epoch {
        let (jd1, jd2) = day_frac(DJM0, 15019.81352 + (year - 1900.0) * DTY);
        Epoch { jd1, jd2 }
    }

    /// `Time(year, format='jyear')` (ERFA `epj2jd`, then `day_frac`).
    fn julian(year: f64) -> Epoch {
        let (jd1, jd2) = day_frac(DJM0, DJM00 + (year - 2000.0) * DJY);
        Epoch { jd1, jd2 }
    }

    /// `Time.jd`.
    fn jd(self) -> f64 {
        self.jd1 + self.jd2
    }

    /// `Time.byear` (ERFA `epb`).
    fn byear(self) -> f64 {
        1900.0 + ((self.jd1 - DJ00) + (self.jd2 + 36524.68648)) / DTY
    }

    /// `Time.jyear` (ERFA `epj`).
    fn jyear(self) -> f64 {
        2000.0 + ((self.jd1 - DJ00) + self.jd2) / DJY
    }
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let x = a + b;
    let eb = x - a;
    let ea = x - eb;
    (x, (a - ea) + (b - eb))
}

/// numpy's `sign` (0 for 0).
fn np_sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// astropy.time.utils.day_frac without factor/divisor.
fn day_frac(val1: f64, val2: f64) -> (f64, f64) {
    let (sum12, err12) = two_sum(val1, val2);
    let mut day = sum12.round_ties_even();
    let (frac, check) = two_sum(sum12 - day, err12);
    let excess = if frac * np_sign(check) != 0.5 {
        frac.round_ties_even()
    } else {
        (frac + 2.0 * check).round_ties_even()
    };
    day += excess;
    let frac = (sum12 - day) + err12;
    (day, frac)
}

// ---------------------------------------------------------------------------------------
// The frame graph.

/// A frame with its attributes resolved, as an astropy frame instance.
#[derive(Debug, Clone, Copy)]
enum Node {
    Icrs,
    Fk5 { equinox: Epoch },
    Fk4 { equinox: Epoch, obstime: Epoch },
    Fk4NoE { equinox: Epoch, obstime: Epoch },
    Galactic,
    Supergalactic,
}

/// Frame classes, for the path table.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Icrs,
    Fk5,
    Fk4,
    Fk4NoE,
    Galactic,
    Supergalactic,
}

impl Node {
    fn from_frame(frame: &CelestialFrame) -> Result<Node> {
        let finite = |e: f64| {
            if e.is_finite() {
                Ok(e)
            } else {
                Err(Error::InvalidArgument(format!(
                    "frame {frame:?}: the equinox must be finite"
                )))
            }
        };
        Ok(match frame {
            CelestialFrame::Icrs => Node::Icrs,
            CelestialFrame::Fk5 { equinox } => Node::Fk5 {
                equinox: Epoch::julian(finite(*equinox)?),
            },
            CelestialFrame::Fk4 { equinox } => {
                let e = Epoch::besselian(finite(*equinox)?);
                Node::Fk4 {
                    equinox: e,
                    obstime: e,
                }
            }
            CelestialFrame::Fk4NoETerms { equinox } => {
                let e = Epoch::besselian(finite(*equinox)?);
                Node::Fk4NoE {
                    equinox: e,
                    obstime: e,
                }
            }
            CelestialFrame::Galactic => Node::Galactic,
            CelestialFrame::Supergalactic => Node::Supergalactic,
            CelestialFrame::GeocentricApparent => {
                return Err(Error::InvalidArgument(
                    "geocentric apparent place (RADESYS = 'GAPPT') depends on the observation \
                     date and is not supported for frame conversion"
                        .into(),
                ))
            }
            CelestialFrame::Other(name) => {
                return Err(Error::InvalidArgument(format!(
                    "no known conversion between celestial frame '{name}' and other frames"
                )))
            }
        })
    }

    fn kind(self) -> Kind {
        match self {
            Node::Icrs => Kind::Icrs,
            Node::Fk5 { .. } => Kind::Fk5,
            Node::Fk4 { .. } => Kind::Fk4,
            Node::Fk4NoE { .. } => Kind::Fk4NoE,
            Node::Galactic => Kind::Galactic,
            Node::Supergalactic => Kind::Supergalactic,
        }
    }

    fn equinox(self) -> Option<Epoch> {
        match self {
            Node::Fk5 { equinox } | Node::Fk4 { equinox, .. } | Node::Fk4NoE { equinox, .. } => {
                Some(equinox)
            }
            _ => None,
        }
    }

    fn obstime(self) -> Option<Epoch> {
        match self {
            Node::Fk4 { obstime, .. } | Node::Fk4NoE { obstime, .. } => Some(obstime),
            _ => None,
        }
    }
}

/// The frames after the source on astropy 8's shortest path (`frame_transform_graph.
/// find_shortest_path`), the target included. Same-class FK4/FK4NoE/FK5 pairs use their
/// self-transform.
fn route(from: Kind, to: Kind) -> &'static [Kind] {
    use Kind::*;
    match (from, to) {
        (Icrs, Icrs) | (Galactic, Galactic) | (Supergalactic, Supergalactic) => &[],
        (Icrs, Fk5) => &[Fk5],
        (Icrs, Fk4) => &[Fk5, Fk4NoE, Fk4],
        (Icrs, Fk4NoE) => &[Fk5, Fk4NoE],
        (Icrs, Galactic) => &[Fk5, Galactic],
        (Icrs, Supergalactic) => &[Fk5, Galactic, Supergalactic],
        (Fk5, Icrs) => &[Icrs],
        (Fk5, Fk5) => &[Fk5],
        (Fk5, Fk4) => &[Fk4NoE, Fk4],
        (Fk5, Fk4NoE) => &[Fk4NoE],
        (Fk5, Galactic) => &[Galactic],
        (Fk5, Supergalactic) => &[Galactic, Supergalactic],
        (Fk4, Icrs) => &[Fk4NoE, Fk5, Icrs],
        (Fk4, Fk5) => &[Fk4NoE, Fk5],
        (Fk4, Fk4) => &[Fk4],
        (Fk4, Fk4NoE) => &[Fk4NoE],
        (Fk4, Galactic) => &[Fk4NoE, Galactic],
        (Fk4, Supergalactic) => &[Fk4NoE, Galactic, Supergalactic],
        (Fk4NoE, Icrs) => &[Fk5, Icrs],
        (Fk4NoE, Fk5) => &[Fk5],
        (Fk4NoE, Fk4) => &[Fk4],
        (Fk4NoE, Fk4NoE) => &[Fk4NoE],
        (Fk4NoE, Galactic) => &[Galactic],
        (Fk4NoE, Supergalactic) => &[Galactic, Supergalactic],
        (Galactic, Icrs) => &[Fk5, Icrs],
        (Galactic, Fk5) => &[Fk5],
        (Galactic, Fk4) => &[Fk4NoE, Fk4],
        (Galactic, Fk4NoE) => &[Fk4NoE],
        (Galactic, Supergalactic) => &[Supergalactic],
        (Supergalactic, Icrs) => &[Galactic, Fk5, Icrs],
        (Supergalactic, Fk5) => &[Galactic, Fk5],
        (Supergalactic, Fk4) => &[Galactic, Fk4NoE, Fk4],
        (Supergalactic, Fk4NoE) => &[Galactic, Fk4NoE],
        (Supergalactic, Galactic) => &[Galactic],
    }
}

/// One step of the conversion.
#[derive(Debug, Clone, Copy)]
enum Op {
    Matrix(Mat3),
    RemoveETerms([f64; 3]),
    AddETerms([f64; 3]),
}

/// The steps astropy takes from `source` to `target`.
///
/// Intermediate frames get their attributes as astropy's `CompositeTransform` gives them:
/// from the target frame where it has the attribute, else from the source frame, else the
/// frame's default (`SkyCoord.transform_to` passes the same attributes for WCS frames, whose
/// equinoxes are always explicit and whose FK4 obstime is always the default).
fn path_ops(source: Node, target: Node) -> Vec<Op> {
    let b1950 = Epoch::besselian(1950.0);
    let j2000 = Epoch::julian(2000.0);
    let equinox = target.equinox().or(source.equinox());
    let obstime = target.obstime().or(source.obstime());
    let mut ops = Vec::new();
    let mut current = source;
    for &kind in route(source.kind(), target.kind()) {
        let next = match kind {
            Kind::Icrs => Node::Icrs,
            Kind::Galactic => Node::Galactic,
            Kind::Supergalactic => Node::Supergalactic,
            Kind::Fk5 => Node::Fk5 {
                equinox: equinox.unwrap_or(j2000),
            },
            Kind::Fk4 | Kind::Fk4NoE => {
                let e = equinox.unwrap_or(b1950);
                let obs = obstime.unwrap_or(e);
                if kind == Kind::Fk4 {
                    Node::Fk4 {
                        equinox: e,
                        obstime: obs,
                    }
                } else {
                    Node::Fk4NoE {
                        equinox: e,
                        obstime: obs,
                    }
                }
            }
        };
        step_ops(current, next, &mut ops);
        current = next;
    }
    ops
}

/// The operations of one edge of astropy's frame graph.
fn step_ops(from: Node, to: Node, ops: &mut Vec<Op>) {
    let b1950 = Epoch::besselian(1950.0);
    let j2000 = Epoch::julian(2000.0);
    let m = match (from, to) {
        // icrs_fk5_transforms.py
        (Node::Icrs, Node::Fk5 { equinox }) => mat_mul(&fk5_precession(j2000, equinox), &bias()),
        (Node::Fk5 { equinox }, Node::Icrs) => {
            mat_mul(&transpose(&bias()), &fk5_precession(equinox, j2000))
        }
        // fk5.py
        (Node::Fk5 { equinox: e1 }, Node::Fk5 { equinox: e2 }) => fk5_precession(e1, e2),
        // galactic_transforms.py
        (Node::Fk5 { equinox }, Node::Galactic) => fk5_to_galactic(equinox),
        (Node::Galactic, Node::Fk5 { equinox }) => transpose(&fk5_to_galactic(equinox)),
        (Node::Fk4NoE { equinox, .. }, Node::Galactic) => fk4noe_to_galactic(equinox),
        (Node::Galactic, Node::Fk4NoE { equinox, .. }) => transpose(&fk4noe_to_galactic(equinox)),
        // supergalactic_transforms.py
        (Node::Galactic, Node::Supergalactic) => galactic_to_supergalactic(),
        (Node::Supergalactic, Node::Galactic) => transpose(&galactic_to_supergalactic()),
        // fk4_fk5_transforms.py
        (
            Node::Fk4NoE {
                equinox: e4,
                obstime,
            },
            Node::Fk5 { equinox: e5 },
        ) => mat_mul(
            &fk5_precession(j2000, e5),
            &mat_mul(&fk4_b_matrix(obstime), &newcomb_precession(e4, b1950)),
        ),
        (
            Node::Fk5 { equinox: e5 },
            Node::Fk4NoE {
                equinox: e4,
                obstime,
            },
        ) => mat_mul(
            &newcomb_precession(b1950, e4),
            &mat_mul(
                &transpose(&fk4_b_matrix(obstime)),
                &fk5_precession(e5, j2000),
            ),
        ),
        // fk4.py
        (Node::Fk4NoE { equinox: e1, .. }, Node::Fk4NoE { equinox: e2, .. }) => {
            newcomb_precession(e1, e2)
        }
        (Node::Fk4 { equinox: e1, .. }, Node::Fk4NoE { equinox: e2, .. }) => {
            // E-terms of the FK4 equinox removed first, then precession if the equinoxes
            // differ.
            ops.push(Op::RemoveETerms(eterms(e1)));
            if e1 == e2 {
                return;
            }
            newcomb_precession(e1, e2)
        }
        (Node::Fk4NoE { equinox: e1, .. }, Node::Fk4 { equinox: e2, .. }) => {
            // Precession first if the equinoxes differ, then the E-terms of the FK4 equinox.
            if e1 != e2 {
                ops.push(Op::Matrix(newcomb_precession(e1, e2)));
            }
            ops.push(Op::AddETerms(eterms(e2)));
            return;
        }
        (Node::Fk4 { equinox: e1, .. }, Node::Fk4 { equinox: e2, .. }) => {
            // fk4_to_fk4: via FK4NoETerms at each equinox.
            ops.push(Op::RemoveETerms(eterms(e1)));
            ops.push(Op::Matrix(newcomb_precession(e1, e2)));
            ops.push(Op::AddETerms(eterms(e2)));
            return;
        }
        (a, b) => unreachable!("no direct astropy transform {a:?} -> {b:?}"),
    };
    ops.push(Op::Matrix(m));
}

/// Folds the steps into (E-terms to remove, one matrix, E-terms to add).
fn fold_ops(ops: &[Op]) -> (Option<[f64; 3]>, Mat3, Option<[f64; 3]>) {
    let mut remove = None;
    let mut add = None;
    let mut matrix = IDENTITY;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Matrix(m) => matrix = mat_mul(&m, &matrix),
            // astropy's paths only remove E-terms first (FK4 source) and add them last
            // (FK4 target).
            Op::RemoveETerms(a) => {
                assert!(i == 0, "E-terms removal inside a path");
                remove = Some(a);
            }
            Op::AddETerms(a) => {
                assert!(i + 1 == ops.len(), "E-terms addition inside a path");
                add = Some(a);
            }
        }
    }
    (remove, matrix, add)
}

// ---------------------------------------------------------------------------------------
// Matrices.

fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

fn transpose(a: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in a.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            r[j][i] = x;
        }
    }
    r
}

#[inline]
fn mat_vec(m: &Mat3, v: [f64; 3]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// Passive rotation by `angle` radians about axis 0 (x), 1 (y) or 2 (z): astropy's
/// `rotation_matrix` and ERFA's `eraRx/Ry/Rz`.
fn rotation(axis: usize, angle: f64) -> Mat3 {
    let (s, c) = angle.sin_cos();
    let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut r = [[0.0; 3]; 3];
    r[axis][axis] = 1.0;
    r[a1][a1] = c;
    r[a1][a2] = s;
    r[a2][a1] = -s;
    r[a2][a2] = c;
    r
}

/// `rotation_matrix(angle_deg, axis)`.
fn rotation_deg(axis: usize, angle: f64) -> Mat3 {
    rotation(axis, angle.to_radians())
}

const X: usize = 0;
const Y: usize = 1;
const Z: usize = 2;

/// ICRS → FK5(J2000) frame bias, USNO Circular 179 (astropy `_icrs_to_fk5_matrix`).
fn bias() -> Mat3 {
    let eta0 = -19.9 / 3600000.0;
    let xi0 = 9.1 / 3600000.0;
    let da0 = -22.9 / 3600000.0;
    mat_mul(
        &mat_mul(&rotation_deg(X, -eta0), &rotation_deg(Y, xi0)),
        &rotation_deg(Z, da0),
    )
}

/// FK5(equinox) → Galactic (galactic.py: NGP and l0 in FK5 J2000).
fn fk5_to_galactic(equinox: Epoch) -> Mat3 {
    let ra = 192.8594812065348;
    let dec = 27.12825118085622;
    let lon0 = 122.9319185680026;
    let r = mat_mul(
        &mat_mul(&rotation_deg(Z, 180.0 - lon0), &rotation_deg(Y, 90.0 - dec)),
        &rotation_deg(Z, ra),
    );
    mat_mul(&r, &fk5_precession(equinox, Epoch::julian(2000.0)))
}

/// FK4NoETerms(equinox) → Galactic (galactic.py: NGP and l0 in FK4NoETerms B1950).
fn fk4noe_to_galactic(equinox: Epoch) -> Mat3 {
    let r = mat_mul(
        &mat_mul(
            &rotation_deg(Z, 180.0 - 123.0),
            &rotation_deg(Y, 90.0 - 27.4),
        ),
        &rotation_deg(Z, 192.25),
    );
    mat_mul(&r, &newcomb_precession(equinox, Epoch::besselian(1950.0)))
}

/// Galactic → Supergalactic (supergalactic.py: north supergalactic pole l = 47.37°,
/// b = 6.32°).
fn galactic_to_supergalactic() -> Mat3 {
    mat_mul(
        &mat_mul(&rotation_deg(Z, 90.0), &rotation_deg(Y, 90.0 - 6.32)),
        &rotation_deg(Z, 47.37),
    )
}

/// B1950 → J2000 matrix of Murray (1989) eq. 28 (fk4_fk5_transforms.py).
const B1950_TO_J2000: Mat3 = [
    [0.9999256794956877, -0.0111814832204662, -0.0048590038153592],
    [0.0111814832391717, 0.9999374848933135, -0.0000271625947142],
    [0.0048590037723143, -0.0000271702937440, 0.9999881946023742],
];

/// Murray (1989) eq. 29 correction for FK4 being a rotating system, ×1e6.
const FK4_CORR: Mat3 = [
    [-0.0026455262, -1.1539918689, 2.1111346190],
    [1.1540628161, -0.0129042997, 0.0236021478],
    [-2.1112979048, -0.0056024448, 0.0102587734],
];

/// astropy `_fk4_B_matrix(obstime)`: FK4NoETerms(B1950) → FK5(J2000) at `obstime`.
fn fk4_b_matrix(obstime: Epoch) -> Mat3 {
    let t = (obstime.jyear() - 1950.0) / 100.0;
    let mut m = B1950_TO_J2000;
    for (row, corr) in m.iter_mut().zip(FK4_CORR.iter()) {
        for (x, c) in row.iter_mut().zip(corr.iter()) {
            *x += c * 1.0e-6 * t;
        }
    }
    m
}

/// Newcomb precession between Besselian equinoxes (FK4NoETerms `_precession_matrix`).
fn newcomb_precession(old: Epoch, new: Epoch) -> Mat3 {
    let t1 = (old.byear() - 1850.0) / 1000.0;
    let dt = (new.byear() - 1850.0) / 1000.0 - t1;
    let dt_over_3600 = dt / 3600.0;

    let zeta1 = (0.060 * t1 + 139.720) * t1 + 23035.545;
    let z1 = zeta1;
    let zeta2 = -0.27 * t1 + 30.240;
    let zeta = ((17.995 * dt + zeta2) * dt + zeta1) * dt_over_3600;

    let z2 = 109.480 + 0.39 * t1;
    let z = ((18.325 * dt + z2) * dt + z1) * dt_over_3600;

    let theta1 = (-0.37 * t1 - 85.29) * t1 + 20051.12;
    let theta2 = -0.37 * t1 - 42.65;
    let theta = ((-41.8 * dt + theta2) * dt + theta1) * dt_over_3600;

    mat_mul(
        &mat_mul(&rotation_deg(Z, -z), &rotation_deg(Y, theta)),
        &rotation_deg(Z, -zeta),
    )
}

/// FK5 precession between equinoxes (FK5 `_precession_matrix`): IAU 2006 precession without
/// frame bias, through J2000.
fn fk5_precession(old: Epoch, new: Epoch) -> Mat3 {
    mat_mul(&bp06_rp(new), &transpose(&bp06_rp(old)))
}

/// The precession matrix `rp` of ERFA `eraBp06`: P×B at the date times the transpose of B.
fn bp06_rp(t: Epoch) -> Mat3 {
    let rb = fw2m(pfw06(DJM0, DJM00));
    let rbpw = fw2m(pfw06(t.jd1, t.jd2));
    mat_mul(&rbpw, &transpose(&rb))
}

/// ERFA `eraPfw06`: Fukushima-Williams angles (γ̄, φ̄, ψ̄, εA), radians, IAU 2006.
fn pfw06(date1: f64, date2: f64) -> [f64; 4] {
    let t = ((date1 - DJ00) + date2) / DJC;
    let gamb = (-0.052928
        + (10.556378
            + (0.4932044 + (-0.00031238 + (-0.000002788 + (0.0000000260) * t) * t) * t) * t)
            * t)
        * DAS2R;
    let phib = (84381.412819
        + (-46.811016
            + (0.0511268 + (0.00053289 + (-0.000000440 + (-0.0000000176) * t) * t) * t) * t)
            * t)
        * DAS2R;
    let psib = (-0.041775
        + (5038.481484
            + (1.5584175 + (-0.00018522 + (-0.000026452 + (-0.0000000148) * t) * t) * t) * t)
            * t)
        * DAS2R;
    [gamb, phib, psib, obl06(date1, date2)]
}

/// ERFA `eraObl06`: mean obliquity of the ecliptic, IAU 2006, radians.
fn obl06(date1: f64, date2: f64) -> f64 {
    let t = ((date1 - DJ00) + date2) / DJC;
    (84381.406
        + (-46.836769
            + (-0.0001831 + (0.00200340 + (-0.000000576 + (-0.0000000434) * t) * t) * t) * t)
            * t)
        * DAS2R
}

/// ERFA `eraObl80`: mean obliquity of the ecliptic, IAU 1980, radians.
fn obl80(date1: f64, date2: f64) -> f64 {
    let t = ((date1 - DJ00) + date2) / DJC;
    DAS2R * (84381.448 + (-46.8150 + (-0.00059 + (0.001813) * t) * t) * t)
}

/// ERFA `eraFw2m`: Fukushima-Williams angles → rotation matrix.
fn fw2m([gamb, phib, psi, eps]: [f64; 4]) -> Mat3 {
    let mut r = rotation(Z, gamb);
    r = mat_mul(&rotation(X, phib), &r);
    r = mat_mul(&rotation(Z, -psi), &r);
    mat_mul(&rotation(X, -eps), &r)
}

// ---------------------------------------------------------------------------------------
// FK4 E-terms of aberration (fk4.py).

/// The E-terms vector A of an FK4 equinox (astropy `fk4_e_terms`).
fn eterms(equinox: Epoch) -> [f64; 3] {
    // Constant of aberration at J2000, degrees.
    let k: f64 = 0.0056932;
    let jd1950 = Epoch::besselian(1950.0).jd();
    let t = (equinox.jd() - jd1950) / 36525.0;
    // Eccentricity of the Earth's orbit.
    let ek = k.to_radians() * ((-0.000000126 * t - 0.00004193) * t + 0.01673011);
    // Mean longitude of perigee of the solar orbit.
    let g = ((((0.012 * t + 1.65) * t + 6190.67) * t + 1015489.951) / 3600.0).to_radians();
    let minus_ek_cos_g = -ek * g.cos();
    let o = obl80(equinox.jd(), 0.0);
    [
        ek * g.sin(),
        minus_ek_cos_g * o.cos(),
        minus_ek_cos_g * o.sin(),
    ]
}

#[inline]
fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn norm(a: &[f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// FK4 → FK4NoETerms: `r' = r − A + (A·r) r`, renormalised (astropy `fk4_to_fk4_no_e`).
#[inline]
fn eterms_remove(v: [f64; 3], a: &[f64; 3]) -> [f64; 3] {
    let d_orig = norm(&v);
    let r = v.map(|x| x / d_orig);
    let ar = dot(a, &r);
    let r = [
        r[0] - a[0] + ar * r[0],
        r[1] - a[1] + ar * r[1],
        r[2] - a[2] + ar * r[2],
    ];
    let s = d_orig / norm(&r);
    r.map(|x| x * s)
}

/// FK4NoETerms → FK4: ten fixed-point iterations of `r = (A + r₀) / (1 + A·r)`,
/// renormalised (astropy `fk4_no_e_to_fk4`).
#[inline]
fn eterms_add(v: [f64; 3], a: &[f64; 3]) -> [f64; 3] {
    let d_orig = norm(&v);
    let r0 = v.map(|x| x / d_orig);
    let init = [a[0] + r0[0], a[1] + r0[1], a[2] + r0[2]];
    let mut r = r0;
    for _ in 0..10 {
        let d = 1.0 + dot(a, &r);
        r = init.map(|x| x / d);
    }
    let s = d_orig / norm(&r);
    r.map(|x| x * s)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // values printed by astropy, kept verbatim
mod tests {
    use super::*;

    fn max_diff(a: &Mat3, b: &Mat3) -> f64 {
        let mut m: f64 = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                m = m.max((a[i][j] - b[i][j]).abs());
            }
        }
        m
    }

    fn fk4noe(e: f64) -> CelestialFrame {
        CelestialFrame::Fk4NoETerms { equinox: e }
    }

    // Matrices printed from astropy 8.0.2 (shared/reference/wcs-math.md §3.2 and §3.4).

    #[test]
    fn frame_bias_matches_astropy() {
        let want = [
            [
                9.9999999999999278e-01,
                -1.1102233297408340e-07,
                -4.4118044980967761e-08,
            ],
            [
                1.1102233723050031e-07,
                9.9999999999998912e-01,
                9.6477922540797404e-08,
            ],
            [
                4.4118034269763241e-08,
                -9.6477927438885170e-08,
                9.9999999999999434e-01,
            ],
        ];
        let t = FrameTransform::new(
            &CelestialFrame::Icrs,
            &CelestialFrame::Fk5 { equinox: 2000.0 },
        )
        .unwrap();
        assert!(max_diff(&bias(), &want) < 1e-17);
        // astropy multiplies in an IAU 2006 precession J2000 → J2000, the identity to rounding.
        assert!(max_diff(&t.matrix().unwrap(), &want) < 1e-15);
    }

    #[test]
    fn iau2006_rp_matches_astropy() {
        let want = [
            [
                9.999814271280901e-01,
                5.589639933678092e-03,
                2.429264143699530e-03,
            ],
            [
                -5.589639858576726e-03,
                9.999843778178408e-01,
                -6.820334164042905e-06,
            ],
            [
                -2.429264316504769e-03,
                -6.758504193854441e-06,
                9.999970493102482e-01,
            ],
        ];
        assert!(max_diff(&bp06_rp(Epoch::julian(1975.0)), &want) < 1e-16);
        // At J2000 the precession without bias is the identity.
        assert!(max_diff(&bp06_rp(Epoch::julian(2000.0)), &IDENTITY) < 1e-15);
    }

    #[test]
    fn galactic_matrices_match_astropy() {
        let icrs_gal = [
            [
                -0.0548756577125917,
                -0.8734370519556163,
                -0.4838350736167155,
            ],
            [0.4941094371927275, -0.44482972122329534, 0.7469821839866675],
            [
                -0.8676661375596588,
                -0.19807633727300059,
                0.4559838136873017,
            ],
        ];
        let fk5_gal = [
            [
                -0.05487553939571456,
                -0.8734371047274334,
                -0.48383499177032246,
            ],
            [0.4941094536233638, -0.4448295942988167, 0.74698224870205],
            [
                -0.8676661356858699,
                -0.19807638961094992,
                0.4559837945175692,
            ],
        ];
        let fk4_gal = [
            [
                -0.06698873941515084,
                -0.8727557658519927,
                -0.48353891463218424,
            ],
            [0.49272846607532356, -0.4503469580199614, 0.7445846332830311],
            [
                -0.8676008111514348,
                -0.18837460172292037,
                0.4601997847838517,
            ],
        ];
        let m = |a: &CelestialFrame| {
            FrameTransform::new(a, &CelestialFrame::Galactic)
                .unwrap()
                .matrix()
                .unwrap()
        };
        assert!(max_diff(&m(&CelestialFrame::Icrs), &icrs_gal) < 2e-15);
        assert!(max_diff(&m(&CelestialFrame::Fk5 { equinox: 2000.0 }), &fk5_gal) < 2e-15);
        assert!(max_diff(&m(&fk4noe(1950.0)), &fk4_gal) < 2e-15);
    }

    #[test]
    fn fk4noe_b1950_matrices_match_astropy() {
        let to_fk5 = [
            [
                9.9992567949569322e-01,
                -1.1181483218047921e-02,
                -4.8590038197832454e-03,
            ],
            [
                1.1181483236753272e-02,
                9.9993748489334056e-01,
                -2.7162594763660118e-05,
            ],
            [
                4.8590037767386870e-03,
                -2.7170293732259645e-05,
                9.9998819460235266e-01,
            ],
        ];
        let to_icrs = [
            [
                9.9992568095145018e-01,
                -1.1181372203849882e-02,
                -4.8589597052854268e-03,
            ],
            [
                1.1181371753884799e-02,
                9.9993748613734534e-01,
                -2.7258532094198410e-05,
            ],
            [
                4.8589607407388278e-03,
                -2.7073328535866745e-05,
                9.9998819481409618e-01,
            ],
        ];
        let m = |b: &CelestialFrame| {
            FrameTransform::new(&fk4noe(1950.0), b)
                .unwrap()
                .matrix()
                .unwrap()
        };
        assert!(max_diff(&m(&CelestialFrame::Fk5 { equinox: 2000.0 }), &to_fk5) < 2e-15);
        assert!(max_diff(&m(&CelestialFrame::Icrs), &to_icrs) < 2e-15);
    }

    #[test]
    fn eterms_b1950_match_astropy() {
        let want = [
            -1.6255741516894347e-06,
            -3.1919053715637909e-07,
            -1.3842906719296589e-07,
        ];
        let a = eterms(Epoch::besselian(1950.0));
        for i in 0..3 {
            assert!((a[i] - want[i]).abs() < 1e-21, "{a:?}");
        }
    }

    #[test]
    fn eterms_add_inverts_remove() {
        let a = eterms(Epoch::besselian(1900.0));
        for v in [[1.0, 0.0, 0.0], [0.6, -0.48, 0.64], [0.0, 0.0, -1.0]] {
            let back = eterms_add(eterms_remove(v, &a), &a);
            for i in 0..3 {
                assert!((back[i] - v[i]).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn epochs_match_erfa() {
        // Time(1950, format='byear') and Time(2000, format='jyear') in astropy 8.0.2.
        let b = Epoch::besselian(1950.0);
        assert_eq!((b.jd1, b.jd2), (2433282.0, 0.4234590499982005));
        let j = Epoch::julian(2000.0);
        assert_eq!((j.jd1, j.jd2), (2451545.0, 0.0));
        assert!((Epoch::julian(2000.0).byear() - 2000.001277513665).abs() < 1e-12);
        assert!((b.jyear() - 1949.9997904422999).abs() < 1e-12);
    }

    #[test]
    fn unsupported_frames_are_errors() {
        let other = CelestialFrame::Other("MARS".into());
        assert!(matches!(
            FrameTransform::new(&other, &CelestialFrame::Icrs),
            Err(Error::InvalidArgument(_))
        ));
        assert!(FrameTransform::new(&other, &other).unwrap().is_identity());
        let gappt = CelestialFrame::GeocentricApparent;
        assert!(FrameTransform::new(&gappt, &gappt).is_err());
        let nan = CelestialFrame::Fk5 { equinox: f64::NAN };
        assert!(FrameTransform::new(&nan, &CelestialFrame::Icrs).is_err());
    }

    #[test]
    fn wrap() {
        assert_eq!(wrap_360(-1e-20), 0.0);
        assert_eq!(wrap_360(360.0), 0.0);
        assert_eq!(wrap_360(-90.0), 270.0);
    }
}

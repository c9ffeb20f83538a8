//! The frame graph: astropy's shortest path between two frames, its steps and their fold
//! into one matrix.

use super::epoch::Epoch;
use super::eterms::eterms;
use super::matrices::{
    bias, fk4_b_matrix, fk4noe_to_galactic, fk5_precession, fk5_to_galactic,
    galactic_to_supergalactic, mat_mul, newcomb_precession, transpose,
};
use super::{Mat3, IDENTITY};
use crate::error::{Error, Result};
use crate::wcs::frame::CelestialFrame;

/// A frame with its attributes resolved, as an astropy frame instance.
#[derive(Debug, Clone, Copy)]
pub(super) enum Node {
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
    pub(super) fn from_frame(frame: &CelestialFrame) -> Result<Node> {
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

    pub(super) fn equinox(self) -> Option<Epoch> {
        match self {
            Node::Fk5 { equinox } | Node::Fk4 { equinox, .. } | Node::Fk4NoE { equinox, .. } => {
                Some(equinox)
            }
            _ => None,
        }
    }

    pub(super) fn obstime(self) -> Option<Epoch> {
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
pub(super) enum Op {
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
pub(super) fn path_ops(source: Node, target: Node) -> Vec<Op> {
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
pub(super) fn fold_ops(ops: &[Op]) -> (Option<[f64; 3]>, Mat3, Option<[f64; 3]>) {
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

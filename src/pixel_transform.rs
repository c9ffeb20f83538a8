//! Output pixel → input pixel: the coordinate transform at the heart of reprojection.
//!
//! In general a pixel of the output image is taken to the sky (`wcs_out.pixel_to_world`),
//! converted between celestial frames, and brought back to the input image
//! (`wcs_in.world_to_pixel`). When both WCS are plain gnomonic (TAN, no distortion), that whole
//! chain is a projective map of the plane: a point (x, y) of a TAN plane is the direction
//! (−y, x, r0) in native coordinates, the sky rotations and the frame change are 3×3 rotations,
//! and the input TAN plane is again a central projection. So
//!
//! ```text
//! (X, Y, W) = H · (x_out, y_out, 1),   input pixel = (X / W, Y / W),   valid iff W > 0
//! ```
//!
//! with one 3×3 matrix `H`, exact up to rounding, where `W > 0` is TAN's own "near hemisphere"
//! test (WCSLIB flags θ ≤ 0 in `tans2x`). [`PixelTransform::new`] picks it automatically.
//!
//! ```
//! use reproject::pixel_transform::PixelTransform;
//! use reproject::wcs::Wcs;
//! let tan = |ra: f64, rot: f64| {
//!     let (s, c) = rot.to_radians().sin_cos();
//!     Wcs::from_header_str(&format!(
//!         "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 100\nCRPIX2 = 100\n\
//!          CRVAL1 = {ra}\nCRVAL2 = 30\nCD1_1 = {}\nCD1_2 = {}\nCD2_1 = {}\nCD2_2 = {}\n",
//!         -1e-3 * c, 1e-3 * s, 1e-3 * s, 1e-3 * c
//!     ))
//!     .unwrap()
//! };
//! let (out, inp) = (tan(150.0, 30.0), tan(150.05, 0.0));
//! let t = PixelTransform::new(&out, &inp).unwrap();
//! assert!(t.is_homography());
//! let (x, y) = t.map(99.0, 99.0).unwrap();
//! let general = PixelTransform::general(&out, &inp).unwrap().map(99.0, 99.0).unwrap();
//! assert!((x - general.0).abs() < 1e-9 && (y - general.1).abs() < 1e-9);
//! ```

use std::ops::Range;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::wcs::frame::CelestialFrame;
use crate::wcs::frame_transform::FrameTransform;
use crate::wcs::plane::{world_conversions, Conversion, LinearPlane};
use crate::wcs::projection::ProjectionCode;
use crate::wcs::{CelestialTransform, Wcs};

/// A 3×3 matrix, row-major.
type Mat3 = [[f64; 3]; 3];

/// Maps output pixels (0-based) to input pixels (0-based).
///
/// ```
/// use reproject::pixel_transform::PixelTransform;
/// use reproject::wcs::Wcs;
/// let wcs = |crpix: f64| Wcs::from_header_str(&format!(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = {crpix}\n\
///      CRVAL1 = 30\nCRVAL2 = 10\nCDELT1 = -0.01\nCDELT2 = 0.01\n"));
/// let t = PixelTransform::new(&wcs(10.0)?, &wcs(15.0)?)?;
/// let (x, y) = t.map(2.0, 7.0).unwrap();
/// assert!((x - 7.0).abs() < 1e-9 && (y - 12.0).abs() < 1e-9); // shifted by 15 - 10
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PixelTransform {
    kind: Kind,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// Both gnomonic without distortion: one projective matrix.
    Homography(Mat3),
    /// Through native unit vectors: output pixel → output native direction → one rotation
    /// (output native → celestial → frame change → input native) → input pixel. Used when
    /// the frame change is a rotation.
    Vector {
        wcs_out: Box<CelestialTransform>,
        wcs_in: Box<CelestialTransform>,
        rotation: Mat3,
        /// For the rare point at a native pole of the input projection.
        frame: Option<Box<FrameTransform>>,
    },
    /// Through the sky: output WCS → world → (frame change) → input WCS.
    General {
        wcs_out: Box<CelestialTransform>,
        wcs_in: Box<CelestialTransform>,
        /// `None` when both WCS are in the same frame.
        frame: Option<Box<FrameTransform>>,
    },
    /// Both image planes non-celestial ([`LinearPlane`]): output pixel → world values → the
    /// input's units → input pixel, in WCSLIB's order of operations (a few operations per
    /// pixel, no projection).
    Linear {
        out: Box<LinearPlane>,
        inp: Box<LinearPlane>,
        /// From the output's world values to the input's (units, time references).
        conversions: [Conversion; 2],
    },
    /// Given for every output pixel ([`PositionTable`]).
    Table(PositionTable),
}

/// The input position (0-based column `x`, row `y`) of every pixel of an output plane, NaN
/// where there is none: positions computed elsewhere (e.g. by astropy for a WCS this crate
/// does not evaluate, round-trip check included).
///
/// ```
/// use reproject::pixel_transform::{PixelTransform, PositionTable};
/// let table = PositionTable::new((1, 2), vec![0.5, f64::NAN], vec![2.0, 3.0]).unwrap();
/// let t = PixelTransform::from_positions(table);
/// assert_eq!(t.map(0.0, 0.0), Some((0.5, 2.0)));
/// assert_eq!(t.map(1.0, 0.0), None);
/// assert_eq!(t.map(2.0, 0.0), None); // outside the table
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PositionTable {
    shape: (usize, usize),
    xs: Arc<[f64]>,
    ys: Arc<[f64]>,
}

impl PositionTable {
    /// Positions of an output plane of `shape` (rows, columns), row-major.
    ///
    /// ```
    /// use reproject::pixel_transform::{PixelTransform, PositionTable};
    /// let (xs, ys) = (vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0], vec![9.0; 6]);
    /// let t = PixelTransform::from_positions(PositionTable::new((2, 3), xs, ys)?);
    /// assert_eq!(t.map(1.0, 1.0), Some((4.0, 9.0))); // row 1, column 1: entry 3 + 1
    /// assert!(PositionTable::new((2, 3), vec![0.0; 6], vec![0.0; 5]).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(shape: (usize, usize), xs: Vec<f64>, ys: Vec<f64>) -> Result<PositionTable> {
        let n = shape.0.checked_mul(shape.1);
        if n != Some(xs.len()) || n != Some(ys.len()) {
            return Err(Error::ShapeMismatch(format!(
                "{} and {} input positions for an output plane of {shape:?}",
                xs.len(),
                ys.len()
            )));
        }
        Ok(PositionTable {
            shape,
            xs: xs.into(),
            ys: ys.into(),
        })
    }

    /// The output plane's (rows, columns).
    ///
    /// ```
    /// use reproject::pixel_transform::PositionTable;
    /// let table = PositionTable::new((2, 3), vec![0.0; 6], vec![0.0; 6])?;
    /// assert_eq!(table.shape(), (2, 3));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// The input columns (`x`) and rows (`y`) of every output pixel, row-major; NaN where
    /// a pixel has none.
    ///
    /// ```
    /// use reproject::pixel_transform::PositionTable;
    /// let table = PositionTable::new((1, 2), vec![0.5, f64::NAN], vec![3.0, 0.0])?;
    /// let (xs, ys) = table.positions();
    /// assert_eq!((xs[0], ys[0]), (0.5, 3.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn positions(&self) -> (&[f64], &[f64]) {
        (&self.xs, &self.ys)
    }

    /// The position of output pixel (`x`, `y`); `None` off the table or where it has none.
    #[inline]
    fn get(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (ny, nx) = self.shape;
        let inside = x >= 0.0 && y >= 0.0 && x < nx as f64 && y < ny as f64;
        if !inside || x.fract() != 0.0 || y.fract() != 0.0 {
            return None;
        }
        let i = y as usize * nx + x as usize;
        let (px, py) = (self.xs[i], self.ys[i]);
        (px.is_finite() && py.is_finite()).then_some((px, py))
    }
}

impl PixelTransform {
    /// The transform from `wcs_out` pixels to `wcs_in` pixels, using the exact homography
    /// when both are plain TAN.
    ///
    /// ```
    /// # use reproject::pixel_transform::PixelTransform;
    /// # use reproject::wcs::Wcs;
    /// # let wcs = |proj: &str, crpix: f64, ra: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---{proj}'\nCTYPE2 = 'DEC--{proj}'\nCRPIX1 = {crpix}\nCRPIX2 = {crpix}\n\
    /// #      CRVAL1 = {ra}\nCRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n"));
    /// let (car, tan) = (wcs("CAR", 50.0, 150.0)?, wcs("TAN", 40.0, 150.1)?);
    /// let t = PixelTransform::new(&car, &tan)?;
    /// // the same as going through the sky
    /// let (ra, dec) = car.celestial()?.pixel_to_world(10.0, 20.0).unwrap();
    /// let (x, y) = tan.celestial()?.world_to_pixel(ra, dec).unwrap();
    /// let (px, py) = t.map(10.0, 20.0).unwrap();
    /// assert!((px - x).abs() < 1e-9 && (py - y).abs() < 1e-9);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(wcs_out: &Wcs, wcs_in: &Wcs) -> Result<PixelTransform> {
        if !wcs_out.has_celestial() && !wcs_in.has_celestial() {
            return PixelTransform::linear(wcs_out, wcs_in);
        }
        let (out, inp) = (wcs_out.celestial()?, wcs_in.celestial()?);
        let frame = frame_change(out, inp)?;
        // A frame change that is a pure rotation folds into one matrix; FK4's E-terms are not
        // a rotation and take the general path.
        let Some(frame_rotation) = (match &frame {
            None => Some(IDENTITY),
            Some(f) => f.matrix(),
        }) else {
            return PixelTransform::general(wcs_out, wcs_in);
        };
        let kind = if is_plain_tan(out) && is_plain_tan(inp) {
            Kind::Homography(homography(out, inp, &frame_rotation))
        } else {
            let chain = [
                transpose(native_to_celestial_matrix(inp)),
                frame_rotation,
                native_to_celestial_matrix(out),
            ];
            Kind::Vector {
                wcs_out: Box::new(out.clone()),
                wcs_in: Box::new(inp.clone()),
                rotation: chain.iter().skip(1).fold(chain[0], |acc, m| mul(&acc, m)),
                frame: frame.map(Box::new),
            }
        };
        Ok(PixelTransform { kind })
    }

    /// The transform between two non-celestial image planes ([`LinearPlane`]), with the
    /// world values of the output converted to the input's units.
    ///
    /// ```
    /// use reproject::pixel_transform::PixelTransform;
    /// use reproject::wcs::Wcs;
    /// let out = Wcs::from_header_str(
    ///     "CTYPE1 = 'X'\nCUNIT1 = 'km'\nCTYPE2 = 'Y'\nCRPIX1 = 1\nCRPIX2 = 1\n",
    /// )
    /// .unwrap();
    /// let inp = Wcs::from_header_str(
    ///     "CTYPE1 = 'X'\nCUNIT1 = 'm'\nCTYPE2 = 'Y'\nCRPIX1 = 1\nCRPIX2 = 1\nCDELT1 = 500\n",
    /// )
    /// .unwrap();
    /// let t = PixelTransform::new(&out, &inp).unwrap();
    /// assert_eq!(t.map(3.0, 4.0), Some((6.0, 4.0)));
    /// ```
    pub fn linear(wcs_out: &Wcs, wcs_in: &Wcs) -> Result<PixelTransform> {
        let conversions = world_conversions(wcs_out, wcs_in)?;
        Ok(PixelTransform {
            kind: Kind::Linear {
                out: Box::new(LinearPlane::new(wcs_out)?),
                inp: Box::new(LinearPlane::new(wcs_in)?),
                conversions: [conversions[0], conversions[1]],
            },
        })
    }

    /// The transform that looks the input positions up in `table`.
    ///
    /// ```
    /// use reproject::pixel_transform::{PixelTransform, PositionTable};
    /// let table = PositionTable::new((2, 2), vec![0.0, 1.0, 0.0, 1.0], vec![5.0, 5.0, 6.0, 6.0])?;
    /// let t = PixelTransform::from_positions(table);
    /// assert_eq!(t.map(1.0, 1.0), Some((1.0, 6.0)));
    /// assert_eq!(t.map(0.5, 0.0), None); // only whole output pixels are in the table
    /// assert!(!t.is_homography() && !t.is_rotation());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_positions(table: PositionTable) -> PixelTransform {
        PixelTransform {
            kind: Kind::Table(table),
        }
    }

    /// The transform through world coordinates, never the homography (for comparisons).
    ///
    /// ```
    /// # use reproject::pixel_transform::PixelTransform;
    /// # use reproject::wcs::Wcs;
    /// # let wcs = |proj: &str, crpix: f64, ra: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---{proj}'\nCTYPE2 = 'DEC--{proj}'\nCRPIX1 = {crpix}\nCRPIX2 = {crpix}\n\
    /// #      CRVAL1 = {ra}\nCRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n"));
    /// let (out, inp) = (wcs("TAN", 50.0, 150.0)?, wcs("TAN", 40.0, 150.1)?);
    /// let (fast, slow) = (PixelTransform::new(&out, &inp)?, PixelTransform::general(&out, &inp)?);
    /// assert!(fast.is_homography() && !slow.is_homography());
    /// let ((x0, y0), (x1, y1)) = (fast.map(10.0, 20.0).unwrap(), slow.map(10.0, 20.0).unwrap());
    /// assert!((x0 - x1).abs() < 1e-9 && (y0 - y1).abs() < 1e-9);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn general(wcs_out: &Wcs, wcs_in: &Wcs) -> Result<PixelTransform> {
        if !wcs_out.has_celestial() && !wcs_in.has_celestial() {
            return PixelTransform::linear(wcs_out, wcs_in);
        }
        let (out, inp) = (wcs_out.celestial()?, wcs_in.celestial()?);
        Ok(PixelTransform {
            kind: Kind::General {
                frame: frame_change(out, inp)?.map(Box::new),
                wcs_out: Box::new(out.clone()),
                wcs_in: Box::new(inp.clone()),
            },
        })
    }

    /// The path in use, for the GPU encoder (src/engine/kernel_params.rs).
    pub(crate) fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Whether the frame change between the two WCS is a rotation (always, except for FK4's
    /// E-terms), so that the transform is the homography or the unit-vector path.
    ///
    /// ```
    /// use reproject::pixel_transform::PixelTransform;
    /// use reproject::wcs::Wcs;
    /// let car = Wcs::from_header_str(
    ///     "CTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\nCRVAL1 = 0\nCRVAL2 = 0\n",
    /// )
    /// .unwrap();
    /// assert!(PixelTransform::new(&car, &car).unwrap().is_rotation());
    /// ```
    pub fn is_rotation(&self) -> bool {
        !matches!(self.kind, Kind::General { .. } | Kind::Table(_))
    }

    /// Whether the exact homography fast path is in use.
    ///
    /// ```
    /// # use reproject::pixel_transform::PixelTransform;
    /// # use reproject::wcs::Wcs;
    /// # let wcs = |proj: &str, crpix: f64, ra: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---{proj}'\nCTYPE2 = 'DEC--{proj}'\nCRPIX1 = {crpix}\nCRPIX2 = {crpix}\n\
    /// #      CRVAL1 = {ra}\nCRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n"));
    /// let (tan, car) = (wcs("TAN", 50.0, 150.0)?, wcs("CAR", 50.0, 150.0)?);
    /// assert!(PixelTransform::new(&tan, &wcs("TAN", 40.0, 151.0)?)?.is_homography());
    /// assert!(!PixelTransform::new(&tan, &car)?.is_homography());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_homography(&self) -> bool {
        matches!(self.kind, Kind::Homography(_))
    }

    /// Whether either celestial WCS has a SIP or TPV distortion (costlier pixels: the
    /// inverse distortion is iterated).
    ///
    /// ```
    /// use reproject::pixel_transform::PixelTransform;
    /// use reproject::wcs::Wcs;
    /// let tan = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n",
    /// )
    /// .unwrap();
    /// let sip = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CRPIX1 = 1\nCRPIX2 = 1\nA_ORDER = 2\nA_2_0 = 1E-6\nB_ORDER = 2\n",
    /// )
    /// .unwrap();
    /// assert!(!PixelTransform::new(&tan, &tan).unwrap().is_distorted());
    /// assert!(PixelTransform::new(&tan, &sip).unwrap().is_distorted());
    /// ```
    pub fn is_distorted(&self) -> bool {
        match &self.kind {
            Kind::Vector {
                wcs_out, wcs_in, ..
            }
            | Kind::General {
                wcs_out, wcs_in, ..
            } => wcs_out.distortion().is_some() || wcs_in.distortion().is_some(),
            _ => false,
        }
    }

    /// Whether both image planes are non-celestial ([`PixelTransform::linear`]).
    ///
    /// ```
    /// use reproject::pixel_transform::PixelTransform;
    /// use reproject::wcs::Wcs;
    /// let xy = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCDELT1 = 2\n")?;
    /// let tan = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
    ///     CRVAL2 = 0\n")?;
    /// assert!(PixelTransform::new(&xy, &xy)?.is_linear());
    /// assert!(!PixelTransform::new(&tan, &tan)?.is_linear());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_linear(&self) -> bool {
        matches!(self.kind, Kind::Linear { .. })
    }

    /// The two planes and world conversions of a linear-plane transform.
    pub(crate) fn linear_planes(&self) -> Option<(&LinearPlane, &LinearPlane, [Conversion; 2])> {
        match &self.kind {
            Kind::Linear {
                out,
                inp,
                conversions,
            } => Some((out, inp, *conversions)),
            _ => None,
        }
    }

    /// Whether the input column depends on the output column only and the input row on the
    /// output row only (two non-celestial planes with diagonal matrices): then
    /// [`PixelTransform::map_axis`] gives [`PixelTransform::map`]'s numbers axis by axis.
    ///
    /// ```
    /// use reproject::pixel_transform::PixelTransform;
    /// use reproject::wcs::Wcs;
    /// let xy = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCDELT1 = 2\n")?;
    /// let rotated = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nPC1_2 = 0.5\n")?;
    /// assert!(PixelTransform::new(&xy, &xy)?.is_separable());
    /// assert!(!PixelTransform::new(&xy, &rotated)?.is_separable()); // x mixes into y
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_separable(&self) -> bool {
        matches!(&self.kind, Kind::Linear { out, inp, .. } if out.is_diagonal() && inp.is_diagonal())
    }

    /// For a separable transform, the input coordinate along `axis` (0: columns, 1: rows) of
    /// output coordinate `p` along the same axis (NaN where there is none); NaN otherwise.
    ///
    /// ```
    /// use reproject::pixel_transform::PixelTransform;
    /// use reproject::wcs::Wcs;
    /// let out = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCDELT1 = 2\n").unwrap();
    /// let inp = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX2 = 3\n").unwrap();
    /// let t = PixelTransform::new(&out, &inp).unwrap();
    /// assert!(t.is_separable());
    /// assert_eq!((t.map_axis(0, 5.0), t.map_axis(1, 5.0)), t.map(5.0, 5.0).unwrap());
    /// ```
    #[inline]
    pub fn map_axis(&self, axis: usize, p: f64) -> f64 {
        match &self.kind {
            Kind::Linear {
                out,
                inp,
                conversions,
            } => {
                let w = conversions[axis].apply(out.axis_pixel_to_world(axis, p));
                let q = inp.axis_world_to_pixel(axis, w);
                if q.is_finite() {
                    q
                } else {
                    f64::NAN
                }
            }
            _ => f64::NAN,
        }
    }

    /// The homography `H` (row-major) when the fast path is in use: the input pixel of output
    /// pixel (x, y) is `(X/W, Y/W)` with `(X, Y, W) = H·(x, y, 1)`, valid where `W > 0`.
    ///
    /// ```
    /// # use reproject::pixel_transform::PixelTransform;
    /// # use reproject::wcs::Wcs;
    /// # let wcs = |proj: &str, crpix: f64, ra: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---{proj}'\nCTYPE2 = 'DEC--{proj}'\nCRPIX1 = {crpix}\nCRPIX2 = {crpix}\n\
    /// #      CRVAL1 = {ra}\nCRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n"));
    /// let (tan, car) = (wcs("TAN", 50.0, 150.0)?, wcs("CAR", 50.0, 150.0)?);
    /// let t = PixelTransform::new(&tan, &wcs("TAN", 40.0, 150.3)?)?;
    /// let h = t.homography().unwrap();
    /// let (x, y) = (10.0, 20.0);
    /// let w = h[2][0] * x + h[2][1] * y + h[2][2];
    /// let px = (h[0][0] * x + h[0][1] * y + h[0][2]) / w;
    /// let py = (h[1][0] * x + h[1][1] * y + h[1][2]) / w;
    /// assert_eq!(t.map(x, y), Some((px, py)));
    /// assert_eq!(PixelTransform::new(&tan, &car)?.homography(), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn homography(&self) -> Option<[[f64; 3]; 3]> {
        match &self.kind {
            Kind::Homography(h) => Some(*h),
            Kind::Vector { .. } | Kind::General { .. } | Kind::Linear { .. } | Kind::Table(_) => {
                None
            }
        }
    }

    /// The input pixel seen by output pixel (`x`, `y`), or `None` where the output pixel has
    /// no sky position or its sky position has no input pixel.
    ///
    /// ```
    /// # use reproject::pixel_transform::PixelTransform;
    /// # use reproject::wcs::Wcs;
    /// # let wcs = |proj: &str, crpix: f64, ra: f64| Wcs::from_header_str(&format!(
    /// #     "CTYPE1 = 'RA---{proj}'\nCTYPE2 = 'DEC--{proj}'\nCRPIX1 = {crpix}\nCRPIX2 = {crpix}\n\
    /// #      CRVAL1 = {ra}\nCRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n"));
    /// let (front, back) = (wcs("TAN", 1.0, 0.0)?, wcs("TAN", 1.0, 180.0)?);
    /// // CRPIX = 1 is 0-based pixel (0, 0)
    /// let (x, y) = PixelTransform::new(&front, &front)?.map(3.0, 4.0).unwrap();
    /// assert!((x - 3.0).abs() < 1e-9 && (y - 4.0).abs() < 1e-9);
    /// // the reference point of `front` is the antipode of that of `back`: no TAN pixel
    /// assert_eq!(PixelTransform::new(&front, &back)?.map(0.0, 0.0), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn map(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        match &self.kind {
            Kind::Homography(h) => {
                let w = h[2][0] * x + h[2][1] * y + h[2][2];
                // TAN's near-hemisphere test; NaN fails it too.
                if w.is_nan() || w <= 0.0 {
                    return None;
                }
                let px = (h[0][0] * x + h[0][1] * y + h[0][2]) / w;
                let py = (h[1][0] * x + h[1][1] * y + h[1][2]) / w;
                (px.is_finite() && py.is_finite()).then_some((px, py))
            }
            Kind::Vector { wcs_in, .. } | Kind::General { wcs_in, .. } => {
                let (u, v) = self.to_input_intermediate(x, y)?;
                wcs_in.intermediate_to_image(u, v)
            }
            Kind::Linear {
                out,
                inp,
                conversions: [ca, cb],
            } => {
                let (a, b) = out.pixel_to_world(x, y);
                let (px, py) = inp.world_to_pixel(ca.apply(a), cb.apply(b));
                (px.is_finite() && py.is_finite()).then_some((px, py))
            }
            Kind::Table(table) => table.get(x, y),
        }
    }
}

impl PixelTransform {
    /// [`PixelTransform::map`] of the pixels `cols` of output row `y` into `xs`, `ys` (NaN where
    /// `map` gives `None`), the same bits. Where the input's inverse iterates (SIP), it runs
    /// for [`ROW_LANES`] pixels at once.
    ///
    /// # Panics
    /// If `xs` or `ys` is shorter than `cols`.
    pub(crate) fn map_row(&self, y: f64, cols: Range<usize>, xs: &mut [f64], ys: &mut [f64]) {
        let wcs_in = match &self.kind {
            Kind::Vector { wcs_in, .. } | Kind::General { wcs_in, .. }
                if wcs_in.inverts_in_lanes() =>
            {
                wcs_in
            }
            _ => {
                for ((c, px), py) in cols.zip(xs.iter_mut()).zip(ys.iter_mut()) {
                    (*px, *py) = self.map(c as f64, y).unwrap_or((f64::NAN, f64::NAN));
                }
                return;
            }
        };
        let width = cols.len();
        for start in (0..width).step_by(ROW_LANES) {
            let lanes = ROW_LANES.min(width - start);
            let (mut u, mut v) = ([f64::NAN; ROW_LANES], [f64::NAN; ROW_LANES]);
            for l in 0..lanes {
                let x = (cols.start + start + l) as f64;
                if let Some((a, b)) = self.to_input_intermediate(x, y) {
                    (u[l], v[l]) = (a, b);
                }
            }
            let pixels = wcs_in.intermediate_to_image_lanes(u, v);
            for (l, p) in pixels.into_iter().take(lanes).enumerate() {
                (xs[start + l], ys[start + l]) = p.unwrap_or((f64::NAN, f64::NAN));
            }
        }
    }

    /// A sky path ([`Kind::Vector`], [`Kind::General`]) up to the input's intermediate
    /// coordinates, before its linear step and distortion (the rest of
    /// [`PixelTransform::map`]: [`CelestialTransform::intermediate_to_image`]); `None` where
    /// there is no position by then.
    #[inline]
    fn to_input_intermediate(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        match &self.kind {
            Kind::Vector {
                wcs_out,
                wcs_in,
                rotation: m,
                frame,
            } => {
                let v = wcs_out.pixel_to_native_vector(x, y)?;
                let w = [
                    m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
                    m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
                    m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
                ];
                // At a native pole the longitude is undefined and WCSLIB's spherical formulas
                // pick a particular one; follow them there (a line of pixels of an all-sky
                // map at most).
                if w[0].abs() + w[1].abs() < POLE * w[2].abs() {
                    let (lon, lat) = sky_lon_lat(wcs_out, frame.as_deref(), x, y)?;
                    return wcs_in.world_to_intermediate(lon, lat);
                }
                wcs_in.native_vector_to_intermediate(w)
            }
            Kind::General {
                wcs_out,
                wcs_in,
                frame,
            } => {
                let (lon, lat) = sky_lon_lat(wcs_out, frame.as_deref(), x, y)?;
                wcs_in.world_to_intermediate(lon, lat)
            }
            _ => unreachable!("only sky paths have intermediate coordinates"),
        }
    }
}

/// Pixels per group of [`PixelTransform::map_row`]'s lockstep inversions.
const ROW_LANES: usize = 8;

/// Native directions this close to a pole (in |x| + |y| relative to |z|) take the celestial
/// path: 1e-12 is 2e-10 deg from the pole.
const POLE: f64 = 1e-12;

/// Output pixel → world in the input's frame, with WCSLIB's arithmetic.
#[inline]
fn sky_lon_lat(
    wcs_out: &CelestialTransform,
    frame: Option<&FrameTransform>,
    x: f64,
    y: f64,
) -> Option<(f64, f64)> {
    let (lon, lat) = wcs_out.pixel_to_world(x, y)?;
    Some(match frame {
        Some(f) => f.apply(lon, lat),
        None => (lon, lat),
    })
}

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
const SWAP_XY: Mat3 = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];

/// The frame conversion from the output WCS's frame to the input's, `None` if they agree.
fn frame_change(
    out: &CelestialTransform,
    inp: &CelestialTransform,
) -> Result<Option<FrameTransform>> {
    if out.frame() == inp.frame() {
        return Ok(None);
    }
    if let (CelestialFrame::Other(a), CelestialFrame::Other(b)) = (out.frame(), inp.frame())
        && a.get(..4) == b.get(..4)
    {
        // Solar frames of two observers or times (e.g. helioprojective from Earth and from
        // Venus): never silently the identity.
        return Err(Error::Unsupported(format!(
            "the output and input are both in '{}' frames but not the same one \
                 (output: {a}; input: {b}): converting between them is not implemented",
            &a[..4]
        )));
    }
    let f = FrameTransform::new(out.frame(), inp.frame()).map_err(|e| {
        Error::InvalidArgument(format!(
            "cannot convert between the output frame {:?} and the input frame {:?}: {e}",
            out.frame(),
            inp.frame()
        ))
    })?;
    Ok((!f.is_identity()).then_some(f))
}

fn is_plain_tan(c: &CelestialTransform) -> bool {
    c.projection().code() == ProjectionCode::Tan
        && c.projection().offset() == (0.0, 0.0)
        && c.distortion().is_none()
}

/// `H = A_in⁻¹ · P · Rᵀ_in · F · R_out · Q · A_out` in homogeneous coordinates, where `A` is
/// the pixel → plane affine map, `Q` the plane → native direction lift, `R` native → celestial
/// rotations, `F` the frame rotation and `P` the direction → plane central projection.
fn homography(out: &CelestialTransform, inp: &CelestialTransform, frame: &Mat3) -> Mat3 {
    let r0 = crate::wcs::trig::R2D;
    // Output pixel (0-based, homogeneous) → plane (u, v, 1).
    let a_out = affine_pixel_to_plane(out);
    // Plane (u, v, 1) → native direction (−v, u, r0).
    let q = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, r0]];
    // Native → celestial of the output, celestial → native of the input.
    let r_out = native_to_celestial_matrix(out);
    let r_in_t = transpose(native_to_celestial_matrix(inp));
    // Native direction (a, b, c) → plane (r0·b, −r0·a, c) homogeneous: x = r0 b/c, y = −r0 a/c.
    let p = [[0.0, r0, 0.0], [-r0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    // Plane (homogeneous) → input pixel (0-based).
    let a_in_inv = affine_plane_to_pixel(inp);
    // The celestial transforms work in (longitude, latitude) pixel order; images with the
    // latitude axis first swap the two pixel coordinates on the way in and out.
    let swap = |c: &CelestialTransform| {
        if c.pixel_axes_swapped() {
            SWAP_XY
        } else {
            IDENTITY
        }
    };
    let chain = [
        swap(inp),
        a_in_inv,
        p,
        r_in_t,
        *frame,
        r_out,
        q,
        a_out,
        swap(out),
    ];
    chain.iter().skip(1).fold(chain[0], |acc, m| mul(&acc, m))
}

/// 0-based pixel → intermediate plane coordinates, as a homogeneous affine matrix.
fn affine_pixel_to_plane(c: &CelestialTransform) -> Mat3 {
    let m = c.linear().matrix();
    let [c1, c2] = c.linear().crpix();
    // u = m · ((x + 1) − crpix)
    let (ox, oy) = (1.0 - c1, 1.0 - c2);
    [
        [m[0][0], m[0][1], m[0][0] * ox + m[0][1] * oy],
        [m[1][0], m[1][1], m[1][0] * ox + m[1][1] * oy],
        [0.0, 0.0, 1.0],
    ]
}

/// Intermediate plane coordinates → 0-based pixel, as a homogeneous affine matrix.
fn affine_plane_to_pixel(c: &CelestialTransform) -> Mat3 {
    let inv = c.linear().inverse();
    let [c1, c2] = c.linear().crpix();
    [
        [inv[0][0], inv[0][1], c1 - 1.0],
        [inv[1][0], inv[1][1], c2 - 1.0],
        [0.0, 0.0, 1.0],
    ]
}

/// The rotation taking native unit vectors to celestial unit vectors, read off the spherical
/// rotation by mapping the native axes.
fn native_to_celestial_matrix(c: &CelestialTransform) -> Mat3 {
    let rot = c.rotation();
    let columns = [(0.0, 0.0), (90.0, 0.0), (0.0, 90.0)].map(|(phi, theta)| {
        let (lon, lat) = rot.native_to_celestial(phi, theta);
        unit_vector(lon, lat)
    });
    let mut m = [[0.0; 3]; 3];
    for (j, col) in columns.iter().enumerate() {
        for i in 0..3 {
            m[i][j] = col[i];
        }
    }
    m
}

fn unit_vector(lon: f64, lat: f64) -> [f64; 3] {
    let (sl, cl) = lon.to_radians().sin_cos();
    let (sb, cb) = lat.to_radians().sin_cos();
    [cb * cl, cb * sl, sb]
}

fn transpose(m: Mat3) -> Mat3 {
    let mut t = [[0.0; 3]; 3];
    for (i, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            t[j][i] = *v;
        }
    }
    t
}

fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut c = [[0.0; 3]; 3];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TAN-SIP input with a strong distortion (points far out diverge), in header order
    /// `first`/`second` (latitude first swaps the image axes).
    fn sip_input(first: &str, second: &str) -> Wcs {
        let (crval1, crval2) = if first.starts_with("DEC") {
            (2.0, 150.0)
        } else {
            (150.0, 2.0)
        };
        Wcs::from_header_str(&format!(
            "NAXIS = 2\nNAXIS1 = 60\nNAXIS2 = 50\nCTYPE1 = '{first}'\nCTYPE2 = '{second}'\n\
             CRPIX1 = 30.5\nCRPIX2 = 25.5\nCRVAL1 = {crval1}\nCRVAL2 = {crval2}\nCDELT1 = -0.001\n\
             CDELT2 = 0.001\nCROTA2 = 12.0\nA_ORDER = 3\nB_ORDER = 3\nA_2_0 = 2e-3\n\
             A_0_2 = -1e-3\nA_1_1 = 5e-4\nA_3_0 = 1e-5\nB_0_2 = 1.5e-3\nB_1_1 = 4e-4\n\
             B_2_1 = -2e-5\n"
        ))
        .unwrap()
    }

    /// [`PixelTransform::map_row`] gives [`PixelTransform::map`]'s bits on the unit-vector
    /// path (same frame, galactic output) and the general path (FK4 with its E-terms, and
    /// the same frame by `PixelTransform::general`), for rows of any width and offset,
    /// including pixels with no input position, latitude-first SIP and TPV.
    #[test]
    fn rows_give_maps_bits() {
        let out = |ctype: (&str, &str), crval: (f64, f64), extra: &str| {
            Wcs::from_header_str(&format!(
                "CTYPE1 = '{}'\nCTYPE2 = '{}'\nCRPIX1 = 20\nCRPIX2 = 18\nCRVAL1 = {}\n\
                 CRVAL2 = {}\nCDELT1 = -0.0012\nCDELT2 = 0.0012\nCROTA2 = -25.0\n{extra}",
                ctype.0, ctype.1, crval.0, crval.1
            ))
            .unwrap()
        };
        let tan_icrs = out(("RA---TAN", "DEC--TAN"), (150.01, 2.02), "");
        let galactic = out(("GLON-TAN", "GLAT-TAN"), (236.8, 42.1), "");
        let fk4 = out(
            ("RA---TAN", "DEC--TAN"),
            (149.4, 2.3),
            "RADESYS = 'FK4'\nEQUINOX = 1950\n",
        );
        let mut checked = 0;
        let tpv_input = Wcs::from_header_str(
            "NAXIS = 2\nNAXIS1 = 60\nNAXIS2 = 50\nCTYPE1 = 'RA---TPV'\nCTYPE2 = 'DEC--TPV'\n\
             CRPIX1 = 30.5\nCRPIX2 = 25.5\nCRVAL1 = 150.0\nCRVAL2 = 2.0\nCD1_1 = -0.001\n\
             CD1_2 = 0.0002\nCD2_1 = 0.0001\nCD2_2 = 0.001\nPV1_1 = 1.0\nPV1_4 = 0.8\n\
             PV1_7 = -30.0\nPV1_3 = 0.05\nPV2_1 = 1.0\nPV2_6 = 0.5\nPV2_9 = 20.0\n",
        )
        .unwrap();
        for wcs_in in [
            sip_input("RA---TAN-SIP", "DEC--TAN-SIP"),
            sip_input("DEC--TAN-SIP", "RA---TAN-SIP"),
            tpv_input,
        ] {
            let transforms = [
                PixelTransform::new(&tan_icrs, &wcs_in).unwrap(),
                PixelTransform::new(&galactic, &wcs_in).unwrap(),
                PixelTransform::new(&fk4, &wcs_in).unwrap(),
                PixelTransform::general(&tan_icrs, &wcs_in).unwrap(),
            ];
            assert!(matches!(transforms[0].kind, Kind::Vector { .. }));
            assert!(matches!(transforms[2].kind, Kind::General { .. }));
            for t in &transforms {
                for (row, cols) in [(0, 0..1), (3, 0..3), (17, 2..6), (18, 5..18), (40, 0..61)] {
                    let y = row as f64 - 5.0;
                    let (mut xs, mut ys) = (vec![0.0; cols.len()], vec![0.0; cols.len()]);
                    t.map_row(y, cols.clone(), &mut xs, &mut ys);
                    for (i, c) in cols.enumerate() {
                        let want = t.map(c as f64, y).unwrap_or((f64::NAN, f64::NAN));
                        assert_eq!(
                            (xs[i].to_bits(), ys[i].to_bits()),
                            (want.0.to_bits(), want.1.to_bits()),
                            "row {y}, column {c}"
                        );
                        checked += usize::from(!want.0.is_nan());
                    }
                }
            }
        }
        // Most pixels have a position; some (far out, where SIP diverges or gives NaN) do not.
        assert!(checked > 500, "{checked}");
    }
}

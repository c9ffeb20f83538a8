//! Image planes whose two world axes are not celestial: linear (`PIXX`, `LINEAR`, blank,
//! spectral `FREQ`, ...) or logarithmic (`-LOG`) axes, as WCSLIB evaluates them.
//!
//! A pixel (x, y) goes through the 2-D linear step to intermediate coordinates and each axis
//! to its world value on its own: `CRVAL + x` for a linear axis (`wcsp2s` and `spcx2s` for a
//! spectral axis with no algorithm code), `CRVAL · exp(x / CRVAL)` for a logarithmic one
//! (`logx2s`). With no projection, no sky and no iteration, the whole pixel → world → pixel
//! chain of two such planes is a few operations per pixel, in WCSLIB's own order.
//!
//! ```
//! use reproject::wcs::{plane::LinearPlane, Wcs};
//! let wcs = Wcs::from_header_str(
//!     "CTYPE1 = 'PIXX'\nCTYPE2 = 'PIXY'\nCRPIX1 = 1\nCRPIX2 = 1\nCRVAL1 = 10\nCDELT1 = 2\n",
//! )
//! .unwrap();
//! let plane = LinearPlane::new(&wcs).unwrap();
//! assert_eq!(plane.pixel_to_world(3.0, 4.0), (16.0, 4.0));
//! assert_eq!(plane.world_to_pixel(16.0, 4.0), (3.0, 4.0));
//! ```

use serde::{Deserialize, Serialize};

use super::linear::Linear2;
use super::spectral::SpectralAlgorithm;
use super::{AxisType, Wcs, WcsParams};
use crate::error::{Error, Result};

/// How one non-celestial axis turns its intermediate coordinate into a world value.
///
/// ```
/// use reproject::wcs::plane::AxisWorld;
/// assert_eq!(AxisWorld::Linear(10.0).to_world(2.5), 12.5);
/// let log = AxisWorld::Log(1.4e9);
/// assert_eq!(log.to_world(0.0), 1.4e9); // CRVAL at the reference pixel
/// assert!((log.to_world(1.4e9) - 1.4e9 * std::f64::consts::E).abs() < 1e-3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum AxisWorld {
    /// `world = CRVAL + x`.
    Linear(f64),
    /// `world = CRVAL · exp(x / CRVAL)`.
    Log(f64),
    /// A spectral algorithm (`WAVE-F2W`, ...).
    Spectral(SpectralAlgorithm),
}

/// How non-celestial axis `i` of `params` turns its intermediate coordinate into a world value.
pub(crate) fn axis_world(params: &WcsParams, i: usize) -> Result<AxisWorld> {
    match &params.axis_types[i] {
        AxisType::Linear => Ok(AxisWorld::Linear(params.crval[i])),
        // WCSLIB's logx2s and logs2x refuse a reference value <= 0 (LOGERR_BAD_LOG_REF_VAL).
        AxisType::Log if params.crval[i] > 0.0 => Ok(AxisWorld::Log(params.crval[i])),
        AxisType::Log => Err(Error::InvalidValue {
            keyword: format!("CRVAL{}", i + 1),
            reason: format!(
                "{} is no reference value of a logarithmic axis (it must be > 0)",
                params.crval[i]
            ),
        }),
        AxisType::SpectralAlgorithm => SpectralAlgorithm::new(
            &params.ctype[i],
            params.crval[i],
            params.restfrq,
            params.restwav,
        )
        .map(|a| match a {
            Some(a) => AxisWorld::Spectral(a),
            None => AxisWorld::Linear(params.crval[i]),
        }),
        AxisType::Unsupported(code) => Err(Error::UnsupportedAxis(code.clone())),
        AxisType::Longitude | AxisType::Latitude => Err(Error::InvalidArgument(format!(
            "axis {} is celestial",
            i + 1
        ))),
    }
}

impl AxisWorld {
    /// Intermediate coordinate → world value.
    ///
    /// ```
    /// use reproject::wcs::plane::AxisWorld;
    /// assert_eq!(AxisWorld::Linear(-3.0).to_world(5.0), 2.0);
    /// let x = 1.4e9 * 2f64.ln(); // a doubling of a logarithmic axis
    /// assert!((AxisWorld::Log(1.4e9).to_world(x) - 2.8e9).abs() < 1e-3);
    /// ```
    #[inline]
    pub fn to_world(self, x: f64) -> f64 {
        match self {
            AxisWorld::Linear(crval) => crval + x,
            AxisWorld::Log(crval) => crval * (x / crval).exp(),
            AxisWorld::Spectral(a) => a.x_to_s(x),
        }
    }

    /// World value → intermediate coordinate (NaN for a logarithmic axis at a value ≤ 0, as
    /// WCSLIB's `logs2x` rejects it).
    ///
    /// ```
    /// use reproject::wcs::plane::AxisWorld;
    /// assert_eq!(AxisWorld::Linear(-3.0).to_intermediate(2.0), 5.0);
    /// let log = AxisWorld::Log(1.4e9);
    /// let x = log.to_intermediate(2.8e9);
    /// assert!((log.to_world(x) - 2.8e9).abs() < 1e-3);
    /// assert!(log.to_intermediate(-1.0).is_nan() && log.to_intermediate(0.0).is_nan());
    /// ```
    #[inline]
    pub fn to_intermediate(self, w: f64) -> f64 {
        match self {
            AxisWorld::Linear(crval) => w - crval,
            AxisWorld::Log(crval) if w > 0.0 => crval * (w / crval).ln(),
            AxisWorld::Log(_) => f64::NAN,
            AxisWorld::Spectral(a) => a.s_to_x(w),
        }
    }
}

/// The non-celestial plane of pixel axes 1 and 2 of a WCS.
///
/// ```
/// use reproject::wcs::{plane::LinearPlane, Wcs};
/// let wcs = Wcs::from_header_str("CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ-LOG'\nCRPIX1 = 1\nCRPIX2 = 1\n\
///     CRVAL1 = 10\nCRVAL2 = 1.4e9\nCDELT1 = 2\nCDELT2 = 1e6\n")?;
/// let plane = LinearPlane::new(&wcs)?;
/// assert_eq!(plane.pixel_to_world(0.0, 0.0), (10.0, 1.4e9));
/// let (x, y) = plane.world_to_pixel(16.0, 2.8e9);
/// assert!((x - 3.0).abs() < 1e-12 && (y - 1.4e3 * 2f64.ln()).abs() < 1e-9);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinearPlane {
    linear: Linear2,
    world: [AxisWorld; 2],
}

impl LinearPlane {
    /// The plane of `wcs`'s first two axes; an error when they are celestial, are fed by the
    /// other pixel axes, carry SIP distortion or use an algorithm this crate does not evaluate.
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let spectrum = Wcs::from_header_str("CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ'\nCRVAL2 = 1.4e9\n")?;
    /// assert!(LinearPlane::new(&spectrum).is_ok());
    /// let sky = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    ///     CRVAL1 = 150\nCRVAL2 = 30\n")?;
    /// assert!(LinearPlane::new(&sky).is_err()); // celestial axes
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(wcs: &Wcs) -> Result<LinearPlane> {
        if wcs.has_celestial() {
            return Err(Error::InvalidArgument(
                "a linear plane needs non-celestial axes".into(),
            ));
        }
        if wcs.sip().is_some() {
            return Err(Error::UnsupportedAxis(
                "SIP distortion on non-celestial axes".into(),
            ));
        }
        let p = wcs.params();
        if p.naxis() < 2 {
            return Err(Error::UnsupportedAxis(format!(
                "a WCS with {} axis: the engine reprojects image planes of two axes",
                p.naxis()
            )));
        }
        let coupled =
            (2..p.naxis()).any(|k| (0..2).any(|i| p.pc[i][k] != 0.0 || p.pc[k][i] != 0.0));
        if coupled {
            return Err(Error::UnsupportedAxis(
                "the first two pixel axes are coupled to the others by the PC matrix".into(),
            ));
        }
        Ok(LinearPlane {
            linear: wcs.linear().sub2(0, 1)?,
            world: [axis_world(p, 0)?, axis_world(p, 1)?],
        })
    }

    /// The 2-D linear step (CRPIX, `CDELT·PC`).
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 5\nCDELT2 = 0.5\n")?;
    /// let plane = LinearPlane::new(&wcs)?;
    /// assert_eq!(plane.linear().crpix(), [5.0, 0.0]);
    /// assert_eq!(plane.linear().matrix(), [[1.0, 0.0], [0.0, 0.5]]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn linear(&self) -> &Linear2 {
        &self.linear
    }

    /// The world function of each axis.
    ///
    /// ```
    /// use reproject::wcs::{plane::{AxisWorld, LinearPlane}, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ-LOG'\n\
    ///     CRVAL1 = 10\nCRVAL2 = 1.4e9\n")?;
    /// let world = LinearPlane::new(&wcs)?.world();
    /// assert_eq!(world, [AxisWorld::Linear(10.0), AxisWorld::Log(1.4e9)]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn world(&self) -> [AxisWorld; 2] {
        self.world
    }

    /// Whether each world axis depends on its own pixel axis only (no PC rotation or skew):
    /// then [`LinearPlane::axis_pixel_to_world`] and [`LinearPlane::axis_world_to_pixel`]
    /// give the same numbers as the 2-D maps, one axis at a time.
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let plain = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCDELT1 = 2\n")?;
    /// assert!(LinearPlane::new(&plain)?.is_diagonal());
    /// let skewed = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nPC1_2 = 0.1\n")?;
    /// assert!(!LinearPlane::new(&skewed)?.is_diagonal());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_diagonal(&self) -> bool {
        let (m, inv) = (self.linear.matrix(), self.linear.inverse());
        m[0][1] == 0.0 && m[1][0] == 0.0 && inv[0][1] == 0.0 && inv[1][0] == 0.0
    }

    /// Pixel coordinate `p` (0-based) along `axis` (0 or 1) → world value, for a diagonal
    /// plane: the 2-D arithmetic, whose other terms are skipped zeros.
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 1\nCRPIX2 = 1\n\
    ///     CRVAL1 = 10\nCDELT1 = 2\nCDELT2 = 0.5\n")?;
    /// let plane = LinearPlane::new(&wcs)?;
    /// assert_eq!(plane.axis_pixel_to_world(0, 3.0), 16.0);
    /// assert_eq!(plane.axis_pixel_to_world(1, 4.0), 2.0);
    /// assert_eq!(plane.pixel_to_world(3.0, 4.0), (16.0, 2.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn axis_pixel_to_world(&self, axis: usize, p: f64) -> f64 {
        let (u, v) = self.linear.pix_to_img(p, p);
        self.world[axis].to_world(if axis == 0 { u } else { v })
    }

    /// World value `w` along `axis` → pixel coordinate (0-based), for a diagonal plane.
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 1\nCRPIX2 = 1\n\
    ///     CRVAL1 = 10\nCDELT1 = 2\nCDELT2 = 0.5\n")?;
    /// let plane = LinearPlane::new(&wcs)?;
    /// assert_eq!(plane.axis_world_to_pixel(0, 16.0), 3.0);
    /// assert_eq!(plane.axis_world_to_pixel(1, 2.0), 4.0);
    /// assert_eq!(plane.world_to_pixel(16.0, 2.0), (3.0, 4.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn axis_world_to_pixel(&self, axis: usize, w: f64) -> f64 {
        let t = self.world[axis].to_intermediate(w);
        let (x, y) = self.linear.img_to_pix(t, t);
        if axis == 0 {
            x
        } else {
            y
        }
    }

    /// Pixel (0-based) → world values of the two axes.
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 1\nCRPIX2 = 1\n\
    ///     CRVAL1 = 10\nCRVAL2 = -1\nPC1_2 = 1\nPC2_1 = -1\nPC1_1 = 0\nPC2_2 = 0\n")?;
    /// let plane = LinearPlane::new(&wcs)?;
    /// // A quarter turn: world 1 follows pixel y, world 2 follows -x.
    /// assert_eq!(plane.pixel_to_world(3.0, 4.0), (14.0, -4.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pixel_to_world(&self, x: f64, y: f64) -> (f64, f64) {
        let (u, v) = self.linear.pix_to_img(x, y);
        (self.world[0].to_world(u), self.world[1].to_world(v))
    }

    /// World values → pixel (0-based).
    ///
    /// ```
    /// use reproject::wcs::{plane::LinearPlane, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 1\nCRPIX2 = 1\n\
    ///     CRVAL1 = 10\nCRVAL2 = -1\nPC1_2 = 1\nPC2_1 = -1\nPC1_1 = 0\nPC2_2 = 0\n")?;
    /// let plane = LinearPlane::new(&wcs)?;
    /// assert_eq!(plane.world_to_pixel(14.0, -4.0), (3.0, 4.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn world_to_pixel(&self, a: f64, b: f64) -> (f64, f64) {
        let (u, v) = (
            self.world[0].to_intermediate(a),
            self.world[1].to_intermediate(b),
        );
        self.linear.img_to_pix(u, v)
    }
}

/// The kind of high-level object astropy makes of a world axis (`world_axis_object_classes`):
/// reproject matches the world axes of the two WCS by it.
///
/// ```
/// use reproject::wcs::{plane::WorldClass, Wcs};
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCTYPE3 = 'STOKES'\n\
///     CRVAL1 = 150\nCRVAL2 = 30\n")?;
/// assert_eq!(WorldClass::of(&wcs, 1), WorldClass::Celestial);
/// assert_eq!(WorldClass::of(&wcs, 2), WorldClass::Stokes);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorldClass {
    /// One of a longitude/latitude pair (a `SkyCoord`).
    Celestial,
    /// A spectral axis (a `SpectralCoord`, given as a `Quantity`).
    Spectral,
    /// A time axis (a `Time`).
    Time,
    /// A Stokes axis (a `StokesCoord`).
    Stokes,
    /// Anything else (a `Quantity` in `CUNITi`).
    Quantity,
}

impl WorldClass {
    /// The class of world axis `i` of `wcs`.
    ///
    /// ```
    /// use reproject::wcs::{plane::WorldClass, Wcs};
    /// let wcs =
    ///     Wcs::from_header_str("CTYPE1 = 'PIXX'\nCTYPE2 = 'WAVE'\nCTYPE3 = 'TIME'\n").unwrap();
    /// assert_eq!(WorldClass::of(&wcs, 0), WorldClass::Quantity);
    /// assert_eq!(WorldClass::of(&wcs, 1), WorldClass::Spectral);
    /// assert_eq!(WorldClass::of(&wcs, 2), WorldClass::Time);
    /// ```
    pub fn of(wcs: &Wcs, i: usize) -> WorldClass {
        let p = wcs.params();
        if matches!(p.axis_types[i], AxisType::Longitude | AxisType::Latitude) {
            return WorldClass::Celestial;
        }
        let ctype = p.ctype[i].trim();
        let upper = ctype.to_ascii_uppercase();
        if upper.starts_with("UT(") || upper.starts_with("TT(") {
            return WorldClass::Time;
        }
        let name = upper.split('-').next().unwrap_or("");
        if super::units::spectral_si_unit(super::params::spectral_kind(ctype)).is_some() {
            return WorldClass::Spectral;
        }
        match name {
            "TIME" | "TAI" | "TT" | "TDT" | "ET" | "IAT" | "UT1" | "UTC" | "GMT" | "GPS"
            | "TCG" | "TCB" | "TDB" | "LOCAL" => WorldClass::Time,
            "STOKES" => WorldClass::Stokes,
            _ => WorldClass::Quantity,
        }
    }

    /// The name astropy gives the class in its messages.
    ///
    /// ```
    /// use reproject::wcs::plane::WorldClass;
    /// assert_eq!(WorldClass::Celestial.astropy_name(), "SkyCoord");
    /// assert_eq!(WorldClass::Spectral.astropy_name(), "Quantity"); // given as a Quantity
    /// assert_eq!(WorldClass::Stokes.astropy_name(), "StokesCoord");
    /// ```
    pub fn astropy_name(self) -> &'static str {
        match self {
            WorldClass::Celestial => "SkyCoord",
            WorldClass::Spectral | WorldClass::Quantity => "Quantity",
            WorldClass::Time => "Time",
            WorldClass::Stokes => "StokesCoord",
        }
    }
}

/// How a world value of one WCS becomes a world value of another along one axis:
/// `value · factor + offset` (the offset added only when it is not zero, so that the other
/// axes keep their exact values).
///
/// ```
/// use reproject::wcs::plane::Conversion;
/// let km_to_m = Conversion { factor: 1000.0, offset: 0.0 };
/// assert_eq!(km_to_m.apply(2.5), 2500.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Conversion {
    /// The unit conversion factor (exactly 1 where the units agree).
    pub factor: f64,
    /// The difference of the two reference times, for time axes (seconds).
    pub offset: f64,
}

impl Conversion {
    /// No change.
    ///
    /// ```
    /// use reproject::wcs::plane::Conversion;
    /// assert_eq!(Conversion::IDENTITY.apply(12.75), 12.75);
    /// // The zero offset is not added, so even the sign of a zero survives.
    /// assert!(Conversion::IDENTITY.apply(-0.0).is_sign_negative());
    /// ```
    pub const IDENTITY: Conversion = Conversion {
        factor: 1.0,
        offset: 0.0,
    };

    /// The converted value.
    ///
    /// ```
    /// use reproject::wcs::plane::Conversion;
    /// // Seconds from MJD 59000.5 → seconds from MJD 59000: half a day later.
    /// let shift = Conversion { factor: 1.0, offset: 43200.0 };
    /// assert_eq!(shift.apply(10.0), 43210.0);
    /// ```
    #[inline]
    pub fn apply(self, w: f64) -> f64 {
        let w = w * self.factor;
        if self.offset != 0.0 {
            w + self.offset
        } else {
            w
        }
    }
}

/// How each world value of `from` becomes a world value of `to` (astropy's high-level
/// objects in `world_to_pixel`): unchanged for celestial and spectral axes (spectral values
/// are SI on both sides), the unit conversion for other axes, and for time axes of one time
/// scale the shift between the two reference times. An error where astropy's
/// `pixel_to_pixel` fails (world axes of different kinds at the same position, units that do
/// not convert), and `Unsupported` for time axes in different scales or units.
///
/// ```
/// use reproject::wcs::{plane::world_conversions, Wcs};
/// let km =
///     Wcs::from_header_str("CTYPE1 = 'X'\nCUNIT1 = 'km'\nCTYPE2 = 'TIME'\nMJDREF = 59000.5\n")
///         .unwrap();
/// let m = Wcs::from_header_str("CTYPE1 = 'X'\nCUNIT1 = 'm'\nCTYPE2 = 'TIME'\nMJDREF = 59000\n")
///     .unwrap();
/// let c = world_conversions(&km, &m).unwrap();
/// assert_eq!((c[0].factor, c[1].offset), (1000.0, 43200.0));
/// ```
pub fn world_conversions(from: &Wcs, to: &Wcs) -> Result<Vec<Conversion>> {
    let n = from.naxis();
    if n != to.naxis() {
        return Err(Error::InvalidArgument(
            "number of dimensions in input and output WCS should match".into(),
        ));
    }
    let classes = |w: &Wcs| (0..n).map(|i| WorldClass::of(w, i)).collect::<Vec<_>>();
    let (cf, ct) = (classes(from), classes(to));
    if cf != ct {
        let names = |c: &[WorldClass]| {
            let mut names: Vec<&str> = Vec::new();
            for (i, k) in c.iter().enumerate() {
                // A celestial pair is one SkyCoord.
                if *k != WorldClass::Celestial || !c[..i].contains(&WorldClass::Celestial) {
                    names.push(k.astropy_name());
                }
            }
            names.join(", ")
        };
        return Err(Error::InvalidArgument(format!(
            "the world coordinate types of the two WCS do not match: expected the following \
             order of world arguments: {} (got {})",
            names(&ct),
            names(&cf)
        )));
    }
    let (pf, pt) = (from.params(), to.params());
    (0..n)
        .map(|i| match cf[i] {
            WorldClass::Celestial | WorldClass::Spectral => Ok(Conversion::IDENTITY),
            WorldClass::Time => time_conversion(pf, pt, i),
            WorldClass::Stokes | WorldClass::Quantity => {
                let factor =
                    super::units::conversion_factor(&pf.cunit[i], &pt.cunit[i]).map_err(|e| {
                        Error::InvalidArgument(format!(
                            "world axis {} ({} in '{}', {} in '{}'): {e}",
                            i + 1,
                            pf.ctype[i],
                            pf.cunit[i],
                            pt.ctype[i],
                            pt.cunit[i]
                        ))
                    })?;
                Ok(Conversion {
                    factor,
                    offset: 0.0,
                })
            }
        })
        .collect()
}

/// Time axis `i`: astropy's `Time(reference) + TimeDelta(value, format='sec')`, then the
/// offset from the other reference. One scale, unit (seconds) and set of other time keywords.
fn time_conversion(pf: &WcsParams, pt: &WcsParams, i: usize) -> Result<Conversion> {
    let (sf, st) = (pf.time_scale(i), pt.time_scale(i));
    let seconds = |u: &str| matches!(u.trim(), "" | "s");
    if sf != st
        || pf.time_reference != pt.time_reference
        || !seconds(&pf.cunit[i])
        || !seconds(&pt.cunit[i])
    {
        return Err(Error::Unsupported(format!(
            "time axes {} ({sf}) and {} ({st}) with different scales, units or time keywords \
             (converting between time scales is not implemented)",
            pf.ctype[i], pt.ctype[i]
        )));
    }
    let [fi, ff] = pf.mjdref.unwrap_or([0.0, 0.0]);
    let [ti, tf] = pt.mjdref.unwrap_or([0.0, 0.0]);
    Ok(Conversion {
        factor: 1.0,
        offset: ((fi - ti) + (ff - tf)) * 86400.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wcs(text: &str) -> Wcs {
        Wcs::from_header_str(text).unwrap()
    }

    #[test]
    fn logarithmic_axes_as_wcslib_s_logs2x() {
        let header = |crval: f64| {
            format!("CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ-LOG'\nCRVAL1 = 1\nCRVAL2 = {crval}\n")
        };
        for crval in [0.0, -1.4e9] {
            let e = LinearPlane::new(&wcs(&header(crval))).unwrap_err();
            assert!(matches!(&e, Error::InvalidValue { keyword, .. } if keyword == "CRVAL2"));
        }
        let plane = LinearPlane::new(&wcs(&header(1.4e9))).unwrap();
        assert!(plane.world_to_pixel(1.0, 0.0).1.is_nan());
        assert!(plane.world_to_pixel(1.0, -2.8e9).1.is_nan());
        assert!(plane.world_to_pixel(1.0, 2.8e9).1.is_finite());
    }

    #[test]
    fn the_plane_follows_the_nd_pipeline_bit_for_bit() {
        let w = wcs(
            "CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ-LOG'\nCRPIX1 = 3.5\nCRPIX2 = -2\n\
             CRVAL1 = 0.25\nCRVAL2 = 1.4e9\nCDELT1 = 0.1\nCDELT2 = 1e6\nPC1_2 = 0.3\n",
        );
        let plane = LinearPlane::new(&w).unwrap();
        for (x, y) in [(0.0, 0.0), (17.25, -3.5), (1e4, 2e3)] {
            let nd = w.pixel_to_world_nd(&[x, y]).unwrap();
            assert_eq!(plane.pixel_to_world(x, y), (nd[0], nd[1]));
            let back = w.world_to_pixel_nd(&nd).unwrap();
            assert_eq!(plane.world_to_pixel(nd[0], nd[1]), (back[0], back[1]));
        }
    }

    #[test]
    fn diagonal_planes_map_axis_by_axis_bit_for_bit() {
        for text in [
            "CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ-LOG'\nCRPIX1 = 3.5\nCRPIX2 = -2\nCRVAL1 = 0.25\n\
             CRVAL2 = 1.4e9\nCDELT1 = 0.1\nCDELT2 = 1e6\n",
            "CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 3.5\nCRPIX2 = -2\nPC1_1 = 0.3\nPC2_2 = -7\n",
        ] {
            let plane = LinearPlane::new(&wcs(text)).unwrap();
            assert!(plane.is_diagonal());
            for (x, y) in [(0.0, 0.0), (17.25, -3.5), (1e4, 2e3)] {
                let (a, b) = plane.pixel_to_world(x, y);
                assert_eq!(
                    (
                        plane.axis_pixel_to_world(0, x),
                        plane.axis_pixel_to_world(1, y)
                    ),
                    (a, b)
                );
                assert_eq!(
                    (
                        plane.axis_world_to_pixel(0, a),
                        plane.axis_world_to_pixel(1, b)
                    ),
                    plane.world_to_pixel(a, b)
                );
            }
        }
        let rotated = wcs("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nPC1_2 = 0.1\n");
        assert!(!LinearPlane::new(&rotated).unwrap().is_diagonal());
    }

    #[test]
    fn planes_that_cannot_be_evaluated_are_errors() {
        let coupled = wcs("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCTYPE3 = 'Z'\nPC1_3 = 0.5\n");
        assert!(matches!(
            LinearPlane::new(&coupled),
            Err(Error::UnsupportedAxis(_))
        ));
        let grism = wcs("CTYPE1 = 'X'\nCTYPE2 = 'WAVE-GRI'\nCRVAL2 = 1e-6\n");
        assert!(matches!(
            LinearPlane::new(&grism),
            Err(Error::UnsupportedAxis(_))
        ));
        let f2w = wcs("CTYPE1 = 'X'\nCTYPE2 = 'WAVE-F2W'\nCRVAL2 = 1e-6\n");
        assert!(LinearPlane::new(&f2w).is_ok());
        let sky = wcs("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n");
        assert!(LinearPlane::new(&sky).is_err());
        let tables = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCPDIS1 = 'LOOKUP'\n");
        assert!(matches!(tables, Err(Error::Unsupported(m)) if m.contains("CPDIS1")));
    }

    #[test]
    fn time_axes_of_one_scale_shift_by_their_references() {
        let time = |mjdref: f64, scale: &str| {
            wcs(&format!(
                "CTYPE1 = 'X'\nCTYPE2 = 'TIME'\nMJDREF = {mjdref}\nTIMESYS = '{scale}'\n"
            ))
        };
        let c = world_conversions(&time(59000.0, "TT"), &time(59000.0, "TT")).unwrap();
        assert_eq!(c, vec![Conversion::IDENTITY; 2]);
        let c = world_conversions(&time(59000.5, "TT"), &time(59000.0, "TT")).unwrap();
        assert_eq!(c[1].offset, 43200.0);
        // The same reference written as JDREF, MJDREFI/MJDREFF and DATEREF.
        for reference in [
            "JDREF = 2459001.0",
            "MJDREFI = 59000\nMJDREFF = 0.5",
            "DATEREF = '2020-05-31T12:00:00'",
        ] {
            let other = wcs(&format!(
                "CTYPE1 = 'X'\nCTYPE2 = 'TIME'\n{reference}\nTIMESYS = 'TT'\n"
            ));
            let c = world_conversions(&other, &time(59000.5, "TT")).unwrap();
            assert_eq!(c[1].offset, 0.0, "{reference}");
        }
        // TT axes (scale in the CTYPE) against TIME axes in TT.
        let tt = wcs("CTYPE1 = 'X'\nCTYPE2 = 'TT'\nMJDREF = 59000\nTIMESYS = 'TT'\n");
        assert!(world_conversions(&tt, &time(59000.0, "TT")).is_ok());
        let err = world_conversions(&time(59000.0, "TT"), &time(59000.0, "UTC")).unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
        let quantity = wcs("CTYPE1 = 'X'\nCTYPE2 = 'Y'\n");
        let err = world_conversions(&time(59000.0, "TT"), &quantity).unwrap_err();
        assert!(
            err.to_string()
                .contains("Quantity, Quantity (got Quantity, Time)"),
            "{err}"
        );
    }

    #[test]
    fn spectral_units_are_brought_to_si() {
        let ghz =
            wcs("CTYPE1 = 'X'\nCTYPE2 = 'FREQ'\nCUNIT2 = 'GHz'\nCRVAL2 = 1.4\nCDELT2 = 0.001\n");
        assert_eq!(ghz.params().cunit[1], "Hz");
        assert_eq!(ghz.params().crval[1], 1.4e9);
        assert_eq!(ghz.params().cdelt[1], 1e6);
        let bad = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'FREQ'\nCUNIT2 = 'm'\n");
        assert!(matches!(bad, Err(Error::InvalidValue { .. })), "{bad:?}");
    }
}

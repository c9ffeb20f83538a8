//! The optimal output WCS for a mosaic: reproject's `find_optimal_celestial_wcs` (reproject
//! 0.21), the same numbers from the same steps.
//!
//! ```text
//! per input:  the 4 outer corners of its pixels (-0.5 and n - 0.5) and its CRPIX position on
//!             the sky, in the output frame; its pixel scale (the smaller column norm of
//!             CDELT·PC, as reproject's `pixel_scale`)
//! reference:  the given sky position, or the normalised mean of the CRPIX unit vectors → CRVAL
//! CDELT:      (∓resolution, resolution), resolution = the smallest pixel scale unless given
//! [auto_rotate: the minimum-area rectangle around the corners (shapely/GEOS) → PC rotation]
//! CRPIX:      the corners in the new projection (CRPIX = 1, 1), shifted so that the lowest
//!             lie on pixel 0.5; the shape rounds (half to even) the corners' extent
//! ```
//!
//! The result carries the WCS, its FITS header text (with `NAXIS1`/`NAXIS2`, so that it can be
//! written as a `.hdr` file and given to the CLI's `--to`) and the shape, `(rows, columns)`.
//!
//! ```
//! use reproject::mosaic::optimal_wcs::{optimal_celestial_wcs, OptimalWcsOptions};
//! use reproject::wcs::Wcs;
//! let tile = |ra: f64| Wcs::from_header_str(&format!(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 20.5\nCRPIX2 = 15.5\n\
//!      CRVAL1 = {ra}\nCRVAL2 = 30\nCDELT1 = -0.002\nCDELT2 = 0.002\n"));
//! let (a, b) = (tile(150.0)?, tile(150.06)?);
//! let out = optimal_celestial_wcs(
//!     &[((30, 40), &a), ((30, 40), &b)],
//!     &OptimalWcsOptions::default(),
//! )?;
//! assert_eq!(out.shape, (30, 66));
//! let (ra, dec) = out.wcs.pixel_to_world(32.5, 14.5).unwrap(); // the centre of the mosaic
//! assert!((ra - 150.03).abs() < 1e-4 && (dec - 30.0).abs() < 1e-4);
//! assert_eq!(out.wcs.params().crval, vec![150.03, 30.000003400874075]); // as reproject
//! assert_eq!(Wcs::from_header_str(&out.header)?, out.wcs);
//! # Ok::<(), reproject::Error>(())
//! ```
//!
//! Frames: the output frame may be ICRS, FK5 or FK4 (with or without E-terms) at any equinox,
//! or Galactic, as astropy's `celestial_frame_to_wcs` writes them (`RA--`/`DEC-` with RADESYS
//! and EQUINOX, or `GLON`/`GLAT`); ITRS (`TLON`/`TLAT`, from an input with those axes) is
//! written with the `DATE-OBS` of that input, as astropy does. Supergalactic, apparent-place
//! (`GAPPT`), solar and planetary frames are [`Error::Unsupported`], as reproject (without
//! sunpy) cannot write them either.
//!
//! Reproduced as reproject does them:
//! * an input with its latitude axis first (`CTYPE1 = 'DEC--TAN'`) contributes to the mean
//!   reference the position of pixel (CRPIX2, CRPIX1), not (CRPIX1, CRPIX2): reproject passes
//!   CRPIX in FITS order to astropy's `pixel_to_skycoord`, which puts the longitude axis first;
//! * ecliptic (`ELON`/`ELAT`) inputs are taken in the equatorial frame their RADESYS selects
//!   (ICRS by default), as astropy's `wcs_to_celestial_frame` does;
//! * the corners of SIP and TPV inputs include the distortion; the pixel scale does not.
//!
//! Differences: reproject's `DeprecationWarning` (the default longitude sign where `'auto'`
//! would choose positive) is not given; a supergalactic input can be put into an explicitly
//! given frame (astropy cannot identify its frame and fails); ITRS inputs of different dates
//! are taken as one frame, as elsewhere in this crate (astropy would rotate between the
//! dates).

use std::str::FromStr;

use crate::error::{Error, Result};
use crate::wcs::frame::CelestialFrame;
use crate::wcs::frame_transform::FrameTransform;
use crate::wcs::Wcs;

mod axes;
mod geometry;
mod header;

use axes::{check_projection, output_axes, NEGATIVE_CDELT_CTYPES};
use geometry::{corner_pixels, extent, mean_position, pixel_scale, rotation_angle};
use header::OutputWcs;

/// The shape of an input image as reproject reads it: numpy order, so that the last two
/// entries are (rows, columns); extra leading entries beyond the WCS's axes are dropped, as
/// reproject drops them.
///
/// Implemented for `(rows, cols)` tuples, arrays, slices and vectors.
///
/// ```
/// use reproject::mosaic::optimal_wcs::ImageShape;
/// assert_eq!((30, 40).dims(), vec![30, 40]);
/// assert_eq!([3, 30, 40].dims(), vec![3, 30, 40]);
/// assert_eq!(vec![30usize, 40].dims(), vec![30, 40]);
/// ```
pub trait ImageShape {
    /// The dimensions, numpy order.
    fn dims(&self) -> Vec<usize>;
}

impl ImageShape for (usize, usize) {
    fn dims(&self) -> Vec<usize> {
        vec![self.0, self.1]
    }
}

impl<const N: usize> ImageShape for [usize; N] {
    fn dims(&self) -> Vec<usize> {
        self.to_vec()
    }
}

impl ImageShape for &[usize] {
    fn dims(&self) -> Vec<usize> {
        self.to_vec()
    }
}

impl ImageShape for Vec<usize> {
    fn dims(&self) -> Vec<usize> {
        self.clone()
    }
}

/// The sign of the longitude CDELT: reproject's `negative_lon_cdelt` (`True`, `False` or
/// `'auto'`).
///
/// ```
/// use reproject::mosaic::optimal_wcs::LonCdeltSign;
/// assert_eq!(LonCdeltSign::default(), LonCdeltSign::Negative); // reproject's default, True
/// assert_eq!("auto".parse::<LonCdeltSign>().unwrap(), LonCdeltSign::Auto);
/// assert_eq!("false".parse::<LonCdeltSign>().unwrap(), LonCdeltSign::Positive);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LonCdeltSign {
    /// Negative (`True`): longitude increases to the left, as on the sky. reproject's current
    /// default, with a `DeprecationWarning` where `Auto` would choose positive (the warning is
    /// not reproduced).
    #[default]
    Negative,
    /// Positive (`False`), as usual for solar and terrestrial coordinates.
    Positive,
    /// Negative where the output's longitude CTYPE starts with `RA--`, `GLON`, `ELON`, `HLON`
    /// or `SLON`, positive otherwise (`'auto'`).
    Auto,
}

impl FromStr for LonCdeltSign {
    type Err = Error;

    /// `true`/`negative`, `false`/`positive` or `auto` (any case).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "true" | "negative" => Ok(LonCdeltSign::Negative),
            "false" | "positive" => Ok(LonCdeltSign::Positive),
            "auto" => Ok(LonCdeltSign::Auto),
            other => Err(Error::InvalidArgument(format!(
                "negative_lon_cdelt '{other}': expected true, false or auto"
            ))),
        }
    }
}

/// A position on the sky: longitude and latitude in degrees, in a frame (reproject's
/// `reference`, a `SkyCoord`).
///
/// ```
/// use reproject::mosaic::optimal_wcs::SkyPosition;
/// use reproject::wcs::frame::CelestialFrame;
/// let centre = SkyPosition::new(0.0, 0.0, CelestialFrame::Galactic);
/// assert_eq!(centre.frame, CelestialFrame::Galactic);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SkyPosition {
    /// Longitude, degrees.
    pub lon: f64,
    /// Latitude, degrees.
    pub lat: f64,
    /// The frame of `lon` and `lat`.
    pub frame: CelestialFrame,
}

impl SkyPosition {
    /// A position at (`lon`, `lat`) degrees in `frame`.
    ///
    /// ```
    /// use reproject::mosaic::optimal_wcs::*;
    /// use reproject::wcs::{frame::CelestialFrame, Wcs};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 20.5\n\
    ///     CRPIX2 = 15.5\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.002\nCDELT2 = 0.002\n")?;
    /// // The output centred on a position given in another frame: CRVAL in the output's.
    /// let centre = SkyPosition::new(150.0, 30.0, CelestialFrame::Icrs);
    /// let options = OptimalWcsOptions { frame: Some(CelestialFrame::Galactic),
    ///     reference: Some(centre), ..OptimalWcsOptions::default() };
    /// let out = optimal_celestial_wcs(&[((30, 40), &wcs)], &options)?;
    /// let (lon, lat) = out.wcs.celestial()?.pixel_to_world(
    ///     out.wcs.params().crpix[0] - 1.0, out.wcs.params().crpix[1] - 1.0).unwrap();
    /// assert_eq!((lon, lat), (out.wcs.params().crval[0], out.wcs.params().crval[1]));
    /// assert_eq!(out.wcs.frame(), Some(&CelestialFrame::Galactic));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(lon: f64, lat: f64, frame: CelestialFrame) -> SkyPosition {
        SkyPosition { lon, lat, frame }
    }
}

/// The keywords of reproject's `find_optimal_celestial_wcs`.
///
/// ```
/// use reproject::mosaic::optimal_wcs::{LonCdeltSign, OptimalWcsOptions};
/// use reproject::wcs::frame::CelestialFrame;
/// let options = OptimalWcsOptions {
///     frame: Some(CelestialFrame::Galactic),
///     projection: "CAR".into(),
///     resolution: Some(1.0 / 60.0),
///     auto_rotate: true,
///     negative_lon_cdelt: LonCdeltSign::Auto,
///     ..OptimalWcsOptions::default()
/// };
/// assert_eq!(OptimalWcsOptions::default().projection, "TAN");
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OptimalWcsOptions {
    /// The output frame; `None` = the frame of the first input.
    pub frame: Option<CelestialFrame>,
    /// The three-letter projection code of the output (default `TAN`).
    pub projection: String,
    /// The pixel size, degrees; `None` = the smallest pixel scale of the inputs.
    pub resolution: Option<f64>,
    /// The reference point (CRVAL); `None` = the mean of the inputs' CRPIX positions.
    pub reference: Option<SkyPosition>,
    /// Rotate the output (PC matrix) so that the rectangle around the inputs has the least
    /// area (reproject uses shapely's `minimum_rotated_rectangle`).
    pub auto_rotate: bool,
    /// The sign of the longitude CDELT.
    pub negative_lon_cdelt: LonCdeltSign,
}

impl Default for OptimalWcsOptions {
    fn default() -> Self {
        OptimalWcsOptions {
            frame: None,
            projection: "TAN".into(),
            resolution: None,
            reference: None,
            auto_rotate: false,
            negative_lon_cdelt: LonCdeltSign::Negative,
        }
    }
}

/// The result of [`optimal_celestial_wcs`].
///
/// ```
/// use reproject::mosaic::optimal_wcs::*;
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 20.5\n\
///     CRPIX2 = 15.5\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.002\nCDELT2 = 0.002\n")?;
/// // One input: the optimal grid is its own.
/// let out = optimal_celestial_wcs(&[((30, 40), &wcs)], &OptimalWcsOptions::default())?;
/// assert_eq!(out.shape, (30, 40));
/// assert_eq!(Wcs::from_header_str(&out.header)?, out.wcs);
/// assert!(out.header.contains("\nNAXIS1  =                   40\n"));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct OptimalWcs {
    /// The output WCS (parsed from [`OptimalWcs::header`]).
    pub wcs: Wcs,
    /// The FITS header text of the output, one card per line: `NAXIS`, `NAXIS1`, `NAXIS2` and
    /// the WCS keywords astropy writes for it (`WCSAXES`, `CRPIX`, `PCi_j` when rotated, `CDELT`,
    /// `CUNIT`, `CTYPE`, `CRVAL`, `LONPOLE`, `LATPOLE`, `RADESYS`, `EQUINOX`, `DATE-OBS` as
    /// the frame needs them). Values are written in full precision, so that the text parses
    /// back to exactly [`OptimalWcs::wcs`].
    pub header: String,
    /// The output shape, (rows, columns) = (NAXIS2, NAXIS1).
    pub shape: (usize, usize),
}

/// A frame by its astropy name: `icrs`, `fk5` (J2000), `fk4` and `fk4noeterms` (B1950),
/// `galactic`, `supergalactic` (any case); other names are [`Error::InvalidArgument`].
///
/// ```
/// use reproject::mosaic::optimal_wcs::frame_from_name;
/// use reproject::wcs::frame::CelestialFrame;
/// assert_eq!(frame_from_name("FK5")?, CelestialFrame::Fk5 { equinox: 2000.0 });
/// assert_eq!(frame_from_name("galactic")?, CelestialFrame::Galactic);
/// assert!(frame_from_name("altaz").is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn frame_from_name(name: &str) -> Result<CelestialFrame> {
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "icrs" => CelestialFrame::Icrs,
        "fk5" => CelestialFrame::Fk5 { equinox: 2000.0 },
        "fk4" => CelestialFrame::Fk4 { equinox: 1950.0 },
        "fk4noeterms" => CelestialFrame::Fk4NoETerms { equinox: 1950.0 },
        "galactic" => CelestialFrame::Galactic,
        "supergalactic" => CelestialFrame::Supergalactic,
        other => {
            return Err(Error::InvalidArgument(format!(
                "unknown frame '{other}' (expected icrs, fk5, fk4, fk4noeterms, galactic or \
                 supergalactic)"
            )))
        }
    })
}

/// The optimal celestial WCS and shape covering all the inputs: reproject 0.21's
/// `find_optimal_celestial_wcs`.
///
/// `inputs` are (shape, WCS) pairs, the shape in numpy order (rows, columns), see
/// [`ImageShape`]. Every input must be a 2-D image with a 2-axis celestial WCS.
///
/// Errors, where reproject raises: an input whose shape is not 2-D, or whose WCS does not have
/// exactly 2 axes ([`Error::ShapeMismatch`]); a WCS without celestial axes
/// ([`Error::NoCelestialAxes`]); a frame astropy cannot identify or cannot write as a FITS WCS
/// ([`Error::Unsupported`]); an unknown projection code ([`Error::UnknownProjection`]) or one
/// that needs parameters ([`Error::InvalidProjectionParameters`]); corners or reference points
/// with no position on the sky or in the output projection (an all-sky image into `TAN`),
/// an empty input list, or a resolution that is zero or not finite ([`Error::InvalidArgument`]).
///
/// ```
/// use reproject::mosaic::optimal_wcs::{optimal_celestial_wcs, OptimalWcsOptions};
/// use reproject::wcs::{frame::CelestialFrame, Wcs};
/// let galactic = Wcs::from_header_str(
///     "CTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\nCRPIX1 = 50.5\nCRPIX2 = 25.5\n\
///      CRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -0.1\nCDELT2 = 0.1\n",
/// )?;
/// let options = OptimalWcsOptions {
///     frame: Some(CelestialFrame::Icrs),
///     auto_rotate: true,
///     ..OptimalWcsOptions::default()
/// };
/// let out = optimal_celestial_wcs(&[((50, 100), &galactic)], &options)?;
/// assert!(out.header.contains("CTYPE1  = 'RA---TAN'"));
/// assert_eq!(out.wcs.frame(), Some(&CelestialFrame::Icrs));
/// let (ra, dec) = out.wcs.pixel_to_world(0.0, 0.0).unwrap();
/// assert!(ra > 250.0 && ra < 280.0 && dec < -20.0);
/// // The rotation is kept within ±45° (here 31.4°), so the galactic plane runs along the
/// // columns: 100 rows by 50 columns, the shape and PC reproject gives.
/// assert_eq!(out.shape, (100, 50));
/// let pc = &out.wcs.params().pc;
/// assert!((pc[1][0] - 0.52102956).abs() < 1e-8);
///
/// let empty: [((usize, usize), &Wcs); 0] = [];
/// assert!(optimal_celestial_wcs(&empty, &options).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn optimal_celestial_wcs<S: ImageShape>(
    inputs: &[(S, &Wcs)],
    options: &OptimalWcsOptions,
) -> Result<OptimalWcs> {
    if inputs.is_empty() {
        return Err(Error::InvalidArgument(
            "find the optimal WCS of no inputs: the input list is empty".into(),
        ));
    }
    check_projection(&options.projection)?;
    if let Some(r) = options.resolution
        && (!r.is_finite() || r == 0.0)
    {
        return Err(Error::InvalidArgument(format!(
            "resolution {r}: must be finite and non-zero"
        )));
    }

    // Corners and CRPIX positions in the output frame, and the pixel scales.
    let mut frame: Option<CelestialFrame> = options.frame.clone();
    // The input that fixed the frame (for ITRS, its observation date).
    let mut frame_source: Option<&Wcs> = None;
    let mut corners: Vec<(f64, f64)> = Vec::with_capacity(4 * inputs.len());
    let mut references: Vec<(f64, f64)> = Vec::with_capacity(inputs.len());
    let mut scale = f64::INFINITY;
    for (k, (shape, wcs)) in inputs.iter().enumerate() {
        let dims = shape.dims();
        let n = wcs.naxis();
        let plane = if dims.len() > n {
            &dims[dims.len() - n..]
        } else {
            &dims[..]
        };
        if plane.len() != 2 {
            return Err(Error::ShapeMismatch(format!(
                "input {k}: input data is not 2-dimensional (got shape {plane:?})"
            )));
        }
        if n != 2 {
            return Err(Error::ShapeMismatch(format!(
                "input {k}: input WCS is not 2-dimensional ({n} axes)"
            )));
        }
        let cel = wcs.celestial().map_err(|_| Error::NoCelestialAxes)?;
        let input_frame = cel.frame().clone();
        if frame.is_none() {
            if output_axes(&input_frame, None).is_none() {
                return Err(Error::Unsupported(format!(
                    "input {k}: cannot determine the celestial frame of the WCS \
                     ({input_frame:?}) as astropy would"
                )));
            }
            frame = Some(input_frame.clone());
        }
        let frame = frame.clone().expect("set above");
        if frame_source.is_none() && input_frame == frame {
            frame_source = Some(wcs);
        }
        let transform = FrameTransform::new(&input_frame, &frame)?;
        let to_frame = |p: Option<(f64, f64)>| match p {
            Some((lon, lat)) if transform.is_identity() => (lon, lat),
            Some((lon, lat)) => transform.apply(lon, lat),
            None => (f64::NAN, f64::NAN),
        };
        let (ny, nx) = (plane[0] as f64, plane[1] as f64);
        for (x, y) in [
            (-0.5, -0.5),
            (nx - 0.5, -0.5),
            (nx - 0.5, ny - 0.5),
            (-0.5, ny - 0.5),
        ] {
            corners.push(to_frame(cel.pixel_to_world(x, y)));
        }
        // reproject evaluates CRPIX with astropy's `pixel_to_skycoord`, which reorders the
        // axes to (longitude, latitude) but is given CRPIX in FITS order: with the latitude
        // axis first, the two CRPIX values land on the wrong axes. Reproduced.
        let crpix = &wcs.params().crpix;
        let (x, y) = if cel.pixel_axes_swapped() {
            (crpix[1] - 1.0, crpix[0] - 1.0)
        } else {
            (crpix[0] - 1.0, crpix[1] - 1.0)
        };
        references.push(to_frame(cel.pixel_to_world(x, y)));
        scale = scale.min(pixel_scale(wcs));
    }
    let frame = frame.expect("set by the first input");

    // The reference point, in the output frame.
    let (crval1, crval2) = match &options.reference {
        Some(p) => {
            let t = FrameTransform::new(&p.frame, &frame)?;
            t.apply(p.lon, p.lat)
        }
        None => mean_position(&references),
    };
    if !(crval1.is_finite() && crval2.is_finite()) {
        return Err(Error::InvalidArgument(
            "the reference position of the output is not on the sky (an input's CRPIX has no \
             sky position)"
                .into(),
        ));
    }

    let resolution = options.resolution.unwrap_or(scale);
    let axes = output_axes(&frame, frame_source).ok_or_else(|| {
        Error::Unsupported(format!(
            "no FITS WCS for the frame {frame:?} (astropy's celestial_frame_to_wcs has none)"
        ))
    })?;
    let negative = match options.negative_lon_cdelt {
        LonCdeltSign::Negative => true,
        LonCdeltSign::Positive => false,
        LonCdeltSign::Auto => NEGATIVE_CDELT_CTYPES.contains(&axes.lon.as_str()),
    };
    let lon_factor = if negative { -1.0 } else { 1.0 };
    let mut out = OutputWcs {
        axes,
        projection: options.projection.clone(),
        crpix: [1.0, 1.0],
        pc: None,
        cdelt: [lon_factor * resolution, resolution],
        crval: [crval1, crval2],
        poles: None,
        shape: None,
    };

    // The corners in the output projection (1-based pixels, as reproject uses origin=1).
    let mut wcs = out.wcs()?;
    let mut pixels = corner_pixels(&wcs, &corners)?;
    if options.auto_rotate {
        let angle = rotation_angle(&pixels)?;
        let (s, c) = angle.sin_cos();
        out.pc = Some([[c, -s], [s, c]]);
        wcs = out.wcs()?;
        pixels = corner_pixels(&wcs, &corners)?;
    }
    let rotation = wcs.celestial()?.rotation();
    out.poles = Some((rotation.euler()[2], rotation.latpole()));

    let (mut xmin, mut xmax, mut ymin, mut ymax) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in &pixels {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymin = ymin.min(y);
        ymax = ymax.max(y);
    }
    out.crpix = [(1.0 - xmin) + 0.5, (1.0 - ymin) + 0.5];
    let naxis1 = extent(xmax - xmin)?;
    let naxis2 = extent(ymax - ymin)?;
    out.shape = Some((naxis2, naxis1));
    let header = out.header();
    let wcs = Wcs::from_header_str(&header)?;
    Ok(OptimalWcs {
        wcs,
        header,
        shape: (naxis2, naxis1),
    })
}

#[cfg(test)]
mod tests;

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

/// reproject's `NEGATIVE_CDELT_CTYPES`.
const NEGATIVE_CDELT_CTYPES: [&str; 5] = ["RA--", "GLON", "ELON", "HLON", "SLON"];

/// What astropy's `celestial_frame_to_wcs` writes for a frame.
#[derive(Debug, Clone)]
struct OutputAxes {
    /// The first four characters of the longitude and latitude CTYPEs.
    lon: String,
    lat: String,
    radesys: Option<&'static str>,
    equinox: Option<f64>,
    date_obs: Option<String>,
}

/// The axes astropy writes for `frame` (`None` where astropy has no FITS WCS for it); `source`
/// is the input whose frame it is (for the observation date of ITRS).
fn output_axes(frame: &CelestialFrame, source: Option<&Wcs>) -> Option<OutputAxes> {
    let equatorial = |radesys, equinox| OutputAxes {
        lon: "RA--".into(),
        lat: "DEC-".into(),
        radesys: Some(radesys),
        equinox,
        date_obs: None,
    };
    Some(match frame {
        CelestialFrame::Icrs => equatorial("ICRS", None),
        CelestialFrame::Fk5 { equinox } => equatorial("FK5", Some(*equinox)),
        CelestialFrame::Fk4 { equinox } => equatorial("FK4", Some(*equinox)),
        CelestialFrame::Fk4NoETerms { equinox } => equatorial("FK4-NO-E", Some(*equinox)),
        CelestialFrame::Galactic => OutputAxes {
            lon: "GLON".into(),
            lat: "GLAT".into(),
            radesys: None,
            equinox: None,
            date_obs: None,
        },
        // ITRS: astropy writes the obstime of the frame (the input's DATE-OBS, J2000 without
        // one) as DATE-OBS in ISO format to the millisecond.
        // astropy sets RADESYS = 'ITRS', which WCSLIB clears for non-equatorial axes.
        CelestialFrame::Other(name) if name == "TLON" => OutputAxes {
            lon: "TLON".into(),
            lat: "TLAT".into(),
            radesys: None,
            equinox: None,
            date_obs: Some(
                source
                    .and_then(|w| w.params().date_obs.as_deref())
                    .map(isot_milliseconds)
                    .unwrap_or_else(|| J2000_UTC.to_string()),
            ),
        },
        _ => return None,
    })
}

/// J2000.0 (TT) in UTC, as astropy writes the default ITRS obstime.
const J2000_UTC: &str = "2000-01-01T11:58:55.816";

/// An ISO date as astropy's `Time(date).utc.isot` writes it: `YYYY-MM-DDThh:mm:ss.sss`
/// (rounded to the millisecond). Text that is not an ISO date is kept as it is.
fn isot_milliseconds(date: &str) -> String {
    let date = date.trim();
    let parse = || -> Option<String> {
        let (day, time) = date.split_once('T').unwrap_or((date, ""));
        let mut ymd = day.split('-');
        let (y, m, d): (i64, i64, i64) = (
            ymd.next()?.parse().ok()?,
            ymd.next()?.parse().ok()?,
            ymd.next()?.parse().ok()?,
        );
        if ymd.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        let mut ms: i64 = 0;
        if !time.is_empty() {
            let mut hms = time.split(':');
            let h: i64 = hms.next()?.parse().ok()?;
            let mi: i64 = hms.next().map_or(Some(0), |s| s.parse().ok())?;
            let s: f64 = hms.next().map_or(Some(0.0), |s| s.parse().ok())?;
            if hms.next().is_some() || !(0.0..61.0).contains(&s) {
                return None;
            }
            ms = (h * 3600 + mi * 60) * 1000 + (s * 1000.0).round() as i64;
        }
        let mut days = civil_to_days(y, m, d);
        days += ms.div_euclid(86_400_000);
        let ms = ms.rem_euclid(86_400_000);
        let (y, m, d) = days_to_civil(days);
        Some(format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        ))
    };
    parse().unwrap_or_else(|| date.to_string())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_to_days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`civil_to_days`].
fn days_to_civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A projection code must be three letters or digits (WCSLIB rejects anything else as an
/// unrecognised code; this also keeps the header text well formed).
fn check_projection(code: &str) -> Result<()> {
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(Error::UnknownProjection(code.to_string()))
    }
}

/// reproject's `pixel_scale` for a FITS WCS: the smaller of the column norms of CDELT·PC
/// (astropy's `proj_plane_pixel_scales`), degrees; distortions are not included.
fn pixel_scale(wcs: &Wcs) -> f64 {
    let p = wcs.params();
    let m = |i: usize, j: usize| p.cdelt[i] * p.pc[i][j];
    let column = |j: usize| (m(0, j) * m(0, j) + m(1, j) * m(1, j)).sqrt().abs();
    column(0).min(column(1))
}

/// The reference of reproject: the mean of the unit vectors (astropy's
/// `UnitSphericalRepresentation.mean`, numpy's pairwise sums), back to (lon, lat) degrees with
/// the longitude in [0, 360).
fn mean_position(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let mut xyz: [Vec<f64>; 3] = Default::default();
    for &(lon, lat) in points {
        // ERFA s2c.
        let (theta, phi) = (lon.to_radians(), lat.to_radians());
        let cp = phi.cos();
        xyz[0].push(theta.cos() * cp);
        xyz[1].push(theta.sin() * cp);
        xyz[2].push(phi.sin());
    }
    let [x, y, z] = xyz.map(|v| pairwise_sum(&v) / n);
    // ERFA c2s.
    let d2 = x * x + y * y;
    let theta = if d2 == 0.0 { 0.0 } else { y.atan2(x) };
    let phi = if z == 0.0 { 0.0 } else { z.atan2(d2.sqrt()) };
    // astropy's Longitude wraps in radians, then converts.
    let full = 360.0 * (std::f64::consts::PI / 180.0);
    let mut lon = theta;
    if lon < 0.0 {
        lon += full;
        if lon >= full {
            lon -= full;
        }
    }
    (lon.to_degrees(), phi.to_degrees())
}

/// numpy's pairwise summation of a float64 array (`np.add.reduce`).
fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &a[i..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// The corners in the output projection, 1-based (astropy's `skycoord_to_pixel(...,
/// origin=1)`); an error if any has no pixel position (reproject would fail converting NaN
/// to an integer shape).
fn corner_pixels(wcs: &Wcs, corners: &[(f64, f64)]) -> Result<Vec<(f64, f64)>> {
    corners
        .iter()
        .enumerate()
        .map(|(i, &(lon, lat))| {
            wcs.world_to_pixel(lon, lat)
                .map(|(x, y)| (x + 1.0, y + 1.0))
                .ok_or_else(|| {
                    let what = if lon.is_finite() && lat.is_finite() {
                        format!(
                            "({lon}, {lat}) has no pixel position in the output's {} projection",
                            wcs.projection_code().map_or("?", |c| c.as_str())
                        )
                    } else {
                        "has no sky position".to_string()
                    };
                    Error::InvalidArgument(format!(
                        "corner {} of input {}: {what}, so the output cannot cover it",
                        i % 4,
                        i / 4
                    ))
                })
        })
        .collect()
}

/// reproject's auto-rotation angle (radians, in (-π/4, π/4]): the minimum-area rectangle
/// around the points (shapely's `minimum_rotated_rectangle`, GEOS), the direction of the edge
/// between its two lowest vertices, modulo π/2.
fn rotation_angle(points: &[(f64, f64)]) -> Result<f64> {
    let rect = minimum_area_rectangle(points).ok_or_else(|| {
        Error::InvalidArgument(
            "auto_rotate: the input corners are collinear in the output projection, so they \
             have no enclosing rectangle"
                .into(),
        )
    })?;
    // The vertices with the two smallest y (a stable sort, as numpy's argsort of 4 values).
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&a, &b| rect[a].1.total_cmp(&rect[b].1));
    let (x1, y1) = rect[order[0]];
    let (x2, y2) = rect[order[1]];
    let quarter = std::f64::consts::PI / 2.0;
    let mut angle = py_mod((y2 - y1).atan2(x2 - x1), quarter);
    if angle > std::f64::consts::PI / 4.0 {
        angle -= quarter;
    }
    Ok(angle)
}

/// Python's float modulo for a positive divisor (result in [0, b)).
fn py_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r == 0.0 {
        0.0
    } else if r < 0.0 {
        r + b
    } else {
        r
    }
}

/// The minimum-area rectangle enclosing the points, its 4 vertices in order; `None` when the
/// points' convex hull is a point or a line. Every edge of the convex hull is tried (the
/// optimal rectangle has a side along one), which finds the rectangle GEOS's rotating calipers
/// find; only exact ties between edges of different directions (symmetric point sets) may be
/// broken otherwise.
fn minimum_area_rectangle(points: &[(f64, f64)]) -> Option<[(f64, f64); 4]> {
    let hull = convex_hull(points);
    if hull.len() < 3 {
        return None;
    }
    let n = hull.len();
    let mut best: Option<(f64, [(f64, f64); 4])> = None;
    for i in 0..n {
        let p = hull[i];
        let q = hull[(i + 1) % n];
        let (dx, dy) = (q.0 - p.0, q.1 - p.1);
        let len = dx.hypot(dy);
        let (ux, uy) = (dx / len, dy / len);
        let (mut amin, mut amax, mut bmin, mut bmax) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for r in &hull {
            let (rx, ry) = (r.0 - p.0, r.1 - p.1);
            let a = rx * ux + ry * uy;
            let b = ry * ux - rx * uy;
            amin = amin.min(a);
            amax = amax.max(a);
            bmin = bmin.min(b);
            bmax = bmax.max(b);
        }
        let area = (amax - amin) * (bmax - bmin);
        if best.as_ref().is_none_or(|(min, _)| area < *min) {
            let corner = |a: f64, b: f64| (p.0 + a * ux - b * uy, p.1 + a * uy + b * ux);
            best = Some((
                area,
                [
                    corner(amin, bmin),
                    corner(amax, bmin),
                    corner(amax, bmax),
                    corner(amin, bmax),
                ],
            ));
        }
    }
    best.map(|(_, rect)| rect)
}

/// The convex hull (Andrew's monotone chain), counter-clockwise, without repeated or collinear
/// points.
fn convex_hull(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points.to_vec();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut hull: Vec<(f64, f64)> = Vec::with_capacity(2 * pts.len());
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &(f64, f64)>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop(); // the last point starts the other chain
    }
    hull
}

/// An image extent in pixels as reproject rounds it (`int(round(max - min))`, half to even).
fn extent(span: f64) -> Result<usize> {
    let n = span.round_ties_even();
    if !(0.0..=(isize::MAX as f64)).contains(&n) {
        return Err(Error::InvalidArgument(format!(
            "the output would be {span} pixels across"
        )));
    }
    Ok(n as usize)
}

/// The output WCS being built.
struct OutputWcs {
    axes: OutputAxes,
    projection: String,
    crpix: [f64; 2],
    pc: Option<[[f64; 2]; 2]>,
    cdelt: [f64; 2],
    crval: [f64; 2],
    /// LONPOLE and LATPOLE as WCSLIB sets them (written as astropy writes them).
    poles: Option<(f64, f64)>,
    /// (rows, columns), for NAXIS1/NAXIS2.
    shape: Option<(usize, usize)>,
}

impl OutputWcs {
    fn wcs(&self) -> Result<Wcs> {
        Wcs::from_header_str(&self.header())
    }

    /// The header text, in astropy's card order.
    fn header(&self) -> String {
        let mut cards = Vec::new();
        if let Some((rows, cols)) = self.shape {
            cards.push(card_int("NAXIS", 2, "number of array dimensions"));
            cards.push(card_int("NAXIS1", cols as i64, ""));
            cards.push(card_int("NAXIS2", rows as i64, ""));
        }
        cards.push(card_int("WCSAXES", 2, "Number of coordinate axes"));
        for (i, v) in self.crpix.iter().enumerate() {
            cards.push(card_float(
                &format!("CRPIX{}", i + 1),
                *v,
                "Pixel coordinate of reference point",
            ));
        }
        if let Some(pc) = &self.pc {
            // As WCSLIB's wcshdo: only the elements that differ from the unit matrix.
            for (i, row) in pc.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    if *v == f64::from(u8::from(i == j)) {
                        continue;
                    }
                    cards.push(card_float(
                        &format!("PC{}_{}", i + 1, j + 1),
                        *v,
                        "Coordinate transformation matrix element",
                    ));
                }
            }
        }
        for (i, v) in self.cdelt.iter().enumerate() {
            cards.push(card_float(
                &format!("CDELT{}", i + 1),
                *v,
                "[deg] Coordinate increment at reference point",
            ));
        }
        for i in 1..=2 {
            cards.push(card_str(
                &format!("CUNIT{i}"),
                "deg",
                "Units of coordinate increment and value",
            ));
        }
        let ctype = |prefix: &str| format!("{prefix}-{}", self.projection);
        cards.push(card_str("CTYPE1", &ctype(&self.axes.lon), ""));
        cards.push(card_str("CTYPE2", &ctype(&self.axes.lat), ""));
        for (i, v) in self.crval.iter().enumerate() {
            cards.push(card_float(
                &format!("CRVAL{}", i + 1),
                *v,
                "[deg] Coordinate value at reference point",
            ));
        }
        if let Some((lonpole, latpole)) = self.poles {
            cards.push(card_float(
                "LONPOLE",
                lonpole,
                "[deg] Native longitude of celestial pole",
            ));
            cards.push(card_float(
                "LATPOLE",
                latpole,
                "[deg] Native latitude of celestial pole",
            ));
        }
        if let Some(date) = &self.axes.date_obs {
            cards.push(card_str("DATE-OBS", date, "ISO-8601 time of observation"));
        }
        if let Some(radesys) = self.axes.radesys {
            cards.push(card_str("RADESYS", radesys, "Equatorial coordinate system"));
        }
        if let Some(equinox) = self.axes.equinox {
            cards.push(card_float(
                "EQUINOX",
                equinox,
                "[yr] Equinox of equatorial coordinates",
            ));
        }
        let mut text = cards.join("\n");
        text.push('\n');
        text
    }
}

/// A card with an integer value (right-aligned to column 30).
fn card_int(key: &str, value: i64, comment: &str) -> String {
    with_comment(format!("{key:<8}= {value:>20}"), comment)
}

/// A card with a float value in the shortest form that reads back exactly (`-0.002`,
/// `1.0E-5`).
fn card_float(key: &str, value: f64, comment: &str) -> String {
    let mut v = format!("{value:?}");
    if let Some((mantissa, exponent)) = v.split_once('e') {
        let dot = if mantissa.contains('.') { "" } else { ".0" };
        v = format!("{mantissa}{dot}E{exponent}");
    }
    with_comment(format!("{key:<8}= {v:>20}"), comment)
}

/// A card with a string value (quotes doubled, padded to 8 characters).
fn card_str(key: &str, value: &str, comment: &str) -> String {
    let quoted = format!("'{:<8}'", value.replace('\'', "''"));
    with_comment(format!("{key:<8}= {quoted:<20}"), comment)
}

fn with_comment(mut card: String, comment: &str) -> String {
    if !comment.is_empty() && card.len() + 3 + comment.len() <= 80 {
        card.push_str(" / ");
        card.push_str(comment);
    }
    card.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tan(crval: (f64, f64), crpix: (f64, f64), extra: &str) -> Wcs {
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {}\nCRPIX2 = {}\n\
             CRVAL1 = {}\nCRVAL2 = {}\nCDELT1 = -0.002\nCDELT2 = 0.002\n{extra}",
            crpix.0, crpix.1, crval.0, crval.1
        ))
        .unwrap()
    }

    #[test]
    fn pairwise_sum_is_numpy_s() {
        // numpy: i = np.arange(n, dtype=float); np.add.reduce(np.sqrt(i) * 1e-3 + 1e9 * (i % 7
        // == 0)) for n = 5, 20, 300 (sequential below 8, 8 accumulators to 128, halves beyond);
        // a sequential sum differs in the last digits for 20 and 300.
        let a: Vec<f64> = (0..300)
            .map(|i| f64::from(i).sqrt() * 1e-3 + 1e9 * f64::from(u8::from(i % 7 == 0)))
            .collect();
        assert_eq!(pairwise_sum(&a[..5]), 1000000000.0061462);
        assert_eq!(pairwise_sum(&a[..20]), 3000000000.0571938);
        assert_eq!(pairwise_sum(&a), 43000000003.45524);
        assert_eq!(pairwise_sum(&[]), 0.0);
    }

    #[test]
    fn mean_position_wraps_longitude() {
        let (lon, lat) = mean_position(&[(359.0, 0.0), (3.0, 0.0)]);
        assert!((lon - 1.0).abs() < 1e-12 && lat.abs() < 1e-12);
        let (lon, _) = mean_position(&[(358.0, 10.0), (0.0, 10.0)]);
        assert!((lon - 359.0).abs() < 1e-12);
        let (_, lat) = mean_position(&[(10.0, 90.0)]);
        assert_eq!(lat, 90.0);
    }

    #[test]
    fn minimum_area_rectangle_of_a_rotated_rectangle() {
        let (s, c) = 0.3f64.sin_cos();
        let rect = [(0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (0.0, 1.0), (2.0, 0.5)];
        let pts: Vec<(f64, f64)> = rect
            .iter()
            .map(|&(x, y)| (10.0 + c * x - s * y, -3.0 + s * x + c * y))
            .collect();
        assert!((rotation_angle(&pts).unwrap() - 0.3).abs() < 1e-14);
        // 60 degrees is -30 degrees modulo 90.
        let (s, c) = 60f64.to_radians().sin_cos();
        let pts: Vec<(f64, f64)> = rect
            .iter()
            .map(|&(x, y)| (c * x - s * y, s * x + c * y))
            .collect();
        assert!((rotation_angle(&pts).unwrap() + 30f64.to_radians()).abs() < 1e-14);
        assert!(rotation_angle(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]).is_err());
        assert_eq!(convex_hull(&[(0.0, 0.0), (1.0, 0.0), (2.0, 0.0)]).len(), 2);
    }

    #[test]
    fn py_mod_matches_python() {
        assert_eq!(py_mod(-0.1, 1.0), 0.9);
        assert_eq!(py_mod(-0.0, 1.0), 0.0);
        assert!(py_mod(-0.0, 1.0).is_sign_positive());
        assert_eq!(py_mod(2.5, 1.0), 0.5);
    }

    #[test]
    fn dates_as_astropy_isot() {
        assert_eq!(isot_milliseconds("2020-05-01"), "2020-05-01T00:00:00.000");
        assert_eq!(
            isot_milliseconds("2020-12-31T23:59:59.9996"),
            "2021-01-01T00:00:00.000"
        );
        assert_eq!(
            isot_milliseconds("2021-03-04T05:06:07.5"),
            "2021-03-04T05:06:07.500"
        );
        assert_eq!(isot_milliseconds("yesterday"), "yesterday");
        assert_eq!(days_to_civil(civil_to_days(1999, 2, 28) + 1), (1999, 3, 1));
    }

    #[test]
    fn float_cards_read_back_exactly() {
        for v in [1e-5, -0.002, 150.0, 1.0 / 3.0, 1e22, -2.5e-300, 0.0] {
            let text = card_float("CRVAL1", v, "c") + "\nEND\n";
            let h = crate::wcs::header::Header::parse(&text).unwrap();
            assert_eq!(h.float("CRVAL1").unwrap(), Some(v), "{text}");
        }
    }

    #[test]
    fn single_tan_input_maps_to_itself() {
        let wcs = tan((150.0, 30.0), (20.5, 15.5), "");
        let out =
            optimal_celestial_wcs(&[((30, 40), &wcs)], &OptimalWcsOptions::default()).unwrap();
        assert_eq!(out.shape, (30, 40));
        let p = out.wcs.params();
        assert!((p.crpix[0] - 20.5).abs() < 1e-9 && (p.crpix[1] - 15.5).abs() < 1e-9);
        assert!((p.crval[0] - 150.0).abs() < 1e-12 && (p.crval[1] - 30.0).abs() < 1e-12);
        assert_eq!(p.cdelt, vec![-0.002, 0.002]);
        assert_eq!(out.wcs.frame(), Some(&CelestialFrame::Icrs));
        assert_eq!(Wcs::from_header_str(&out.header).unwrap(), out.wcs);
        assert!(out.header.starts_with("NAXIS   =                    2 / "));
        assert!(out.header.contains("\nNAXIS1  =                   40\n"));
    }

    #[test]
    fn errors() {
        let wcs = tan((150.0, 30.0), (20.5, 15.5), "");
        let opts = OptimalWcsOptions::default();
        let err = |r: Result<OptimalWcs>| r.unwrap_err();
        assert!(matches!(
            err(optimal_celestial_wcs(
                &[([40usize].as_slice(), &wcs)],
                &opts
            )),
            Error::ShapeMismatch(_)
        ));
        let linear = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\n").unwrap();
        assert_eq!(
            err(optimal_celestial_wcs(
                &[((30, 40), &wcs), ((30, 40), &linear)],
                &opts
            )),
            Error::NoCelestialAxes
        );
        for (projection, want) in [("XYZ", "UnknownProjection"), ("TA'", "UnknownProjection")] {
            let o = OptimalWcsOptions {
                projection: projection.into(),
                ..opts.clone()
            };
            let e = err(optimal_celestial_wcs(&[((30, 40), &wcs)], &o));
            assert!(format!("{e:?}").starts_with(want), "{e:?}");
        }
        let o = OptimalWcsOptions {
            frame: Some(CelestialFrame::Supergalactic),
            ..opts.clone()
        };
        assert!(matches!(
            err(optimal_celestial_wcs(&[((30, 40), &wcs)], &o)),
            Error::Unsupported(_)
        ));
        for resolution in [0.0, f64::NAN] {
            let o = OptimalWcsOptions {
                resolution: Some(resolution),
                ..opts.clone()
            };
            assert!(matches!(
                err(optimal_celestial_wcs(&[((30, 40), &wcs)], &o)),
                Error::InvalidArgument(_)
            ));
        }
    }
}

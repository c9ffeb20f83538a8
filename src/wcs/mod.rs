//! FITS World Coordinate Systems: pixel ↔ world exactly as astropy.wcs / WCSLIB compute them.
//!
//! The pipeline for a celestial pixel (x, y), 0-based:
//!
//! ```text
//! pixel ──[SIP]──linear (CRPIX, PC[, TPV]·CDELT or CD)──▶ intermediate (x, y) deg
//!       ──projection x2s (AZP … XPH)──────▶ native (φ, θ)
//!       ──spherical rotation (CRVAL, LONPOLE, LATPOLE)──▶ world (lon, lat) in the header's frame
//! ```
//!
//! and back again for world → pixel. Points a projection cannot map give `None` (or NaN in the
//! batch forms), where astropy returns NaN. SIP and TPV distortions ([`distortion`]) are applied
//! as astropy applies them.
//!
//! ```
//! use reproject::wcs::Wcs;
//! let header = "\
//! CTYPE1  = 'RA---TAN'
//! CTYPE2  = 'DEC--TAN'
//! CRPIX1  = 50.5
//! CRPIX2  = 50.5
//! CRVAL1  = 150.0
//! CRVAL2  = 30.0
//! CDELT1  = -0.001
//! CDELT2  = 0.001
//! ";
//! let wcs = Wcs::from_header_str(header).unwrap();
//! let (ra, dec) = wcs.pixel_to_world(49.5, 49.5).unwrap();
//! assert!((ra - 150.0).abs() < 1e-12 && (dec - 30.0).abs() < 1e-12);
//! let (x, y) = wcs.world_to_pixel(ra, dec).unwrap();
//! assert!((x - 49.5).abs() < 1e-9 && (y - 49.5).abs() < 1e-9);
//! ```

pub mod calendar;
pub mod celestial;
mod celestial_transform;
pub mod distortion;
pub mod frame;
pub mod frame_transform;
pub mod header;
pub mod linear;
mod params;
pub mod plane;
pub mod projection;
pub mod spectral;
pub mod trig;
pub mod units;

use ndarray::{Array, ArrayView, Dimension, Zip};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use celestial_transform::build_celestial;
pub use celestial_transform::CelestialTransform;
use distortion::Sip;
use frame::CelestialFrame;
use header::Header;
use linear::Linear;
pub(crate) use params::spectral_kind;
pub use params::{AxisType, WcsParams};
use projection::ProjectionCode;

/// A FITS WCS, ready to transform coordinates.
///
/// Build it from header text ([`Wcs::from_header_str`]), a FITS file ([`Wcs::from_fits`]) or
/// explicit parameters ([`Wcs::from_params`]). It is `Clone + Send + Sync` and serialises as
/// its parameters, so it can be shipped to other threads, processes and devices.
///
/// ```
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
/// let (ra, dec) = wcs.pixel_to_world(15.0, 15.0).unwrap(); // CRPIX is 1-based
/// assert!((ra - 150.0).abs() < 1e-12 && (dec - 30.0).abs() < 1e-12);
/// let json = serde_json::to_string(&wcs).unwrap();
/// assert_eq!(serde_json::from_str::<Wcs>(&json).unwrap(), wcs);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "WcsParams", into = "WcsParams")]
pub struct Wcs {
    params: WcsParams,
    linear: Linear,
    /// SIP with forward polynomials (2-axis WCS only), for the N-d forms.
    sip: Option<Sip>,
    celestial: Option<CelestialTransform>,
}

/// Two WCS are equal when they were built from equal parameters.
///
/// ```
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
/// let mut params = wcs.params().clone();
/// assert_eq!(Wcs::from_params(params.clone())?, wcs);
/// params.crval[0] = 151.0;
/// assert_ne!(Wcs::from_params(params)?, wcs);
/// # Ok::<(), reproject::Error>(())
/// ```
impl PartialEq for Wcs {
    fn eq(&self, other: &Wcs) -> bool {
        self.params == other.params
    }
}

impl TryFrom<WcsParams> for Wcs {
    type Error = Error;
    fn try_from(params: WcsParams) -> Result<Self> {
        Wcs::from_params(params)
    }
}

impl From<Wcs> for WcsParams {
    fn from(wcs: Wcs) -> Self {
        wcs.params
    }
}

impl Wcs {
    /// Parses the primary WCS of FITS header text (80-character cards, with or without
    /// newlines, as in a `.hdr` file or `Header.tostring()`). One departure from WCSLIB and
    /// astropy: a celestial header without CRVAL1 or CRVAL2 is refused
    /// ([`Error::MissingKeyword`]) where they would take 0, since such a header is far more
    /// often broken than meant for (0, 0). astropy's `WCS.to_header()` always writes them.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let text = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 150\nCRVAL2 = 30\n";
    /// let wcs = Wcs::from_header_str(text)?;
    /// assert_eq!(wcs.pixel_to_world(-1.0, -1.0), Some((150.0, 30.0))); // CRPIX defaults to 0
    /// let cards: String = text.lines().map(|card| format!("{card:80}")).collect(); // no newlines
    /// assert_eq!(Wcs::from_header_str(&cards)?, wcs);
    /// // Unlike WCSLIB, a celestial header without CRVAL is refused.
    /// assert!(Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n").is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_header_str(text: &str) -> Result<Wcs> {
        Wcs::from_header_str_alt(text, None)
    }

    /// Parses the alternate WCS `alt` (`'A'`..`'Z'`; `None` = primary) of FITS header text.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let h = "CTYPE1A = 'GLON-CAR'\nCTYPE2A = 'GLAT-CAR'\nCRVAL1A = 0.0\nCRVAL2A = 0.0\n";
    /// let wcs = Wcs::from_header_str_alt(h, Some('A')).unwrap();
    /// assert_eq!(wcs.pixel_to_world(0.0, 0.0), Some((1.0, 1.0)));
    /// ```
    pub fn from_header_str_alt(text: &str, alt: Option<char>) -> Result<Wcs> {
        let header = Header::parse(text)?;
        Wcs::from_header(&header, alt)
    }

    /// Builds the WCS `alt` of a parsed header.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::header::Header;
    /// let text = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 150\nCRVAL2 = 30\n\
    ///     CTYPE1A = 'GLON-CAR'\nCTYPE2A = 'GLAT-CAR'\nCRVAL1A = 0\nCRVAL2A = 0\n";
    /// let header = Header::parse(text)?;
    /// assert_eq!(Wcs::from_header(&header, None)?, Wcs::from_header_str(text)?);
    /// assert_eq!(Wcs::from_header(&header, Some('A'))?.params().ctype[0], "GLON-CAR");
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_header(header: &Header, alt: Option<char>) -> Result<Wcs> {
        Wcs::from_params(WcsParams::from_header(header, alt)?)
    }

    // `Wcs::from_fits` (feature "fits") is defined in src/io/fits.rs, next to the one CFITSIO
    // header reader: this module parses header text and does not read files (nor depend on
    // `io`).

    /// Builds the WCS from explicit parameters (WCSLIB's `wcsset`).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let mut params = wcs.params().clone();
    /// params.crval[0] = 151.0;
    /// let (ra, _) = Wcs::from_params(params.clone())?.pixel_to_world(15.0, 15.0).unwrap();
    /// assert!((ra - 151.0).abs() < 1e-12);
    /// params.crval.pop(); // one CRVAL for two axes
    /// assert!(matches!(Wcs::from_params(params), Err(reproject::Error::ShapeMismatch(_))));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_params(params: WcsParams) -> Result<Wcs> {
        check_param_lengths(&params)?;
        let linear = Linear::new(
            params.crpix.clone(),
            params.cdelt.clone(),
            params.pc.clone(),
        )?;
        let sip = match &params.sip {
            None => None,
            Some(p) => {
                if params.naxis() != 2 {
                    return Err(Error::InconsistentAxes(format!(
                        "SIP distortion needs exactly 2 WCS axes, not {}",
                        params.naxis()
                    )));
                }
                Some(Sip::new(p)?).filter(Sip::is_active)
            }
        };
        let celestial = match params.celestial_axes() {
            None if params.tpv.is_some() => {
                return Err(Error::InconsistentAxes(
                    "TPV distortion without celestial axes".into(),
                ))
            }
            None => None,
            Some((lng, lat)) => Some(build_celestial(&params, &linear, &sip, lng, lat)?),
        };
        let celestial = match &params.lookup_tables {
            None => celestial,
            Some(tables) => {
                if params.naxis() != 2 {
                    return Err(Error::InconsistentAxes(format!(
                        "distortion lookup tables need exactly 2 WCS axes, not {}",
                        params.naxis()
                    )));
                }
                let mut celestial = celestial.ok_or(Error::NoCelestialAxes)?;
                celestial.add_lookup_tables(tables.clone());
                Some(celestial)
            }
        };
        Ok(Wcs {
            params,
            linear,
            sip,
            celestial,
        })
    }

    /// The parameters the WCS was built from (after header precedence rules and repairs).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.params().ctype, vec!["RA---TAN", "DEC--TAN"]);
    /// assert_eq!(wcs.params().crpix, vec![16.0, 16.0]); // 1-based, as in the header
    /// assert_eq!(wcs.params().pc, vec![vec![1.0, 0.0], vec![0.0, 1.0]]); // PC defaults to unity
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn params(&self) -> &WcsParams {
        &self.params
    }

    /// Number of WCS axes.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.naxis(), 2);
    /// let freq = Wcs::from_header_str("CTYPE1 = 'FREQ'\nCRVAL1 = 1.4E9\nCDELT1 = 1E6\n")?;
    /// assert_eq!(freq.naxis(), 1);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn naxis(&self) -> usize {
        self.params.naxis()
    }

    /// The N-dimensional linear step.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let mut img = [0.0; 2];
    /// wcs.linear().pix_to_img(&[25.0, 15.0], &mut img); // 0-based pixel
    /// assert!((img[0] + 0.01).abs() < 1e-15 && img[1] == 0.0);
    /// assert_eq!(wcs.linear().crpix(), &[16.0, 16.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn linear(&self) -> &Linear {
        &self.linear
    }

    /// This WCS with SIP inverted the way `how` says (see
    /// [`distortion::sip::SipInversion::astropy`]); no change without SIP.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::distortion::SipInversion;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
    ///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
    ///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
    /// let wcs = wcs.with_sip_inversion(SipInversion::astropy());
    /// let distortion = wcs.celestial()?.distortion().unwrap();
    /// assert_eq!(distortion.sip_inversion(), &SipInversion::astropy());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_sip_inversion(mut self, how: distortion::sip::SipInversion) -> Wcs {
        if let Some(d) = self.celestial.as_mut().and_then(|c| c.distortion_mut())
            && d.iterates()
        {
            d.set_sip_inversion(how);
        }
        self
    }

    /// This WCS with the distortion lookup tables of its image (`D2IMDISi`, `CPDISi`: they
    /// live in other HDUs of the file, so the header alone cannot give them; from Python,
    /// astropy's `WCS.det2im1` ... `cpdis2`). The tables join SIP in the pixel → focal-plane
    /// step, in astropy's order, and world → pixel inverts them with SIP (as
    /// [`Wcs::with_sip_inversion`] says). No change for empty `tables`. Errors:
    /// [`Error::NoCelestialAxes`] without a celestial pair, [`Error::InconsistentAxes`] for a
    /// WCS of more than two axes (astropy evaluates the tables on 2-D images only).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::distortion::{LookupTable, LookupTables};
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// // A constant CPDIS1 of a quarter pixel: every pixel sees the sky a quarter pixel on.
    /// let quarter = LookupTable::new(vec![0.25], [1, 1], [1.0; 2], [0.0; 2], [1.0; 2])?;
    /// let tables = LookupTables { cpdis: [Some(quarter), None], ..Default::default() };
    /// let shifted = wcs.clone().with_lookup_tables(tables)?;
    /// assert_eq!(shifted.pixel_to_world(10.0, 5.0), wcs.pixel_to_world(10.25, 5.0));
    /// let (lon, lat) = wcs.pixel_to_world(10.25, 5.0).unwrap();
    /// let (x, y) = shifted.world_to_pixel(lon, lat).unwrap();
    /// assert!((x - 10.0).abs() < 1e-9 && (y - 5.0).abs() < 1e-9);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_lookup_tables(self, tables: distortion::LookupTables) -> Result<Wcs> {
        if tables.is_empty() {
            return Ok(self);
        }
        let inversion = self.celestial_distortion().map(|d| *d.sip_inversion());
        let mut params = self.params;
        params.lookup_tables = Some(tables);
        let wcs = Wcs::from_params(params)?;
        Ok(match inversion {
            Some(how) => wcs.with_sip_inversion(how),
            None => wcs,
        })
    }

    fn celestial_distortion(&self) -> Option<&distortion::Distortion> {
        self.celestial.as_ref().and_then(|c| c.distortion())
    }

    /// This WCS with world → pixel computing each point as one point of the astropy
    /// `all_world2pix` call `grid` describes (no change without SIP or lookup tables).
    pub(crate) fn with_grid_schedule(
        mut self,
        grid: std::sync::Arc<distortion::GridSchedule>,
    ) -> Wcs {
        if let Some(d) = self.celestial.as_mut().and_then(|c| c.distortion_mut())
            && d.iterates()
        {
            d.set_grid_schedule(Some(grid));
        }
        self
    }

    /// The celestial transformation, or [`Error::NoCelestialAxes`].
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.celestial()?.axes(), (0, 1));
    /// let freq = Wcs::from_header_str("CTYPE1 = 'FREQ'\nCRVAL1 = 1.4E9\nCDELT1 = 1E6\n")?;
    /// assert!(matches!(freq.celestial(), Err(reproject::Error::NoCelestialAxes)));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn celestial(&self) -> Result<&CelestialTransform> {
        self.celestial.as_ref().ok_or(Error::NoCelestialAxes)
    }

    /// Whether the WCS has a celestial axis pair.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert!(wcs.has_celestial());
    /// let freq = Wcs::from_header_str("CTYPE1 = 'FREQ'\nCRVAL1 = 1.4E9\nCDELT1 = 1E6\n")?;
    /// assert!(!freq.has_celestial());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn has_celestial(&self) -> bool {
        self.celestial.is_some()
    }

    /// Whether SIP or TPV distortion is applied.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
    ///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
    ///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
    /// assert!(wcs.has_distortion());
    /// let plain = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    ///     CRVAL1 = 150\nCRVAL2 = 30\n")?;
    /// assert!(!plain.has_distortion());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn has_distortion(&self) -> bool {
        self.sip.is_some()
            || self
                .celestial
                .as_ref()
                .is_some_and(|c| c.distortion.is_some())
    }

    /// The SIP distortion (with forward polynomials), if any; its coordinates are in FITS
    /// axis order.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
    ///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
    ///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
    /// let sip = wcs.sip().unwrap();
    /// assert_eq!(sip.crpix(), [16.0, 16.0]);
    /// assert_eq!(sip.pix_to_foc(25.0, 15.0), wcs.pixel_to_focal(25.0, 15.0));
    /// let plain = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    ///     CRVAL1 = 150\nCRVAL2 = 30\n")?;
    /// assert!(plain.sip().is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn sip(&self) -> Option<&Sip> {
        self.sip.as_ref()
    }

    /// Pixel → focal-plane coordinates (0-based, FITS axis order): the pixel after SIP
    /// (astropy `WCS.pix2foc`); the pixel itself without SIP.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
    ///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
    ///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
    /// // 0-based (25, 15) is u = 10, v = 0 from CRPIX: A = A_2_0·u² = 1E-3, B = B_0_2·v² = 0.
    /// let (fx, fy) = wcs.pixel_to_focal(25.0, 15.0);
    /// assert!((fx - 25.001).abs() < 1e-12 && fy == 15.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pixel_to_focal(&self, x: f64, y: f64) -> (f64, f64) {
        match &self.sip {
            None => (x, y),
            Some(sip) => sip.pix_to_foc(x, y),
        }
    }

    /// The projection code of the celestial axes.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::projection::ProjectionCode;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.projection_code(), Some(ProjectionCode::Tan));
    /// let freq = Wcs::from_header_str("CTYPE1 = 'FREQ'\nCRVAL1 = 1.4E9\nCDELT1 = 1E6\n")?;
    /// assert_eq!(freq.projection_code(), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn projection_code(&self) -> Option<ProjectionCode> {
        self.celestial.as_ref().map(|c| c.projection.code())
    }

    /// The celestial frame of the world coordinates.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::frame::CelestialFrame;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.frame(), Some(&CelestialFrame::Icrs)); // no RADESYS, no EQUINOX
    /// let fk5 = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///     EQUINOX = 2000.0\n";
    /// let fk5 = Wcs::from_header_str(fk5)?;
    /// assert_eq!(fk5.frame(), Some(&CelestialFrame::Fk5 { equinox: 2000.0 }));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn frame(&self) -> Option<&CelestialFrame> {
        self.celestial.as_ref().map(|c| &c.frame)
    }

    /// Pixel (0-based, image order: `x` along FITS axis 1, `y` along axis 2) → (lon, lat) in
    /// degrees, in the header's frame; `None` where astropy gives NaN, and for a WCS without
    /// celestial axes (see [`Wcs::celestial`]).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let (ra, dec) = wcs.pixel_to_world(15.0, 15.0).unwrap(); // CRPIX is 1-based
    /// assert!((ra - 150.0).abs() < 1e-12 && (dec - 30.0).abs() < 1e-12);
    /// let (x, y) = wcs.world_to_pixel(ra, dec).unwrap();
    /// assert!((x - 15.0).abs() < 1e-9 && (y - 15.0).abs() < 1e-9);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pixel_to_world(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        self.celestial.as_ref()?.pixel_to_world(x, y)
    }

    /// (lon, lat) in degrees → pixel (0-based, image order); `None` where astropy gives NaN.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let (ra, dec) = wcs.pixel_to_world(40.0, -3.0).unwrap();
    /// let (x, y) = wcs.world_to_pixel(ra, dec).unwrap();
    /// assert!((x - 40.0).abs() < 1e-9 && (y + 3.0).abs() < 1e-9);
    /// assert_eq!(wcs.world_to_pixel(330.0, -30.0), None); // the antipode: no TAN pixel
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn world_to_pixel(&self, lon: f64, lat: f64) -> Option<(f64, f64)> {
        self.celestial.as_ref()?.world_to_pixel(lon, lat)
    }

    /// Batch pixel → world over slices; NaN where the point is invalid.
    ///
    /// ```
    /// # use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---CAR'\nCTYPE2 = 'DEC--CAR'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\n",
    /// )
    /// .unwrap();
    /// let (mut lon, mut lat) = (vec![0.0; 2], vec![0.0; 2]);
    /// wcs.pixel_to_world_slice(&[0.0, 500.0], &[0.0, 0.0], &mut lon, &mut lat).unwrap();
    /// assert_eq!((lon[0], lat[0]), (1.0, 1.0));
    /// assert!(lon[1].is_nan());  // beyond native longitude 180: no wrapping, as astropy
    /// ```
    pub fn pixel_to_world_slice(
        &self,
        x: &[f64],
        y: &[f64],
        lon: &mut [f64],
        lat: &mut [f64],
    ) -> Result<()> {
        let cel = self.celestial()?;
        check_lengths(&[x.len(), y.len(), lon.len(), lat.len()])?;
        for i in 0..x.len() {
            (lon[i], lat[i]) = cel
                .pixel_to_world(x[i], y[i])
                .unwrap_or((f64::NAN, f64::NAN));
        }
        Ok(())
    }

    /// Batch world → pixel over slices; NaN where the point is invalid.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let (mut x, mut y) = (vec![0.0; 2], vec![0.0; 2]);
    /// wcs.world_to_pixel_slice(&[150.0, 330.0], &[30.0, -30.0], &mut x, &mut y)?;
    /// assert!((x[0] - 15.0).abs() < 1e-9 && (y[0] - 15.0).abs() < 1e-9);
    /// assert!(x[1].is_nan() && y[1].is_nan()); // the antipode
    /// assert!(wcs.world_to_pixel_slice(&[150.0], &[30.0], &mut x, &mut y).is_err()); // lengths
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn world_to_pixel_slice(
        &self,
        lon: &[f64],
        lat: &[f64],
        x: &mut [f64],
        y: &mut [f64],
    ) -> Result<()> {
        let cel = self.celestial()?;
        check_lengths(&[lon.len(), lat.len(), x.len(), y.len()])?;
        for i in 0..lon.len() {
            (x[i], y[i]) = cel
                .world_to_pixel(lon[i], lat[i])
                .unwrap_or((f64::NAN, f64::NAN));
        }
        Ok(())
    }

    /// Batch pixel → world over arrays of any shape; NaN where the point is invalid.
    ///
    /// ```
    /// # use reproject::wcs::Wcs;
    /// use ndarray::array;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---CAR'\nCTYPE2 = 'DEC--CAR'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\n",
    /// )
    /// .unwrap();
    /// let (lon, lat) = wcs
    ///     .pixel_to_world_array(array![[0.0, 1.0]].view(), array![[0.0, 0.0]].view())
    ///     .unwrap();
    /// assert_eq!(lon, array![[1.0, 2.0]]);
    /// assert_eq!(lat, array![[1.0, 1.0]]);
    /// ```
    pub fn pixel_to_world_array<D: Dimension>(
        &self,
        x: ArrayView<f64, D>,
        y: ArrayView<f64, D>,
    ) -> Result<(Array<f64, D>, Array<f64, D>)> {
        let cel = self.celestial()?;
        map_pairs(x, y, |a, b| cel.pixel_to_world(a, b))
    }

    /// Batch world → pixel over arrays of any shape; NaN where the point is invalid.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use ndarray::array;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let (px, py) = (array![[3.0, 40.0]], array![[7.0, -3.0]]);
    /// let (ra, dec) = wcs.pixel_to_world_array(px.view(), py.view())?;
    /// let (x, y) = wcs.world_to_pixel_array(ra.view(), dec.view())?;
    /// assert!((x - &px).iter().chain((y - &py).iter()).all(|d| d.abs() < 1e-9));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn world_to_pixel_array<D: Dimension>(
        &self,
        lon: ArrayView<f64, D>,
        lat: ArrayView<f64, D>,
    ) -> Result<(Array<f64, D>, Array<f64, D>)> {
        let cel = self.celestial()?;
        map_pairs(lon, lat, |a, b| cel.world_to_pixel(a, b))
    }

    /// Pixel → world for all N axes (0-based pixel, one value per axis). Celestial axes that a
    /// projection cannot map are NaN; other axes are linear (`CRVAL + x`) or logarithmic.
    ///
    /// ```
    /// # use reproject::wcs::Wcs;
    /// let h = "CTYPE1 = 'RA---CAR'\nCTYPE2 = 'DEC--CAR'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\n\
    ///          CTYPE3 = 'FREQ'\nCRVAL3 = 1.4E9\nCDELT3 = 1.0E6\n";
    /// let wcs = Wcs::from_header_str(h).unwrap();
    /// let world = wcs.pixel_to_world_nd(&[0.0, 0.0, 1.0]).unwrap();
    /// assert_eq!(world, vec![1.0, 1.0, 1.402e9]);
    /// ```
    pub fn pixel_to_world_nd(&self, pixel: &[f64]) -> Result<Vec<f64>> {
        let n = self.naxis();
        check_lengths(&[pixel.len(), n])?;
        let mut img = vec![0.0; n];
        match &self.sip {
            None => self.linear.pix_to_img(pixel, &mut img),
            Some(sip) => {
                let (f0, f1) = sip.pix1_to_foc1(pixel[0] + 1.0, pixel[1] + 1.0);
                self.linear.pix1_to_img(&[f0, f1], &mut img);
            }
        }
        let mut world = vec![0.0; n];
        for (i, axis) in self.params.axis_types.iter().enumerate() {
            if !matches!(axis, AxisType::Longitude | AxisType::Latitude) {
                world[i] = plane::axis_world(&self.params, i)?.to_world(img[i]);
            }
        }
        if let Some(cel) = &self.celestial {
            if let Some(d) = &cel.distortion {
                (img[cel.lng], img[cel.lat]) =
                    d.pix_to_img(&cel.linear, pixel[cel.lng], pixel[cel.lat]);
            }
            let (lon, lat) = cel
                .projection
                .x2s(img[cel.lng], img[cel.lat])
                .map(|(phi, theta)| cel.rotation.native_to_celestial(phi, theta))
                .unwrap_or((f64::NAN, f64::NAN));
            world[cel.lng] = lon;
            world[cel.lat] = lat;
        }
        Ok(world)
    }

    /// World → pixel for all N axes; the inverse of [`Wcs::pixel_to_world_nd`].
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---CAR'\nCTYPE2 = 'DEC--CAR'\nCTYPE3 = 'FREQ'\n\
    ///     CRVAL1 = 0.0\nCRVAL2 = 0.0\nCRVAL3 = 1.4E9\nCDELT3 = 1.0E6\n")?;
    /// let pixel = wcs.world_to_pixel_nd(&[1.0, 1.0, 1.402e9])?;
    /// assert!(pixel.iter().zip([0.0, 0.0, 1.0]).all(|(p, q)| (p - q).abs() < 1e-9));
    /// assert_eq!(wcs.pixel_to_world_nd(&pixel)?, vec![1.0, 1.0, 1.402e9]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn world_to_pixel_nd(&self, world: &[f64]) -> Result<Vec<f64>> {
        let n = self.naxis();
        check_lengths(&[world.len(), n])?;
        let mut img = vec![0.0; n];
        for (i, axis) in self.params.axis_types.iter().enumerate() {
            if !matches!(axis, AxisType::Longitude | AxisType::Latitude) {
                img[i] = plane::axis_world(&self.params, i)?.to_intermediate(world[i]);
            }
        }
        if let Some(cel) = &self.celestial {
            let (u, v) = Some((world[cel.lng], world[cel.lat]))
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .and_then(|(a, b)| {
                    let (phi, theta) = cel.rotation.celestial_to_native(a, b);
                    cel.projection.s2x(phi, theta)
                })
                .unwrap_or((f64::NAN, f64::NAN));
            img[cel.lng] = u;
            img[cel.lat] = v;
        }
        let mut pixel = vec![0.0; n];
        self.linear.img_to_pix(&img, &mut pixel);
        if let Some(cel) = self.celestial.as_ref().filter(|c| c.distortion.is_some()) {
            let (u, v) = (img[cel.lng], img[cel.lat]);
            (pixel[cel.lng], pixel[cel.lat]) = if u.is_finite() && v.is_finite() {
                cel.intermediate_to_pixel(u, v)
                    .unwrap_or((f64::NAN, f64::NAN))
            } else {
                (f64::NAN, f64::NAN)
            };
        } else if let Some(sip) = &self.sip {
            // A non-celestial 2-axis WCS with SIP.
            let s = sip.invert(pixel[0], pixel[1], &Default::default());
            (pixel[0], pixel[1]) = (s.x, s.y);
        }
        Ok(pixel)
    }
}

/// Hand-built or deserialised parameters must have one entry per axis everywhere (found by
/// fuzzing: a short `crval` made `from_params` index out of bounds).
fn check_param_lengths(params: &WcsParams) -> Result<()> {
    let n = params.naxis();
    for (name, len) in [
        ("ctype", params.ctype.len()),
        ("cunit", params.cunit.len()),
        ("crval", params.crval.len()),
        ("axis_types", params.axis_types.len()),
    ] {
        if len != n {
            return Err(Error::ShapeMismatch(format!(
                "WCS parameters of {n} axes (crpix) with {len} {name} entries"
            )));
        }
    }
    Ok(())
}

fn check_lengths(lengths: &[usize]) -> Result<()> {
    if lengths.windows(2).all(|w| w[0] == w[1]) {
        Ok(())
    } else {
        Err(Error::ShapeMismatch(format!(
            "coordinate arrays of different lengths {lengths:?}"
        )))
    }
}

fn map_pairs<D: Dimension>(
    a: ArrayView<f64, D>,
    b: ArrayView<f64, D>,
    f: impl Fn(f64, f64) -> Option<(f64, f64)>,
) -> Result<(Array<f64, D>, Array<f64, D>)> {
    if a.shape() != b.shape() {
        return Err(Error::ShapeMismatch(format!(
            "coordinate arrays of shapes {:?} and {:?}",
            a.shape(),
            b.shape()
        )));
    }
    let mut out_a = Array::zeros(a.raw_dim());
    let mut out_b = Array::zeros(a.raw_dim());
    Zip::from(&mut out_a)
        .and(&mut out_b)
        .and(&a)
        .and(&b)
        .for_each(|oa, ob, &va, &vb| {
            (*oa, *ob) = f(va, vb).unwrap_or((f64::NAN, f64::NAN));
        });
    Ok((out_a, out_b))
}

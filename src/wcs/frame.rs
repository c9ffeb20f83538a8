//! The celestial reference frame of a WCS, chosen from CTYPE, RADESYS and EQUINOX by the rules
//! WCSLIB's `wcsset` and astropy's `wcs_to_celestial_frame` apply.

use serde::{Deserialize, Serialize};

/// A celestial frame as astropy would build it for a FITS WCS.
///
/// ```
/// use reproject::wcs::frame::CelestialFrame;
/// assert_eq!(
///     CelestialFrame::from_keywords("RA", None, Some(2000.0)),
///     CelestialFrame::Fk5 { equinox: 2000.0 }
/// );
/// assert_eq!(CelestialFrame::from_keywords("RA", None, None), CelestialFrame::Icrs);
/// assert_eq!(
///     CelestialFrame::from_keywords("RA", None, Some(1950.0)),
///     CelestialFrame::Fk4 { equinox: 1950.0 }
/// );
/// assert_eq!(CelestialFrame::from_keywords("GLON", None, None), CelestialFrame::Galactic);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CelestialFrame {
    /// International Celestial Reference System.
    Icrs,
    /// FK5 at a Julian equinox (years).
    Fk5 {
        /// Equinox, Julian years.
        equinox: f64,
    },
    /// FK4 with E-terms of aberration, at a Besselian equinox (obstime = equinox, as astropy).
    Fk4 {
        /// Equinox, Besselian years.
        equinox: f64,
    },
    /// FK4 without E-terms, at a Besselian equinox.
    Fk4NoETerms {
        /// Equinox, Besselian years.
        equinox: f64,
    },
    /// Geocentric apparent place (RADESYS = 'GAPPT'); needs an observation date to use.
    GeocentricApparent,
    /// IAU 1958 galactic coordinates.
    Galactic,
    /// De Vaucouleurs supergalactic coordinates (SLON/SLAT).
    Supergalactic,
    /// Anything else (planetary, terrestrial, unknown): kept by name.
    Other(String),
}

impl CelestialFrame {
    /// The frame for an axis-type prefix (`RA`, `GLON`, `ELON`, ...), RADESYS and EQUINOX
    /// (EQUINOX already falls back to EPOCH in the caller).
    ///
    /// Like astropy, ecliptic (`ELON`) and helioecliptic (`HLON`) axes take the equatorial
    /// frame RADESYS/EQUINOX select (astropy issue #6483).
    ///
    /// ```
    /// use reproject::wcs::frame::CelestialFrame;
    /// let ecliptic = CelestialFrame::from_keywords("ELON", Some("FK5"), None);
    /// assert_eq!(ecliptic, CelestialFrame::Fk5 { equinox: 2000.0 }); // FK5 defaults to J2000
    /// let fk4 = CelestialFrame::from_keywords("RA", Some("FK4-NO-E"), Some(1950.0));
    /// assert_eq!(fk4, CelestialFrame::Fk4NoETerms { equinox: 1950.0 });
    /// let planet = CelestialFrame::from_keywords("MALN", None, None);
    /// assert_eq!(planet, CelestialFrame::Other("MALN".into()));
    /// ```
    pub fn from_keywords(prefix: &str, radesys: Option<&str>, equinox: Option<f64>) -> Self {
        match prefix {
            "RA" | "ELON" | "HLON" => {}
            "GLON" => return CelestialFrame::Galactic,
            "SLON" => return CelestialFrame::Supergalactic,
            other => return CelestialFrame::Other(other.to_string()),
        }
        match radesys.map(str::trim) {
            Some("ICRS") => CelestialFrame::Icrs,
            Some("FK5") => CelestialFrame::Fk5 {
                equinox: equinox.unwrap_or(2000.0),
            },
            Some("FK4") => CelestialFrame::Fk4 {
                equinox: equinox.unwrap_or(1950.0),
            },
            Some("FK4-NO-E") => CelestialFrame::Fk4NoETerms {
                equinox: equinox.unwrap_or(1950.0),
            },
            Some("GAPPT") => CelestialFrame::GeocentricApparent,
            Some(other) if !other.is_empty() => CelestialFrame::Other(other.to_string()),
            _ => match equinox {
                None => CelestialFrame::Icrs,
                Some(e) if e < 1984.0 => CelestialFrame::Fk4 { equinox: e },
                Some(e) => CelestialFrame::Fk5 { equinox: e },
            },
        }
    }
}

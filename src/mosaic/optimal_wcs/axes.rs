//! The output's celestial axes as astropy's `celestial_frame_to_wcs` writes them, and the
//! date they may carry.

use crate::error::{Error, Result};
use crate::wcs::calendar::{civil_from_days, days_from_civil};
use crate::wcs::frame::CelestialFrame;
use crate::wcs::Wcs;

/// reproject's `NEGATIVE_CDELT_CTYPES`.
pub(super) const NEGATIVE_CDELT_CTYPES: [&str; 5] = ["RA--", "GLON", "ELON", "HLON", "SLON"];

/// What astropy's `celestial_frame_to_wcs` writes for a frame.
#[derive(Debug, Clone)]
pub(super) struct OutputAxes {
    /// The first four characters of the longitude and latitude CTYPEs.
    pub(super) lon: String,
    pub(super) lat: String,
    pub(super) radesys: Option<&'static str>,
    pub(super) equinox: Option<f64>,
    pub(super) date_obs: Option<String>,
}

/// The axes astropy writes for `frame` (`None` where astropy has no FITS WCS for it); `source`
/// is the input whose frame it is (for the observation date of ITRS).
pub(super) fn output_axes(frame: &CelestialFrame, source: Option<&Wcs>) -> Option<OutputAxes> {
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
pub(super) fn isot_milliseconds(date: &str) -> String {
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
        let mut days = days_from_civil(y, m, d);
        days += ms.div_euclid(86_400_000);
        let ms = ms.rem_euclid(86_400_000);
        let (y, m, d) = civil_from_days(days);
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

/// A projection code must be three letters or digits (WCSLIB rejects anything else as an
/// unrecognised code; this also keeps the header text well formed).
pub(super) fn check_projection(code: &str) -> Result<()> {
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(Error::UnknownProjection(code.to_string()))
    }
}

//! Observation dates as WCSLIB's `datfix` and astropy leave them: old `DD/MM/YY` dates,
//! ISO 8601 ↔ MJD.

use crate::wcs::calendar::{civil_from_days, days_from_civil, MJD_EPOCH_DAYS};

/// WCSLIB's `datfix` for the observation date: an old `DD/MM/YY` DATE-OBS becomes ISO 8601,
/// a missing MJD-OBS is derived from DATE-OBS and a missing DATE-OBS from MJD-OBS. An
/// unreadable date is left as it is (no supported frame depends on it).
pub(super) fn date_fix(date: Option<String>, mjd: Option<f64>) -> (Option<String>, Option<f64>) {
    let date = date.map(|d| {
        let d = d.trim().to_string();
        match d.split('/').collect::<Vec<_>>()[..] {
            [dd, mm, yy] if dd.len() == 2 && mm.len() == 2 && yy.len() == 2 => {
                format!("19{yy}-{mm}-{dd}")
            }
            _ => d,
        }
    });
    let mjd = mjd.or_else(|| date.as_deref().and_then(iso_to_mjd));
    let date = date.or_else(|| mjd.and_then(mjd_to_iso));
    (date, mjd)
}

/// `YYYY-MM-DD[Thh:mm:ss[.s]]` → MJD.
pub(super) fn iso_to_mjd(text: &str) -> Option<f64> {
    let (date, time) = text.split_once('T').unwrap_or((text, ""));
    let mut parts = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    // Years beyond ±10^9 would overflow the day count (found by fuzzing).
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
        || y.unsigned_abs() > 1_000_000_000
        || parts.next().is_some()
    {
        return None;
    }
    let mut seconds = 0.0;
    if !time.is_empty() {
        let mut hms = time.split(':').map(|p| p.parse::<f64>().ok());
        let (h, mi, s) = (
            hms.next()??,
            hms.next().flatten().unwrap_or(0.0),
            hms.next().flatten().unwrap_or(0.0),
        );
        seconds = h * 3600.0 + mi * 60.0 + s;
    }
    Some((days_from_civil(y, m, d) + MJD_EPOCH_DAYS) as f64 + seconds / 86400.0)
}

/// MJD → `YYYY-MM-DDThh:mm:ss` (to the second); `None` beyond ±10^11 days, where the
/// integer day arithmetic would overflow (found by fuzzing: MJD-OBS = 1E300).
pub(super) fn mjd_to_iso(mjd: f64) -> Option<String> {
    if mjd.is_nan() || mjd.abs() > 1e11 {
        return None;
    }
    let day = mjd.floor();
    let mut seconds = ((mjd - day) * 86400.0).round() as i64;
    let mut day = day as i64;
    if seconds >= 86400 {
        seconds -= 86400;
        day += 1;
    }
    let (y, m, d) = civil_from_days(day - MJD_EPOCH_DAYS);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    ))
}

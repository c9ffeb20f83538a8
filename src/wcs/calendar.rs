//! The proleptic Gregorian calendar as day counts (Howard Hinnant's `days_from_civil` and
//! `civil_from_days`), exact for every year an `i64` day count holds: observation dates
//! (`DATE-OBS` ↔ `MJD-OBS`), dates written into output headers.

/// Days from 1970-01-01 of the date `(year, month, day)` (month 1-12); negative before.
///
/// ```
/// use reproject::wcs::calendar::days_from_civil;
/// assert_eq!(days_from_civil(1970, 1, 1), 0);
/// assert_eq!(days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28), 2); // a leap year
/// assert_eq!(days_from_civil(1858, 11, 17), -MJD_EPOCH_DAYS);
/// # use reproject::wcs::calendar::MJD_EPOCH_DAYS;
/// ```
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Years counted from March, so that the leap day ends a year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `(year, month, day)` that is `days` days from 1970-01-01: the inverse of
/// [`days_from_civil`].
///
/// ```
/// use reproject::wcs::calendar::{civil_from_days, days_from_civil};
/// assert_eq!(civil_from_days(0), (1970, 1, 1));
/// assert_eq!(civil_from_days(days_from_civil(-4713, 11, 24)), (-4713, 11, 24));
/// ```
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    };
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

/// Days from the MJD epoch (1858-11-17) to 1970-01-01: MJD = days from 1970 + this.
///
/// ```
/// use reproject::wcs::calendar::{days_from_civil, MJD_EPOCH_DAYS};
/// assert_eq!(days_from_civil(2000, 1, 1) + MJD_EPOCH_DAYS, 51_544); // MJD of 2000-01-01
/// ```
pub const MJD_EPOCH_DAYS: i64 = 40_587;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_day_of_twelve_thousand_years() {
        let first = days_from_civil(-6000, 1, 1);
        let mut expected = (-6000, 1, 1);
        for days in first..days_from_civil(6000, 1, 1) {
            assert_eq!(civil_from_days(days), expected, "{days}");
            assert_eq!(days_from_civil(expected.0, expected.1, expected.2), days);
            expected = next_day(expected);
        }
    }

    /// The day after, by the rules themselves.
    fn next_day((y, m, d): (i64, i64, i64)) -> (i64, i64, i64) {
        let leap = y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0);
        let length = match m {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        match (d < length, m < 12) {
            (true, _) => (y, m, d + 1),
            (false, true) => (y, m + 1, 1),
            (false, false) => (y + 1, 1, 1),
        }
    }
}

//! Times, as astropy.time keeps them: a two-part TT Julian date.

pub(super) const DJ00: f64 = 2451545.0;
pub(super) const DJM0: f64 = 2400000.5;
pub(super) const DJM00: f64 = 51544.5;
pub(super) const DJC: f64 = 36525.0;
const DJY: f64 = 365.25;
/// Tropical year in days (ERFA `ERFA_DTY`).
const DTY: f64 = 365.242198781;
/// Arcseconds to radians (ERFA `ERFA_DAS2R`).
pub(super) const DAS2R: f64 = 4.848_136_811_095_36e-6;

/// A TT time as astropy's `Time` stores it (`jd1` integral, `jd2` in [-0.5, 0.5]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Epoch {
    pub(super) jd1: f64,
    pub(super) jd2: f64,
}

impl Epoch {
    /// `Time(year, format='byear')` (ERFA `epb2jd`, then astropy's `day_frac`).
    pub(super) fn besselian(year: f64) -> Epoch {
        let (jd1, jd2) = day_frac(DJM0, 15019.81352 + (year - 1900.0) * DTY);
        Epoch { jd1, jd2 }
    }

    /// `Time(year, format='jyear')` (ERFA `epj2jd`, then `day_frac`).
    pub(super) fn julian(year: f64) -> Epoch {
        let (jd1, jd2) = day_frac(DJM0, DJM00 + (year - 2000.0) * DJY);
        Epoch { jd1, jd2 }
    }

    /// `Time.jd`.
    pub(super) fn jd(self) -> f64 {
        self.jd1 + self.jd2
    }

    /// `Time.byear` (ERFA `epb`).
    pub(super) fn byear(self) -> f64 {
        1900.0 + ((self.jd1 - DJ00) + (self.jd2 + 36524.68648)) / DTY
    }

    /// `Time.jyear` (ERFA `epj`).
    pub(super) fn jyear(self) -> f64 {
        2000.0 + ((self.jd1 - DJ00) + self.jd2) / DJY
    }
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let x = a + b;
    let eb = x - a;
    let ea = x - eb;
    (x, (a - ea) + (b - eb))
}

/// numpy's `sign` (0 for 0).
fn np_sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// astropy.time.utils.day_frac without factor/divisor.
fn day_frac(val1: f64, val2: f64) -> (f64, f64) {
    let (sum12, err12) = two_sum(val1, val2);
    let mut day = sum12.round_ties_even();
    let (frac, check) = two_sum(sum12 - day, err12);
    let excess = if frac * np_sign(check) != 0.5 {
        frac.round_ties_even()
    } else {
        (frac + 2.0 * check).round_ties_even()
    };
    day += excess;
    let frac = (sum12 - day) + err12;
    (day, frac)
}

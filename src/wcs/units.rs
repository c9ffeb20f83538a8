//! Physical units of world axes (`CUNITi`): parsing FITS/VOUnit strings into a scale and
//! dimensions, and the conversion factor between two units.
//!
//! Used where astropy converts world values: spectral axes are brought to SI when a WCS is set
//! up (WCSLIB's `wcs_units`), and a non-celestial world value of the output WCS is converted to
//! the unit of the input WCS before it goes back to pixels (astropy's `Quantity(value, unit)`
//! in `world_to_pixel`).
//!
//! ```
//! use reproject::wcs::units::Unit;
//! let kms = Unit::parse("km/s").unwrap();
//! assert_eq!(kms.factor_to(&Unit::parse("m s-1").unwrap()).unwrap(), 1000.0);
//! assert!(kms.factor_to(&Unit::parse("Hz").unwrap()).is_err());
//! ```

use crate::error::{Error, Result};

/// Exponents of the SI base dimensions: length, mass, time, angle, temperature, count,
/// pixel, and flux density (kept apart so that `Jy` converts only to itself).
type Dims = [i8; 8];

const NONE: Dims = [0; 8];

/// A unit: a factor to the SI (or base) unit and its dimensions.
///
/// ```
/// use reproject::wcs::units::Unit;
/// assert_eq!(Unit::parse("km s-1")?, Unit::parse("km/s")?); // one unit, two spellings
/// let deg = Unit::parse("deg")?;
/// assert_eq!(deg.factor_to(&Unit::parse("arcsec")?)?, 3600.0);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    scale: f64,
    dims: Dims,
}

impl Unit {
    /// The dimensionless unit of an empty `CUNITi`.
    ///
    /// ```
    /// use reproject::wcs::units::Unit;
    /// assert_eq!(Unit::parse("")?, Unit::DIMENSIONLESS);
    /// assert!(Unit::DIMENSIONLESS.factor_to(&Unit::parse("m")?).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub const DIMENSIONLESS: Unit = Unit {
        scale: 1.0,
        dims: NONE,
    };

    /// Parses a unit string: products of terms separated by `.`, `*` or spaces, quotients by
    /// `/`, powers written `m2`, `s-1`, `m**2` or `m^2`, with SI prefixes on SI units.
    ///
    /// ```
    /// use reproject::wcs::units::Unit;
    /// let ghz = Unit::parse("GHz").unwrap();
    /// assert_eq!(ghz.factor_to(&Unit::parse("Hz").unwrap()).unwrap(), 1e9);
    /// assert!(Unit::parse("furlong").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Unit> {
        let text = legacy_spelling(text.trim());
        let bad = |why: &str| Error::InvalidArgument(format!("unit '{text}': {why}"));
        let mut unit = Unit::DIMENSIONLESS;
        let mut dividing = false;
        let mut term = String::new();
        let mut flush = |term: &mut String, dividing: bool| -> Result<()> {
            if !term.is_empty() {
                let t = parse_term(term).ok_or_else(|| bad(&format!("unknown unit '{term}'")))?;
                unit = unit.times(t, if dividing { -1 } else { 1 });
                term.clear();
            }
            Ok(())
        };
        for c in text.chars() {
            match c {
                '/' => {
                    flush(&mut term, dividing)?;
                    dividing = true;
                }
                '.' | ' ' | '(' | ')' => flush(&mut term, dividing)?,
                '*' if !text.contains("**") => flush(&mut term, dividing)?,
                _ => term.push(c),
            }
        }
        flush(&mut term, dividing)?;
        Ok(unit)
    }

    /// The factor `f` such that a value `v` in `self` is `v · f` in `to`; an error naming
    /// both units when they measure different quantities (astropy's `UnitConversionError`).
    ///
    /// ```
    /// use reproject::wcs::units::Unit;
    /// let nm = Unit::parse("nm")?;
    /// assert_eq!(nm.factor_to(&Unit::parse("Angstrom")?)?, 10.0); // 1 nm is 10 Angstrom
    /// let err = nm.factor_to(&Unit::parse("Hz")?).unwrap_err();
    /// assert!(err.to_string().contains("not convertible"));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn factor_to(&self, to: &Unit) -> Result<f64> {
        if self.dims != to.dims {
            return Err(Error::InvalidArgument(format!(
                "world units are not convertible ({} and {})",
                describe(&self.dims),
                describe(&to.dims)
            )));
        }
        Ok(self.scale / to.scale)
    }

    fn times(self, other: Unit, power: i32) -> Unit {
        let mut dims = self.dims;
        for (d, o) in dims.iter_mut().zip(other.dims) {
            *d += o * power as i8;
        }
        Unit {
            scale: self.scale * other.scale.powi(power),
            dims,
        }
    }
}

/// The factor from the unit string `from` to `to`: exactly 1 when the strings are equal
/// (astropy does not rescale a quantity already in the wanted unit), otherwise the ratio of
/// their scales, or an error when they measure different quantities or cannot be parsed.
///
/// ```
/// use reproject::wcs::units::conversion_factor;
/// assert_eq!(conversion_factor("km", "m").unwrap(), 1000.0);
/// assert_eq!(conversion_factor("furlong", "furlong").unwrap(), 1.0);
/// assert!(conversion_factor("", "m").is_err());
/// ```
pub fn conversion_factor(from: &str, to: &str) -> Result<f64> {
    if from.trim() == to.trim() {
        return Ok(1.0);
    }
    Unit::parse(from)?.factor_to(&Unit::parse(to)?)
}

/// The standard spelling of the legacy (upper-case) unit strings that WCSLIB's `wcsutrn`
/// translates when astropy reads a header (checked against astropy 8.0: `HZ`, `GHZ`, `KM/SEC`
/// and `METERS` are read; `KM/S` is km per siemens and `ANGSTROM` is an error there too).
fn legacy_spelling(text: &str) -> &str {
    match text.to_ascii_uppercase().as_str() {
        "HZ" => "Hz",
        "KHZ" => "kHz",
        "MHZ" => "MHz",
        "GHZ" => "GHz",
        "M/SEC" => "m/s",
        "KM/SEC" => "km/s",
        "METER" | "METERS" => "m",
        _ => text,
    }
}

/// One term: an optional prefix, a unit symbol and an optional power.
fn parse_term(term: &str) -> Option<Unit> {
    let (symbol, power) = split_power(term)?;
    let base = base_unit(symbol).or_else(|| {
        // The longest prefix first: 'da' before 'd'.
        PREFIXES.iter().find_map(|&(p, f)| {
            let rest = symbol.strip_prefix(p)?;
            let (unit, prefixable) = named_unit(rest)?;
            prefixable.then_some(Unit {
                scale: unit.scale * f,
                dims: unit.dims,
            })
        })
    })?;
    Some(Unit::DIMENSIONLESS.times(base, power))
}

/// `m2` → (`m`, 2), `s-1` → (`s`, -1), `m**2`, `m^2`; plain numbers are not units.
fn split_power(term: &str) -> Option<(&str, i32)> {
    let term = term.trim_end_matches('*');
    for sep in ["**", "^"] {
        if let Some((s, p)) = term.split_once(sep) {
            return Some((s, p.trim_matches(|c| c == '(' || c == ')').parse().ok()?));
        }
    }
    let digits = term
        .char_indices()
        .find(|&(_, c)| c == '-' || c == '+' || c.is_ascii_digit())
        .map(|(i, _)| i)
        .unwrap_or(term.len());
    if digits == 0 {
        return None;
    }
    let (symbol, power) = term.split_at(digits);
    let power = if power.is_empty() {
        1
    } else {
        power.parse().ok()?
    };
    Some((symbol, power))
}

fn base_unit(symbol: &str) -> Option<Unit> {
    named_unit(symbol).map(|(u, _)| u)
}

const PREFIXES: [(&str, f64); 21] = [
    ("da", 1e1),
    ("Y", 1e24),
    ("Z", 1e21),
    ("E", 1e18),
    ("P", 1e15),
    ("T", 1e12),
    ("G", 1e9),
    ("M", 1e6),
    ("k", 1e3),
    ("h", 1e2),
    ("d", 1e-1),
    ("c", 1e-2),
    ("m", 1e-3),
    ("u", 1e-6),
    ("\u{b5}", 1e-6),
    ("n", 1e-9),
    ("p", 1e-12),
    ("f", 1e-15),
    ("a", 1e-18),
    ("z", 1e-21),
    ("y", 1e-24),
];

/// A unit symbol: its value and whether SI prefixes apply to it.
fn named_unit(symbol: &str) -> Option<(Unit, bool)> {
    const L: usize = 0;
    const M: usize = 1;
    const T: usize = 2;
    const A: usize = 3;
    const K: usize = 4;
    const N: usize = 5;
    const P: usize = 6;
    const F: usize = 7;
    let dims = |pairs: &[(usize, i8)]| {
        let mut d = NONE;
        for &(i, p) in pairs {
            d[i] = p;
        }
        d
    };
    let u = |scale: f64, pairs: &[(usize, i8)]| Unit {
        scale,
        dims: dims(pairs),
    };
    let deg = std::f64::consts::PI / 180.0;
    let c = 299_792_458.0;
    let e_charge = 1.602_176_634e-19;
    Some(match symbol {
        "" => (Unit::DIMENSIONLESS, false),
        "m" => (u(1.0, &[(L, 1)]), true),
        "g" => (u(1e-3, &[(M, 1)]), true),
        "s" => (u(1.0, &[(T, 1)]), true),
        "Hz" => (u(1.0, &[(T, -1)]), true),
        "J" => (u(1.0, &[(M, 1), (L, 2), (T, -2)]), true),
        "W" => (u(1.0, &[(M, 1), (L, 2), (T, -3)]), true),
        "eV" => (u(e_charge, &[(M, 1), (L, 2), (T, -2)]), true),
        "erg" => (u(1e-7, &[(M, 1), (L, 2), (T, -2)]), false),
        "rad" => (u(1.0, &[(A, 1)]), true),
        "sr" => (u(1.0, &[(A, 2)]), false),
        "deg" => (u(deg, &[(A, 1)]), false),
        "arcmin" => (u(deg / 60.0, &[(A, 1)]), false),
        "arcsec" => (u(deg / 3600.0, &[(A, 1)]), false),
        "mas" => (u(deg / 3.6e6, &[(A, 1)]), false),
        "K" => (u(1.0, &[(K, 1)]), true),
        "Angstrom" | "angstrom" => (u(1e-10, &[(L, 1)]), false),
        "AU" | "au" => (u(149_597_870_700.0, &[(L, 1)]), false),
        "pc" => (u(3.085_677_581_467_191_6e16, &[(L, 1)]), true),
        "lyr" => (u(c * 365.25 * 86400.0, &[(L, 1)]), false),
        "min" => (u(60.0, &[(T, 1)]), false),
        "h" => (u(3600.0, &[(T, 1)]), false),
        "d" => (u(86400.0, &[(T, 1)]), false),
        "a" | "yr" => (u(365.25 * 86400.0, &[(T, 1)]), true),
        "Jy" => (u(1.0, &[(F, 1)]), true),
        "ct" | "count" | "photon" | "ph" | "adu" | "ADU" => (u(1.0, &[(N, 1)]), false),
        "pix" | "pixel" => (u(1.0, &[(P, 1)]), false),
        _ => return None,
    })
}

fn describe(dims: &Dims) -> String {
    const NAMES: [&str; 8] = ["m", "kg", "s", "rad", "K", "count", "pix", "Jy"];
    let parts: Vec<String> = dims
        .iter()
        .zip(NAMES)
        .filter(|&(&p, _)| p != 0)
        .map(|(&p, n)| if p == 1 { n.into() } else { format!("{n}{p}") })
        .collect();
    if parts.is_empty() {
        "dimensionless".into()
    } else {
        parts.join(" ")
    }
}

/// The SI unit WCSLIB gives a spectral axis type (the first four characters of its CTYPE),
/// or `None` when the type is not spectral.
///
/// ```
/// use reproject::wcs::units::spectral_si_unit;
/// assert_eq!(spectral_si_unit("VRAD"), Some("m/s"));
/// assert_eq!(spectral_si_unit("PIXX"), None);
/// ```
pub fn spectral_si_unit(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "FREQ" => "Hz",
        "AFRQ" => "rad/s",
        "ENER" => "J",
        "WAVN" => "/m",
        "VRAD" | "VOPT" | "VELO" => "m/s",
        "WAVE" | "AWAV" => "m",
        "ZOPT" | "BETA" => "",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_powers() {
        let f = |a: &str, b: &str| conversion_factor(a, b).unwrap();
        assert_eq!(f("GHz", "Hz"), 1e9);
        assert_eq!(f("MHz", "kHz"), 1e3);
        assert_eq!(f("Hz", "GHz"), 1e-9);
        assert_eq!(f("nm", "m"), 1e-9);
        assert_eq!(f("um", "m"), 1e-6);
        assert_eq!(f("Angstrom", "m"), 1e-10);
        assert_eq!(f("cm-1", "/m"), 100.0);
        assert_eq!(f("km s-1", "m/s"), 1000.0);
        assert_eq!(f("km.s**-1", "m/s"), 1000.0);
        assert_eq!(f("m2", "cm^2"), 1e4);
        assert_eq!(f("deg", "arcsec"), 3600.0);
        assert_eq!(f("keV", "eV"), 1e3);
        assert_eq!(f("dam", "m"), 10.0);
        assert!((f("eV", "J") - 1.602_176_634e-19).abs() < 1e-30);
    }

    #[test]
    fn legacy_upper_case_spellings() {
        let f = |a: &str, b: &str| conversion_factor(a, b).unwrap();
        assert_eq!(f("GHZ", "Hz"), 1e9);
        assert_eq!(f("HZ", "Hz"), 1.0);
        assert_eq!(f("KM/SEC", "m/s"), 1000.0);
        assert_eq!(f("METERS", "m"), 1.0);
        // As in astropy: KM/S is km per siemens (no such unit here), ANGSTROM an error.
        assert!(conversion_factor("KM/S", "m/s").is_err());
        assert!(conversion_factor("ANGSTROM", "m").is_err());
    }

    #[test]
    fn different_quantities_do_not_convert() {
        for (a, b) in [
            ("", "m"),
            ("Hz", "m"),
            ("s", "Hz"),
            ("deg", "pix"),
            ("Jy", "W"),
        ] {
            let err = conversion_factor(a, b).unwrap_err();
            assert!(
                err.to_string().contains("not convertible"),
                "{a} {b}: {err}"
            );
        }
    }

    #[test]
    fn unknown_units_are_errors_unless_identical() {
        assert!(Unit::parse("furlong").is_err());
        assert!(Unit::parse("m3x").is_err());
        assert_eq!(conversion_factor("furlong", "furlong").unwrap(), 1.0);
        assert!(conversion_factor("furlong", "m").is_err());
    }

    #[test]
    fn spectral_units_are_si() {
        for kind in [
            "FREQ", "AFRQ", "ENER", "WAVN", "VRAD", "VOPT", "VELO", "WAVE", "AWAV", "ZOPT", "BETA",
        ] {
            Unit::parse(spectral_si_unit(kind).unwrap()).unwrap();
        }
    }
}

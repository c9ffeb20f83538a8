//! The output WCS being built and its FITS header cards.

use super::axes::OutputAxes;
use crate::error::Result;
use crate::wcs::Wcs;

/// The output WCS being built.
pub(super) struct OutputWcs {
    pub(super) axes: OutputAxes,
    pub(super) projection: String,
    pub(super) crpix: [f64; 2],
    pub(super) pc: Option<[[f64; 2]; 2]>,
    pub(super) cdelt: [f64; 2],
    pub(super) crval: [f64; 2],
    /// LONPOLE and LATPOLE as WCSLIB sets them (written as astropy writes them).
    pub(super) poles: Option<(f64, f64)>,
    /// (rows, columns), for NAXIS1/NAXIS2.
    pub(super) shape: Option<(usize, usize)>,
}

impl OutputWcs {
    pub(super) fn wcs(&self) -> Result<Wcs> {
        Wcs::from_header_str(&self.header())
    }

    /// The header text, in astropy's card order.
    pub(super) fn header(&self) -> String {
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
pub(super) fn card_float(key: &str, value: f64, comment: &str) -> String {
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

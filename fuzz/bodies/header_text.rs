//! `header_text`: arbitrary bytes as FITS header text.
//!
//! The bytes are read as UTF-8 (invalid sequences replaced, as a caller holding bytes would do)
//! and handed to `Header::parse`, `Wcs::from_header_str` and `Wcs::from_header_str_alt` (alternate
//! description 'A'). Every WCS that builds goes through `common::check_wcs` and a
//! `PixelTransform` to itself and to a fixed galactic CAR WCS.
//!
//! Input bytes up to the first NUL (if any) are the header; 16-byte groups after it are extra
//! points (pairs of little-endian f64).

use std::sync::OnceLock;

use reproject::wcs::header::Header;
use reproject::wcs::Wcs;

use super::common::{check_pixel_transform, check_wcs};

/// A fixed, valid WCS to pair fuzzed ones with (frame change included).
pub fn reference_wcs() -> &'static Wcs {
    static REFERENCE: OnceLock<Wcs> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        Wcs::from_header_str(
            "CTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\nCRPIX1 = 50.5\nCRPIX2 = 25.5\n\
             CRVAL1 = 10.0\nCRVAL2 = 0.0\nCDELT1 = -0.1\nCDELT2 = 0.1\n",
        )
        .expect("the reference WCS")
    })
}

/// Extra points from the bytes after the header: little-endian f64 pairs.
pub fn points_from(bytes: &[u8]) -> Vec<(f64, f64)> {
    bytes
        .chunks_exact(16)
        .take(8)
        .map(|c| {
            let x = f64::from_le_bytes(c[..8].try_into().unwrap());
            let y = f64::from_le_bytes(c[8..].try_into().unwrap());
            (x, y)
        })
        .collect()
}

pub fn run(data: &[u8]) {
    let (head, tail) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let text = String::from_utf8_lossy(head);
    let points = points_from(tail);
    check_text(&text, &points);
}

/// The header checks on text (also used by `fits_open` on the header CFITSIO returns).
pub fn check_text(text: &str, points: &[(f64, f64)]) {
    if let Ok(header) = Header::parse(text) {
        for k in header.keywords().take(64) {
            let _ = header.float(k);
            let _ = header.int(k);
            let _ = header.string(k);
        }
    }
    for alt in [None, Some('A')] {
        if let Ok(wcs) = Wcs::from_header_str_alt(text, alt) {
            check_wcs(&wcs, points);
            check_pixel_transform(&wcs, &wcs, points);
            check_pixel_transform(&wcs, reference_wcs(), points);
            check_pixel_transform(reference_wcs(), &wcs, points);
        }
    }
}

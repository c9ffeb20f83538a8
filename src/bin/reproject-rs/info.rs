//! The `info` command: a WCS summary of a FITS image or header file.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use reproject::io::{FitsSource, ImageSource};
use reproject::wcs::frame::CelestialFrame;
use reproject::wcs::header::Header;
use reproject::wcs::Wcs;

use crate::job::read_header;
use crate::CliResult;

/// Prints the summary of `file` (HDU `hdu` of a FITS file) to stdout.
pub fn run(file: &Path, hdu: usize) -> CliResult<()> {
    let text = read_header(file, hdu, "file")?;
    // None for header text, even one that starts like a FITS file (see `read_header`).
    let source = FitsSource::open(file, hdu).ok();
    let mut out = summary(file, hdu, &text, source.as_ref())?;
    let _ = writeln!(out, "{}", reproject::gpu::describe());
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(())
}

/// The long name of a projection code.
pub fn projection_name(code: &str) -> &'static str {
    match code {
        "AZP" => "zenithal perspective",
        "SZP" => "slant zenithal perspective",
        "TAN" => "gnomonic",
        "STG" => "stereographic",
        "SIN" => "orthographic/synthesis",
        "ARC" => "zenithal equidistant",
        "ZPN" => "zenithal polynomial",
        "ZEA" => "zenithal equal-area",
        "AIR" => "Airy",
        "CYP" => "cylindrical perspective",
        "CEA" => "cylindrical equal area",
        "CAR" => "plate carree",
        "MER" => "Mercator",
        "SFL" => "Sanson-Flamsteed",
        "PAR" => "parabolic",
        "MOL" => "Mollweide",
        "AIT" => "Hammer-Aitoff",
        "COP" => "conic perspective",
        "COE" => "conic equal area",
        "COD" => "conic equidistant",
        "COO" => "conic orthomorphic",
        "BON" => "Bonne",
        "PCO" => "polyconic",
        "TSC" => "tangential spherical cube",
        "CSC" => "COBE quadrilateralized spherical cube",
        "QSC" => "quadrilateralized spherical cube",
        "HPX" => "HEALPix",
        "XPH" => "HEALPix polar (butterfly)",
        _ => "",
    }
}

/// A readable frame name.
pub fn frame_name(frame: &CelestialFrame) -> String {
    match frame {
        CelestialFrame::Icrs => "ICRS".into(),
        CelestialFrame::Fk5 { equinox } => format!("FK5 (equinox J{equinox})"),
        CelestialFrame::Fk4 { equinox } => format!("FK4 (equinox B{equinox})"),
        CelestialFrame::Fk4NoETerms { equinox } => format!("FK4 without E-terms (B{equinox})"),
        CelestialFrame::GeocentricApparent => "geocentric apparent (GAPPT)".into(),
        CelestialFrame::Galactic => "Galactic".into(),
        CelestialFrame::Supergalactic => "supergalactic".into(),
        CelestialFrame::Other(name) => name.clone(),
    }
}

fn equatorial(frame: &CelestialFrame) -> bool {
    matches!(
        frame,
        CelestialFrame::Icrs
            | CelestialFrame::Fk5 { .. }
            | CelestialFrame::Fk4 { .. }
            | CelestialFrame::Fk4NoETerms { .. }
            | CelestialFrame::GeocentricApparent
    )
}

/// `lon, lat` in degrees, with sexagesimal RA/Dec for equatorial frames.
fn sky(lon: f64, lat: f64, eq: bool) -> String {
    let lon = lon.rem_euclid(360.0);
    let deg = format!("{lon:11.6} {lat:+11.6}");
    if !eq {
        return deg;
    }
    let (h, m, s) = sexagesimal(lon / 15.0);
    let (d, am, asec) = sexagesimal(lat.abs());
    let sign = if lat < 0.0 { '-' } else { '+' };
    format!("{deg}  ({h:02}h{m:02}m{s:05.2}s {sign}{d:02}d{am:02}m{asec:04.1}s)")
}

/// Whole units, minutes and seconds of a non-negative value, rounded to 0.01 s.
fn sexagesimal(v: f64) -> (u64, u64, f64) {
    let total = (v * 360_000.0).round() as u64; // hundredths of a second
    let (units, rest) = (total / 360_000, total % 360_000);
    (units, rest / 6000, (rest % 6000) as f64 / 100.0)
}

/// Angular separation of two points, degrees.
fn separation((l1, b1): (f64, f64), (l2, b2): (f64, f64)) -> f64 {
    let (l1, b1, l2, b2) = (
        l1.to_radians(),
        b1.to_radians(),
        l2.to_radians(),
        b2.to_radians(),
    );
    let s = ((b2 - b1) / 2.0).sin().powi(2) + b1.cos() * b2.cos() * ((l2 - l1) / 2.0).sin().powi(2);
    (2.0 * s.sqrt().min(1.0).asin()).to_degrees()
}

/// Position angle (east of north, degrees in [0, 360)) of point 2 seen from point 1.
fn position_angle((l1, b1): (f64, f64), (l2, b2): (f64, f64)) -> f64 {
    let (l1, b1, l2, b2) = (
        l1.to_radians(),
        b1.to_radians(),
        l2.to_radians(),
        b2.to_radians(),
    );
    let dl = l2 - l1;
    let y = dl.sin() * b2.cos();
    let x = b1.cos() * b2.sin() - b1.sin() * b2.cos() * dl.cos();
    y.atan2(x).to_degrees().rem_euclid(360.0)
}

/// The summary text.
pub fn summary(
    file: &Path,
    hdu: usize,
    text: &str,
    source: Option<&FitsSource>,
) -> CliResult<String> {
    let bad = |e: reproject::Error| format!("{}: bad WCS: {e}", file.display());
    let wcs = match source {
        Some(src) => src.wcs(), // with the lookup tables the header names
        None => Wcs::from_header_str(text),
    }
    .map_err(bad)?;
    let header = Header::parse(text).map_err(bad)?;
    let params = wcs.params();
    let mut o = String::new();
    let _ = match source {
        Some(_) => writeln!(o, "file:        {} (HDU {hdu})", file.display()),
        None => writeln!(o, "file:        {} (header text)", file.display()),
    };
    // The image shape: from the data, else NAXISn.
    let shape: Vec<usize> = match source {
        Some(s) => s.shape().iter().rev().copied().collect(),
        None => (1..=params.naxis())
            .map_while(|i| {
                header
                    .int(&format!("NAXIS{i}"))
                    .ok()
                    .flatten()
                    .map(|n| n.max(0) as usize)
            })
            .collect(),
    };
    let dims: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    let mut image = if dims.is_empty() {
        "unknown (no NAXISn)".to_string()
    } else {
        format!("{} pixels (NAXIS1 x NAXIS2 ...)", dims.join(" x "))
    };
    if let Some(s) = source {
        let _ = write!(image, ", BITPIX {}", s.bitpix());
    }
    let _ = writeln!(o, "image:       {image}");
    let _ = writeln!(o, "axes:        {}", params.ctype.join(", "));
    let Some(code) = wcs.projection_code() else {
        let _ = writeln!(o, "projection:  none (no celestial axes)");
        return Ok(o);
    };
    let frame = wcs.frame().cloned().unwrap_or(CelestialFrame::Icrs);
    let eq = equatorial(&frame);
    let _ = writeln!(
        o,
        "projection:  {} ({}){}",
        code.as_str(),
        projection_name(code.as_str()),
        if wcs.sip().is_some() {
            ", SIP distortion"
        } else if params.tpv.is_some() {
            ", TPV distortion"
        } else {
            ""
        },
    );
    if let Some(tables) = &params.lookup_tables {
        let names = [("D2IM1", &tables.det2im[0]), ("D2IM2", &tables.det2im[1])]
            .into_iter()
            .chain([("CPDIS1", &tables.cpdis[0]), ("CPDIS2", &tables.cpdis[1])])
            .filter_map(|(name, t)| {
                t.as_ref()
                    .map(|t| format!("{name} {}x{}", t.shape()[0], t.shape()[1]))
            });
        let _ = writeln!(o, "tables:      {}", names.collect::<Vec<_>>().join(", "));
    }
    let _ = writeln!(o, "frame:       {}", frame_name(&frame));
    let (lng, lat) = params.celestial_axes().unwrap_or((0, 1));
    let _ = writeln!(
        o,
        "reference:   pixel ({}, {}) (CRPIX, 1-based) -> {}",
        params.crpix[0],
        params.crpix[1],
        sky(params.crval[lng], params.crval[lat], eq)
    );
    let (nx, ny) = (
        shape.first().copied().unwrap_or(0),
        shape.get(1).copied().unwrap_or(0),
    );
    if nx > 0 && ny > 0 {
        let (cx, cy) = ((nx as f64 - 1.0) / 2.0, (ny as f64 - 1.0) / 2.0);
        let centre = match wcs.pixel_to_world(cx, cy) {
            Some((l, b)) => sky(l, b, eq),
            None => "outside the projection".into(),
        };
        let _ = writeln!(o, "centre:      pixel ({cx}, {cy}) (0-based) -> {centre}");
        let _ = writeln!(o, "corners:     (pixel centres, 0-based)");
        let (xm, ym) = (nx as f64 - 1.0, ny as f64 - 1.0);
        for (x, y) in [(0.0, 0.0), (xm, 0.0), (xm, ym), (0.0, ym)] {
            let at = match wcs.pixel_to_world(x, y) {
                Some((l, b)) => sky(l, b, eq),
                None => "outside the projection".into(),
            };
            let _ = writeln!(o, "  {:>17} -> {at}", format!("({x}, {y})"));
        }
    }
    // Scale and orientation at the reference pixel (0-based CRPIX - 1), else the centre.
    let candidates = [
        (params.crpix[0] - 1.0, params.crpix[1] - 1.0),
        ((nx as f64 - 1.0) / 2.0, (ny as f64 - 1.0) / 2.0),
    ];
    let local = candidates.iter().find_map(|&(x, y)| {
        // Small steps: the direction is that at the pixel, not a chord's.
        let h = 0.01;
        let (xp, xm) = (wcs.pixel_to_world(x + h, y)?, wcs.pixel_to_world(x - h, y)?);
        let (yp, ym) = (wcs.pixel_to_world(x, y + h)?, wcs.pixel_to_world(x, y - h)?);
        Some((
            x,
            y,
            separation(xm, xp) / (2.0 * h),
            separation(ym, yp) / (2.0 * h),
            position_angle(ym, yp),
            position_angle(xm, xp),
        ))
    });
    match local {
        Some((x, y, sx, sy, pa_y, pa_x)) => {
            let _ = writeln!(
                o,
                "pixel scale: {:.4} x {:.4} arcsec (x, y at pixel ({x}, {y}))",
                sx * 3600.0,
                sy * 3600.0
            );
            // Standard orientation: north up (+y), east left (-x), i.e. +x at PA 270.
            let parity = (pa_x - pa_y).rem_euclid(360.0);
            let handed = if (parity - 270.0).abs() < 45.0 {
                "east to the left when north is up (standard)"
            } else {
                "east to the right when north is up (flipped)"
            };
            // CROTA2's sense: the +y axis lies at position angle -CROTA2.
            let rot = (-pa_y).rem_euclid(360.0);
            let rot = if rot > 180.0 { rot - 360.0 } else { rot } + 0.0;
            let _ = writeln!(
                o,
                "rotation:    {rot:.4} deg (CROTA2 sense: +y axis at position angle {:.4} deg \
                 east of north); {handed}",
                0.0 - rot
            );
        }
        None => {
            let _ = writeln!(
                o,
                "pixel scale: undefined (reference pixel outside the projection)"
            );
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angles() {
        assert!((separation((10.0, 0.0), (11.0, 0.0)) - 1.0).abs() < 1e-12);
        assert!((position_angle((10.0, 0.0), (10.0, 1.0))).abs() < 1e-12);
        assert!((position_angle((10.0, 0.0), (11.0, 0.0)) - 90.0).abs() < 1e-9);
        assert_eq!(sexagesimal(17.760_330_555), (17, 45, 37.19));
    }

    #[test]
    fn tan_summary() {
        let text = "NAXIS   = 2\nNAXIS1  = 100\nNAXIS2  = 80\nCTYPE1  = 'RA---TAN'\n\
                    CTYPE2  = 'DEC--TAN'\nCRPIX1  = 50.5\nCRPIX2  = 40.5\nCRVAL1  = 266.4\n\
                    CRVAL2  = -28.9\nCDELT1  = -0.001\nCDELT2  = 0.001\nCROTA2  = 30\n";
        let s = summary(Path::new("t.hdr"), 0, text, None).unwrap();
        assert!(s.contains("TAN (gnomonic)"), "{s}");
        assert!(s.contains("ICRS"), "{s}");
        assert!(s.contains("100 x 80"), "{s}");
        assert!(s.contains("3.6000 x 3.6000 arcsec"), "{s}");
        assert!(s.contains("rotation:    30.0000 deg"), "{s}");
        assert!(s.contains("(standard)"), "{s}");
    }
}

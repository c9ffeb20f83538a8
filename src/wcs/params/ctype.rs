//! CTYPE values: their axis type and projection code, and which two axes are the celestial
//! longitude/latitude pair.

use super::AxisType;
use crate::error::{Error, Result};

/// CTYPE split into its parts.
pub(super) struct ParsedCtype {
    pub(super) axis_type: AxisType,
    /// Projection code of a celestial axis.
    pub(super) code: Option<String>,
}

impl ParsedCtype {
    pub(super) fn parse(ctype: &str) -> Result<ParsedCtype> {
        let t = ctype.trim_end();
        let bytes = t.as_bytes();
        let linear = ParsedCtype {
            axis_type: AxisType::Linear,
            code: None,
        };
        if t.len() >= 8 && t.is_ascii() && bytes[4] == b'-' {
            let prefix = ctype_prefix(t);
            let code = &t[5..8];
            let suffix = &t[8..];
            let celestial = if is_longitude(prefix) {
                Some(AxisType::Longitude)
            } else if is_latitude(prefix) {
                Some(AxisType::Latitude)
            } else {
                None
            };
            return match celestial {
                Some(axis_type) => {
                    if !(suffix.is_empty() || suffix == "-SIP") || code.contains('-') {
                        return Err(Error::MalformedCtype(t.to_string()));
                    }
                    Ok(ParsedCtype {
                        axis_type,
                        code: Some(code.to_string()),
                    })
                }
                None if code == "LOG" && suffix.is_empty() => Ok(ParsedCtype {
                    axis_type: AxisType::Log,
                    code: None,
                }),
                None if code == "---" || code.trim_matches('-').is_empty() => Ok(linear),
                None if crate::wcs::spectral::is_algorithm(t) => Ok(ParsedCtype {
                    axis_type: AxisType::SpectralAlgorithm,
                    code: None,
                }),
                None => Ok(ParsedCtype {
                    axis_type: AxisType::Unsupported(t.to_string()),
                    code: None,
                }),
            };
        }
        // Not in 4-3 form: linear, unless it is a mangled celestial type such as 'RA--TAN'.
        let head = t.split('-').next().unwrap_or("");
        if (is_longitude(head) || is_latitude(head))
            && !t[head.len()..].trim_matches('-').is_empty()
        {
            return Err(Error::MalformedCtype(t.to_string()));
        }
        Ok(linear)
    }
}

/// The axis-type part of a CTYPE (`RA`, `DEC`, `GLON`, ...).
pub(super) fn ctype_prefix(ctype: &str) -> &str {
    ctype.get(..4).unwrap_or(ctype).trim_end_matches('-')
}

fn is_longitude(prefix: &str) -> bool {
    prefix == "RA" || (prefix.len() == 4 && (prefix.ends_with("LON") || prefix.ends_with("LN")))
}

fn is_latitude(prefix: &str) -> bool {
    prefix == "DEC" || (prefix.len() == 4 && (prefix.ends_with("LAT") || prefix.ends_with("LT")))
}

/// The (longitude, latitude) axis indices and their projection code, if the WCS is celestial.
pub(super) type CelestialPair = (Option<(usize, usize)>, Option<String>);

/// The (lng, lat) axes and their projection code, checking that they pair up.
pub(super) fn celestial_pair(ctype: &[String], parsed: &[ParsedCtype]) -> Result<CelestialPair> {
    let find = |want: AxisType| -> Result<Option<usize>> {
        let found: Vec<usize> = parsed
            .iter()
            .enumerate()
            .filter(|(_, p)| p.axis_type == want)
            .map(|(i, _)| i)
            .collect();
        match found.len() {
            0 => Ok(None),
            1 => Ok(Some(found[0])),
            _ => Err(Error::InconsistentAxes(format!(
                "more than one {want:?} axis: {:?}",
                found.iter().map(|&i| &ctype[i]).collect::<Vec<_>>()
            ))),
        }
    };
    match (find(AxisType::Longitude)?, find(AxisType::Latitude)?) {
        (None, None) => Ok((None, None)),
        (Some(lng), Some(lat)) => {
            let (a, b) = (&parsed[lng].code, &parsed[lat].code);
            if a != b {
                return Err(Error::InconsistentAxes(format!(
                    "projection codes differ: '{}' and '{}'",
                    ctype[lng], ctype[lat]
                )));
            }
            let (pl, pb) = (ctype_prefix(&ctype[lng]), ctype_prefix(&ctype[lat]));
            let paired = match pl {
                "RA" => pb == "DEC",
                _ if pl.ends_with("LON") => pb.ends_with("LAT") && pl[..1] == pb[..1],
                _ => pb.ends_with("LT") && pl[..2] == pb[..2],
            };
            if !paired {
                return Err(Error::InconsistentAxes(format!(
                    "'{}' and '{}' are not a longitude/latitude pair",
                    ctype[lng], ctype[lat]
                )));
            }
            Ok((Some((lng, lat)), a.clone()))
        }
        (Some(i), None) | (None, Some(i)) => Err(Error::InconsistentAxes(format!(
            "celestial axis '{}' has no partner",
            ctype[i]
        ))),
    }
}

//! The indexed keywords of one WCS description (`CTYPEi`, `PCi_j`, `CDi_j`, `PVi_m`, ...): the
//! axis count they imply and the matrix and projection-parameter cards found.

use super::MAX_AXES;
use crate::error::{Error, Result};
use crate::wcs::header::Header;

/// The indexed WCS keywords of one alternate description found in a header.
#[derive(Default)]
pub(super) struct IndexedKeywords {
    /// Highest axis number seen (1-based), i.e. the implied number of axes.
    pub(super) max_axis: usize,
    /// (i, j, keyword) of PCi_j, 0-based.
    pub(super) pc: Vec<(usize, usize, String)>,
    /// (i, j, keyword) of CDi_j, 0-based.
    pub(super) cd: Vec<(usize, usize, String)>,
    /// (axis (None = PROJPn), m, keyword) of PVi_m / PROJPm.
    pub(super) pv: Vec<(Option<usize>, usize, String)>,
}

impl IndexedKeywords {
    pub(super) fn scan(header: &Header, alt: &str) -> Result<IndexedKeywords> {
        let mut found = IndexedKeywords::default();
        let out_of_range = |k: &str| Error::InvalidValue {
            keyword: k.to_string(),
            reason: format!("axis number must be 1..={MAX_AXES}"),
        };
        let mut seen = std::collections::HashSet::new();
        for k in header.keywords() {
            if !seen.insert(k) {
                continue;
            }
            // Alternate descriptions end in their letter; primary keywords end in a digit.
            let body = if alt.is_empty() {
                k
            } else {
                match k.strip_suffix(alt) {
                    Some(body) => body,
                    None => continue,
                }
            };
            for base in ["CTYPE", "CUNIT", "CRPIX", "CRVAL", "CDELT", "CROTA"] {
                if let Some(i) = body.strip_prefix(base).and_then(parse_index) {
                    if i == 0 || i > MAX_AXES {
                        return Err(out_of_range(k));
                    }
                    found.max_axis = found.max_axis.max(i);
                }
            }
            for (base, list) in [("PC", &mut found.pc), ("CD", &mut found.cd)] {
                if let Some((i, j)) = body.strip_prefix(base).and_then(parse_pair) {
                    if i == 0 || j == 0 || i > MAX_AXES || j > MAX_AXES {
                        return Err(out_of_range(k));
                    }
                    found.max_axis = found.max_axis.max(i).max(j);
                    list.push((i - 1, j - 1, k.to_string()));
                }
            }
            if let Some((i, m)) = body.strip_prefix("PV").and_then(parse_pair) {
                if i == 0 || i > MAX_AXES {
                    return Err(out_of_range(k));
                }
                found.max_axis = found.max_axis.max(i);
                found.pv.push((Some(i - 1), m, k.to_string()));
            }
            if alt.is_empty()
                && let Some(m) = k.strip_prefix("PROJP").and_then(parse_index)
            {
                found.pv.push((None, m, k.to_string()));
            }
        }
        Ok(found)
    }
}

/// "12" → 12 (digits only).
fn parse_index(s: &str) -> Option<usize> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// "1_2" → (1, 2).
fn parse_pair(s: &str) -> Option<(usize, usize)> {
    let (a, b) = s.split_once('_')?;
    Some((parse_index(a)?, parse_index(b)?))
}

//! Distortion lookup tables, as astropy evaluates them (`distortion.c`, `pipeline.c`): the
//! detector-to-image correction (`D2IMDISi`) and the prior distortion tables of the FITS
//! distortion paper (`CPDISi`), which HST images carry beside SIP.
//!
//! Each table holds an offset, in pixels, for one pixel axis. A 1-based pixel `p` maps to
//! the table's fractional index `(p − CRVAL) / CDELT + CRPIX − 1` on each of the table's two
//! axes, clamped to the table; the offset is the bilinear mean of the four samples around it
//! (samples past the edge clamped to it). The whole step, in astropy's order:
//!
//! ```text
//! p' = p + D2IM(p)                       (each axis from the original p)
//! focal = p' + SIP(p' − CRPIX) + CPDIS(p')
//! ```
//!
//! The tables live in other HDUs of a FITS file; [`LookupTables`] takes them as arrays (from
//! Python, astropy's `DistortionLookupTable`s).
//!
//! ```
//! use reproject::wcs::distortion::{LookupTable, LookupTables};
//! // A 2 x 2 table over the whole image: offset 0 at the left column, 1 at the right.
//! let table = LookupTable::new(vec![0.0, 1.0, 0.0, 1.0], [2, 2], [1.0, 1.0], [1.0, 1.0],
//!     [100.0, 100.0])?;
//! // Halfway across (1-based x = 51, index 0.5): half the right column's offset.
//! assert_eq!(table.offset(51.0, 1.0), 0.5);
//! let tables = LookupTables { cpdis: [Some(table), None], ..Default::default() };
//! assert_eq!(tables.pix1_to_foc1(51.0, 1.0, |p1, p2| (p1, p2)), (51.5, 1.0));
//! # Ok::<(), reproject::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::wcs::header::{Header, Value};

/// One lookup table: an offset in pixels for one axis, sampled on a grid over the image.
///
/// ```
/// use reproject::wcs::distortion::LookupTable;
/// // Samples every 64 pixels from 1-based pixel 1, as HST's CPDIS tables are.
/// let t = LookupTable::new(vec![0.25; 6], [3, 2], [1.0, 1.0], [1.0, 1.0], [64.0, 64.0])?;
/// assert_eq!(t.offset(100.0, 30.0), 0.25);
/// assert_eq!(t.shape(), [3, 2]);
/// // Six samples do not fill a 4 x 2 table.
/// assert!(LookupTable::new(vec![0.25; 6], [4, 2], [1.0; 2], [1.0; 2], [64.0; 2]).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TableParts", into = "TableParts")]
pub struct LookupTable {
    /// Samples along the table's first (fast) and second axis: `NAXIS1`, `NAXIS2`.
    naxis: [usize; 2],
    crpix: [f64; 2],
    crval: [f64; 2],
    cdelt: [f64; 2],
    /// Row-major samples, `naxis[0]` to a row.
    data: Vec<f32>,
    /// `1 / CDELT` where CDELT is a power of two: dividing by it is multiplying by this, to
    /// the bit (both round the same real number), and much quicker.
    reciprocal: [Option<f64>; 2],
}

/// `1 / x` when `x` is a power of two whose reciprocal is a normal number.
fn exact_reciprocal(x: f64) -> Option<f64> {
    let r = 1.0 / x;
    let power_of_two = |v: f64| v.is_normal() && v.to_bits() & ((1u64 << 52) - 1) == 0;
    (power_of_two(x) && power_of_two(r)).then_some(r)
}

/// A [`LookupTable`] as it is serialized, checked by [`LookupTable::new`] when read back.
#[derive(Serialize, Deserialize)]
struct TableParts {
    naxis: [usize; 2],
    crpix: [f64; 2],
    crval: [f64; 2],
    cdelt: [f64; 2],
    data: Vec<f32>,
}

impl TryFrom<TableParts> for LookupTable {
    type Error = Error;
    fn try_from(t: TableParts) -> Result<LookupTable> {
        LookupTable::new(t.data, t.naxis, t.crpix, t.crval, t.cdelt)
    }
}

impl From<LookupTable> for TableParts {
    fn from(t: LookupTable) -> TableParts {
        let LookupTable {
            naxis,
            crpix,
            crval,
            cdelt,
            data,
            ..
        } = t;
        TableParts {
            naxis,
            crpix,
            crval,
            cdelt,
            data,
        }
    }
}

impl LookupTable {
    /// A table of `naxis[0] × naxis[1]` samples (`data` row-major, `naxis[0]` to a row: a
    /// numpy array of shape `(naxis[1], naxis[0])`), with the table's own `CRPIX`, `CRVAL`
    /// and `CDELT` (axis 1 first). Errors: an empty table, a sample count that does not fill
    /// it, or a reference value that is not finite or a zero `CDELT`.
    pub fn new(
        data: Vec<f32>,
        naxis: [usize; 2],
        crpix: [f64; 2],
        crval: [f64; 2],
        cdelt: [f64; 2],
    ) -> Result<LookupTable> {
        let invalid = |reason: String| Error::InvalidValue {
            keyword: "distortion lookup table".into(),
            reason,
        };
        if naxis.contains(&0) || naxis[0].checked_mul(naxis[1]) != Some(data.len()) {
            return Err(invalid(format!(
                "{} samples for a table of {} x {}",
                data.len(),
                naxis[0],
                naxis[1]
            )));
        }
        if !crpix
            .iter()
            .chain(&crval)
            .chain(&cdelt)
            .all(|v| v.is_finite())
            || cdelt.contains(&0.0)
        {
            return Err(invalid(format!(
                "CRPIX {crpix:?}, CRVAL {crval:?} and CDELT {cdelt:?} must be finite, CDELT \
                 not zero"
            )));
        }
        Ok(LookupTable {
            naxis,
            crpix,
            crval,
            cdelt,
            data,
            reciprocal: cdelt.map(exact_reciprocal),
        })
    }

    /// The table with its two axes swapped (astropy's `data.transpose()` for a table whose
    /// `AXIS.i` record is not `i`); `CRPIX`, `CRVAL` and `CDELT` stay as they are.
    ///
    /// ```
    /// use reproject::wcs::distortion::LookupTable;
    /// let t = LookupTable::new(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2], [1.0; 2], [0.0; 2],
    ///     [1.0; 2])?;
    /// let swapped = t.clone().transposed();
    /// assert_eq!(swapped.shape(), [2, 3]);
    /// assert_eq!(swapped.offset(2.0, 3.0), t.offset(3.0, 2.0)); // sample (2, 1) of each
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn transposed(self) -> LookupTable {
        let [n0, n1] = self.naxis;
        let data = (0..n0 * n1)
            .map(|i| self.data[(i % n1) * n0 + i / n1])
            .collect();
        LookupTable {
            naxis: [n1, n0],
            data,
            ..self
        }
    }

    /// `[NAXIS1, NAXIS2]`: samples to a row, rows.
    pub fn shape(&self) -> [usize; 2] {
        self.naxis
    }

    /// The offset at the 1-based pixel `(p1, p2)` (astropy's `get_distortion_offset`, to the
    /// bit); NaN for a NaN pixel.
    ///
    /// ```
    /// use reproject::wcs::distortion::LookupTable;
    /// let t = LookupTable::new(vec![0.0, 1.0, 2.0, 3.0], [2, 2], [1.0; 2], [0.0; 2], [1.0; 2])?;
    /// assert_eq!(t.offset(0.5, 0.0), 0.5); // index (0.5, 0): between samples 0 and 1
    /// assert_eq!(t.offset(-5.0, 9.0), 2.0); // clamped to the corner (0, 1)
    /// assert!(t.offset(f64::NAN, 0.0).is_nan());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn offset(&self, p1: f64, p2: f64) -> f64 {
        let index = |axis: usize, p: f64| {
            let scaled = match self.reciprocal[axis] {
                Some(r) => (p - self.crval[axis]) * r,
                None => (p - self.crval[axis]) / self.cdelt[axis],
            };
            let i = (scaled + self.crpix[axis]) - 1.0;
            i.clamp(0.0, (self.naxis[axis] - 1) as f64)
        };
        let (i0, i1) = (index(0, p1), index(1, p2));
        if i0.is_nan() || i1.is_nan() {
            return f64::NAN;
        }
        // A clamped index is in [0, naxis - 1]: truncation is its floor, exactly (and no
        // call to libm's floor, which this target's instructions do not have).
        let (x, y) = (i0 as usize, i1 as usize);
        let (f0, f1) = (x as f64, y as f64);
        let (w0, w1) = (i0 - f0, i1 - f1);
        let (v0, v1) = (1.0 - w0, 1.0 - w1);
        let sample = |x: usize, y: usize| {
            let (x, y) = (x.min(self.naxis[0] - 1), y.min(self.naxis[1] - 1));
            f64::from(self.data[self.naxis[0] * y + x])
        };
        sample(x, y) * v0 * v1
            + sample(x, y + 1) * v0 * w1
            + sample(x + 1, y) * w0 * v1
            + sample(x + 1, y + 1) * w0 * w1
    }
}

/// The lookup tables of one image: detector-to-image (`det2im`) and prior distortion
/// (`cpdis`), one optional table per pixel axis (FITS axis order).
///
/// ```
/// use reproject::wcs::distortion::{LookupTable, LookupTables};
/// let shift = LookupTable::new(vec![0.5], [1, 1], [1.0; 2], [0.0; 2], [1.0; 2])?;
/// let tables = LookupTables { det2im: [None, Some(shift)], ..Default::default() };
/// assert!(!tables.is_empty());
/// // D2IM moves y by half a pixel before the polynomial (here none) sees it.
/// assert_eq!(tables.pix1_to_foc1(10.0, 20.0, |p1, p2| (p1, p2)), (10.0, 20.5));
/// assert!(LookupTables::default().is_empty());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LookupTables {
    /// `D2IMDIS1`, `D2IMDIS2`: applied to the pixel first.
    pub det2im: [Option<LookupTable>; 2],
    /// `CPDIS1`, `CPDIS2`: added to the focal-plane coordinates, evaluated at the pixel after
    /// D2IM.
    pub cpdis: [Option<LookupTable>; 2],
}

impl LookupTables {
    /// Whether there is no table at all.
    pub fn is_empty(&self) -> bool {
        self.det2im.iter().chain(&self.cpdis).all(Option::is_none)
    }

    /// 1-based pixel → 1-based focal plane (astropy's `pipeline_pix2foc`), `polynomial` being
    /// the SIP step `p → p + SIP(p − CRPIX)` (the identity without SIP), in FITS axis order.
    #[inline]
    pub fn pix1_to_foc1(
        &self,
        p1: f64,
        p2: f64,
        polynomial: impl Fn(f64, f64) -> (f64, f64),
    ) -> (f64, f64) {
        let add = |tables: &[Option<LookupTable>; 2], (a, b): (f64, f64), at: (f64, f64)| {
            let shift = |t: &Option<LookupTable>| t.as_ref().map(|t| t.offset(at.0, at.1));
            (
                shift(&tables[0]).map_or(a, |d| a + d),
                shift(&tables[1]).map_or(b, |d| b + d),
            )
        };
        let image = add(&self.det2im, (p1, p2), (p1, p2));
        let focal = polynomial(image.0, image.1);
        add(&self.cpdis, focal, image)
    }
}

/// Where a header says one of its lookup tables is: an image extension of the same file.
///
/// ```
/// use reproject::wcs::distortion::lookup::{TableSource, TableSources};
/// use reproject::wcs::header::Header;
/// // CPDIS2's table is stored with its axes swapped: its AXIS.2 record is 1.
/// let h = Header::parse("CPDIS1 = 'Lookup'\nDP1 = 'EXTVER: 1'\nDP1 = 'NAXES: 2'\n\
///     DP1 = 'AXIS.1: 1'\nDP1 = 'AXIS.2: 2'\nCPDIS2 = 'Lookup'\nDP2 = 'EXTVER: 2'\n\
///     DP2 = 'AXIS.1: 2'\nDP2 = 'AXIS.2: 1'\n")?;
/// let sources = TableSources::from_header(&h)?.unwrap();
/// assert_eq!(sources.cpdis[1],
///     Some(TableSource { extname: "WCSDVARR", extver: 2, transposed: true }));
/// assert_eq!(sources.det2im, [None, None]);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSource {
    /// `EXTNAME` of the extension: `D2IMARR` (D2IM) or `WCSDVARR` (CPDIS).
    pub extname: &'static str,
    /// `EXTVER` of the extension (`D2IMi.EXTVER`, `DPi.EXTVER`; 1 when absent).
    pub extver: i64,
    /// Whether the table is read transposed: its axis `i` is not the image's (`AXIS.i ≠ i`).
    pub transposed: bool,
}

/// The lookup tables a header names, read as astropy reads them (`WCS._read_det2im_kw`,
/// `WCS._read_distortion_kw`): `D2IMDISi = 'LOOKUP'` with the record-valued
/// `D2IMi = 'EXTVER: n'` and `D2IMi = 'AXIS.i: j'`, `CPDISi = 'LOOKUP'` with `DPi` likewise,
/// for the image axes i = 1, 2; a table whose `D2IMERRi`/`CPERRi` is negative is skipped, and
/// other distortion functions than a lookup table are ignored, as astropy does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableSources {
    /// `D2IMDIS1`, `D2IMDIS2`.
    pub det2im: [Option<TableSource>; 2],
    /// `CPDIS1`, `CPDIS2`.
    pub cpdis: [Option<TableSource>; 2],
}

impl TableSources {
    /// The tables `header` names, `None` when it names none. Errors: an `AXIS.i` record
    /// missing, a record that is not `field: number`, the pre-2012 D2IM form (`AXISCORR`),
    /// and second-order tables (`CQDISi`), which astropy does not read either.
    pub fn from_header(header: &Header) -> Result<Option<TableSources>> {
        if !header.keywords().any(is_lookup_keyword) {
            return Ok(None);
        }
        if let Some(k) = header.keywords().find(|k| k.starts_with("CQDIS")) {
            return Err(Error::Unsupported(format!(
                "{k}: second-order distortion lookup tables (CQDIS) are not evaluated"
            )));
        }
        if header.contains("AXISCORR") {
            return Err(Error::Unsupported(
                "AXISCORR: the pre-2012 form of D2IM lookup tables is not read".into(),
            ));
        }
        let read = |dis: &str, record: &str, err: &str, extname: &'static str, i: usize| {
            source(
                header,
                &format!("{dis}{i}"),
                &format!("{record}{i}"),
                &format!("{err}{i}"),
                extname,
                i,
            )
        };
        let sources = TableSources {
            det2im: [
                read("D2IMDIS", "D2IM", "D2IMERR", "D2IMARR", 1)?,
                read("D2IMDIS", "D2IM", "D2IMERR", "D2IMARR", 2)?,
            ],
            cpdis: [
                read("CPDIS", "DP", "CPERR", "WCSDVARR", 1)?,
                read("CPDIS", "DP", "CPERR", "WCSDVARR", 2)?,
            ],
        };
        Ok(Some(sources))
    }

    /// Whether no table is named.
    pub fn is_empty(&self) -> bool {
        self.det2im.iter().chain(&self.cpdis).all(Option::is_none)
    }
}

/// The table of image axis `i` named by `dis` (`D2IMDISi`, `CPDISi`), with its records in
/// `record` (`D2IMi`, `DPi`) and its error estimate in `err`.
fn source(
    header: &Header,
    dis: &str,
    record: &str,
    err: &str,
    extname: &'static str,
    i: usize,
) -> Result<Option<TableSource>> {
    if header.float(err)?.is_some_and(|e| e < 0.0) {
        return Ok(None);
    }
    let Some(kind) = header.string(dis)? else {
        return Ok(None);
    };
    if !kind.trim().eq_ignore_ascii_case("lookup") {
        return Ok(None);
    }
    let records = records(header, record)?;
    let field = |name: &str| records.iter().find(|(f, _)| f == name).map(|(_, v)| *v);
    let extver = field("EXTVER").unwrap_or(1.0);
    let axis_key = format!("AXIS.{i}");
    let axis =
        field(&axis_key).ok_or_else(|| Error::MissingKeyword(format!("{record}.{axis_key}")))?;
    Ok(Some(TableSource {
        extname,
        extver: extver as i64,
        transposed: axis != i as f64,
    }))
}

/// The `field: number` records of a record-valued keyword, in card order.
fn records(header: &Header, keyword: &str) -> Result<Vec<(String, f64)>> {
    header
        .values(keyword)
        .map(|value| {
            let bad = || Error::InvalidValue {
                keyword: keyword.to_string(),
                reason: format!("expected a record 'field: number', found {value:?}"),
            };
            let Value::Str(text) = value else {
                return Err(bad());
            };
            let (field, number) = text.split_once(':').ok_or_else(bad)?;
            let number: f64 = number.trim().parse().map_err(|_| bad())?;
            Ok((field.trim().to_string(), number))
        })
        .collect()
}

/// Whether a keyword belongs to the description of lookup tables (`D2IMDISi`, `D2IMi`,
/// `D2IMERRi`, `D2IMEXT`, `CPDISi`, `DPi`, `CPERRi`, `CQDISi`, `DQi`, `CQERRi`,
/// `AXISCORR`): the rest of the header is the WCS.
///
/// ```
/// use reproject::wcs::distortion::lookup::is_lookup_keyword;
/// assert!(is_lookup_keyword("CPDIS1") && is_lookup_keyword("DP2") && is_lookup_keyword("D2IM1"));
/// assert!(!is_lookup_keyword("DATE-OBS") && !is_lookup_keyword("PV2_1"));
/// ```
pub fn is_lookup_keyword(keyword: &str) -> bool {
    let indexed = |prefix: &str| {
        keyword
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
    };
    [
        "D2IMDIS", "D2IMERR", "D2IM", "CPDIS", "CPERR", "DP", "CQDIS", "CQERR", "DQ",
    ]
    .iter()
    .any(|p| indexed(p))
        || keyword == "D2IMEXT"
        || keyword == "AXISCORR"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// astropy's `get_distortion_offset`, written as the C does it: both branches.
    fn astropy_offset(t: &LookupTable, p: [f64; 2]) -> f64 {
        let clamp = |x: f64, lo: f64, hi: f64| {
            if x > hi {
                hi
            } else if x < lo {
                lo
            } else {
                x
            }
        };
        let mut dist = [0.0; 2];
        for i in 0..2 {
            let r = ((p[i] - t.crval[i]) / t.cdelt[i] + t.crpix[i]) - 1.0;
            dist[i] = clamp(r, 0.0, (t.naxis[i] - 1) as f64);
        }
        let fl = [dist[0].floor(), dist[1].floor()];
        let ifl = [fl[0] as i64, fl[1] as i64];
        let w = [dist[0] - fl[0], dist[1] - fl[1]];
        let iw = [1.0 - w[0], 1.0 - w[1]];
        let n = [t.naxis[0] as i64, t.naxis[1] as i64];
        let get = |x: i64, y: i64| {
            let (x, y) = (x.clamp(0, n[0] - 1), y.clamp(0, n[1] - 1));
            f64::from(t.data[(n[0] * y + x) as usize])
        };
        get(ifl[0], ifl[1]) * iw[0] * iw[1]
            + get(ifl[0], ifl[1] + 1) * iw[0] * w[1]
            + get(ifl[0] + 1, ifl[1]) * w[0] * iw[1]
            + get(ifl[0] + 1, ifl[1] + 1) * w[0] * w[1]
    }

    #[test]
    fn offsets_are_astropys_bits_inside_on_and_past_the_edges() {
        let (nx, ny) = (65, 33);
        let data: Vec<f32> = (0..nx * ny)
            .map(|i| ((i as f32) * 0.37).sin() * 0.8)
            .collect();
        let t = LookupTable::new(data, [nx, ny], [1.0, 1.0], [0.0, 0.0], [64.0, 64.0]).unwrap();
        assert_astropy_bits(&t, [4400.0, 2300.0], 20_000);
        // Exactly on samples and on the last row and column.
        for p in [[1.0, 1.0], [4097.0, 2049.0], [65.0, 2049.0], [4097.0, 1.0]] {
            assert_eq!(
                t.offset(p[0], p[1]).to_bits(),
                astropy_offset(&t, p).to_bits()
            );
        }
    }

    /// `t.offset`'s bits against astropy's at `n` pseudo-random pixels from -100 to `span`.
    fn assert_astropy_bits(t: &LookupTable, span: [f64; 2], n: usize) {
        let mut next = crate::wcs::distortion::test_sequence(12345);
        for _ in 0..n {
            let p = [next() * span[0] - 100.0, next() * span[1] - 100.0];
            let (ours, theirs) = (t.offset(p[0], p[1]), astropy_offset(t, p));
            assert_eq!(ours.to_bits(), theirs.to_bits(), "{p:?}");
        }
    }

    /// A power-of-two CDELT is multiplied by its reciprocal: the same bits as the division,
    /// which other CDELT keep.
    #[test]
    fn power_of_two_steps_divide_exactly() {
        assert_eq!(exact_reciprocal(64.0), Some(1.0 / 64.0));
        assert_eq!(exact_reciprocal(-0.25), Some(-4.0));
        for x in [3.0, 0.1, 1e-320, 1e308 * 10.0, f64::NAN, 0.0] {
            assert_eq!(exact_reciprocal(x), None, "{x}");
        }
        let data: Vec<f32> = (0..63).map(|i| (i as f32 * 0.91).cos()).collect();
        for cdelt in [[64.0, 0.5], [17.0, 3.3], [1.0, -8.0]] {
            let t =
                LookupTable::new(data.clone(), [9, 7], [1.2, 2.0], [3.5, -7.25], cdelt).unwrap();
            assert_astropy_bits(&t, [900.0, 500.0], 5000);
        }
    }

    #[test]
    fn one_row_tables_as_hst_d2im() {
        // D2IM tables are often one row: the second index clamps to 0.
        let t = LookupTable::new(
            vec![0.0, 0.1, 0.2, 0.3],
            [4, 1],
            [1.0; 2],
            [0.0; 2],
            [1.0; 2],
        )
        .unwrap();
        assert!((t.offset(2.5, 700.0) - 0.25).abs() < 1e-7); // index 2.5: between 0.2 and 0.3
        assert_eq!(
            t.offset(2.5, 700.0).to_bits(),
            astropy_offset(&t, [2.5, 700.0]).to_bits()
        );
    }

    #[test]
    fn bad_tables_are_refused() {
        let ok = |naxis, cdelt| LookupTable::new(vec![0.0; 4], naxis, [1.0; 2], [0.0; 2], cdelt);
        assert!(ok([2, 2], [1.0, 1.0]).is_ok());
        assert!(ok([0, 2], [1.0, 1.0]).is_err());
        assert!(ok([2, 2], [0.0, 1.0]).is_err());
        assert!(ok([2, 2], [f64::NAN, 1.0]).is_err());
        assert!(ok([3, 2], [1.0, 1.0]).is_err());
    }

    /// SIP, D2IM and CPDIS together: world → pixel inverts pixel → world (to 1e-7 px: at
    /// 1e-5 degree pixels, a double's last bit of longitude 150 is 3e-9 px), the tables are not skipped (the same WCS without them gives other sky
    /// positions), and a WCS of other than two axes refuses them.
    #[test]
    fn a_wcs_with_sip_and_tables_inverts() {
        use crate::wcs::Wcs;
        let header = "CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nCRPIX1 = 200\n\
            CRPIX2 = 100\nCRVAL1 = 150\nCRVAL2 = -30\nCD1_1 = -1E-5\nCD1_2 = 2E-6\n\
            CD2_1 = 3E-6\nCD2_2 = 1E-5\nA_ORDER = 2\nB_ORDER = 2\nA_2_0 = 2E-6\n\
            B_1_1 = -3E-6\n";
        let smooth = |phase: f32, n: [usize; 2]| {
            let data = (0..n[0] * n[1])
                .map(|i| 0.3 * ((i as f32) * 0.21 + phase).sin())
                .collect();
            LookupTable::new(data, n, [1.0, 1.0], [0.0, 0.0], [50.0, 50.0]).unwrap()
        };
        let tables = LookupTables {
            det2im: [Some(smooth(0.5, [9, 1])), None],
            cpdis: [Some(smooth(0.0, [9, 5])), Some(smooth(1.0, [9, 5]))],
        };
        let plain = Wcs::from_header_str(header).unwrap();
        let wcs = plain.clone().with_lookup_tables(tables.clone()).unwrap();
        for (x, y) in [(0.0, 0.0), (399.0, 199.0), (123.4, 56.7), (-20.0, 210.0)] {
            let (lon, lat) = wcs.pixel_to_world(x, y).unwrap();
            assert_ne!(Some((lon, lat)), plain.pixel_to_world(x, y));
            let (bx, by) = wcs.world_to_pixel(lon, lat).unwrap();
            assert!(
                (bx - x).abs() < 1e-7 && (by - y).abs() < 1e-7,
                "{x} {y}: {bx} {by}"
            );
        }
        // The tables are parameters of the WCS: kept through serde (worker processes get
        // their WCS so), and part of its equality; a table read back is checked again.
        let json = serde_json::to_string(&wcs).unwrap();
        let back: Wcs = serde_json::from_str(&json).unwrap();
        assert!(back == wcs && back != plain);
        assert_eq!(
            back.pixel_to_world(123.4, 56.7),
            wcs.pixel_to_world(123.4, 56.7)
        );
        let broken = json.replace("\"cdelt\":[50.0,50.0]", "\"cdelt\":[0.0,50.0]");
        assert_ne!(broken, json);
        assert!(serde_json::from_str::<Wcs>(&broken).is_err());
        let cube = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCTYPE3 = 'FREQ'\nCRVAL1 = 1\n\
            CRVAL2 = 1\n";
        let cube = Wcs::from_header_str(cube).unwrap();
        assert!(cube.with_lookup_tables(tables.clone()).is_err());
        let pixels = Wcs::from_header_str("CTYPE1 = 'PIXX'\nCTYPE2 = 'PIXY'\n").unwrap();
        assert!(pixels.with_lookup_tables(tables).is_err());
    }

    /// Inverting several points in lockstep gives each point's bits, with tables, and with
    /// tables on an astropy call's schedule; points off the sky have none either way.
    #[test]
    fn lanes_give_each_points_bits() {
        use crate::wcs::distortion::GridSchedule;
        use crate::wcs::Wcs;
        use std::sync::Arc;
        let header = "CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nCRPIX1 = 200\n\
            CRPIX2 = 100\nCRVAL1 = 150\nCRVAL2 = -30\nCD1_1 = -1E-5\nCD1_2 = 2E-6\n\
            CD2_1 = 3E-6\nCD2_2 = 1E-5\nA_ORDER = 2\nB_ORDER = 2\nA_2_0 = 2E-4\n\
            B_1_1 = -3E-4\n";
        let table = |phase: f32| {
            let data = (0..45)
                .map(|i| 0.4 * ((i as f32) * 0.37 + phase).sin())
                .collect();
            LookupTable::new(data, [9, 5], [1.0, 1.0], [0.0, 0.0], [50.0, 50.0]).unwrap()
        };
        let tables = LookupTables {
            det2im: [Some(table(0.2)), None],
            cpdis: [Some(table(0.0)), Some(table(1.0))],
        };
        let wcs = Wcs::from_header_str(header)
            .unwrap()
            .with_lookup_tables(tables)
            .unwrap()
            .with_sip_inversion(crate::wcs::distortion::SipInversion::astropy());
        let schedules = [GridSchedule::first(), GridSchedule::fixed(7, Some(4))];
        let mut cases = vec![wcs.clone()];
        cases.extend(schedules.map(|g| wcs.clone().with_grid_schedule(Arc::new(g))));
        for w in cases {
            let cel = w.celestial().unwrap();
            for round in 0..20 {
                let spread = [1e-3, 1e-2, 0.05, 2.0][round % 4];
                let u: [f64; 8] = std::array::from_fn(|l| {
                    spread * (((round * 8 + l) as f64 * 0.618).fract() - 0.5)
                });
                let mut v: [f64; 8] = std::array::from_fn(|l| {
                    spread * (((round * 8 + l) as f64 * 0.414).fract() - 0.5)
                });
                v[3] = f64::NAN;
                let lanes = cel.intermediate_to_image_lanes(u, v);
                for l in 0..8 {
                    let one = cel.intermediate_to_image(u[l], v[l]);
                    let bits = |p: Option<(f64, f64)>| p.map(|(a, b)| (a.to_bits(), b.to_bits()));
                    assert_eq!(bits(lanes[l]), bits(one), "round {round}, lane {l}");
                }
                assert_eq!(lanes[3], None);
            }
        }
    }

    #[test]
    fn the_pipeline_adds_in_astropys_order() {
        let t =
            |v: f32| Some(LookupTable::new(vec![v], [1, 1], [1.0; 2], [0.0; 2], [1.0; 2]).unwrap());
        let tables = LookupTables {
            det2im: [t(0.25), None],
            cpdis: [None, t(-0.5)],
        };
        // D2IM first (x + 0.25), the polynomial sees the corrected pixel, CPDIS last.
        let (f1, f2) = tables.pix1_to_foc1(10.0, 20.0, |a, b| (a * 2.0, b + a));
        assert_eq!((f1, f2), (20.5, 20.0 + 10.25 - 0.5));
    }
}

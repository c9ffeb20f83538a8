//! The CFITSIO calls: an HDU opened (after its headers are checked), its header text, its
//! keywords and pixels, CFITSIO's errors as [`Error::Fits`], and [`Wcs::from_fits`].

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use fitsio::sys;

use super::ascii_header;
use super::header_check::check_hdu_headers;
use crate::error::{Error, Result};
use crate::wcs::distortion::lookup::{is_lookup_keyword, TableSource, TableSources};
use crate::wcs::distortion::{LookupTable, LookupTables};
use crate::wcs::header::Header;
use crate::wcs::Wcs;

/// CFITSIO's text for a status code.
fn status_text(status: c_int) -> String {
    let mut buf = [0 as c_char; 32];
    // SAFETY: ffgerr writes at most 30 characters plus a NUL into the buffer.
    unsafe {
        sys::ffgerr(status, buf.as_mut_ptr());
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}

/// A CFITSIO failure as [`Error::Fits`]: `"{p}: {what}: {CFITSIO's text} (CFITSIO status N)"`.
pub(super) fn fits_error(p: &str, what: &str, status: c_int) -> Error {
    Error::Fits(format!(
        "{p}: {what}: {} (CFITSIO status {status})",
        status_text(status)
    ))
}

/// Opens HDU `hdu` (0 = primary) of a FITS file through CFITSIO: the one way the crate opens a FITS
/// file to read a header, shared by [`FitsSource::open`](super::FitsSource::open) and
/// [`Wcs::from_fits`].
///
/// The file must exist ([`Error::Io`]) and pass [`check_hdu_headers`] before CFITSIO sees it.
/// Returns the file, positioned on the HDU, and CFITSIO's type of the HDU (`IMAGE_HDU`,
/// `BINARY_TBL`, `ASCII_TBL`). An HDU index past the last HDU is reported through `missing`
/// (the message gives the number of HDUs); other failures are [`Error::Fits`].
pub(super) fn open_hdu(
    path: &Path,
    hdu: usize,
    missing: fn(String) -> Error,
) -> Result<(fitsio::FitsFile, c_int)> {
    let p = path.display().to_string();
    if !path.exists() {
        return Err(Error::Io(format!("{p}: no such file")));
    }
    check_hdu_headers(path)?;
    let mut file = fitsio::FitsFile::open(path).map_err(|e| Error::Fits(format!("{p}: {e}")))?;
    let hdu_number = c_int::try_from(hdu + 1)
        .map_err(|_| Error::InvalidArgument(format!("HDU index {hdu} is too large")))?;
    let mut status: c_int = 0;
    let mut hdu_type: c_int = 0;
    // SAFETY: `file` owns a valid open fitsfile; every pointer passed to CFITSIO points to a
    // live local of the type CFITSIO expects.
    unsafe {
        let raw = file.as_raw();
        sys::ffmahd(raw, hdu_number, &mut hdu_type, &mut status);
        if status != 0 {
            let mut count: c_int = 0;
            let mut st2: c_int = 0;
            sys::ffthdu(raw, &mut count, &mut st2);
            if (status == sys::END_OF_FILE as c_int || status == sys::BAD_HDU_NUM as c_int)
                && st2 == 0
                && (count as usize) <= hdu
            {
                return Err(missing(format!(
                    "{p}: HDU {hdu} does not exist: the file has {count} HDU(s), 0..{count}"
                )));
            }
            return Err(fits_error(&p, &format!("cannot move to HDU {hdu}"), status));
        }
    }
    Ok((file, hdu_type))
}

/// The header of the HDU that `raw` is positioned on, as concatenated 80-character cards
/// ending with `END` (one character per byte, see [`ascii_header`]). With `as_image`, a
/// tile-compressed image's header is read as the header of the image it holds (CFITSIO's
/// `ffcnvthdr2str`); otherwise the HDU's own cards (`ffhdr2str`). `p` (the file) and `hdu`
/// are for messages.
///
/// # Safety
/// `raw` must be a valid open fitsfile.
pub(super) unsafe fn header_text(
    raw: *mut sys::fitsfile,
    as_image: bool,
    p: &str,
    hdu: usize,
) -> Result<String> {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        let mut status: c_int = 0;
        let mut text: *mut c_char = std::ptr::null_mut();
        let mut nkeys: c_int = 0;
        // CFITSIO allocates `text`; it is copied and freed with fffree.
        if as_image {
            sys::ffcnvthdr2str(
                raw,
                0,
                std::ptr::null_mut(),
                0,
                &mut text,
                &mut nkeys,
                &mut status,
            );
        } else {
            sys::ffhdr2str(
                raw,
                0,
                std::ptr::null_mut(),
                0,
                &mut text,
                &mut nkeys,
                &mut status,
            );
        }
        if status != 0 || text.is_null() {
            if !text.is_null() {
                // CFITSIO can fail after allocating the text (found by fuzzing: a leak).
                let mut st: c_int = 0;
                sys::fffree(text as *mut c_void, &mut st);
            }
            return Err(fits_error(
                p,
                &format!("cannot read the header of HDU {hdu}"),
                status,
            ));
        }
        let header = ascii_header(CStr::from_ptr(text).to_bytes());
        sys::fffree(text as *mut c_void, &mut status);
        Ok(header)
    }
}

// `Wcs::from_fits` lives here, with the CFITSIO header reader it uses, so that `wcs` parses
// header text and never reads files (it does not depend on `io`).
impl Wcs {
    /// Reads the primary WCS of HDU `hdu` (0 = primary HDU) of a FITS file: the HDU's own
    /// header cards (for a tile-compressed image, those of its binary table), any HDU type.
    /// Distortion lookup tables the header names (`CPDISi`, `D2IMDISi` = `'LOOKUP'`, as HST
    /// images have) are read from their extensions (`WCSDVARR`, `D2IMARR`) as astropy reads
    /// them ([`TableSources`], [`Wcs::with_lookup_tables`]).
    ///
    /// Errors: [`Error::Io`] for a missing file; [`Error::Fits`] for an HDU index past the
    /// last HDU, for unreadable files and for a table's extension missing; the errors of
    /// [`Wcs::from_header_str`] for the header itself and of [`TableSources::from_header`] and
    /// [`LookupTable::new`] for the tables.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("wcs_from_fits_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// let wcs = reproject::wcs::Wcs::from_fits(&path, 0).unwrap();
    /// assert_eq!(wcs.pixel_to_world(0.0, 0.0), Some((150.0, 30.0)));
    /// // An HDU past the last one is an error.
    /// assert!(matches!(
    ///     reproject::wcs::Wcs::from_fits(&path, 1),
    ///     Err(reproject::Error::Fits(_))
    /// ));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_fits(path: impl AsRef<Path>, hdu: usize) -> Result<Wcs> {
        let path = path.as_ref();
        let (mut file, _) = open_hdu(path, hdu, Error::Fits)?;
        let p = path.display().to_string();
        // SAFETY: `file` owns a valid open fitsfile, positioned on HDU `hdu`.
        let text = unsafe { header_text(file.as_raw(), false, &p, hdu)? };
        let header = Header::parse(&text)?;
        let Some(sources) = TableSources::from_header(&header)? else {
            return Wcs::from_header(&header, None);
        };
        // The header's WCS without the cards that name the tables, then the tables.
        let wcs = Wcs::from_header(&header.without(is_lookup_keyword), None)?;
        // SAFETY: `file` owns a valid open fitsfile.
        let tables = unsafe { read_lookup_tables(file.as_raw(), &p, &sources)? };
        wcs.with_lookup_tables(tables)
    }
}

/// Reads the lookup tables `sources` names from their image extensions (found by `EXTNAME`
/// and `EXTVER`) as float32, with each extension's `CRPIXj`, `CRVALj` and `CDELTj` (0, 0 and
/// 1 when absent), as astropy reads them. Moves the file's current HDU.
///
/// # Safety
/// `raw` must be a valid open fitsfile.
unsafe fn read_lookup_tables(
    raw: *mut sys::fitsfile,
    p: &str,
    sources: &TableSources,
) -> Result<LookupTables> {
    let read = |source: &Option<TableSource>| -> Result<Option<LookupTable>> {
        let Some(source) = source else {
            return Ok(None);
        };
        let what = format!("lookup table ({}, {})", source.extname, source.extver);
        let name = CString::new(source.extname).expect("no NUL in an EXTNAME");
        let extver = c_int::try_from(source.extver)
            .map_err(|_| Error::InvalidArgument(format!("{p}: {what}: EXTVER out of range")))?;
        let mut status: c_int = 0;
        let (mut naxis, mut size): (c_int, [std::ffi::c_long; 2]) = (0, [0; 2]);
        // SAFETY: the caller's promises; every pointer is to a live local of CFITSIO's type.
        unsafe {
            sys::ffmnhd(
                raw,
                sys::ANY_HDU as c_int,
                name.as_ptr() as *mut c_char,
                extver,
                &mut status,
            );
            if status != 0 {
                return Err(fits_error(p, &format!("cannot find the {what}"), status));
            }
            sys::ffgidm(raw, &mut naxis, &mut status);
            if status == 0 && naxis == 2 {
                sys::ffgisz(raw, 2, size.as_mut_ptr(), &mut status);
            }
        }
        if status != 0 || naxis != 2 || size.iter().any(|&n| n <= 0) {
            return Err(Error::InvalidValue {
                keyword: format!("{p}: {what}"),
                reason: format!("a lookup table is a 2-D image, found NAXIS = {naxis}, {size:?}"),
            });
        }
        let naxis = [size[0] as usize, size[1] as usize];
        // SAFETY: the file is positioned on the table's image HDU of naxis[0] x naxis[1].
        let data = unsafe {
            read_pixels::<f32>(
                raw,
                sys::TFLOAT as c_int,
                f32::NAN,
                naxis[0] * naxis[1],
                &mut status,
            )
        };
        if status != 0 {
            return Err(fits_error(p, &format!("cannot read the {what}"), status));
        }
        // SAFETY: as above.
        let key = |name: &CStr, default: f64| unsafe { key_f64(raw, name) }.unwrap_or(default);
        let pair = |a: &CStr, b: &CStr, default: f64| [key(a, default), key(b, default)];
        let table = LookupTable::new(
            data,
            naxis,
            pair(c"CRPIX1", c"CRPIX2", 0.0),
            pair(c"CRVAL1", c"CRVAL2", 0.0),
            pair(c"CDELT1", c"CDELT2", 1.0),
        )?;
        Ok(Some(if source.transposed {
            table.transposed()
        } else {
            table
        }))
    };
    Ok(LookupTables {
        det2im: [read(&sources.det2im[0])?, read(&sources.det2im[1])?],
        cpdis: [read(&sources.cpdis[0])?, read(&sources.cpdis[1])?],
    })
}

/// Reads the `count` pixels of the current image HDU through CFITSIO as `T` (CFITSIO type
/// code `datatype`, `TFLOAT` for f32 or `TDOUBLE` for f64), undefined pixels as `nul`;
/// failures are left in `status`.
///
/// # Safety
/// `raw` must be a valid open fitsfile positioned on an image HDU, and `datatype` must be the
/// CFITSIO code of `T`.
pub(super) unsafe fn read_pixels<T: Copy + Default>(
    raw: *mut sys::fitsfile,
    datatype: c_int,
    mut nul: T,
    count: usize,
    status: &mut c_int,
) -> Vec<T> {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        let mut v = vec![T::default(); count];
        let mut anynul: c_int = 0;
        sys::ffgpv(
            raw,
            datatype,
            1,
            count as sys::LONGLONG,
            &mut nul as *mut T as *mut c_void,
            v.as_mut_ptr() as *mut c_void,
            &mut anynul,
            status,
        );
        v
    }
}

/// Reads a numeric keyword as f64; `None` when absent or not numeric.
///
/// # Safety
/// `raw` must be a valid open fitsfile.
pub(super) unsafe fn key_f64(raw: *mut sys::fitsfile, name: &CStr) -> Option<f64> {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        let mut v = 0f64;
        let mut status: c_int = 0;
        sys::ffgky(
            raw,
            sys::TDOUBLE as c_int,
            name.as_ptr(),
            &mut v as *mut f64 as *mut c_void,
            std::ptr::null_mut(),
            &mut status,
        );
        (status == 0).then_some(v)
    }
}

/// Reads a string keyword; `None` when absent or not a string.
///
/// # Safety
/// `raw` must be a valid open fitsfile.
pub(super) unsafe fn key_string(raw: *mut sys::fitsfile, name: &CStr) -> Option<String> {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        let mut buf = [0 as c_char; 72];
        let mut status: c_int = 0;
        sys::ffgky(
            raw,
            sys::TSTRING as c_int,
            name.as_ptr(),
            buf.as_mut_ptr() as *mut c_void,
            std::ptr::null_mut(),
            &mut status,
        );
        (status == 0).then(|| {
            CStr::from_ptr(buf.as_ptr())
                .to_string_lossy()
                .trim()
                .to_string()
        })
    }
}

/// Reads an integer keyword; `None` when absent or not an integer.
///
/// # Safety
/// `raw` must be a valid open fitsfile.
pub(super) unsafe fn key_i64(raw: *mut sys::fitsfile, name: &CStr) -> Option<i64> {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        let mut v: sys::LONGLONG = 0;
        let mut status: c_int = 0;
        sys::ffgky(
            raw,
            sys::TLONGLONG as c_int,
            name.as_ptr(),
            &mut v as *mut sys::LONGLONG as *mut c_void,
            std::ptr::null_mut(),
            &mut status,
        );
        (status == 0).then_some(v)
    }
}

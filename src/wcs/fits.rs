//! Reading header text from a FITS file through CFITSIO (the `fitsio` crate, built from source).

use std::ffi::{c_char, c_int, CStr};
use std::path::Path;

use crate::error::{Error, Result};

/// The header of HDU `hdu` (0 = primary) as concatenated 80-character cards.
pub(crate) fn read_header_text(path: &Path, hdu: usize) -> Result<String> {
    if !path.exists() {
        return Err(Error::Io(format!("{}: no such file", path.display())));
    }
    crate::io::check_hdu_headers(path)?;
    let mut file = fitsio::FitsFile::open(path)
        .map_err(|e| Error::Fits(format!("{}: {e}", path.display())))?;
    let hdu_number = c_int::try_from(hdu + 1)
        .map_err(|_| Error::InvalidArgument(format!("HDU index {hdu} is too large")))?;
    let mut status: c_int = 0;
    let mut hdu_type: c_int = 0;
    let mut text: *mut c_char = std::ptr::null_mut();
    let mut nkeys: c_int = 0;
    // SAFETY: `file` owns a valid open fitsfile for the duration of these calls; CFITSIO
    // allocates `text` and we free it with `fffree` after copying.
    unsafe {
        let raw = file.as_raw();
        fitsio::sys::ffmahd(raw, hdu_number, &mut hdu_type, &mut status);
        if status != 0 {
            return Err(Error::Fits(format!(
                "{}: cannot move to HDU {hdu} (CFITSIO status {status})",
                path.display()
            )));
        }
        fitsio::sys::ffhdr2str(
            raw,
            0,
            std::ptr::null_mut(),
            0,
            &mut text,
            &mut nkeys,
            &mut status,
        );
        if status != 0 || text.is_null() {
            if !text.is_null() {
                let mut st: c_int = 0;
                fitsio::sys::fffree(text as *mut _, &mut st);
            }
            return Err(Error::Fits(format!(
                "{}: cannot read the header of HDU {hdu} (CFITSIO status {status})",
                path.display()
            )));
        }
        // One character per byte (non-ASCII → '?', as astropy), as FitsSource does.
        let header: String = CStr::from_ptr(text)
            .to_bytes()
            .iter()
            .map(|&b| if b.is_ascii() { b as char } else { '?' })
            .collect();
        fitsio::sys::fffree(text as *mut _, &mut status);
        Ok(header)
    }
}

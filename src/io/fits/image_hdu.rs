//! An image HDU as CFITSIO describes it (its size, header and scaling), and its pixels:
//! memory-mapped from a plain file, or decompressed into memory.

use std::ffi::c_int;
use std::fs::File;
use std::path::Path;

use fitsio::sys;
use memmap2::Mmap;

use super::cfitsio::{fits_error, header_text, key_f64, key_i64, key_string, read_pixels};
use super::Data;
use crate::error::{Error, Result};
use crate::io::decode::{ByteImage, Decoder, Layout};
use crate::io::output::available_memory;
use crate::io::sample::{sample_size, SampleType};

/// What CFITSIO says of an image HDU before its pixels are read.
pub(super) struct ImageHdu {
    /// A tile-compressed image (`ZIMAGE = T`).
    pub(super) compressed: bool,
    pub(super) bitpix: c_int,
    /// C order, two dimensions at least (`NAXIS = 1` is `1 x n`).
    pub(super) shape: Vec<usize>,
    /// The header text (a compressed HDU's as the image it holds).
    pub(super) header: String,
}

impl ImageHdu {
    /// The HDU `raw` is positioned on (HDU `hdu` of file `p`, for messages).
    ///
    /// Errors: [`Error::Fits`] where CFITSIO cannot read the size or the header, or an axis is
    /// negative; [`Error::InvalidArgument`] for an HDU without data (`NAXIS = 0`).
    ///
    /// # Safety
    /// `raw` must be a valid open fitsfile positioned on an image HDU.
    pub(super) unsafe fn read(raw: *mut sys::fitsfile, p: &str, hdu: usize) -> Result<ImageHdu> {
        let fits_err = |what: &str, status: c_int| fits_error(p, what, status);
        // SAFETY: the caller's promises (# Safety above); every pointer passed to CFITSIO
        // points to a live local of the type CFITSIO expects.
        unsafe {
            let mut status: c_int = 0;
            let compressed = sys::fits_is_compressed_image(raw, &mut status) != 0;
            let mut bitpix: c_int = 0;
            sys::ffgidt(raw, &mut bitpix, &mut status);
            let mut naxis: c_int = 0;
            sys::ffgidm(raw, &mut naxis, &mut status);
            if status != 0 {
                return Err(fits_err(
                    &format!("cannot read the image size of HDU {hdu}"),
                    status,
                ));
            }
            let mut naxes = vec![0 as sys::LONGLONG; naxis.max(1) as usize];
            if naxis > 0 {
                sys::ffgiszll(raw, naxis, naxes.as_mut_ptr(), &mut status);
                if status != 0 {
                    return Err(fits_err(
                        &format!("cannot read NAXISn of HDU {hdu}"),
                        status,
                    ));
                }
            }

            // Header text (a compressed HDU is shown as the image it holds).
            let header = header_text(raw, compressed, p, hdu)?;

            if naxis == 0 {
                return Err(Error::InvalidArgument(format!(
                    "{p}: HDU {hdu} has no image data (NAXIS = 0){}",
                    if hdu == 0 {
                        "; the image may be in an extension (HDU 1)"
                    } else {
                        ""
                    }
                )));
            }
            let mut shape: Vec<usize> = Vec::with_capacity(naxis as usize + 1);
            for &n in naxes.iter().rev() {
                shape.push(usize::try_from(n).map_err(|_| {
                    Error::Fits(format!("{p}: HDU {hdu}: negative axis length {n}"))
                })?);
            }
            if shape.len() == 1 {
                shape.insert(0, 1);
            }
            Ok(ImageHdu {
                compressed,
                bitpix,
                shape,
                header,
            })
        }
    }
}

/// How an image HDU's stored samples become values: BSCALE, BZERO and BLANK, and the FITS
/// unsigned conventions.
pub(super) struct Encoding {
    pub(super) bscale: f64,
    pub(super) bzero: f64,
    /// BLANK of an integer image (ZBLANK for a compressed one without BLANK).
    pub(super) blank: Option<i64>,
    /// The type BITPIX stores.
    pub(super) raw_sample: SampleType,
    /// The type the samples hold under an unsigned convention (BITPIX 16/32/64 with BZERO
    /// 2^15/2^31/2^63, BITPIX 8 with BZERO -128), decoded exactly.
    pub(super) convention: Option<SampleType>,
    /// Whether BSCALE/BZERO scale the samples (other than by a convention).
    pub(super) scaled: bool,
}

impl Encoding {
    /// The encoding of `image`, the HDU `raw` is positioned on (HDU `hdu` of file `p`, for
    /// messages). Errors: [`Error::Fits`] for an unsupported BITPIX.
    ///
    /// # Safety
    /// `raw` must be a valid open fitsfile.
    pub(super) unsafe fn read(
        raw: *mut sys::fitsfile,
        image: &ImageHdu,
        p: &str,
        hdu: usize,
    ) -> Result<Encoding> {
        let (bitpix, compressed) = (image.bitpix, image.compressed);
        // SAFETY: the caller's promises (# Safety above).
        let (bscale, bzero, blank) = unsafe {
            let bscale = key_f64(raw, c"BSCALE").unwrap_or(1.0);
            let bzero = key_f64(raw, c"BZERO").unwrap_or(0.0);
            let blank = if bitpix > 0 {
                key_i64(raw, c"BLANK").or_else(|| {
                    if compressed {
                        key_i64(raw, c"ZBLANK")
                    } else {
                        None
                    }
                })
            } else {
                None
            };
            (bscale, bzero, blank)
        };
        let raw_sample = match bitpix {
            8 => SampleType::U8,
            16 => SampleType::I16,
            32 => SampleType::I32,
            64 => SampleType::I64,
            -32 => SampleType::F32,
            -64 => SampleType::F64,
            other => {
                return Err(Error::Fits(format!(
                    "{p}: HDU {hdu}: unsupported BITPIX {other}"
                )))
            }
        };
        let convention = match bitpix {
            8 => Some((-128.0, SampleType::I8)),
            16 => Some((32768.0, SampleType::U16)),
            32 => Some((2147483648.0, SampleType::U32)),
            64 => Some((9223372036854775808.0, SampleType::U64)),
            _ => None,
        }
        .filter(|&(zero, _)| bscale == 1.0 && bzero == zero)
        .map(|(_, t)| t);
        let scaled = convention.is_none() && (bscale != 1.0 || bzero != 0.0);
        Ok(Encoding {
            bscale,
            bzero,
            blank,
            raw_sample,
            convention,
            scaled,
        })
    }

    /// How windows of the memory-mapped big-endian samples are decoded.
    fn decoder(&self) -> Decoder {
        match self.convention {
            Some(t) => Decoder {
                sample: t,
                big_endian: true,
                flip_sign: true,
                scale: None,
                blank: self.blank.map(|b| b as i128 + self.bzero as i128),
            },
            None => Decoder {
                sample: self.raw_sample,
                big_endian: true,
                flip_sign: false,
                scale: self.scaled.then_some((self.bzero, self.bscale)),
                blank: self.blank.map(|b| b as i128),
            },
        }
    }
}

/// The `count` pixels of `image` (HDU `hdu` of the plain FITS file `path`, named `p` in
/// messages) memory-mapped, and whether they are handed over as stored big-endian samples.
///
/// Errors: [`Error::Fits`] where CFITSIO cannot locate the data or the file is shorter than
/// the data; [`Error::Io`] where the file cannot be opened or mapped.
///
/// # Safety
/// `raw` must be a valid open fitsfile positioned on the HDU.
pub(super) unsafe fn map_data(
    raw: *mut sys::fitsfile,
    path: &Path,
    p: &str,
    hdu: usize,
    image: &ImageHdu,
    encoding: &Encoding,
    count: usize,
) -> Result<(Data, bool)> {
    let (shape, bitpix) = (&image.shape, image.bitpix);
    let elem = sample_size(encoding.raw_sample);
    let mut status: c_int = 0;
    let mut head: sys::LONGLONG = 0;
    let mut start: sys::LONGLONG = 0;
    let mut end: sys::LONGLONG = 0;
    // SAFETY: the caller's promises (# Safety above); the pointers are live locals of the
    // types CFITSIO expects.
    unsafe { sys::ffghadll(raw, &mut head, &mut start, &mut end, &mut status) };
    if status != 0 {
        return Err(fits_error(
            p,
            &format!("cannot locate the data of HDU {hdu}"),
            status,
        ));
    }
    let start = start as u64;
    let nbytes = (count as u64)
        .checked_mul(elem as u64)
        .ok_or_else(|| Error::Fits(format!("{p}: HDU {hdu}: image size overflows")))?;
    let fh = File::open(path).map_err(|e| Error::Io(format!("{p}: {e}")))?;
    let file_len = fh
        .metadata()
        .map_err(|e| Error::Io(format!("{p}: {e}")))?
        .len();
    if start + nbytes > file_len {
        return Err(Error::Fits(format!(
            "{p}: truncated file: HDU {hdu} ({shape:?}, BITPIX {bitpix}) needs \
             {nbytes} data bytes from offset {start}, the file has {file_len} bytes"
        )));
    }
    // SAFETY: read-only map; the file must not be truncated while mapped
    // (documented); the data range was checked against the length above.
    let map = unsafe { Mmap::map(&fh) }.map_err(|e| Error::Io(format!("{p}: {e}")))?;
    let layout = Layout::c_contiguous(shape, elem, start as usize);
    layout.check_fits(elem, map.len())?;
    let big = encoding.convention.is_none() && !encoding.scaled && elem > 1;
    let data = Data::Mapped(ByteImage {
        bytes: map,
        layout,
        decoder: encoding.decoder(),
    });
    Ok((data, big))
}

/// The `count` pixels of `image` (HDU `hdu`, of file `p` for messages) decompressed by
/// CFITSIO into memory: as float32 where that is exact, else float64; blanks NaN, scaling
/// applied. The samples are handed over native (`false`).
///
/// Errors: [`Error::Fits`] for HCOMPRESS tiles or unreadable data; [`Error::Io`] when the
/// decompressed pixels would not fit in the memory available.
///
/// # Safety
/// `raw` must be a valid open fitsfile positioned on the HDU.
pub(super) unsafe fn decompress_data(
    raw: *mut sys::fitsfile,
    p: &str,
    hdu: usize,
    image: &ImageHdu,
    encoding: &Encoding,
    count: usize,
) -> Result<(Data, bool)> {
    // CFITSIO 3.49's HCOMPRESS decoder trusts the tile stream: its own image size
    // and every bit read are unchecked, so a corrupt tile reads and writes out of
    // bounds (found by fuzzing: SEGV in dodecode64). Refused rather than risked.
    if image.compressed {
        // SAFETY: the caller's promises (# Safety above).
        let zcmptype = unsafe { key_string(raw, c"ZCMPTYPE") };
        if zcmptype.is_some_and(|t| t.starts_with("HCOMPRESS")) {
            return Err(Error::Fits(format!(
                "{p}: HDU {hdu}: HCOMPRESS_1 tile compression is not supported (the \
                 bundled CFITSIO cannot decode it safely); recompress the image, e.g. \
                 with RICE_1 or GZIP_1"
            )));
        }
    }
    let exact_f32 = !encoding.scaled && matches!(image.bitpix, 8 | 16 | -32);
    let bytes = count as u64 * if exact_f32 { 4 } else { 8 };
    if let Some(avail) = available_memory()
        && bytes > avail
    {
        return Err(Error::Io(format!(
            "{p}: HDU {hdu} is compressed; decompressing it needs {bytes} bytes \
                 of memory but only {avail} are available"
        )));
    }
    let mut status: c_int = 0;
    // SAFETY: the caller's promises (# Safety above); TFLOAT reads f32, TDOUBLE f64.
    let data = unsafe {
        if exact_f32 {
            Data::F32(read_pixels(
                raw,
                sys::TFLOAT as c_int,
                f32::NAN,
                count,
                &mut status,
            ))
        } else {
            Data::F64(read_pixels(
                raw,
                sys::TDOUBLE as c_int,
                f64::NAN,
                count,
                &mut status,
            ))
        }
    };
    if status != 0 {
        return Err(fits_error(
            p,
            &format!("cannot read the data of HDU {hdu}"),
            status,
        ));
    }
    Ok((data, false))
}

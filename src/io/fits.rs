//! FITS image HDUs as [`ImageSource`]s ([`FitsSource`]), through CFITSIO (the `fitsio` crate).
//!
//! CFITSIO is used only at open time, to find the HDU, its header, BITPIX/NAXIS, BSCALE,
//! BZERO, BLANK and the byte offset of its data. Uncompressed images in a plain (not gzipped)
//! file are then memory-mapped and decoded window by window straight from the big-endian
//! bytes. Tile-compressed images (`ZIMAGE = T`) and gzipped files are decompressed by CFITSIO
//! into memory at open (as f32 when that is exact, else f64), after checking the size against
//! [`available_memory`].
//!
//! This is also the crate's one reader of FITS headers through CFITSIO: [`FitsSource::open`]
//! and [`Wcs::from_fits`] (defined here, so that `wcs` only parses header text and does not
//! depend on `io`) both open the file and reach the HDU's header through the same functions,
//! after [`check_hdu_headers`].

use std::ffi::{c_char, c_int, c_void, CStr};
use std::fs::File;
use std::io::{Read, Seek};
use std::ops::Range;
use std::path::{Path, PathBuf};

use fitsio::sys;
use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::io::decode::{self, ByteImage, Decoder, Layout};
use crate::io::output::available_memory;
use crate::io::sample::{sample_size, SampleType, StoredType};
use crate::io::ImageSource;
use crate::wcs::Wcs;

/// Where the pixels are.
#[derive(Debug)]
enum Data {
    /// Memory-mapped raw big-endian data.
    Mapped(ByteImage<Mmap>),
    /// Decompressed into memory, C order, blanks already NaN, scaling applied.
    F32(Vec<f32>),
    /// Decompressed into memory, C order, blanks already NaN, scaling applied.
    F64(Vec<f64>),
}

/// An image HDU of a FITS file: an [`ImageSource`] plus the HDU's header text.
///
/// * Uncompressed images are memory-mapped; windows are decoded on the fly from the big-endian
///   data (BITPIX 8, 16, 32, 64, -32, -64) with `value = BZERO + BSCALE * stored` and, for
///   integer images, `BLANK` → NaN. The FITS unsigned conventions (BITPIX 16/32/64 with BZERO
///   2^15/2^31/2^63, BITPIX 8 with BZERO -128) decode exactly as `U16`/`U32`/`U64`/`I8`.
/// * Tile-compressed images and gzipped files are decompressed into memory at open.
/// * `NAXIS = 1` images are served as `1 x n`; leading axes (NAXIS3, ...) become planes.
///
/// [`stored_type`](ImageSource::stored_type) follows astropy: an unscaled memory-mapped image
/// is big-endian (`big_endian` is false for 1-byte BITPIX 8, which has no byte order); an image
/// with the unsigned conventions, a compressed one and a scaled one are native (astropy hands
/// over `hdu.data`); a scaled image reports `scaled: true` and the stored integer/float type.
///
/// ```
/// use reproject::io::{FitsSource, ImageSource};
/// # use reproject::io::{MappedOutput, OutputType};
/// # let pid = std::process::id();
/// # let path = std::env::temp_dir().join(format!("fits_source_{pid}.fits"));
/// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
/// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
/// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
/// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
/// # out.finish()?;
/// let src = FitsSource::open(&path, 0)?;
/// let wcs = src.wcs()?;
/// assert_eq!(wcs.pixel_to_world(0.0, 0.0), Some((150.0, 30.0)));
/// let (ny, nx) = src.plane_shape();
/// assert_eq!((ny, nx), (2, 3));
/// let mut row = vec![0.0; nx];
/// src.read_window(0, 1..2, 0..nx, &mut row)?;
/// assert_eq!(row, [3.0, 4.0, 5.0]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug)]
pub struct FitsSource {
    path: PathBuf,
    hdu: usize,
    header: String,
    shape: Vec<usize>,
    bitpix: i32,
    bscale: f64,
    bzero: f64,
    blank: Option<i64>,
    compressed: bool,
    stored: StoredType,
    data: Data,
}

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
fn fits_error(p: &str, what: &str, status: c_int) -> Error {
    Error::Fits(format!(
        "{p}: {what}: {} (CFITSIO status {status})",
        status_text(status)
    ))
}

/// Opens HDU `hdu` (0 = primary) of a FITS file through CFITSIO: the one way the crate opens a
/// FITS file to read a header, shared by [`FitsSource::open`] and [`Wcs::from_fits`].
///
/// The file must exist ([`Error::Io`]) and pass [`check_hdu_headers`] before CFITSIO sees it.
/// Returns the file, positioned on the HDU, and CFITSIO's type of the HDU (`IMAGE_HDU`,
/// `BINARY_TBL`, `ASCII_TBL`). An HDU index past the last HDU is reported through `missing`
/// (the message gives the number of HDUs); other failures are [`Error::Fits`].
fn open_hdu(
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
unsafe fn header_text(
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
    ///
    /// Errors: [`Error::Io`] for a missing file; [`Error::Fits`] for an HDU index past the
    /// last HDU and for unreadable files; the errors of [`Wcs::from_header_str`] for the
    /// header itself.
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
        Wcs::from_header_str(&text)
    }
}

impl FitsSource {
    /// Opens image HDU `hdu` (0 = primary) of a FITS file.
    ///
    /// Errors: [`Error::Io`] for a missing file; [`Error::InvalidArgument`] for an HDU index
    /// past the last HDU, a table HDU or an HDU without data (`NAXIS = 0`, with a hint to use
    /// an extension); [`Error::Fits`] for unreadable or truncated files.
    ///
    /// ```
    /// use reproject::io::{FitsSource, ImageSource};
    /// use reproject::Error;
    /// # use fitsio::images::{ImageDescription, ImageType};
    /// # let path = std::env::temp_dir().join(format!("fits_open_{}.fits", std::process::id()));
    /// # let mut f = fitsio::FitsFile::create(&path).overwrite().open().unwrap(); // empty primary
    /// # let desc = ImageDescription { data_type: ImageType::Float, dimensions: &[2, 3] };
    /// # let hdu = f.create_image("SCI", &desc).unwrap();
    /// # hdu.write_image(&mut f, &[0.5f32; 6]).unwrap();
    /// # drop(f);
    /// let sci = FitsSource::open(&path, 1)?;
    /// assert_eq!(sci.shape(), &[2, 3]);
    /// assert!(sci.header_cards().any(|c| c.starts_with("EXTNAME = 'SCI")));
    /// // The primary HDU has no data (NAXIS = 0), and there is no HDU 2.
    /// assert!(matches!(FitsSource::open(&path, 0), Err(Error::InvalidArgument(_))));
    /// assert!(matches!(FitsSource::open(&path, 2), Err(Error::InvalidArgument(_))));
    /// assert!(matches!(FitsSource::open("no-such-file.fits", 0), Err(Error::Io(_))));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>, hdu: usize) -> Result<FitsSource> {
        let path = path.as_ref();
        let p = path.display().to_string();
        let fits_err = |what: &str, status: c_int| fits_error(&p, what, status);
        let (mut file, hdu_type) = open_hdu(path, hdu, Error::InvalidArgument)?;

        // SAFETY: `file` owns a valid open fitsfile, positioned on HDU `hdu`, for the whole
        // block; every pointer passed to CFITSIO points to a live local of the type CFITSIO
        // expects.
        unsafe {
            let raw = file.as_raw();
            let mut status: c_int = 0;
            if hdu_type != sys::IMAGE_HDU as c_int {
                let kind = if hdu_type == sys::BINARY_TBL as c_int {
                    "a binary table"
                } else {
                    "an ASCII table"
                };
                return Err(Error::InvalidArgument(format!(
                    "{p}: HDU {hdu} is {kind}, not an image"
                )));
            }
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
            let header = header_text(raw, compressed, &p, hdu)?;

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
            let elem = sample_size(raw_sample);
            let count = shape
                .iter()
                .try_fold(1usize, |a, &b| a.checked_mul(b))
                .ok_or_else(|| Error::Fits(format!("{p}: HDU {hdu}: image size overflows")))?;
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

            let plain_file = !compressed && starts_with_simple(path);
            let (data, big_endian) = if plain_file {
                let mut head: sys::LONGLONG = 0;
                let mut start: sys::LONGLONG = 0;
                let mut end: sys::LONGLONG = 0;
                sys::ffghadll(raw, &mut head, &mut start, &mut end, &mut status);
                if status != 0 {
                    return Err(fits_err(
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
                let map = Mmap::map(&fh).map_err(|e| Error::Io(format!("{p}: {e}")))?;
                let layout = Layout::c_contiguous(&shape, elem, start as usize);
                layout.check_fits(elem, map.len())?;
                let decoder = match convention {
                    Some(t) => Decoder {
                        sample: t,
                        big_endian: true,
                        flip_sign: true,
                        scale: None,
                        blank: blank.map(|b| b as i128 + bzero as i128),
                    },
                    None => Decoder {
                        sample: raw_sample,
                        big_endian: true,
                        flip_sign: false,
                        scale: scaled.then_some((bzero, bscale)),
                        blank: blank.map(|b| b as i128),
                    },
                };
                let big = convention.is_none() && !scaled && elem > 1;
                (
                    Data::Mapped(ByteImage {
                        bytes: map,
                        layout,
                        decoder,
                    }),
                    big,
                )
            } else {
                // CFITSIO 3.49's HCOMPRESS decoder trusts the tile stream: its own image size
                // and every bit read are unchecked, so a corrupt tile reads and writes out of
                // bounds (found by fuzzing: SEGV in dodecode64). Refused rather than risked.
                if compressed
                    && key_string(raw, c"ZCMPTYPE").is_some_and(|t| t.starts_with("HCOMPRESS"))
                {
                    return Err(Error::Fits(format!(
                        "{p}: HDU {hdu}: HCOMPRESS_1 tile compression is not supported (the \
                         bundled CFITSIO cannot decode it safely); recompress the image, e.g. \
                         with RICE_1 or GZIP_1"
                    )));
                }
                let exact_f32 = !scaled && matches!(bitpix, 8 | 16 | -32);
                let bytes = count as u64 * if exact_f32 { 4 } else { 8 };
                if let Some(avail) = available_memory()
                    && bytes > avail
                {
                    return Err(Error::Io(format!(
                        "{p}: HDU {hdu} is compressed; decompressing it needs {bytes} bytes \
                             of memory but only {avail} are available"
                    )));
                }
                let data = if exact_f32 {
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
                };
                if status != 0 {
                    return Err(fits_err(
                        &format!("cannot read the data of HDU {hdu}"),
                        status,
                    ));
                }
                (data, false)
            };
            let stored = StoredType {
                sample: convention.unwrap_or(raw_sample),
                big_endian,
                scaled,
            };
            Ok(FitsSource {
                path: path.to_path_buf(),
                hdu,
                header,
                shape,
                bitpix,
                bscale,
                bzero,
                blank,
                compressed,
                stored,
                data,
            })
        }
    }

    /// The HDU's header as concatenated 80-character cards (ending with `END`), as CFITSIO
    /// writes it; for a compressed image, the header of the image it holds. Feed it to
    /// [`Wcs::from_header_str`] or to
    /// [`MappedOutput::create_fits`](crate::io::MappedOutput::create_fits).
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_header_text_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// let src = reproject::io::FitsSource::open(&path, 0)?;
    /// let text = src.header_text();
    /// assert_eq!(text.len() % 80, 0);
    /// assert!(text.contains("CTYPE1  = 'RA---TAN'"));
    /// assert!(text[text.len() - 80..].starts_with("END "));
    /// assert!(reproject::wcs::Wcs::from_header_str(text).is_ok());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn header_text(&self) -> &str {
        &self.header
    }

    /// The header's cards, one per item, trailing blanks removed.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_header_cards_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// let src = reproject::io::FitsSource::open(&path, 0)?;
    /// assert!(src.header_cards().any(|c| c.starts_with("BITPIX") && c.contains("-32")));
    /// assert!(src.header_cards().any(|c| c == "CTYPE2  = 'DEC--TAN'"));
    /// assert!(src.header_cards().all(|c| c.len() <= 80 && !c.ends_with(' ')));
    /// assert_eq!(src.header_cards().last(), Some("END"));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn header_cards(&self) -> impl Iterator<Item = &str> {
        self.header
            .as_bytes()
            .chunks(80)
            .map(|c| std::str::from_utf8(c).unwrap_or("").trim_end())
    }

    /// Parses the primary WCS of the header (`Wcs::from_header_str(self.header_text())`).
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_source_wcs_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// let wcs = reproject::io::FitsSource::open(&path, 0)?.wcs()?;
    /// assert_eq!(wcs.pixel_to_world(0.0, 0.0), Some((150.0, 30.0)));
    /// assert_eq!(wcs, reproject::wcs::Wcs::from_fits(&path, 0)?);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn wcs(&self) -> Result<Wcs> {
        Wcs::from_header_str(&self.header)
    }

    /// BITPIX of the stored data (ZBITPIX for a compressed image).
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_bitpix_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// assert_eq!(reproject::io::FitsSource::open(&path, 0)?.bitpix(), -32);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn bitpix(&self) -> i32 {
        self.bitpix
    }

    /// `(BSCALE, BZERO)`, `(1, 0)` when absent.
    ///
    /// ```
    /// use reproject::io::{FitsSource, ImageSource};
    /// # use fitsio::images::{ImageDescription, ImageType};
    /// # let path = std::env::temp_dir().join(format!("fits_scaling_{}.fits", std::process::id()));
    /// # let desc = ImageDescription { data_type: ImageType::Short, dimensions: &[1, 3] };
    /// # let new = fitsio::FitsFile::create(&path).with_custom_primary(&desc).overwrite();
    /// # let mut f = new.open().unwrap();
    /// # let hdu = f.primary_hdu().unwrap();
    /// # hdu.write_image(&mut f, &[0i16, 2, 4]).unwrap(); // raw stored values
    /// # hdu.write_key(&mut f, "BSCALE", 0.5f64).unwrap();
    /// # hdu.write_key(&mut f, "BZERO", 10.0f64).unwrap();
    /// # drop(f);
    /// let src = FitsSource::open(&path, 0)?; // BITPIX 16, BSCALE 0.5, BZERO 10
    /// assert_eq!(src.scaling(), (0.5, 10.0));
    /// let mut row = [0.0; 3];
    /// src.read_window(0, 0..1, 0..3, &mut row)?; // stored 0, 2, 4
    /// assert_eq!(row, [10.0, 11.0, 12.0]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn scaling(&self) -> (f64, f64) {
        (self.bscale, self.bzero)
    }

    /// The BLANK value of an integer image (raw stored value), if any.
    ///
    /// ```
    /// use reproject::io::{FitsSource, ImageSource};
    /// # use fitsio::images::{ImageDescription, ImageType};
    /// # let path = std::env::temp_dir().join(format!("fits_blank_{}.fits", std::process::id()));
    /// # let desc = ImageDescription { data_type: ImageType::Short, dimensions: &[1, 3] };
    /// # let new = fitsio::FitsFile::create(&path).with_custom_primary(&desc).overwrite();
    /// # let mut f = new.open().unwrap();
    /// # let hdu = f.primary_hdu().unwrap();
    /// # hdu.write_image(&mut f, &[1i16, -999, 3]).unwrap(); // raw stored values
    /// # hdu.write_key(&mut f, "BLANK", -999i64).unwrap();
    /// # drop(f);
    /// let src = FitsSource::open(&path, 0)?; // BITPIX 16, BLANK -999
    /// assert_eq!(src.blank(), Some(-999));
    /// let mut row = [0.0; 3];
    /// src.read_window(0, 0..1, 0..3, &mut row)?; // stored 1, -999, 3
    /// assert!(row[0] == 1.0 && row[1].is_nan() && row[2] == 3.0);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn blank(&self) -> Option<i64> {
        self.blank
    }

    /// Whether the HDU is a tile-compressed image.
    ///
    /// ```
    /// use reproject::io::FitsSource;
    /// # use fitsio::images::{ImageDescription, ImageType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_is_compressed_{pid}.fits"));
    /// # let mut f = fitsio::FitsFile::create(&path).overwrite().open().unwrap();
    /// # let mut status = 0;
    /// # let rice = fitsio::sys::RICE_1 as i32;
    /// # unsafe { fitsio::sys::fits_set_compression_type(f.as_raw(), rice, &mut status) };
    /// # assert_eq!(status, 0);
    /// # let desc = ImageDescription { data_type: ImageType::Short, dimensions: &[4, 5] };
    /// # let hdu = f.create_image("SCI", &desc).unwrap(); // written RICE_1-compressed
    /// # hdu.write_image(&mut f, &[7i16; 20]).unwrap();
    /// # drop(f);
    /// # assert!(std::fs::read(&path)?.windows(6).any(|w| w == b"ZIMAGE"));
    /// let src = FitsSource::open(&path, 1)?; // a tile-compressed image extension
    /// assert!(src.is_compressed());
    /// assert!(!src.is_memory_mapped()); // decompressed into memory at open
    /// assert_eq!(src.bitpix(), 16); // ZBITPIX
    /// assert!(!src.header_text().contains("ZIMAGE")); // the header of the image it holds
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_compressed(&self) -> bool {
        self.compressed
    }

    /// Whether the pixels are served from a memory map (else they were decompressed into
    /// memory).
    ///
    /// ```
    /// use reproject::io::FitsSource;
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_is_memory_mapped_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// # let gz = path.with_extension("fits.gz");
    /// # let desc = fitsio::images::ImageDescription {
    /// #     data_type: fitsio::images::ImageType::Float,
    /// #     dimensions: &[2, 3],
    /// # };
    /// # let new = fitsio::FitsFile::create(&gz).with_custom_primary(&desc).overwrite();
    /// # let mut f = new.open().unwrap();
    /// # f.primary_hdu().unwrap().write_image(&mut f, &[1f32; 6]).unwrap();
    /// # drop(f);
    /// assert!(FitsSource::open(&path, 0)?.is_memory_mapped()); // a plain file
    /// assert!(!FitsSource::open(&gz, 0)?.is_memory_mapped()); // a gzipped file
    /// # std::fs::remove_file(&gz)?;
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_memory_mapped(&self) -> bool {
        matches!(self.data, Data::Mapped(_))
    }

    /// The HDU index this source reads.
    ///
    /// ```
    /// use reproject::io::FitsSource;
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let path = std::env::temp_dir().join(format!("fits_hdu_{}.fits", std::process::id()));
    /// # let mut out = MappedOutput::create_fits_with_footprint(
    /// #     &path, &[2, 2], OutputType::F32, "", OutputType::F32, true)?;
    /// # out.finish()?;
    /// // HDU 0: the image, HDU 1: its FOOTPRINT extension.
    /// assert_eq!(FitsSource::open(&path, 0)?.hdu(), 0);
    /// let fp = FitsSource::open(&path, 1)?;
    /// assert_eq!(fp.hdu(), 1);
    /// assert!(fp.header_cards().any(|c| c.starts_with("EXTNAME = 'FOOTPRINT'")));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn hdu(&self) -> usize {
        self.hdu
    }

    /// The file's path.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let pid = std::process::id();
    /// # let path = std::env::temp_dir().join(format!("fits_path_{pid}.fits"));
    /// # let cards = concat!("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = 1\n",
    /// #     "CRPIX2  = 1\nCRVAL1  = 150\nCRVAL2  = 30");
    /// # let mut out = MappedOutput::create_fits(&path, &[2, 3], OutputType::F32, cards, true)?;
    /// # out.view_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    /// # out.finish()?;
    /// let src = reproject::io::FitsSource::open(&path, 0)?;
    /// assert_eq!(src.path(), path.as_path());
    /// let name = format!("fits_path_{}.fits", std::process::id());
    /// assert!(src.path().ends_with(name));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ImageSource for FitsSource {
    fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn stored_type(&self) -> StoredType {
        self.stored
    }

    fn raw_plane(&self, plane: usize) -> Option<crate::io::RawPlane<'_>> {
        match &self.data {
            Data::Mapped(image) => image.raw_plane(plane),
            Data::F32(_) | Data::F64(_) => None,
        }
    }

    fn encoded_plane(
        &self,
        plane: usize,
    ) -> Option<(crate::io::RawPlane<'_>, crate::io::InputDecoding)> {
        match &self.data {
            Data::Mapped(image) => image.encoded_plane(plane),
            Data::F32(_) | Data::F64(_) => None,
        }
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        match &self.data {
            Data::Mapped(image) => image.read_window(plane, rows, cols, out),
            Data::F32(v) => copy_window(v, &self.shape, plane, rows, cols, out),
            Data::F64(v) => copy_window(v, &self.shape, plane, rows, cols, out),
        }
    }
}

/// Copies a window of an in-memory C-order array.
fn copy_window<T: Copy + Into<f64>>(
    data: &[T],
    shape: &[usize],
    plane: usize,
    rows: Range<usize>,
    cols: Range<usize>,
    out: &mut [f64],
) -> Result<()> {
    let (ny, nx) = decode::check_window(shape, plane, &rows, &cols, out.len())?;
    if rows.is_empty() || cols.is_empty() {
        return Ok(());
    }
    let base = plane * ny * nx;
    for (r, out_row) in rows.zip(out.chunks_exact_mut(cols.len())) {
        let start = base + r * nx;
        let src = &data[start + cols.start..start + cols.end];
        for (o, &x) in out_row.iter_mut().zip(src) {
            *o = x.into();
        }
    }
    Ok(())
}

/// Header bytes as text, one character per byte so that cards stay 80 characters long:
/// non-ASCII bytes become `?`, as astropy reads them (found by fuzzing: lossy UTF-8 made
/// three-byte replacement characters and cards of the wrong length).
pub(crate) fn ascii_header(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| if b.is_ascii() { b as char } else { '?' })
        .collect()
}

/// Whether the file starts with a plain FITS primary header (not gzip or other wrappers).
fn starts_with_simple(path: &Path) -> bool {
    let mut buf = [0u8; 9];
    match File::open(path).and_then(|mut f| f.read_exact(&mut buf)) {
        Ok(()) => &buf == b"SIMPLE  =",
        Err(_) => false,
    }
}

/// Reads the `count` pixels of the current image HDU through CFITSIO as `T` (CFITSIO type
/// code `datatype`, `TFLOAT` for f32 or `TDOUBLE` for f64), undefined pixels as `nul`;
/// failures are left in `status`.
///
/// # Safety
/// `raw` must be a valid open fitsfile positioned on an image HDU, and `datatype` must be the
/// CFITSIO code of `T`.
unsafe fn read_pixels<T: Copy + Default>(
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
unsafe fn key_f64(raw: *mut sys::fitsfile, name: &CStr) -> Option<f64> {
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
unsafe fn key_string(raw: *mut sys::fitsfile, name: &CStr) -> Option<String> {
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
unsafe fn key_i64(raw: *mut sys::fitsfile, name: &CStr) -> Option<i64> {
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

/// FITS block size.
const BLOCK: usize = 2880;

/// Sources the header walk reads: a plain file (data skipped by seeking) or a gzip stream
/// (data skipped by decompressing).
trait HeaderStream: Read {
    fn skip(&mut self, n: u64) -> std::io::Result<()>;
}

impl HeaderStream for std::io::BufReader<File> {
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let n = i64::try_from(n).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        self.seek_relative(n)
    }
}

impl<R: Read> HeaderStream for flate2::read::MultiGzDecoder<R> {
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        std::io::copy(&mut self.by_ref().take(n), &mut std::io::sink()).map(|_| ())
    }
}

/// Checks every HDU header of a FITS file (plain or gzipped) for what CFITSIO 3.49, the
/// version `fitsio-src` builds, mishandles, before CFITSIO reads the file. A table header
/// must start with BITPIX, NAXIS, NAXIS1, NAXIS2, PCOUNT, GCOUNT and TFIELDS (cards 2 to 8).
/// CFITSIO's `ffgttb` (getkey.c) checks them one by one but, through three typos
/// (`return(*status == BAD_NAXES)`, twice, and `return(*status == BAD_TFIELDS)`) and an error
/// status it does not test (an illegal character in one of those cards), can report success
/// with the column count unset or above 999; `ffbinit`/`ffainit` then allocate and initialise
/// that many column descriptors: a few kB of hostile header cost gigabytes or crash. Such
/// headers are refused here, as CFITSIO means to refuse them. Found by fuzzing (`fuzz/`,
/// target `fits_open`).
///
/// Only headers are read (data are skipped); a structure this walk cannot follow (no `END`,
/// unreadable `NAXISn`, end of file) is left to CFITSIO to report.
fn check_hdu_headers(path: &Path) -> Result<()> {
    let p = path.display();
    let io_err = |e: std::io::Error| Error::Io(format!("{p}: {e}"));
    let mut file = File::open(path).map_err(io_err)?;
    let mut magic = [0u8; 2];
    let gzipped = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    file.rewind().map_err(io_err)?;
    let outcome = if gzipped {
        walk_headers(&mut flate2::read::MultiGzDecoder::new(
            std::io::BufReader::new(file),
        ))
    } else {
        walk_headers(&mut std::io::BufReader::with_capacity(BLOCK, file))
    };
    outcome.map_err(|reason| Error::Fits(format!("{p}: {reason}")))
}

/// The header keywords the walk needs, as integers (`None`: absent or not an integer).
#[derive(Default)]
struct HduKeys {
    bitpix: Option<i64>,
    naxis: Option<i64>,
    naxisn: Vec<(usize, Option<i64>)>,
    pcount: Option<i64>,
    gcount: Option<i64>,
    groups: bool,
    /// ZIMAGE = T (a tile-compressed image in a binary table).
    zimage: bool,
    znaxis: Option<i64>,
    /// ZNAXISn and ZTILEn value fields (first occurrence).
    zaxes: Vec<(usize, String)>,
    ztiles: Vec<(usize, String)>,
}

/// Cards 2 to 8 of a table header and their allowed values.
const TABLE_CARDS: [(&str, std::ops::RangeInclusive<i64>); 7] = [
    ("BITPIX", 8..=8),
    ("NAXIS", 2..=2),
    ("NAXIS1", 0..=i64::MAX),
    ("NAXIS2", 0..=i64::MAX),
    ("PCOUNT", 0..=i64::MAX),
    ("GCOUNT", 1..=1),
    ("TFIELDS", 0..=999),
];

/// A card's keyword as CFITSIO's `ffgknm` reads it: up to the first blank or `=`.
fn cfitsio_keyword(card: &[u8]) -> &[u8] {
    let end = card[..74]
        .iter()
        .position(|&b| b == b' ' || b == b'=' || b == 0)
        .unwrap_or(74);
    &card[..end]
}

/// The value field of a card (after the first `=`, before a `/`), trimmed; a NUL ends the
/// card, as in CFITSIO's C strings.
fn card_value(card: &[u8]) -> String {
    let card = &card[..card.iter().position(|&b| b == 0).unwrap_or(card.len())];
    let Some(eq) = card.iter().position(|&b| b == b'=') else {
        return String::new();
    };
    let text: String = card[eq + 1..].iter().map(|&b| b as char).collect();
    text.split('/').next().unwrap_or("").trim().to_string()
}

/// A string value as CFITSIO's `ffc2s` reads it: between the quotes, blanks trimmed.
fn string_value(value: &str) -> &str {
    match value.strip_prefix('\'') {
        Some(rest) => rest.split('\'').next().unwrap_or(rest).trim(),
        None => value.trim(),
    }
}

/// The tile sizes of a tile-compressed image as CFITSIO's `imcomp_get_compressed_image_par`
/// reads them when it opens the HDU: ZTILEn (default ZNAXIS1 for the first axis, 1 for the
/// others) divides `ZNAXISn - 1` unchecked, so a zero or -1 tile size is SIGFPE (found by
/// fuzzing). Such tile sizes, and ones that are not plain integers, are refused here.
fn check_tiles(hdu: usize, keys: &HduKeys) -> std::result::Result<(), String> {
    let Some(znaxis) = keys.znaxis.filter(|n| (1..=6).contains(n)) else {
        return Ok(()); // CFITSIO refuses the image before dividing
    };
    for n in 1..=znaxis as usize {
        let field =
            |list: &Vec<(usize, String)>| list.iter().find(|k| k.0 == n).map(|k| k.1.clone());
        let (key, text) = match (field(&keys.ztiles), n) {
            (Some(t), _) => (format!("ZTILE{n}"), t),
            (None, 1) => (
                "ZNAXIS1".to_string(),
                field(&keys.zaxes).unwrap_or_default(),
            ),
            (None, _) => continue,
        };
        if !text.parse::<i64>().is_ok_and(|t| t >= 1) {
            return Err(format!(
                "HDU {hdu}: tile-compressed image with tile size {key} = '{text}' (must be a \
                 positive integer)"
            ));
        }
    }
    Ok(())
}

/// An integer value, also written as a float with no fraction (`1.0E3`).
fn parse_int(value: &str) -> Option<i64> {
    value.parse::<i64>().ok().or_else(|| {
        let v = value.replace(['D', 'd'], "E").parse::<f64>().ok()?;
        (v.fract() == 0.0 && v.abs() < 9.2e18).then_some(v as i64)
    })
}

/// Reads up to `buf.len()` bytes (fewer only at the end of the stream or on an error).
fn read_full(stream: &mut dyn HeaderStream, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match stream.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

/// Walks the HDUs; `Err` only for a header CFITSIO must not see.
///
/// Headers are followed by skipping their data. Where the data size cannot be worked out (a
/// mandatory value this walk cannot read, which CFITSIO may still read its own way), every
/// following 2880-byte block that starts with `XTENSION` is checked as a header instead, so
/// that no table CFITSIO could reach goes unchecked.
fn walk_headers(stream: &mut dyn HeaderStream) -> std::result::Result<(), String> {
    let mut block = vec![0u8; BLOCK];
    let mut scanning = false;
    for hdu in 0usize.. {
        let mut n = read_full(stream, &mut block);
        if scanning {
            while n > 0 && cfitsio_keyword(&pad_card(&block[..n.min(80)])) != b"XTENSION" {
                n = read_full(stream, &mut block);
            }
        }
        if n == 0 {
            return Ok(());
        }
        let Some(keys) = read_header(stream, &mut block, n, hdu)? else {
            return Ok(()); // the file ends inside this header
        };
        match data_size(&keys) {
            Some(bytes) => {
                let padded = bytes.div_ceil(BLOCK as u64).saturating_mul(BLOCK as u64);
                if padded >= i64::MAX as u64 || stream.skip(padded).is_err() {
                    return Ok(());
                }
                scanning = false;
            }
            None => scanning = true,
        }
    }
    Ok(())
}

/// A card of up to 80 bytes, NUL-padded to 80.
fn pad_card(card: &[u8]) -> [u8; 80] {
    let mut out = [0u8; 80];
    out[..card.len()].copy_from_slice(card);
    out
}

/// Reads (and checks) one header whose first `n` bytes are in `block`; `None` when the file
/// ends before its END card.
fn read_header(
    stream: &mut dyn HeaderStream,
    block: &mut [u8],
    mut n: usize,
    hdu: usize,
) -> std::result::Result<Option<HduKeys>, String> {
    let mut keys = HduKeys::default();
    let mut number = 0usize;
    let mut table = false;
    loop {
        // A short last block is checked too: CFITSIO reads the cards it holds.
        block[n..].fill(0);
        for card in block.chunks_exact(80).take(n.div_ceil(80)) {
            number += 1;
            let keyword = cfitsio_keyword(card);
            if number == 1 {
                let value = card_value(card);
                let xtension = string_value(&value);
                table = keyword == b"XTENSION"
                    && matches!(xtension, "TABLE" | "BINTABLE" | "A3DTABLE" | "3DTABLE");
            }
            // The table cards CFITSIO reads by position (see above).
            if table && (2..=8).contains(&number) {
                let (want, range) = &TABLE_CARDS[number - 2];
                let value = card_value(card);
                let printable = card.iter().all(|&b| (32..127).contains(&b));
                let ok = printable
                    && keyword == want.as_bytes()
                    && value.parse::<i64>().is_ok_and(|v| range.contains(&v));
                if !ok {
                    return Err(format!(
                        "HDU {hdu}: malformed table header: card {number} must be {want} \
                         with an integer in {range:?}, found '{}'",
                        String::from_utf8_lossy(card).trim_end()
                    ));
                }
            }
            // CFITSIO ends a header at the first card whose keyword is END.
            if keyword == b"END" {
                if table && keys.zimage {
                    check_tiles(hdu, &keys)?;
                }
                return Ok(Some(keys));
            }
            let name = std::str::from_utf8(keyword).unwrap_or("");
            let value = card_value(card);
            let int = value.parse::<i64>().ok();
            // The first occurrence counts (CFITSIO reads the mandatory cards by position).
            match name {
                "BITPIX" => keys.bitpix = keys.bitpix.or(int),
                "NAXIS" => keys.naxis = keys.naxis.or(int),
                "PCOUNT" => keys.pcount = keys.pcount.or(int),
                "GCOUNT" => keys.gcount = keys.gcount.or(int),
                "GROUPS" => keys.groups = value == "T",
                "ZIMAGE" => keys.zimage |= value.starts_with('T'),
                "ZNAXIS" => keys.znaxis = keys.znaxis.or(parse_int(&value)),
                _ if name.starts_with("ZNAXIS") || name.starts_with("ZTILE") => {
                    let (list, digits) = match name.strip_prefix("ZNAXIS") {
                        Some(d) => (&mut keys.zaxes, d),
                        None => (&mut keys.ztiles, &name[5..]),
                    };
                    if let Ok(n) = digits.parse::<usize>()
                        && !list.iter().any(|k| k.0 == n)
                    {
                        list.push((n, value));
                    }
                }
                _ => {
                    let axis = name.strip_prefix("NAXIS").and_then(|s| s.parse().ok());
                    if let Some(n) = axis.filter(|n| !keys.naxisn.iter().any(|k| k.0 == *n)) {
                        keys.naxisn.push((n, int));
                    }
                }
            }
        }
        n = read_full(stream, block);
        if n == 0 {
            // CFITSIO reads a table's first 8 cards whether or not they are in the file.
            if table && number < 8 {
                return Err(format!(
                    "HDU {hdu}: malformed table header: the file ends after {number} card(s)"
                ));
            }
            if table && keys.zimage {
                check_tiles(hdu, &keys)?;
            }
            return Ok(None);
        }
    }
}

/// The size in bytes of an HDU's data (FITS standard 4.4.1.1), `None` when a value it needs
/// is missing or not a plain non-negative integer.
fn data_size(keys: &HduKeys) -> Option<u64> {
    let bitpix = keys.bitpix?;
    let naxis = usize::try_from(keys.naxis?).ok()?;
    if naxis == 0 {
        return Some(0);
    }
    let mut count: u64 = 1;
    for axis in 1..=naxis {
        let len = keys.naxisn.iter().find(|(n, _)| *n == axis)?.1?;
        let len = u64::try_from(len).ok()?;
        if axis == 1 && len == 0 && keys.groups {
            continue;
        }
        count = count.saturating_mul(len);
    }
    let pcount = u64::try_from(keys.pcount.unwrap_or(0)).ok()?;
    let gcount = u64::try_from(keys.gcount.unwrap_or(1)).ok()?;
    Some(
        (bitpix.unsigned_abs() / 8)
            .saturating_mul(gcount)
            .saturating_mul(pcount.saturating_add(count)),
    )
}

//! FITS image HDUs as [`ImageSource`]s ([`FitsSource`]), through CFITSIO (the `fitsio` crate).
//!
//! CFITSIO is used only at open time, to find the HDU, its header, BITPIX/NAXIS, BSCALE,
//! BZERO, BLANK and the byte offset of its data. Uncompressed images in a plain (not gzipped)
//! file are then memory-mapped and decoded window by window straight from the big-endian
//! bytes. Tile-compressed images (`ZIMAGE = T`) and gzipped files are decompressed by CFITSIO
//! into memory at open (as f32 when that is exact, else f64), after checking the size against
//! [`available_memory`](crate::io::available_memory).
//!
//! This is also the crate's one reader of FITS headers through CFITSIO: [`FitsSource::open`]
//! and [`Wcs::from_fits`] (defined here, so that `wcs` only parses header text and does not
//! depend on `io`) both open the file and reach the HDU's header through the same functions,
//! after [`check_hdu_headers`](header_check::check_hdu_headers).
//!
//! The parts: `cfitsio` (the CFITSIO calls: an HDU opened, its header text, keywords and
//! pixels; [`Wcs::from_fits`]), `image_hdu` (an image HDU's size, header and scaling, and its
//! pixels mapped or decompressed) and `header_check` (the headers walked before CFITSIO reads
//! them).

mod cfitsio;
mod header_check;
mod image_hdu;

use std::ffi::c_int;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use fitsio::sys;
use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::io::decode::{self, ByteImage};
use crate::io::sample::StoredType;
use crate::io::ImageSource;
use crate::wcs::distortion::lookup::TableSources;
use crate::wcs::header::Header;
use crate::wcs::Wcs;
use cfitsio::open_hdu;
use image_hdu::{decompress_data, map_data, Encoding, ImageHdu};

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
        let (mut file, hdu_type) = open_hdu(path, hdu, Error::InvalidArgument)?;
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
        // SAFETY: `file` owns a valid open fitsfile, positioned on image HDU `hdu`, until it
        // drops at the end of this function; `raw` is used only before then.
        let raw = unsafe { file.as_raw() };
        // SAFETY: `raw` is valid and on the image HDU (above).
        let image = unsafe { ImageHdu::read(raw, &p, hdu)? };
        // SAFETY: as above.
        let encoding = unsafe { Encoding::read(raw, &image, &p, hdu)? };
        let count = image
            .shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .ok_or_else(|| Error::Fits(format!("{p}: HDU {hdu}: image size overflows")))?;
        let plain_file = !image.compressed && starts_with_simple(path);
        // SAFETY: as above.
        let (data, big_endian) = unsafe {
            if plain_file {
                map_data(raw, path, &p, hdu, &image, &encoding, count)?
            } else {
                decompress_data(raw, &p, hdu, &image, &encoding, count)?
            }
        };
        let stored = StoredType {
            sample: encoding.convention.unwrap_or(encoding.raw_sample),
            big_endian,
            scaled: encoding.scaled,
        };
        Ok(FitsSource {
            path: path.to_path_buf(),
            hdu,
            header: image.header,
            shape: image.shape,
            bitpix: image.bitpix,
            bscale: encoding.bscale,
            bzero: encoding.bzero,
            blank: encoding.blank,
            compressed: image.compressed,
            stored,
            data,
        })
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

    /// Parses the primary WCS of the header (`Wcs::from_header_str(self.header_text())`), with
    /// the distortion lookup tables it names read from the file ([`Wcs::from_fits`]).
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
        let header = Header::parse(&self.header)?;
        if TableSources::from_header(&header)?.is_some() {
            // Distortion lookup tables live in other HDUs of the file.
            return Wcs::from_fits(&self.path, self.hdu);
        }
        Wcs::from_header(&header, None)
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

//! Memory-mapped output files ([`MappedOutput`]): `.npy` and FITS images written in place,
//! never held whole in memory, and published atomically.
//!
//! The data go to a temporary sibling `<name>.partial`, created sparse at its final size
//! (after checking that the file system has room for all of it, so that a full disk is an
//! error at creation rather than a `SIGBUS` while writing) and memory-mapped.
//! [`MappedOutput::finish`] converts FITS data to big-endian (in parallel chunks), flushes,
//! and only then moves the file onto its final name, so a crash never leaves a half-written
//! file under the final name and an existing file is replaced only by a complete one.
//! Dropping a `MappedOutput` without `finish` deletes the partial file. From creation to
//! publication (or removal) the output is owned by one run: creating it takes its
//! [`OutputLock`], so a second writer, in this process or another, is refused at once
//! ([`Error::OutputBusy`]), and a partial file left by a run that died is known to be stale.

use std::fs::{File, OpenOptions};
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::MmapMut;
use ndarray::{ArrayViewMutD, IxDyn};
use rayon::prelude::*;

use super::OutputLock;
use crate::error::{Error, Result};

/// The sample type of an output file.
///
/// ```
/// use reproject::io::OutputType;
/// assert_eq!(OutputType::F32.size(), 4);
/// assert_eq!(OutputType::F64.bitpix(), -64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OutputType {
    /// 32-bit float (`<f4` / BITPIX -32).
    F32,
    /// 64-bit float (`<f8` / BITPIX -64).
    F64,
}

impl OutputType {
    /// Bytes per sample.
    ///
    /// ```
    /// assert_eq!(reproject::io::OutputType::F64.size(), 8);
    /// ```
    pub fn size(self) -> usize {
        match self {
            OutputType::F32 => 4,
            OutputType::F64 => 8,
        }
    }

    /// The FITS BITPIX.
    ///
    /// ```
    /// assert_eq!(reproject::io::OutputType::F32.bitpix(), -32);
    /// ```
    pub fn bitpix(self) -> i32 {
        match self {
            OutputType::F32 => -32,
            OutputType::F64 => -64,
        }
    }

    /// The native-endian numpy dtype string (`'<f4'` on little-endian machines).
    ///
    /// ```
    /// # if cfg!(target_endian = "little") {
    /// assert_eq!(reproject::io::OutputType::F64.npy_descr(), "<f8");
    /// # }
    /// ```
    pub fn npy_descr(self) -> &'static str {
        match (self, cfg!(target_endian = "big")) {
            (OutputType::F32, false) => "<f4",
            (OutputType::F64, false) => "<f8",
            (OutputType::F32, true) => ">f4",
            (OutputType::F64, true) => ">f8",
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A sample type that output data can be viewed as: `f32` or `f64`.
///
/// ```
/// use reproject::io::{OutputElement, OutputType};
/// assert_eq!(<f32 as OutputElement>::TYPE, OutputType::F32);
/// ```
pub trait OutputElement: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The matching [`OutputType`].
    const TYPE: OutputType;
    /// Converts native-endian values to big-endian in place.
    ///
    /// ```
    /// use reproject::io::OutputElement;
    /// let mut values = [1.5f64, 0.0];
    /// f64::to_big_endian(&mut values);
    /// assert_eq!(values[0].to_bits(), 1.5f64.to_bits().to_be());
    /// assert_eq!(values[1], 0.0); // zero is the same in both byte orders
    /// ```
    fn to_big_endian(values: &mut [Self]);
}

impl OutputElement for f32 {
    const TYPE: OutputType = OutputType::F32;
    fn to_big_endian(values: &mut [Self]) {
        for v in values {
            let (bits, be) = (v.to_bits(), v.to_bits().to_be());
            // Leave unchanged samples (zeros) untouched, so never-written pages of the sparse
            // file are not dirtied.
            if be != bits {
                *v = f32::from_bits(be);
            }
        }
    }
}

impl OutputElement for f64 {
    const TYPE: OutputType = OutputType::F64;
    fn to_big_endian(values: &mut [Self]) {
        for v in values {
            let (bits, be) = (v.to_bits(), v.to_bits().to_be());
            // Leave unchanged samples (zeros) untouched, so never-written pages of the sparse
            // file are not dirtied.
            if be != bits {
                *v = f64::from_bits(be);
            }
        }
    }
}

/// The file format of a [`MappedOutput`].
///
/// ```
/// use reproject::io::{MappedOutput, OutputFormat, OutputType};
/// let dir = std::env::temp_dir().join(format!("output_format_doc_{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let npy = MappedOutput::create_npy(dir.join("a.npy"), &[2], OutputType::F32, true)?;
/// let fits = MappedOutput::create_fits(dir.join("a.fits"), &[2], OutputType::F32, "", true)?;
/// assert_eq!((npy.format(), fits.format()), (OutputFormat::Npy, OutputFormat::Fits));
/// let (npy, fits) = (npy.finish()?, fits.finish()?);
/// assert!(std::fs::read(npy)?.starts_with(b"\x93NUMPY"));
/// assert!(std::fs::read(fits)?.starts_with(b"SIMPLE  ="));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OutputFormat {
    /// A `.npy` file (version 1.0, or 2.0 for very long headers), C order, native byte order.
    Npy,
    /// A FITS file: the image in the primary HDU, optionally a footprint image extension.
    Fits,
}

/// One data area of the file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Area {
    dtype: OutputType,
    bytes: Range<usize>,
}

/// An output image file, memory-mapped for writing, published by [`finish`](Self::finish).
///
/// The data start zeroed (the file is created sparse). Views are native-endian; FITS data are
/// converted to big-endian by `finish`.
///
/// ```
/// use reproject::io::{MappedOutput, OutputType, NpySource, ImageSource};
/// let dir = std::env::temp_dir().join(format!("mapped_doc_{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("out.npy");
/// let mut out = MappedOutput::create_npy(&path, &[2, 3], OutputType::F32, true)?;
/// out.data_mut::<f32>()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
/// assert_eq!(out.finish()?, path);
/// let src = NpySource::open(&path)?;
/// let mut row = [0.0; 3];
/// src.read_window(0, 1..2, 0..3, &mut row)?;
/// assert_eq!(row, [3.0, 4.0, 5.0]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug)]
pub struct MappedOutput {
    path: PathBuf,
    partial: PathBuf,
    format: OutputFormat,
    overwrite: bool,
    shape: Vec<usize>,
    data: Area,
    footprint: Option<Area>,
    map: Option<MmapMut>,
    file: Option<File>,
    finished: bool,
    /// This run's ownership of the output, released after publishing (or removing) it.
    lock: Option<OutputLock>,
}

/// FITS block size.
const BLOCK: usize = 2880;
/// FITS card length.
const CARD: usize = 80;

fn pad_to(n: usize, block: usize) -> usize {
    n.div_ceil(block) * block
}

impl MappedOutput {
    /// Creates `<path>.partial` holding a `.npy` array of `shape` and `dtype` (native byte
    /// order, C order, data 64-byte aligned), mapped for writing.
    ///
    /// Fails with [`Error::Io`] if `path` exists and `overwrite` is false, or if the partial
    /// file already exists (another writer, or a crashed run) and `overwrite` is false; with
    /// `overwrite`, a stale partial file is deleted and recreated. An existing `path` is never
    /// touched before [`finish`](Self::finish).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("create_npy_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[4, 5], OutputType::F64, true)?;
    /// assert_eq!(out.shape(), &[4, 5]);
    /// drop(out); // not finished: nothing is left behind
    /// assert!(!path.exists());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn create_npy(
        path: impl AsRef<Path>,
        shape: &[usize],
        dtype: OutputType,
        overwrite: bool,
    ) -> Result<MappedOutput> {
        let nbytes = data_bytes(shape, dtype)?;
        let header = npy_header(shape, dtype);
        let data = Area {
            dtype,
            bytes: header.len()..header.len() + nbytes,
        };
        let total = header.len() + nbytes;
        Self::create(
            path.as_ref(),
            OutputFormat::Npy,
            shape,
            overwrite,
            total,
            &[(0, header)],
            data,
            None,
        )
    }

    /// Creates `<path>.partial` holding a FITS file whose primary HDU is an image of `shape`
    /// (C order: NAXIS1 is the last axis) and `dtype`, mapped for writing.
    ///
    /// The primary header is `SIMPLE`, `BITPIX`, `NAXIS`, `NAXISn`, `EXTEND`, then the cards of
    /// `header_cards` (newline-separated cards, or concatenated 80-character cards such as
    /// [`FitsSource::header_text`](crate::io::FitsSource::header_text)) minus the structural
    /// ones (`SIMPLE XTENSION BITPIX NAXIS NAXISn EXTEND PCOUNT GCOUNT BSCALE BZERO BLANK
    /// CHECKSUM DATASUM END`, the tile-compression `Z*` keywords and `TFIELDS TTYPEn TFORMn
    /// THEAP`), then `END`, padded to 2880 bytes. Cards must be printable ASCII of at most 80
    /// characters ([`Error::InvalidArgument`] otherwise). Overwrite rules as in
    /// [`create_npy`](Self::create_npy).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("create_fits_doc_{}.fits", std::process::id()));
    /// let cards = "CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nBITPIX  = 16";
    /// let mut out = MappedOutput::create_fits(&path, &[3, 4], OutputType::F32, cards, true)?;
    /// out.data_mut::<f32>()?.fill(1.5);
    /// out.finish()?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), 2 * 2880);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn create_fits(
        path: impl AsRef<Path>,
        shape: &[usize],
        dtype: OutputType,
        header_cards: &str,
        overwrite: bool,
    ) -> Result<MappedOutput> {
        Self::create_fits_impl(path.as_ref(), shape, dtype, header_cards, None, overwrite)
    }

    /// Like [`create_fits`](Self::create_fits), followed by an image extension
    /// `EXTNAME = 'FOOTPRINT'` of the same shape with sample type `footprint_dtype` and the same
    /// cards (so it carries the same WCS). Write it through
    /// [`footprint_mut`](Self::footprint_mut) or
    /// [`data_and_footprint_mut`](Self::data_and_footprint_mut).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("create_fp_doc_{}.fits", std::process::id()));
    /// let mut out = MappedOutput::create_fits_with_footprint(
    ///     &path, &[2, 2], OutputType::F64, "", OutputType::F32, true)?;
    /// let (data, footprint) = out.data_and_footprint_mut::<f64, f32>()?;
    /// data.fill(2.0);
    /// footprint.fill(1.0);
    /// out.finish()?;
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn create_fits_with_footprint(
        path: impl AsRef<Path>,
        shape: &[usize],
        dtype: OutputType,
        header_cards: &str,
        footprint_dtype: OutputType,
        overwrite: bool,
    ) -> Result<MappedOutput> {
        Self::create_fits_impl(
            path.as_ref(),
            shape,
            dtype,
            header_cards,
            Some(footprint_dtype),
            overwrite,
        )
    }

    fn create_fits_impl(
        path: &Path,
        shape: &[usize],
        dtype: OutputType,
        header_cards: &str,
        footprint: Option<OutputType>,
        overwrite: bool,
    ) -> Result<MappedOutput> {
        if shape.is_empty() || shape.len() > 999 {
            return Err(Error::InvalidArgument(format!(
                "a FITS image needs 1 to 999 axes, got shape {shape:?}"
            )));
        }
        let user = user_cards(header_cards)?;
        let nbytes = data_bytes(shape, dtype)?;
        let mut head = Vec::new();
        head.push(card_value("SIMPLE", "T"));
        push_image_cards(&mut head, shape, dtype);
        head.push(card_value("EXTEND", "T"));
        head.extend(user.iter().cloned());
        let primary = finish_header(head);
        let data_start = primary.len();
        let data_end = data_start + nbytes;
        let mut blocks = vec![(0usize, primary)];
        let mut total = data_start + pad_to(nbytes, BLOCK);
        let fp_area = match footprint {
            None => None,
            Some(fp) => {
                let fp_bytes = data_bytes(shape, fp)?;
                let mut head = vec![card_value("XTENSION", "'IMAGE   '")];
                push_image_cards(&mut head, shape, fp);
                head.push(card_value("PCOUNT", "0"));
                head.push(card_value("GCOUNT", "1"));
                head.push(card_value("EXTNAME", "'FOOTPRINT'"));
                head.extend(
                    user.iter()
                        .filter(|c| !matches!(keyword(c), "EXTNAME" | "EXTVER" | "EXTEND"))
                        .cloned(),
                );
                let ext = finish_header(head);
                let ext_start = total;
                let fp_start = ext_start + ext.len();
                total = fp_start + pad_to(fp_bytes, BLOCK);
                blocks.push((ext_start, ext));
                Some(Area {
                    dtype: fp,
                    bytes: fp_start..fp_start + fp_bytes,
                })
            }
        };
        Self::create(
            path,
            OutputFormat::Fits,
            shape,
            overwrite,
            total,
            &blocks,
            Area {
                dtype,
                bytes: data_start..data_end,
            },
            fp_area,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn create(
        path: &Path,
        format: OutputFormat,
        shape: &[usize],
        overwrite: bool,
        total: usize,
        headers: &[(usize, Vec<u8>)],
        data: Area,
        footprint: Option<Area>,
    ) -> Result<MappedOutput> {
        let p = path.display();
        let name = path.file_name().ok_or_else(|| {
            Error::InvalidArgument(format!("output path {p} does not name a file"))
        })?;
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if meta.is_dir() {
                return Err(Error::Io(format!("output path {p} is a directory")));
            }
            if !meta.is_file() && !meta.file_type().is_symlink() {
                // A device, FIFO or socket (e.g. /dev/full): the rename in `finish` would
                // replace the special file itself, never write through it.
                return Err(Error::Io(format!(
                    "output path {p} exists and is not a regular file (a device, FIFO or \
                     socket); refusing to replace it"
                )));
            }
            if !overwrite {
                return Err(Error::OutputExists(format!("output {p} already exists")));
            }
        }
        // From here to `finish` (or the drop), this run alone owns the output.
        let lock = OutputLock::acquire(path)?;
        let mut partial_name = name.to_os_string();
        partial_name.push(".partial");
        let partial = path.with_file_name(partial_name);
        let open = || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&partial)
        };
        let file = match open() {
            Ok(f) => f,
            // No live run owns it (we hold the lock): a run that stopped left it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && overwrite => {
                std::fs::remove_file(&partial)
                    .map_err(|e| Error::Io(format!("{}: {e}", partial.display())))?;
                open().map_err(|e| Error::Io(format!("{}: {e}", partial.display())))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::OutputExists(format!(
                    "{} was left by an earlier write to {p} that stopped before finishing (no \
                     run owns it now); remove it",
                    partial.display()
                )))
            }
            Err(e) => return Err(Error::Io(format!("{}: {e}", partial.display()))),
        };
        // From here on, `out`'s Drop removes the partial file on any error.
        let mut out = MappedOutput {
            path: path.to_path_buf(),
            partial: partial.clone(),
            format,
            overwrite,
            shape: shape.to_vec(),
            data,
            footprint,
            map: None,
            file: None,
            finished: false,
            lock: Some(lock),
        };
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", partial.display()));
        file.set_len(total as u64).map_err(io)?;
        reserve(&file, total as u64).map_err(|e| {
            Error::Io(format!(
                "{}: the {total} bytes of the output do not fit on its disk: {e} (free some \
                 space or choose another output location)",
                partial.display()
            ))
        })?;
        // SAFETY: the file was just created by us (create_new) and is not shared; the map
        // covers exactly its length and lives no longer than `out`.
        let mut map = unsafe { MmapMut::map_mut(&file) }.map_err(io)?;
        for (at, bytes) in headers {
            map[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        out.map = Some(map);
        out.file = Some(file);
        Ok(out)
    }

    /// The final path (where [`finish`](Self::finish) puts the file).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("path_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[1, 1], OutputType::F32, true)?;
    /// assert_eq!(out.path(), path);
    /// assert!(out.partial_path().to_str().unwrap().ends_with(".npy.partial"));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file being written (`<path>.partial`).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("partial_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[1, 1], OutputType::F32, true)?;
    /// assert!(out.partial_path().exists());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    /// The image shape (C order).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("shape_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[2, 7, 9], OutputType::F32, true)?;
    /// assert_eq!(out.shape(), &[2, 7, 9]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The image sample type.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("dtype_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F64, true)?;
    /// assert_eq!(out.dtype(), OutputType::F64);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn dtype(&self) -> OutputType {
        self.data.dtype
    }

    /// The footprint extension's sample type, if one was asked for.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("fpdtype_doc_{}.fits", std::process::id()));
    /// let out = MappedOutput::create_fits(&path, &[2, 2], OutputType::F64, "", true)?;
    /// assert_eq!(out.footprint_dtype(), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn footprint_dtype(&self) -> Option<OutputType> {
        self.footprint.as_ref().map(|a| a.dtype)
    }

    /// The file format.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputFormat, OutputType};
    /// let path = std::env::temp_dir().join(format!("format_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F64, true)?;
    /// assert_eq!(out.format(), OutputFormat::Npy);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn format(&self) -> OutputFormat {
        self.format
    }

    /// The image data as a native-endian flat slice (C order). `T` must match
    /// [`dtype`](Self::dtype) ([`Error::InvalidArgument`] otherwise).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("data_mut_doc_{}.npy", std::process::id()));
    /// let mut out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, true)?;
    /// assert!(out.data_mut::<f64>().is_err());
    /// out.data_mut::<f32>()?[3] = 7.0;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn data_mut<T: OutputElement>(&mut self) -> Result<&mut [T]> {
        let area = self.data.clone();
        let map = self.map.as_mut().expect("mapped until finish");
        area_slice(map, &area, "image")
    }

    /// The image data as a mutable ndarray view of [`shape`](Self::shape).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("view_mut_doc_{}.npy", std::process::id()));
    /// let mut out = MappedOutput::create_npy(&path, &[2, 3], OutputType::F64, true)?;
    /// let mut v = out.view_mut::<f64>()?;
    /// v[[1, 2]] = 5.0;
    /// assert_eq!(out.data_mut::<f64>()?[5], 5.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn view_mut<T: OutputElement>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        let shape = self.shape.clone();
        let data = self.data_mut::<T>()?;
        ArrayViewMutD::from_shape(IxDyn(&shape), data)
            .map_err(|e| Error::ShapeMismatch(e.to_string()))
    }

    /// The footprint extension's data (native-endian, C order); [`Error::InvalidArgument`] if
    /// the file has no footprint extension or `T` does not match.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("fp_mut_doc_{}.fits", std::process::id()));
    /// let mut out = MappedOutput::create_fits(&path, &[2, 2], OutputType::F32, "", true)?;
    /// assert!(out.footprint_mut::<f32>().is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn footprint_mut<T: OutputElement>(&mut self) -> Result<&mut [T]> {
        let area = self.footprint.clone().ok_or_else(|| {
            Error::InvalidArgument("this output has no footprint extension".into())
        })?;
        let map = self.map.as_mut().expect("mapped until finish");
        area_slice(map, &area, "footprint")
    }

    /// The image and footprint data at once, to fill both in the same pass.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("both_doc_{}.fits", std::process::id()));
    /// let mut out = MappedOutput::create_fits_with_footprint(
    ///     &path, &[2, 2], OutputType::F32, "", OutputType::F32, true)?;
    /// let (img, fp) = out.data_and_footprint_mut::<f32, f32>()?;
    /// img[0] = f32::NAN;
    /// fp[0] = 0.0;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn data_and_footprint_mut<T: OutputElement, U: OutputElement>(
        &mut self,
    ) -> Result<(&mut [T], &mut [U])> {
        let fp = self.footprint.clone().ok_or_else(|| {
            Error::InvalidArgument("this output has no footprint extension".into())
        })?;
        let data = self.data.clone();
        let map = self.map.as_mut().expect("mapped until finish");
        // The footprint lies after the image data.
        let (head, tail) = map.split_at_mut(fp.bytes.start);
        let fp_local = Area {
            dtype: fp.dtype,
            bytes: 0..fp.bytes.len(),
        };
        Ok((
            area_slice(head, &data, "image")?,
            area_slice(tail, &fp_local, "footprint")?,
        ))
    }

    /// Flushes the written data to the partial file (an optional checkpoint; `finish` flushes
    /// anyway). FITS data are still native-endian at this point.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("flush_doc_{}.npy", std::process::id()));
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, true)?;
    /// out.flush()?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn flush(&self) -> Result<()> {
        if let Some(map) = &self.map {
            map.flush()
                .map_err(|e| Error::Io(format!("{}: {e}", self.partial.display())))?;
        }
        Ok(())
    }

    /// Completes the file: converts FITS data to big-endian (parallel chunks), flushes the map
    /// and the file to disk, then moves `<path>.partial` onto `path` and returns `path`.
    ///
    /// Without `overwrite`, the move fails (and the partial file is removed) if `path` has
    /// appeared in the meantime; with it, an existing file is atomically replaced. On error the
    /// partial file is removed. The output's lock is released once the file is in place.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("finish_doc_{}.fits", std::process::id()));
    /// let mut out = MappedOutput::create_fits(&path, &[8, 8], OutputType::F64, "", true)?;
    /// out.data_mut::<f64>()?.fill(f64::NAN);
    /// let done = out.finish()?;
    /// assert!(done.exists());
    /// # std::fs::remove_file(&done)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn finish(self) -> Result<PathBuf> {
        let mut paths = Self::finish_together(vec![self], Vec::new())?;
        Ok(paths.remove(0))
    }

    /// Completes several outputs of one command (an image, its separate footprint, a preview
    /// written as a [`PendingFile`]) and publishes them together: every file is converted,
    /// flushed and synced first, then each is moved onto its final name; if a move fails, the
    /// files this call already put in place under new names are taken back, so either every
    /// output appears or (but for a failure while replacing files under `overwrite`) none
    /// does. Returns the final paths of `outputs`, then of `files`.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputType, PendingFile};
    /// let dir = std::env::temp_dir().join(format!("together_doc_{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let a = MappedOutput::create_npy(dir.join("a.npy"), &[2, 2], OutputType::F32, true)?;
    /// let note = PendingFile::write(dir.join("a.txt"), b"made by a test", false)?;
    /// std::fs::write(dir.join("a.txt"), b"appeared meanwhile")?;
    /// assert!(MappedOutput::finish_together(vec![a], vec![note]).is_err());
    /// assert!(!dir.join("a.npy").exists()); // not published alone
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn finish_together(
        mut outputs: Vec<MappedOutput>,
        mut files: Vec<PendingFile>,
    ) -> Result<Vec<PathBuf>> {
        for out in &mut outputs {
            out.complete()?;
        }
        let moves: Vec<Publication> = outputs
            .iter()
            .map(MappedOutput::publication)
            .chain(files.iter().map(|f| f.publication.clone()))
            .collect();
        publish(&moves, false)?;
        for out in &mut outputs {
            out.finished = true;
        }
        for file in &mut files {
            file.published = true;
        }
        Ok(moves.into_iter().map(|m| m.path).collect())
    }

    /// Converts FITS data to the file's byte order, then flushes and syncs the file.
    fn complete(&mut self) -> Result<()> {
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", self.partial.display()));
        if let Some(mut map) = self.map.take() {
            if swaps_samples(self.format) {
                let areas: Vec<Area> = std::iter::once(self.data.clone())
                    .chain(self.footprint.clone())
                    .collect();
                for area in &areas {
                    match area.dtype {
                        OutputType::F32 => swap_area::<f32>(&mut map, area)?,
                        OutputType::F64 => swap_area::<f64>(&mut map, area)?,
                    }
                }
            }
            map.flush().map_err(io)?;
        }
        if let Some(file) = self.file.take() {
            file.sync_all().map_err(io)?;
        }
        Ok(())
    }

    fn publication(&self) -> Publication {
        Publication {
            partial: self.partial.clone(),
            path: self.path.clone(),
            overwrite: self.overwrite,
        }
    }
}

/// Whether the samples of a file in `format` are stored in another byte order than this
/// machine's (FITS is big-endian).
fn swaps_samples(format: OutputFormat) -> bool {
    format == OutputFormat::Fits && cfg!(target_endian = "little")
}

/// A small output written whole (a preview image, say) to `<path>.partial` under the
/// output's lock, to be published with others by [`MappedOutput::finish_together`]; dropped
/// unpublished, it is removed.
///
/// ```
/// use reproject::io::{MappedOutput, PendingFile};
/// let path = std::env::temp_dir().join(format!("pending_doc_{}.txt", std::process::id()));
/// let file = PendingFile::write(&path, b"hello", true)?;
/// MappedOutput::finish_together(Vec::new(), vec![file])?;
/// assert_eq!(std::fs::read(&path)?, b"hello");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug)]
pub struct PendingFile {
    publication: Publication,
    published: bool,
    _lock: OutputLock,
}

impl PendingFile {
    /// Writes `bytes` to `<path>.partial` and syncs it; fails if `path` exists and not
    /// `overwrite`, or if another run owns `path`.
    ///
    /// ```
    /// use reproject::io::PendingFile;
    /// # let name = format!("pending_write_doc_{}.txt", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let pending = PendingFile::write(&path, b"preview", false)?;
    /// let partial = path.with_extension("txt.partial");
    /// assert_eq!(std::fs::read(&partial)?, b"preview");
    /// assert!(!path.exists()); // published only by `MappedOutput::finish_together`
    /// assert!(PendingFile::write(&path, b"other", true).is_err()); // this run owns `path`
    /// drop(pending); // unpublished: removed
    /// assert!(!partial.exists());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn write(path: impl AsRef<Path>, bytes: &[u8], overwrite: bool) -> Result<PendingFile> {
        let path = path.as_ref();
        if !overwrite && std::fs::symlink_metadata(path).is_ok() {
            return Err(Error::OutputExists(format!(
                "output {} already exists",
                path.display()
            )));
        }
        let lock = OutputLock::acquire(path)?;
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let pending = PendingFile {
            publication: Publication {
                partial: partial.clone(),
                path: path.to_path_buf(),
                overwrite,
            },
            published: false,
            _lock: lock,
        };
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", partial.display()));
        let mut file = File::create(&partial).map_err(io)?;
        std::io::Write::write_all(&mut file, bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(pending)
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.publication.partial);
        }
    }
}

/// A completed partial file and the name it is published under.
#[derive(Debug, Clone)]
struct Publication {
    partial: PathBuf,
    path: PathBuf,
    overwrite: bool,
}

/// How a publication put its file in place, so that it can be taken back.
enum Placed {
    /// A new name (hard link) beside the partial file.
    Linked,
    /// Renamed onto a name that did not exist (where hard links are unsupported).
    Renamed,
}

/// Moves each completed partial file onto its final name: new names first (hard links, which
/// fail if the name exists, taken back if a later one fails), then replacements (atomic
/// renames), then the partial names of the linked files are removed. With `resuming`, a
/// partial file already moved (gone, or linked to its final name) by an earlier, interrupted
/// publication of the same files counts as published.
fn publish(moves: &[Publication], resuming: bool) -> Result<()> {
    let io = |p: &Path, e: std::io::Error| Error::Io(format!("{}: {e}", p.display()));
    let mut placed: Vec<(&Publication, Placed)> = Vec::new();
    let take_back = |placed: &[(&Publication, Placed)]| {
        for (m, how) in placed {
            let _ = match how {
                Placed::Linked => std::fs::remove_file(&m.path),
                Placed::Renamed => std::fs::rename(&m.path, &m.partial),
            };
        }
    };
    let mut unlink = Vec::new();
    for m in moves.iter().filter(|m| !m.overwrite) {
        if resuming && (already_linked(m) || !m.partial.exists()) {
            unlink.push(m);
            continue;
        }
        match std::fs::hard_link(&m.partial, &m.path) {
            Ok(()) => {
                placed.push((m, Placed::Linked));
                unlink.push(m);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                take_back(&placed);
                return Err(Error::OutputExists(format!(
                    "output {} appeared while it was being written",
                    m.path.display()
                )));
            }
            Err(_) if std::fs::symlink_metadata(&m.path).is_ok() => {
                take_back(&placed);
                return Err(Error::OutputExists(format!(
                    "output {} already exists",
                    m.path.display()
                )));
            }
            Err(_) => match std::fs::rename(&m.partial, &m.path) {
                Ok(()) => placed.push((m, Placed::Renamed)),
                Err(e) => {
                    take_back(&placed);
                    return Err(io(&m.partial, e));
                }
            },
        }
    }
    for m in moves.iter().filter(|m| m.overwrite) {
        if resuming && !m.partial.exists() {
            continue;
        }
        if let Err(e) = std::fs::rename(&m.partial, &m.path) {
            take_back(&placed);
            return Err(io(&m.partial, e));
        }
    }
    for m in unlink {
        match std::fs::remove_file(&m.partial) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&m.partial, e)),
            _ => {}
        }
    }
    for m in moves {
        sync_parent(&m.path);
    }
    Ok(())
}

/// Whether the partial file is already a hard link of its final name.
fn already_linked(m: &Publication) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(&m.partial), std::fs::metadata(&m.path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// Makes a rename in the folder of `path` durable where the platform allows syncing a
/// directory.
fn sync_parent(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

/// Where a suspended [`MappedOutput`] lives and how its file is laid out, so that worker
/// processes can write it ([`SharedOutputMap`]) and its owner can publish it
/// ([`OutputLayout::publish`]). From suspension on, the file holds its samples in the file's
/// own byte order (big-endian for FITS): writers convert what they write
/// ([`SharedOutputMap::file_order`]), so the file is the same whatever was interrupted
/// and redone.
///
/// ```
/// use reproject::io::{MappedOutput, OutputLayout, OutputType};
/// # let name = format!("output_layout_doc_{}.fits", std::process::id());
/// # let path = std::env::temp_dir().join(name);
/// let out = MappedOutput::create_fits(&path, &[4, 4], OutputType::F32, "", false)?;
/// let (layout, lock) = out.suspend()?;
/// let json = serde_json::to_string(&layout).unwrap(); // e.g. for worker processes
/// let back: OutputLayout = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, layout);
/// assert!(!path.exists()); // nothing published yet
/// OutputLayout::publish(&[&back], &[&lock])?;
/// assert!(path.exists());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OutputLayout {
    path: PathBuf,
    partial: PathBuf,
    format: OutputFormat,
    overwrite: bool,
    shape: Vec<usize>,
    data: Area,
    footprint: Option<Area>,
    file_len: u64,
    /// Device and inode of the partial file, so that a file recreated under the same name is
    /// never taken for this one.
    file_id: (u64, u64),
}

impl OutputLayout {
    /// The final path.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_path_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[3, 4], OutputType::F32, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert_eq!(layout.path(), path);
    /// assert!(!path.exists()); // until published
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The partial file being written.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_partial_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[3, 4], OutputType::F32, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert!(layout.partial_path().exists()); // kept for the writers
    /// assert!(layout.partial_path().to_str().unwrap().ends_with(".npy.partial"));
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    /// The image shape.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_shape_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2, 3, 4], OutputType::F32, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert_eq!(layout.shape(), &[2, 3, 4]);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The image sample type.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_dtype_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F64, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert_eq!(layout.dtype(), OutputType::F64);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn dtype(&self) -> OutputType {
        self.data.dtype
    }

    /// The file format.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_format_doc_{}.fits", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// use reproject::io::OutputFormat;
    /// let out = MappedOutput::create_fits(&path, &[2, 2], OutputType::F32, "", false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert_eq!(layout.format(), OutputFormat::Fits);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn format(&self) -> OutputFormat {
        self.format
    }

    /// The footprint's sample type, if the file holds a footprint (FITS extension).
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_fp_dtype_doc_{}.fits", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_fits_with_footprint(
    ///     &path, &[2, 2], OutputType::F64, "", OutputType::F32, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert_eq!(layout.footprint_dtype(), Some(OutputType::F32));
    /// assert_eq!(layout.dtype(), OutputType::F64);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn footprint_dtype(&self) -> Option<OutputType> {
        self.footprint.as_ref().map(|a| a.dtype)
    }

    /// Whether the final file may replace an existing one.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("layout_overwrite_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// assert!(!layout.overwrite()); // as the output was created
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn overwrite(&self) -> bool {
        self.overwrite
    }

    /// Checks that the partial file is the one this layout describes (same file, same size):
    /// an error if it is gone, was recreated, or has another size.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType};
    /// # let name = format!("check_partial_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, false)?;
    /// let (layout, _lock) = out.suspend()?;
    /// layout.check_partial()?; // the file suspended, untouched
    /// std::fs::OpenOptions::new().write(true).open(layout.partial_path())?.set_len(8)?;
    /// assert!(layout.check_partial().is_err()); // resized
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn check_partial(&self) -> Result<()> {
        let meta = std::fs::metadata(&self.partial)
            .map_err(|e| Error::Io(format!("{}: {e}", self.partial.display())))?;
        if file_id(&meta) != self.file_id || meta.len() != self.file_len {
            return Err(Error::Io(format!(
                "{}: not the partial file this job created (it was replaced or resized)",
                self.partial.display()
            )));
        }
        Ok(())
    }

    /// Publishes suspended outputs together, as [`MappedOutput::finish_together`] does, after
    /// checking that each partial file is the one suspended and that `locks` hold each
    /// output. An interrupted earlier call on the same layouts is completed, not repeated:
    /// files it already moved count as published. The files must be complete: every sample
    /// written and converted to file order, and flushed ([`SharedOutputMap::flush`]).
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputLayout, OutputLock, OutputType};
    /// # let name = format!("layout_publish_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F64, false)?;
    /// let (layout, lock) = out.suspend()?;
    /// let other = OutputLock::acquire(&path.with_extension("other"))?;
    /// assert!(OutputLayout::publish(&[&layout], &[&other]).is_err()); // not this output's lock
    /// OutputLayout::publish(&[&layout], &[&lock])?;
    /// assert!(path.exists() && !layout.partial_path().exists());
    /// OutputLayout::publish(&[&layout], &[&lock])?; // a repeated call finds it done
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn publish(layouts: &[&OutputLayout], locks: &[&OutputLock]) -> Result<()> {
        let mut moves = Vec::new();
        for layout in layouts {
            let owned = locks
                .iter()
                .any(|l| l.is_exclusive() && l.path() == OutputLock::lock_path(&layout.path));
            if !owned {
                return Err(Error::InvalidArgument(format!(
                    "publishing {} needs its exclusive lock",
                    layout.path.display()
                )));
            }
            if layout.partial.exists() {
                layout.check_partial()?;
                let file = File::open(&layout.partial)
                    .map_err(|e| Error::Io(format!("{}: {e}", layout.partial.display())))?;
                file.sync_all()
                    .map_err(|e| Error::Io(format!("{}: {e}", layout.partial.display())))?;
            }
            moves.push(Publication {
                partial: layout.partial.clone(),
                path: layout.path.clone(),
                overwrite: layout.overwrite,
            });
        }
        publish(&moves, true)
    }
}

/// Device and inode numbers (zero where the platform has none).
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

impl MappedOutput {
    /// Converts what was written to the file's byte order, flushes and closes the output
    /// without publishing it, and hands over its lock: the partial file stays, to be written
    /// by worker processes through [`SharedOutputMap`] and published with
    /// [`OutputLayout::publish`] by whoever holds the lock. Nothing appears under the final
    /// path.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputLayout, OutputType, SharedOutputMap};
    /// let path = std::env::temp_dir().join(format!("suspend_doc_{}.fits", std::process::id()));
    /// let out = MappedOutput::create_fits(&path, &[4, 4], OutputType::F32, "", true)?;
    /// let (layout, lock) = out.suspend()?;
    /// let mut map = SharedOutputMap::open(&layout, &lock)?;
    /// let to_file_order = map.file_order::<f32>();
    /// let (data, _) = map.data_and_footprint_mut::<f32>()?;
    /// data.fill(1.5);
    /// to_file_order(data);
    /// map.flush()?;
    /// drop(map);
    /// OutputLayout::publish(&[&layout], &[&lock])?;
    /// assert!(path.exists());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn suspend(mut self) -> Result<(OutputLayout, OutputLock)> {
        self.complete()?;
        let meta = std::fs::metadata(&self.partial)
            .map_err(|e| Error::Io(format!("{}: {e}", self.partial.display())))?;
        let lock = self.lock.take().ok_or_else(|| {
            Error::InvalidArgument(format!("{} has no lock", self.path.display()))
        })?;
        // Keep the partial file: `Drop` removes it only while unfinished.
        self.finished = true;
        Ok((
            OutputLayout {
                path: self.path.clone(),
                partial: self.partial.clone(),
                format: self.format,
                overwrite: self.overwrite,
                shape: self.shape.clone(),
                data: self.data.clone(),
                footprint: self.footprint.clone(),
                file_len: meta.len(),
                file_id: file_id(&meta),
            },
            lock,
        ))
    }
}

/// A writable mapping of a suspended output's partial file, for one worker process among
/// several: each writes its own blocks (disjoint regions), converts them to the file's byte
/// order and flushes them.
///
/// ```
/// # use reproject::io::{MappedOutput, OutputLayout, OutputType, SharedOutputMap};
/// # let name = format!("shared_map_doc_{}.npy", std::process::id());
/// # let path = std::env::temp_dir().join(name);
/// let out = MappedOutput::create_npy(&path, &[2, 3], OutputType::F64, false)?;
/// let (layout, lock) = out.suspend()?; // the owner suspends the output...
/// for row in 0..2 { // ...two writers (processes, say) write one row each...
///     let mut map = SharedOutputMap::open(&layout, &lock)?;
///     let to_file_order = map.file_order::<f64>();
///     let mine = &mut map.data_and_footprint_mut::<f64>()?.0[3 * row..3 * row + 3];
///     mine.fill(row as f64 + 1.0);
///     to_file_order(mine);
///     map.flush()?;
/// }
/// OutputLayout::publish(&[&layout], &[&lock])?; // ...and the owner publishes it
/// let bytes = std::fs::read(&path)?; // ends with the last row's last sample
/// assert_eq!(bytes[bytes.len() - 8..], 2.0f64.to_ne_bytes());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), reproject::Error>(())
/// ```
pub struct SharedOutputMap {
    layout: OutputLayout,
    map: MmapMut,
}

impl SharedOutputMap {
    /// Maps the partial file of `layout` for writing. `lock` shows that this process may: the
    /// owner's lock, one inherited from it, or a shared one of an external worker.
    ///
    /// ```
    /// use reproject::io::{MappedOutput, OutputLock, OutputType, SharedOutputMap};
    /// # let name = format!("shared_open_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, false)?;
    /// let (layout, lock) = out.suspend()?;
    /// let other = OutputLock::acquire(&path.with_extension("other"))?;
    /// assert!(SharedOutputMap::open(&layout, &other).is_err()); // not this output's lock
    /// let mut map = SharedOutputMap::open(&layout, &lock)?;
    /// assert_eq!(map.data_and_footprint_mut::<f32>()?.0.len(), 4);
    /// # drop(map);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn open(layout: &OutputLayout, lock: &OutputLock) -> Result<SharedOutputMap> {
        if lock.path() != OutputLock::lock_path(&layout.path) {
            return Err(Error::InvalidArgument(format!(
                "{} is not the lock of {}",
                lock.path().display(),
                layout.path.display()
            )));
        }
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", layout.partial.display()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&layout.partial)
            .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.len() != layout.file_len || file_id(&meta) != layout.file_id {
            return Err(Error::Io(format!(
                "{}: not the partial file this job created (it was replaced or resized)",
                layout.partial.display()
            )));
        }
        // SAFETY: the lock shows this process belongs to the job that owns the file; the
        // job's writers write disjoint blocks of it.
        let map = unsafe { MmapMut::map_mut(&file) }.map_err(io)?;
        Ok(SharedOutputMap {
            layout: layout.clone(),
            map,
        })
    }

    /// The image data and the footprint (if any). Values written here must be converted with
    /// [`file_order`](Self::file_order) before they count as written. Both are of the one
    /// sample type `T`, as jobs write them: a file whose footprint has another type
    /// ([`MappedOutput::create_fits_with_footprint`]) is refused here, whichever `T`.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType, SharedOutputMap};
    /// # let name = format!("shared_both_doc_{}.fits", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_fits_with_footprint(
    ///     &path, &[2, 3], OutputType::F32, "", OutputType::F32, false)?;
    /// let (layout, lock) = out.suspend()?;
    /// let mut map = SharedOutputMap::open(&layout, &lock)?;
    /// assert!(map.data_and_footprint_mut::<f64>().is_err()); // not the file's sample type
    /// let (data, footprint) = map.data_and_footprint_mut::<f32>()?;
    /// assert_eq!((data.len(), footprint.map(|f| f.len())), (6, Some(6)));
    /// # drop(map);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn data_and_footprint_mut<T: OutputElement>(
        &mut self,
    ) -> Result<(&mut [T], Option<&mut [T]>)> {
        let (data, footprint) = (self.layout.data.clone(), self.layout.footprint.clone());
        match footprint {
            None => Ok((area_slice(&mut self.map, &data, "image")?, None)),
            Some(fp) => {
                // The footprint area follows the data area.
                let (head, tail) = self.map.split_at_mut(fp.bytes.start);
                let shifted = Area {
                    dtype: fp.dtype,
                    bytes: 0..fp.bytes.len(),
                };
                Ok((
                    area_slice(head, &data, "image")?,
                    Some(area_slice(tail, &shifted, "footprint")?),
                ))
            }
        }
    }

    /// The conversion of freshly written native values to the file's byte order (big-endian
    /// for FITS; nothing for `.npy`).
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType, SharedOutputMap};
    /// # let name = format!("shared_order_doc_{}.fits", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_fits(&path, &[1, 2], OutputType::F32, "", false)?;
    /// let (layout, lock) = out.suspend()?;
    /// let map = SharedOutputMap::open(&layout, &lock)?;
    /// let mut values = [1.0f32, 0.0];
    /// map.file_order::<f32>()(&mut values);
    /// assert_eq!(values[0].to_bits(), 1.0f32.to_bits().to_be()); // FITS: big-endian
    /// assert_eq!(values[1], 0.0);
    /// # drop(map);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn file_order<T: OutputElement>(&self) -> fn(&mut [T]) {
        if swaps_samples(self.layout.format) {
            T::to_big_endian
        } else {
            |_| {}
        }
    }

    /// Writes everything to the file and waits until it is on disk.
    ///
    /// ```
    /// # use reproject::io::{MappedOutput, OutputType, SharedOutputMap};
    /// # let name = format!("shared_flush_doc_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// let out = MappedOutput::create_npy(&path, &[2], OutputType::F64, false)?;
    /// let (layout, lock) = out.suspend()?;
    /// let mut map = SharedOutputMap::open(&layout, &lock)?;
    /// map.data_and_footprint_mut::<f64>()?.0[1] = 2.5; // `.npy`: already in file order
    /// map.flush()?;
    /// let bytes = std::fs::read(layout.partial_path())?;
    /// assert_eq!(bytes[bytes.len() - 8..], 2.5f64.to_ne_bytes());
    /// # drop(map);
    /// # std::fs::remove_file(layout.partial_path())?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.map
            .flush()
            .map_err(|e| Error::Io(format!("{}: {e}", self.layout.partial.display())))
    }
}

impl Drop for MappedOutput {
    fn drop(&mut self) {
        if !self.finished {
            self.map.take();
            self.file.take();
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// Checks that the file system of a new (sparse) output file has room for all of it, so
/// that a full disk is an error at creation rather than a `SIGBUS` when a page of the memory
/// map cannot be written back. The file stays sparse (blocks are allocated as pages are
/// written), so a disk filled by another writer during the run is not covered.
#[cfg(unix)]
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: `stat` is a plain output struct that the call fills; the descriptor is
    // borrowed from `file`, which outlives the call.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut stat) } != 0 {
        return Ok(()); // unknown: let the writes decide
    }
    let free = (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64);
    // Root may use the reserved blocks too, but an output should not.
    if free < len {
        return Err(std::io::Error::other(format!(
            "no space left on device: {free} bytes free"
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn reserve(_file: &File, _len: u64) -> std::io::Result<()> {
    Ok(())
}

/// The typed slice of an area of the map.
fn area_slice<'m, T: OutputElement>(
    map: &'m mut [u8],
    area: &Area,
    what: &str,
) -> Result<&'m mut [T]> {
    if T::TYPE != area.dtype {
        return Err(Error::InvalidArgument(format!(
            "the {what} holds {:?} samples, not {:?}",
            area.dtype,
            T::TYPE
        )));
    }
    let bytes = &mut map[area.bytes.clone()];
    // SAFETY: the area starts at a multiple of 64 (npy) or 2880 (FITS) bytes from the
    // page-aligned start of the map, so it is aligned for f32/f64; its length is a whole number
    // of samples; every bit pattern is a valid f32/f64; the borrow of `map` is carried over.
    let (pre, mid, post) = unsafe { bytes.align_to_mut::<T>() };
    if !pre.is_empty() || !post.is_empty() {
        return Err(Error::Io(format!("the {what} data are not aligned")));
    }
    Ok(mid)
}

/// Converts an area to big-endian in parallel chunks.
fn swap_area<T: OutputElement>(map: &mut MmapMut, area: &Area) -> Result<()> {
    let data = area_slice::<T>(map, area, "image")?;
    data.par_chunks_mut(1 << 16).for_each(T::to_big_endian);
    Ok(())
}

/// Data size in bytes, with overflow checks.
fn data_bytes(shape: &[usize], dtype: OutputType) -> Result<usize> {
    shape
        .iter()
        .try_fold(dtype.size(), |a, &b| a.checked_mul(b))
        .filter(|&n| n <= isize::MAX as usize / 2)
        .ok_or_else(|| Error::InvalidArgument(format!("output shape {shape:?} is too large")))
}

/// A `.npy` header (magic, version, length, dict, padding) whose length is a multiple of 64.
fn npy_header(shape: &[usize], dtype: OutputType) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    let shape_txt = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_txt}, }}",
        dtype.npy_descr()
    );
    let (version, prefix) = if dict.len() + 11 < 65536 {
        (1u8, 10usize)
    } else {
        (2u8, 12usize)
    };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - prefix;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    out.push(version);
    out.push(0);
    if version == 1 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// A fixed-format card `KEYWORD = value` (value right-justified to column 30).
fn card_value(key: &str, value: &str) -> String {
    let s = if value.starts_with('\'') {
        format!("{key:<8}= {value}")
    } else {
        format!("{key:<8}= {value:>20}")
    };
    format!("{s:<80}")
}

fn push_image_cards(head: &mut Vec<String>, shape: &[usize], dtype: OutputType) {
    head.push(card_value("BITPIX", &dtype.bitpix().to_string()));
    head.push(card_value("NAXIS", &shape.len().to_string()));
    for (i, n) in shape.iter().rev().enumerate() {
        head.push(card_value(&format!("NAXIS{}", i + 1), &n.to_string()));
    }
}

/// Joins cards, appends END and pads with blanks to a multiple of 2880 bytes.
fn finish_header(mut cards: Vec<String>) -> Vec<u8> {
    cards.push(format!("{:<80}", "END"));
    let mut out: Vec<u8> = cards.concat().into_bytes();
    out.resize(pad_to(out.len(), BLOCK), b' ');
    out
}

/// The keyword of a card (first 8 characters, trailing blanks removed).
fn keyword(card: &str) -> &str {
    card[..card.len().min(8)].trim_end()
}

/// Whether a keyword is structural (written by us, or meaningless for the new data).
fn is_structural(key: &str) -> bool {
    let indexed = |prefix: &str| {
        key.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
    };
    matches!(
        key,
        "SIMPLE"
            | "XTENSION"
            | "BITPIX"
            | "NAXIS"
            | "EXTEND"
            | "PCOUNT"
            | "GCOUNT"
            | "BSCALE"
            | "BZERO"
            | "BLANK"
            | "CHECKSUM"
            | "DATASUM"
            | "END"
            | "ZIMAGE"
            | "ZSIMPLE"
            | "ZTENSION"
            | "ZBITPIX"
            | "ZNAXIS"
            | "ZEXTEND"
            | "ZCMPTYPE"
            | "ZQUANTIZ"
            | "ZDITHER0"
            | "ZBLANK"
            | "ZSCALE"
            | "ZZERO"
            | "ZPCOUNT"
            | "ZGCOUNT"
            | "ZHECKSUM"
            | "ZDATASUM"
            | "TFIELDS"
            | "THEAP"
    ) || indexed("NAXIS")
        || indexed("ZNAXIS")
        || indexed("ZTILE")
        || indexed("ZNAME")
        || indexed("ZVAL")
        || indexed("TTYPE")
        || indexed("TFORM")
}

/// Splits header text into 80-character cards, dropping structural ones; stops at END.
fn user_cards(text: &str) -> Result<Vec<String>> {
    let raw: Vec<&str> = if text.contains('\n') {
        text.split('\n').map(|l| l.trim_end_matches('\r')).collect()
    } else if text.len() > CARD && text.len().is_multiple_of(CARD) && text.is_ascii() {
        (0..text.len() / CARD)
            .map(|i| &text[i * CARD..(i + 1) * CARD])
            .collect()
    } else {
        vec![text]
    };
    let mut cards = Vec::new();
    for (i, card) in raw.into_iter().enumerate() {
        if card.trim().is_empty() {
            continue;
        }
        if !card.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
            return Err(Error::InvalidArgument(format!(
                "header card {}: only printable ASCII is allowed: {card:?}",
                i + 1
            )));
        }
        if card.len() > CARD {
            return Err(Error::InvalidArgument(format!(
                "header card {} is {} characters long, more than 80: {card:?}",
                i + 1,
                card.len()
            )));
        }
        let key = keyword(card);
        if key == "END" {
            break;
        }
        if is_structural(key) {
            continue;
        }
        cards.push(format!("{card:<80}"));
    }
    Ok(cards)
}

/// Memory available to this process in bytes: `MemAvailable` from `/proc/meminfo`, lowered to
/// the room left under a cgroup v2 memory limit when one is set (`memory.max` minus
/// `memory.current`, not counting inactive page cache). `None` where unknown
/// (non-Linux systems).
///
/// ```
/// if let Some(bytes) = reproject::io::available_memory() {
///     assert!(bytes > 0);
/// }
/// ```
pub fn available_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kb: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        let mut avail = kb.saturating_mul(1024);
        let read = |f: &str| -> Option<u64> {
            std::fs::read_to_string(Path::new("/sys/fs/cgroup").join(f))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        if let (Some(max), Some(current)) = (read("memory.max"), read("memory.current")) {
            // Page cache that can be dropped does not count as used (as `docker stats`).
            let inactive_file = std::fs::read_to_string("/sys/fs/cgroup/memory.stat")
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("inactive_file "))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                })
                .unwrap_or(0);
            avail = avail.min(max.saturating_sub(current.saturating_sub(inactive_file)));
        }
        Some(avail)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

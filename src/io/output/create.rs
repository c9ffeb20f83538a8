//! Creating a [`MappedOutput`]: the `.npy` or FITS headers, the sparse partial file (its
//! room on disk checked), the output's lock and the memory map.

use std::fs::OpenOptions;
use std::path::Path;

use memmap2::MmapMut;

use super::header::{
    card_value, finish_header, keyword, npy_header, pad_to, push_image_cards, user_cards, BLOCK,
};
use super::system::reserve;
use super::{Area, MappedOutput, OutputFormat, OutputType};
use crate::error::{Error, Result};
use crate::io::OutputLock;

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
    /// let path =
    ///     std::env::temp_dir().join(format!("create_fits_doc_{}.fits", std::process::id()));
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
}

/// Data size in bytes, with overflow checks.
fn data_bytes(shape: &[usize], dtype: OutputType) -> Result<usize> {
    shape
        .iter()
        .try_fold(dtype.size(), |a, &b| a.checked_mul(b))
        .filter(|&n| n <= isize::MAX as usize / 2)
        .ok_or_else(|| Error::InvalidArgument(format!("output shape {shape:?} is too large")))
}

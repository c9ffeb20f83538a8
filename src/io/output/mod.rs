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

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::MmapMut;
use ndarray::{ArrayViewMutD, IxDyn};
use rayon::prelude::*;

use super::OutputLock;
use crate::error::{Error, Result};

mod create;
mod element;
mod header;
mod layout;
mod publish;
mod shared_map;
mod system;

pub use element::{OutputElement, OutputFormat, OutputType};
pub use layout::OutputLayout;
pub use publish::PendingFile;
pub use shared_map::SharedOutputMap;
pub use system::available_memory;

use layout::file_id;
use publish::{publish, Publication};

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

impl MappedOutput {
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

impl Drop for MappedOutput {
    fn drop(&mut self) {
        if !self.finished {
            self.map.take();
            self.file.take();
            let _ = std::fs::remove_file(&self.partial);
        }
    }
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
    crate::pools::on_all_cores(|| data.par_chunks_mut(1 << 16).for_each(T::to_big_endian))
}

//! [`SharedOutputMap`]: a suspended output's partial file mapped for writing by one of
//! several worker processes.

use std::fs::OpenOptions;

use memmap2::MmapMut;

use super::layout::file_id;
#[cfg(doc)]
use super::MappedOutput;
use super::{area_slice, swaps_samples, Area, OutputElement, OutputLayout};
use crate::error::{Error, Result};
use crate::io::OutputLock;

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

//! [`OutputLayout`]: where a suspended output's partial file lives and how it is laid out,
//! for the worker processes that write it and the owner that publishes it.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::publish::{publish, Publication};
use super::{Area, OutputFormat, OutputType};
#[cfg(doc)]
use super::{MappedOutput, SharedOutputMap};
use crate::error::{Error, Result};
use crate::io::OutputLock;

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
    pub(super) path: PathBuf,
    pub(super) partial: PathBuf,
    pub(super) format: OutputFormat,
    pub(super) overwrite: bool,
    pub(super) shape: Vec<usize>,
    pub(super) data: Area,
    pub(super) footprint: Option<Area>,
    pub(super) file_len: u64,
    /// Device and inode of the partial file, so that a file recreated under the same name is
    /// never taken for this one.
    pub(super) file_id: (u64, u64),
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
pub(super) fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
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

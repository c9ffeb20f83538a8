//! Publication: moving completed partial files onto their final names all together (or none),
//! and [`PendingFile`], a small output written whole to be published with the others.

use std::fs::File;
use std::path::{Path, PathBuf};

#[cfg(doc)]
use super::MappedOutput;
use crate::error::{Error, Result};
use crate::io::OutputLock;

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
    pub(super) publication: Publication,
    pub(super) published: bool,
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
pub(super) struct Publication {
    pub(super) partial: PathBuf,
    pub(super) path: PathBuf,
    pub(super) overwrite: bool,
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
pub(super) fn publish(moves: &[Publication], resuming: bool) -> Result<()> {
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

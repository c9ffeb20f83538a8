//! The progress file of a job: a header naming the boot of the machine that last wrote it,
//! then one state byte per block.
//!
//! A worker marks a block [`WRITTEN`] as soon as its samples are in the shared memory map:
//! a worker killed after that loses nothing, because the kernel keeps the pages of a dead
//! process's shared mapping. Those pages reach the disk later, so a mark is only as good as
//! the boot it was made in: every few seconds (and when it ends) a worker flushes its data
//! to disk and then promotes its marks to [`DURABLE`]. After a restart of the machine, the
//! job's owner turns the marks of the earlier boot that were never made durable back into
//! [`MISSING`] before anything else reads them.

use std::fs::OpenOptions;
use std::path::Path;

use memmap2::MmapMut;

use crate::error::{Error, Result};

/// Not computed (or not known to be on disk).
pub const MISSING: u8 = 0;
/// Computed and in the shared mapping, in the boot named in the header.
pub const WRITTEN: u8 = 1;
/// Computed and flushed to disk.
pub const DURABLE: u8 = 2;

const MAGIC: &[u8] = b"reproject-rs progress 1\n";
/// Magic, boot id (36 characters on Linux), padding.
const HEADER: usize = 64;

/// The identity of the running boot of this machine, if the system says.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.len() <= HEADER - MAGIC.len())
}

fn header(boot: Option<&str>) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend(boot.unwrap_or("").as_bytes());
    h.resize(HEADER, b' ');
    h
}

fn corrupt(path: &Path) -> Error {
    Error::Io(format!("{}: corrupt progress file", path.display()))
}

/// Creates the progress file of `blocks` blocks, all missing.
pub fn create(path: &Path, blocks: usize) -> Result<()> {
    let mut bytes = header(boot_id().as_deref());
    bytes.resize(HEADER + blocks, MISSING);
    std::fs::write(path, bytes).map_err(|e| Error::Io(format!("{}: {e}", path.display())))
}

/// The state of every block, as a reader who does not own the job may trust it: marks of an
/// earlier boot that were not made durable read as missing.
pub fn read(path: &Path, blocks: usize) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    let (head, states) = split(&bytes, blocks).ok_or_else(|| corrupt(path))?;
    let same_boot = head == header(boot_id().as_deref()).as_slice() && boot_id().is_some();
    Ok(states
        .iter()
        .map(|&s| {
            if s == WRITTEN && !same_boot {
                MISSING
            } else {
                s
            }
        })
        .collect())
}

/// For the job's owner: forgets marks of an earlier boot that were never made durable, and
/// names this boot in the header. Returns how many marks were forgotten.
pub fn settle(path: &Path, blocks: usize) -> Result<usize> {
    let states = read(path, blocks)?;
    let bytes = std::fs::read(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    let forgotten = bytes[HEADER..]
        .iter()
        .zip(&states)
        .filter(|(a, b)| a != b)
        .count();
    let mut fresh = header(boot_id().as_deref());
    fresh.extend(states);
    if fresh != bytes {
        let temporary = super::job::sibling(path, "tmp");
        std::fs::write(&temporary, &fresh)
            .and_then(|()| std::fs::rename(&temporary, path))
            .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    }
    Ok(forgotten)
}

fn split(bytes: &[u8], blocks: usize) -> Option<(&[u8], &[u8])> {
    (bytes.len() == HEADER + blocks && bytes.starts_with(MAGIC)).then(|| bytes.split_at(HEADER))
}

/// A worker's writable view of the progress file.
pub struct ProgressMap {
    map: MmapMut,
    path: std::path::PathBuf,
    /// Blocks marked written by this worker and not yet durable.
    pending: Vec<usize>,
    /// Whether marks must be made durable before they are set (no boot identity).
    sync_each: bool,
}

impl ProgressMap {
    /// Maps the progress file of a job of `blocks` blocks. Fails if the file was last
    /// written in another boot (its owner must settle it first).
    pub fn open(path: &Path, blocks: usize) -> Result<ProgressMap> {
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", path.display()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        // SAFETY: the job's workers write only the state bytes of their own blocks.
        let map = unsafe { MmapMut::map_mut(&file) }.map_err(io)?;
        let boot = boot_id();
        let (head, _) = split(&map, blocks).ok_or_else(|| corrupt(path))?;
        if boot.is_some() && head != header(boot.as_deref()).as_slice() {
            return Err(Error::Io(format!(
                "{}: the job was last run before this machine restarted; run the command that \
                 prepared it again (it checks what survived) before starting workers",
                path.display()
            )));
        }
        Ok(ProgressMap {
            map,
            path: path.to_path_buf(),
            pending: Vec::new(),
            sync_each: boot.is_none(),
        })
    }

    /// Whether block `index` still needs computing.
    pub fn is_missing(&self, index: usize) -> bool {
        self.map[HEADER + index] == MISSING
    }

    /// Marks block `index` written. `flush_data` flushes the job's output files to disk; it is
    /// called first where marks cannot be tied to a boot.
    pub fn mark_written(
        &mut self,
        index: usize,
        flush_data: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        if self.sync_each {
            flush_data()?;
            self.map[HEADER + index] = DURABLE;
            return self.flush();
        }
        self.map[HEADER + index] = WRITTEN;
        self.pending.push(index);
        Ok(())
    }

    /// Makes this worker's written marks durable: `flush_data` puts the samples on disk
    /// first, then the marks follow.
    pub fn make_durable(&mut self, flush_data: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        flush_data()?;
        for index in self.pending.drain(..) {
            self.map[HEADER + index] = DURABLE;
        }
        self.flush()
    }

    fn flush(&self) -> Result<()> {
        self.map
            .flush()
            .map_err(|e| Error::Io(format!("{}: {e}", self.path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_of_another_boot_are_forgotten_unless_durable() {
        let dir = std::env::temp_dir().join(format!("progress_boot_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p");
        create(&path, 4).unwrap();
        let mut map = ProgressMap::open(&path, 4).unwrap();
        map.mark_written(1, || Ok(())).unwrap();
        map.mark_written(2, || Ok(())).unwrap();
        map.make_durable(|| Ok(())).unwrap();
        map.mark_written(3, || Ok(())).unwrap();
        drop(map);
        let expected = if boot_id().is_some() {
            [MISSING, DURABLE, DURABLE, WRITTEN]
        } else {
            [MISSING, DURABLE, DURABLE, DURABLE]
        };
        assert_eq!(read(&path, 4).unwrap(), expected);
        // Pretend the file was written in another boot.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[MAGIC.len()..HEADER].fill(b'x');
        std::fs::write(&path, &bytes).unwrap();
        if boot_id().is_some() {
            assert!(ProgressMap::open(&path, 4).is_err());
            assert_eq!(
                read(&path, 4).unwrap(),
                [MISSING, DURABLE, DURABLE, MISSING]
            );
            assert_eq!(settle(&path, 4).unwrap(), 1);
            assert!(ProgressMap::open(&path, 4).is_ok());
            assert_eq!(
                read(&path, 4).unwrap(),
                [MISSING, DURABLE, DURABLE, MISSING]
            );
        }
        assert!(read(&path, 5).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

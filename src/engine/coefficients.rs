//! Storage of the spline coefficients of the input planes (orders ≥ 2): in memory when they
//! fit, otherwise in a memory-mapped scratch file, so that a larger-than-memory input can still
//! be interpolated with a spline.
//!
//! Where they go is decided from their size:
//!
//! * in memory up to `$REPROJECT_RS_SPLINE_MEMORY` bytes when that is set, else up to half of
//!   the memory available ([`available_memory`]);
//! * beyond that, in a file of `$REPROJECT_RS_SCRATCH_DIR` (default: the system's temporary
//!   folder). The file is removed from its folder as soon as it is open, so nothing is left
//!   behind whatever happens, and its blocks are reserved up front (`posix_fallocate`): a disk
//!   without room is an error before any work, never a crash while writing.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use memmap2::MmapMut;
use ndarray::{ArrayView2, ArrayViewMut2};

use crate::error::{Error, Result};
use crate::io::available_memory;

/// `len` zeros, or `None` when they cannot be allocated. Allocated zeroed rather than
/// written: the allocator maps fresh zero pages for a large request, so nothing is written
/// here and the planes' first writes (the input read in bands on every thread) touch the
/// pages in parallel. Writing the zeros on one thread took 54 ms for a 4096² plane on the
/// development machine: about 0.9 s for a 16384² one at that rate.
fn zeroed(len: usize) -> Option<Vec<f64>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<f64>(len).ok()?;
    // SAFETY: the layout's size is not zero (len > 0).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<f64>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: allocated by the global allocator with the layout of `len` f64s (so capacity
    // `len`), all `len` initialised (zero bits are 0.0), owned by nothing else.
    let values = unsafe { Vec::from_raw_parts(ptr, len, len) };
    super::advise_huge_pages(&values);
    Some(values)
}

/// Where a [`PlaneStore`] keeps its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    /// An ordinary allocation.
    Memory,
    /// A memory-mapped scratch file in this folder.
    File(PathBuf),
}

impl Placement {
    /// The placement for `bytes` of coefficients under the environment's settings.
    pub(crate) fn for_size(bytes: u64) -> Result<Placement> {
        let limit = match std::env::var("REPROJECT_RS_SPLINE_MEMORY") {
            Ok(v) => v.trim().parse::<u64>().map_err(|_| {
                Error::InvalidArgument(format!(
                    "REPROJECT_RS_SPLINE_MEMORY must be a number of bytes, got '{v}'"
                ))
            })?,
            Err(_) => available_memory().map_or(u64::MAX, |a| a / 2),
        };
        Ok(if bytes <= limit {
            Placement::Memory
        } else {
            Placement::File(
                std::env::var_os("REPROJECT_RS_SCRATCH_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(std::env::temp_dir),
            )
        })
    }
}

enum Storage {
    Memory(Vec<f64>),
    /// A mapping of a file: a scratch file on disk, or a file in memory (shared stores).
    Mapped(MmapMut),
}

/// `planes` planes of `ny` × `nx` f64 values, zero-initialised, in memory or in a mapped file.
pub(crate) struct PlaneStore {
    storage: Storage,
    shape: (usize, usize),
    planes: usize,
    /// The file other processes may map ([`PlaneStore::new_shareable`]).
    shared: Option<File>,
    /// Whether the values live in a scratch file on disk.
    on_disk: bool,
}

/// The number of values of `planes` planes of `shape`, if their bytes fit the address space.
fn checked_len(planes: usize, shape: (usize, usize)) -> Result<usize> {
    planes
        .checked_mul(shape.0)
        .and_then(|n| n.checked_mul(shape.1))
        .filter(|n| n.checked_mul(8).is_some())
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{planes} planes of {}x{} spline coefficients overflow the address space",
                shape.0, shape.1
            ))
        })
}

impl PlaneStore {
    /// Room for `planes` planes of `shape` (rows, columns) values, placed as `placement` says.
    pub(crate) fn new(planes: usize, shape: (usize, usize), placement: &Placement) -> Result<Self> {
        let len = checked_len(planes, shape)?;
        let storage = match placement {
            Placement::Memory => Storage::Memory(zeroed(len).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "cannot allocate {} bytes for spline coefficients; set \
                     REPROJECT_RS_SPLINE_MEMORY to a smaller number of bytes so that they go \
                     to a scratch file",
                    len * 8
                ))
            })?),
            Placement::File(dir) => {
                Storage::Mapped(map_writable(&scratch_file(dir, len as u64 * 8)?)?)
            }
        };
        Ok(PlaneStore {
            on_disk: matches!(storage, Storage::Mapped(_)),
            storage,
            shape,
            planes,
            shared: None,
        })
    }

    /// Like [`PlaneStore::new`], in a file that other processes can map once it is filled
    /// ([`PlaneStore::shared_file`], [`PlaneStore::from_shared_file`]): a file in memory
    /// (Linux: `memfd_create`) where `placement` says memory, else a scratch file. Its
    /// pages are counted once however many processes map it.
    pub(crate) fn new_shareable(
        planes: usize,
        shape: (usize, usize),
        placement: &Placement,
    ) -> Result<Self> {
        let bytes = checked_len(planes, shape)? as u64 * 8;
        let file = match placement {
            Placement::Memory => memory_file(bytes)?,
            Placement::File(dir) => scratch_file(dir, bytes)?,
        };
        Ok(PlaneStore {
            storage: Storage::Mapped(map_writable(&file)?),
            shape,
            planes,
            on_disk: on_disk(&file),
            shared: Some(file),
        })
    }

    /// The file behind a store made by [`PlaneStore::new_shareable`].
    pub(crate) fn shared_file(&self) -> Option<&File> {
        self.shared.as_ref()
    }

    /// The `planes` planes of `shape` that another process filled in `file` (made by its
    /// [`PlaneStore::new_shareable`]), mapped copy-on-write: they are read where they are,
    /// and nothing done here can change them for the other processes that map them.
    pub(crate) fn from_shared_file(
        file: File,
        planes: usize,
        shape: (usize, usize),
    ) -> Result<Self> {
        let bytes = checked_len(planes, shape)? as u64 * 8;
        let found = file
            .metadata()
            .map_err(|e| Error::Io(format!("shared spline coefficients: {e}")))?
            .len();
        if found != bytes {
            return Err(Error::InvalidArgument(format!(
                "the shared spline coefficients hold {found} bytes, not the {bytes} of \
                 {planes} planes of {}x{}",
                shape.0, shape.1
            )));
        }
        // SAFETY: the process that shared the file filled it before this one started and
        // never writes to it again; the private mapping keeps any write here to this process.
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }
            .map_err(|e| Error::Io(format!("shared spline coefficients: {e}")))?;
        Ok(PlaneStore {
            storage: Storage::Mapped(map),
            shape,
            planes,
            shared: None,
            on_disk: on_disk(&file),
        })
    }

    /// Rows and columns of a plane.
    pub(crate) fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// Whether the values live in a scratch file on disk.
    pub(crate) fn in_file(&self) -> bool {
        self.on_disk
    }

    /// Number of planes.
    pub(crate) fn len(&self) -> usize {
        self.planes
    }

    /// Every plane, back to back.
    pub(crate) fn values(&self) -> &[f64] {
        match &self.storage {
            Storage::Memory(v) => v,
            // SAFETY: the map is page-aligned (so aligned for f64), its length is a multiple
            // of 8 bytes, and every bit pattern is a valid f64.
            Storage::Mapped(m) => unsafe {
                std::slice::from_raw_parts(m.as_ptr().cast::<f64>(), m.len() / 8)
            },
        }
    }

    /// Every plane, back to back, writable.
    pub(crate) fn values_mut(&mut self) -> &mut [f64] {
        match &mut self.storage {
            Storage::Memory(v) => v,
            // SAFETY: as in `values`; the map is borrowed mutably for the slice's lifetime.
            Storage::Mapped(m) => unsafe {
                std::slice::from_raw_parts_mut(m.as_mut_ptr().cast::<f64>(), m.len() / 8)
            },
        }
    }

    /// Plane `p` (panics if `p >= len()`).
    pub(crate) fn plane(&self, p: usize) -> ArrayView2<'_, f64> {
        let n = self.shape.0 * self.shape.1;
        ArrayView2::from_shape(self.shape, &self.values()[p * n..(p + 1) * n])
            .expect("a plane's slice has the plane's length")
    }

    /// Plane `p`, writable (panics if `p >= len()`).
    pub(crate) fn plane_mut(&mut self, p: usize) -> ArrayViewMut2<'_, f64> {
        let (shape, n) = (self.shape, self.shape.0 * self.shape.1);
        ArrayViewMut2::from_shape(shape, &mut self.values_mut()[p * n..(p + 1) * n])
            .expect("a plane's slice has the plane's length")
    }
}

/// A fresh, zero-filled scratch file of `bytes` bytes in `dir`, whose name is removed at once;
/// its blocks are reserved so that writing cannot hit a full disk.
fn scratch_file(dir: &Path, bytes: u64) -> Result<File> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "reproject-rs-spline-{}-{}.scratch",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    let where_ = || {
        format!(
            "the spline coefficients' scratch file ({bytes} bytes) in {}",
            dir.display()
        )
    };
    let file: File = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| Error::Io(format!("{}: {e}", where_())))?;
    // Nothing must be left behind: the open descriptor and the mapping keep the data alive.
    let _ = std::fs::remove_file(&path);
    if bytes > 0 {
        reserve(&file, bytes).map_err(|e| {
            Error::Io(format!(
                "{}: {e}; set REPROJECT_RS_SCRATCH_DIR to a folder on a disk with room",
                where_()
            ))
        })?;
    }
    Ok(file)
}

/// A fresh file of `bytes` zero bytes in memory, with no name (Linux: `memfd_create`). Like
/// the memory an ordinary allocation maps, its pages are found only as they are written.
#[cfg(target_os = "linux")]
fn memory_file(bytes: u64) -> Result<File> {
    use std::os::fd::FromRawFd;
    let failed = |e: std::io::Error| {
        Error::Io(format!(
            "cannot make a memory file of {bytes} bytes for the spline coefficients: {e}"
        ))
    };
    // SAFETY: a plain system call with a NUL-terminated name.
    let fd = unsafe { libc::memfd_create(c"reproject-rs-spline".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(failed(std::io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor, owned by nothing else.
    let file = unsafe { File::from_raw_fd(fd) };
    file.set_len(bytes).map_err(failed)?;
    Ok(file)
}

/// Whether `file` is on disk, not a file in memory made by [`memory_file`].
#[cfg(target_os = "linux")]
fn on_disk(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    let link = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()));
    !link.is_ok_and(|target| target.to_string_lossy().starts_with("/memfd:"))
}

#[cfg(not(target_os = "linux"))]
fn on_disk(_file: &File) -> bool {
    true
}

/// Without memory files: a scratch file in the system's temporary folder.
#[cfg(not(target_os = "linux"))]
fn memory_file(bytes: u64) -> Result<File> {
    scratch_file(&std::env::temp_dir(), bytes)
}

/// A writable mapping of `file`, shared with the file (and with any process that maps it).
fn map_writable(file: &File) -> Result<MmapMut> {
    // SAFETY: the file was made by this process for this store: a scratch file already
    // unlinked, or a memory file without a name. Nothing else can reach it, except worker
    // processes given it once it is filled, which map it copy-on-write and never write to it.
    unsafe { MmapMut::map_mut(file) }
        .map_err(|e| Error::Io(format!("the spline coefficients' file: {e}")))
}

#[cfg(target_os = "linux")]
fn reserve(file: &File, bytes: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "file too large"))?;
    // SAFETY: a plain system call on a descriptor this function borrows.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve(file: &File, bytes: u64) -> std::io::Result<()> {
    file.set_len(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_memory_stores_hold_the_same_planes() {
        let dir = std::env::temp_dir();
        let mut stores = [
            PlaneStore::new(3, (4, 5), &Placement::Memory).unwrap(),
            PlaneStore::new(3, (4, 5), &Placement::File(dir.clone())).unwrap(),
        ];
        assert!(!stores[0].in_file() && stores[1].in_file());
        for s in &mut stores {
            assert_eq!(s.len(), 3);
            for p in 0..3 {
                assert!(s.plane(p).iter().all(|&v| v == 0.0));
                s.plane_mut(p)[[p, 4]] = p as f64 + 0.5;
            }
        }
        for p in 0..3 {
            assert_eq!(stores[0].plane(p), stores[1].plane(p));
            assert_eq!(stores[1].plane(p)[[p, 4]], p as f64 + 0.5);
        }
        // The scratch file's name is gone at once.
        let leftover = std::fs::read_dir(&dir).unwrap().any(|e| {
            let name = e.unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with(&format!("reproject-rs-spline-{}-", std::process::id()))
        });
        assert!(!leftover);
    }

    /// A shareable store, in memory or in a scratch file, maps again (as a worker maps it)
    /// with its values; what the second mapping writes stays its own.
    #[test]
    fn shared_stores_map_again_copy_on_write() {
        // A folder of its own: the test above looks for scratch files in the temporary one.
        let dir = std::env::temp_dir().join(format!("shared_stores_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (placement, disk) in [
            (Placement::Memory, !cfg!(target_os = "linux")),
            (Placement::File(dir.clone()), true),
        ] {
            let mut store = PlaneStore::new_shareable(2, (3, 4), &placement).unwrap();
            store.plane_mut(1)[[2, 3]] = 7.25;
            assert_eq!(store.in_file(), disk);
            let file = store.shared_file().unwrap().try_clone().unwrap();
            let mut again = PlaneStore::from_shared_file(file, 2, (3, 4)).unwrap();
            assert_eq!(
                (again.len(), again.shape(), again.in_file()),
                (2, (3, 4), disk)
            );
            assert!(again.shared_file().is_none());
            assert_eq!(again.values(), store.values());
            again.plane_mut(0)[[0, 0]] = -1.0;
            assert_eq!(store.plane(0)[[0, 0]], 0.0);
            // A file of other planes is refused.
            let file = store.shared_file().unwrap().try_clone().unwrap();
            let err = PlaneStore::from_shared_file(file, 3, (3, 4)).err().unwrap();
            assert!(
                err.to_string().contains("hold 192 bytes, not the 288"),
                "{err}"
            );
        }
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_missing_scratch_folder_is_an_error() {
        let err = PlaneStore::new(1, (2, 2), &Placement::File("/nonexistent/folder".into()))
            .err()
            .unwrap();
        assert!(err.to_string().contains("scratch file"), "{err}");
    }
}

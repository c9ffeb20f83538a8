//! Questions to the operating system: whether a disk has room for a new output, and how much
//! memory this process may still use.

use std::fs::File;
use std::path::Path;

/// Checks that the file system of a new (sparse) output file has room for all of it, so
/// that a full disk is an error at creation rather than a `SIGBUS` when a page of the memory
/// map cannot be written back. The file stays sparse (blocks are allocated as pages are
/// written), so a disk filled by another writer during the run is not covered.
#[cfg(unix)]
pub(super) fn reserve(file: &File, len: u64) -> std::io::Result<()> {
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
pub(super) fn reserve(_file: &File, _len: u64) -> std::io::Result<()> {
    Ok(())
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

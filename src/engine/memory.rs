//! Memory guards: outputs and working buffers are checked against the memory available
//! before they are allocated, so that a job too large for the machine is a clear error, not
//! an abort; and zeroed outputs that the kernel hands out lazily.

use ndarray::{ArrayD, IxDyn};

use super::OutputSample;
use crate::error::{Error, Result};
use crate::io::available_memory;

/// A zero-filled output array whose pages the kernel may back with transparent huge pages: a fresh
/// output is written once, and 2 MiB pages cut the page-fault work of that first write by 512 (the
/// zeroing itself stays). This is how [`reproject_interp`](super::reproject_interp) allocates.
///
/// ```
/// let a = reproject::engine::zeroed_output::<f64>(&[2, 3]);
/// assert_eq!(a.shape(), &[2, 3]);
/// let b = reproject::engine::zeroed_output::<f32>(&[4]);
/// assert_eq!(b.as_slice().unwrap(), &[0.0f32; 4]);
/// ```
pub fn zeroed_output<T: OutputSample>(shape: &[usize]) -> ArrayD<T> {
    let len: usize = shape.iter().product();
    let buffer = vec![T::from_f64(0.0); len];
    advise_huge_pages(&buffer);
    ArrayD::from_shape_vec(IxDyn(shape), buffer).expect("length matches the shape")
}

/// `madvise(MADV_HUGEPAGE)` over the whole 2 MiB pages of a large, still untouched buffer
/// (numpy does the same for its large arrays): with transparent huge pages in `madvise`
/// mode, the usual setting, the first writes then fault in 2 MiB pages instead of 4 KiB ones.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages<T>(buffer: &[T]) {
    const HUGE: usize = 2 << 20;
    let start = buffer.as_ptr() as usize;
    let end = start + std::mem::size_of_val(buffer);
    let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
    if last > first {
        // SAFETY: the range lies inside `buffer`'s allocation and madvise only changes how
        // the kernel backs those pages, not their contents; failure is harmless.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages<T>(_buffer: &[T]) {}

/// Windows of pages [`mostly_unfaulted`] asks the kernel about per buffer, and pages in each.
const RESIDENCY_WINDOWS: usize = 64;
const RESIDENCY_WINDOW_PAGES: usize = 64;

/// Whether most pages under `buffers` are not in memory: not written since they were
/// allocated (an array's fresh zero pages, the mapping of a file just created) or paged out,
/// so that a job's first write to each faults it in, as into the outputs
/// [`Plan::with_fresh_outputs`](super::Plan::with_fresh_outputs) describes. The kernel
/// answers (`mincore`) for up to 64 windows of 64 pages spread over each buffer, so the
/// question costs about the same for any size (asking for every page of 2 GiB took 4-6 ms on
/// the development machine, a tenth of a 16384² GPU job into reused outputs). False where it
/// cannot tell (not Linux, a failed call) or the buffers are empty. A plan asks it of the
/// outputs a caller gives ([`Plan::with_untouched_outputs`](super::Plan::with_untouched_outputs)).
///
/// ```
/// use reproject::engine::{mostly_unfaulted, zeroed_output};
/// let mut fresh = zeroed_output::<f64>(&[8 << 20]); // 64 MiB, never written
/// let untouched = mostly_unfaulted(&[fresh.as_slice().unwrap()]);
/// assert_eq!(untouched, cfg!(target_os = "linux"));
/// fresh.fill(1.0);
/// assert!(!mostly_unfaulted(&[fresh.as_slice().unwrap()]));
/// ```
pub fn mostly_unfaulted<T>(buffers: &[&[T]]) -> bool {
    let mut resident = 0;
    let mut asked = 0;
    for buffer in buffers {
        match resident_pages(buffer) {
            Some((r, n)) => (resident, asked) = (resident + r, asked + n),
            None => return false,
        }
    }
    asked > 0 && 2 * resident < asked
}

/// How many of the pages [`mostly_unfaulted`] asks about under `buffer` are in memory, and
/// how many it asked about.
#[cfg(target_os = "linux")]
fn resident_pages<T>(buffer: &[T]) -> Option<(usize, usize)> {
    let bytes = std::mem::size_of_val(buffer);
    if bytes == 0 {
        return Some((0, 0));
    }
    // SAFETY: sysconf only reads a system setting.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    if !page.is_power_of_two() {
        return None;
    }
    let start = buffer.as_ptr() as usize;
    let first = start / page * page;
    let pages = (start + bytes - first).div_ceil(page);
    let per_window = RESIDENCY_WINDOW_PAGES.min(pages);
    let windows = if pages <= RESIDENCY_WINDOWS * RESIDENCY_WINDOW_PAGES {
        vec![(0, pages)]
    } else {
        let last = pages - per_window;
        (0..RESIDENCY_WINDOWS)
            .map(|w| (w * last / (RESIDENCY_WINDOWS - 1), per_window))
            .collect()
    };
    let mut flags = vec![0u8; RESIDENCY_WINDOWS * RESIDENCY_WINDOW_PAGES];
    let (mut resident, mut asked) = (0, 0);
    for (offset, count) in windows {
        // SAFETY: the pages [first + offset, + count) lie between the page holding the
        // buffer's first byte and the one holding its last, all mapped while the buffer is
        // borrowed; mincore only reads the page tables and writes one byte per page into
        // `flags`, which holds `count` bytes.
        let failed = unsafe {
            libc::mincore(
                (first + offset * page) as *mut libc::c_void,
                count * page,
                flags.as_mut_ptr(),
            )
        } != 0;
        if failed {
            return None;
        }
        resident += flags[..count].iter().filter(|&&f| f & 1 == 1).count();
        asked += count;
    }
    Some((resident, asked))
}

#[cfg(not(target_os = "linux"))]
fn resident_pages<T>(_buffer: &[T]) -> Option<(usize, usize)> {
    None
}

/// Refuses an in-memory output of `shape` (`bytes_per_pixel` bytes per pixel, all arrays together)
/// larger than the memory available ([`available_memory`]), before it is allocated, with
/// [`Error::InvalidArgument`] naming the fix: write the output to a file (a memory-mapped
/// [`crate::io::MappedOutput`] through [`reproject_interp_into`](super::reproject_interp_into), the
/// CLI's `-o`, a `numpy.memmap` as Python's `output_array`) or compute it block by block. Every
/// in-memory output of the engine, its lazy blocks and the Python bindings goes through it.
///
/// ```
/// use reproject::engine::check_output_memory;
/// assert!(check_output_memory(&[4, 4], 16).is_ok());
/// let err = check_output_memory(&[1 << 30, 1 << 30], 16).unwrap_err();
/// assert!(err.to_string().contains("output file"));
/// ```
pub fn check_output_memory(shape: &[usize], bytes_per_pixel: usize) -> Result<()> {
    let pixels = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "output shape {shape:?} overflows: it cannot be held in memory; write it to an \
                 output file instead"
            ))
        })?;
    let bytes = (pixels as u128) * bytes_per_pixel as u128;
    let too_big = || {
        Error::InvalidArgument(format!(
            "the output {shape:?} needs {bytes} bytes in memory but only {} are available; \
             write it to an output file instead (a memory-mapped MappedOutput with \
             reproject_interp_into, the CLI's -o, or Python's output_array=numpy.memmap or \
             return_type='dask')",
            available_memory().map_or("an unknown number of".to_string(), |a| a.to_string())
        ))
    };
    if bytes > isize::MAX as u128 {
        return Err(too_big());
    }
    if let Some(available) = available_memory()
        && bytes > available as u128
    {
        return Err(too_big());
    }
    Ok(())
}

/// Refuses working buffers larger than the memory available, before allocating them (an
/// [`Error::InvalidArgument`] naming what they are for and the fix). Buffers under 256 MiB are not
/// checked: reading the memory figures would cost more than it saves.
pub(crate) fn check_working_memory(
    bytes: usize,
    what: impl FnOnce() -> (String, &'static str),
) -> Result<()> {
    const UNCHECKED: usize = 256 << 20;
    if bytes <= UNCHECKED {
        return Ok(());
    }
    if let Some(available) = available_memory()
        && bytes as u64 > available
    {
        let (what, fix) = what();
        return Err(Error::InvalidArgument(format!(
            "{what} needs {bytes} bytes of working memory but only {available} are \
                 available; {fix}"
        )));
    }
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// 64 MiB of float64: more pages than the windows cover, so they are sampled.
    const LEN: usize = 8 << 20;

    #[test]
    fn fresh_arrays_are_unfaulted_until_written() {
        let mut fresh = zeroed_output::<f64>(&[LEN]);
        let other = zeroed_output::<f64>(&[LEN]);
        let (a, b) = (fresh.as_slice().unwrap(), other.as_slice().unwrap());
        assert!(mostly_unfaulted(&[a, b]));
        fresh.fill(1.0);
        let (a, b) = (fresh.as_slice().unwrap(), other.as_slice().unwrap());
        // written: resident; one of two written: not most
        assert!(!mostly_unfaulted(&[a]));
        assert!(!mostly_unfaulted(&[a, b]));
        assert!(mostly_unfaulted(&[b]));
    }

    #[test]
    fn a_quarter_written_is_still_mostly_unfaulted_three_quarters_not() {
        let mut v = zeroed_output::<f64>(&[LEN]);
        v.as_slice_mut().unwrap()[..LEN / 4].fill(2.0);
        assert!(mostly_unfaulted(&[v.as_slice().unwrap()]));
        v.as_slice_mut().unwrap()[..3 * LEN / 4].fill(2.0);
        assert!(!mostly_unfaulted(&[v.as_slice().unwrap()]));
    }

    #[test]
    fn a_new_files_mapping_is_unfaulted_until_written() {
        let dir = std::env::temp_dir().join(format!("rp-unfaulted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(64 << 20).unwrap();
        // SAFETY: the file is this test's own.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
        assert!(mostly_unfaulted(&[&map[..]]));
        map.fill(7);
        assert!(!mostly_unfaulted(&[&map[..]]));
        drop(map);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn small_and_empty_buffers() {
        let stack = [1.0f64; 16];
        assert!(!mostly_unfaulted(&[&stack[..]]));
        let empty: [f64; 0] = [];
        assert!(!mostly_unfaulted(&[&empty[..]]));
        assert!(!mostly_unfaulted::<f64>(&[]));
    }
}

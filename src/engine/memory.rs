//! Memory guards: outputs and working buffers are checked against the memory available
//! before they are allocated, so that a job too large for the machine is a clear error, not
//! an abort; and zeroed outputs that the kernel hands out lazily.

use ndarray::{ArrayD, IxDyn};

use super::OutputSample;
use crate::error::{Error, Result};
use crate::io::available_memory;

/// A zero-filled output array whose pages the kernel may back with transparent huge pages:
/// a fresh output is written once, and 2 MiB pages cut the page-fault work of that first
/// write by 512 (the zeroing itself stays). This is how [`reproject_interp`](super::reproject_interp) allocates.
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

/// Refuses an in-memory output of `shape` (`bytes_per_pixel` bytes per pixel, all arrays
/// together) larger than the memory available ([`available_memory`]), before it is
/// allocated, with [`Error::InvalidArgument`] naming the fix: write the output to a file
/// (a memory-mapped [`crate::io::MappedOutput`] through [`reproject_interp_into`](super::reproject_interp_into), the CLI's
/// `-o`, a `numpy.memmap` as Python's `output_array`) or compute it block by block. Every
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
    if let Some(available) = available_memory() {
        if bytes > available as u128 {
            return Err(too_big());
        }
    }
    Ok(())
}

/// Refuses working buffers larger than the memory available, before allocating them (an
/// [`Error::InvalidArgument`] naming what they are for and the fix). Buffers under 256 MiB are not checked: reading
/// the memory figures would cost more than it saves.
pub(crate) fn check_working_memory(
    bytes: usize,
    what: impl FnOnce() -> (String, &'static str),
) -> Result<()> {
    const UNCHECKED: usize = 256 << 20;
    if bytes <= UNCHECKED {
        return Ok(());
    }
    if let Some(available) = available_memory() {
        if bytes as u64 > available {
            let (what, fix) = what();
            return Err(Error::InvalidArgument(format!(
                "{what} needs {bytes} bytes of working memory but only {available} are \
                 available; {fix}"
            )));
        }
    }
    Ok(())
}

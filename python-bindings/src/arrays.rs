//! Zero-copy access to numpy arrays: any supported dtype, byte order and strides as a core
//! [`RawSource`], and C-contiguous native float arrays as writable core views.

use ndarray::{ArrayViewMutD, IxDyn};
use numpy::{Element, PyArrayDescrMethods, PyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use reproject::io::RawSource;

use crate::errors::{new_err, to_pyerr, Kind};

/// The memory of a numpy array as seen through its strides: a byte slice covering every
/// element, and the offset of element `[0, ..., 0]` inside it.
pub struct BorrowedBytes<'a> {
    pub bytes: &'a [u8],
    pub offset: usize,
    pub dtype: String,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
}

/// Borrows the memory of `array` without copying it.
///
/// The returned slice stays valid while `array` is alive and its buffer is not reallocated
/// (numpy never reallocates the buffer of a live array; `resize` refuses when the array is
/// referenced). Like any C extension releasing the GIL, a concurrent writer in another
/// thread may change values during the computation, never the memory's validity.
pub fn borrow_bytes<'a>(array: &'a Bound<'_, PyUntypedArray>) -> PyResult<BorrowedBytes<'a>> {
    let py = array.py();
    let dtype = array.dtype();
    let descr: String = dtype.getattr("str")?.extract()?;
    let itemsize = dtype.itemsize();
    let shape = array.shape().to_vec();
    let strides = array.strides().to_vec();
    let empty = shape.contains(&0);
    // Byte offsets, relative to the data pointer, of the lowest and one past the highest byte
    // any element occupies.
    let (mut lo, mut hi) = (0isize, itemsize as isize);
    if !empty {
        for (&n, &s) in shape.iter().zip(&strides) {
            let reach = (n as isize - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
    }
    // SAFETY: `data` points at element [0, ..., 0] of a live array whose elements all lie
    // within [data + lo, data + hi) (numpy's own invariant for a valid strided array); the
    // slice borrows `array`, which keeps the buffer alive.
    let bytes: &[u8] = if empty {
        &[]
    } else {
        unsafe {
            let data =
                (*numpy::npyffi::_PyArray_GET_ITEM_DATA(array.as_array_ptr())).data as *const u8;
            if data.is_null() {
                return Err(new_err(py, Kind::InvalidArgument, "array has no data"));
            }
            std::slice::from_raw_parts(data.offset(lo), (hi - lo) as usize)
        }
    };
    Ok(BorrowedBytes {
        bytes,
        offset: if empty { 0 } else { (-lo) as usize },
        dtype: descr,
        shape,
        strides,
    })
}

impl<'a> BorrowedBytes<'a> {
    /// The array as a core image source (no copy).
    pub fn source(&self, py: Python<'_>) -> PyResult<RawSource<'a>> {
        RawSource::from_numpy(
            self.bytes,
            &self.dtype,
            &self.shape,
            &self.strides,
            self.offset,
        )
        .map_err(|e| to_pyerr(py, e))
    }
}

/// A writable core view of a C-contiguous, aligned, writeable, native-order array of `T`.
///
/// # Safety
/// The caller must hold a numpy read-write borrow of `array` (e.g. a `PyReadwriteArrayDyn`)
/// for as long as the view lives, so that nothing else aliases it.
pub unsafe fn mut_view<'a, T: Element>(
    array: &'a Bound<'_, PyArrayDyn<T>>,
) -> PyResult<ArrayViewMutD<'a, T>> {
    use numpy::PyArrayMethods;
    let py = array.py();
    if !array.is_c_contiguous() || !array.is_aligned() {
        return Err(new_err(
            py,
            Kind::InvalidArgument,
            "output arrays must be C-contiguous and aligned",
        ));
    }
    let shape = array.shape().to_vec();
    // SAFETY: C-contiguous and aligned, `shape` elements from `data()`, exclusive by contract.
    Ok(unsafe { ArrayViewMutD::from_shape_ptr(IxDyn(&shape), array.data()) })
}

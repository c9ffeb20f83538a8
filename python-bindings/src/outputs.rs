//! The data and footprint arrays a whole-output call writes: the caller's `output_array=` and
//! `output_footprint=`, held under numpy read-write borrows until the call returns, or fresh
//! zeroed arrays moved into numpy afterwards.

use ndarray::{ArrayD, ArrayViewMutD};
use numpy::{Element, PyArrayDyn, PyArrayMethods, PyReadwriteArrayDyn};
use pyo3::prelude::*;
use reproject::engine::OutputSample;

use crate::arrays::mut_view;
use crate::errors::{new_err, Kind};
use crate::{check_memory, to_numpy, zeros};

/// One of the two arrays.
enum Output<'py, T: Element> {
    /// The caller's array, and the read-write borrow that keeps every other writer (and the
    /// same array given as the other output) away while it is written.
    Given {
        array: Bound<'py, PyArrayDyn<T>>,
        _borrow: PyReadwriteArrayDyn<'py, T>,
    },
    /// Allocated here, moved into numpy once written.
    Fresh(ArrayD<T>),
}

impl<T: Element> Output<'_, T> {
    /// A writable core view of the array.
    fn view(&mut self) -> PyResult<ArrayViewMutD<'_, T>> {
        match self {
            // SAFETY: the read-write borrow lives as long as `self`, which the view borrows.
            Output::Given { array, .. } => unsafe { mut_view(array) },
            Output::Fresh(a) => Ok(a.view_mut()),
        }
    }
}

/// The data and footprint arrays of one call, both of the full output shape.
pub(crate) struct OutputArrays<'py, T: Element> {
    data: Output<'py, T>,
    footprint: Output<'py, T>,
    shape: Vec<usize>,
}

impl<'py, T: OutputSample + Element> OutputArrays<'py, T> {
    /// [`OutputArrays::new`] of `output_array=` and `output_footprint=` as the caller gave
    /// them: an `InvalidArgumentError` when one is not a native-order numpy array of `T`.
    pub(crate) fn from_arguments(
        py: Python<'py>,
        output_array: Option<&Bound<'py, PyAny>>,
        output_footprint: Option<&Bound<'py, PyAny>>,
        shape: &[usize],
    ) -> PyResult<Self> {
        let dtype = numpy::dtype::<T>(py);
        let cast = |a: Option<&Bound<'py, PyAny>>, what: &str| {
            a.map(|a| {
                a.cast::<PyArrayDyn<T>>().cloned().map_err(|_| {
                    new_err(
                        py,
                        Kind::InvalidArgument,
                        format!("{what} must be a native {dtype} numpy array"),
                    )
                })
            })
            .transpose()
        };
        let data = cast(output_array, "output_array")?;
        let footprint = cast(output_footprint, "output_footprint")?;
        Self::new(py, data.as_ref(), footprint.as_ref(), shape)
    }

    /// Borrows the given arrays read-write (an `InvalidArgumentError` when numpy refuses, as
    /// for the same array given twice), then allocates the missing ones of `shape`, after
    /// checking that they fit in memory.
    pub(crate) fn new(
        py: Python<'py>,
        data: Option<&Bound<'py, PyArrayDyn<T>>>,
        footprint: Option<&Bound<'py, PyArrayDyn<T>>>,
        shape: &[usize],
    ) -> PyResult<Self> {
        let borrow = |a: Option<&Bound<'py, PyArrayDyn<T>>>| {
            a.map(|a| {
                let borrow = a.try_readwrite().map_err(|e| {
                    new_err(
                        py,
                        Kind::InvalidArgument,
                        format!("cannot write to the output array: {e}"),
                    )
                })?;
                Ok::<_, PyErr>(Output::Given {
                    array: a.clone(),
                    _borrow: borrow,
                })
            })
            .transpose()
        };
        let (data, footprint) = (borrow(data)?, borrow(footprint)?);
        let fresh = usize::from(data.is_none()) + usize::from(footprint.is_none());
        check_memory(py, shape, fresh * std::mem::size_of::<T>())?;
        let or_fresh = |o: Option<Output<'py, T>>| o.unwrap_or_else(|| Output::Fresh(zeros(shape)));
        Ok(Self {
            data: or_fresh(data),
            footprint: or_fresh(footprint),
            shape: shape.to_vec(),
        })
    }

    /// Whether the data and the footprint arrays are the caller's.
    pub(crate) fn given(&self) -> (bool, bool) {
        let given = |o: &Output<'py, T>| matches!(o, Output::Given { .. });
        (given(&self.data), given(&self.footprint))
    }

    /// The bytes allocated here.
    pub(crate) fn fresh_bytes(&self) -> usize {
        let (data, footprint) = self.given();
        let fresh = usize::from(!data) + usize::from(!footprint);
        fresh * self.shape.iter().product::<usize>() * std::mem::size_of::<T>()
    }

    /// Writable core views of the data and the footprint; a `ShapeError` when a given array
    /// does not have the full output shape, an `InvalidArgumentError` when it is not
    /// C-contiguous and aligned.
    pub(crate) fn views(&mut self, py: Python<'py>) -> PyResult<[ArrayViewMutD<'_, T>; 2]> {
        let (data, footprint) = (self.data.view()?, self.footprint.view()?);
        if data.shape() != self.shape.as_slice() || footprint.shape() != self.shape.as_slice() {
            return Err(new_err(
                py,
                Kind::Shape,
                format!(
                    "output arrays of shapes {:?} and {:?}, expected {:?}",
                    data.shape(),
                    footprint.shape(),
                    self.shape
                ),
            ));
        }
        Ok([data, footprint])
    }

    /// The data and the footprint as Python objects: the given arrays themselves (their
    /// borrows released), the fresh ones moved into numpy without a copy.
    pub(crate) fn into_numpy(
        self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let object = |o: Output<'py, T>| -> PyResult<Bound<'py, PyAny>> {
            Ok(match o {
                Output::Given { array, .. } => array.into_any(),
                Output::Fresh(a) => to_numpy(py, a)?.into_any(),
            })
        };
        Ok((object(self.data)?, object(self.footprint)?))
    }
}

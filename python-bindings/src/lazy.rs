//! `LazyPlan`: a prepared reprojection whose output blocks are computed on demand.
//!
//! ```text
//! numpy array ──kept alive (Py ref), read in place──▶ KeptArray: ImageSource
//!      └─ Plan::with_shared_source (WCS set-up, spline coefficients for orders ≥ 2: once)
//!           ├─ executor (device=): CPU, or CUDA with the plan's device state (uploads once)
//!           └─ LazyReprojection ─▶ BlockHandle × n ─▶ compute_block(i) on any thread, any order
//! ```
//!
//! The plan owns everything a block needs, so every block of one `LazyPlan` shares the
//! prefiltered coefficients (and, on a GPU, the uploaded input) instead of recomputing them.
//! The object pickles as its small description, the constructor arguments (`__reduce__`:
//! the input array, header texts, shape and options, never the coefficients), and is
//! rebuilt, coefficients and executor included, on unpickling.

use ndarray::IxDyn;
use numpy::{PyArrayDyn, PyUntypedArray};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use reproject::engine::blocks::Block;
use reproject::engine::lazy::{BlockHandle, LazyReprojection};
use reproject::engine::schedule::Schedule;
use reproject::engine::Plan;
use reproject::io::{ImageSource, RawSource, StoredType};
use std::ops::Range;
use std::sync::Arc;

use crate::arrays::borrow_bytes;
use crate::errors::{guard_panics, new_err, run_detached, run_for_size, Kind};
use crate::options::{device_name, OptionArgs, OrderArg};
use crate::{compute_stacked_window, full_shape, parse_wcs, to_numpy};

/// `(data, footprint)` numpy arrays.
type Pair<'py> = (Bound<'py, PyArrayDyn<f64>>, Bound<'py, PyArrayDyn<f64>>);

/// A numpy array read in place by a plan that may outlive the call that made it.
pub(crate) struct KeptArray {
    // Declared first so it is dropped first: it borrows the buffer of `_array`.
    raw: RawSource<'static>,
    /// Keeps the array, hence its buffer, alive.
    _array: Py<PyUntypedArray>,
}

impl KeptArray {
    pub(crate) fn new(array: &Bound<'_, PyUntypedArray>) -> PyResult<KeptArray> {
        let py = array.py();
        let bytes = borrow_bytes(array)?;
        // SAFETY: the slice covers the buffer of `array`, which `_array` keeps alive for as
        // long as `raw` exists (`raw` is dropped first). numpy never frees or moves the buffer
        // of a live, referenced array (`resize` refuses while it is referenced, unless the
        // caller explicitly disables that check, which no C extension can defend against).
        let slice: &'static [u8] = if bytes.bytes.is_empty() {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(bytes.bytes.as_ptr(), bytes.bytes.len()) }
        };
        let raw = RawSource::from_numpy(
            slice,
            &bytes.dtype,
            &bytes.shape,
            &bytes.strides,
            bytes.offset,
        )
        .map_err(|e| crate::errors::to_pyerr(py, e))?;
        Ok(KeptArray {
            raw,
            _array: array.clone().unbind(),
        })
    }
}

impl ImageSource for KeptArray {
    fn shape(&self) -> &[usize] {
        self.raw.shape()
    }

    fn stored_type(&self) -> StoredType {
        self.raw.stored_type()
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> reproject::Result<()> {
        self.raw.read_window(plane, rows, cols, out)
    }
}

/// A prepared reprojection (the engine's ``LazyReprojection``): WCS transforms set up and, for
/// spline orders >= 2, the coefficients of every input plane computed once, shared by every
/// block.
///
/// ``LazyPlan(array, header_in, header_out, shape_out, order=None, roundtrip_coords=True,
/// block_size=None, threads=1, nan_policy='propagate', precision='reproject', device='auto')``
/// takes the arguments of ``_core.reproject_interp``. The array is read in place, never
/// copied, and kept alive: do not modify it while the plan exists
/// (``reproject_rs.reproject_interp(..., return_type='lazy')`` hands it a private copy).
///
/// ``device`` picks the plan's block executor once ('cpu', 'auto', 'cuda', 'cuda:N',
/// 'cuda:all'); every block then computes on it, the GPU's device state (parameters, input
/// planes) uploaded once per plan. ``device='cuda'`` raises ``DeviceUnavailableError`` here,
/// not at the first block, when the GPU cannot do the job.
///
/// Every ``compute*`` method releases the GIL and may be called from any thread, in any
/// order, any number of times: the values are bit-identical to ``_core.reproject_interp``
/// on the same device. Pickles as its constructor arguments (the array included, never the
/// coefficients) and is rebuilt on unpickling.
#[pyclass(frozen, weakref, module = "reproject_rs._core")]
pub struct LazyPlan {
    lazy: LazyReprojection<'static>,
    handles: Vec<BlockHandle<'static>>,
    /// The full output shape (leading dimensions, rows, columns).
    shape: Vec<usize>,
    // The constructor's arguments, for pickling.
    array: Py<PyUntypedArray>,
    header_in: String,
    header_out: String,
    shape_out: Vec<usize>,
    order: usize,
    roundtrip_coords: bool,
    block_size: Option<(usize, usize)>,
    threads: usize,
    nan_policy: String,
    precision: String,
    /// The canonical device name (`cpu`, `auto`, `cuda`, `cuda:N`, `cuda:all`).
    device: String,
}

impl LazyPlan {
    fn lead(&self) -> &[usize] {
        &self.shape[..self.shape.len() - 2]
    }

    /// (leading..., rows, columns) of a block.
    fn block_shape_of(&self, block: &Block) -> Vec<usize> {
        let mut shape = self.lead().to_vec();
        shape.extend([block.rows.len(), block.cols.len()]);
        shape
    }

    fn handle(&self, index: isize) -> PyResult<&BlockHandle<'static>> {
        let n = self.handles.len() as isize;
        let i = if index < 0 { index + n } else { index };
        if !(0..n).contains(&i) {
            return Err(PyErr::new::<pyo3::exceptions::PyIndexError, _>(format!(
                "block index {index} out of range for {n} blocks"
            )));
        }
        Ok(&self.handles[i as usize])
    }
}

#[pymethods]
impl LazyPlan {
    #[new]
    #[pyo3(signature = (array, header_in, header_out, shape_out, order=None, roundtrip_coords=true,
        block_size=None, threads=1, nan_policy="propagate", precision="reproject", device="auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        array: &Bound<'_, PyUntypedArray>,
        header_in: String,
        header_out: String,
        shape_out: Vec<usize>,
        order: Option<OrderArg>,
        roundtrip_coords: bool,
        block_size: Option<(usize, usize)>,
        threads: usize,
        nan_policy: &str,
        precision: &str,
        device: &str,
    ) -> PyResult<LazyPlan> {
        guard_panics(|| {
            let options = OptionArgs {
                block_size,
                threads,
                device,
                ..OptionArgs::serial(order, roundtrip_coords, nan_policy, precision)
            }
            .options(py)?;
            let device = device_name(options.backend, options.devices);
            let wcs_in = parse_wcs(py, &header_in, "input")?;
            let wcs_out = parse_wcs(py, &header_out, "output")?;
            let source = KeptArray::new(array)?;
            let shape = full_shape(source.shape(), &shape_out);
            let source: Arc<dyn ImageSource> = Arc::new(source);
            let lazy = run_detached(py, || {
                let plan =
                    Plan::with_shared_source(source, &wcs_in, &wcs_out, &shape_out, &options)?;
                // The executor now: a GPU that cannot do the job fails here, not in a block.
                plan.executor()?;
                Ok(LazyReprojection::new(plan))
            })?;
            // One handle per block: refuse a block count that would not fit in memory.
            let (by, bx) = lazy.plan().block_shape();
            let (ny, nx) = lazy.plan().plane_shape_out();
            let count = ny
                .div_ceil(by.max(1))
                .saturating_mul(nx.div_ceil(bx.max(1)));
            let bytes = count as u128 * 2 * std::mem::size_of::<BlockHandle>() as u128;
            if bytes > reproject::io::available_memory().map_or(u128::MAX, u128::from) {
                return Err(new_err(
                    py,
                    Kind::InvalidArgument,
                    format!(
                        "the {ny}x{nx} output in blocks of {by}x{bx} has {count} blocks, whose \
                         handles need {bytes} bytes, more than the memory available; use a \
                         larger block_size"
                    ),
                ));
            }
            let handles = lazy.blocks();
            Ok(LazyPlan {
                shape,
                handles,
                array: array.clone().unbind(),
                header_in,
                header_out,
                shape_out,
                order: options.order.degree(),
                roundtrip_coords,
                block_size,
                threads,
                nan_policy: nan_policy.to_string(),
                precision: precision.to_string(),
                device,
                lazy,
            })
        })
    }

    /// The full output shape (leading dimensions, rows, columns), in the engine's axis order.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    /// The block shape (rows, columns) the plan cuts the output plane into.
    #[getter]
    fn block_shape(&self) -> (usize, usize) {
        self.lazy.plan().block_shape()
    }

    /// The device the plan was made for (canonical name: 'cpu', 'auto', 'cuda', 'cuda:N',
    /// 'cuda:all').
    #[getter]
    fn device(&self) -> String {
        self.device.clone()
    }

    /// What computes the blocks: ``'cpu'``, or ``'cuda:0'`` (the GPUs' ordinals) when they
    /// run on the GPU (``device='auto'`` without a usable GPU gives ``'cpu'``).
    #[getter]
    fn executor(&self, py: Python<'_>) -> PyResult<String> {
        run_detached(py, || self.lazy.plan().executor().map(|e| e.name()))
    }

    /// The input array the plan reads (kept alive, never copied).
    #[getter]
    fn array(&self, py: Python<'_>) -> Py<PyUntypedArray> {
        self.array.clone_ref(py)
    }

    /// Number of blocks.
    fn __len__(&self) -> usize {
        self.handles.len()
    }

    /// The output windows of the blocks, in row-major order: ``((row_start, row_stop),
    /// (col_start, col_stop))`` each, covering every leading plane.
    fn windows(&self) -> Vec<((usize, usize), (usize, usize))> {
        self.handles
            .iter()
            .map(|h| {
                let b = h.block();
                ((b.rows.start, b.rows.end), (b.cols.start, b.cols.end))
            })
            .collect()
    }

    /// Computes block ``index`` (negative counts from the end): ``(data, footprint)``, float64
    /// arrays of shape ``(*leading, rows, columns)``.
    fn compute_block<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Pair<'py>> {
        guard_panics(|| {
            let handle = self.handle(index)?;
            let shape = self.block_shape_of(handle.block());
            let (data, footprint) = run_detached(py, || handle.compute())?;
            let reshape = |a: ndarray::Array3<f64>| {
                a.into_shape_with_order(IxDyn(&shape))
                    .map_err(|e| new_err(py, Kind::Shape, e.to_string()))
            };
            Ok((
                to_numpy(py, reshape(data)?)?,
                to_numpy(py, reshape(footprint)?)?,
            ))
        })
    }

    /// Computes any window of the output (rows ``row_start:row_stop``, columns
    /// ``col_start:col_stop``, every leading plane): one float64 array of shape ``(2,
    /// *leading, rows, columns)``, ``[0]`` the data and ``[1]`` the footprint (what a dask
    /// block needs).
    fn compute_window<'py>(
        &self,
        py: Python<'py>,
        rows: (usize, usize),
        cols: (usize, usize),
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        guard_panics(|| {
            compute_stacked_window(py, &self.shape, "window", rows, cols, |block, data, fp| {
                self.lazy.plan().compute_block(block, data, fp)
            })
        })
    }

    /// Computes the whole output: ``(data, footprint)``, float64 arrays of the full output
    /// shape, on the plan's threads. Ctrl-C stops a large one (see ``run_for_size``).
    fn compute<'py>(&self, py: Python<'py>) -> PyResult<Pair<'py>> {
        guard_panics(|| {
            let pixels = self.shape.iter().product();
            let (data, footprint) = run_for_size(py, pixels, |cancel| {
                let schedule = Schedule {
                    cancel,
                    ..Schedule::default()
                };
                self.lazy.compute_with(&schedule)
            })?;
            Ok((to_numpy(py, data)?, to_numpy(py, footprint)?))
        })
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.get();
        let args = (
            this.array.clone_ref(py),
            this.header_in.clone(),
            this.header_out.clone(),
            this.shape_out.clone(),
            this.order,
            this.roundtrip_coords,
            this.block_size,
            this.threads,
            this.nan_policy.clone(),
            this.precision.clone(),
            this.device.clone(),
        )
            .into_pyobject(py)?;
        Ok((slf.get_type(), args))
    }

    fn __repr__(&self) -> String {
        let (by, bx) = self.lazy.plan().block_shape();
        format!(
            "LazyPlan(shape={:?}, order={}, device={}, blocks={} of {by}x{bx})",
            self.shape,
            self.order,
            self.device,
            self.handles.len()
        )
    }
}

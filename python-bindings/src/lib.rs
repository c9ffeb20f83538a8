//! `reproject_rs._core`: the compiled part of the `reproject_rs` Python package.
//!
//! Thin wrappers only; every algorithm lives in the `reproject` crate.
//!
//! ```text
//! numpy array (any dtype, byte order, strides) ──borrowed bytes──▶ RawSource
//! header text in / out ──Wcs::from_header_str──▶ Wcs
//!        └─ GIL released ─▶ Plan::new ─▶ compute_into (whole output) | compute_block (one block)
//!                            ─▶ numpy arrays (moved, not copied) or the caller's arrays
//! ```
//!
//! Functions:
//! * [`reproject_interp`]: the whole output, into fresh arrays or the caller's arrays.
//! * [`reproject_block`]: one output block (rows × columns, all leading planes), for dask.
//! * [`lazy::LazyPlan`]: a prepared plan (spline coefficients computed once) whose blocks
//!   compute on demand, for `return_type='lazy'` and the dask blocks.
//! * [`device::DevicePlan`]: a device-resident plan (CuPy input and outputs), for whole
//!   outputs and the CuPy chunks of dask arrays.
//! * [`reproject_positions`]: the whole output at input positions given for every output
//!   pixel (computed by astropy for a WCS pair the engine does not evaluate, or by
//!   [`positions::input_positions`] for WCS with distortion lookup tables).
//! * [`mosaic::reproject_and_coadd`]: a mosaic of many inputs (the core's
//!   `reproject::mosaic::coadd`), for `reproject_rs.mosaicking.reproject_and_coadd`.
//! * [`check_plan`]: the engine's checks of a WCS pair and shapes, without data.
//! * [`parse_device`], [`warmup`], [`gpu_info`], [`compile_kernels`]: the `device=` names,
//!   and the GPUs opened (kernels compiled) ahead of the first job, or the kernels of a GPU
//!   architecture compiled without one; [`set_compile_helper`]: the process that compiles
//!   kernel variants in the background (`reproject_rs._compile_helper`).
//! * [`optimal::optimal_celestial_wcs_header`]: the mosaic grid reproject's
//!   `find_optimal_celestial_wcs` chooses, as header text and shape.
//!
//! Every computing entry point takes `device=`: `'cpu'`, `'auto'`, `'cuda'`, `'cuda:N'` or
//! `'cuda:all'` (the core's `Options::backend` and `Options::devices`); the plan's executor
//! then computes every block, whole outputs and single blocks alike.
//!
//! Errors are `ReprojectError` subclasses (see [`errors`]); a panic becomes a
//! `ReprojectError` too, never an abort.

mod arrays;
mod device;
mod errors;
mod lazy;
mod mosaic;
mod optimal;
mod options;
mod outputs;
mod positions;

use std::sync::atomic::AtomicBool;

use ndarray::{ArrayD, ArrayViewMut3, Axis, IxDyn};
use numpy::{Element, IntoPyArray, PyArrayDyn, PyReadonlyArrayDyn, PyUntypedArray};
use pyo3::prelude::*;
use reproject::engine::blocks::Block;
use reproject::engine::schedule::Schedule;
use reproject::engine::{OutputSample, Plan};
use reproject::pixel_transform::PositionTable;
use reproject::wcs::Wcs;

use arrays::borrow_bytes;
use errors::{guard_panics, new_err, run_detached, run_for_size, to_pyerr, Kind};
use options::{OptionArgs, OrderArg};
use outputs::OutputArrays;

/// Where the input positions of a reprojection come from.
enum Geometry<'a> {
    /// Output pixel → world → input pixel through two WCS.
    Wcs(&'a Wcs, &'a Wcs),
    /// Given for every output pixel (computed by astropy for WCS the engine does not read).
    Positions(PositionTable),
}

/// Moves a core array into a new numpy array without copying its buffer.
fn to_numpy<T: Element + Clone>(
    py: Python<'_>,
    array: ArrayD<T>,
) -> PyResult<Bound<'_, PyArrayDyn<T>>> {
    let shape = array.shape().to_vec();
    let array = if array.is_standard_layout() {
        array
    } else {
        array.as_standard_layout().into_owned()
    };
    let (vec, offset) = array.into_raw_vec_and_offset();
    debug_assert!(matches!(offset, None | Some(0)));
    // numpy's own ndarray re-export, whatever ndarray version it was built against.
    let array = numpy::ndarray::ArrayD::from_shape_vec(numpy::ndarray::IxDyn(&shape), vec)
        .map_err(|e| new_err(py, Kind::Shape, e.to_string()))?;
    Ok(array.into_pyarray(py))
}

fn parse_wcs(py: Python<'_>, header: &str, which: &str) -> PyResult<Wcs> {
    Wcs::from_header_str(header).map_err(|e| {
        let kind = errors::kind_of(&e);
        new_err(py, kind, format!("{which} WCS: {e}"))
    })
}

/// The full output shape: `shape_out`, with the input's leading dimensions prepended when
/// it gives only (rows, columns).
fn full_shape(shape_in: &[usize], shape_out: &[usize]) -> Vec<usize> {
    if shape_out.len() == 2 && shape_in.len() > 2 {
        shape_in[..shape_in.len() - 2]
            .iter()
            .chain(shape_out)
            .copied()
            .collect()
    } else {
        shape_out.to_vec()
    }
}

/// A fresh zeroed core array of `T`, allocated as the engine allocates its outputs (huge
/// pages where the kernel offers them: a fresh result is written once).
fn zeros<T: OutputSample>(shape: &[usize]) -> ArrayD<T> {
    reproject::engine::zeroed_output(shape)
}

/// Refuses fresh result arrays (`bytes_per_pixel` bytes per output pixel, all of them
/// together) that would not fit in the memory available, before allocating them: an
/// `InvalidArgumentError` (a `ValueError`) naming the fix, instead of the process being
/// killed by the allocator.
pub(crate) fn check_memory(
    py: Python<'_>,
    shape: &[usize],
    bytes_per_pixel: usize,
) -> PyResult<()> {
    reproject::engine::check_output_memory(shape, bytes_per_pixel).map_err(|e| {
        new_err(
            py,
            Kind::InvalidArgument,
            format!(
                "{e}. From Python: pass output_array= and output_footprint= (e.g. numpy.memmap \
                 arrays on disk), or use return_type='dask' with a block_size"
            ),
        )
    })
}

/// Computes rows `rows.0..rows.1` and columns `cols.0..cols.1` of every leading plane of an
/// output of full shape `shape` (at least 2-D): one float64 array of shape `(2, *leading,
/// rows, columns)`, `[0]` the data and `[1]` the footprint. `compute` fills the data and
/// footprint of the block, with the GIL released; `what` names the window in the
/// `ShapeError` raised when it does not lie within the output plane.
pub(crate) fn compute_stacked_window<'py, F>(
    py: Python<'py>,
    shape: &[usize],
    what: &str,
    rows: (usize, usize),
    cols: (usize, usize),
    compute: F,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>>
where
    F: Send + FnOnce(&Block, ArrayViewMut3<f64>, ArrayViewMut3<f64>) -> reproject::Result<()>,
{
    let n = shape.len();
    let (ny, nx) = (shape[n - 2], shape[n - 1]);
    if rows.0 >= rows.1 || cols.0 >= cols.1 || rows.1 > ny || cols.1 > nx {
        return Err(new_err(
            py,
            Kind::Shape,
            format!(
                "{what} rows {}:{} and columns {}:{} do not lie within the {ny}x{nx} output",
                rows.0, rows.1, cols.0, cols.1
            ),
        ));
    }
    let block = Block {
        rows: rows.0..rows.1,
        cols: cols.0..cols.1,
    };
    let planes: usize = shape[..n - 2].iter().product();
    let (br, bc) = (block.rows.len(), block.cols.len());
    check_memory(py, &[planes, br, bc], 2 * std::mem::size_of::<f64>())?;
    let mut result = ndarray::Array4::<f64>::zeros((2, planes, br, bc));
    run_detached(py, || {
        let (data, footprint) = result.view_mut().split_at(Axis(0), 1);
        compute(
            &block,
            data.index_axis_move(Axis(0), 0),
            footprint.index_axis_move(Axis(0), 0),
        )
    })?;
    let mut full = vec![2];
    full.extend_from_slice(&shape[..n - 2]);
    full.extend([br, bc]);
    let result = result
        .into_shape_with_order(IxDyn(&full))
        .map_err(|e| new_err(py, Kind::Shape, e.to_string()))?;
    to_numpy(py, result)
}

/// Reprojects into arrays of `T` (`output`/`footprint` when given, fresh ones otherwise) and
/// returns `(data, footprint)`.
#[allow(clippy::too_many_arguments)]
fn reproject_typed<'py, T>(
    py: Python<'py>,
    array: &Bound<'py, PyUntypedArray>,
    geometry: &Geometry<'_>,
    shape_out: &[usize],
    options: &reproject::engine::Options,
    output: Option<&Bound<'py, PyAny>>,
    footprint: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>
where
    T: OutputSample + Element,
{
    let bytes = borrow_bytes(array)?;
    let source = bytes.source(py)?;
    let shape = full_shape(&bytes.shape, shape_out);
    let mut outputs = OutputArrays::from_arguments(py, output, footprint, &shape)?;
    // The arrays allocated here are written for the first time by the job (see
    // `Plan::with_fresh_outputs`), and so may be the ones given (`numpy.empty`:
    // `Plan::with_untouched_outputs`).
    let fresh_bytes = outputs.fresh_bytes();
    let given = outputs.given();
    let [data_view, fp_view] = outputs.views(py)?;
    let job = |cancel: Option<&AtomicBool>| {
        let plan = match geometry {
            Geometry::Wcs(wcs_in, wcs_out) => {
                Plan::new(&source, wcs_in, wcs_out, shape_out, options)?
            }
            Geometry::Positions(table) => {
                Plan::from_positions(&source, table.clone(), shape_out, options)?
            }
        };
        let given: Vec<&[T]> = [(given.0, &data_view), (given.1, &fp_view)]
            .into_iter()
            .filter(|(given, _)| *given)
            .filter_map(|(_, view)| view.as_slice_memory_order())
            .collect();
        let plan = plan
            .with_fresh_outputs(fresh_bytes as u64)
            .with_untouched_outputs(&given);
        let schedule = Schedule {
            cancel,
            ..Schedule::default()
        };
        plan.compute_into_with(data_view, fp_view, &schedule)
    };
    // Large jobs stop on Ctrl-C.
    run_for_size(py, shape.iter().product(), job)?;
    outputs.into_numpy(py)
}

/// The GPU the `device='cuda'` backend would use, as one line of text; raises
/// `DeviceUnavailableError` with the reason when there is none (no driver, no device, no
/// libnvrtc, kernels that do not build). The first call compiles the kernels (or loads them
/// from the on-disk cache).
#[pyfunction]
fn gpu_info(py: Python<'_>) -> PyResult<String> {
    run_detached(py, || reproject::gpu::gpu_info().map(|i| i.to_string()))
}

/// The canonical name of ``device`` ('cpu', 'auto', 'cuda', 'cuda:N', 'cuda:all'; 'gpu' and
/// any case accepted), parsed by the core's ``parse_device``; ``InvalidArgumentError`` (a
/// ``ValueError``) for anything else.
#[pyfunction]
fn parse_device(py: Python<'_>, device: &str) -> PyResult<String> {
    let (backend, devices) = options::parse_device(py, device)?;
    Ok(options::device_name(backend, devices))
}

/// Opens the GPUs ``device`` names ('cuda', 'cuda:N', 'cuda:all'; 'auto' as 'cuda') and
/// compiles (or loads) their kernels now, once per process, so that no job pays for it:
/// one line of text per device. ``[]`` for 'cpu'. ``DeviceUnavailableError`` with the reason
/// when a device cannot be used.
#[pyfunction]
fn warmup(py: Python<'_>, device: &str) -> PyResult<Vec<String>> {
    guard_panics(|| {
        let (backend, devices) = options::parse_device(py, device)?;
        if backend == reproject::engine::Backend::Cpu {
            return Ok(Vec::new());
        }
        run_detached(py, || reproject::gpu::warmup(devices))
    })
}

/// Compiles the GPU kernels for GPUs of architecture ``arch`` (``'sm_90'``, ...) into the
/// on-disk cache unless they are there, without a GPU (only libnvrtc): one line saying so and
/// where (the core's ``gpu::warm_build``). ``variant``: the NVRTC defines of a specialised
/// build to compile instead of the general one (what the compile helper is asked for).
/// ``InvalidArgumentError`` for an ``arch`` or defines that are not ones;
/// ``DeviceUnavailableError`` without libnvrtc.
#[pyfunction]
#[pyo3(signature = (arch, variant=None))]
fn compile_kernels(py: Python<'_>, arch: &str, variant: Option<&str>) -> PyResult<String> {
    guard_panics(|| run_detached(py, || reproject::gpu::warm_build(arch, variant)))
}

/// Makes ``program`` with ``args`` (and ``env`` added to the environment) the process that
/// compiles the GPU kernels this process would compile in the background (the core's
/// ``gpu::set_compile_helper``): the package sets its interpreter running
/// ``reproject_rs._compile_helper``, so that an interpreter that exits neither waits for a
/// kernel variant nor loses it. ``program=None`` compiles them on threads again.
#[pyfunction]
#[pyo3(signature = (program, args=Vec::new(), env=Vec::new()))]
fn set_compile_helper(program: Option<String>, args: Vec<String>, env: Vec<(String, String)>) {
    reproject::gpu::set_compile_helper(program.map(|program| {
        let helper = args
            .into_iter()
            .fold(reproject::gpu::CompileHelper::new(program), |h, a| h.arg(a));
        env.into_iter().fold(helper, |h, (k, v)| h.env(k, v))
    }));
}

/// Frees the GPU memory, page-locked host memory and streams the opened GPUs keep for the
/// next jobs (the core's ``release_kept_memory``); the next job allocates again.
#[pyfunction]
fn release_gpu_memory(py: Python<'_>) {
    py.detach(reproject::gpu::release_kept_memory)
}

/// Blocks until the GPU kernel variants this process compiles in the background are ready
/// (a job whose variant is not compiled yet runs the general kernel meanwhile): for
/// benchmarks that time the specialised kernels.
#[pyfunction]
fn wait_for_compilations(py: Python<'_>) {
    py.detach(reproject::gpu::wait_for_compilations)
}

/// For the interpreter's exit (the package registers it with ``atexit``): GPU kernel variants
/// queued to compile in the background give up, those compiling are waited for, so no compile
/// thread is inside NVRTC or the CUDA driver while they are torn down.
#[pyfunction]
fn stop_background_compilations(py: Python<'_>) {
    py.detach(reproject::gpu::stop_background_compilations)
}

/// Reprojects `array` from the WCS of `header_in` onto that of `header_out`, with bilinear
/// (or another order) interpolation, exactly as astropy reproject's ``reproject_interp``.
///
/// Parameters
/// ----------
/// array : numpy.ndarray
///     Input data, at least 2-D; any of f4 f8 i1 u1 b1 i2 u2 i4 u4 i8 u8 in either byte
///     order, any strides (read in place, never copied). Leading dimensions are independent
///     planes sharing one transform.
/// header_in, header_out : str
///     FITS header text (80-character cards, with or without newlines).
/// shape_out : sequence of int
///     (rows, columns), or the full shape with the input's leading dimensions.
/// order : str or int
///     'nearest-neighbor', 'bilinear' (default), 'biquadratic', 'bicubic', or 0-5.
/// roundtrip_coords : bool
///     Drop output pixels whose coordinates do not round-trip (default True).
/// block_size : (int, int) or None
///     Output block shape; None chooses one. Never changes a value.
/// threads : int
///     1 (default): serial; 0: every core; n: n threads. Never changes a value.
/// nan_policy : str
///     'propagate' (reproject's behaviour) or 'renormalize'.
/// precision : str
///     'reproject' (reproduce reproject's float32 rounding) or 'float64'.
/// output_array, output_footprint : numpy.ndarray, optional
///     C-contiguous native float64 or float32 arrays (both the same dtype) of the full output
///     shape, written in place and returned.
/// device : str
///     'auto' (default: the GPU when the job is large enough for it to pay and one can do
///     it, else the CPU), 'cpu', 'cuda' (the first GPU), 'cuda:N' (GPU N) or 'cuda:all'
///     (blocks spread over every GPU).
///
/// Returns
/// -------
/// (data, footprint) : numpy arrays of the full output shape (float64 unless output arrays
/// were given).
#[pyfunction]
#[pyo3(signature = (array, header_in, header_out, shape_out, *, order=None, roundtrip_coords=true,
    block_size=None, threads=1, nan_policy="propagate", precision="reproject",
    output_array=None, output_footprint=None, device="auto"))]
#[allow(clippy::too_many_arguments)]
fn reproject_interp<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyUntypedArray>,
    header_in: &str,
    header_out: &str,
    shape_out: Vec<usize>,
    order: Option<OrderArg>,
    roundtrip_coords: bool,
    block_size: Option<(usize, usize)>,
    threads: usize,
    nan_policy: &str,
    precision: &str,
    output_array: Option<&Bound<'py, PyAny>>,
    output_footprint: Option<&Bound<'py, PyAny>>,
    device: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    guard_panics(|| {
        // 'auto' | 'cpu' | 'cuda[:N|:all]': the engine falls back to the CPU for 'auto' only.
        let options = OptionArgs {
            block_size,
            threads,
            device,
            ..OptionArgs::serial(order, roundtrip_coords, nan_policy, precision)
        }
        .options(py)?;
        let wcs_in = parse_wcs(py, header_in, "input")?;
        let wcs_out = parse_wcs(py, header_out, "output")?;
        let geometry = Geometry::Wcs(&wcs_in, &wcs_out);
        reproject_outputs(
            py,
            array,
            &geometry,
            &shape_out,
            &options,
            output_array,
            output_footprint,
        )
    })
}

/// Reprojects `array` as `geometry` says into `output_array`/`output_footprint` (float64 or
/// float32, the same dtype) or fresh float64 arrays, and returns `(data, footprint)`.
#[allow(clippy::too_many_arguments)]
fn reproject_outputs<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyUntypedArray>,
    geometry: &Geometry<'_>,
    shape_out: &[usize],
    options: &reproject::engine::Options,
    output_array: Option<&Bound<'py, PyAny>>,
    output_footprint: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    // The output element type: that of output_array, else float64.
    let is_f32 = match output_array {
        None => false,
        Some(a) if a.cast::<PyArrayDyn<f64>>().is_ok() => false,
        Some(a) if a.cast::<PyArrayDyn<f32>>().is_ok() => true,
        Some(_) => {
            return Err(new_err(
                py,
                Kind::InvalidArgument,
                "output_array must be a native float64 or float32 numpy array",
            ))
        }
    };
    // The footprint takes the data's type.
    let (data, footprint) = (output_array, output_footprint);
    if is_f32 {
        reproject_typed::<f32>(py, array, geometry, shape_out, options, data, footprint)
    } else {
        reproject_typed::<f64>(py, array, geometry, shape_out, options, data, footprint)
    }
}

/// Computes one output block of a reprojection, for every leading plane: rows
/// ``row_start:row_stop`` and columns ``col_start:col_stop`` of the output plane.
///
/// The result is bit-identical to the same pixels of a whole :func:`reproject_interp` call
/// with the same arguments (and device). Every argument is a numpy array, a string or a
/// number, so the call pickles (dask.distributed, process pools). Each call prepares its own
/// engine plan (spline coefficients, GPU uploads): for many blocks of one reprojection, use
/// a ``LazyPlan`` (or ``return_type='dask'``, whose blocks share one plan per process).
///
/// Returns
/// -------
/// numpy.ndarray
///     float64 array of shape ``(2, *leading, rows, columns)``: ``[0]`` the data, ``[1]`` the
///     footprint.
///
/// Examples
/// --------
/// >>> import numpy as np
/// >>> from astropy.wcs import WCS
/// >>> from reproject_rs import reproject_block, reproject_interp
/// >>> wcs = WCS(naxis=2)
/// >>> wcs.wcs.ctype, wcs.wcs.cdelt = ["RA---TAN", "DEC--TAN"], [-0.001, 0.001]
/// >>> header = wcs.to_header_string()
/// >>> image = np.arange(64 * 48, dtype=float).reshape(64, 48)
/// >>> block = reproject_block(image, header, header, (64, 48), (32, 64), (16, 48))
/// >>> block.shape
/// (2, 32, 32)
/// >>> whole, _ = reproject_interp((image, wcs), wcs, shape_out=(64, 48))
/// >>> bool(np.array_equal(block[0], whole[32:64, 16:48]))
/// True
#[pyfunction]
#[pyo3(signature = (array, header_in, header_out, shape_out, rows, cols, *, order=None,
    roundtrip_coords=true, nan_policy="propagate", precision="reproject", device="auto"))]
#[allow(clippy::too_many_arguments)]
fn reproject_block<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyUntypedArray>,
    header_in: &str,
    header_out: &str,
    shape_out: Vec<usize>,
    rows: (usize, usize),
    cols: (usize, usize),
    order: Option<OrderArg>,
    roundtrip_coords: bool,
    nan_policy: &str,
    precision: &str,
    device: &str,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    guard_panics(|| {
        let options = OptionArgs {
            device,
            ..OptionArgs::serial(order, roundtrip_coords, nan_policy, precision)
        }
        .options(py)?;
        let wcs_in = parse_wcs(py, header_in, "input")?;
        let wcs_out = parse_wcs(py, header_out, "output")?;
        let bytes = borrow_bytes(array)?;
        let source = bytes.source(py)?;
        let shape = full_shape(&bytes.shape, &shape_out);
        let n = shape.len();
        if n < 2 {
            return Err(new_err(
                py,
                Kind::Shape,
                format!("too few dimensions in shape_out: {shape_out:?}"),
            ));
        }
        compute_stacked_window(py, &shape, "block", rows, cols, |block, data, fp| {
            let plan = Plan::new(&source, &wcs_in, &wcs_out, &shape_out, &options)?;
            plan.compute_block(block, data, fp)
        })
    })
}

/// Reprojects `array` with the input position of every output pixel given: ``xs`` (columns)
/// and ``ys`` (rows), float64 arrays of the output plane's shape (the last two dimensions of
/// ``shape_out``), NaN where an output pixel has no input position. The interpolation, edge
/// rule, NaN rule and footprint are :func:`reproject_interp`'s; the positions are used as
/// given (a round-trip check, if any, is already applied). ``device``: as for
/// :func:`reproject_interp`; the GPU kernels do not read position tables, so 'cuda' raises
/// ``DeviceUnavailableError`` and 'auto' computes on the CPU.
#[pyfunction]
#[pyo3(signature = (array, xs, ys, shape_out, *, order=None, block_size=None, threads=1,
    nan_policy="propagate", precision="reproject", output_array=None, output_footprint=None,
    device="auto"))]
#[allow(clippy::too_many_arguments)]
fn reproject_positions<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyUntypedArray>,
    xs: PyReadonlyArrayDyn<'py, f64>,
    ys: PyReadonlyArrayDyn<'py, f64>,
    shape_out: Vec<usize>,
    order: Option<OrderArg>,
    block_size: Option<(usize, usize)>,
    threads: usize,
    nan_policy: &str,
    precision: &str,
    output_array: Option<&Bound<'py, PyAny>>,
    output_footprint: Option<&Bound<'py, PyAny>>,
    device: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    guard_panics(|| {
        let options = OptionArgs {
            block_size,
            threads,
            device,
            ..OptionArgs::serial(order, false, nan_policy, precision)
        }
        .options(py)?;
        let n = shape_out.len();
        if n < 2 {
            return Err(new_err(
                py,
                Kind::Shape,
                format!("shape_out needs at least two dimensions, got {shape_out:?}"),
            ));
        }
        let plane = (shape_out[n - 2], shape_out[n - 1]);
        let flat = |a: &PyReadonlyArrayDyn<'py, f64>| a.as_array().iter().copied().collect();
        let table = PositionTable::new(plane, flat(&xs), flat(&ys)).map_err(|e| to_pyerr(py, e))?;
        let geometry = Geometry::Positions(table);
        reproject_outputs(
            py,
            array,
            &geometry,
            &shape_out,
            &options,
            output_array,
            output_footprint,
        )
    })
}

/// Checks that the engine can reproject data of ``shape_in`` from the WCS of ``header_in``
/// onto ``header_out`` with ``shape_out``, raising what :func:`reproject_interp` would raise
/// before computing anything (``UnsupportedError`` for a pair it does not implement).
#[pyfunction]
#[pyo3(signature = (header_in, header_out, shape_in, shape_out, *, order=None))]
fn check_plan(
    py: Python<'_>,
    header_in: &str,
    header_out: &str,
    shape_in: Vec<usize>,
    shape_out: Vec<usize>,
    order: Option<OrderArg>,
) -> PyResult<()> {
    guard_panics(|| {
        let options = OptionArgs::serial(order, true, "propagate", "reproject").options(py)?;
        let wcs_in = parse_wcs(py, header_in, "input")?;
        let wcs_out = parse_wcs(py, header_out, "output")?;
        run_detached(py, || {
            reproject::engine::check_plan(&wcs_in, &wcs_out, &shape_in, &shape_out, &options)
        })
    })
}

/// Parses FITS header text as the engine does and raises the engine's error if it cannot
/// use it (a `WcsError`, `UnsupportedError`, ...). Returns the number of WCS axes.
#[pyfunction]
fn check_header(py: Python<'_>, header: &str) -> PyResult<usize> {
    guard_panics(|| {
        Wcs::from_header_str(header)
            .map(|w| w.naxis())
            .map_err(|e| to_pyerr(py, e))
    })
}

/// Parses FITS header text as the engine does: `(naxis, (lng, lat))`, the number of WCS axes
/// and the 0-based indices of the celestial longitude and latitude axes (`None` without a
/// celestial pair); raises the engine's error if it cannot use the header.
#[pyfunction]
fn header_axes(py: Python<'_>, header: &str) -> PyResult<(usize, Option<(usize, usize)>)> {
    guard_panics(|| {
        Wcs::from_header_str(header)
            .map(|w| (w.naxis(), w.params().celestial_axes()))
            .map_err(|e| to_pyerr(py, e))
    })
}

#[pymodule(gil_used = false)]
mod _core {
    #[pymodule_export]
    use super::device::{DeviceMemory, DevicePlan};
    #[pymodule_export]
    use super::lazy::LazyPlan;
    #[pymodule_export]
    use super::mosaic::{background_corrections, reproject_and_coadd};
    #[pymodule_export]
    use super::optimal::optimal_celestial_wcs_header;
    #[pymodule_export]
    use super::positions::input_positions;
    #[pymodule_export]
    use super::{
        check_header, check_plan, compile_kernels, gpu_info, header_axes, parse_device,
        release_gpu_memory, reproject_block, reproject_interp, reproject_positions,
        set_compile_helper, stop_background_compilations, wait_for_compilations, warmup,
    };

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        super::errors::register(m)?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}

//! Device-resident reprojection: input and outputs in GPU memory (CuPy arrays, or anything
//! with `__cuda_array_interface__`), computed by the core's GPU backend without host copies.
//!
//! [`DevicePlan`] is made once per job (per process, for dask blocks) and computes any window
//! of the output; [`DeviceMemory`] is GPU memory for tests that stand in for CuPy. In CI both
//! run on the CUDA simulator (`REPROJECT_RS_CUDA_SIM=1`); the GPU parity suite
//! (`tests/gpu_parity.rs`) covers the core path on hardware.

use std::ops::Range;
use std::sync::Arc;

use numpy::PyUntypedArray;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use reproject::engine::blocks::Block;
use reproject::engine::Plan;
use reproject::gpu::{Backend, DeviceBuffer, DeviceImage};
use reproject::io::{parse_numpy_dtype, ImageSource, SampleType, StoredType};
use reproject::Error;

use crate::errors::{guard_panics, new_err, run_detached, Kind};
use crate::lazy::KeptArray;
use crate::options::{OptionArgs, OrderArg};
use crate::parse_wcs;

/// The shape and sample type of an input that lives on the GPU: enough for a plan of orders
/// 0 and 1, whose GPU path never reads pixels on the host.
struct DeviceShape {
    shape: Vec<usize>,
    sample: SampleType,
}

impl ImageSource for DeviceShape {
    fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn stored_type(&self) -> StoredType {
        StoredType {
            sample: self.sample,
            big_endian: false,
            scaled: false,
        }
    }

    fn read_window(
        &self,
        _plane: usize,
        _rows: Range<usize>,
        _cols: Range<usize>,
        _out: &mut [f64],
    ) -> reproject::Result<()> {
        Err(Error::GpuUnavailable(
            "a device-resident input can only be read by the GPU".into(),
        ))
    }
}

/// numpy's dtype string (`'<f4'`, `'|u1'`, ...) as a sample type the GPU kernels read: parsed
/// by the core's [`parse_numpy_dtype`] (the one parser of numpy dtypes, as for host arrays),
/// then limited to native byte order and the samples the kernels take (float32, float64,
/// uint8, int16, int32, int64; numpy bool is served as uint8, as on the host).
fn sample_of(dtype: &str) -> Option<SampleType> {
    use SampleType::{F32, F64, I16, I32, I64, U8};
    let (sample, order) = parse_numpy_dtype(dtype).ok()?;
    let read_by_kernels = matches!(sample, F32 | F64 | U8 | I16 | I32 | I64);
    (order.is_native() && read_by_kernels).then_some(sample)
}

/// A prepared device-resident reprojection: the plan (WCS set-up; for spline orders the
/// coefficients, made once on the device from the GPU input at the first block) for a GPU
/// input of one dtype and shape, whose output blocks are computed from and into GPU memory
/// (CuPy arrays, or anything with ``__cuda_array_interface__``) without host copies.
///
/// ``DevicePlan(dtype, shape, header_in, header_out, shape_out, order=None,
/// roundtrip_coords=True, nan_policy='propagate', precision='reproject', device='cuda',
/// host_array=None)``: ``dtype`` is numpy's dtype string of the GPU input (``'<f4'``, ...),
/// ``shape`` its shape; ``host_array`` (optional, never needed: no order reads pixels on the
/// host) may hold the same pixels on the host. The
/// GPU state is made here, so a GPU that cannot do the job raises ``DeviceUnavailableError``
/// now, not at the first block. ``device`` names the GPU the arrays live on ('auto' and
/// 'cuda' mean the first).
///
/// Every ``compute*`` method releases the GIL, may be called from any thread, and returns
/// once its outputs are written (the caller's earlier work on the input must be complete).
#[pyclass(frozen, module = "reproject_rs._core")]
pub struct DevicePlan {
    plan: Plan<'static>,
    /// The input's sample type, shape and row pitch (elements).
    sample: SampleType,
    shape: Vec<usize>,
}

#[pymethods]
impl DevicePlan {
    #[new]
    #[pyo3(signature = (dtype, shape, header_in, header_out, shape_out, order=None,
        roundtrip_coords=true, nan_policy="propagate", precision="reproject", device="cuda",
        host_array=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        dtype: &str,
        shape: Vec<usize>,
        header_in: &str,
        header_out: &str,
        shape_out: Vec<usize>,
        order: Option<OrderArg>,
        roundtrip_coords: bool,
        nan_policy: &str,
        precision: &str,
        device: &str,
        host_array: Option<&Bound<'_, PyUntypedArray>>,
    ) -> PyResult<DevicePlan> {
        guard_panics(|| {
            let mut options = OptionArgs {
                device,
                ..OptionArgs::serial(order, roundtrip_coords, nan_policy, precision)
            }
            .options(py)?;
            if options.backend == Backend::Cpu {
                return Err(new_err(
                    py,
                    Kind::InvalidArgument,
                    "a device-resident reprojection needs a GPU device, not 'cpu'",
                ));
            }
            options.backend = Backend::Cuda;
            let sample = sample_of(dtype).ok_or_else(|| {
                new_err(
                    py,
                    Kind::DeviceUnavailable,
                    format!("GPU arrays of dtype {dtype} are not supported by the GPU kernels"),
                )
            })?;
            if shape.len() < 2 {
                return Err(new_err(
                    py,
                    Kind::InvalidArgument,
                    "device arrays must be at least 2-D",
                ));
            }
            let wcs_in = parse_wcs(py, header_in, "input")?;
            let wcs_out = parse_wcs(py, header_out, "output")?;
            let source: Arc<dyn ImageSource> = match host_array {
                Some(array) => {
                    let kept = KeptArray::new(array)?;
                    if kept.shape() != shape.as_slice() {
                        return Err(new_err(
                            py,
                            Kind::Shape,
                            format!(
                                "host_array has shape {:?}, the device input {shape:?}",
                                kept.shape()
                            ),
                        ));
                    }
                    Arc::new(kept)
                }
                None => Arc::new(DeviceShape {
                    shape: shape.clone(),
                    sample,
                }),
            };
            let plan = run_detached(py, || {
                let plan =
                    Plan::with_shared_source(source, &wcs_in, &wcs_out, &shape_out, &options)?;
                plan.prepare_on_device()?;
                Ok(plan)
            })?;
            Ok(DevicePlan {
                plan,
                sample,
                shape,
            })
        })
    }

    /// Computes the output rows ``row_start:row_stop`` and columns ``col_start:col_stop``
    /// (every leading plane) from the C-contiguous device input at ``ptr`` into the device
    /// outputs ``data_ptr`` and ``footprint_ptr``: each ``(*leading, rows, columns)``, C
    /// order, of float64 (``out_f64``) or float32.
    #[pyo3(signature = (ptr, rows, cols, data_ptr, footprint_ptr, out_f64))]
    #[allow(clippy::too_many_arguments)]
    fn compute_window(
        &self,
        py: Python<'_>,
        ptr: u64,
        rows: (usize, usize),
        cols: (usize, usize),
        data_ptr: u64,
        footprint_ptr: u64,
        out_f64: bool,
    ) -> PyResult<()> {
        guard_panics(|| {
            let image = DeviceImage {
                ptr,
                sample: self.sample,
                big_endian: false,
                pitch: self.shape[self.shape.len() - 1],
            };
            let block = Block {
                rows: rows.0..rows.1,
                cols: cols.0..cols.1,
            };
            run_detached(py, || {
                // SAFETY: the caller passes live, C-contiguous device arrays of the plan's
                // input shape and of the window's output shape, on the plan's device (the
                // Python wrapper allocates the outputs with CuPy and synchronises first).
                unsafe {
                    self.plan.compute_block_on_device(
                        &block,
                        &image,
                        data_ptr,
                        footprint_ptr,
                        out_f64,
                    )
                }
            })
        })
    }

    /// The whole output (``compute_window`` of every row and column).
    fn compute(
        &self,
        py: Python<'_>,
        ptr: u64,
        data_ptr: u64,
        footprint_ptr: u64,
        out_f64: bool,
    ) -> PyResult<()> {
        let (ny, nx) = self.plan.plane_shape_out();
        self.compute_window(py, ptr, (0, ny), (0, nx), data_ptr, footprint_ptr, out_f64)
    }
}

/// GPU memory of the backend's first device (or of the CUDA simulator under
/// ``REPROJECT_RS_CUDA_SIM``), for tests that stand in for CuPy: ``DeviceMemory(data)``
/// copies ``data`` (bytes) there; ``ptr`` is its device address; ``to_bytes()`` copies it
/// back. Freed when collected.
#[pyclass(frozen, module = "reproject_rs._core")]
pub struct DeviceMemory {
    buffer: DeviceBuffer,
}

#[pymethods]
impl DeviceMemory {
    #[new]
    fn new(py: Python<'_>, data: &[u8]) -> PyResult<DeviceMemory> {
        let buffer = run_detached(py, || DeviceBuffer::from_host(data))?;
        Ok(DeviceMemory { buffer })
    }

    /// The device address.
    #[getter]
    fn ptr(&self) -> u64 {
        self.buffer.device_ptr()
    }

    /// Size in bytes.
    fn __len__(&self) -> usize {
        self.buffer.len()
    }

    /// The bytes, copied back to the host.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = run_detached(py, || self.buffer.to_host())?;
        Ok(PyBytes::new(py, &bytes))
    }
}

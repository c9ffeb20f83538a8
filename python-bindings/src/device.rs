//! Device-resident reprojection: input and outputs in GPU memory (CuPy arrays, or anything
//! with `__cuda_array_interface__`), computed by the core's GPU backend without host copies.
//!
//! Untested on hardware in this build's CI (no GPU there); the GPU parity suite
//! (`tests/gpu_parity.rs`) covers the core path it calls.

use std::ops::Range;

use numpy::PyUntypedArray;
use pyo3::prelude::*;
use reproject::engine::Plan;
use reproject::gpu::{Backend, DeviceImage};
use reproject::io::{parse_numpy_dtype, ImageSource, SampleType, StoredType};
use reproject::Error;

use crate::arrays::borrow_bytes;
use crate::errors::{guard_panics, new_err, run_detached, to_pyerr, Kind};
use crate::options::{OptionArgs, OrderArg};

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

/// Reprojects a C-contiguous GPU array (device pointer `ptr`, numpy dtype string `dtype`,
/// `shape`) into GPU outputs `data_ptr` and `footprint_ptr` (float64 when `out_f64`, else
/// float32; full output shape `shape_out`, C order), on the GPU only.
///
/// For spline orders (2-5) `host_array` must hold the same pixels on the host (the spline
/// coefficients are computed there). Raises `DeviceUnavailableError` without a usable GPU or
/// for a job the kernels do not cover.
#[pyfunction]
#[pyo3(signature = (ptr, dtype, shape, header_in, header_out, shape_out, data_ptr, footprint_ptr,
    out_f64, *, order=None, roundtrip_coords=true, nan_policy="propagate", precision="reproject",
    host_array=None))]
#[allow(clippy::too_many_arguments)]
pub fn reproject_device<'py>(
    py: Python<'py>,
    ptr: u64,
    dtype: &str,
    shape: Vec<usize>,
    header_in: &str,
    header_out: &str,
    shape_out: Vec<usize>,
    data_ptr: u64,
    footprint_ptr: u64,
    out_f64: bool,
    order: Option<OrderArg>,
    roundtrip_coords: bool,
    nan_policy: &str,
    precision: &str,
    host_array: Option<&Bound<'py, PyUntypedArray>>,
) -> PyResult<()> {
    guard_panics(|| {
        let mut options =
            OptionArgs::serial(order, roundtrip_coords, nan_policy, precision).options(py)?;
        options.backend = Backend::Cuda;
        let sample = sample_of(dtype).ok_or_else(|| {
            new_err(
                py,
                Kind::DeviceUnavailable,
                format!("GPU arrays of dtype {dtype} are not supported by the GPU kernels"),
            )
        })?;
        if shape.len() < 2 || ptr == 0 || data_ptr == 0 || footprint_ptr == 0 {
            return Err(new_err(
                py,
                Kind::InvalidArgument,
                "device arrays must be at least 2-D and allocated",
            ));
        }
        let wcs_in =
            reproject::wcs::Wcs::from_header_str(header_in).map_err(|e| to_pyerr(py, e))?;
        let wcs_out =
            reproject::wcs::Wcs::from_header_str(header_out).map_err(|e| to_pyerr(py, e))?;
        let image = DeviceImage {
            ptr,
            sample,
            big_endian: false,
            pitch: shape[shape.len() - 1],
        };
        let host = host_array.map(borrow_bytes).transpose()?;
        let host_source = host.as_ref().map(|b| b.source(py)).transpose()?;
        let device_source = DeviceShape {
            shape: shape.clone(),
            sample,
        };
        if options.order.needs_prefilter() && host_source.is_none() {
            return Err(new_err(
                py,
                Kind::InvalidArgument,
                "spline orders need host_array (the same pixels on the host)",
            ));
        }
        run_detached(py, || {
            let source: &dyn ImageSource = match &host_source {
                Some(s) => s,
                None => &device_source,
            };
            let plan = Plan::new(source, &wcs_in, &wcs_out, &shape_out, &options)?;
            // SAFETY: the caller passes live, C-contiguous device arrays of the shapes given
            // (the Python wrapper allocates the outputs with CuPy and synchronises first).
            unsafe { plan.compute_on_device(&image, data_ptr, footprint_ptr, out_f64) }
        })
    })
}

//! What of each input plane the kernels read (stored samples they decode, float64 values, or
//! the CPU's spline coefficients), and so what of it crosses the bus.

use crate::engine::kernel_params::InputDecoding;
use crate::engine::Plan;
use crate::io::{RawPlane, SampleType};

/// Where the kernel's input comes from for one plane.
#[derive(Clone, Copy)]
pub(super) enum Input<'a> {
    /// The stored samples, uploaded as they are, with the kernel's type code.
    Raw(RawPlane<'a>, i32),
    /// f64 values read (and rounded) as the CPU reads them: for orders ≥ 2, the values the
    /// spline prefilter starts from (filtered on the device once resident).
    Values,
    /// The CPU's spline coefficients (orders ≥ 2 in window mode: the device prefilter needs
    /// whole planes).
    Coefficients,
}

impl Input<'_> {
    pub(super) fn elem(&self) -> usize {
        match self {
            Input::Raw(r, _) => crate::io::sample_size(r.sample),
            Input::Values | Input::Coefficients => 8,
        }
    }

    /// (input_type, big_endian) kernel arguments.
    pub(super) fn kernel_type(&self) -> (i32, i32) {
        match self {
            Input::Raw(r, t) => (*t, i32::from(r.big_endian)),
            Input::Values | Input::Coefficients => (1, 0),
        }
    }
}

/// The kernel's `input_type` code of a sample type it reads directly.
pub(crate) fn input_type(sample: SampleType) -> Option<i32> {
    match sample {
        SampleType::F32 => Some(0),
        SampleType::F64 => Some(1),
        SampleType::U8 => Some(2),
        SampleType::I16 => Some(3),
        SampleType::I32 => Some(4),
        SampleType::I64 => Some(5),
        _ => None,
    }
}

/// The input of `plane` for kernels that decode stored samples with `decoding`: the stored
/// samples when they are of a type the kernels read and decode that way, else values.
pub(super) fn input_of<'a>(plan: &'a Plan, plane: usize, decoding: &InputDecoding) -> Input<'a> {
    if plan.options.order.needs_prefilter() {
        return Input::Values;
    }
    stored_input(plan, plane, decoding)
}

/// The stored samples of `plane` when they are of a type the kernels read and their decoding
/// is `decoding`, else values.
fn stored_input<'a>(plan: &'a Plan, plane: usize, decoding: &InputDecoding) -> Input<'a> {
    match plan.source.encoded_plane(plane) {
        Some((raw, d)) if d == *decoding => match input_type(raw.sample) {
            Some(t) => Input::Raw(raw, t),
            None => Input::Values,
        },
        _ => Input::Values,
    }
}

/// What of input plane `plane` crosses the bus to the resident planes: what the kernels read
/// ([`input_of`]), except for the spline orders, whose plain stored samples (no scaling, no blank
/// value) go up as they are and become the prefilter's values on the device
/// ([`SplineSamples`](crate::gpu::driver::SplineSamples): half the bytes of float64 values for
/// float32 inputs).
pub(super) fn sent_of<'a>(plan: &'a Plan, plane: usize, decoding: &InputDecoding) -> Input<'a> {
    if plan.options.order.needs_prefilter() {
        stored_input(plan, plane, &InputDecoding::default())
    } else {
        input_of(plan, plane, decoding)
    }
}

/// The decoding the kernels apply to the input (FITS BZERO/BSCALE and BLANK, decoded on the
/// device): the source's, when every plane is uploaded as stored samples with that same
/// decoding (orders 0 and 1); none otherwise, and the planes not plain go up as values.
pub(super) fn kernel_decoding(plan: &Plan) -> InputDecoding {
    let plain = InputDecoding::default();
    if plan.options.order.needs_prefilter() {
        return plain;
    }
    let mut common = None;
    for plane in 0..plan.planes_in {
        match plan.source.encoded_plane(plane) {
            Some((raw, d)) if input_type(raw.sample).is_some() && common.is_none_or(|c| c == d) => {
                common = Some(d)
            }
            _ => return plain,
        }
    }
    common.unwrap_or(plain)
}

/// The bytes of input the executor would upload for `plan`: every plane, as sent (stored
/// samples the kernels decode, or float64 values or spline coefficients).
pub(crate) fn upload_bytes(plan: &Plan) -> u64 {
    let decoding = kernel_decoding(plan);
    let (ny, nx) = plan.plane_shape_in;
    (0..plan.planes_in)
        .map(|p| (ny * nx * sent_of(plan, p, &decoding).elem()) as u64)
        .sum()
}

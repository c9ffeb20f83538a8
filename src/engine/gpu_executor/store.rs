//! A block's values from the page-locked buffer into the caller's outputs, with the footprint
//! derived from them on the host.

use ndarray::{ArrayViewMut3, Axis};

use crate::engine::executor::BlockOut;
use crate::engine::streaming::{self, store_f32_row, store_f64_row, StreamedSample};
use crate::engine::OutputSample;

/// Copies a compact block of kernel values (rows of `width` float64 values when `wire_f64`,
/// else float32) into plane `plane` of the block views, converted to `T` (float32 values widen
/// exactly), with the footprint derived from them as the kernel derives it (1 where the value
/// is not NaN, else 0), so that only the values cross the bus.
pub(super) fn store<T: OutputSample + StreamedSample>(
    values: &[u8],
    wire_f64: bool,
    data: &mut ArrayViewMut3<T>,
    fp: &mut ArrayViewMut3<T>,
    plane: usize,
    width: usize,
) {
    let data = data.index_axis_mut(Axis(0), plane);
    let fp = fp.index_axis_mut(Axis(0), plane);
    if wire_f64 {
        store_rows(as_wire::<f64>(values), data, fp, width, store_f64_row);
    } else {
        store_rows(as_wire::<f32>(values), data, fp, width, store_f32_row);
    }
    streaming::finish();
}

/// Results in the host buffer as `V` (page-locked buffers are page-aligned).
fn as_wire<V: Copy>(bytes: &[u8]) -> &[V] {
    // SAFETY: any bit pattern is a valid float; align_to leaves what is not aligned aside.
    let (head, values, _) = unsafe { bytes.align_to::<V>() };
    assert!(head.is_empty(), "host buffers are aligned");
    values
}

/// [`store`] row by row: `row` where the views' rows are contiguous (streaming stores, see
/// [`streaming`]), the same conversion one element at a time elsewhere.
fn store_rows<V: Copy, T>(
    values: &[V],
    mut data: ndarray::ArrayViewMut2<T>,
    mut fp: ndarray::ArrayViewMut2<T>,
    width: usize,
    row: fn(&[V], &mut [T], &mut [T]),
) {
    for (r, (mut d, mut f)) in data.outer_iter_mut().zip(fp.outer_iter_mut()).enumerate() {
        let src = &values[r * width..(r + 1) * width];
        match (d.as_slice_mut(), f.as_slice_mut()) {
            (Some(d), Some(f)) => row(src, d, f),
            _ => {
                // A strided view: through contiguous rows of one element each.
                for ((o, f), &v) in d.iter_mut().zip(f.iter_mut()).zip(src) {
                    row(&[v], std::slice::from_mut(o), std::slice::from_mut(f));
                }
            }
        }
    }
}

/// A block no output pixel of which maps into the input: NaN values, zero footprint.
pub(super) fn fill_empty(out: &mut BlockOut<'_>, plane: usize) {
    match out {
        BlockOut::F64(d, f) => {
            d.index_axis_mut(Axis(0), plane).fill(f64::NAN);
            f.index_axis_mut(Axis(0), plane).fill(0.0);
        }
        BlockOut::F32(d, f) => {
            d.index_axis_mut(Axis(0), plane).fill(f32::NAN);
            f.index_axis_mut(Axis(0), plane).fill(0.0);
        }
    }
}

//! The CPU executor's block computation ([`Plan::compute_block_on_cpu`]): coordinates of the
//! block, the input window covering every tap, scipy-exact sampling row by row, each row stored
//! with its footprint while it is in cache.

use std::cell::RefCell;

use ndarray::{ArrayView2, ArrayViewMut3, Axis};

use super::blocks::Block;
use super::memory::check_working_memory;
use super::precision::Rounding;
use super::{OutputSample, Plan};
use crate::error::Result;
use crate::interp::{MaskedSpline, NanPolicy, Order, Plane, Sample, Window};

/// Per-thread working memory of [`Plan::compute_block`].
#[derive(Default)]
struct Scratch {
    xs: Vec<f64>,
    ys: Vec<f64>,
    window: Vec<f64>,
    /// The window of a float32 input, as stored (orders 0 and 1).
    window32: Vec<f32>,
    raw: Vec<f64>,
    mask: Vec<f64>,
    values: Vec<f64>,
    /// Accumulator along a third axis.
    sum: Vec<f64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The points of a block (`ys`, `xs`: rows of `width` points) and a one-row buffer for
/// their samples.
struct BlockRows<'s> {
    ys: &'s [f64],
    xs: &'s [f64],
    values: &'s mut Vec<f64>,
    width: usize,
}

impl BlockRows<'_> {
    /// Samples the block row by row with `sample(ys, xs, values)`, handing each row to
    /// `store(row, values)`.
    fn sample(
        &mut self,
        mut sample: impl FnMut(&[f64], &[f64], &mut [f64]),
        store: &mut impl FnMut(usize, &[f64]),
    ) {
        let width = self.width;
        self.values.resize(width, 0.0);
        let rows = self.ys.chunks_exact(width).zip(self.xs.chunks_exact(width));
        for (r, (ys, xs)) in rows.enumerate() {
            sample(ys, xs, self.values);
            store(r, self.values);
        }
    }

    /// [`sample`](BlockRows::sample) of raw values (orders 0 and 1).
    fn sample_raw<S: Sample>(
        &mut self,
        p: &Plane<'_, S>,
        order: Order,
        policy: NanPolicy,
        store: &mut impl FnMut(usize, &[f64]),
    ) {
        self.sample(
            |ys, xs, values| match policy {
                NanPolicy::Propagate => p.sample_many(order, ys, xs, values),
                NanPolicy::Renormalize => p.sample_many_renormalized(order, ys, xs, values),
            },
            store,
        )
    }
}

/// How a block's rows are stored: results (rounded as `rounding` says) and their footprint,
/// 1 where the value is not NaN, 0 where it is.
struct RowStore {
    rounding: Rounding,
    /// Past the caches ([`OutputSample::store_row`]; [`OutputSample::finish_rows`] must
    /// follow before the block is done): each output row is written once and not read back
    /// here. On the development machine (2 threads, three rounds alternating with a build
    /// storing through the caches, `python-bindings/benchmarks/cpu_stores.py`) an 8192²
    /// bilinear call took 275-296 ms instead of 313-353 into fresh float64 outputs and
    /// 186-191 instead of 206-229 into reused float32 ones.
    /// Else through them, for plans whose blocks are read right away
    /// ([`Plan::with_outputs_read_back`]).
    streamed: bool,
    /// The rounded row, when results are rounded.
    rounded: Vec<f64>,
}

impl RowStore {
    fn write<T: OutputSample>(&mut self, values: &[f64], out: &mut [T], fp: &mut [T]) {
        let values = if self.rounding.rounds_results() {
            let rounding = self.rounding;
            self.rounded.clear();
            self.rounded
                .extend(values.iter().map(|&v| rounding.round_result(v)));
            &self.rounded[..]
        } else {
            values
        };
        if self.streamed {
            T::store_row(values, out, fp);
        } else {
            for ((o, f), &v) in out.iter_mut().zip(fp.iter_mut()).zip(values) {
                *o = T::from_f64(v);
                *f = T::from_f64(if v.is_nan() { 0.0 } else { 1.0 });
            }
        }
    }
}

/// Copies window `w` of `plane` into `out` (row-major).
fn copy_window(plane: ArrayView2<f64>, w: &Window, out: &mut Vec<f64>) {
    out.clear();
    for row in plane
        .slice(ndarray::s![w.rows.clone(), w.cols.clone()])
        .outer_iter()
    {
        match row.as_slice() {
            Some(values) => out.extend_from_slice(values),
            None => out.extend(row.iter()),
        }
    }
}

impl Plan<'_> {
    /// The CPU engine's computation of one block ([`CpuExecutor`](super::executor::CpuExecutor)),
    /// with the checks of [`Plan::compute_block`].
    pub fn compute_block_on_cpu<T: OutputSample>(
        &self,
        block: &Block,
        mut data: ArrayViewMut3<T>,
        mut footprint: ArrayViewMut3<T>,
    ) -> Result<()> {
        self.check_block(block, Some((data.shape(), footprint.shape())))?;
        if block.is_empty() {
            return Ok(());
        }
        // Coordinates and values of every pixel of the block, per thread.
        check_working_memory(block.len().saturating_mul(4 * 8), || {
            let (r, c) = (block.rows.len(), block.cols.len());
            (
                format!("a block of {r}x{c} output pixels"),
                "use a smaller block_size",
            )
        })?;
        let result = SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            let n = block.len();
            scratch.xs.resize(n, 0.0);
            scratch.ys.resize(n, 0.0);
            let bounds = self
                .coords
                .block_coords(block, &mut scratch.xs, &mut scratch.ys);
            let window = bounds.map(|b| self.window_for(b));
            let width = block.cols.len();
            let rounding = self.rounding;
            for plane in 0..self.planes {
                let mut data = data.index_axis_mut(Axis(0), plane);
                let mut footprint = footprint.index_axis_mut(Axis(0), plane);
                // Each row is stored as soon as it is sampled, while it is in L1 cache (and
                // the stores drain while the next row is sampled).
                let mut rows = RowStore {
                    rounding,
                    streamed: self.streams_outputs(),
                    rounded: Vec::new(),
                };
                let mut store = |r: usize, values: &[f64]| {
                    let (Some(out), Some(fp)) = (
                        data.row_mut(r).into_slice(),
                        footprint.row_mut(r).into_slice(),
                    ) else {
                        unreachable!("block rows of a C-order output are contiguous");
                    };
                    rows.write(values, out, fp);
                };
                let itself = [(plane, 1.0)];
                let taps = match (&window, &self.spectral) {
                    (None, _) => None,
                    (Some(_), None) => Some(&itself[..]),
                    (Some(_), Some(spectral)) => spectral.taps[plane].as_deref(),
                };
                match (&window, taps) {
                    (Some(w), Some(&[(p, _)])) => {
                        self.sample_plane(p, w, width, scratch, &mut store)?
                    }
                    (Some(w), Some(taps)) => {
                        // Weighted sum of the input planes' samples along the third axis
                        // (NaN * 0 stays NaN, as in scipy).
                        scratch.sum.clear();
                        scratch.sum.resize(n, 0.0);
                        for &(p, weight) in taps {
                            let mut sum = std::mem::take(&mut scratch.sum);
                            self.sample_plane(p, w, width, scratch, &mut |r, values| {
                                for (acc, v) in sum[r * width..].iter_mut().zip(values) {
                                    *acc += weight * v;
                                }
                            })?;
                            scratch.sum = sum;
                        }
                        for (r, values) in scratch.sum.chunks_exact(width).enumerate() {
                            store(r, values);
                        }
                    }
                    _ => {
                        scratch.values.clear();
                        scratch.values.resize(width, f64::NAN);
                        for r in 0..block.rows.len() {
                            store(r, &scratch.values);
                        }
                    }
                }
            }
            Ok(())
        });
        // The rows' streaming stores are done before the block is (and another thread reads
        // it), whatever the result.
        T::finish_rows();
        result
    }

    /// Samples input plane `plane` at the block's coordinates (`s.ys`, `s.xs`, rows of
    /// `width`), row by row, handing each row's values to `store(row, values)`.
    fn sample_plane<F: FnMut(usize, &[f64])>(
        &self,
        plane: usize,
        w: &Window,
        width: usize,
        s: &mut Scratch,
        store: &mut F,
    ) -> Result<()> {
        let (ny, nx) = self.plane_shape_in;
        let order = self.options.order;
        let policy = self.options.nan_policy;
        let (rows, cols) = (w.rows.clone(), w.cols.clone());
        let len = rows.len() * cols.len();
        let mut points = BlockRows {
            ys: &s.ys,
            xs: &s.xs,
            values: &mut s.values,
            width,
        };
        match self.coefficients()? {
            None => {
                check_working_memory(len.saturating_mul(8), || {
                    (
                        format!("the {}x{} input window of a block", rows.len(), cols.len()),
                        "use a smaller block_size",
                    )
                })?;
                // Float32 samples are sampled as stored (the same values, half the bytes).
                let as_f32 = !self.rounding.rounds_values()
                    && self.source.raw_plane(plane).is_some_and(|raw| {
                        raw.read_f32_window(nx, rows.clone(), cols.clone(), &mut s.window32)
                    });
                if as_f32 {
                    let p = Plane::new(&s.window32, rows, cols, ny, nx)?;
                    points.sample_raw(&p, order, policy, store);
                } else {
                    s.window.resize(len, 0.0);
                    self.read_values(plane, rows.clone(), cols.clone(), &mut s.window)?;
                    let p = Plane::new(&s.window, rows, cols, ny, nx)?;
                    points.sample_raw(&p, order, policy, store);
                }
            }
            Some(c) => {
                copy_window(c.planes.plane(plane), w, &mut s.window);
                let coeffs = Plane::new(&s.window, rows.clone(), cols.clone(), ny, nx)?;
                match &c.masks {
                    Some(masks) if c.masked[plane] => {
                        copy_window(masks.plane(plane), w, &mut s.mask);
                        s.raw.resize(len, 0.0);
                        self.read_values(plane, rows.clone(), cols.clone(), &mut s.raw)?;
                        let mask = Plane::new(&s.mask, rows.clone(), cols.clone(), ny, nx)?;
                        let raw = Plane::new(&s.raw, rows, cols, ny, nx)?;
                        let spline = MaskedSpline::new(coeffs, mask, raw)?;
                        points.sample(|y, x, v| spline.sample_many(order, y, x, v), store);
                    }
                    _ => points.sample(|y, x, v| coeffs.sample_many(order, y, x, v), store),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Precision;
    use crate::io::{SampleType, StoredType};

    /// Rows stored past the caches hold the bits of rows stored one by one: NaN payloads,
    /// infinities, rounded results, both output types, rows starting off a 16-byte boundary.
    #[test]
    fn streamed_rows_are_the_rows_stored_one_by_one() {
        let payload = f64::from_bits(0x7ff8_0000_dead_beef);
        let values: Vec<f64> = (0..37)
            .map(|i| match i % 7 {
                0 => f64::NAN,
                1 => payload,
                2 => f64::INFINITY,
                3 => -0.0,
                4 => 1e300,
                _ => i as f64 * 0.1 + 1.0 / 3.0,
            })
            .collect();
        let float32 = StoredType {
            sample: SampleType::F32,
            big_endian: false,
            scaled: false,
        };
        for order in [Order::NearestNeighbor, Order::Bicubic] {
            let rounding = Rounding::new(Precision::Reproject, float32, order);
            let store = |streamed| RowStore {
                rounding,
                streamed,
                rounded: Vec::new(),
            };
            for skip in 0..3 {
                let n = values.len() - skip;
                let (mut a64, mut b64) = (vec![7.0f64; 2 * n], vec![7.0f64; 2 * n]);
                let (mut a32, mut b32) = (vec![7.0f32; 2 * n], vec![7.0f32; 2 * n]);
                {
                    let (d, f) = a64.split_at_mut(n);
                    store(true).write(&values[skip..], d, f);
                    let (d, f) = b64.split_at_mut(n);
                    store(false).write(&values[skip..], d, f);
                    let (d, f) = a32.split_at_mut(n);
                    store(true).write(&values[skip..], d, f);
                    let (d, f) = b32.split_at_mut(n);
                    store(false).write(&values[skip..], d, f);
                }
                f64::finish_rows();
                let bits64 = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let bits32 = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits64(&a64), bits64(&b64), "{order:?}, skip {skip}");
                assert_eq!(bits32(&a32), bits32(&b32), "{order:?}, skip {skip}");
            }
        }
    }
}

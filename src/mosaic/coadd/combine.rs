//! Combining the inputs over the output's blocks: each input's samples added into a block
//! (less its correction), then the means divided, the medians and clipped means taken.

use ndarray::{s, ArrayView3, ArrayViewMut3, ArrayViewMutD};
use rayon::prelude::*;

use super::cache::{with_rows, Cache};
use super::options::CorrectionForm;
use super::prepared::Prepared;
use super::{Combine, Correction, MosaicOptions, Watch, MOSAIC_BLOCK};
use crate::engine::blocks::Block;
use crate::engine::in_block;
use crate::error::{Error, Result};
use crate::mosaic::background::median;
use crate::mosaic::device::DeviceCombiner;
use crate::mosaic::pair_median::{row_of, Row};

/// Combines every output block of `window` (in parallel) into `data` and `footprint` (the
/// window's shape), then blanks the pixels no input covers.
pub(super) fn combine_blocks(
    prepared: &[(usize, Prepared)],
    corrections: &[Correction],
    data: ArrayViewMutD<f64>,
    footprint: ArrayViewMutD<f64>,
    window: &Block,
    options: &MosaicOptions,
    watch: Watch<'_>,
) -> Result<()> {
    let (ny, nx) = (window.rows.len(), window.cols.len());
    let planes = data.len() / (ny * nx).max(1);
    let contiguous =
        || Error::ShapeMismatch("the output arrays must be contiguous (C order)".into());
    let mut data = data
        .into_shape_with_order((planes, ny, nx))
        .map_err(|_| contiguous())?;
    let mut footprint = footprint
        .into_shape_with_order((planes, ny, nx))
        .map_err(|_| contiguous())?;
    let size = options
        .reprojection
        .block_size
        .unwrap_or((MOSAIC_BLOCK, MOSAIC_BLOCK));
    let work = crate::engine::schedule::cut(data.view_mut(), footprint.view_mut(), size);
    let total = work.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    // On the GPU when the inputs are sampled there (and the combine mode allows).
    let device = DeviceCombiner::new(prepared, options.combine);
    let run = |(index, (block, mut d, mut f)): (
        usize,
        (Block, ArrayViewMut3<f64>, ArrayViewMut3<f64>),
    )| {
        watch.check("while its blocks were combined")?;
        // The block in the whole output's pixels.
        let block = Block {
            rows: window.rows.start + block.rows.start..window.rows.start + block.rows.end,
            cols: window.cols.start + block.cols.start..window.cols.start + block.cols.end,
        };
        let on_device = match &device {
            Some(device) => device.combine_block(
                prepared,
                corrections,
                &block,
                index,
                d.view_mut(),
                f.view_mut(),
                options,
            ),
            None => Ok(false),
        };
        match on_device {
            Ok(true) => Ok(()),
            Ok(false) => combine_block(prepared, corrections, &block, d, f, options),
            Err(e) => Err(e),
        }
        .map_err(|e| in_block(e, &block))?;
        (watch.progress)(
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
        );
        Ok(())
    };
    options
        .reprojection
        .parallel
        .install(|| work.into_par_iter().enumerate().try_for_each(run))?
}

/// Combines the inputs covering `block` into its views.
fn combine_block(
    prepared: &[(usize, Prepared)],
    corrections: &[Correction],
    block: &Block,
    mut data: ArrayViewMut3<f64>,
    mut footprint: ArrayViewMut3<f64>,
    options: &MosaicOptions,
) -> Result<()> {
    let combine = options.combine;
    data.fill(initial_value(combine));
    footprint.fill(0.0);
    // Median and clipped: every covering input's (value, weight) per pixel.
    let stacked = matches!(combine, Combine::Median | Combine::Clipped { .. });
    let mut stack: Vec<Vec<(f64, f64)>> = if stacked {
        vec![Vec::new(); data.len()]
    } else {
        Vec::new()
    };
    let mut target = Target {
        block,
        data: data.view_mut(),
        footprint: footprint.view_mut(),
        stack: &mut stack,
        combine,
    };
    for (k, input) in prepared {
        let Some(part) = input.clip(block) else {
            continue;
        };
        let correction = corrections[*k];
        let w = part.cols.len();
        // The input's samples over the part: its cache (no copy) or computed now.
        match &input.cache {
            Some(cache) => {
                let (r, c) = input.local(&part);
                with_rows!(cache, |rows| target.add(&part, correction, move |p, y| {
                    rows(p, r.start + y, c.start, w)
                }))
            }
            None => {
                let s = input.compute(&part)?;
                target.add(&part, correction, |p, y| {
                    (
                        row_of(&s.values, p, y, 0, w),
                        row_of(&s.footprint, p, y, 0, w),
                    )
                })
            }
        }
    }
    finish(
        data,
        footprint.view(),
        &stack,
        combine,
        options.blank_pixel_value,
    );
    Ok(())
}

/// The value a block's data starts from before any input is added.
pub(in crate::mosaic) fn initial_value(combine: Combine) -> f64 {
    match combine {
        Combine::Min => f64::INFINITY,
        Combine::Max => f64::NEG_INFINITY,
        _ => 0.0,
    }
}

/// The last step of combining a block: the means divided, the medians and clipped means taken
/// from `stack` (a (value, weight) list per pixel, in logical order), and `blank` where no
/// input has weight.
pub(in crate::mosaic) fn finish(
    mut data: ArrayViewMut3<f64>,
    footprint: ArrayView3<f64>,
    stack: &[Vec<(f64, f64)>],
    combine: Combine,
    blank: f64,
) {
    // Row by row in logical order, the stack's order.
    let (rows, width) = (data.shape()[1], data.shape()[2]);
    for ((p, r), mut row) in ndarray::indices((data.shape()[0], rows))
        .into_iter()
        .zip(data.rows_mut())
    {
        let fps = footprint.slice(s![p, r, ..]);
        let (Some(out), Some(fps)) = (row.as_slice_mut(), fps.to_slice()) else {
            unreachable!("rows of C-order blocks are contiguous");
        };
        let first = (p * rows + r) * width;
        for (c, (out, &fp)) in out.iter_mut().zip(fps).enumerate() {
            match combine {
                Combine::Mean => *out /= fp,
                Combine::Median => {
                    let mut v: Vec<f64> = stack[first + c].iter().map(|p| p.0).collect();
                    *out = median(&mut v);
                }
                Combine::Clipped { sigma, ampfrac } => {
                    *out = clipped_mean(&stack[first + c], sigma, ampfrac)
                }
                _ => {}
            }
            if fp == 0.0 {
                *out = blank;
            }
        }
    }
}

/// An output block being combined: its views and, for median and clipped, the stack of
/// (value, weight) per pixel.
struct Target<'a, 'b> {
    block: &'a Block,
    data: ArrayViewMut3<'b, f64>,
    footprint: ArrayViewMut3<'b, f64>,
    stack: &'a mut Vec<Vec<(f64, f64)>>,
    combine: Combine,
}

impl Target<'_, '_> {
    /// Adds one input's samples over `part` (of the block), `rows(p, r)` giving row `r` of the
    /// part in plane `p`, less `correction`.
    fn add<R: Row>(
        &mut self,
        part: &Block,
        correction: Correction,
        rows: impl Fn(usize, usize) -> R,
    ) {
        let block = self.block;
        let width = block.cols.len();
        let form = correction.form();
        let (r0, c0, w) = (
            part.rows.start - block.rows.start,
            part.cols.start - block.cols.start,
            part.cols.len(),
        );
        for p in 0..self.data.shape()[0] {
            for r in 0..part.rows.len() {
                let mut d = self.data.slice_mut(s![p, r0 + r, c0..c0 + w]);
                let mut f = self.footprint.slice_mut(s![p, r0 + r, c0..c0 + w]);
                let (Some(d), Some(f)) = (d.as_slice_mut(), f.as_slice_mut()) else {
                    unreachable!("rows of C-order blocks are contiguous");
                };
                let row = rows(p, r);
                let n = row.width().min(w);
                let (row, d, f) = (row.prefix(n), &mut d[..n], &mut f[..n]);
                let y = (part.rows.start + r) as f64;
                let value = |v: f64, c: usize| match form {
                    CorrectionForm::None => v,
                    CorrectionForm::Constant(k) => v - k,
                    CorrectionForm::Plane => v - correction.at((part.cols.start + c) as f64, y),
                };
                match self.combine {
                    Combine::Mean | Combine::Sum => {
                        for c in 0..n {
                            let (v, wt) = row.sample(c);
                            // reproject zeroes values outside the footprint before summing.
                            let v = if wt == 0.0 { 0.0 } else { value(v, c) };
                            d[c] += v * wt;
                            f[c] += wt;
                        }
                    }
                    combine @ (Combine::First | Combine::Last | Combine::Min | Combine::Max) => {
                        for c in 0..n {
                            let (v, wt) = row.sample(c);
                            let v = value(v, c);
                            let take = match combine {
                                Combine::First => f[c] == 0.0,
                                Combine::Last => wt > 0.0,
                                Combine::Min => wt > 0.0 && v < d[c],
                                _ => wt > 0.0 && v > d[c],
                            };
                            if take {
                                f[c] = wt;
                                d[c] = v;
                            }
                        }
                    }
                    Combine::Median | Combine::Clipped { .. } => {
                        for (c, f) in f.iter_mut().enumerate() {
                            let (v, wt) = row.sample(c);
                            *f += wt;
                            if wt > 0.0 {
                                let i = (p * block.rows.len() + r0 + r) * width + c0 + c;
                                self.stack[i].push((value(v, c), wt));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// SWarp's CLIPPED combination of (value, weight) pairs: values further than
/// `sigma`·σ + `ampfrac`·|median| from the median are rejected (σ the standard deviation of
/// the values kept), repeatedly until none is; the weighted mean of the rest.
fn clipped_mean(points: &[(f64, f64)], sigma: f64, ampfrac: f64) -> f64 {
    let mut kept: Vec<(f64, f64)> = points.to_vec();
    loop {
        if kept.is_empty() {
            return f64::NAN;
        }
        let mut values: Vec<f64> = kept.iter().map(|p| p.0).collect();
        let m = median(&mut values);
        let n = kept.len() as f64;
        let mean = kept.iter().map(|p| p.0).sum::<f64>() / n;
        let var = kept.iter().map(|p| (p.0 - mean).powi(2)).sum::<f64>() / n;
        let limit = sigma * var.sqrt() + ampfrac * m.abs();
        let before = kept.len();
        kept.retain(|p| (p.0 - m).abs() <= limit);
        if kept.len() == before || kept.is_empty() {
            let (sw, swv) = kept
                .iter()
                .fold((0.0, 0.0), |(sw, swv), &(v, w)| (sw + w, swv + w * v));
            return if kept.is_empty() { m } else { swv / sw };
        }
    }
}

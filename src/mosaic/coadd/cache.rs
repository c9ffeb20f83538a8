//! An input's samples kept over its whole rectangle while the backgrounds are matched, in
//! the smallest form that holds them exactly, and read back row by row.

use std::ops::Range;

use ndarray::{s, Array3, ArrayViewMut3};

use super::blocks_of;
use super::prepared::{Prepared, Sampled};
use crate::engine::blocks::Block;
use crate::error::{Error, Result};

/// An input's samples over its whole rectangle (planes, rows, columns), in the smallest form
/// that holds them exactly. Without weights the engine's footprint is 1 where the value is not
/// NaN and 0 where it is, so one array of values (NaN where the footprint is 0) holds both, in
/// float32 when every value is one (reproject rounds the results of float32 inputs to float32).
pub(in crate::mosaic) enum Cache {
    /// Footprints 0 or 1 and float32 values: the value, NaN where the footprint is 0.
    F32(Array3<f32>),
    /// Footprints 0 or 1: the value, NaN where the footprint is 0.
    F64(Array3<f64>),
    /// Anything else (weights): [`Sampled`].
    Full(Sampled),
}

/// Bytes per pixel of an input's cache at most: 8 without weights (see [`Cache`]; an input
/// whose samples do not fit that form is not cached), 16 with.
pub(super) fn cache_bytes_per_pixel(p: &Prepared) -> usize {
    if p.weights.is_some() {
        16
    } else {
        8
    }
}

/// Runs `$body` with `$rows` bound to a function (plane, row, first column, width) → that row
/// of the cache `$cache` as a [`Row`](crate::mosaic::pair_median::Row) (one instantiation of
/// `$body` per form).
macro_rules! with_rows {
    ($cache:expr, |$rows:ident| $body:expr) => {
        match $cache {
            Cache::F32(a) => {
                let $rows = move |p: usize, y: usize, x: usize, w: usize| row_of(a, p, y, x, w);
                $body
            }
            Cache::F64(a) => {
                let $rows = move |p: usize, y: usize, x: usize, w: usize| row_of(a, p, y, x, w);
                $body
            }
            Cache::Full(c) => {
                let $rows = move |p: usize, y: usize, x: usize, w: usize| {
                    (
                        row_of(&c.values, p, y, x, w),
                        row_of(&c.footprint, p, y, x, w),
                    )
                };
                $body
            }
        }
    };
}

impl Cache {
    /// Values and footprints over `rows` × `cols` (relative to the cached rectangle).
    fn sampled(&self, rows: Range<usize>, cols: Range<usize>) -> Sampled {
        let unit = |v: f64| if v.is_nan() { (0.0, 0.0) } else { (v, 1.0) };
        match self {
            Cache::F32(a) => {
                let a = a.slice(s![.., rows, cols]);
                Sampled {
                    values: a.mapv(|v| unit(f64::from(v)).0),
                    footprint: a.mapv(|v| unit(f64::from(v)).1),
                }
            }
            Cache::F64(a) => {
                let a = a.slice(s![.., rows, cols]);
                Sampled {
                    values: a.mapv(|v| unit(v).0),
                    footprint: a.mapv(|v| unit(v).1),
                }
            }
            Cache::Full(c) => Sampled {
                values: c
                    .values
                    .slice(s![.., rows.clone(), cols.clone()])
                    .to_owned(),
                footprint: c.footprint.slice(s![.., rows, cols]).to_owned(),
            },
        }
    }
}

pub(super) use with_rows;

impl Prepared<'_> {
    /// The input's samples over `block` (within its rectangle): from the cache, or computed.
    pub(super) fn sample(&self, block: &Block) -> Result<Sampled> {
        match &self.cache {
            Some(c) => {
                let (r, k) = self.local(block);
                Ok(c.sampled(r, k))
            }
            None => self.compute(block),
        }
    }

    /// Samples the whole rectangle into the cache, block by block; leaves the input uncached
    /// when its samples do not fit the form [`cache_bytes_per_pixel`] counted.
    pub(super) fn fill_cache(&mut self, size: (usize, usize)) -> Result<()> {
        let planes = self.plan.planes();
        let whole = (planes, self.rows.len(), self.cols.len());
        let mut cache = match self.weights {
            Some(_) => Cache::Full(Sampled {
                values: Array3::zeros(whole),
                footprint: Array3::zeros(whole),
            }),
            None => Cache::F32(Array3::zeros(whole)),
        };
        let (mut values, mut footprint) = (Vec::new(), Vec::new());
        let blocks = blocks_of(&self.rows, &self.cols, size);
        let mut next = 0;
        while let Some(block) = blocks.get(next) {
            let (bh, bw) = (block.rows.len(), block.cols.len());
            let n = planes * bh * bw;
            values.resize(n, 0.0);
            footprint.resize(n, 0.0);
            fn view(b: &mut [f64], shape: (usize, usize, usize)) -> Result<ArrayViewMut3<'_, f64>> {
                ArrayViewMut3::from_shape(shape, b).map_err(|e| Error::ShapeMismatch(e.to_string()))
            }
            let shape = (planes, bh, bw);
            self.compute_into(
                block,
                view(&mut values[..n], shape)?,
                view(&mut footprint[..n], shape)?,
            )?;
            let (v, f) = (&values[..n], &footprint[..n]);
            let unit = !matches!(cache, Cache::Full(_));
            if unit && f.iter().any(|&f| f != 0.0 && f != 1.0) {
                return Ok(());
            }
            if matches!(cache, Cache::F32(_)) && v.iter().any(|&v| f64::from(v as f32) != v) {
                // Float64 then: the float32 array is freed first (no more than 8 bytes a
                // pixel at any time, as counted), and the blocks done are sampled again.
                if let Cache::F32(a) = &mut cache {
                    *a = Array3::zeros((0, 0, 0));
                }
                cache = Cache::F64(Array3::zeros(whole));
                next = 0;
                continue;
            }
            next += 1;
            let (r, k) = self.local(block);
            // Block row (p, y) into the cache, each pixel through `put`.
            fn store<T>(
                a: &mut Array3<T>,
                (r, k): (&Range<usize>, &Range<usize>),
                (v, f): (&[f64], &[f64]),
                put: impl Fn(f64, f64) -> T,
            ) {
                let (bh, bw) = (r.len(), k.len());
                for p in 0..a.shape()[0] {
                    for (y, ry) in r.clone().enumerate() {
                        let at = (p * bh + y) * bw;
                        let pixels = v[at..at + bw].iter().zip(&f[at..at + bw]);
                        let mut row = a.slice_mut(s![p, ry, k.clone()]);
                        for (o, (&v, &f)) in row.iter_mut().zip(pixels) {
                            *o = put(v, f);
                        }
                    }
                }
            }
            let at = (&r, &k);
            match &mut cache {
                Cache::F32(a) => store(
                    a,
                    at,
                    (v, f),
                    |v, f| {
                        if f == 0.0 {
                            f32::NAN
                        } else {
                            v as f32
                        }
                    },
                ),
                Cache::F64(a) => store(a, at, (v, f), |v, f| if f == 0.0 { f64::NAN } else { v }),
                Cache::Full(c) => {
                    store(&mut c.values, at, (v, f), |v, _| v);
                    store(&mut c.footprint, at, (v, f), |_, f| f);
                }
            }
        }
        self.cache = Some(cache);
        Ok(())
    }
}

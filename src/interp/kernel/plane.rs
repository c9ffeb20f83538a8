//! [`Plane`]: a window of an image, sampled point by point or by the AVX2 loops.

use std::ops::Range;

use ndarray::ArrayView2;

use super::{clip, knot, mirror_index, trunc_clamped, weights, MAX_SIDE};
use crate::error::{Error, Result};
use crate::interp::sample::{Concrete, Sample};
use crate::interp::{NanPolicy, Order};

/// A vector sampling loop: `groups(ys, xs, out)` samples the leading groups of four points it
/// can and returns how many points it did.
trait GroupLoop: Fn(&[f64], &[f64], &mut [f64]) -> usize {}
impl<F: Fn(&[f64], &[f64], &mut [f64]) -> usize> GroupLoop for F {}

/// Samples every point `(ys[i], xs[i])` into `out[i]`: without a vector loop, one by one with
/// `scalar`; with one, as many leading groups of four as `groups` (an AVX2 loop, bit-identical
/// to the scalar code; see `interp::avx2`) takes, then one group with `scalar`, and on.
#[inline(always)]
fn in_groups(
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
    groups: Option<impl GroupLoop>,
    scalar: impl Fn(f64, f64) -> f64,
) {
    let Some(groups) = groups else {
        for ((o, &y), &x) in out.iter_mut().zip(ys).zip(xs) {
            *o = scalar(y, x);
        }
        return;
    };
    let n = out.len();
    let mut done = 0;
    while done < n {
        done += groups(&ys[done..], &xs[done..], &mut out[done..]);
        let end = (done + 4).min(n);
        for i in done..end {
            out[i] = scalar(ys[i], xs[i]);
        }
        done = end;
    }
}

#[cold]
#[inline(never)]
fn outside_window<S: Sample>(y: f64, x: f64, plane: &Plane<'_, S>) -> ! {
    panic!(
        "interp::Plane: the taps of point (y={y}, x={x}) are not all inside the window rows {:?} \
         x cols {:?} of the {}x{} image (see covering_window)",
        plane.rows(),
        plane.cols(),
        plane.ny,
        plane.nx
    )
}

/// A row-major window of a 2-D image, ready to be sampled.
///
/// It holds the `rows × cols` part of a full `ny × nx` image: raw values for orders 0 and 1,
/// spline coefficients ([`crate::interp::spline::prefilter`] of the **whole** image) for
/// orders ≥ 2. Element `(r, c)` of the full image (`r` in `rows`, `c` in `cols`) is
/// `data[(r - rows.start) * stride + (c - cols.start)]`. Coordinates given to
/// [`sample`](Plane::sample) are full-image coordinates; the window must contain every tap
/// they read (see the [module documentation](super) and
/// [`covering_window`](super::covering_window)), otherwise sampling panics.
///
/// ```
/// use reproject::interp::{Order, Plane};
/// // a 3x4 image whose value is 10*row + col; the window holds its rows 1..3, columns 0..4
/// let window = [10.0, 11.0, 12.0, 13.0, 20.0, 21.0, 22.0, 23.0];
/// let plane = Plane::new(&window, 1..3, 0..4, 3, 4)?;
/// assert_eq!(plane.sample(Order::Bilinear, 1.5, 2.25), 17.25);
/// assert_eq!(plane.sample(Order::NearestNeighbor, 1.5, 2.5), 23.0); // ties round up
/// assert!(plane.sample(Order::Bilinear, 2.5, 1.0).is_nan()); // beyond n - 0.5
/// # Ok::<(), reproject::Error>(())
/// ```
///
/// The stored samples are `f64`, or `f32` ([`Sample`]): a float32 image can be sampled
/// without widening a copy first, with the same results (every float32 is exactly a float64).
#[derive(Debug, Clone, Copy)]
pub struct Plane<'a, S: Sample = f64> {
    data: &'a [S],
    stride: usize,
    row0: usize,
    h: usize,
    col0: usize,
    w: usize,
    ny: usize,
    nx: usize,
    y_hi: f64,
    y_last: f64,
    x_hi: f64,
    x_last: f64,
}

impl<'a, S: Sample> Plane<'a, S> {
    /// A window whose rows are stored back to back (`stride = cols.len()`), so
    /// `data.len()` must be `rows.len() * cols.len()`.
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// let window = [12.0, 13.0, 22.0, 23.0]; // rows 1..3, columns 2..4 of a 4×4 image
    /// let plane = Plane::new(&window, 1..3, 2..4, 4, 4)?;
    /// assert_eq!(plane.get(2, 3), Some(23.0));
    /// assert_eq!(plane.sample(Order::Bilinear, 1.5, 2.5), 17.5);
    /// assert!(Plane::new(&window, 1..3, 2..5, 4, 5).is_err()); // 4 values for 2 × 3
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(
        data: &'a [S],
        rows: Range<usize>,
        cols: Range<usize>,
        ny: usize,
        nx: usize,
    ) -> Result<Plane<'a, S>> {
        let w = cols.end.saturating_sub(cols.start);
        let h = rows.end.saturating_sub(rows.start);
        if data.len() != h * w {
            return Err(Error::ShapeMismatch(format!(
                "interp::Plane: {} values for a window of {h} rows x {w} columns",
                data.len()
            )));
        }
        Plane::with_stride(data, w, rows, cols, ny, nx)
    }

    /// The whole `ny × nx` image, row-major.
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// let v = [0.0, 1.0, 2.0, 10.0, 11.0, 12.0]; // 2 rows × 3 columns
    /// let plane = Plane::full(&v, 2, 3)?;
    /// assert_eq!(plane.sample(Order::NearestNeighbor, 1.2, 1.6), 12.0);
    /// assert_eq!(plane.sample(Order::Bilinear, 0.5, 1.5), 6.5);
    /// assert!(Plane::full(&v, 3, 3).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn full(data: &'a [S], ny: usize, nx: usize) -> Result<Plane<'a, S>> {
        Plane::new(data, 0..ny, 0..nx, ny, nx)
    }

    /// A window whose row `r` starts at `data[(r - rows.start) * stride]` (`stride >=
    /// cols.len()`), e.g. a sub-rectangle of a larger row-major buffer.
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// // a 3×4 row-major image (10·row + col); the window is its rows 1..3, columns 1..3
    /// let image: Vec<f64> = (0..12).map(|i| (10 * (i / 4) + i % 4) as f64).collect();
    /// let plane = Plane::with_stride(&image[4 + 1..], 4, 1..3, 1..3, 3, 4)?;
    /// assert_eq!(plane.get(2, 2), Some(22.0));
    /// assert_eq!(plane.sample(Order::Bilinear, 1.25, 1.5), 14.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_stride(
        data: &'a [S],
        stride: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        ny: usize,
        nx: usize,
    ) -> Result<Plane<'a, S>> {
        if ny > MAX_SIDE || nx > MAX_SIDE {
            return Err(Error::ShapeMismatch(format!(
                "interp::Plane: image of {ny}x{nx} pixels, the largest side supported is 2^52"
            )));
        }
        if rows.start > rows.end || cols.start > cols.end || rows.end > ny || cols.end > nx {
            return Err(Error::ShapeMismatch(format!(
                "interp::Plane: window rows {rows:?} x cols {cols:?} is not inside the {ny}x{nx} image"
            )));
        }
        let (h, w) = (rows.len(), cols.len());
        if stride < w {
            return Err(Error::ShapeMismatch(format!(
                "interp::Plane: row stride {stride} is shorter than the window width {w}"
            )));
        }
        let need = if h == 0 || w == 0 {
            0
        } else {
            (h - 1) * stride + w
        };
        if data.len() < need {
            return Err(Error::ShapeMismatch(format!(
                "interp::Plane: {} values, a window of {h} rows x {w} columns with stride {stride} needs {need}",
                data.len()
            )));
        }
        let (nyf, nxf) = (ny as f64, nx as f64);
        Ok(Plane {
            data,
            stride,
            row0: rows.start,
            h,
            col0: cols.start,
            w,
            ny,
            nx,
            y_hi: nyf - 0.5,
            y_last: nyf - 1.0,
            x_hi: nxf - 0.5,
            x_last: nxf - 1.0,
        })
    }

    /// A window given as a standard-layout (C-contiguous) 2-D view, whose shape is the
    /// window's shape, placed at `(row0, col0)` of a `ny × nx` image. For a sub-rectangle of
    /// a larger row-major buffer use [`with_stride`](Plane::with_stride) on the buffer.
    ///
    /// ```
    /// use ndarray::{array, s};
    /// use reproject::interp::{Order, Plane};
    /// let image = array![[0.0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0]];
    /// let plane = Plane::from_view(image.slice(s![1.., ..]), 1, 0, 3, 3)?; // rows 1..3
    /// assert_eq!(plane.sample(Order::Bilinear, 1.5, 0.5), 15.5);
    /// assert!(Plane::from_view(image.t(), 0, 0, 3, 3).is_err()); // not row-major
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_view(
        view: ArrayView2<'a, S>,
        row0: usize,
        col0: usize,
        ny: usize,
        nx: usize,
    ) -> Result<Plane<'a, S>> {
        let (h, w) = view.dim();
        let data = view.to_slice().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "interp::Plane::from_view: the view must be in standard (row-major, contiguous) layout, got strides {:?}",
                view.strides()
            ))
        })?;
        Plane::new(data, row0..row0 + h, col0..col0 + w, ny, nx)
    }

    /// The full image shape `(ny, nx)`.
    ///
    /// ```
    /// use reproject::interp::Plane;
    /// let window = [0.0; 6]; // rows 4..6, columns 1..4 of a 10×20 image
    /// let plane = Plane::new(&window, 4..6, 1..4, 10, 20)?;
    /// assert_eq!(plane.image_shape(), (10, 20));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn image_shape(&self) -> (usize, usize) {
        (self.ny, self.nx)
    }

    /// The window's rows, in full-image indices.
    ///
    /// ```
    /// use reproject::interp::{covering_window, Order, Plane};
    /// let w = covering_window(Order::Bicubic, 100, 100, &[50.5], &[20.0]).unwrap();
    /// let data = vec![0.0; w.rows.len() * w.cols.len()];
    /// let plane = Plane::new(&data, w.rows, w.cols, 100, 100)?;
    /// assert_eq!(plane.rows(), 49..53); // floor(50.5) - 1 ..= floor(50.5) + 2
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn rows(&self) -> Range<usize> {
        self.row0..self.row0 + self.h
    }

    /// The window's columns, in full-image indices.
    ///
    /// ```
    /// use reproject::interp::Plane;
    /// let window = [0.0; 6]; // rows 4..6, columns 1..4 of a 10×20 image
    /// let plane = Plane::new(&window, 4..6, 1..4, 10, 20)?;
    /// assert_eq!(plane.cols(), 1..4);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn cols(&self) -> Range<usize> {
        self.col0..self.col0 + self.w
    }

    /// The value stored for full-image pixel `(r, c)`, if it is inside the window.
    ///
    /// ```
    /// use reproject::interp::Plane;
    /// let window = [12.0, 13.0, 22.0, 23.0]; // rows 1..3, columns 2..4 of a 4×4 image
    /// let plane = Plane::new(&window, 1..3, 2..4, 4, 4)?;
    /// assert_eq!(plane.get(2, 2), Some(22.0));
    /// assert_eq!(plane.get(0, 2), None); // row 0 is in the image, not in the window
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn get(&self, r: usize, c: usize) -> Option<f64> {
        let lr = r.wrapping_sub(self.row0);
        let lc = c.wrapping_sub(self.col0);
        (lr < self.h && lc < self.w).then(|| self.data[lr * self.stride + lc].to_f64())
    }

    /// The sample at row coordinate `y`, column coordinate `x` with `order`, exactly as
    /// reproject's `map_coordinates` (NaN outside the image or for NaN coordinates; NaN taps
    /// propagate, [`NanPolicy::Propagate`]).
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// let ramp: Vec<f64> = (0..20).map(|i| (10 * (i / 5) + i % 5) as f64).collect(); // 4×5
    /// let plane = Plane::full(&ramp, 4, 5)?;
    /// assert_eq!(plane.sample(Order::Bilinear, 1.25, 2.5), 15.0); // exact on a ramp
    /// assert_eq!(plane.sample(Order::NearestNeighbor, 1.25, 2.5), 13.0); // ties round up
    /// assert_eq!(plane.sample(Order::Bilinear, -0.4, 4.4), 4.0); // outer half pixel: the edge
    /// assert!(plane.sample(Order::Bilinear, 3.5, 0.0).is_nan()); // outside
    /// assert!(plane.sample(Order::Bilinear, f64::NAN, 0.0).is_nan());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    ///
    /// # Panics
    /// If a tap the point reads is outside the window.
    #[inline]
    pub fn sample(&self, order: Order, y: f64, x: f64) -> f64 {
        match order {
            Order::NearestNeighbor => self.nearest(y, x),
            Order::Bilinear => self.bilinear(y, x),
            Order::Biquadratic => self.spline::<2>(y, x),
            Order::Bicubic => self.spline::<3>(y, x),
            Order::Quartic => self.spline::<4>(y, x),
            Order::Quintic => self.spline::<5>(y, x),
        }
    }

    /// [`sample`](Plane::sample) for every point `(ys[i], xs[i])`, into `out[i]`.
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// let ramp: Vec<f64> = (0..20).map(|i| (10 * (i / 5) + i % 5) as f64).collect(); // 4×5
    /// let plane = Plane::full(&ramp, 4, 5)?;
    /// let (ys, xs) = ([0.0, 1.25, 2.5, 3.6, 0.3], [0.5, 2.5, 3.0, 1.0, 4.1]);
    /// let mut out = [0.0; 5];
    /// plane.sample_many(Order::Bilinear, &ys, &xs, &mut out);
    /// assert_eq!(out[..3], [0.5, 15.0, 28.0]);
    /// assert!(out[3].is_nan()); // row 3.6 is outside
    /// assert_eq!(out[4], plane.sample(Order::Bilinear, 0.3, 4.1));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length or a tap is outside the window.
    pub fn sample_many(&self, order: Order, ys: &[f64], xs: &[f64], out: &mut [f64]) {
        assert!(
            ys.len() == xs.len() && xs.len() == out.len(),
            "sample_many: ys, xs and out differ in length"
        );
        macro_rules! run {
            ($f:expr) => {
                for ((o, &y), &x) in out.iter_mut().zip(ys).zip(xs) {
                    *o = $f(y, x);
                }
            };
        }
        match order {
            Order::NearestNeighbor => run!(|y, x| self.nearest(y, x)),
            Order::Bilinear => self.bilinear_many(ys, xs, out),
            Order::Biquadratic => self.spline_many::<2>(ys, xs, out),
            Order::Bicubic => self.spline_many::<3>(ys, xs, out),
            Order::Quartic => run!(|y, x| self.spline::<4>(y, x)),
            Order::Quintic => run!(|y, x| self.spline::<5>(y, x)),
        }
    }

    /// The sample with [`NanPolicy::Renormalize`] for orders 0 and 1 (raw values): zero-weight
    /// taps are ignored and the weights are renormalised over the non-NaN taps (see
    /// [`NanPolicy`]). Identical to [`sample`](Plane::sample) whenever that is not NaN.
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// let v = [1.0, f64::NAN, 3.0, 5.0];
    /// let plane = Plane::full(&v, 2, 2)?;
    /// assert!(plane.sample(Order::Bilinear, 0.5, 0.5).is_nan());
    /// assert_eq!(plane.sample_renormalized(Order::Bilinear, 0.5, 0.5), 3.0); // (1 + 3 + 5) / 3
    /// // NaN tap has weight 0
    /// assert_eq!(plane.sample_renormalized(Order::Bilinear, 1.0, 0.0), 3.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    ///
    /// # Panics
    /// For orders ≥ 2 (use [`MaskedSpline`](super::MaskedSpline)), or if a tap is outside the window.
    #[inline]
    pub fn sample_renormalized(&self, order: Order, y: f64, x: f64) -> f64 {
        match order {
            Order::NearestNeighbor => self.nearest(y, x),
            Order::Bilinear => self.bilinear_renormalized(y, x),
            _ => panic!("sample_renormalized is for orders 0 and 1; use MaskedSpline for {order}"),
        }
    }

    /// [`sample_renormalized`](Plane::sample_renormalized) for every point.
    ///
    /// ```
    /// use reproject::interp::{Order, Plane};
    /// let v = [1.0, f64::NAN, 3.0, 5.0];
    /// let plane = Plane::full(&v, 2, 2)?;
    /// let mut out = [0.0; 2];
    /// plane.sample_many_renormalized(Order::Bilinear, &[0.5, 0.0], &[0.5, 1.0], &mut out);
    /// assert_eq!(out[0], 3.0); // (1 + 3 + 5) / 3
    /// assert!(out[1].is_nan()); // the only tap with a weight is NaN
    /// # Ok::<(), reproject::Error>(())
    /// ```
    ///
    /// # Panics
    /// As [`sample_many`](Plane::sample_many), and for orders ≥ 2.
    pub fn sample_many_renormalized(&self, order: Order, ys: &[f64], xs: &[f64], out: &mut [f64]) {
        match order {
            Order::NearestNeighbor => self.sample_many(order, ys, xs, out),
            Order::Bilinear => {
                assert!(
                    ys.len() == xs.len() && xs.len() == out.len(),
                    "sample_many_renormalized: ys, xs and out differ in length"
                );
                for ((o, &y), &x) in out.iter_mut().zip(ys).zip(xs) {
                    *o = self.bilinear_renormalized(y, x);
                }
            }
            _ => panic!(
                "sample_many_renormalized is for orders 0 and 1; use MaskedSpline for {order}"
            ),
        }
    }

    /// Samples with a [`NanPolicy`]: [`sample`](Plane::sample) for `Propagate`,
    /// [`sample_renormalized`](Plane::sample_renormalized) for `Renormalize` (orders 0-1).
    ///
    /// ```
    /// use reproject::interp::{NanPolicy, Order, Plane};
    /// let v = [1.0, f64::NAN, 3.0, 5.0];
    /// let plane = Plane::full(&v, 2, 2)?;
    /// // at pixel (1, 0) the NaN pixel (0, 1) is a tap with weight 0
    /// assert!(plane.sample_with(Order::Bilinear, NanPolicy::Propagate, 1.0, 0.0).is_nan());
    /// assert_eq!(plane.sample_with(Order::Bilinear, NanPolicy::Renormalize, 1.0, 0.0), 3.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    ///
    /// # Panics
    /// For `Renormalize` with orders ≥ 2 (use [`MaskedSpline`](super::MaskedSpline)).
    #[inline]
    pub fn sample_with(&self, order: Order, policy: NanPolicy, y: f64, x: f64) -> f64 {
        match policy {
            NanPolicy::Propagate => self.sample(order, y, x),
            NanPolicy::Renormalize => self.sample_renormalized(order, y, x),
        }
    }

    /// Local row offset (`(r - row0) * stride`) of a full-image row, checked against the window.
    #[inline(always)]
    fn local(&self, r: usize, c: usize) -> Option<(usize, usize)> {
        let lr = r.wrapping_sub(self.row0);
        let lc = c.wrapping_sub(self.col0);
        (lr < self.h && lc < self.w).then_some((lr * self.stride, lc))
    }

    /// Reads a value at a local offset.
    ///
    /// # Safety
    /// `off` must be `lr * stride + lc` with `lr < h` and `lc < w`: the constructor checked
    /// that `(h - 1) * stride + w <= data.len()`.
    #[inline(always)]
    unsafe fn at(&self, off: usize) -> f64 {
        debug_assert!(off < self.data.len());
        // SAFETY: `off` is within the data (# Safety above).
        unsafe { self.data.get_unchecked(off).to_f64() }
    }

    /// Order 0.
    #[inline(always)]
    pub(super) fn nearest(&self, y: f64, x: f64) -> f64 {
        let (Some(y), Some(x)) = (
            clip(y, self.y_hi, self.y_last),
            clip(x, self.x_hi, self.x_last),
        ) else {
            return f64::NAN;
        };
        // start = floor(c + 0.5) is in [0, n-1] for c in [0, n-1]: no mirroring.
        let iy = trunc_clamped(y + 0.5) as usize;
        let ix = trunc_clamped(x + 0.5) as usize;
        let Some((r, c)) = self.local(iy, ix) else {
            outside_window(y, x, self)
        };
        // SAFETY: `local` checked both indices against the window.
        let v = unsafe { self.at(r + c) };
        let mut t = 0.0;
        t += v;
        t
    }

    /// The two taps and weights of order 1 along an axis; `i1` is mirrored.
    #[inline(always)]
    fn linear_axis(c: f64, n: usize) -> (usize, usize, f64, f64) {
        let i = trunc_clamped(c);
        let w0 = 1.0 - (c - i as f64);
        let w1 = 1.0 - w0;
        let i0 = i as usize;
        // i0 + 1 == n only at c == n - 1: it mirrors to n - 2 (0 when n == 1).
        let i1 = if i0 + 1 < n {
            i0 + 1
        } else {
            n.saturating_sub(2)
        };
        (i0, i1, w0, w1)
    }

    /// The four order-1 taps `v00, v01, v10, v11` of a point and their row and column
    /// weights (`wy[k]`, `wx[k]` for tap `k`), or `None` outside the image.
    #[inline(always)]
    fn bilinear_taps(&self, y: f64, x: f64) -> Option<([f64; 4], [f64; 4], [f64; 4])> {
        let (cy, cx) = (
            clip(y, self.y_hi, self.y_last)?,
            clip(x, self.x_hi, self.x_last)?,
        );
        let (iy0, iy1, wy0, wy1) = Self::linear_axis(cy, self.ny);
        let (ix0, ix1, wx0, wx1) = Self::linear_axis(cx, self.nx);
        let (Some((r0, c0)), Some((r1, c1))) = (self.local(iy0, ix0), self.local(iy1, ix1)) else {
            outside_window(y, x, self)
        };
        // SAFETY: `local` checked all four indices against the window.
        let v = unsafe {
            [
                self.at(r0 + c0),
                self.at(r0 + c1),
                self.at(r1 + c0),
                self.at(r1 + c1),
            ]
        };
        Some((v, [wy0, wy0, wy1, wy1], [wx0, wx1, wx0, wx1]))
    }

    /// Order 1.
    #[inline(always)]
    fn bilinear(&self, y: f64, x: f64) -> f64 {
        let Some((v, wy, wx)) = self.bilinear_taps(y, x) else {
            return f64::NAN;
        };
        let mut t = 0.0;
        for k in 0..4 {
            t += v[k] * wy[k] * wx[k];
        }
        t
    }

    /// [`bilinear`](Plane::bilinear) over many points (the engine's hottest loop).
    fn bilinear_many(&self, ys: &[f64], xs: &[f64], out: &mut [f64]) {
        in_groups(ys, xs, out, self.bilinear_groups(), |y, x| {
            self.bilinear(y, x)
        });
    }

    /// [`spline`](Plane::spline) of order `O` over many points.
    fn spline_many<const O: usize>(&self, ys: &[f64], xs: &[f64], out: &mut [f64]) {
        in_groups(ys, xs, out, self.spline_groups::<O>(), |y, x| {
            self.spline::<O>(y, x)
        });
    }

    /// The geometry the AVX2 loops need, when they can run for an order with `taps` taps
    /// per axis (see `interp::avx2::usable`).
    #[cfg(target_arch = "x86_64")]
    fn avx2_geometry(&self, taps: usize) -> Option<crate::interp::avx2::Geometry> {
        let dims = ((self.h, self.w), (self.ny, self.nx));
        crate::interp::avx2::usable(self.data.len(), self.stride, dims.0, dims.1, taps).then_some(
            crate::interp::avx2::Geometry {
                y_hi: self.y_hi,
                y_last: self.y_last,
                x_hi: self.x_hi,
                x_last: self.x_last,
                // All below the data length or the image sides, checked by `usable`.
                row0: self.row0 as i32,
                col0: self.col0 as i32,
                h: self.h as i32,
                w: self.w as i32,
                stride: self.stride as i32,
            },
        )
    }

    /// The AVX2 loop of [`bilinear_many`](Plane::bilinear_many), when it can run here:
    /// `groups(ys, xs, out)` samples the leading groups of four it can and says how many
    /// points it did (see `interp::avx2`).
    fn bilinear_groups(&self) -> Option<impl GroupLoop + '_> {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::interp::avx2::{bilinear4_f32, bilinear4_f64};
            let geometry = self.avx2_geometry(2)?;
            let data = S::as_concrete(self.data);
            // SAFETY: `usable` checked AVX2, a 2x2 window and the 32-bit ranges; the
            // constructor checked that the window lies inside `data`; the slices have equal
            // lengths (asserted by `sample_many`).
            Some(move |ys: &[f64], xs: &[f64], out: &mut [f64]| match data {
                Concrete::F64(data) => unsafe { bilinear4_f64(geometry, data, ys, xs, out) },
                Concrete::F32(data) => unsafe { bilinear4_f32(geometry, data, ys, xs, out) },
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None::<fn(&[f64], &[f64], &mut [f64]) -> usize>
    }

    /// The AVX2 loop of [`spline_many`](Plane::spline_many), for orders 2 and 3 of an `f64`
    /// plane when it can run here (as [`bilinear_groups`](Plane::bilinear_groups)).
    fn spline_groups<const O: usize>(&self) -> Option<impl GroupLoop + '_> {
        #[cfg(target_arch = "x86_64")]
        {
            let (2 | 3, Concrete::F64(data)) = (O, S::as_concrete(self.data)) else {
                return None;
            };
            let geometry = self.avx2_geometry(O + 1)?;
            // SAFETY: `usable` checked AVX2, an (O+1)x(O+1) window and the 32-bit ranges;
            // the constructor checked that the window lies inside `data`; the slices have
            // equal lengths (asserted by `sample_many`).
            Some(move |ys: &[f64], xs: &[f64], out: &mut [f64]| unsafe {
                crate::interp::avx2::spline4::<O>(geometry, data, ys, xs, out)
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None::<fn(&[f64], &[f64], &mut [f64]) -> usize>
    }

    /// Order 1 with NaN renormalisation.
    #[inline(always)]
    fn bilinear_renormalized(&self, y: f64, x: f64) -> f64 {
        let Some((v, wy, wx)) = self.bilinear_taps(y, x) else {
            return f64::NAN;
        };
        let live = |k: usize| wy[k] != 0.0 && wx[k] != 0.0;
        if !(0..4).any(|k| live(k) && v[k].is_nan()) {
            // scipy's sum without the zero-weight taps: adding their ±0 never changes t.
            let mut t = 0.0;
            for k in 0..4 {
                if live(k) {
                    t += v[k] * wy[k] * wx[k];
                }
            }
            return t;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for k in 0..4 {
            if live(k) && !v[k].is_nan() {
                num += v[k] * wy[k] * wx[k];
                den += wy[k] * wx[k];
            }
        }
        if den > 0.0 {
            num / den
        } else {
            f64::NAN
        }
    }

    /// The `O + 1` local offsets of the taps of a clamped coordinate along one axis, or
    /// `None` if one is outside the window.
    #[inline(always)]
    fn spline_axis<const O: usize>(
        knot: i64,
        n: usize,
        off: usize,
        len: usize,
        scale: usize,
    ) -> Option<[usize; 6]> {
        let start = knot as isize - (O / 2) as isize;
        let ni = n as isize;
        let mut idx = [0usize; 6];
        if start >= 0 && start + (O as isize) < ni {
            let l = (start as usize).wrapping_sub(off);
            if l >= len || len - l <= O {
                return None;
            }
            for (k, v) in idx.iter_mut().enumerate().take(O + 1) {
                *v = (l + k) * scale;
            }
        } else {
            for (k, v) in idx.iter_mut().enumerate().take(O + 1) {
                let m = mirror_index(start + k as isize, ni) as usize;
                let l = m.wrapping_sub(off);
                if l >= len {
                    return None;
                }
                *v = l * scale;
            }
        }
        Some(idx)
    }

    /// Orders 2 to 5 (the plane holds spline coefficients).
    #[inline(always)]
    fn spline<const O: usize>(&self, y: f64, x: f64) -> f64 {
        let (Some(cy), Some(cx)) = (
            clip(y, self.y_hi, self.y_last),
            clip(x, self.x_hi, self.x_last),
        ) else {
            return f64::NAN;
        };
        let (ky, kx) = (knot::<O>(cy), knot::<O>(cx));
        let (Some(ry), Some(rx)) = (
            Self::spline_axis::<O>(ky, self.ny, self.row0, self.h, self.stride),
            Self::spline_axis::<O>(kx, self.nx, self.col0, self.w, 1),
        ) else {
            outside_window(y, x, self)
        };
        let wy = weights::<O>(cy, ky as f64);
        let wx = weights::<O>(cx, kx as f64);
        let mut t = 0.0;
        for k0 in 0..=O {
            let row = ry[k0];
            let w0 = wy[k0];
            for k1 in 0..=O {
                // SAFETY: `spline_axis` checked every tap against the window.
                let mut coeff = unsafe { self.at(row + rx[k1]) };
                coeff *= w0;
                coeff *= wx[k1];
                t += coeff;
            }
        }
        t
    }
}

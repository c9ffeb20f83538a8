//! The per-point sampler: scipy's `map_coordinates(mode='constant', cval=NaN)` kernel behind
//! reproject's half-pixel edge rule, for one 2-D image plane.
//!
//! For a point `(y, x)` (row, column; 0-based input pixel coordinates, pixel centres at
//! integers) each axis of length `n` goes through:
//!
//! 1. **Edge rule** ([`clip_coordinate`]): valid iff `-0.5 <= c < n - 0.5` (so NaN is
//!    invalid, and `n - 0.5` itself is invalid, as in reproject); `c < 0` becomes `0` and
//!    `c >= n - 1` becomes `n - 1`. An invalid axis makes the sample NaN.
//! 2. **Taps**: `start = floor(c) - order/2` for odd orders, `floor(c + 0.5) - order/2` for
//!    even ones (so order 0 rounds ties up), taps `start ..= start + order`, each mirrored into
//!    the image by scipy's whole-sample mirror (`i < 0 → -i`, `i >= n → 2n-2-i`, repeated
//!    with period `2n-2`; everything is 0 when `n == 1`), see [`mirror_index`].
//! 3. **Weights** ([`spline_weights`]): scipy's `get_spline_interpolation_weights`, with
//!    `w[order] = 1 - w[0] - ... - w[order-1]`.
//! 4. **Accumulation**: `t = 0.0`, then for each tap pair in C order (column fastest)
//!    `coeff = v; coeff *= w_row[k0]; coeff *= w_col[k1]; t += coeff` (no FMA). Order 0
//!    returns `0.0 + v` (so `-0.0` comes out as `+0.0`, as in scipy).
//!
//! For orders ≥ 2 the plane must hold spline coefficients ([`crate::interp::spline`]), not
//! raw values.
//!
//! # Windows and margins
//!
//! A [`Plane`] is a window (`rows × cols`) of a full image of `ny × nx` pixels, so a caller
//! can read only what its points need. Taps are computed and mirrored on the **full** image,
//! then looked up in the window; a tap outside the window is a caller bug and panics. The
//! taps of a point whose clamped coordinate along an axis is `c` are:
//!
//! | order | taps along the axis (before mirroring) |
//! |---|---|
//! | 0 | `floor(c + 0.5)` |
//! | 1 | `floor(c)`, `floor(c) + 1` |
//! | 2 | `floor(c + 0.5) - 1 ..= floor(c + 0.5) + 1` |
//! | 3 | `floor(c) - 1 ..= floor(c) + 2` |
//! | 4 | `floor(c + 0.5) - 2 ..= floor(c + 0.5) + 2` |
//! | 5 | `floor(c) - 2 ..= floor(c) + 3` |
//!
//! so a window must extend `order / 2` pixels before and `(order + 1) / 2` after the span of
//! the points (rounded as in the table), clipped to the image, **plus the mirror images of the
//! taps that fall outside the image** (e.g. for order 1 at `c = n - 1` the zero-weight tap
//! `n` mirrors to `n - 2`, which matters for NaN propagation). [`covering_window`] computes
//! the exact window for a set of points and [`tap_span`] the span of one coordinate.

use std::ops::Range;

use ndarray::ArrayView2;

use super::sample::{Concrete, Sample};
use super::{NanPolicy, Order};
use crate::error::{Error, Result};

/// reproject's edge rule along one axis of length `n`: the coordinate scipy samples, or
/// `None` when the point is outside (which makes the sample NaN).
///
/// Valid is `-0.5 <= c < n - 0.5`; `[-0.5, 0]` is clamped to `+0.0` and `[n-1, n-0.5)` to
/// `n - 1` (reproject's `_clip_coords`; `c == n - 0.5` is neither clamped nor reset by
/// reproject, and scipy then returns cval because it is beyond `n - 1`).
///
/// ```
/// use reproject::interp::clip_coordinate;
/// assert_eq!(clip_coordinate(-0.5, 4), Some(0.0));
/// assert_eq!(clip_coordinate(3.4, 4), Some(3.0));
/// assert_eq!(clip_coordinate(1.25, 4), Some(1.25));
/// assert_eq!(clip_coordinate(3.5, 4), None);
/// assert_eq!(clip_coordinate(-0.5000001, 4), None);
/// assert_eq!(clip_coordinate(f64::NAN, 4), None);
/// ```
#[inline]
pub fn clip_coordinate(c: f64, n: usize) -> Option<f64> {
    let nf = n as f64;
    clip(c, nf - 0.5, nf - 1.0)
}

#[inline(always)]
fn clip(c: f64, hi: f64, last: f64) -> Option<f64> {
    if c >= -0.5 && c < hi {
        // `<=` also maps -0.0 to +0.0: scipy's x = c - floor(c) is +0.0 for both.
        Some(if c <= 0.0 {
            0.0
        } else if c >= last {
            last
        } else {
            c
        })
    } else {
        None
    }
}

/// scipy's whole-sample mirror of a tap index into `0..len` (`ni_interpolation.c`): period
/// `2·len - 2`, `-i` below 0, `2·len - 2 - i` at or above `len`, and 0 when `len <= 1`.
///
/// ```
/// use reproject::interp::kernel::mirror_index;
/// assert_eq!(mirror_index(-1, 5), 1);
/// assert_eq!(mirror_index(5, 5), 3);
/// assert_eq!(mirror_index(-3, 2), 1);
/// assert_eq!(mirror_index(7, 1), 0);
/// ```
#[inline]
pub fn mirror_index(idx: isize, len: isize) -> isize {
    if len <= 1 {
        return 0;
    }
    let s2 = 2 * len - 2;
    if idx < 0 {
        let i = s2 * (-idx / s2) + idx;
        if i <= 1 - len {
            i + s2
        } else {
            -i
        }
    } else if idx >= len {
        let i = idx - s2 * (idx / s2);
        if i >= len {
            s2 - i
        } else {
            i
        }
    } else {
        idx
    }
}

/// scipy's `get_spline_interpolation_weights(cc, order)`: the `order + 1` weights of the taps
/// of a (clamped) coordinate `cc`, in the first `order + 1` slots. Order 0 returns `[1, 0, ..]`
/// (scipy does not multiply by a weight for order 0).
///
/// ```
/// use reproject::interp::{kernel::spline_weights, Order};
/// let w = spline_weights(Order::Bilinear, 2.25);
/// assert_eq!(&w[..2], &[0.75, 0.25]);
/// let w = spline_weights(Order::Bicubic, 0.0);
/// let (sixth, two_thirds) = (1.0 / 6.0, 2.0 / 3.0);
/// assert_eq!(&w[..4], &[sixth, two_thirds, sixth, 1.0 - sixth - two_thirds - sixth]);
/// ```
#[inline]
pub fn spline_weights(order: Order, cc: f64) -> [f64; 6] {
    let fl = |k: usize| {
        if k & 1 == 1 {
            cc.floor()
        } else {
            (cc + 0.5).floor()
        }
    };
    match order {
        Order::NearestNeighbor => [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        Order::Bilinear => weights::<1>(cc, fl(1)),
        Order::Biquadratic => weights::<2>(cc, fl(2)),
        Order::Bicubic => weights::<3>(cc, fl(3)),
        Order::Quartic => weights::<4>(cc, fl(4)),
        Order::Quintic => weights::<5>(cc, fl(5)),
    }
}

/// `floor(c)` for a clamped coordinate (`c >= +0.0`, finite): truncation, which is
/// `floor` there and, unlike `f64::floor` on baseline x86-64 (no SSE4.1), no libm call.
#[inline(always)]
fn floor_nonneg(c: f64) -> f64 {
    debug_assert!(c >= 0.0);
    (c as i64) as f64
}

/// The largest image side a [`Plane`] accepts (2^52): clamped coordinates then stay far
/// inside the `i64` range, which the sampler's unchecked float → integer conversions rely on.
///
/// ```
/// use reproject::interp::{kernel::MAX_SIDE, Plane};
/// let empty: [f64; 0] = [];
/// assert_eq!(MAX_SIDE, 1 << 52);
/// assert!(Plane::with_stride(&empty, 0, 0..0, 0..0, MAX_SIDE, 1).is_ok());
/// assert!(Plane::with_stride(&empty, 0, 0..0, 0..0, MAX_SIDE + 1, 1).is_err());
/// ```
pub const MAX_SIDE: usize = 1 << 52;

/// `floor(c)` as an integer for a clamped coordinate of a [`Plane`], without the saturation
/// checks of `as`.
#[inline(always)]
fn trunc_clamped(c: f64) -> i64 {
    debug_assert!(c >= 0.0 && c <= MAX_SIDE as f64);
    // SAFETY: `c` comes out of `clip` for an axis of a Plane, so 0 <= c <= n - 0.5 with
    // n <= MAX_SIDE (checked by the constructor): finite and inside the i64 range.
    unsafe { c.to_int_unchecked::<i64>() }
}

/// scipy's `floor(order odd ? c : c + 0.5)` for a clamped coordinate of a [`Plane`].
#[inline(always)]
fn knot<const O: usize>(c: f64) -> i64 {
    if O & 1 == 1 {
        trunc_clamped(c)
    } else {
        trunc_clamped(c + 0.5)
    }
}

/// The weights for orders 1..=5, operation for operation as scipy's `ni_splines.c`, given
/// `fl = floor(order odd ? cc : cc + 0.5)`.
#[inline(always)]
fn weights<const O: usize>(cc: f64, fl: f64) -> [f64; 6] {
    let mut w = [0.0f64; 6];
    let x = cc - fl;
    let mut y = x;
    let mut z = 1.0 - x;
    match O {
        1 => {
            w[0] = 1.0 - x;
        }
        2 => {
            w[1] = 0.75 - x * x;
            let y = 0.5 - x;
            w[0] = 0.5 * y * y;
        }
        3 => {
            w[1] = (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0;
            w[2] = (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0;
            w[0] = z * z * z / 6.0;
        }
        4 => {
            let t = x * x;
            w[2] = t * (t * 0.25 - 0.625) + 115.0 / 192.0;
            y = 1.0 + x;
            w[1] = y * (y * (y * (5.0 - y) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0;
            w[3] = z * (z * (z * (5.0 - z) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0;
            y = 0.5 - x;
            let t = y * y;
            w[0] = t * t / 24.0;
        }
        5 => {
            let t = y * y;
            w[2] = t * (t * (0.25 - y / 12.0) - 0.5) + 0.55;
            let t = z * z;
            w[3] = t * (t * (0.25 - z / 12.0) - 0.5) + 0.55;
            y += 1.0;
            w[1] = y * (y * (y * (y * (y / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425;
            z += 1.0;
            w[4] = z * (z * (z * (z * (z / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425;
            y = 1.0 - x;
            let t = y * y;
            w[0] = y * t * t / 120.0;
        }
        _ => unreachable!("weights are defined for orders 1 to 5"),
    }
    let mut last = 1.0;
    for wi in &w[..O] {
        last -= wi;
    }
    w[O] = last;
    w
}

/// The span of image pixels (mirrored taps included) that a coordinate `c` along an axis of
/// length `n` reads with `order`, or `None` when the edge rule rejects `c`.
///
/// ```
/// use reproject::interp::{tap_span, Order};
/// assert_eq!(tap_span(Order::Bilinear, 1.3, 5), Some(1..3));
/// assert_eq!(tap_span(Order::Bilinear, 4.2, 5), Some(3..5)); // clamped to 4, tap 5 mirrors to 3
/// assert_eq!(tap_span(Order::Bicubic, 0.2, 5), Some(0..3)); // tap -1 mirrors to 1
/// assert_eq!(tap_span(Order::NearestNeighbor, 4.5, 5), None);
/// ```
pub fn tap_span(order: Order, c: f64, n: usize) -> Option<Range<usize>> {
    let c = clip_coordinate(c, n)?;
    let (lo, hi) = span_clamped(order.degree(), c, n);
    Some(lo..hi + 1)
}

/// Inclusive (min, max) of the mirrored taps of a clamped coordinate.
#[inline]
fn span_clamped(order: usize, c: f64, n: usize) -> (usize, usize) {
    let f = if order & 1 == 1 {
        floor_nonneg(c)
    } else {
        floor_nonneg(c + 0.5)
    };
    let start = f as isize - (order / 2) as isize;
    let ni = n as isize;
    if start >= 0 && start + (order as isize) < ni {
        (start as usize, start as usize + order)
    } else {
        let mut lo = usize::MAX;
        let mut hi = 0;
        for k in 0..=order as isize {
            let m = mirror_index(start + k, ni) as usize;
            lo = lo.min(m);
            hi = hi.max(m);
        }
        (lo, hi)
    }
}

/// A rectangle of an image: `rows × cols`, both half-open ranges of full-image indices.
///
/// ```
/// use reproject::interp::Window;
/// let w = Window { rows: 2..5, cols: 0..4 };
/// assert_eq!(w.shape(), (3, 4));
/// assert!(w.rows.contains(&4) && !w.cols.contains(&4)); // half-open
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Window {
    /// The rows (axis 0).
    pub rows: Range<usize>,
    /// The columns (axis 1).
    pub cols: Range<usize>,
}

impl Window {
    /// The whole `ny × nx` image.
    ///
    /// ```
    /// use reproject::interp::Window;
    /// assert_eq!(Window::full(3, 4), Window { rows: 0..3, cols: 0..4 });
    /// ```
    pub fn full(ny: usize, nx: usize) -> Window {
        Window {
            rows: 0..ny,
            cols: 0..nx,
        }
    }

    /// `(rows, columns)` of the window.
    ///
    /// ```
    /// use reproject::interp::{covering_window, Order};
    /// let w = covering_window(Order::Bilinear, 100, 50, &[10.2], &[3.5]).unwrap();
    /// assert_eq!(w.shape(), (2, 2)); // the 2×2 taps of one bilinear point
    /// ```
    pub fn shape(&self) -> (usize, usize) {
        (self.rows.len(), self.cols.len())
    }
}

/// The smallest window of an `ny × nx` image that holds every tap (mirrored taps included)
/// that sampling the points `(ys[i], xs[i])` with `order` reads, or `None` if no point is
/// inside the image (every sample is then NaN and nothing needs to be read).
///
/// Only points valid on both axes count. The window is the same for raw values (orders
/// 0 and 1) and for spline coefficients (orders ≥ 2; the coefficients themselves depend on
/// the whole image).
///
/// ```
/// use reproject::interp::{covering_window, Order, Window};
/// let ys = [10.2, 12.7, f64::NAN];
/// let xs = [3.5, 30.1, 5.0];
/// let w = covering_window(Order::Bilinear, 100, 50, &ys, &xs).unwrap();
/// assert_eq!(w, Window { rows: 10..14, cols: 3..32 });
/// let w = covering_window(Order::Bicubic, 100, 50, &ys, &xs).unwrap();
/// assert_eq!(w, Window { rows: 9..15, cols: 2..33 });
/// assert_eq!(covering_window(Order::Bicubic, 100, 50, &[-3.0], &[1.0]), None);
/// ```
///
/// # Panics
/// If `ys` and `xs` differ in length.
pub fn covering_window(
    order: Order,
    ny: usize,
    nx: usize,
    ys: &[f64],
    xs: &[f64],
) -> Option<Window> {
    assert_eq!(
        ys.len(),
        xs.len(),
        "covering_window: ys and xs differ in length"
    );
    let d = order.degree();
    let (nyf, nxf) = (ny as f64, nx as f64);
    let (y_hi, y_last, x_hi, x_last) = (nyf - 0.5, nyf - 1.0, nxf - 0.5, nxf - 1.0);
    let (mut r0, mut r1, mut c0, mut c1) = (usize::MAX, 0usize, usize::MAX, 0usize);
    // Mirrored taps make the span non-monotonic near the edges: take it point by point.
    let mut any = false;
    for (&y, &x) in ys.iter().zip(xs) {
        let (Some(y), Some(x)) = (clip(y, y_hi, y_last), clip(x, x_hi, x_last)) else {
            continue;
        };
        any = true;
        let (a, b) = span_clamped(d, y, ny);
        r0 = r0.min(a);
        r1 = r1.max(b);
        let (a, b) = span_clamped(d, x, nx);
        c0 = c0.min(a);
        c1 = c1.max(b);
    }
    any.then(|| Window {
        rows: r0..r1 + 1,
        cols: c0..c1 + 1,
    })
}

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
/// they read (see the [module documentation](self) and [`covering_window`]), otherwise
/// sampling panics.
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
    /// For orders ≥ 2 (use [`MaskedSpline`]), or if a tap is outside the window.
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
    /// For `Renormalize` with orders ≥ 2 (use [`MaskedSpline`]).
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
    fn nearest(&self, y: f64, x: f64) -> f64 {
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
    fn avx2_geometry(&self, taps: usize) -> Option<super::avx2::Geometry> {
        let dims = ((self.h, self.w), (self.ny, self.nx));
        super::avx2::usable(self.data.len(), self.stride, dims.0, dims.1, taps).then_some(
            super::avx2::Geometry {
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
            use super::avx2::{bilinear4_f32, bilinear4_f64};
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
                super::avx2::spline4::<O>(geometry, data, ys, xs, out)
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

/// [`NanPolicy::Renormalize`] for orders ≥ 2: normalised convolution over three planes of
/// the same window.
///
/// * `coeffs`: spline coefficients of the image with its non-finite pixels set to 0;
/// * `mask`: spline coefficients of the validity mask (1 where the pixel is finite, else 0);
/// * `raw`: the raw image, for the nearest-pixel check.
///
/// [`crate::interp::spline::prefilter_masked`] computes the first two. The sample is
/// `coeffs(y, x) / mask(y, x)`, NaN where the mask sample is below 0.5 (or NaN: outside the
/// image) and where the nearest input pixel (order-0 rule) is not finite. For orders 0 and 1
/// it is [`Plane::sample_renormalized`] on `raw`. Meant for images that have non-finite
/// pixels: on a clean image the division by a mask sample that is ≈ 1 (not exactly) would
/// change the last bits, so [`crate::interp::Interpolator`] uses the plain path there.
///
/// ```
/// use ndarray::Array2;
/// use reproject::interp::{spline::prefilter_masked, MaskedSpline, Order, Plane};
/// let mut image = Array2::from_shape_fn((12, 12), |(r, c)| r as f64 + c as f64);
/// image[[3, 3]] = f64::NAN;
/// let (coeffs, mask) = prefilter_masked(image.view(), Order::Bicubic);
/// let (c, m, r) = (
///     coeffs.as_slice().unwrap(),
///     mask.as_slice().unwrap(),
///     image.as_slice().unwrap(),
/// );
/// let s = MaskedSpline::new(
///     Plane::full(c, 12, 12)?,
///     Plane::full(m, 12, 12)?,
///     Plane::full(r, 12, 12)?,
/// )?;
/// assert!(s.sample(Order::Bicubic, 3.0, 3.2).is_nan()); // the nearest pixel is NaN
/// assert!((s.sample(Order::Bicubic, 4.0, 3.0) - 7.0).abs() < 0.1); // next to it: a fill
/// assert!((s.sample(Order::Bicubic, 7.0, 6.3) - 13.3).abs() < 1e-3); // away from it: the ramp
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MaskedSpline<'a> {
    coeffs: Plane<'a>,
    mask: Plane<'a>,
    raw: Plane<'a>,
}

impl<'a> MaskedSpline<'a> {
    /// The three planes must cover the same window of the same image.
    ///
    /// ```
    /// use reproject::interp::{MaskedSpline, Plane};
    /// let (a, b) = ([0.0; 4], [0.0; 6]);
    /// let (p, q) = (Plane::full(&a, 2, 2)?, Plane::full(&b, 2, 3)?);
    /// assert!(MaskedSpline::new(p, p, p).is_ok());
    /// assert!(MaskedSpline::new(p, p, q).is_err()); // different images
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(coeffs: Plane<'a>, mask: Plane<'a>, raw: Plane<'a>) -> Result<MaskedSpline<'a>> {
        let same = |p: &Plane<'a>| {
            p.image_shape() == coeffs.image_shape()
                && p.rows() == coeffs.rows()
                && p.cols() == coeffs.cols()
        };
        if !(same(&mask) && same(&raw)) {
            return Err(Error::ShapeMismatch(
                "MaskedSpline: the coefficient, mask and raw planes cover different windows".into(),
            ));
        }
        Ok(MaskedSpline { coeffs, mask, raw })
    }

    /// The renormalised sample at `(y, x)` (see the type's documentation).
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{spline::prefilter_masked, MaskedSpline, Order, Plane};
    /// let mut image = Array2::from_elem((8, 8), 2.0);
    /// image[[3, 3]] = f64::NAN;
    /// let (coeffs, mask) = prefilter_masked(image.view(), Order::Bicubic);
    /// # fn full(a: &Array2<f64>) -> Plane<'_> {
    /// #     Plane::full(a.as_slice().unwrap(), 8, 8).unwrap()
    /// # }
    /// # let s = MaskedSpline::new(full(&coeffs), full(&mask), full(&image))?;
    /// assert_eq!(s.sample(Order::Bicubic, 3.0, 4.0), 2.0); // a constant stays constant
    /// assert!(s.sample(Order::Bicubic, 3.0, 3.0).is_nan()); // the nearest pixel is NaN
    /// assert_eq!(s.sample(Order::Bilinear, 3.0, 2.5), 2.0); // orders 0-1: the raw taps
    /// # Ok::<(), reproject::Error>(())
    /// ```
    ///
    /// # Panics
    /// If a tap is outside the window.
    #[inline]
    pub fn sample(&self, order: Order, y: f64, x: f64) -> f64 {
        if !order.needs_prefilter() {
            return self.raw.sample_renormalized(order, y, x);
        }
        let m = self.mask.sample(order, y, x);
        // NaN (outside the image) fails `m >= 0.5` too
        let masked_in = m >= 0.5;
        if !masked_in || !self.raw.nearest(y, x).is_finite() {
            return f64::NAN;
        }
        self.coeffs.sample(order, y, x) / m
    }

    /// [`sample`](MaskedSpline::sample) for every point.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{spline::prefilter_masked, MaskedSpline, Order, Plane};
    /// let mut image = Array2::from_elem((8, 8), 2.0);
    /// image[[3, 3]] = f64::NAN;
    /// let (coeffs, mask) = prefilter_masked(image.view(), Order::Bicubic);
    /// # fn full(a: &Array2<f64>) -> Plane<'_> {
    /// #     Plane::full(a.as_slice().unwrap(), 8, 8).unwrap()
    /// # }
    /// # let s = MaskedSpline::new(full(&coeffs), full(&mask), full(&image))?;
    /// let mut out = [0.0; 3];
    /// s.sample_many(Order::Bicubic, &[3.0, 3.0, 9.0], &[4.0, 3.0, 0.0], &mut out);
    /// assert_eq!(out[0], 2.0);
    /// assert!(out[1].is_nan() && out[2].is_nan()); // a missing pixel; outside the image
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
        for ((o, &y), &x) in out.iter_mut().zip(ys).zip(xs) {
            *o = self.sample(order, y, x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(ny: usize, nx: usize) -> Vec<f64> {
        (0..ny * nx)
            .map(|i| (10 * (i / nx) + i % nx) as f64)
            .collect()
    }

    #[test]
    fn mirror_matches_reflection_definition() {
        for len in 1..7isize {
            for idx in -20..20isize {
                let m = mirror_index(idx, len);
                assert!((0..len).contains(&m));
                if len > 1 {
                    // reflect about 0 and len-1 by brute force
                    let mut i = idx;
                    while !(0..len).contains(&i) {
                        i = if i < 0 { -i } else { 2 * (len - 1) - i };
                    }
                    assert_eq!(m, i, "idx {idx} len {len}");
                }
            }
        }
    }

    #[test]
    fn weights_sum_to_one_and_last_is_remainder() {
        for order in Order::ALL.into_iter().skip(1) {
            let d = order.degree();
            for i in 0..100 {
                let c = 3.0 + i as f64 * 0.0123;
                let w = spline_weights(order, c);
                let mut last = 1.0;
                for v in &w[..d] {
                    last -= v;
                }
                assert_eq!(w[d], last);
                assert!((w[..=d].iter().sum::<f64>() - 1.0).abs() < 1e-14);
                assert!(w[d + 1..].iter().all(|&v| v == 0.0));
            }
        }
    }

    #[test]
    fn edge_rule_table() {
        let n = 5;
        assert_eq!(clip_coordinate(-0.5, n), Some(0.0));
        assert_eq!(clip_coordinate(-0.5 - 1e-12, n), None);
        assert_eq!(clip_coordinate(-0.2, n), Some(0.0));
        assert_eq!(
            clip_coordinate(-0.0, n).map(f64::to_bits),
            Some(0.0f64.to_bits())
        );
        assert_eq!(clip_coordinate(4.0, n), Some(4.0));
        assert_eq!(clip_coordinate(4.5 - 1e-12, n), Some(4.0));
        assert_eq!(clip_coordinate(4.5, n), None);
        assert_eq!(clip_coordinate(f64::INFINITY, n), None);
        assert_eq!(clip_coordinate(f64::NEG_INFINITY, n), None);
        assert_eq!(clip_coordinate(0.3, 1), Some(0.0));
        assert_eq!(clip_coordinate(0.0, 0), None);
    }

    #[test]
    fn nan_spreads_up_left_through_zero_weight_taps() {
        // §2.5.4: NaN at (2,2), identity: order 1 NaN at (1,1),(1,2),(2,1),(2,2).
        let mut v = ramp(5, 5);
        v[2 * 5 + 2] = f64::NAN;
        let p = Plane::full(&v, 5, 5).unwrap();
        let mut nan = vec![];
        for r in 0..5 {
            for c in 0..5 {
                if p.sample(Order::Bilinear, r as f64, c as f64).is_nan() {
                    nan.push((r, c));
                }
                // renormalised: only the pixel itself (all other taps have weight 0)
                let s = p.sample_renormalized(Order::Bilinear, r as f64, c as f64);
                assert_eq!(s.is_nan(), (r, c) == (2, 2));
                if !s.is_nan() {
                    assert_eq!(s, v[r * 5 + c]);
                }
            }
        }
        assert_eq!(nan, vec![(1, 1), (1, 2), (2, 1), (2, 2)]);
        // NaN at (2,3): rows 1-2 x cols 2-4 (col 4 via the mirrored tap)
        let mut v = ramp(5, 5);
        v[2 * 5 + 3] = f64::NAN;
        let p = Plane::full(&v, 5, 5).unwrap();
        let mut nan = vec![];
        for r in 0..5 {
            for c in 0..5 {
                if p.sample(Order::Bilinear, r as f64, c as f64).is_nan() {
                    nan.push((r, c));
                }
            }
        }
        assert_eq!(nan, vec![(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (2, 4)]);
    }

    #[test]
    fn renormalized_bilinear_rule() {
        let mut v = ramp(4, 4);
        v[5] = f64::NAN; // (1,1)
        let p = Plane::full(&v, 4, 4).unwrap();
        // point (0.25, 0.5): taps (0,0) (0,1) (1,0) (1,1), weights
        let (y, x) = (0.25, 0.5);
        let (wy0, wy1, wx0, wx1) = (0.75, 0.25, 0.5, 0.5);
        let num = v[0] * wy0 * wx0 + v[1] * wy0 * wx1 + v[4] * wy1 * wx0;
        let den = wy0 * wx0 + wy0 * wx1 + wy1 * wx0;
        assert!(p.sample(Order::Bilinear, y, x).is_nan());
        assert_eq!(p.sample_renormalized(Order::Bilinear, y, x), num / den);
        // all contributing taps NaN -> NaN
        let v = [f64::NAN, f64::NAN, 1.0, 2.0];
        let p = Plane::full(&v, 2, 2).unwrap();
        assert!(p.sample_renormalized(Order::Bilinear, 0.0, 0.5).is_nan());
        assert_eq!(p.sample_renormalized(Order::Bilinear, 1.0, 0.5), 1.5);
        // inf with zero weight does not poison; with weight it gives inf
        let v = [1.0, 2.0, f64::INFINITY, 4.0];
        let p = Plane::full(&v, 2, 2).unwrap();
        assert!(p.sample(Order::Bilinear, 0.0, 0.5).is_nan());
        assert_eq!(p.sample_renormalized(Order::Bilinear, 0.0, 0.5), 1.5);
        assert_eq!(
            p.sample_renormalized(Order::Bilinear, 0.5, 0.5),
            f64::INFINITY
        );
        // order 0 is unchanged
        assert_eq!(
            p.sample_renormalized(Order::NearestNeighbor, 0.6, 0.4),
            f64::INFINITY
        );
    }

    #[test]
    fn renormalized_equals_propagate_where_finite() {
        let mut v: Vec<f64> = (0..63)
            .map(|i| ((i * 37 % 11) as f64).sqrt() - 1.3)
            .collect();
        v[20] = f64::NAN;
        v[44] = f64::NAN;
        let p = Plane::full(&v, 7, 9).unwrap();
        for i in 0..2000 {
            let y = -0.6 + (i as f64 * 0.61803398875) % 7.2;
            let x = -0.6 + (i as f64 * 0.41421356237) % 9.2;
            let a = p.sample(Order::Bilinear, y, x);
            let b = p.sample_renormalized(Order::Bilinear, y, x);
            if !a.is_nan() {
                assert_eq!(a.to_bits(), b.to_bits());
            }
        }
    }

    #[test]
    fn windows_cover_taps_and_match_full_plane() {
        let (ny, nx) = (13, 11);
        let full: Vec<f64> = (0..ny * nx).map(|i| (i as f64 * 0.7).cos()).collect();
        let fp = Plane::full(&full, ny, nx).unwrap();
        let pts: Vec<(f64, f64)> = (0..400)
            .map(|i| {
                (
                    -1.0 + (i as f64 * 0.377) % 15.0,
                    -1.0 + (i as f64 * 0.591) % 13.0,
                )
            })
            .collect();
        for order in Order::ALL {
            for chunk in pts.chunks(7) {
                let ys: Vec<f64> = chunk.iter().map(|p| p.0).collect();
                let xs: Vec<f64> = chunk.iter().map(|p| p.1).collect();
                let Some(w) = covering_window(order, ny, nx, &ys, &xs) else {
                    for (&y, &x) in ys.iter().zip(&xs) {
                        assert!(fp.sample(order, y, x).is_nan());
                    }
                    continue;
                };
                // copy the window
                let mut data = vec![];
                for r in w.rows.clone() {
                    data.extend_from_slice(&full[r * nx + w.cols.start..r * nx + w.cols.end]);
                }
                let wp = Plane::new(&data, w.rows.clone(), w.cols.clone(), ny, nx).unwrap();
                // and the same window as a strided part of the full buffer
                let first = w.rows.start * nx + w.cols.start;
                let vp =
                    Plane::with_stride(&full[first..], nx, w.rows.clone(), w.cols.clone(), ny, nx)
                        .unwrap();
                for (&y, &x) in ys.iter().zip(&xs) {
                    let a = fp.sample(order, y, x).to_bits();
                    assert_eq!(a, wp.sample(order, y, x).to_bits());
                    assert_eq!(a, vp.sample(order, y, x).to_bits());
                    if let (Some(sy), Some(sx)) = (tap_span(order, y, ny), tap_span(order, x, nx)) {
                        assert!(w.rows.start <= sy.start && sy.end <= w.rows.end);
                        assert!(w.cols.start <= sx.start && sx.end <= w.cols.end);
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "not all inside the window")]
    fn tap_outside_window_panics() {
        let data = [1.0, 2.0, 3.0, 4.0];
        let p = Plane::new(&data, 0..2, 0..2, 5, 5).unwrap();
        p.sample(Order::Bilinear, 1.5, 0.5);
    }

    #[test]
    fn constructor_checks() {
        let d = [0.0; 6];
        assert!(Plane::new(&d, 0..2, 0..3, 2, 3).is_ok());
        assert!(Plane::new(&d, 0..2, 0..2, 2, 3).is_err());
        assert!(Plane::new(&d, 0..3, 0..2, 2, 3).is_err());
        assert!(Plane::with_stride(&d, 4, 0..2, 0..2, 2, 3).is_ok());
        assert!(Plane::with_stride(&d, 1, 0..2, 0..2, 2, 3).is_err());
        let a = ndarray::Array2::from_shape_fn((3, 4), |(r, c)| (10 * r + c) as f64);
        assert!(Plane::from_view(a.t(), 0, 0, 4, 3).is_err());
        let p = Plane::from_view(a.slice(ndarray::s![1..3, ..]), 1, 0, 3, 4).unwrap();
        assert_eq!(p.rows(), 1..3);
        assert_eq!(p.get(2, 3), Some(23.0));
        assert_eq!(p.get(0, 3), None);
        assert_eq!(p.sample(Order::Bilinear, 1.5, 0.5), 15.5);
        assert!(Plane::with_stride(&d, 0, 0..0, 0..0, MAX_SIDE, 1).is_ok());
        assert!(Plane::with_stride(&d, 0, 0..0, 0..0, MAX_SIDE + 1, 1).is_err());
        let e: [f64; 0] = [];
        let p = Plane::full(&e, 0, 0).unwrap();
        assert!(p.sample(Order::Bicubic, 0.0, 0.0).is_nan());
    }

    #[test]
    fn order0_returns_positive_zero_and_rounds_ties_up() {
        let v = [-0.0, 1.0, 2.0, 3.0];
        let p = Plane::full(&v, 1, 4).unwrap();
        assert_eq!(
            p.sample(Order::NearestNeighbor, 0.0, 0.0).to_bits(),
            0.0f64.to_bits()
        );
        assert_eq!(p.sample(Order::NearestNeighbor, 0.0, 0.5), 1.0);
        assert_eq!(p.sample(Order::NearestNeighbor, 0.0, 2.5), 3.0);
        assert_eq!(p.sample(Order::NearestNeighbor, 0.0, 2.4999), 2.0);
    }
}

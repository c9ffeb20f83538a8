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
//!
//! The module's parts: the edge rule and the taps' weights (here), [`Window`]s
//! (`window.rs`), the sampler [`Plane`] (`plane.rs`) and the masked spline of
//! [`NanPolicy::Renormalize`](super::NanPolicy::Renormalize) ([`MaskedSpline`], `masked.rs`).

use super::Order;

mod masked;
mod plane;
mod window;

pub use masked::MaskedSpline;
pub use plane::Plane;
pub use window::{covering_window, tap_span, Window};

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

#[cfg(test)]
mod tests;

//! The windows of an image that sampling reads: the taps' span of one coordinate and the
//! smallest window holding every tap of a set of points.

use std::ops::Range;

use super::{clip, clip_coordinate, floor_nonneg, mirror_index};
use crate::interp::Order;

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

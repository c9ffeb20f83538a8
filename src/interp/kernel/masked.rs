//! [`MaskedSpline`]: [`NanPolicy::Renormalize`](crate::interp::NanPolicy::Renormalize) for
//! the spline orders.

use super::Plane;
use crate::error::{Error, Result};
use crate::interp::Order;

/// [`NanPolicy::Renormalize`](crate::interp::NanPolicy::Renormalize) for orders ≥ 2:
/// normalised convolution over three planes of the same window.
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

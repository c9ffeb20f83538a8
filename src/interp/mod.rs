//! Interpolation kernels that reproduce `reproject.reproject_interp` sample for sample.
//!
//! reproject samples the input image with its own `map_coordinates` wrapper around
//! `scipy.ndimage.map_coordinates(order=k, mode='constant', cval=NaN)`. This module ports
//! that path bit for bit (same operations in the same order, no FMA):
//!
//! * the half-pixel edge rule (reproject's `_clip_coords` plus its reset): along an axis of
//!   length `n` a coordinate is valid in `[-0.5, n-0.5)`, the outer half pixel is clamped
//!   onto the edge pixel centre, and a point that fails on any axis (or is NaN) gives NaN;
//! * scipy's taps (whole-sample mirror at the image edge), weights (`w[last] = 1 - Σ others`)
//!   and C-order accumulation `t += (v * w_row) * w_col` ([`kernel`]);
//! * for orders ≥ 2, scipy's B-spline prefilter with the mirror boundary, applied to the
//!   whole image along axis 0 then axis 1 ([`spline`]).
//!
//! NaN handling follows reproject by default ([`NanPolicy::Propagate`]): a NaN tap poisons
//! the sample even with a zero weight, and any NaN makes a spline-interpolated image all NaN.
//! [`NanPolicy::Renormalize`] is an opt-in fix for reproject issue #464.
//!
//! Scope: the kernels reproduce reproject's float64 path for one 2-D image of at most
//! 268,435,456 pixels (reproject's single chunk). Two things stay with the caller: the dtype
//! rules (reproject rounds order ≥ 2 results, and order-1 results of big-endian inputs, to
//! float32 for float32/integer inputs) and, for orders ≥ 2 on larger images, reproject's
//! per-chunk prefilter with 10 pixels of padding.
//!
//! The low-level pieces are [`Plane`] (a window of an image, of `f64` or `f32` samples
//! ([`Sample`]), sampled with [`Plane::sample`]; [`Plane::sample_many`] runs orders 1 to 3 four
//! points at a time with AVX2 where the CPU has it, bit-identical to the scalar code),
//! [`covering_window`] (which part of the image a set of points needs) and
//! [`spline::prefilter`]. [`Interpolator`] bundles them for a whole image:
//!
//! ```
//! use ndarray::array;
//! use reproject::interp::{Interpolator, NanPolicy, Order};
//! let image = array![[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]];
//! let interp = Interpolator::new(image.view(), Order::Bilinear, NanPolicy::Propagate);
//! assert_eq!(interp.sample(0.5, 1.5), 6.5);
//! assert_eq!(interp.sample(1.4, 2.4), 12.0); // outer half pixel: clamped to the edge
//! assert!(interp.sample(1.5, 0.0).is_nan()); // n - 0.5 is outside
//! ```

mod avx2;
pub mod kernel;
mod sample;
pub mod spline;

use std::fmt;
use std::str::FromStr;

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

pub use kernel::{clip_coordinate, covering_window, tap_span, MaskedSpline, Plane, Window};
pub use sample::Sample;

/// The interpolation order, as reproject's `order=` argument.
///
/// The string names are reproject's (`'nearest-neighbor'`, `'bilinear'`, `'biquadratic'`,
/// `'bicubic'`); orders 4 and 5, which reproject only accepts as integers, are named
/// `'quartic'` and `'quintic'` here. Serialised as the name; deserialised from a name or
/// from an integer 0..=5.
///
/// ```
/// use reproject::interp::Order;
/// let o: Order = "bicubic".parse()?;
/// assert_eq!(o, Order::Bicubic);
/// assert_eq!(o.degree(), 3);
/// assert_eq!(Order::try_from(1)?, Order::Bilinear);
/// assert!(Order::try_from(6).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// Order 0: the nearest pixel (ties round up, as scipy).
    NearestNeighbor,
    /// Order 1: bilinear interpolation.
    Bilinear,
    /// Order 2: quadratic B-spline (prefiltered).
    Biquadratic,
    /// Order 3: cubic B-spline (prefiltered).
    Bicubic,
    /// Order 4: quartic B-spline (prefiltered).
    Quartic,
    /// Order 5: quintic B-spline (prefiltered).
    Quintic,
}

impl Order {
    /// All orders, from 0 to 5.
    ///
    /// ```
    /// use reproject::interp::Order;
    /// assert_eq!(Order::ALL.len(), 6);
    /// assert!(Order::ALL.iter().enumerate().all(|(k, o)| o.degree() == k));
    /// ```
    pub const ALL: [Order; 6] = [
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ];

    /// The spline degree: 0 for nearest-neighbour up to 5 for quintic.
    ///
    /// ```
    /// assert_eq!(reproject::interp::Order::Quintic.degree(), 5);
    /// ```
    pub fn degree(self) -> usize {
        match self {
            Order::NearestNeighbor => 0,
            Order::Bilinear => 1,
            Order::Biquadratic => 2,
            Order::Bicubic => 3,
            Order::Quartic => 4,
            Order::Quintic => 5,
        }
    }

    /// The name: reproject's for orders 0-3, `"quartic"` and `"quintic"` for 4 and 5.
    ///
    /// ```
    /// use reproject::interp::Order;
    /// assert_eq!(Order::NearestNeighbor.name(), "nearest-neighbor");
    /// assert_eq!(Order::Quartic.name(), "quartic");
    /// for o in Order::ALL {
    ///     assert_eq!(o.name().parse::<Order>()?, o); // the names parse back
    /// }
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Order::NearestNeighbor => "nearest-neighbor",
            Order::Bilinear => "bilinear",
            Order::Biquadratic => "biquadratic",
            Order::Bicubic => "bicubic",
            Order::Quartic => "quartic",
            Order::Quintic => "quintic",
        }
    }

    /// Whether the order needs the B-spline prefilter (orders ≥ 2).
    ///
    /// ```
    /// use reproject::interp::Order;
    /// assert!(!Order::NearestNeighbor.needs_prefilter());
    /// assert!(!Order::Bilinear.needs_prefilter());
    /// assert!(Order::Biquadratic.needs_prefilter() && Order::Quintic.needs_prefilter());
    /// ```
    pub fn needs_prefilter(self) -> bool {
        self.degree() >= 2
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Order {
    type Err = Error;

    /// Parses reproject's names (`nearest-neighbor`, `bilinear`, `biquadratic`, `bicubic`)
    /// and this crate's `quartic` and `quintic`.
    fn from_str(s: &str) -> Result<Order> {
        Order::ALL
            .iter()
            .copied()
            .find(|o| o.name() == s)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown interpolation order '{s}': expected 'nearest-neighbor', 'bilinear', \
                     'biquadratic', 'bicubic', 'quartic', 'quintic' or an integer 0-5"
                ))
            })
    }
}

impl TryFrom<i64> for Order {
    type Error = Error;

    /// The order of the given degree, 0..=5.
    fn try_from(k: i64) -> Result<Order> {
        usize::try_from(k)
            .ok()
            .and_then(|k| Order::ALL.get(k).copied())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "interpolation order must be between 0 and 5, got {k}"
                ))
            })
    }
}

impl Serialize for Order {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Order {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Order, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Name(String),
            Degree(i64),
        }
        match Repr::deserialize(d)? {
            Repr::Name(s) => s.parse().map_err(serde::de::Error::custom),
            Repr::Degree(k) => Order::try_from(k).map_err(serde::de::Error::custom),
        }
    }
}

/// What a NaN in the input image does to the samples around it.
///
/// * [`Propagate`](NanPolicy::Propagate) (the default) is reproject's behaviour, exactly:
///   order 0 returns the sampled pixel; order 1 returns NaN whenever one of its 2×2 taps is
///   NaN, even a tap with weight 0 (so a NaN spreads one pixel up and left); orders ≥ 2 turn
///   the whole image NaN as soon as one pixel is NaN (the IIR prefilter spreads it), and an
///   infinity does the same.
/// * [`Renormalize`](NanPolicy::Renormalize) fixes reproject issue #464:
///   * order 0: identical to `Propagate`;
///   * order 1: taps with a zero weight are ignored. If none of the remaining taps is NaN the
///     result is exactly scipy's sum over them (bit-identical to `Propagate` wherever
///     `Propagate` is not NaN). Otherwise the result is `Σ v·w / Σ w` over the non-NaN taps
///     with non-zero weight (`w = w_row · w_col`, accumulated in C order), and NaN when there
///     is none. Infinities are values, as with `Propagate`;
///   * orders ≥ 2: normalised convolution. Non-finite pixels (NaN and ±inf: an infinity
///     cannot pass through the spline prefilter) are missing. The data with missing pixels
///     set to 0 and the validity mask (1 valid / 0 missing) are prefiltered separately; both
///     are sampled and the result is `data / mask`. It is NaN where the mask sample is below
///     0.5 (or NaN, i.e. outside the image) and where the nearest input pixel (order-0 rule)
///     is missing. An image without missing pixels is sampled exactly as with `Propagate`.
///
/// ```
/// use reproject::interp::NanPolicy;
/// assert_eq!(NanPolicy::default(), NanPolicy::Propagate);
/// assert_eq!("renormalize".parse::<NanPolicy>()?, NanPolicy::Renormalize);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NanPolicy {
    /// reproject's behaviour (NaN taps poison the sample).
    #[default]
    Propagate,
    /// Weights renormalised over the valid taps (see the type's documentation).
    Renormalize,
}

impl FromStr for NanPolicy {
    type Err = Error;

    /// `"propagate"` or `"renormalize"`.
    fn from_str(s: &str) -> Result<NanPolicy> {
        match s {
            "propagate" => Ok(NanPolicy::Propagate),
            "renormalize" => Ok(NanPolicy::Renormalize),
            _ => Err(Error::InvalidArgument(format!(
                "unknown NaN policy '{s}': expected 'propagate' or 'renormalize'"
            ))),
        }
    }
}

impl fmt::Display for NanPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NanPolicy::Propagate => "propagate",
            NanPolicy::Renormalize => "renormalize",
        })
    }
}

/// A whole image prepared for sampling with one order and NaN policy.
///
/// It owns a copy of the image (or of its spline coefficients for orders ≥ 2, computed with
/// [`spline::prefilter`] on the whole image, as scipy does). For [`NanPolicy::Renormalize`]
/// with orders ≥ 2 and an image that has non-finite pixels it also keeps the coefficients of
/// the validity mask and the raw image ([`MaskedSpline`]).
///
/// ```
/// use ndarray::Array2;
/// use reproject::interp::{Interpolator, NanPolicy, Order};
/// let image = Array2::from_shape_fn((5, 5), |(r, c)| 10.0 * r as f64 + c as f64);
/// let cubic = Interpolator::new(image.view(), Order::Bicubic, NanPolicy::Propagate);
/// assert!((cubic.sample(2.0, 0.3) - 20.135).abs() < 1e-3); // reproject gives 20.135
/// let (ys, xs) = ([2.0, 2.0], [0.3, 4.5]);
/// let mut out = [0.0; 2];
/// cubic.sample_many(&ys, &xs, &mut out);
/// assert!(out[1].is_nan());
/// ```
#[derive(Debug, Clone)]
pub struct Interpolator {
    order: Order,
    policy: NanPolicy,
    ny: usize,
    nx: usize,
    /// Raw values (order ≤ 1) or spline coefficients (order ≥ 2; of the zero-filled image in
    /// the masked case).
    values: Vec<f64>,
    /// Masked spline: (mask coefficients, raw image).
    masked: Option<(Vec<f64>, Vec<f64>)>,
}

impl Interpolator {
    /// Prepares `image` (rows × columns, any memory layout) for sampling.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = Array2::from_shape_fn((4, 6), |(r, c)| 10.0 * r as f64 + c as f64);
    /// let interp = Interpolator::new(image.view(), Order::Bilinear, NanPolicy::Propagate);
    /// assert_eq!(interp.sample(2.5, 3.25), 28.25); // bilinear is exact on a ramp
    /// // any memory layout: a transposed view is sampled with the coordinates swapped
    /// let t = Interpolator::new(image.t(), Order::Bilinear, NanPolicy::Propagate);
    /// assert_eq!(t.sample(3.25, 2.5), 28.25);
    /// ```
    pub fn new(image: ArrayView2<f64>, order: Order, policy: NanPolicy) -> Interpolator {
        let (ny, nx) = image.dim();
        let raw: Vec<f64> = image.iter().copied().collect();
        let masked_case = order.needs_prefilter()
            && policy == NanPolicy::Renormalize
            && raw.iter().any(|v| !v.is_finite());
        let (values, masked) = if masked_case {
            let (coeffs, mask) = spline::prefilter_masked(image, order);
            (into_vec(coeffs), Some((into_vec(mask), raw)))
        } else if order.needs_prefilter() {
            let mut a = Array2::from_shape_vec((ny, nx), raw).expect("shape matches");
            spline::prefilter(a.view_mut(), order);
            (into_vec(a), None)
        } else {
            (raw, None)
        };
        Interpolator {
            order,
            policy,
            ny,
            nx,
            values,
            masked,
        }
    }

    /// The interpolation order.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = Array2::<f64>::zeros((3, 5));
    /// let interp = Interpolator::new(image.view(), Order::Quartic, NanPolicy::Propagate);
    /// assert_eq!(interp.order(), Order::Quartic);
    /// ```
    pub fn order(&self) -> Order {
        self.order
    }

    /// The NaN policy.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = Array2::<f64>::zeros((3, 5));
    /// let interp = Interpolator::new(image.view(), Order::Bicubic, NanPolicy::Renormalize);
    /// assert_eq!(interp.policy(), NanPolicy::Renormalize);
    /// ```
    pub fn policy(&self) -> NanPolicy {
        self.policy
    }

    /// The image shape `(rows, columns)`.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = Array2::<f64>::zeros((3, 5));
    /// let interp = Interpolator::new(image.view(), Order::Bilinear, NanPolicy::Propagate);
    /// assert_eq!(interp.shape(), (3, 5));
    /// let t = Interpolator::new(image.t(), Order::Bilinear, NanPolicy::Propagate);
    /// assert_eq!(t.shape(), (5, 3));
    /// ```
    pub fn shape(&self) -> (usize, usize) {
        (self.ny, self.nx)
    }

    /// The plane that is sampled: raw values for orders ≤ 1, spline coefficients for ≥ 2.
    ///
    /// ```
    /// use ndarray::array;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = array![[1.0, 2.0], [3.0, 4.0]];
    /// let linear = Interpolator::new(image.view(), Order::Bilinear, NanPolicy::Propagate);
    /// assert_eq!(linear.plane().get(1, 0), Some(3.0)); // the raw value
    /// let cubic = Interpolator::new(image.view(), Order::Bicubic, NanPolicy::Propagate);
    /// assert_ne!(cubic.plane().get(1, 0), Some(3.0)); // a spline coefficient
    /// assert_eq!(cubic.plane().sample(Order::Bicubic, 0.4, 0.7), cubic.sample(0.4, 0.7));
    /// ```
    pub fn plane(&self) -> Plane<'_> {
        Plane::full(&self.values, self.ny, self.nx).expect("consistent shape")
    }

    /// The value at row coordinate `y` and column coordinate `x` (0-based input pixel
    /// coordinates, pixel centres at integers), NaN outside `[-0.5, n-0.5)` on either axis.
    ///
    /// ```
    /// use ndarray::array;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = array![[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]];
    /// let nearest = Interpolator::new(image.view(), Order::NearestNeighbor, NanPolicy::Propagate);
    /// assert_eq!(nearest.sample(0.5, 1.4), 11.0); // row 0.5 rounds up to row 1
    /// assert_eq!(nearest.sample(-0.5, 2.49), 2.0); // outer half pixels: the edge pixel
    /// assert!(nearest.sample(0.0, -0.51).is_nan()); // outside
    /// ```
    #[inline]
    pub fn sample(&self, y: f64, x: f64) -> f64 {
        let plane = self.plane();
        match (&self.masked, self.policy) {
            (Some((mask, raw)), _) => MaskedSpline::new(
                plane,
                Plane::full(mask, self.ny, self.nx).expect("consistent shape"),
                Plane::full(raw, self.ny, self.nx).expect("consistent shape"),
            )
            .expect("same shapes")
            .sample(self.order, y, x),
            (None, NanPolicy::Renormalize) if !self.order.needs_prefilter() => {
                plane.sample_renormalized(self.order, y, x)
            }
            _ => plane.sample(self.order, y, x),
        }
    }

    /// Samples every point `(ys[i], xs[i])` into `out[i]`.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::interp::{Interpolator, NanPolicy, Order};
    /// let image = Array2::from_shape_fn((4, 4), |(r, c)| 10.0 * r as f64 + c as f64);
    /// let interp = Interpolator::new(image.view(), Order::Bilinear, NanPolicy::Propagate);
    /// let (ys, xs) = ([0.5, 1.25, 3.0, 4.0], [0.5, 2.0, 2.75, 0.0]);
    /// let mut out = [0.0; 4];
    /// interp.sample_many(&ys, &xs, &mut out);
    /// assert_eq!(out[..3], [5.5, 14.5, 32.75]);
    /// assert!(out[3].is_nan()); // row 4 is outside the 4 rows
    /// ```
    ///
    /// # Panics
    /// If the three slices differ in length.
    pub fn sample_many(&self, ys: &[f64], xs: &[f64], out: &mut [f64]) {
        let plane = self.plane();
        match (&self.masked, self.policy) {
            (Some((mask, raw)), _) => {
                let m = MaskedSpline::new(
                    plane,
                    Plane::full(mask, self.ny, self.nx).expect("consistent shape"),
                    Plane::full(raw, self.ny, self.nx).expect("consistent shape"),
                )
                .expect("same shapes");
                m.sample_many(self.order, ys, xs, out)
            }
            (None, NanPolicy::Renormalize) if !self.order.needs_prefilter() => {
                plane.sample_many_renormalized(self.order, ys, xs, out)
            }
            _ => plane.sample_many(self.order, ys, xs, out),
        }
    }
}

fn into_vec(a: Array2<f64>) -> Vec<f64> {
    if a.is_standard_layout() {
        let (v, offset) = a.into_raw_vec_and_offset();
        debug_assert!(offset.unwrap_or(0) == 0);
        v
    } else {
        a.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn order_names_and_degrees() {
        for (k, o) in Order::ALL.iter().enumerate() {
            assert_eq!(o.degree(), k);
            assert_eq!(Order::try_from(k as i64).unwrap(), *o);
            assert_eq!(o.name().parse::<Order>().unwrap(), *o);
            assert_eq!(o.to_string(), o.name());
        }
        assert_eq!(
            "nearest-neighbor".parse::<Order>().unwrap(),
            Order::NearestNeighbor
        );
        assert_eq!("biquadratic".parse::<Order>().unwrap(), Order::Biquadratic);
        for bad in ["linear", "Bilinear", "", "3"] {
            let e = bad.parse::<Order>().unwrap_err();
            assert!(
                matches!(e, Error::InvalidArgument(ref m) if m.contains("unknown interpolation order"))
            );
        }
        for bad in [-1, 6, i64::MAX, i64::MIN] {
            let e = Order::try_from(bad).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(ref m) if m.contains("between 0 and 5")));
        }
    }

    #[test]
    fn serde_round_trip() {
        let s = serde_json::to_string(&Order::Bicubic).unwrap();
        assert_eq!(s, "\"bicubic\"");
        assert_eq!(serde_json::from_str::<Order>(&s).unwrap(), Order::Bicubic);
        assert_eq!(serde_json::from_str::<Order>("4").unwrap(), Order::Quartic);
        assert!(serde_json::from_str::<Order>("7").is_err());
        assert!(serde_json::from_str::<Order>("\"cubic\"").is_err());
        let p = serde_json::to_string(&NanPolicy::Renormalize).unwrap();
        assert_eq!(p, "\"renormalize\"");
        assert_eq!(
            serde_json::from_str::<NanPolicy>(&p).unwrap(),
            NanPolicy::Renormalize
        );
        assert_eq!(
            "propagate".parse::<NanPolicy>().unwrap(),
            NanPolicy::Propagate
        );
        assert!("ignore".parse::<NanPolicy>().is_err());
    }

    #[test]
    fn interpolator_policies_agree_on_clean_images() {
        let image = Array2::from_shape_fn((6, 7), |(r, c)| ((r * 7 + c) as f64).sin() * 3.0);
        for order in Order::ALL {
            let a = Interpolator::new(image.view(), order, NanPolicy::Propagate);
            let b = Interpolator::new(image.view(), order, NanPolicy::Renormalize);
            for i in 0..200 {
                let y = -0.7 + 0.037 * i as f64;
                let x = 6.6 - 0.041 * i as f64;
                assert_eq!(
                    a.sample(y, x).to_bits(),
                    b.sample(y, x).to_bits(),
                    "{order} {y} {x}"
                );
            }
        }
    }
}

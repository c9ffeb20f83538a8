//! The B-spline prefilter of orders 2 to 5: scipy's `spline_filter(image, order,
//! output=float64, mode='constant')`, bit for bit.
//!
//! For `mode='constant'` scipy computes the coefficients with the **mirror** boundary
//! (`ni_splines.c`). The 1-D filter runs along axis 0 (every column), then along axis 1
//! (every row), in place; lines of length ≤ 1 are left untouched. For each line `c` of
//! length `n` ([`filter_line`]):
//!
//! ```text
//! gain = Π_z (1 - z)(1 - 1/z);   c[i] *= gain
//! for each pole z:
//!     z_n_1 = pow(z, n - 1)                       (libm pow)
//!     c0 = c[0] + z_n_1 c[n-1];  z_i = z
//!     for i in 1..n-1: c0 += z_i (c[i] + z_n_1 c[n-1-i]);  z_i *= z
//!     c[0] = c0 / (1 - z_n_1 z_n_1)
//!     for i in 1..n:  c[i] += z c[i-1]
//!     c[n-1] = (z c[n-2] + c[n-1]) z / (z z - 1)
//!     for i in n-2..=0: c[i] = z (c[i+1] - c[i])
//! ```
//!
//! The causal initialisation sums over the whole line (no truncation), so a NaN or an
//! infinity anywhere in a line reaches every coefficient of it, and after both axes every
//! coefficient of the image.
//!
//! [`prefilter`] processes 16 lines at a time, interleaved, so that the recursions vectorise
//! across lines; each line still sees exactly the operations above, in the same order.

use ndarray::parallel::prelude::*;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};

use super::Order;

/// Lines filtered together by [`prefilter`] (interleaved, so the recursions vectorise).
const LANES: usize = 16;

/// The filter poles of scipy's `get_filter_poles`, as the same decimal literals.
#[allow(clippy::excessive_precision)]
mod poles {
    /// Order 2: `sqrt(8) - 3`.
    pub const ORDER2: [f64; 1] = [-0.171572875253809902396622551580603843];
    /// Order 3: `sqrt(3) - 2`.
    pub const ORDER3: [f64; 1] = [-0.267949192431122706472553658494127633];
    /// Order 4: `sqrt(664 - sqrt(438976)) + sqrt(304) - 19` and
    /// `sqrt(664 + sqrt(438976)) - sqrt(304) - 19`.
    pub const ORDER4: [f64; 2] = [
        -0.361341225900220177092212841325675255,
        -0.013725429297339121360331226939128204,
    ];
    /// Order 5: `sqrt(67.5 - sqrt(4436.25)) + sqrt(26.25) - 6.5` and
    /// `sqrt(67.5 + sqrt(4436.25)) - sqrt(26.25) - 6.5`.
    pub const ORDER5: [f64; 2] = [
        -0.430575347099973791851434783493520110,
        -0.043096288203264653822712376822550182,
    ];
}

/// The poles of the recursive filter of `order` (none for orders 0 and 1).
///
/// ```
/// use reproject::interp::{spline::filter_poles, Order};
/// assert!((filter_poles(Order::Bicubic)[0] - (3f64.sqrt() - 2.0)).abs() < 1e-15);
/// assert_eq!(filter_poles(Order::Quintic).len(), 2);
/// assert!(filter_poles(Order::Bilinear).is_empty());
/// ```
pub fn filter_poles(order: Order) -> &'static [f64] {
    match order {
        Order::NearestNeighbor | Order::Bilinear => &[],
        Order::Biquadratic => &poles::ORDER2,
        Order::Bicubic => &poles::ORDER3,
        Order::Quartic => &poles::ORDER4,
        Order::Quintic => &poles::ORDER5,
    }
}

/// scipy's filter gain `Π (1 - z)(1 - 1/z)` over the poles, multiplied in order from 1.0.
///
/// ```
/// use reproject::interp::{spline::{filter_gain, filter_poles}, Order};
/// assert!((filter_gain(filter_poles(Order::Bicubic)) - 6.0).abs() < 1e-12);
/// assert!((filter_gain(filter_poles(Order::Biquadratic)) - 8.0).abs() < 1e-12);
/// assert_eq!(filter_gain(filter_poles(Order::Bilinear)), 1.0); // no poles
/// ```
pub fn filter_gain(poles: &[f64]) -> f64 {
    let mut gain = 1.0;
    for &z in poles {
        gain *= (1.0 - z) * (1.0 - 1.0 / z);
    }
    gain
}

/// The pole constants of the device prefilter (`kernels/spline.cu`) for lines of `n`
/// elements, as [`filter_line`] computes them: for each pole of `order`, `z`, `z^(n-1)`,
/// `1 - z^(n-1)·z^(n-1)` and `z·z - 1` (so that the device needs no `pow`).
///
/// ```
/// use reproject::interp::{spline::spline_pole_params, Order};
/// let p = spline_pole_params(Order::Bicubic, 2);
/// assert_eq!(p.len(), 4);
/// assert_eq!(p[1], p[0]); // z^1
/// ```
pub fn spline_pole_params(order: Order, n: usize) -> Vec<f64> {
    let mut params = Vec::new();
    for &z in filter_poles(order) {
        let z_n_1 = z.powf(n.saturating_sub(1) as f64);
        params.extend([z, z_n_1, 1.0 - z_n_1 * z_n_1, z * z - 1.0]);
    }
    params
}

/// Filters `L` interleaved lines of length `n`: element `i` of lane `l` is `b[i * L + l]`.
/// Every lane gets exactly scipy's operation sequence (`_apply_filter_gain`, then
/// `_apply_filter` with the mirror initialisations for each pole).
#[inline(always)]
fn filter_lanes<const L: usize>(b: &mut [f64], n: usize, poles: &[f64], gain: f64) {
    debug_assert!(n >= 2 && b.len() >= n * L);
    let b = &mut b[..n * L];
    for v in b.iter_mut() {
        *v *= gain;
    }
    for &z in poles {
        // causal initialisation, mirror boundary (`_init_causal_mirror`)
        let z_n_1 = z.powf((n - 1) as f64);
        let mut c0 = [0.0f64; L];
        {
            let (first, last) = (&b[..L], &b[(n - 1) * L..]);
            for l in 0..L {
                c0[l] = first[l] + z_n_1 * last[l];
            }
        }
        let mut z_i = z;
        for i in 1..n - 1 {
            let a = &b[i * L..(i + 1) * L];
            let r = &b[(n - 1 - i) * L..(n - i) * L];
            for l in 0..L {
                c0[l] += z_i * (a[l] + z_n_1 * r[l]);
            }
            z_i *= z;
        }
        let div = 1.0 - z_n_1 * z_n_1;
        for l in 0..L {
            b[l] = c0[l] / div;
        }
        // causal recursion
        for i in 1..n {
            let (prev, cur) = b[(i - 1) * L..(i + 1) * L].split_at_mut(L);
            for l in 0..L {
                cur[l] += z * prev[l];
            }
        }
        // anticausal initialisation, mirror boundary (`_init_anticausal_mirror`)
        let zz1 = z * z - 1.0;
        {
            let (prev, last) = b[(n - 2) * L..n * L].split_at_mut(L);
            for l in 0..L {
                last[l] = (z * prev[l] + last[l]) * z / zz1;
            }
        }
        // anticausal recursion
        for i in (0..n - 1).rev() {
            let (cur, next) = b[i * L..(i + 2) * L].split_at_mut(L);
            for l in 0..L {
                cur[l] = z * (next[l] - cur[l]);
            }
        }
    }
}

/// scipy's 1-D spline filter of one line, in place (`NI_SplineFilter1D` on a line with the
/// mirror boundary). Lines of length ≤ 1 and orders 0 and 1 are left untouched.
///
/// ```
/// use reproject::interp::{spline::filter_line, Order};
/// let mut line = [1.0, 1.0, 1.0, 1.0];
/// filter_line(&mut line, Order::Bicubic);
/// assert!(line.iter().all(|c| (c - 1.0).abs() < 1e-15)); // a constant is its own spline
/// let mut line = [0.0, 6.0, 0.0];
/// filter_line(&mut line, Order::Bicubic);
/// assert!((line[1] - 12.0).abs() < 1e-12);
/// ```
pub fn filter_line(line: &mut [f64], order: Order) {
    let poles = filter_poles(order);
    if poles.is_empty() || line.len() <= 1 {
        return;
    }
    let n = line.len();
    filter_lanes::<1>(line, n, poles, filter_gain(poles));
}

/// Converts `plane` (rows × columns, any layout) into B-spline coefficients of `order` in
/// place: scipy's `spline_filter(plane, order, output=float64, mode='constant')`, bit for
/// bit. Orders 0 and 1 leave the plane unchanged. Runs in parallel over lines (rayon).
///
/// ```
/// use ndarray::Array2;
/// use reproject::interp::{spline::prefilter, Order, Plane};
/// let image = Array2::from_shape_fn((5, 5), |(r, c)| 10.0 * r as f64 + c as f64);
/// let mut coeffs = image.clone();
/// prefilter(coeffs.view_mut(), Order::Biquadratic);
/// let plane = Plane::full(coeffs.as_slice().unwrap(), 5, 5)?;
/// // sampling the coefficients at a pixel centre gives the pixel back
/// assert!((plane.sample(Order::Biquadratic, 2.0, 3.0) - 23.0).abs() < 1e-12);
/// // reproject's value at x = 0.3 on row 2 (mirror-boundary distortion near the edge)
/// assert!((plane.sample(Order::Biquadratic, 2.0, 0.3) - 20.1271).abs() < 1e-4);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn prefilter(mut plane: ArrayViewMut2<f64>, order: Order) {
    let poles = filter_poles(order);
    if poles.is_empty() {
        return;
    }
    let gain = filter_gain(poles);
    let (ny, nx) = plane.dim();
    if ny == 0 || nx == 0 {
        return;
    }
    // Axis 0: every column is a line of length ny; LANES neighbouring columns at a time.
    if ny > 1 {
        plane
            .axis_chunks_iter_mut(Axis(1), LANES)
            .into_par_iter()
            .for_each_init(
                || vec![0.0f64; ny * LANES],
                |buf, mut chunk| {
                    let w = chunk.ncols();
                    for (i, row) in chunk.outer_iter().enumerate() {
                        let dst = &mut buf[i * LANES..i * LANES + w];
                        match row.as_slice() {
                            Some(s) => dst.copy_from_slice(s),
                            None => dst.iter_mut().zip(row.iter()).for_each(|(d, v)| *d = *v),
                        }
                    }
                    filter_lanes::<LANES>(buf, ny, poles, gain);
                    for (i, mut row) in chunk.outer_iter_mut().enumerate() {
                        let src = &buf[i * LANES..i * LANES + w];
                        match row.as_slice_mut() {
                            Some(s) => s.copy_from_slice(src),
                            None => row.iter_mut().zip(src).for_each(|(d, v)| *d = *v),
                        }
                    }
                },
            );
    }
    // Axis 1: every row is a line of length nx; LANES rows at a time, transposed.
    if nx > 1 {
        plane
            .axis_chunks_iter_mut(Axis(0), LANES)
            .into_par_iter()
            .for_each_init(
                || vec![0.0f64; nx * LANES],
                |buf, mut chunk| {
                    for (l, row) in chunk.outer_iter().enumerate() {
                        match row.as_slice() {
                            Some(s) => s
                                .iter()
                                .enumerate()
                                .for_each(|(i, v)| buf[i * LANES + l] = *v),
                            None => row
                                .iter()
                                .enumerate()
                                .for_each(|(i, v)| buf[i * LANES + l] = *v),
                        }
                    }
                    filter_lanes::<LANES>(buf, nx, poles, gain);
                    for (l, mut row) in chunk.outer_iter_mut().enumerate() {
                        match row.as_slice_mut() {
                            Some(s) => s
                                .iter_mut()
                                .enumerate()
                                .for_each(|(i, v)| *v = buf[i * LANES + l]),
                            None => row
                                .iter_mut()
                                .enumerate()
                                .for_each(|(i, v)| *v = buf[i * LANES + l]),
                        }
                    }
                },
            );
    }
}

/// The two coefficient planes of the normalised convolution used by
/// [`NanPolicy::Renormalize`](super::NanPolicy::Renormalize) for orders ≥ 2: the spline
/// coefficients of `image` with its non-finite pixels set to 0, and those of its validity
/// mask (1.0 where finite, 0.0 elsewhere). Both are standard-layout arrays of the image's
/// shape; see [`MaskedSpline`](super::MaskedSpline).
///
/// ```
/// use ndarray::Array2;
/// use reproject::interp::{spline::prefilter_masked, Order, Plane};
/// let mut image = Array2::from_shape_fn((6, 6), |(r, c)| (r + c) as f64);
/// image[[2, 4]] = f64::NAN;
/// let (coeffs, mask) = prefilter_masked(image.view(), Order::Bicubic);
/// assert!(coeffs.iter().chain(&mask).all(|v| v.is_finite())); // the NaN did not spread
/// // both are interpolating splines: at the pixel centres they give back 0-filled data, mask
/// let c = Plane::full(coeffs.as_slice().unwrap(), 6, 6)?;
/// let m = Plane::full(mask.as_slice().unwrap(), 6, 6)?;
/// assert!(c.sample(Order::Bicubic, 2.0, 4.0).abs() < 1e-12);
/// assert!((c.sample(Order::Bicubic, 1.0, 3.0) - 4.0).abs() < 1e-12);
/// assert!(m.sample(Order::Bicubic, 2.0, 4.0).abs() < 1e-12);
/// assert!((m.sample(Order::Bicubic, 2.0, 3.0) - 1.0).abs() < 1e-12);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn prefilter_masked(image: ArrayView2<f64>, order: Order) -> (Array2<f64>, Array2<f64>) {
    let mut data = Array2::from_shape_fn(image.dim(), |ix| {
        let v = image[ix];
        if v.is_finite() {
            v
        } else {
            0.0
        }
    });
    let mut mask =
        Array2::from_shape_fn(
            image.dim(),
            |ix| if image[ix].is_finite() { 1.0 } else { 0.0 },
        );
    prefilter(data.view_mut(), order);
    prefilter(mask.view_mut(), order);
    (data, mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array2};

    fn image(ny: usize, nx: usize) -> Array2<f64> {
        Array2::from_shape_fn((ny, nx), |(r, c)| {
            ((r * 131 + c * 71) % 97) as f64 * 0.37 - 11.0 + (r as f64).sqrt()
        })
    }

    fn bits(a: &Array2<f64>) -> Vec<u64> {
        a.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn poles_match_their_closed_forms() {
        // the closed forms lose a few digits to cancellation in f64
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(poles::ORDER2[0], 8f64.sqrt() - 3.0));
        assert!(close(poles::ORDER3[0], 3f64.sqrt() - 2.0));
        assert!(close(
            poles::ORDER4[0],
            (664.0 - 438976f64.sqrt()).sqrt() + 304f64.sqrt() - 19.0
        ));
        assert!(close(
            poles::ORDER4[1],
            (664.0 + 438976f64.sqrt()).sqrt() - 304f64.sqrt() - 19.0
        ));
        assert!(close(
            poles::ORDER5[0],
            (67.5 - 4436.25f64.sqrt()).sqrt() + 26.25f64.sqrt() - 6.5
        ));
        assert!(close(
            poles::ORDER5[1],
            (67.5 + 4436.25f64.sqrt()).sqrt() - 26.25f64.sqrt() - 6.5
        ));
    }

    #[test]
    fn prefilter_equals_line_by_line_filter() {
        for &(ny, nx) in &[
            (1, 1),
            (1, 9),
            (9, 1),
            (2, 2),
            (13, 21),
            (17, 8),
            (8, 17),
            (40, 3),
        ] {
            for order in Order::ALL {
                let img = image(ny, nx);
                let mut expect = img.clone();
                for mut col in expect.columns_mut() {
                    let mut v = col.to_vec();
                    filter_line(&mut v, order);
                    col.assign(&ndarray::ArrayView1::from(&v));
                }
                for mut row in expect.rows_mut() {
                    filter_line(row.as_slice_mut().unwrap(), order);
                }
                let mut got = img.clone();
                prefilter(got.view_mut(), order);
                assert_eq!(bits(&got), bits(&expect), "{ny}x{nx} {order}");
                // any memory layout gives the same result
                let mut f = Array2::zeros((nx, ny));
                f.assign(&img.t());
                let mut ft = f.reversed_axes();
                prefilter(ft.view_mut(), order);
                assert_eq!(
                    bits(&ft.to_owned()),
                    bits(&expect),
                    "F-order {ny}x{nx} {order}"
                );
                // a strided sub-view is filtered as an image of its own
                let mut big = Array2::from_elem((ny + 3, nx * 2 + 1), 7.0);
                big.slice_mut(s![1..ny + 1, 1..;2]).assign(&img);
                prefilter(big.slice_mut(s![1..ny + 1, 1..;2]), order);
                assert_eq!(
                    bits(&big.slice(s![1..ny + 1, 1..;2]).to_owned()),
                    bits(&expect)
                );
                assert!(big.slice(s![0, ..]).iter().all(|&v| v == 7.0));
            }
        }
    }

    #[test]
    fn orders_0_and_1_are_identity() {
        let img = image(5, 6);
        for order in [Order::NearestNeighbor, Order::Bilinear] {
            let mut a = img.clone();
            prefilter(a.view_mut(), order);
            assert_eq!(bits(&a), bits(&img));
        }
    }

    #[test]
    fn masked_prefilter_zero_fills() {
        let mut img = image(6, 7);
        img[[2, 3]] = f64::NAN;
        img[[4, 0]] = f64::NEG_INFINITY;
        let (d, m) = prefilter_masked(img.view(), Order::Bicubic);
        let mut z = img.mapv(|v| if v.is_finite() { v } else { 0.0 });
        prefilter(z.view_mut(), Order::Bicubic);
        assert_eq!(bits(&d), bits(&z));
        assert!(m.iter().all(|v| v.is_finite()));
        assert!(d.iter().all(|v| v.is_finite()));
    }
}

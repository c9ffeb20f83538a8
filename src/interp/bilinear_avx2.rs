//! Order-1 sampling of four points at a time with AVX2 gathers (x86-64, chosen at run time).
//!
//! Every lane performs exactly the scalar [`Plane::bilinear`](super::Plane) operations in the
//! same order — edge rule, clamping (with -0.0 → +0.0), truncation, weights `1 - (c - i)` and
//! `1 - w0`, mirrored second tap, and `t = 0 + v00·wy0·wx0 + v01·wy0·wx1 + v10·wy1·wx0 +
//! v11·wy1·wx1` with separate multiplies and adds (no FMA) — so results are bit-identical to
//! the scalar loop. Lanes outside the image give NaN; a tap outside the window sends the group
//! to the scalar loop, which reports it.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The window geometry the vector loop needs, in 32-bit lanes.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    pub y_hi: f64,
    pub y_last: f64,
    pub x_hi: f64,
    pub x_last: f64,
    pub ny: i32,
    pub nx: i32,
    pub row0: i32,
    pub col0: i32,
    pub h: i32,
    pub w: i32,
    pub stride: i32,
}

/// Whether the vector loop can run here: AVX2 present and every index of the window (and
/// the image sides and row stride) fits in 32 bits.
pub(super) fn usable(data_len: usize, stride: usize, ny: usize, nx: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        data_len < i32::MAX as usize
            && stride < i32::MAX as usize
            && ny < i32::MAX as usize
            && nx < i32::MAX as usize
            && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (data_len, stride, ny, nx);
        false
    }
}

// Macros rather than closures, so that every intrinsic is compiled with the function's AVX2.
/// The clamp of the scalar code: `if c <= 0 { 0 } else if c >= last { last } else { c }`.
#[cfg(target_arch = "x86_64")]
macro_rules! clamp {
    ($c:expr, $last:expr, $zero:expr) => {{
        let c = _mm256_blendv_pd($c, $zero, _mm256_cmp_pd::<_CMP_LE_OQ>($c, $zero));
        _mm256_blendv_pd(c, $last, _mm256_cmp_pd::<_CMP_GE_OQ>(c, $last))
    }};
}

/// The mirrored second tap: `if i + 1 < n { i + 1 } else { n - 2 (saturating) }`.
#[cfg(target_arch = "x86_64")]
macro_rules! next {
    ($i:expr, $n:expr, $n_m2:expr, $one:expr) => {{
        let i1 = _mm_add_epi32($i, $one);
        _mm_blendv_epi8($n_m2, i1, _mm_cmplt_epi32(i1, $n))
    }};
}

/// `0 <= l < limit` per 32-bit lane (all ones where true).
#[cfg(target_arch = "x86_64")]
macro_rules! inside {
    ($l:expr, $limit:expr, $minus_one:expr) => {
        _mm_and_si128(_mm_cmpgt_epi32($l, $minus_one), _mm_cmplt_epi32($l, $limit))
    };
}

/// Samples the points `(ys[i], xs[i])` for as many whole groups of four as it can, writing
/// `out[i]`; returns how many points it did (the caller finishes the rest, and any group whose
/// taps leave the window, with the scalar loop — the returned count stops before such a group).
///
/// # Safety
/// AVX2 must be available ([`usable`]), `data` must hold the window the geometry describes
/// (`(h - 1) * stride + w <= data.len()`), and the slices must have equal lengths.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bilinear4(
    g: Geometry,
    data: &[f64],
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
) -> usize {
    let n = out.len().min(ys.len()).min(xs.len());
    let zero = _mm256_setzero_pd();
    let one = _mm256_set1_pd(1.0);
    let half_neg = _mm256_set1_pd(-0.5);
    let nan = _mm256_set1_pd(f64::NAN);
    let (y_hi, x_hi) = (_mm256_set1_pd(g.y_hi), _mm256_set1_pd(g.x_hi));
    let (y_last, x_last) = (_mm256_set1_pd(g.y_last), _mm256_set1_pd(g.x_last));
    let one_i = _mm_set1_epi32(1);
    let (ny, nx) = (_mm_set1_epi32(g.ny), _mm_set1_epi32(g.nx));
    // n.saturating_sub(2) for the mirrored tap at the last index.
    let (ny_m2, nx_m2) = (
        _mm_set1_epi32((g.ny - 2).max(0)),
        _mm_set1_epi32((g.nx - 2).max(0)),
    );
    let (row0, col0) = (_mm_set1_epi32(g.row0), _mm_set1_epi32(g.col0));
    let (h, w) = (_mm_set1_epi32(g.h), _mm_set1_epi32(g.w));
    let stride = _mm_set1_epi32(g.stride);
    let minus_one = _mm_set1_epi32(-1);
    let mut i = 0;
    while i + 4 <= n {
        let y = _mm256_loadu_pd(ys.as_ptr().add(i));
        let x = _mm256_loadu_pd(xs.as_ptr().add(i));
        // reproject's edge rule; NaN fails every ordered comparison.
        let valid = _mm256_and_pd(
            _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(y, half_neg),
                _mm256_cmp_pd::<_CMP_LT_OQ>(y, y_hi),
            ),
            _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(x, half_neg),
                _mm256_cmp_pd::<_CMP_LT_OQ>(x, x_hi),
            ),
        );
        let valid_bits = _mm256_movemask_pd(valid);
        if valid_bits == 0 {
            _mm256_storeu_pd(out.as_mut_ptr().add(i), nan);
            i += 4;
            continue;
        }
        // Invalid lanes sample pixel (0, 0) of the image, clamped, then become NaN.
        let cy = clamp!(_mm256_and_pd(y, valid), y_last, zero);
        let cx = clamp!(_mm256_and_pd(x, valid), x_last, zero);
        let (iy, ix) = (_mm256_cvttpd_epi32(cy), _mm256_cvttpd_epi32(cx));
        let wy0 = _mm256_sub_pd(one, _mm256_sub_pd(cy, _mm256_cvtepi32_pd(iy)));
        let wy1 = _mm256_sub_pd(one, wy0);
        let wx0 = _mm256_sub_pd(one, _mm256_sub_pd(cx, _mm256_cvtepi32_pd(ix)));
        let wx1 = _mm256_sub_pd(one, wx0);
        let lr0 = _mm_sub_epi32(iy, row0);
        let lr1 = _mm_sub_epi32(next!(iy, ny, ny_m2, one_i), row0);
        let lc0 = _mm_sub_epi32(ix, col0);
        let lc1 = _mm_sub_epi32(next!(ix, nx, nx_m2, one_i), col0);
        let taps_inside = _mm_and_si128(
            _mm_and_si128(inside!(lr0, h, minus_one), inside!(lr1, h, minus_one)),
            _mm_and_si128(inside!(lc0, w, minus_one), inside!(lc1, w, minus_one)),
        );
        // Lanes valid as 32-bit masks (the low half of each 64-bit compare result).
        let valid_i = _mm256_cvtpd_epi32(_mm256_blendv_pd(zero, _mm256_set1_pd(-1.0), valid));
        let valid_i = _mm_cmpeq_epi32(valid_i, minus_one);
        let bad = _mm_andnot_si128(taps_inside, valid_i);
        if _mm_movemask_epi8(bad) != 0 {
            // A tap outside the window: the scalar loop reports it.
            return i;
        }
        // Indices of valid lanes only (invalid lanes read offset 0, inside every window).
        let r0 = _mm_mullo_epi32(lr0, stride);
        let r1 = _mm_mullo_epi32(lr1, stride);
        let base = data.as_ptr();
        let v00 = _mm256_i32gather_pd::<8>(base, _mm_and_si128(_mm_add_epi32(r0, lc0), valid_i));
        let v01 = _mm256_i32gather_pd::<8>(base, _mm_and_si128(_mm_add_epi32(r0, lc1), valid_i));
        let v10 = _mm256_i32gather_pd::<8>(base, _mm_and_si128(_mm_add_epi32(r1, lc0), valid_i));
        let v11 = _mm256_i32gather_pd::<8>(base, _mm_and_si128(_mm_add_epi32(r1, lc1), valid_i));
        let mut t = _mm256_add_pd(zero, _mm256_mul_pd(_mm256_mul_pd(v00, wy0), wx0));
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v01, wy0), wx1));
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v10, wy1), wx0));
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v11, wy1), wx1));
        _mm256_storeu_pd(out.as_mut_ptr().add(i), _mm256_blendv_pd(nan, t, valid));
        i += 4;
    }
    i
}

#[cfg(test)]
mod tests {
    use crate::interp::{Order, Plane};

    /// xorshift64*, uniform in [0, 1).
    fn uniform(state: &mut u64) -> f64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `sample_many` (vector groups of four plus the scalar tail) against `sample` point by
    /// point (the scalar code), bit for bit, over windows of images from 1x1 up, with points
    /// at and around every edge, -0.0, NaN and infinities, and NaN pixels.
    #[test]
    fn groups_of_four_equal_the_scalar_code_bit_for_bit() {
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        let specials = [
            -0.5,
            -0.25,
            -0.0,
            0.0,
            0.25,
            0.5,
            f64::NAN,
            f64::INFINITY,
            -0.5000001,
        ];
        let mut compared = 0usize;
        for (ny, nx) in [(1, 1), (1, 5), (4, 1), (2, 2), (3, 7), (17, 23), (64, 40)] {
            let values: Vec<f64> = (0..ny * nx)
                .map(|i| {
                    if i % 13 == 5 {
                        f64::NAN
                    } else {
                        uniform(&mut state) * 200.0 - 100.0
                    }
                })
                .collect();
            // The whole image, and a sub-window with a stride (taps kept inside it).
            let plane = Plane::full(&values, ny, nx).unwrap();
            let mut points = Vec::new();
            for _ in 0..500 {
                let pick = |s: &mut u64, n: usize| {
                    let u = uniform(s);
                    if u < 0.2 {
                        specials[(uniform(s) * specials.len() as f64) as usize % specials.len()]
                    } else if u < 0.35 {
                        // Around the far edges: n - 1, n - 0.5 and just inside/outside.
                        let e = [
                            n as f64 - 1.0,
                            n as f64 - 0.5,
                            n as f64 - 0.5000001,
                            n as f64 - 1.25,
                        ];
                        e[(uniform(s) * 4.0) as usize % 4]
                    } else {
                        uniform(s) * (n as f64 + 1.0) - 0.75
                    }
                };
                points.push((pick(&mut state, ny), pick(&mut state, nx)));
            }
            let (ys, xs): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
            for len in [ys.len(), ys.len() - 1, ys.len() - 2, ys.len() - 3] {
                let mut out = vec![0.0; len];
                plane.sample_many(Order::Bilinear, &ys[..len], &xs[..len], &mut out);
                for ((&y, &x), &v) in ys.iter().zip(&xs).zip(&out) {
                    let scalar = plane.sample(Order::Bilinear, y, x);
                    assert_eq!(
                        v.to_bits(),
                        scalar.to_bits(),
                        "({y}, {x}) in {ny}x{nx}: {v} vs {scalar}"
                    );
                    compared += 1;
                }
            }
            if ny >= 8 && nx >= 8 {
                // Rows 2..ny-1, columns 3..nx-2 of the image, stored with the image's stride.
                let (rows, cols) = (2..ny - 1, 3..nx - 2);
                let start = rows.start * nx + cols.start;
                let window =
                    Plane::with_stride(&values[start..], nx, rows.clone(), cols.clone(), ny, nx)
                        .unwrap();
                let inner: Vec<(f64, f64)> = (0..400)
                    .map(|_| {
                        (
                            rows.start as f64
                                + 0.01
                                + uniform(&mut state) * (rows.len() as f64 - 1.02),
                            cols.start as f64
                                + 0.01
                                + uniform(&mut state) * (cols.len() as f64 - 1.02),
                        )
                    })
                    .collect();
                let (ys, xs): (Vec<f64>, Vec<f64>) = inner.into_iter().unzip();
                let mut out = vec![0.0; ys.len()];
                window.sample_many(Order::Bilinear, &ys, &xs, &mut out);
                for ((&y, &x), &v) in ys.iter().zip(&xs).zip(&out) {
                    assert_eq!(v.to_bits(), plane.sample(Order::Bilinear, y, x).to_bits());
                    compared += 1;
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }

    #[test]
    #[should_panic(expected = "not all inside the window")]
    fn a_tap_outside_the_window_is_still_reported() {
        let values = vec![1.0; 100];
        // Rows 2..6, columns 2..6 of a 10x10 image; the fifth point needs row 8.
        let window = Plane::with_stride(&values[22..], 10, 2..6, 2..6, 10, 10).unwrap();
        let ys = [3.0, 3.5, 4.0, 4.5, 8.2, 3.0, 3.0, 3.0];
        let xs = [3.0; 8];
        let mut out = [0.0; 8];
        window.sample_many(Order::Bilinear, &ys, &xs, &mut out);
    }
}

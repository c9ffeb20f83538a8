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

/// The per-lane quantities of one group of four points: edge rule, weights and window-local
/// tap indices, as the scalar code computes them.
#[cfg(target_arch = "x86_64")]
struct Lanes {
    /// All ones in the 64-bit lanes of points inside the image.
    valid: __m256d,
    /// The same as 32-bit lanes.
    valid_i: __m128i,
    wy0: __m256d,
    wy1: __m256d,
    wx0: __m256d,
    wx1: __m256d,
    /// Window-local rows and columns of the first and second taps.
    lr0: __m128i,
    lr1: __m128i,
    lc0: __m128i,
    lc1: __m128i,
}

/// Loop constants of [`Lanes::of`].
#[cfg(target_arch = "x86_64")]
struct Constants {
    zero: __m256d,
    one: __m256d,
    half_neg: __m256d,
    y_hi: __m256d,
    x_hi: __m256d,
    y_last: __m256d,
    x_last: __m256d,
    one_i: __m128i,
    ny: __m128i,
    nx: __m128i,
    ny_m2: __m128i,
    nx_m2: __m128i,
    row0: __m128i,
    col0: __m128i,
    h: __m128i,
    w: __m128i,
    minus_one: __m128i,
}

#[cfg(target_arch = "x86_64")]
impl Constants {
    #[target_feature(enable = "avx2")]
    fn new(g: &Geometry) -> Constants {
        Constants {
            zero: _mm256_setzero_pd(),
            one: _mm256_set1_pd(1.0),
            half_neg: _mm256_set1_pd(-0.5),
            y_hi: _mm256_set1_pd(g.y_hi),
            x_hi: _mm256_set1_pd(g.x_hi),
            y_last: _mm256_set1_pd(g.y_last),
            x_last: _mm256_set1_pd(g.x_last),
            one_i: _mm_set1_epi32(1),
            ny: _mm_set1_epi32(g.ny),
            nx: _mm_set1_epi32(g.nx),
            // n.saturating_sub(2) for the mirrored tap at the last index.
            ny_m2: _mm_set1_epi32((g.ny - 2).max(0)),
            nx_m2: _mm_set1_epi32((g.nx - 2).max(0)),
            row0: _mm_set1_epi32(g.row0),
            col0: _mm_set1_epi32(g.col0),
            h: _mm_set1_epi32(g.h),
            w: _mm_set1_epi32(g.w),
            minus_one: _mm_set1_epi32(-1),
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes {
    /// The lanes of points `(y, x)`, or `None` when a valid lane has a tap outside the window
    /// (the scalar loop reports it).
    #[target_feature(enable = "avx2")]
    fn of(k: &Constants, y: __m256d, x: __m256d) -> Option<Lanes> {
        // reproject's edge rule; NaN fails every ordered comparison.
        let valid = _mm256_and_pd(
            _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(y, k.half_neg),
                _mm256_cmp_pd::<_CMP_LT_OQ>(y, k.y_hi),
            ),
            _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(x, k.half_neg),
                _mm256_cmp_pd::<_CMP_LT_OQ>(x, k.x_hi),
            ),
        );
        // Invalid lanes sample pixel (0, 0) of the image, clamped, then become NaN.
        let cy = clamp!(_mm256_and_pd(y, valid), k.y_last, k.zero);
        let cx = clamp!(_mm256_and_pd(x, valid), k.x_last, k.zero);
        let (iy, ix) = (_mm256_cvttpd_epi32(cy), _mm256_cvttpd_epi32(cx));
        let wy0 = _mm256_sub_pd(k.one, _mm256_sub_pd(cy, _mm256_cvtepi32_pd(iy)));
        let wy1 = _mm256_sub_pd(k.one, wy0);
        let wx0 = _mm256_sub_pd(k.one, _mm256_sub_pd(cx, _mm256_cvtepi32_pd(ix)));
        let wx1 = _mm256_sub_pd(k.one, wx0);
        let lr0 = _mm_sub_epi32(iy, k.row0);
        let lr1 = _mm_sub_epi32(next!(iy, k.ny, k.ny_m2, k.one_i), k.row0);
        let lc0 = _mm_sub_epi32(ix, k.col0);
        let lc1 = _mm_sub_epi32(next!(ix, k.nx, k.nx_m2, k.one_i), k.col0);
        let taps_inside = _mm_and_si128(
            _mm_and_si128(
                inside!(lr0, k.h, k.minus_one),
                inside!(lr1, k.h, k.minus_one),
            ),
            _mm_and_si128(
                inside!(lc0, k.w, k.minus_one),
                inside!(lc1, k.w, k.minus_one),
            ),
        );
        // Lanes valid as 32-bit masks (the low half of each 64-bit compare result).
        let valid_i = _mm256_cvtpd_epi32(_mm256_blendv_pd(k.zero, _mm256_set1_pd(-1.0), valid));
        let valid_i = _mm_cmpeq_epi32(valid_i, k.minus_one);
        if _mm_movemask_epi8(_mm_andnot_si128(taps_inside, valid_i)) != 0 {
            return None;
        }
        Some(Lanes {
            valid,
            valid_i,
            wy0,
            wy1,
            wx0,
            wx1,
            lr0,
            lr1,
            lc0,
            lc1,
        })
    }

    /// `0 + v00·wy0·wx0 + v01·wy0·wx1 + v10·wy1·wx0 + v11·wy1·wx1` (the scalar order, no
    /// FMA), NaN in invalid lanes.
    #[target_feature(enable = "avx2")]
    fn combine(&self, v00: __m256d, v01: __m256d, v10: __m256d, v11: __m256d) -> __m256d {
        let zero = _mm256_setzero_pd();
        let mut t = _mm256_add_pd(zero, _mm256_mul_pd(_mm256_mul_pd(v00, self.wy0), self.wx0));
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v01, self.wy0), self.wx1));
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v10, self.wy1), self.wx0));
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v11, self.wy1), self.wx1));
        _mm256_blendv_pd(_mm256_set1_pd(f64::NAN), t, self.valid)
    }
}

/// Samples the points `(ys[i], xs[i])` of an `f64` window for as many whole groups of four as
/// it can, writing `out[i]`; returns how many points it did. It stops before a group whose
/// taps leave the window (the caller samples that group with the scalar code, which reports
/// it, and may call again for the rest).
///
/// # Safety
/// AVX2 must be available ([`usable`]), `data` must hold the window the geometry describes
/// (`(h - 1) * stride + w <= data.len()`), and the slices must have equal lengths.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bilinear4_f64(
    g: Geometry,
    data: &[f64],
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
) -> usize {
    let n = out.len().min(ys.len()).min(xs.len());
    let k = Constants::new(&g);
    let stride = _mm_set1_epi32(g.stride);
    let base = data.as_ptr();
    let mut i = 0;
    while i + 4 <= n {
        let y = _mm256_loadu_pd(ys.as_ptr().add(i));
        let x = _mm256_loadu_pd(xs.as_ptr().add(i));
        let Some(l) = Lanes::of(&k, y, x) else {
            return i;
        };
        if _mm256_movemask_pd(l.valid) != 0 {
            // Indices of valid lanes only (invalid lanes read offset 0, inside every window).
            let r0 = _mm_mullo_epi32(l.lr0, stride);
            let r1 = _mm_mullo_epi32(l.lr1, stride);
            let at = |r, c| _mm_and_si128(_mm_add_epi32(r, c), l.valid_i);
            let v00 = _mm256_i32gather_pd::<8>(base, at(r0, l.lc0));
            let v01 = _mm256_i32gather_pd::<8>(base, at(r0, l.lc1));
            let v10 = _mm256_i32gather_pd::<8>(base, at(r1, l.lc0));
            let v11 = _mm256_i32gather_pd::<8>(base, at(r1, l.lc1));
            _mm256_storeu_pd(out.as_mut_ptr().add(i), l.combine(v00, v01, v10, v11));
        } else {
            _mm256_storeu_pd(out.as_mut_ptr().add(i), _mm256_set1_pd(f64::NAN));
        }
        i += 4;
    }
    i
}

/// [`bilinear4_f64`] for an `f32` window: each row's two taps are adjacent, so one 64-bit
/// gather fetches both (two gathers per group instead of four), widened exactly to `f64`.
/// Besides groups with a tap outside the window, it also stops before a group with a point on
/// the last row or column, whose second tap is mirrored back (the scalar code does those).
///
/// # Safety
/// As [`bilinear4_f64`], and the window must be at least two columns wide (`g.w >= 2`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bilinear4_f32(
    g: Geometry,
    data: &[f32],
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
) -> usize {
    let n = out.len().min(ys.len()).min(xs.len());
    let k = Constants::new(&g);
    let stride = _mm_set1_epi32(g.stride);
    let base = data.as_ptr() as *const i64;
    // Gathered pairs [a0 b0 a1 b1 | a2 b2 a3 b3] → [a0 a1 a2 a3 | b0 b1 b2 b3].
    let split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let mut i = 0;
    while i + 4 <= n {
        let y = _mm256_loadu_pd(ys.as_ptr().add(i));
        let x = _mm256_loadu_pd(xs.as_ptr().add(i));
        let Some(l) = Lanes::of(&k, y, x) else {
            return i;
        };
        if _mm256_movemask_pd(l.valid) != 0 {
            // A valid lane whose second taps are not next to its first ones (a mirrored tap).
            let adjacent = _mm_and_si128(
                _mm_cmpeq_epi32(_mm_sub_epi32(l.lr1, l.lr0), k.one_i),
                _mm_cmpeq_epi32(_mm_sub_epi32(l.lc1, l.lc0), k.one_i),
            );
            if _mm_movemask_epi8(_mm_andnot_si128(adjacent, l.valid_i)) != 0 {
                return i;
            }
            // Offsets of valid lanes only (invalid lanes read the pair at 0: w >= 2).
            let row = |r| {
                let at = _mm_and_si128(_mm_add_epi32(_mm_mullo_epi32(r, stride), l.lc0), l.valid_i);
                let pairs = _mm256_castsi256_ps(_mm256_i32gather_epi64::<4>(base, at));
                _mm256_permutevar8x32_ps(pairs, split)
            };
            let (top, bottom) = (row(l.lr0), row(l.lr1));
            let v00 = _mm256_cvtps_pd(_mm256_castps256_ps128(top));
            let v01 = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(top));
            let v10 = _mm256_cvtps_pd(_mm256_castps256_ps128(bottom));
            let v11 = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(bottom));
            _mm256_storeu_pd(out.as_mut_ptr().add(i), l.combine(v00, v01, v10, v11));
        } else {
            _mm256_storeu_pd(out.as_mut_ptr().add(i), _mm256_set1_pd(f64::NAN));
        }
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
    /// at and around every edge, -0.0, NaN and infinities, and NaN pixels; for an `f64` plane
    /// and for an `f32` plane of the same values (compared with the scalar `f64` code).
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
                        // Values a float32 holds exactly, so both planes hold the same.
                        (uniform(&mut state) * 200.0 - 100.0) as f32 as f64
                    }
                })
                .collect();
            let narrow: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            let narrow_plane = Plane::full(&narrow, ny, nx).unwrap();
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
                let mut out_narrow = vec![0.0; len];
                plane.sample_many(Order::Bilinear, &ys[..len], &xs[..len], &mut out);
                narrow_plane.sample_many(Order::Bilinear, &ys[..len], &xs[..len], &mut out_narrow);
                for (((&y, &x), &v), &v32) in ys.iter().zip(&xs).zip(&out).zip(&out_narrow) {
                    let scalar = plane.sample(Order::Bilinear, y, x);
                    assert_eq!(
                        v.to_bits(),
                        scalar.to_bits(),
                        "({y}, {x}) in {ny}x{nx}: {v} vs {scalar}"
                    );
                    assert_eq!(
                        v32.to_bits(),
                        scalar.to_bits(),
                        "f32 plane, ({y}, {x}) in {ny}x{nx}: {v32} vs {scalar}"
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
                let narrow_window =
                    Plane::with_stride(&narrow[start..], nx, rows.clone(), cols.clone(), ny, nx)
                        .unwrap();
                let mut out = vec![0.0; ys.len()];
                let mut out_narrow = vec![0.0; ys.len()];
                window.sample_many(Order::Bilinear, &ys, &xs, &mut out);
                narrow_window.sample_many(Order::Bilinear, &ys, &xs, &mut out_narrow);
                for (((&y, &x), &v), &v32) in ys.iter().zip(&xs).zip(&out).zip(&out_narrow) {
                    let scalar = plane.sample(Order::Bilinear, y, x).to_bits();
                    assert_eq!(v.to_bits(), scalar);
                    assert_eq!(v32.to_bits(), scalar);
                    compared += 1;
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }

    #[test]
    #[should_panic(expected = "not all inside the window")]
    fn a_tap_outside_an_f32_window_is_still_reported() {
        let values = vec![1.0f32; 100];
        let window = Plane::with_stride(&values[22..], 10, 2..6, 2..6, 10, 10).unwrap();
        let ys = [3.0, 3.5, 4.0, 4.5, 8.2, 3.0, 3.0, 3.0];
        let xs = [3.0; 8];
        let mut out = [0.0; 8];
        window.sample_many(Order::Bilinear, &ys, &xs, &mut out);
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

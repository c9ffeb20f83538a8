//! Order-1 sampling of four points at a time with AVX2 gathers (x86-64, chosen at run time).
//!
//! Every lane performs exactly the scalar [`Plane::bilinear`](super::Plane) operations in the
//! same order — edge rule, clamping (with -0.0 → +0.0), truncation, weights `1 - (c - i)` and
//! `1 - w0`, and `t = 0 + v00·wy0·wx0 + v01·wy0·wx1 + v10·wy1·wx0 + v11·wy1·wx1` with separate
//! multiplies and adds (no FMA) — so results are bit-identical to the scalar loop. Lanes
//! outside the image give NaN.
//!
//! The vector loops handle **interior groups**: every point inside the image has its four
//! taps inside the window at `(r, c)`, `(r, c + 1)`, `(r + 1, c)`, `(r + 1, c + 1)` (so no
//! mirrored tap at the last row or column). They stop before any other group; the caller
//! samples it with the scalar code (which also reports a tap outside the window) and calls
//! again for the rest.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The window geometry the vector loop needs, in 32-bit lanes.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    pub y_hi: f64,
    pub y_last: f64,
    pub x_hi: f64,
    pub x_last: f64,
    pub row0: i32,
    pub col0: i32,
    pub h: i32,
    pub w: i32,
    pub stride: i32,
}

/// Whether the vector loops can run here: AVX2 present, a window of at least 2x2 (so that
/// interior groups exist), and every index of the window (and the image sides and row
/// stride) fits in 32 bits.
pub(super) fn usable(
    data_len: usize,
    stride: usize,
    (h, w): (usize, usize),
    ny: usize,
    nx: usize,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        h >= 2
            && w >= 2
            && data_len < i32::MAX as usize
            && stride < i32::MAX as usize
            && ny < i32::MAX as usize
            && nx < i32::MAX as usize
            && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (data_len, stride, h, w, ny, nx);
        false
    }
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
    row0: __m128i,
    col0: __m128i,
    /// `h - 2` and `w - 2`: the largest local row and column of an interior first tap.
    last_r: __m128i,
    last_c: __m128i,
    stride: __m128i,
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
            row0: _mm_set1_epi32(g.row0),
            col0: _mm_set1_epi32(g.col0),
            last_r: _mm_set1_epi32(g.h - 2),
            last_c: _mm_set1_epi32(g.w - 2),
            stride: _mm_set1_epi32(g.stride),
        }
    }
}

/// The per-lane quantities of one interior group of four points.
#[cfg(target_arch = "x86_64")]
struct Lanes {
    /// All ones in the 64-bit lanes of points inside the image.
    valid: __m256d,
    wy0: __m256d,
    wy1: __m256d,
    wx0: __m256d,
    wx1: __m256d,
    /// Window offset of the first tap of valid lanes (0 in the others, a pixel every window
    /// has, as have 1, `stride` and `stride + 1`).
    offset: __m128i,
}

#[cfg(target_arch = "x86_64")]
impl Lanes {
    /// The lanes of points `(y, x)`, or `None` when the group is not interior.
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
        // The scalar clamp `if c <= 0 { 0 } else if c >= last { last } else { c }`: max
        // returns its second operand, +0.0, for either zero. Invalid lanes clamp 0.0.
        let clamp = |c, last| _mm256_min_pd(_mm256_max_pd(_mm256_and_pd(c, valid), k.zero), last);
        let (cy, cx) = (clamp(y, k.y_last), clamp(x, k.x_last));
        let (iy, ix) = (_mm256_cvttpd_epi32(cy), _mm256_cvttpd_epi32(cx));
        let wy0 = _mm256_sub_pd(k.one, _mm256_sub_pd(cy, _mm256_cvtepi32_pd(iy)));
        let wy1 = _mm256_sub_pd(k.one, wy0);
        let wx0 = _mm256_sub_pd(k.one, _mm256_sub_pd(cx, _mm256_cvtepi32_pd(ix)));
        let wx1 = _mm256_sub_pd(k.one, wx0);
        let (lr, lc) = (_mm_sub_epi32(iy, k.row0), _mm_sub_epi32(ix, k.col0));
        // Interior: 0 <= lr <= h - 2 and 0 <= lc <= w - 2 (unsigned comparisons), which also
        // keeps the second taps off the image's last row and column (the window is inside
        // the image), so they are r + 1 and c + 1, unmirrored.
        let below = |l, last| _mm_cmpeq_epi32(_mm_min_epu32(l, last), l);
        let interior = _mm_and_si128(below(lr, k.last_r), below(lc, k.last_c));
        // The 64-bit lane masks as 32-bit lanes (their low halves).
        let valid_i = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            _mm256_castpd_si256(valid),
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
        ));
        if _mm_movemask_epi8(_mm_andnot_si128(interior, valid_i)) != 0 {
            return None;
        }
        let offset = _mm_and_si128(_mm_add_epi32(_mm_mullo_epi32(lr, k.stride), lc), valid_i);
        Some(Lanes {
            valid,
            wy0,
            wy1,
            wx0,
            wx1,
            offset,
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

/// The loop of both window types: samples the points `(ys[i], xs[i])` for as many leading
/// interior groups of four as there are, writing `out[i]`, and returns how many points it did.
/// `taps(offset)` fetches the four taps `(v00, v01, v10, v11)` of lanes whose first tap is at
/// window offset `offset`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn interior_groups(
    g: &Geometry,
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
    taps: impl Fn(__m128i) -> [__m256d; 4],
) -> usize {
    let n = out.len().min(ys.len()).min(xs.len());
    let k = Constants::new(g);
    let mut i = 0;
    while i + 4 <= n {
        let y = _mm256_loadu_pd(ys.as_ptr().add(i));
        let x = _mm256_loadu_pd(xs.as_ptr().add(i));
        let Some(l) = Lanes::of(&k, y, x) else {
            return i;
        };
        let [v00, v01, v10, v11] = taps(l.offset);
        _mm256_storeu_pd(out.as_mut_ptr().add(i), l.combine(v00, v01, v10, v11));
        i += 4;
    }
    i
}

/// Samples an `f64` window (see [`interior_groups`]): four gathers per group.
///
/// # Safety
/// AVX2 must be available and the window at least 2x2 ([`usable`]), `data` must hold the
/// window the geometry describes (`(h - 1) * stride + w <= data.len()`), and the slices must
/// have equal lengths.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bilinear4_f64(
    g: Geometry,
    data: &[f64],
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
) -> usize {
    // The four taps are at the offset from these bases.
    let stride = g.stride as usize;
    let bases = [0, 1, stride, stride + 1].map(|d| data.as_ptr().add(d));
    interior_groups(&g, ys, xs, out, |offset| {
        bases.map(|b| _mm256_i32gather_pd::<8>(b, offset))
    })
}

/// Samples an `f32` window (see [`interior_groups`]): each row's two taps are adjacent, so
/// one 64-bit gather fetches both (two gathers per group instead of four), widened exactly to
/// `f64`.
///
/// # Safety
/// As [`bilinear4_f64`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bilinear4_f32(
    g: Geometry,
    data: &[f32],
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
) -> usize {
    let (top, bottom) = (data.as_ptr(), data.as_ptr().add(g.stride as usize));
    // Gathered pairs [a0 b0 a1 b1 | a2 b2 a3 b3] → [a0 a1 a2 a3 | b0 b1 b2 b3].
    let split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    interior_groups(&g, ys, xs, out, |offset| {
        let row = |base: *const f32| {
            let pairs = _mm256_i32gather_epi64::<4>(base as *const i64, offset);
            let taps = _mm256_permutevar8x32_ps(_mm256_castsi256_ps(pairs), split);
            [
                _mm256_cvtps_pd(_mm256_castps256_ps128(taps)),
                _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(taps)),
            ]
        };
        let ([v00, v01], [v10, v11]) = (row(top), row(bottom));
        [v00, v01, v10, v11]
    })
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

    /// Samples eight points of rows 2..6, columns 2..6 of a 10x10 image of ones; the fifth
    /// needs row 8.
    fn sample_with_a_tap_outside<S: crate::interp::Sample>(one: S) {
        let values = [one; 100];
        let window = Plane::with_stride(&values[22..], 10, 2..6, 2..6, 10, 10).unwrap();
        let ys = [3.0, 3.5, 4.0, 4.5, 8.2, 3.0, 3.0, 3.0];
        let xs = [3.0; 8];
        let mut out = [0.0; 8];
        window.sample_many(Order::Bilinear, &ys, &xs, &mut out);
    }

    #[test]
    #[should_panic(expected = "not all inside the window")]
    fn a_tap_outside_the_window_is_still_reported() {
        sample_with_a_tap_outside(1.0f64);
    }

    #[test]
    #[should_panic(expected = "not all inside the window")]
    fn a_tap_outside_an_f32_window_is_still_reported() {
        sample_with_a_tap_outside(1.0f32);
    }
}

//! Sampling four points at a time with AVX2 gathers (x86-64, chosen at run time): order 1
//! from `f64` and `f32` windows, and orders 2 and 3 from spline coefficients.
//!
//! Every lane performs exactly the scalar [`Plane`](super::Plane) operations in the same
//! order — edge rule, clamping (with -0.0 → +0.0), knot, weights as scipy computes them, and
//! the sum `t = 0 + v·w_row·w_col + ...` over the taps in C order with separate multiplies and
//! adds (no FMA) — so results are bit-identical to the scalar loop. Lanes outside the image
//! give NaN.
//!
//! The vector loops handle **interior groups**: every point inside the image has all its taps
//! inside the window at consecutive rows and columns (so no tap is mirrored at an image edge).
//! They stop before any other group; the caller samples it with the scalar code (which also
//! reports a tap outside the window) and calls again for the rest.

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

/// Whether the vector loops can run here for an order with `taps` taps per axis: AVX2
/// present, a window of at least `taps` × `taps` (so that interior groups exist), and every
/// index of the window (and the image sides and row stride) fits in 32 bits.
pub(super) fn usable(
    data_len: usize,
    stride: usize,
    (h, w): (usize, usize),
    (ny, nx): (usize, usize),
    taps: usize,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        h >= taps
            && w >= taps
            && data_len < i32::MAX as usize
            && stride < i32::MAX as usize
            && ny < i32::MAX as usize
            && nx < i32::MAX as usize
            && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (data_len, stride, h, w, ny, nx, taps);
        false
    }
}

#[cfg(test)]
thread_local! {
    /// Points the vector loops sampled on this thread (test builds only: the tests check that
    /// the loops ran).
    static VECTOR_POINTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many points the vector loops have sampled on this thread (test builds only).
#[cfg(test)]
pub(super) fn vector_points() -> usize {
    VECTOR_POINTS.with(|c| c.get())
}

/// The count a vector loop returns, `n`; test builds add it to `vector_points`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sampled(n: usize) -> usize {
    #[cfg(test)]
    VECTOR_POINTS.with(|c| c.set(c.get() + n));
    n
}

/// Loop constants of one window and order.
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
    /// `h - taps` and `w - taps`: the largest local row and column of an interior first tap.
    last_r: __m128i,
    last_c: __m128i,
    stride: __m128i,
}

#[cfg(target_arch = "x86_64")]
impl Constants {
    /// For a window with `taps` taps per axis (2 for order 1, `order + 1` in general).
    #[target_feature(enable = "avx2")]
    fn new(g: &Geometry, taps: i32) -> Constants {
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
            last_r: _mm_set1_epi32(g.h - taps),
            last_c: _mm_set1_epi32(g.w - taps),
            stride: _mm_set1_epi32(g.stride),
        }
    }

    /// reproject's edge rule and the scalar clamp of points `(y, x)`: the lanes inside the
    /// image (all ones) and the clamped coordinates (0.0 in the other lanes).
    #[target_feature(enable = "avx2")]
    fn clamped(&self, y: __m256d, x: __m256d) -> (__m256d, __m256d, __m256d) {
        // NaN fails every ordered comparison.
        let valid = _mm256_and_pd(
            _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(y, self.half_neg),
                _mm256_cmp_pd::<_CMP_LT_OQ>(y, self.y_hi),
            ),
            _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(x, self.half_neg),
                _mm256_cmp_pd::<_CMP_LT_OQ>(x, self.x_hi),
            ),
        );
        // The scalar clamp `if c <= 0 { 0 } else if c >= last { last } else { c }`: max
        // returns its second operand, +0.0, for either zero. Invalid lanes clamp 0.0.
        let clamp =
            |c, last| _mm256_min_pd(_mm256_max_pd(_mm256_and_pd(c, valid), self.zero), last);
        (valid, clamp(y, self.y_last), clamp(x, self.x_last))
    }

    /// The window offset of the first tap of valid lanes whose first taps are at image row
    /// `iy` and column `ix` (0 in invalid lanes, a pixel every window has, as have all the
    /// taps from it), or `None` when a valid lane is not interior.
    #[target_feature(enable = "avx2")]
    fn interior_offset(&self, valid: __m256d, iy: __m128i, ix: __m128i) -> Option<__m128i> {
        let (lr, lc) = (_mm_sub_epi32(iy, self.row0), _mm_sub_epi32(ix, self.col0));
        // Interior: 0 <= lr <= h - taps and 0 <= lc <= w - taps (unsigned comparisons),
        // which also keeps the taps off the image's last rows and columns (the window is
        // inside the image), so none is mirrored.
        let below = |l, last| _mm_cmpeq_epi32(_mm_min_epu32(l, last), l);
        let interior = _mm_and_si128(below(lr, self.last_r), below(lc, self.last_c));
        // The 64-bit lane masks as 32-bit lanes (their low halves).
        let valid_i = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            _mm256_castpd_si256(valid),
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
        ));
        if _mm_movemask_epi8(_mm_andnot_si128(interior, valid_i)) != 0 {
            return None;
        }
        Some(_mm_and_si128(
            _mm_add_epi32(_mm_mullo_epi32(lr, self.stride), lc),
            valid_i,
        ))
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
        let (valid, cy, cx) = k.clamped(y, x);
        let (iy, ix) = (_mm256_cvttpd_epi32(cy), _mm256_cvttpd_epi32(cx));
        let wy0 = _mm256_sub_pd(k.one, _mm256_sub_pd(cy, _mm256_cvtepi32_pd(iy)));
        let wy1 = _mm256_sub_pd(k.one, wy0);
        let wx0 = _mm256_sub_pd(k.one, _mm256_sub_pd(cx, _mm256_cvtepi32_pd(ix)));
        let wx1 = _mm256_sub_pd(k.one, wx0);
        let offset = k.interior_offset(valid, iy, ix)?;
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
    // SAFETY: AVX2, as the callers checked; loads and stores stay below `n`, within the slices.
    unsafe {
        let n = out.len().min(ys.len()).min(xs.len());
        let k = Constants::new(g, 2);
        let mut i = 0;
        while i + 4 <= n {
            let y = _mm256_loadu_pd(ys.as_ptr().add(i));
            let x = _mm256_loadu_pd(xs.as_ptr().add(i));
            let Some(l) = Lanes::of(&k, y, x) else {
                return sampled(i);
            };
            let [v00, v01, v10, v11] = taps(l.offset);
            _mm256_storeu_pd(out.as_mut_ptr().add(i), l.combine(v00, v01, v10, v11));
            i += 4;
        }
        sampled(i)
    }
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
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        // The four taps are at the offset from these bases.
        let stride = g.stride as usize;
        let bases = [0, 1, stride, stride + 1].map(|d| data.as_ptr().add(d));
        interior_groups(&g, ys, xs, out, |offset| {
            bases.map(|b| _mm256_i32gather_pd::<8>(b, offset))
        })
    }
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
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
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
}

/// The weights of orders 2 and 3 for four lanes, operation for operation as the scalar
/// `weights` (scipy's `ni_splines.c`): `x = cc - fl`, then the order's polynomials, and the
/// last weight as `1 - w[0] - w[1] - ...` in that order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn spline_weights<const O: usize>(cc: __m256d, fl: __m256d) -> [__m256d; 4] {
    let c = _mm256_set1_pd;
    let (add, sub, mul, div) = (_mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_div_pd);
    let x = sub(cc, fl);
    let mut w = [_mm256_setzero_pd(); 4];
    match O {
        2 => {
            w[1] = sub(c(0.75), mul(x, x));
            let y = sub(c(0.5), x);
            w[0] = mul(mul(c(0.5), y), y);
        }
        3 => {
            let (y, z) = (x, sub(c(1.0), x));
            let cubic = |v| {
                div(
                    add(mul(mul(mul(v, v), sub(v, c(2.0))), c(3.0)), c(4.0)),
                    c(6.0),
                )
            };
            w[1] = cubic(y);
            w[2] = cubic(z);
            w[0] = div(mul(mul(z, z), z), c(6.0));
        }
        _ => unreachable!("vector spline weights are for orders 2 and 3"),
    }
    let mut last = c(1.0);
    for wi in &w[..O] {
        last = sub(last, *wi);
    }
    w[O] = last;
    w
}

/// Samples spline coefficients of order `O` (2 or 3) in an `f64` window at the points
/// `(ys[i], xs[i])` for as many leading interior groups of four as there are, writing
/// `out[i]`; returns how many points it did. `(O + 1)²` gathers per group.
///
/// # Safety
/// AVX2 must be available and the window at least `(O + 1)` × `(O + 1)` ([`usable`]),
/// `data` must hold the window the geometry describes (`(h - 1) * stride + w <= data.len()`),
/// and the slices must have equal lengths.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn spline4<const O: usize>(
    g: Geometry,
    data: &[f64],
    ys: &[f64],
    xs: &[f64],
    out: &mut [f64],
) -> usize {
    // SAFETY: the caller's promises (# Safety above).
    unsafe {
        const { assert!(O == 2 || O == 3, "spline4 is for orders 2 and 3") };
        let n = out.len().min(ys.len()).min(xs.len());
        let k = Constants::new(&g, O as i32 + 1);
        let stride = g.stride as usize;
        // Tap (k0, k1) of a lane is at its offset from bases[k0][k1].
        let bases: [[*const f64; 4]; 4] = std::array::from_fn(|k0| {
            std::array::from_fn(|k1| data.as_ptr().wrapping_add(k0 * stride + k1))
        });
        let (half, back) = (_mm256_set1_pd(0.5), _mm_set1_epi32((O / 2) as i32));
        let mut i = 0;
        while i + 4 <= n {
            let y = _mm256_loadu_pd(ys.as_ptr().add(i));
            let x = _mm256_loadu_pd(xs.as_ptr().add(i));
            let (valid, cy, cx) = k.clamped(y, x);
            // The knot: floor(c) for odd orders, floor(c + 0.5) for even ones.
            let knot = |c| {
                if O & 1 == 1 {
                    _mm256_cvttpd_epi32(c)
                } else {
                    _mm256_cvttpd_epi32(_mm256_add_pd(c, half))
                }
            };
            let (ky, kx) = (knot(cy), knot(cx));
            let wy = spline_weights::<O>(cy, _mm256_cvtepi32_pd(ky));
            let wx = spline_weights::<O>(cx, _mm256_cvtepi32_pd(kx));
            let first = |knot| _mm_sub_epi32(knot, back);
            let Some(offset) = k.interior_offset(valid, first(ky), first(kx)) else {
                return sampled(i);
            };
            let mut t = _mm256_setzero_pd();
            for k0 in 0..=O {
                for k1 in 0..=O {
                    let v = _mm256_i32gather_pd::<8>(bases[k0][k1], offset);
                    t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_mul_pd(v, wy[k0]), wx[k1]));
                }
            }
            let t = _mm256_blendv_pd(_mm256_set1_pd(f64::NAN), t, valid);
            _mm256_storeu_pd(out.as_mut_ptr().add(i), t);
            i += 4;
        }
        sampled(i)
    }
}

#[cfg(test)]
mod tests {
    use super::vector_points;
    use crate::interp::{Order, Plane, Sample};

    /// Whether the vector loops must run here: on x86-64, where the machines this is tested
    /// on (CI included) have AVX2, which is asserted, so that the bit-for-bit comparisons
    /// below cannot pass by comparing the scalar code with itself.
    fn vector_loops_expected() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            assert!(
                std::arch::is_x86_feature_detected!("avx2"),
                "this x86-64 CPU has no AVX2: the AVX2 loops cannot be tested here"
            );
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// The points a vector loop takes out of `len` interior points: every whole group of four.
    fn whole_groups(len: usize) -> usize {
        len / 4 * 4
    }

    /// xorshift64*, uniform in [0, 1).
    fn uniform(state: &mut u64) -> f64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Image sizes from 1x1 up, small ones around the loops' minimum window sizes.
    const SIZES: [(usize, usize); 9] = [
        (1, 1),
        (1, 5),
        (4, 1),
        (2, 2),
        (2, 9),
        (3, 3),
        (5, 4),
        (17, 23),
        (64, 40),
    ];

    /// Values a float32 holds exactly (so `f32` and `f64` planes hold the same), every 13th
    /// NaN.
    fn image(state: &mut u64, len: usize) -> Vec<f64> {
        (0..len)
            .map(|i| {
                if i % 13 == 5 {
                    f64::NAN
                } else {
                    (uniform(state) * 200.0 - 100.0) as f32 as f64
                }
            })
            .collect()
    }

    /// `count` points of an `ny × nx` image: at and around every edge, -0.0, NaN,
    /// infinities, and anywhere in and just outside the image.
    fn points(state: &mut u64, ny: usize, nx: usize, count: usize) -> (Vec<f64>, Vec<f64>) {
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
        let mut pick = |n: usize| {
            let u = uniform(state);
            let n = n as f64;
            if u < 0.2 {
                specials[(uniform(state) * 9.0) as usize % 9]
            } else if u < 0.35 {
                let edges = [n - 1.0, n - 0.5, n - 0.5000001, n - 1.25, n - 1.5, 1.5];
                edges[(uniform(state) * 6.0) as usize % 6]
            } else {
                uniform(state) * (n + 1.0) - 0.75
            }
        };
        (0..count).map(|_| (pick(ny), pick(nx))).unzip()
    }

    /// `count` points well inside `rows × cols` (at least `margin` from its sides).
    fn inner_points(
        state: &mut u64,
        rows: &std::ops::Range<usize>,
        cols: &std::ops::Range<usize>,
        margin: f64,
        count: usize,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut inner = |r: &std::ops::Range<usize>| {
            r.start as f64 + margin + uniform(state) * (r.len() as f64 - 1.0 - 2.0 * margin)
        };
        (0..count).map(|_| (inner(rows), inner(cols))).unzip()
    }

    /// The lengths [`compare`] samples of `n` points.
    fn lengths(n: usize) -> [usize; 3] {
        [n, n - 1, n - 3]
    }

    /// What [`compare`] did: values compared, and how many of them the vector loops sampled.
    #[derive(Default, Clone, Copy)]
    struct Compared {
        values: usize,
        vector: usize,
    }

    impl std::ops::AddAssign for Compared {
        fn add_assign(&mut self, o: Compared) {
            self.values += o.values;
            self.vector += o.vector;
        }
    }

    /// `plane.sample_many` (vector groups plus scalar groups), over all the points and over
    /// the first `len - 1` and `len - 3` ([`lengths`]), against the scalar `reference.sample`
    /// point by point, bit for bit.
    fn compare<S: Sample>(
        plane: &Plane<'_, S>,
        reference: &Plane<'_>,
        order: Order,
        (ys, xs): &(Vec<f64>, Vec<f64>),
    ) -> Compared {
        let mut compared = 0;
        let before = vector_points();
        for len in lengths(ys.len()) {
            let mut out = vec![0.0; len];
            plane.sample_many(order, &ys[..len], &xs[..len], &mut out);
            for ((&y, &x), &v) in ys.iter().zip(xs).zip(&out) {
                let scalar = reference.sample(order, y, x);
                assert_eq!(
                    v.to_bits(),
                    scalar.to_bits(),
                    "{order} at ({y}, {x}): {v} vs {scalar}"
                );
                compared += 1;
            }
        }
        Compared {
            values: compared,
            vector: vector_points() - before,
        }
    }

    /// Checks what the vector loops did: on points of whole images (`whole`, some groups
    /// interior) they sampled some points, and on points whose taps are all inside the window
    /// (`inner`) every whole group of four, `inner_groups` points; none where they cannot run.
    fn check_vector_loops(what: &str, whole: Compared, inner: Compared, inner_groups: usize) {
        if vector_loops_expected() {
            assert!(
                whole.vector > 0 && whole.vector < whole.values,
                "{what}: the vector loops sampled {} of {} points of whole images",
                whole.vector,
                whole.values
            );
            assert_eq!(
                inner.vector, inner_groups,
                "{what}: the vector loops must sample every group of interior points"
            );
            assert!(inner_groups > 0, "{what}: no interior points");
        } else {
            assert_eq!(
                whole.vector + inner.vector,
                0,
                "{what}: no vector loop here"
            );
        }
        println!(
            "{what}: {} of {} values from the vector loops on whole images, {} of {} on \
             interior points",
            whole.vector, whole.values, inner.vector, inner.values
        );
    }

    /// Bilinear `sample_many` against the scalar code, bit for bit: whole images of every
    /// size in [`SIZES`] with NaN pixels and the points of [`points`], and strided inner
    /// windows; for an `f64` plane and for an `f32` plane of the same values.
    #[test]
    fn groups_of_four_equal_the_scalar_code_bit_for_bit() {
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        // f64 and f32 planes: points of whole images, interior points of windows.
        let (mut whole, mut inner) = ([Compared::default(); 2], [Compared::default(); 2]);
        let mut inner_groups = 0;
        for (ny, nx) in SIZES {
            let values = image(&mut state, ny * nx);
            let narrow: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            let plane = Plane::full(&values, ny, nx).unwrap();
            let pts = points(&mut state, ny, nx, 500);
            whole[0] += compare(&plane, &plane, Order::Bilinear, &pts);
            whole[1] += compare(
                &Plane::full(&narrow, ny, nx).unwrap(),
                &plane,
                Order::Bilinear,
                &pts,
            );
            if ny >= 8 && nx >= 8 {
                // Rows 2..ny-1, columns 3..nx-2 of the image, stored with the image's stride.
                let (rows, cols) = (2..ny - 1, 3..nx - 2);
                let start = rows.start * nx + cols.start;
                let (r, c) = (rows.clone(), cols.clone());
                let window = Plane::with_stride(&values[start..], nx, r.clone(), c.clone(), ny, nx);
                let narrow_window = Plane::with_stride(&narrow[start..], nx, r, c, ny, nx);
                let pts = inner_points(&mut state, &rows, &cols, 0.01, 400);
                inner[0] += compare(&window.unwrap(), &plane, Order::Bilinear, &pts);
                inner[1] += compare(&narrow_window.unwrap(), &plane, Order::Bilinear, &pts);
                inner_groups += lengths(pts.0.len()).map(whole_groups).iter().sum::<usize>();
            }
        }
        for (k, what) in ["bilinear f64", "bilinear f32"].into_iter().enumerate() {
            check_vector_loops(what, whole[k], inner[k], inner_groups);
        }
        let compared: usize = whole.iter().chain(&inner).map(|c| c.values).sum();
        assert!(compared > 20_000, "{compared}");
    }

    /// The spline loops (orders 2 and 3) against the scalar code, bit for bit, as
    /// [`groups_of_four_equal_the_scalar_code_bit_for_bit`] (the planes hold coefficients,
    /// here any values).
    #[test]
    fn spline_groups_equal_the_scalar_code_bit_for_bit() {
        let mut state = 0x0F1E_2D3C_4B5A_6978u64;
        let mut compared = 0usize;
        for order in [Order::Biquadratic, Order::Bicubic] {
            let (mut whole, mut inner) = (Compared::default(), Compared::default());
            let mut inner_groups = 0;
            for (ny, nx) in SIZES {
                let values = image(&mut state, ny * nx);
                let plane = Plane::full(&values, ny, nx).unwrap();
                whole += compare(&plane, &plane, order, &points(&mut state, ny, nx, 600));
                if ny >= 12 && nx >= 12 {
                    // Rows 3..ny-3, columns 4..nx-3, with the image's stride; points whose
                    // taps stay inside.
                    let (rows, cols) = (3..ny - 3, 4..nx - 3);
                    let start = rows.start * nx + cols.start;
                    let window = Plane::with_stride(
                        &values[start..],
                        nx,
                        rows.clone(),
                        cols.clone(),
                        ny,
                        nx,
                    )
                    .unwrap();
                    let pts = inner_points(&mut state, &rows, &cols, 1.6, 400);
                    inner += compare(&window, &plane, order, &pts);
                    inner_groups += lengths(pts.0.len()).map(whole_groups).iter().sum::<usize>();
                }
            }
            check_vector_loops(&format!("{order} f64"), whole, inner, inner_groups);
            compared += whole.values + inner.values;
        }
        assert!(compared > 20_000, "{compared}");
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

//! The median difference (or fitted plane) of two overlapping inputs of a mosaic, from rows of
//! their cached samples ([`Row`]): one pass over the overlap that keeps only a narrow band
//! of the differences around the middle ranks (float32 rows eight pixels at a time with
//! AVX2), the exact radix selection over every difference when the band misses. numpy's
//! median to the bit.

use std::ops::Range;

use ndarray::{s, Array3};

use super::background::PlaneFit;

/// One row of cached samples: `&[f32]` and `&[f64]` (NaN where the footprint is 0) or
/// (values, footprints).
pub(super) trait Row: Copy {
    /// The number of pixels.
    fn width(self) -> usize;
    /// The first `n` pixels.
    fn prefix(self, n: usize) -> Self;
    /// (value, footprint) of pixel `i`, as
    /// [`Prepared::compute`](crate::mosaic::coadd::Prepared::compute) gives them.
    fn sample(self, i: usize) -> (f64, f64);
    /// The value of pixel `i` where its footprint is positive.
    fn valid(self, i: usize) -> Option<f64>;
    /// The row as float32 values (NaN: no data), when it is one.
    fn as_f32(&self) -> Option<&[f32]> {
        None
    }
}

/// [`Row`] of one array of values, NaN where the footprint is 0 (and 1 elsewhere).
macro_rules! unit_row {
    ($t:ty, $as_f32:expr) => {
        impl Row for &[$t] {
            fn as_f32(&self) -> Option<&[f32]> {
                $as_f32(*self)
            }
            #[inline(always)]
            fn width(self) -> usize {
                self.len()
            }
            #[inline(always)]
            fn prefix(self, n: usize) -> Self {
                &self[..n]
            }
            #[inline(always)]
            fn sample(self, i: usize) -> (f64, f64) {
                let v = self[i];
                if v.is_nan() {
                    (0.0, 0.0)
                } else {
                    (f64::from(v), 1.0)
                }
            }
            #[inline(always)]
            fn valid(self, i: usize) -> Option<f64> {
                let v = self[i];
                (!v.is_nan()).then_some(f64::from(v))
            }
        }
    };
}
unit_row!(f32, Some);
unit_row!(f64, |_| None);

impl Row for (&[f64], &[f64]) {
    #[inline(always)]
    fn width(self) -> usize {
        self.0.len().min(self.1.len())
    }
    #[inline(always)]
    fn prefix(self, n: usize) -> Self {
        (&self.0[..n], &self.1[..n])
    }
    #[inline(always)]
    fn sample(self, i: usize) -> (f64, f64) {
        (self.0[i], self.1[i])
    }
    #[inline(always)]
    fn valid(self, i: usize) -> Option<f64> {
        (self.1[i] > 0.0).then_some(self.0[i])
    }
}

/// Row `y` of plane `p` of `a`, columns `x..x + w`.
pub(super) fn row_of<T>(a: &Array3<T>, p: usize, y: usize, x: usize, w: usize) -> &[T] {
    a.slice(s![p, y, x..x + w]).to_slice().unwrap_or_default()
}

/// Calls `f(x, y, a - b)` for every pixel of the overlap `rows` × `cols` where both inputs
/// have data, from rows of their caches (`ra(p, y)`, `rb(p, y)`: plane `p`, output row `y`,
/// over `cols`), plane by plane, row by row.
fn for_each_difference<A: Row, B: Row>(
    planes: usize,
    rows: &Range<usize>,
    cols: &Range<usize>,
    ra: impl Fn(usize, usize) -> A,
    rb: impl Fn(usize, usize) -> B,
    mut f: impl FnMut(usize, usize, f64),
) {
    for p in 0..planes {
        for y in rows.clone() {
            let (a, b) = (ra(p, y), rb(p, y));
            let n = a.width().min(b.width());
            let (a, b) = (a.prefix(n), b.prefix(n));
            for i in 0..n {
                if let (Some(va), Some(vb)) = (a.valid(i), b.valid(i)) {
                    f(cols.start + i, y, va - vb);
                }
            }
        }
    }
}

/// One row of [`sampled_median`]'s pass: (differences, differences whose sort key is below
/// `lo`); those within `lo..=lo + width` pushed to `band`.
#[inline(always)]
fn classify<A: Row, B: Row>(
    a: A,
    b: B,
    (lo, width): (u64, u64),
    band: &mut Vec<f64>,
) -> (usize, usize) {
    let (mut n, mut below) = (0usize, 0usize);
    for i in 0..a.width().min(b.width()) {
        if let (Some(va), Some(vb)) = (a.valid(i), b.valid(i)) {
            let d = va - vb;
            let k = sort_key(d);
            n += 1;
            below += usize::from(k < lo);
            if k.wrapping_sub(lo) <= width {
                band.push(d);
            }
        }
    }
    (n, below)
}

/// [`classify`] of two float32 rows (NaN: no data), eight pixels at a time: the same counts,
/// the same differences in `band` (the sort keys compared as signed integers, `key ^ 1 << 63`).
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_f32_avx2(
    a: &[f32],
    b: &[f32],
    (lo, hi): (u64, u64),
    band: &mut Vec<f64>,
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let w = a.len().min(b.len());
    let signed = |k: u64| (k ^ 1 << 63) as i64;
    let (slo, shi) = (
        _mm256_set1_epi64x(signed(lo)),
        _mm256_set1_epi64x(signed(hi)),
    );
    let magnitude = _mm256_set1_epi64x(i64::MAX);
    let zero = _mm256_setzero_si256();
    let (mut n, mut below) = (0usize, 0usize);
    let mut lanes = [0.0f64; 4];
    let mut i = 0;
    while i + 8 <= w {
        // SAFETY: i + 8 <= w, within both rows.
        let (va, vb) = unsafe {
            (
                _mm256_loadu_ps(a.as_ptr().add(i)),
                _mm256_loadu_ps(b.as_ptr().add(i)),
            )
        };
        let valid = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_ORD_Q>(va, vb)) as u32;
        if valid != 0 {
            n += valid.count_ones() as usize;
            let halves = [
                (
                    _mm256_castps256_ps128(va),
                    _mm256_castps256_ps128(vb),
                    valid & 0xF,
                ),
                (
                    _mm256_extractf128_ps::<1>(va),
                    _mm256_extractf128_ps::<1>(vb),
                    valid >> 4,
                ),
            ];
            for (ha, hb, valid) in halves {
                let d = _mm256_sub_pd(_mm256_cvtps_pd(ha), _mm256_cvtps_pd(hb));
                let bits = _mm256_castpd_si256(d);
                // Negative values: every bit but the sign flipped (the signed sort key).
                let negative = _mm256_cmpgt_epi64(zero, bits);
                let key = _mm256_xor_si256(bits, _mm256_and_si256(negative, magnitude));
                let low =
                    _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(slo, key))) as u32;
                let high =
                    _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(key, shi))) as u32;
                below += (low & valid).count_ones() as usize;
                let mut inside = valid & !(low | high);
                if inside != 0 {
                    // SAFETY: `lanes` holds four f64.
                    unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), d) };
                    while inside != 0 {
                        band.push(lanes[inside.trailing_zeros() as usize]);
                        inside &= inside - 1;
                    }
                }
            }
        }
        i += 8;
    }
    let (tail_n, tail_below) = classify(&a[i..w], &b[i..w], (lo, hi - lo), band);
    (n + tail_n, below + tail_below)
}

/// The order-preserving integer of an f64 (`f64::total_cmp`'s order; for radix selection).
fn sort_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The offset (median difference, numpy's) or, with `plane`, the plane (offset, slopes in x
/// and y) of the differences of two inputs over their overlap `rows` × `cols`, from their rows
/// (see [`for_each_difference`]); `None` where there is none.
pub(super) fn pair_fit<A: Row, B: Row>(
    planes: usize,
    rows: &Range<usize>,
    cols: &Range<usize>,
    ra: impl Fn(usize, usize) -> A + Copy,
    rb: impl Fn(usize, usize) -> B + Copy,
    plane: bool,
) -> Option<(f64, f64, f64)> {
    if plane {
        let mut fit = PlaneFit::new(
            (cols.start + cols.end) as f64 / 2.0,
            (rows.start + rows.end) as f64 / 2.0,
        );
        for_each_difference(planes, rows, cols, ra, rb, |x, y, d| {
            fit.add(x as f64, y as f64, d)
        });
        return fit.solve();
    }
    if let Some(m) = sampled_median(planes, rows, &ra, &rb) {
        return m.map(|m| (m, 0.0, 0.0));
    }
    // The differences, in a buffer each thread reuses (no fresh pages per pair).
    thread_local! {
        static DIFFERENCES: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    DIFFERENCES.with(|buffer| {
        let mut differences = buffer.borrow_mut();
        differences.clear();
        for_each_difference(planes, rows, cols, ra, rb, |_, _, d| differences.push(d));
        radix_median(&mut differences).map(|m| (m, 0.0, 0.0))
    })
}

/// The pair's median difference (numpy's; `None` for a non-finite one) in one pass over the
/// overlap, without storing the differences: a sample of them (every 8th row and column)
/// gives a band of sort keys that holds the middle ranks with a wide margin; the pass counts
/// the differences below the band and keeps those within it, and a selection within the band
/// finds the two middle values when they are there. `None` when the sample is small or the
/// band misses the middle ranks: the caller then takes every difference
/// ([`radix_median`]), with the same result.
fn sampled_median<A: Row, B: Row>(
    planes: usize,
    rows: &Range<usize>,
    ra: &impl Fn(usize, usize) -> A,
    rb: &impl Fn(usize, usize) -> B,
) -> Option<Option<f64>> {
    const STRIDE: usize = 8;
    // Per thread: the sample's keys and the differences within the band.
    thread_local! {
        static BUFFERS: std::cell::RefCell<(Vec<u64>, Vec<f64>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    BUFFERS.with_borrow_mut(|(sample, band)| {
        sample.clear();
        for p in 0..planes {
            for y in rows.clone().skip(STRIDE / 2).step_by(STRIDE) {
                let (a, b) = (ra(p, y), rb(p, y));
                let n = a.width().min(b.width());
                let (a, b) = (a.prefix(n), b.prefix(n));
                for i in (STRIDE / 2..n).step_by(STRIDE) {
                    if let (Some(va), Some(vb)) = (a.valid(i), b.valid(i)) {
                        sample.push(sort_key(va - vb));
                    }
                }
            }
        }
        let s = sample.len();
        if s < 1024 {
            return None;
        }
        // The sample's count below the median is binomial (standard deviation √s / 2): the
        // band spans 5 of those each side.
        let margin = (2.5 * (s as f64).sqrt()) as usize + 8;
        let (first, last) = ((s / 2).saturating_sub(margin), (s / 2 + margin).min(s - 1));
        let (_, &mut lo, above) = sample.select_nth_unstable(first);
        let hi = *above.select_nth_unstable(last - first - 1).1;
        let width = hi - lo;
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        band.clear();
        let (mut n, mut below) = (0usize, 0usize);
        for p in 0..planes {
            for y in rows.clone() {
                let (a, b) = (ra(p, y), rb(p, y));
                let w = a.width().min(b.width());
                let (a, b) = (a.prefix(w), b.prefix(w));
                let (row_n, row_below) = match (a.as_f32(), b.as_f32()) {
                    #[cfg(target_arch = "x86_64")]
                    (Some(a), Some(b)) if avx2 => {
                        // SAFETY: AVX2 is present.
                        unsafe { classify_f32_avx2(a, b, (lo, hi), band) }
                    }
                    _ => classify(a, b, (lo, width), band),
                };
                n += row_n;
                below += row_below;
            }
        }
        let ranks = [(n - 1) / 2, n / 2];
        if ranks[0] < below || ranks[1] >= below + band.len() {
            return None;
        }
        let low = *band
            .select_nth_unstable_by(ranks[0] - below, f64::total_cmp)
            .1;
        let high = *band
            .select_nth_unstable_by(ranks[1] - below, f64::total_cmp)
            .1;
        let m = (low + high) / 2.0;
        Some(m.is_finite().then_some(m))
    })
}

/// numpy's median of finite `values` (the mean of the values at ranks (n - 1) / 2 and n / 2),
/// found by a histogram of the top 20 bits of their sort keys and a selection within the bins
/// of those ranks only; `None` for none. Reorders `values`.
fn radix_median(values: &mut [f64]) -> Option<f64> {
    const SHIFT: u32 = 44;
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mut histogram = vec![0u32; 1 << (64 - SHIFT)];
    for &v in values.iter() {
        histogram[(sort_key(v) >> SHIFT) as usize] += 1;
    }
    let ranks = [(n - 1) / 2, n / 2];
    let mut bins = [0usize; 2];
    let mut before = [0usize; 2];
    for (k, &rank) in ranks.iter().enumerate() {
        let mut seen = 0usize;
        for (bin, &count) in histogram.iter().enumerate() {
            if seen + count as usize > rank {
                bins[k] = bin;
                before[k] = seen;
                break;
            }
            seen += count as usize;
        }
    }
    // Move the values of the two bins to the front (the lower bin's first).
    let mut end = 0;
    for k in 0..2 {
        if k == 1 && bins[1] == bins[0] {
            break;
        }
        let first = end;
        for i in first..n {
            if (sort_key(values[i]) >> SHIFT) as usize == bins[k] {
                values.swap(i, end);
                end += 1;
            }
        }
    }
    let lower_count = if bins[1] == bins[0] {
        end
    } else {
        histogram[bins[0]] as usize
    };
    let mut at = |k: usize| -> f64 {
        let (start, len) = if k == 1 && bins[1] != bins[0] {
            (lower_count, end - lower_count)
        } else {
            (0, lower_count)
        };
        let slot = &mut values[start..start + len];
        *slot
            .select_nth_unstable_by(ranks[k] - before[k], f64::total_cmp)
            .1
    };
    let (lower, upper) = (at(0), at(1));
    let m = (lower + upper) / 2.0;
    m.is_finite().then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mosaic::background::median;

    #[test]
    fn radix_median_is_numpys_median() {
        let mut state = 12345u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 100_000) as f64 / 997.0 - 40.0
        };
        for n in [1, 2, 3, 10, 11, 1000, 4097] {
            let values: Vec<f64> = (0..n).map(|_| next()).collect();
            let mut a = values.clone();
            let mut b = values.clone();
            assert_eq!(radix_median(&mut a), Some(median(&mut b)), "n = {n}");
        }
        // Duplicates, signs and zeros.
        let mut v = vec![-0.0, 0.0, 1.5, 1.5, -2.0, 1.5, -0.0, 3.0];
        let mut w = v.clone();
        assert_eq!(radix_median(&mut v), Some(median(&mut w)));
        assert_eq!(radix_median(&mut []), None);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_rows_classify_as_the_scalar_loop() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut state = 424242u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let special = [
            f32::NAN,
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.0,
            -1.0,
        ];
        let mut value = || {
            let r = next();
            if r % 5 == 0 {
                special[(r / 5 % special.len() as u64) as usize]
            } else {
                (r % 20_000) as f32 / 997.0 - 10.0
            }
        };
        let (a, b): (Vec<f32>, Vec<f32>) = (0..1003).map(|_| (value(), value())).unzip();
        let bands = [
            (sort_key(-3.0), sort_key(5.0)),
            (sort_key(-0.0), sort_key(0.0)),
            (sort_key(1.0), sort_key(1.0)),
            (0, u64::MAX),
            (sort_key(f64::INFINITY), u64::MAX),
        ];
        for (lo, hi) in bands {
            for start in [0, 3] {
                let (a, b) = (&a[start..], &b[start..]);
                let (mut scalar, mut simd) = (Vec::new(), Vec::new());
                let counts = classify(a, b, (lo, hi - lo), &mut scalar);
                // SAFETY: AVX2 is present.
                let simd_counts = unsafe { classify_f32_avx2(a, b, (lo, hi), &mut simd) };
                assert_eq!(counts, simd_counts);
                let bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&scalar), bits(&simd));
            }
        }
    }

    #[test]
    fn sampled_median_is_numpys_median_or_declines() {
        let mut state = 987654321u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 1_000_000) as f64 / 7919.0 - 60.0
        };
        let (ny, nx) = (400, 240);
        // Planes 0 and 1: random values (NaN here and there: no data); plane 2: the pixels the
        // sample reads (every 8th row and column) far above the others.
        let mut a = Array3::<f64>::zeros((3, ny, nx));
        let b = Array3::<f64>::from_elem((3, ny, nx), 0.5);
        for ((p, y, x), v) in a.indexed_iter_mut() {
            *v = match p {
                0 if (y * 7 + x * 3) % 41 == 0 => f64::NAN,
                2 if y % 8 == 4 && x % 8 == 4 => 1000.0 + next(),
                _ => next(),
            };
        }
        let rows = 0..ny;
        let all = |a: &Array3<f64>, planes: Range<usize>| {
            let mut d: Vec<f64> = a
                .slice(s![planes, .., ..])
                .iter()
                .filter(|v| !v.is_nan())
                .map(|v| v - 0.5)
                .collect();
            median(&mut d)
        };
        let ra = |p: usize, y: usize| row_of(&a, p, y, 0, nx);
        let rb = |p: usize, y: usize| row_of(&b, p, y, 0, nx);
        // Planes 0 and 1, or 0 alone: the sample's band holds the middle.
        for planes in [2, 1] {
            let m = sampled_median(planes, &rows, &ra, &rb).unwrap().unwrap();
            assert_eq!(m.to_bits(), all(&a, 0..planes).to_bits());
        }
        // The same in float32 rows (eight pixels at a time where the CPU can).
        let (a32, b32) = (a.mapv(|v| v as f32), b.mapv(|v| v as f32));
        let ra32 = |p: usize, y: usize| row_of(&a32, p, y, 0, nx);
        let rb32 = |p: usize, y: usize| row_of(&b32, p, y, 0, nx);
        let m = sampled_median(2, &rows, &ra32, &rb32).unwrap().unwrap();
        assert_eq!(m.to_bits(), all(&a32.mapv(f64::from), 0..2).to_bits());
        // Plane 2 alone: the sample misleads, the band misses the middle ranks.
        let ra = |_: usize, y: usize| row_of(&a, 2, y, 0, nx);
        assert_eq!(sampled_median(1, &rows, &ra, &rb), None);
        // Too few pixels to sample.
        assert_eq!(sampled_median(1, &(0..20), &ra, &rb), None);
    }
}

//! Writes that stream past the caches: the GPU path's results into the caller's arrays, and
//! the input into page-locked staging buffers.
//!
//! Both are written once and not read again by this thread: the results of a 16384² job are
//! gigabytes, and the staging buffers are read only by the copy engine. A plain store first
//! reads the line it writes into the cache (a read for ownership), so writing N bytes moves
//! 2N over the memory bus. Streaming (non-temporal) stores write whole lines without reading
//! them: on the development machine a 2048² block of float32 values and its footprint went
//! into float32 arrays in 3.0 ms instead of 4.0 ms, into float64 arrays in 4.4 ms instead of
//! 7.1, and a 16 MB band of the input into staging in 1.9 ms instead of 2.3. The host side of
//! a GPU job is bound by memory bandwidth (docs/measurements/h100-2026-11-26-session12), so
//! this is where it pays (`examples/gpu_host_side.rs` measures it without a GPU).
//!
//! The values written are those of the scalar code every platform without SSE2 runs, bit for
//! bit (`tests`): a float32 NaN keeps its payload with its quiet bit set, as the CPU engine's
//! float64 round trip leaves it.

/// The quiet bit of a float32 NaN.
const F32_QUIET: u32 = 0x0040_0000;

/// A float32 value as the CPU engine leaves it: NaNs quieted (payload kept).
#[inline(always)]
fn quieted(v: f32) -> f32 {
    if v.is_nan() {
        f32::from_bits(v.to_bits() | F32_QUIET)
    } else {
        v
    }
}

/// An output type the results are stored as: float32 or float64.
pub(crate) trait StreamedSample: Copy + Send + Sync + 'static {
    /// `values` (float32 results) into `data`, `!isnan` into `footprint` (1 or 0).
    fn store_f32(values: &[f32], data: &mut [Self], footprint: &mut [Self]);
    /// `values` (float64 results) into `data`, `!isnan` into `footprint` (1 or 0).
    fn store_f64(values: &[f64], data: &mut [Self], footprint: &mut [Self]);
}

/// Stores a row of float32 `values` as `T` into `data` and their footprint (1 where the
/// value is a number, else 0) into `footprint`, with streaming stores where the platform has
/// them; [`finish`] must follow before anything else reads the rows.
///
/// Panics if the three lengths differ.
pub(crate) fn store_f32_row<T: StreamedSample>(
    values: &[f32],
    data: &mut [T],
    footprint: &mut [T],
) {
    assert!(values.len() == data.len() && data.len() == footprint.len());
    T::store_f32(values, data, footprint);
}

/// [`store_f32_row`] for float64 values.
pub(crate) fn store_f64_row<T: StreamedSample>(
    values: &[f64],
    data: &mut [T],
    footprint: &mut [T],
) {
    assert!(values.len() == data.len() && data.len() == footprint.len());
    T::store_f64(values, data, footprint);
}

/// Copies `src` into `dst` (equal lengths) with streaming stores where the platform has them;
/// [`finish`] must follow before the copy engine or another thread reads `dst`.
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    imp::copy(dst, src);
}

/// Orders the streaming stores made so far on this thread before its later stores (the
/// release of a lock, a flag another thread waits on, a copy's launch).
pub(crate) fn finish() {
    imp::fence();
}

/// The scalar rows: every platform's reference, and the ends of the streamed rows.
mod scalar {
    use super::quieted;

    /// `value(v)` into `data`, 1 (a number) or 0 (NaN) into `footprint`.
    fn rows<V: Copy, T: From<f32>>(
        values: &[V],
        data: &mut [T],
        footprint: &mut [T],
        value: impl Fn(V) -> T,
        is_nan: impl Fn(V) -> bool,
    ) {
        for ((o, f), &v) in data.iter_mut().zip(footprint.iter_mut()).zip(values) {
            *o = value(v);
            *f = T::from(if is_nan(v) { 0.0 } else { 1.0 });
        }
    }

    pub(super) fn f32_to_f32(values: &[f32], data: &mut [f32], footprint: &mut [f32]) {
        rows(values, data, footprint, quieted, f32::is_nan);
    }

    pub(super) fn f32_to_f64(values: &[f32], data: &mut [f64], footprint: &mut [f64]) {
        rows(
            values,
            data,
            footprint,
            |v| f64::from(quieted(v)),
            f32::is_nan,
        );
    }

    pub(super) fn f64_to_f32(values: &[f64], data: &mut [f32], footprint: &mut [f32]) {
        rows(values, data, footprint, |v| v as f32, f64::is_nan);
    }

    pub(super) fn f64_to_f64(values: &[f64], data: &mut [f64], footprint: &mut [f64]) {
        rows(values, data, footprint, |v| v, f64::is_nan);
    }
}

impl StreamedSample for f32 {
    fn store_f32(values: &[f32], data: &mut [f32], footprint: &mut [f32]) {
        imp::f32_to_f32(values, data, footprint);
    }
    fn store_f64(values: &[f64], data: &mut [f32], footprint: &mut [f32]) {
        imp::f64_to_f32(values, data, footprint);
    }
}

impl StreamedSample for f64 {
    fn store_f32(values: &[f32], data: &mut [f64], footprint: &mut [f64]) {
        imp::f32_to_f64(values, data, footprint);
    }
    fn store_f64(values: &[f64], data: &mut [f64], footprint: &mut [f64]) {
        imp::f64_to_f64(values, data, footprint);
    }
}

/// Where `data` and `footprint` can take 16-byte streaming stores from the same element on:
/// the count of leading elements to store one by one, or `None` (the whole row then).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn aligned_from<T>(data: &[T], footprint: &[T]) -> Option<usize> {
    let size = std::mem::size_of::<T>();
    let misaligned = |p: *const T| (p as usize) % 16;
    let (a, b) = (misaligned(data.as_ptr()), misaligned(footprint.as_ptr()));
    if a != b || a % size != 0 {
        return None;
    }
    Some(((16 - a) % 16 / size).min(data.len()))
}

#[cfg(target_arch = "x86_64")]
mod imp {
    //! SSE2 (every x86-64 has it): 16 bytes per store.
    use std::arch::x86_64::*;

    use super::{aligned_from, scalar, F32_QUIET};

    pub(super) fn fence() {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_sfence() }
    }

    /// Runs `simd` over the elements of the rows from where both outputs are 16-byte aligned,
    /// `per` at a time, and `one_by_one` over the ends (or everything, when the outputs'
    /// alignments differ).
    fn split<V, T>(
        values: &[V],
        data: &mut [T],
        footprint: &mut [T],
        per: usize,
        one_by_one: fn(&[V], &mut [T], &mut [T]),
        simd: impl Fn(&[V], &mut [T], &mut [T]),
    ) {
        let Some(head) = aligned_from(data, footprint) else {
            return one_by_one(values, data, footprint);
        };
        let body = (values.len() - head) / per * per;
        let (v0, rest) = values.split_at(head);
        let (v1, v2) = rest.split_at(body);
        let (d0, rest) = data.split_at_mut(head);
        let (d1, d2) = rest.split_at_mut(body);
        let (f0, rest) = footprint.split_at_mut(head);
        let (f1, f2) = rest.split_at_mut(body);
        one_by_one(v0, d0, f0);
        simd(v1, d1, f1);
        one_by_one(v2, d2, f2);
    }

    pub(super) fn f32_to_f32(values: &[f32], data: &mut [f32], footprint: &mut [f32]) {
        split(values, data, footprint, 4, scalar::f32_to_f32, |v, d, f| {
            // SAFETY: SSE2; `d` and `f` are 16-byte aligned (split) and hold v.len() elements,
            // a multiple of 4.
            unsafe {
                let one = _mm_set1_ps(1.0);
                let quiet = _mm_castsi128_ps(_mm_set1_epi32(F32_QUIET as i32));
                for i in (0..v.len()).step_by(4) {
                    let x = _mm_loadu_ps(v.as_ptr().add(i));
                    let number = _mm_cmpord_ps(x, x);
                    let x = _mm_or_ps(x, _mm_andnot_ps(number, quiet));
                    _mm_stream_ps(d.as_mut_ptr().add(i), x);
                    _mm_stream_ps(f.as_mut_ptr().add(i), _mm_and_ps(number, one));
                }
            }
        });
    }

    pub(super) fn f32_to_f64(values: &[f32], data: &mut [f64], footprint: &mut [f64]) {
        split(values, data, footprint, 2, scalar::f32_to_f64, |v, d, f| {
            // SAFETY: as in f32_to_f32, 2 elements per store.
            unsafe {
                let one = _mm_set1_pd(1.0);
                for i in (0..v.len()).step_by(2) {
                    let pair = _mm_castpd_ps(_mm_load_sd(v.as_ptr().add(i) as *const f64));
                    let x = _mm_cvtps_pd(pair);
                    _mm_stream_pd(d.as_mut_ptr().add(i), x);
                    _mm_stream_pd(f.as_mut_ptr().add(i), _mm_and_pd(_mm_cmpord_pd(x, x), one));
                }
            }
        });
    }

    pub(super) fn f64_to_f32(values: &[f64], data: &mut [f32], footprint: &mut [f32]) {
        split(values, data, footprint, 4, scalar::f64_to_f32, |v, d, f| {
            // SAFETY: as in f32_to_f32.
            unsafe {
                let one = _mm_set1_ps(1.0);
                for i in (0..v.len()).step_by(4) {
                    let lo = _mm_cvtpd_ps(_mm_loadu_pd(v.as_ptr().add(i)));
                    let hi = _mm_cvtpd_ps(_mm_loadu_pd(v.as_ptr().add(i + 2)));
                    let x = _mm_movelh_ps(lo, hi);
                    _mm_stream_ps(d.as_mut_ptr().add(i), x);
                    _mm_stream_ps(f.as_mut_ptr().add(i), _mm_and_ps(_mm_cmpord_ps(x, x), one));
                }
            }
        });
    }

    pub(super) fn f64_to_f64(values: &[f64], data: &mut [f64], footprint: &mut [f64]) {
        split(values, data, footprint, 2, scalar::f64_to_f64, |v, d, f| {
            // SAFETY: as in f32_to_f64.
            unsafe {
                let one = _mm_set1_pd(1.0);
                for i in (0..v.len()).step_by(2) {
                    let x = _mm_loadu_pd(v.as_ptr().add(i));
                    _mm_stream_pd(d.as_mut_ptr().add(i), x);
                    _mm_stream_pd(f.as_mut_ptr().add(i), _mm_and_pd(_mm_cmpord_pd(x, x), one));
                }
            }
        });
    }

    pub(super) fn copy(dst: &mut [u8], src: &[u8]) {
        let head = dst.as_ptr().align_offset(16).min(dst.len());
        let body = (dst.len() - head) / 16 * 16;
        dst[..head].copy_from_slice(&src[..head]);
        let (d, s) = (&mut dst[head..head + body], &src[head..head + body]);
        // SAFETY: SSE2; `d` is 16-byte aligned and both hold `body` bytes, a multiple of 16.
        unsafe {
            for i in (0..body).step_by(16) {
                let x = _mm_loadu_si128(s.as_ptr().add(i) as *const __m128i);
                _mm_stream_si128(d.as_mut_ptr().add(i) as *mut __m128i, x);
            }
        }
        dst[head + body..].copy_from_slice(&src[head + body..]);
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    //! Plain stores elsewhere.
    pub(super) use super::scalar::{f32_to_f32, f32_to_f64, f64_to_f32, f64_to_f64};

    pub(super) fn fence() {}

    pub(super) fn copy(dst: &mut [u8], src: &[u8]) {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Float32 bit patterns that matter: signalling and quiet NaNs with payloads, infinities,
    /// zeros, subnormals, and values float64 → float32 rounds.
    fn f32_cases() -> Vec<f32> {
        let bits = [
            0x7f80_0001u32, // signalling NaN
            0xff80_1234,    // negative signalling NaN with a payload
            0x7fc0_0000,    // quiet NaN
            0xffc0_0042,
            0x7f80_0000, // +inf
            0xff80_0000,
            0x0000_0000,
            0x8000_0000,
            0x0000_0001, // smallest subnormal
            0x3f80_0000,
            0xc2f6_e979,
        ];
        (0..101)
            .map(|i| f32::from_bits(bits[i % bits.len()].wrapping_add((i / bits.len()) as u32)))
            .collect()
    }

    fn f64_cases() -> Vec<f64> {
        let bits = [
            0x7ff0_0000_0000_0001u64, // signalling NaN
            0xfff8_0000_0000_0042,
            0x7ff0_0000_0000_0000,
            0x8000_0000_0000_0000,
            0x0000_0000_0000_0001,
            0x3fb9_9999_9999_999a, // 0.1, rounded to float32
            0x47ef_ffff_f000_0000, // rounds to float32 infinity
            0x36a0_0000_0000_0000, // float32 subnormal range
        ];
        (0..101)
            .map(|i| f64::from_bits(bits[i % bits.len()].wrapping_add((i / bits.len()) as u64)))
            .collect()
    }

    /// Every alignment of the rows (outputs alike and different), every length up to 40
    /// elements: the streamed rows hold the scalar rows' bits.
    fn agrees<V: Copy, T: Copy + Default + PartialEq + std::fmt::Debug>(
        cases: &[V],
        bits: impl Fn(T) -> u64,
        streamed: impl Fn(&[V], &mut [T], &mut [T]),
        reference: impl Fn(&[V], &mut [T], &mut [T]),
    ) {
        let mut runs = 0;
        for len in 0..40 {
            for at in 0..4 {
                for fp_at in 0..4 {
                    let v = &cases[at..at + len];
                    let (mut d, mut f) = (vec![T::default(); len + 8], vec![T::default(); len + 8]);
                    let (mut rd, mut rf) = (vec![T::default(); len], vec![T::default(); len]);
                    streamed(v, &mut d[at..at + len], &mut f[fp_at..fp_at + len]);
                    finish();
                    reference(v, &mut rd, &mut rf);
                    let got: Vec<u64> = d[at..at + len].iter().map(|&x| bits(x)).collect();
                    let want: Vec<u64> = rd.iter().map(|&x| bits(x)).collect();
                    assert_eq!(got, want, "values, length {len}, offsets {at} {fp_at}");
                    assert_eq!(&f[fp_at..fp_at + len], &rf[..], "footprint");
                    runs += 1;
                }
            }
        }
        assert_eq!(runs, 40 * 16);
    }

    #[test]
    fn float32_results_stream_into_either_output_type_with_the_scalar_bits() {
        let cases = f32_cases();
        agrees(
            &cases,
            |x: f32| u64::from(x.to_bits()),
            store_f32_row,
            scalar::f32_to_f32,
        );
        agrees(&cases, f64::to_bits, store_f32_row, scalar::f32_to_f64);
    }

    #[test]
    fn float64_results_stream_into_either_output_type_with_the_scalar_bits() {
        let cases = f64_cases();
        agrees(
            &cases,
            |x: f32| u64::from(x.to_bits()),
            store_f64_row,
            scalar::f64_to_f32,
        );
        agrees(&cases, f64::to_bits, store_f64_row, scalar::f64_to_f64);
    }

    /// The reference itself: as the CPU engine's float64 round trip of a float32 value
    /// (a signalling NaN comes out quiet, its payload kept), footprint 0 for every NaN.
    #[test]
    fn the_scalar_rows_quiet_nans_as_the_float64_round_trip_does() {
        let (mut d, mut f) = ([0f32; 3], [0f32; 3]);
        let v = [
            f32::from_bits(0x7f80_0001),
            f32::from_bits(0xff80_1234),
            -0.0,
        ];
        scalar::f32_to_f32(&v, &mut d, &mut f);
        assert_eq!(d.map(f32::to_bits), [0x7fc0_0001, 0xffc0_1234, 0x8000_0000]);
        assert_eq!(f, [0.0, 0.0, 1.0]);
        let mut d64 = [0f64; 3];
        scalar::f32_to_f64(&v, &mut d64, &mut [0f64; 3]);
        assert_eq!(d64.map(|x| x as f32).map(f32::to_bits), d.map(f32::to_bits));
    }

    #[test]
    fn copies_are_exact_at_every_alignment() {
        let src: Vec<u8> = (0..200u8).collect();
        for len in 0..70 {
            for at in 0..16 {
                let mut dst = [0u8; 100];
                copy(&mut dst[at..at + len], &src[3..3 + len]);
                finish();
                assert_eq!(&dst[at..at + len], &src[3..3 + len]);
                assert!(dst[..at].iter().chain(&dst[at + len..]).all(|&b| b == 0));
            }
        }
    }
}

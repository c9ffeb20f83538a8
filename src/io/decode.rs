//! Shared decoding of raw, strided samples (any byte order) into f64 windows.
//!
//! Every byte-backed source (raw bytes, `.npy` and FITS memory maps) describes its data with a
//! [`Layout`] (shape, byte strides, byte offset of the first element) and a [`Decoder`] (sample
//! type, byte order, FITS sign-bit flip, BSCALE/BZERO, BLANK), held together with the bytes in
//! a [`ByteImage`], whose [`read_window`](ByteImage::read_window) then converts only the
//! requested window.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::io::sample::{sample_size, ByteOrder, SampleType, StoredType};
use crate::io::{InputDecoding, RawPlane};

/// Where the samples of an N-dimensional array lie in a byte buffer.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Shape, C order.
    pub shape: Vec<usize>,
    /// Byte strides, one per dimension (may be negative).
    pub strides: Vec<isize>,
    /// Byte offset of element `[0, 0, ..., 0]`.
    pub offset: usize,
}

impl Layout {
    /// A C-contiguous layout of `shape` with `elem` bytes per sample starting at `offset`.
    pub fn c_contiguous(shape: &[usize], elem: usize, offset: usize) -> Layout {
        Layout::contiguous(shape, elem, offset, (0..shape.len()).rev())
    }

    /// A Fortran-contiguous layout (first index fastest).
    pub fn f_contiguous(shape: &[usize], elem: usize, offset: usize) -> Layout {
        Layout::contiguous(shape, elem, offset, 0..shape.len())
    }

    /// A contiguous layout whose dimensions, fastest first, are `axes`.
    fn contiguous(
        shape: &[usize],
        elem: usize,
        offset: usize,
        axes: impl Iterator<Item = usize>,
    ) -> Layout {
        let mut strides = vec![0isize; shape.len()];
        let mut s = elem as isize;
        for k in axes {
            strides[k] = s;
            s = s.saturating_mul(shape[k].max(1) as isize);
        }
        Layout {
            shape: shape.to_vec(),
            strides,
            offset,
        }
    }

    /// Byte offset of element `[.., 0, 0]` of plane `plane` (the flattened index over the
    /// leading dimensions).
    pub fn plane_offset(&self, plane: usize) -> isize {
        let mut base = self.offset as isize;
        for (k, i) in unravel_plane(&self.shape, plane).into_iter().enumerate() {
            base += i as isize * self.strides[k];
        }
        base
    }

    /// Checks that every element (of `elem` bytes) lies inside a buffer of `len` bytes.
    pub fn check_fits(&self, elem: usize, len: usize) -> Result<()> {
        if self.strides.len() != self.shape.len() {
            return Err(Error::ShapeMismatch(format!(
                "{} strides for a {}-dimensional shape {:?}",
                self.strides.len(),
                self.shape.len(),
                self.shape
            )));
        }
        if self.shape.contains(&0) {
            return Ok(());
        }
        let overflow = || Error::InvalidArgument("array extent overflows".into());
        let mut lo: i128 = 0;
        let mut hi: i128 = 0;
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            let span = (s as i128)
                .checked_mul(n as i128 - 1)
                .ok_or_else(overflow)?;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        let first = self.offset as i128 + lo;
        let last = self.offset as i128 + hi + elem as i128;
        if first < 0 || last > len as i128 {
            return Err(Error::ShapeMismatch(format!(
                "shape {:?} with byte strides {:?} and offset {} reaches bytes {}..{} of a \
                 {len}-byte buffer",
                self.shape, self.strides, self.offset, first, last
            )));
        }
        Ok(())
    }
}

/// How raw samples become f64 values.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoder {
    /// The decoded sample type.
    pub sample: SampleType,
    /// Whether the bytes are big-endian (else little-endian).
    pub big_endian: bool,
    /// Flip the sign bit after decoding (FITS unsigned / signed-byte conventions: BITPIX 16
    /// with BZERO 32768 decodes as U16, BITPIX 8 with BZERO -128 as I8, ...).
    pub flip_sign: bool,
    /// `value = zero + scale * sample` when present.
    pub scale: Option<(f64, f64)>,
    /// Decoded integer value (after the flip) that means "blank" (FITS BLANK).
    pub blank: Option<i128>,
}

impl Decoder {
    /// A plain decoder: no flip, no scaling, no blank.
    pub fn plain(sample: SampleType, big_endian: bool) -> Decoder {
        Decoder {
            sample,
            big_endian,
            flip_sign: false,
            scale: None,
            blank: None,
        }
    }
}

/// Validates a window request against a shape; returns `(ny, nx)` of a plane.
pub(crate) fn check_window(
    shape: &[usize],
    plane: usize,
    rows: &Range<usize>,
    cols: &Range<usize>,
    out_len: usize,
) -> Result<(usize, usize)> {
    let n = shape.len();
    let (ny, nx) = match n {
        0 => (0, 0),
        1 => (1, shape[0]),
        _ => (shape[n - 2], shape[n - 1]),
    };
    let planes: usize = shape[..n.saturating_sub(2)].iter().product();
    if plane >= planes {
        return Err(Error::InvalidArgument(format!(
            "plane {plane} out of range: the image {shape:?} has {planes} plane(s)"
        )));
    }
    if rows.start > rows.end || rows.end > ny {
        return Err(Error::InvalidArgument(format!(
            "rows {}..{} out of range 0..{ny}",
            rows.start, rows.end
        )));
    }
    if cols.start > cols.end || cols.end > nx {
        return Err(Error::InvalidArgument(format!(
            "columns {}..{} out of range 0..{nx}",
            cols.start, cols.end
        )));
    }
    let want = rows.len() * cols.len();
    if out_len != want {
        return Err(Error::ShapeMismatch(format!(
            "output buffer has {out_len} elements, the window {}x{} needs {want}",
            rows.len(),
            cols.len()
        )));
    }
    Ok((ny, nx))
}

/// Splits a flattened plane index into indices of the leading dimensions (C order).
pub(crate) fn unravel_plane(shape: &[usize], mut plane: usize) -> Vec<usize> {
    let nlead = shape.len().saturating_sub(2);
    let mut idx = vec![0; nlead];
    for k in (0..nlead).rev() {
        idx[k] = plane % shape[k];
        plane /= shape[k];
    }
    idx
}

/// Samples in a byte buffer (`&[u8]`, a memory map, ...) with their [`Layout`] and
/// [`Decoder`]: what every byte-backed [`ImageSource`](crate::io::ImageSource) serves its
/// windows and raw planes from.
#[derive(Debug, Clone)]
pub(crate) struct ByteImage<B> {
    /// The buffer holding the samples.
    pub bytes: B,
    /// Where the samples lie in `bytes`.
    pub layout: Layout,
    /// How they become f64 values.
    pub decoder: Decoder,
}

impl<B: AsRef<[u8]>> ByteImage<B> {
    /// The full shape, C order.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// The byte order of the samples.
    pub fn byte_order(&self) -> ByteOrder {
        if self.decoder.big_endian {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// The stored type of plain (unscaled) samples: `big_endian` when multi-byte samples are
    /// not in native order (1-byte samples have no byte order).
    pub fn plain_stored_type(&self) -> StoredType {
        let sample = self.decoder.sample;
        StoredType {
            sample,
            big_endian: sample_size(sample) > 1 && !self.byte_order().is_native(),
            scaled: false,
        }
    }

    /// The bytes of plane `plane` when they are plain samples, C-contiguous within the plane.
    pub fn raw_plane(&self, plane: usize) -> Option<RawPlane<'_>> {
        let decoder = &self.decoder;
        if decoder.flip_sign || decoder.scale.is_some() || decoder.blank.is_some() {
            return None;
        }
        Some(RawPlane {
            bytes: self.plain_samples(plane)?,
            sample: decoder.sample,
            big_endian: decoder.big_endian && sample_size(decoder.sample) > 1,
        })
    }

    /// The bytes of plane `plane`, when it is C-contiguous.
    fn plain_samples(&self, plane: usize) -> Option<&[u8]> {
        let (bytes, layout, decoder) = (self.bytes.as_ref(), &self.layout, &self.decoder);
        let n = layout.shape.len();
        if n < 2 || plane >= layout.shape[..n - 2].iter().product() {
            return None;
        }
        let elem = sample_size(decoder.sample);
        let (ny, nx) = (layout.shape[n - 2], layout.shape[n - 1]);
        if layout.strides[n - 1] != elem as isize || layout.strides[n - 2] != (nx * elem) as isize {
            return None;
        }
        let base = layout.plane_offset(plane);
        let start = usize::try_from(base).ok()?;
        bytes.get(start..start.checked_add(ny * nx * elem)?)
    }

    /// The stored samples of plane `plane` and their decoding, when the GPU kernels decode
    /// them exactly as [`ByteImage::read_window`] does (see
    /// [`ImageSource::encoded_plane`](crate::io::ImageSource::encoded_plane)): plain samples;
    /// integers of the kernels' types with BZERO/BSCALE and BLANK; the unsigned conventions
    /// of 8, 16 and 32 bits (the sign-bit flip is the exact offset `zero + 1 · sample` on
    /// the signed, or unsigned, samples of the same width).
    #[cfg_attr(not(feature = "fits"), allow(dead_code))] // only FITS inputs are decoded
    pub fn encoded_plane(&self, plane: usize) -> Option<(RawPlane<'_>, InputDecoding)> {
        let d = &self.decoder;
        let plain = !d.flip_sign && d.scale.is_none() && d.blank.is_none();
        let (sample, scale, blank_offset) = match (d.flip_sign, d.sample, d.scale) {
            _ if plain => return self.raw_plane(plane).map(|r| (r, InputDecoding::default())),
            (true, SampleType::I8, None) => (SampleType::U8, (-128.0, 1.0), -128),
            (true, SampleType::U16, None) => (SampleType::I16, (32768.0, 1.0), 32768),
            (true, SampleType::U32, None) => (SampleType::I32, (2147483648.0, 1.0), 2147483648),
            (
                false,
                s @ (SampleType::U8 | SampleType::I16 | SampleType::I32 | SampleType::I64),
                scale,
            ) => (s, scale.unwrap_or((0.0, 1.0)), 0),
            _ => return None,
        };
        // The BLANK of the stored samples (the decoder's is on flipped values).
        let blank = match d.blank {
            Some(b) => Some(i64::try_from(b - blank_offset).ok()?),
            None => None,
        };
        let decoding = InputDecoding {
            scale: (d.flip_sign || d.scale.is_some()).then_some(scale),
            blank,
        };
        let plain_bytes = self.plain_samples(plane)?;
        Some((
            RawPlane {
                bytes: plain_bytes,
                sample,
                big_endian: d.big_endian && sample_size(sample) > 1,
            },
            decoding,
        ))
    }

    /// Copies a window into `out` as f64 (see
    /// [`ImageSource::read_window`](crate::io::ImageSource::read_window)).
    pub fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        let (bytes, layout, decoder) = (self.bytes.as_ref(), &self.layout, &self.decoder);
        check_window(&layout.shape, plane, &rows, &cols, out.len())?;
        if rows.is_empty() || cols.is_empty() {
            return Ok(());
        }
        let n = layout.shape.len();
        let (sy, sx) = match n {
            1 => (0, layout.strides[0]),
            _ => (layout.strides[n - 2], layout.strides[n - 1]),
        };
        let base = layout.plane_offset(plane);
        let width = cols.len();
        for (r, out_row) in rows.zip(out.chunks_exact_mut(width)) {
            let start = base + r as isize * sy + cols.start as isize * sx;
            decode_run(bytes, start as usize, sx, decoder, out_row);
        }
        Ok(())
    }
}

/// A fixed-size sample that can be loaded from bytes.
trait Raw: Copy {
    const SIZE: usize;
    fn load(c: &[u8], big_endian: bool) -> Self;
    fn to_f64(self) -> f64;
    /// The integer value, for BLANK comparison (floats: never compared).
    fn key(self) -> i128;
    /// Flips the sign bit (integers only).
    fn flip(self) -> Self;
}

/// Implements [`Raw`] for `$t` (`$n` bytes), with the bodies of `key` and `flip` written over
/// the value as closures.
macro_rules! raw {
    ($t:ty, $n:expr, key = |$kv:pat_param| $key:expr, flip = |$fv:pat_param| $flip:expr) => {
        impl Raw for $t {
            const SIZE: usize = $n;
            #[inline(always)]
            fn load(c: &[u8], big_endian: bool) -> Self {
                let a: [u8; $n] = c[..$n].try_into().unwrap();
                if big_endian {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn key(self) -> i128 {
                let $kv = self;
                $key
            }
            #[inline(always)]
            fn flip(self) -> Self {
                let $fv = self;
                $flip
            }
        }
    };
}

/// An integer sample: its value is its BLANK key, `$bit` is its sign bit.
macro_rules! raw_int {
    ($t:ty, $n:expr, $bit:expr) => {
        raw!($t, $n, key = |v| v as i128, flip = |v| v ^ $bit);
    };
}

raw_int!(u8, 1, 0x80u8);
raw_int!(i8, 1, i8::MIN);
raw_int!(u16, 2, 0x8000u16);
raw_int!(i16, 2, i16::MIN);
raw_int!(u32, 4, 0x8000_0000u32);
raw_int!(i32, 4, i32::MIN);
raw_int!(u64, 8, 0x8000_0000_0000_0000u64);
raw_int!(i64, 8, i64::MIN);

// Float keys are never equal to a decoded BLANK (floats have no BLANK); floats do not flip.
raw!(f32, 4, key = |_| i128::MIN, flip = |v| v);
raw!(f64, 8, key = |_| i128::MIN, flip = |v| v);

/// Decodes `out.len()` samples starting at byte `start` with byte stride `stride`.
fn decode_run(bytes: &[u8], start: usize, stride: isize, d: &Decoder, out: &mut [f64]) {
    match d.sample {
        SampleType::U8 => run::<u8>(bytes, start, stride, d, out),
        SampleType::I8 => run::<i8>(bytes, start, stride, d, out),
        SampleType::U16 => run::<u16>(bytes, start, stride, d, out),
        SampleType::I16 => run::<i16>(bytes, start, stride, d, out),
        SampleType::U32 => run::<u32>(bytes, start, stride, d, out),
        SampleType::I32 => run::<i32>(bytes, start, stride, d, out),
        SampleType::U64 => run::<u64>(bytes, start, stride, d, out),
        SampleType::I64 => run::<i64>(bytes, start, stride, d, out),
        SampleType::F32 => run::<f32>(bytes, start, stride, d, out),
        SampleType::F64 => run::<f64>(bytes, start, stride, d, out),
    }
}

fn run<T: Raw>(bytes: &[u8], start: usize, stride: isize, d: &Decoder, out: &mut [f64]) {
    let (flip, blank) = (d.flip_sign, d.blank);
    match (d.big_endian, d.scale, blank.is_some() || flip) {
        (true, None, false) => each::<T, _>(bytes, start, stride, out, true, |v| v.to_f64()),
        (false, None, false) => each::<T, _>(bytes, start, stride, out, false, |v| v.to_f64()),
        (be, scale, _) => {
            let (zero, mul) = scale.unwrap_or((0.0, 1.0));
            let scaled = scale.is_some();
            each::<T, _>(bytes, start, stride, out, be, move |v| {
                let v = if flip { v.flip() } else { v };
                if blank == Some(v.key()) {
                    f64::NAN
                } else if scaled {
                    zero + mul * v.to_f64()
                } else {
                    v.to_f64()
                }
            })
        }
    }
}

#[inline(always)]
fn each<T: Raw, F: Fn(T) -> f64>(
    bytes: &[u8],
    start: usize,
    stride: isize,
    out: &mut [f64],
    big_endian: bool,
    f: F,
) {
    if stride == T::SIZE as isize {
        let src = &bytes[start..start + out.len() * T::SIZE];
        for (o, c) in out.iter_mut().zip(src.chunks_exact(T::SIZE)) {
            *o = f(T::load(c, big_endian));
        }
    } else {
        for (i, o) in out.iter_mut().enumerate() {
            let at = (start as isize + i as isize * stride) as usize;
            *o = f(T::load(&bytes[at..at + T::SIZE], big_endian));
        }
    }
}

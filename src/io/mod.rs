//! Image inputs and outputs.
//!
//! The engine reads input pixels only through [`ImageSource`], one rectangular window of one
//! plane at a time, as f64. Sources never need to be loaded whole: memory-mapped `.npy` and FITS
//! files convert (byte order, BSCALE/BZERO/BLANK) only the windows a block asks for.

use std::ops::Range;

use crate::error::Result;

/// The stored bytes of one plane, row-major and contiguous (see [`ImageSource::raw_plane`]).
///
/// ```
/// use ndarray::Array2;
/// use reproject::io::{ArraySource, ImageSource, SampleType};
/// let a = Array2::<f32>::zeros((2, 3));
/// let src = ArraySource::new(a.view().into_dyn())?;
/// let raw = src.raw_plane(0).unwrap();
/// assert_eq!((raw.bytes.len(), raw.sample), (24, SampleType::F32));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RawPlane<'a> {
    /// rows × columns samples.
    pub bytes: &'a [u8],
    /// The sample type.
    pub sample: SampleType,
    /// Whether multi-byte samples are big-endian.
    pub big_endian: bool,
}

impl RawPlane<'_> {
    /// Copies the window `rows × cols` of a float32 plane `nx` columns wide into `out`
    /// (row-major, native byte order), and says whether it could: `false`, leaving `out`
    /// alone, when the samples are not float32 or the window is not inside the bytes.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::io::{ArraySource, ImageSource};
    /// let a = Array2::from_shape_fn((3, 4), |(r, c)| (10 * r + c) as f32);
    /// let src = ArraySource::new(a.view().into_dyn())?;
    /// let mut out = Vec::new();
    /// assert!(src.raw_plane(0).unwrap().read_f32_window(4, 1..3, 2..4, &mut out));
    /// assert_eq!(out, [12.0, 13.0, 22.0, 23.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn read_f32_window(
        &self,
        nx: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut Vec<f32>,
    ) -> bool {
        let width = cols.len();
        let fits = cols.start <= cols.end
            && rows.start <= rows.end
            && cols.end <= nx
            && rows
                .end
                .checked_mul(nx)
                .and_then(|n| n.checked_mul(4))
                .is_some_and(|n| n <= self.bytes.len());
        if self.sample != SampleType::F32 || !fits {
            return false;
        }
        out.clear();
        out.reserve(rows.len() * width);
        for r in rows {
            let start = (r * nx + cols.start) * 4;
            let src = &self.bytes[start..start + width * 4];
            let room = &mut out.spare_capacity_mut()[..width];
            // SAFETY: `room` has `width` f32s of space for the `width * 4` bytes of `src`
            // (distinct allocations), and every byte pattern is a valid f32, so the first
            // `width` spare elements are initialised before the length covers them.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.as_ptr(),
                    room.as_mut_ptr() as *mut u8,
                    width * 4,
                );
                out.set_len(out.len() + width);
            }
        }
        if self.big_endian && cfg!(target_endian = "little") {
            // The stored bytes were copied as they are: swap them in place (vectorises).
            for v in out.iter_mut() {
                *v = f32::from_bits(v.to_bits().swap_bytes());
            }
        }
        true
    }
}

/// How stored integer samples become values (FITS BZERO/BSCALE and BLANK), for the GPU
/// backend, which uploads them undecoded and decodes them on the device
/// ([`ImageSource::encoded_plane`]).
///
/// ```
/// use reproject::io::InputDecoding;
/// // BITPIX 16 with BSCALE 0.5, BZERO 100 and BLANK -32768.
/// let d = InputDecoding { scale: Some((100.0, 0.5)), blank: Some(-32768) };
/// assert_ne!(d, InputDecoding::default());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InputDecoding {
    /// `(zero, scale)`: value = zero + scale · sample (FITS BZERO, BSCALE).
    pub scale: Option<(f64, f64)>,
    /// The stored integer that means "no value" (FITS BLANK).
    pub blank: Option<i64>,
}

/// Random access to the pixels of an N-dimensional image `(..., ny, nx)`, plane by plane.
///
/// Implementations must be cheap to share between threads (`Send + Sync`) and must not read
/// more than the requested window.
///
/// ```
/// use std::ops::Range;
/// use reproject::engine::{reproject_interp, Options};
/// use reproject::io::{ImageSource, SampleType, StoredType};
/// use reproject::wcs::Wcs;
/// // A 64 × 64 image computed on demand: value = column, never stored.
/// struct Ramp;
/// impl ImageSource for Ramp {
///     fn shape(&self) -> &[usize] {
///         &[64, 64]
///     }
///     fn stored_type(&self) -> StoredType {
///         StoredType { sample: SampleType::F64, big_endian: false, scaled: false }
///     }
///     fn read_window(&self, _plane: usize, rows: Range<usize>, cols: Range<usize>,
///                    out: &mut [f64]) -> reproject::Result<()> {
///         for (row, chunk) in rows.zip(out.chunks_mut(cols.len())) {
///             chunk.iter_mut().zip(cols.clone()).for_each(|(v, x)| *v = x as f64);
///         }
///         Ok(())
///     }
/// }
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 32\n\
///     CRPIX2 = 32\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
/// // Half the pixel size: output pixel x shows input pixel 15.5 + x / 2.
/// let fine = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 32\n\
///     CRPIX2 = 32\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.0005\nCDELT2 = 0.0005\n")?;
/// assert_eq!((Ramp.planes(), Ramp.plane_shape()), (1, (64, 64)));
/// let (data, _) = reproject_interp(&Ramp, &wcs, &fine, &[64, 64], &Options::default())?;
/// assert!((data[[40, 10]] - 20.5).abs() < 1e-9);
/// # Ok::<(), reproject::Error>(())
/// ```
pub trait ImageSource: Send + Sync {
    /// The full shape, C order: leading dimensions, then rows (y), then columns (x).
    fn shape(&self) -> &[usize];

    /// The stored sample type.
    fn stored_type(&self) -> StoredType;

    /// Copies rows `rows` and columns `cols` of plane `plane` (the flattened index over the
    /// leading dimensions) into `out` as f64, row-major with width `cols.len()`. Blank values
    /// (FITS BLANK) and NaN come out as NaN.
    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()>;

    /// The stored samples of plane `plane`, when they are plain (unscaled, no blank value)
    /// and C-contiguous: what the GPU backend uploads as is (byte order swapped on the device).
    /// `None` (the default) makes it read converted windows instead.
    fn raw_plane(&self, _plane: usize) -> Option<RawPlane<'_>> {
        None
    }

    /// The stored samples of plane `plane` with the decoding that gives their values, when
    /// they are C-contiguous integers the GPU kernels decode exactly as [`read_window`]
    /// does (FITS BZERO/BSCALE, BLANK, the unsigned conventions of 8 to 32 bits): what the GPU
    /// backend uploads instead of decoded float64 windows (a quarter of the bytes for
    /// BITPIX 16). The default: [`ImageSource::raw_plane`] with no decoding.
    ///
    /// [`read_window`]: ImageSource::read_window
    fn encoded_plane(&self, plane: usize) -> Option<(RawPlane<'_>, InputDecoding)> {
        self.raw_plane(plane).map(|r| (r, InputDecoding::default()))
    }

    /// Number of planes (product of the leading dimensions; 1 for a 2-D image).
    fn planes(&self) -> usize {
        let s = self.shape();
        s[..s.len().saturating_sub(2)].iter().product()
    }

    /// Rows and columns of one plane.
    fn plane_shape(&self) -> (usize, usize) {
        let s = self.shape();
        match s.len() {
            0 => (0, 0),
            1 => (1, s[0]),
            n => (s[n - 2], s[n - 1]),
        }
    }
}

/// A reference to a source is a source (e.g. `&dyn ImageSource`, so that an `Arc` of it can
/// be shared with plans that own their sources).
impl<S: ImageSource + ?Sized> ImageSource for &S {
    fn shape(&self) -> &[usize] {
        (**self).shape()
    }

    fn stored_type(&self) -> StoredType {
        (**self).stored_type()
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        (**self).read_window(plane, rows, cols, out)
    }

    fn raw_plane(&self, plane: usize) -> Option<RawPlane<'_>> {
        (**self).raw_plane(plane)
    }

    fn encoded_plane(&self, plane: usize) -> Option<(RawPlane<'_>, InputDecoding)> {
        (**self).encoded_plane(plane)
    }

    fn planes(&self) -> usize {
        (**self).planes()
    }

    fn plane_shape(&self) -> (usize, usize) {
        (**self).plane_shape()
    }
}

mod array;
mod decode;
#[cfg(feature = "fits")]
mod fits;
pub(crate) mod lock;
mod npy;
mod output;
mod sample;

pub use array::{ArrayElement, ArraySource, RawSource};
#[cfg(feature = "fits")]
pub use fits::FitsSource;
pub use lock::{OutputLock, INHERITED_LOCKS_VAR};
pub use npy::{NpyHeader, NpySource};
pub use output::{
    available_memory, MappedOutput, OutputElement, OutputFormat, OutputLayout, OutputType,
    PendingFile, SharedOutputMap,
};
pub(crate) use sample::sample_size;
pub use sample::{parse_numpy_dtype, ByteOrder, SampleType, StoredType};

#[cfg(test)]
mod raw_plane_tests {
    use super::{RawPlane, SampleType};

    /// Both byte orders give the stored values, window by window; other types and windows
    /// beyond the bytes are refused without touching `out`.
    #[test]
    fn f32_windows_in_both_byte_orders() {
        let (ny, nx) = (5, 7);
        let values: Vec<f32> = (0..ny * nx).map(|i| i as f32 * 1.5 - 20.0).collect();
        let big: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
        let native: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        for (bytes, big_endian) in [(&big, true), (&native, false)] {
            let raw = RawPlane {
                bytes,
                sample: SampleType::F32,
                big_endian,
            };
            for (rows, cols) in [(0..5, 0..7), (1..4, 2..6), (4..5, 6..7), (2..2, 0..3)] {
                let mut out = vec![9.0; 3];
                assert!(raw.read_f32_window(nx, rows.clone(), cols.clone(), &mut out));
                let values = &values;
                let expected: Vec<f32> = rows
                    .flat_map(|r| cols.clone().map(move |c| values[r * nx + c]))
                    .collect();
                assert_eq!(out, expected);
            }
            let mut out = vec![9.0; 3];
            assert!(!raw.read_f32_window(nx, 4..6, 0..7, &mut out));
            assert!(!raw.read_f32_window(nx, 0..2, 5..8, &mut out));
            #[allow(clippy::reversed_empty_ranges)]
            let (reversed, far) = (3..1, 1000..2);
            assert!(!raw.read_f32_window(nx, reversed, 0..2, &mut out));
            assert!(!raw.read_f32_window(nx, 0..2, far, &mut out));
            assert_eq!(out, [9.0; 3]);
        }
        let raw = RawPlane {
            bytes: &native,
            sample: SampleType::I32,
            big_endian: false,
        };
        assert!(!raw.read_f32_window(nx, 0..1, 0..1, &mut Vec::new()));
    }
}

//! Image inputs and outputs.
//!
//! The engine reads input pixels only through [`ImageSource`], one rectangular window of one
//! plane at a time, as f64. Sources never need to be loaded whole: memory-mapped `.npy` and FITS
//! files convert (byte order, BSCALE/BZERO/BLANK) only the windows a block asks for.

use std::ops::Range;

use crate::error::Result;

/// The stored sample type of an input, which decides reproject's float32 rounding rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleType {
    /// 8-bit unsigned integer.
    U8,
    /// 8-bit signed integer.
    I8,
    /// 16-bit unsigned integer.
    U16,
    /// 16-bit signed integer.
    I16,
    /// 32-bit unsigned integer.
    U32,
    /// 32-bit signed integer.
    I32,
    /// 64-bit unsigned integer.
    U64,
    /// 64-bit signed integer.
    I64,
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
}

/// A stored sample type with its byte order and scaling, as found in a file or array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredType {
    /// The sample type.
    pub sample: SampleType,
    /// Whether the bytes are big-endian (FITS) rather than native.
    pub big_endian: bool,
    /// Whether values are scaled (FITS BSCALE/BZERO other than 1/0).
    pub scaled: bool,
}

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

/// Random access to the pixels of an N-dimensional image `(..., ny, nx)`, plane by plane.
///
/// Implementations must be cheap to share between threads (`Send + Sync`) and must not read
/// more than the requested window.
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

mod array;
mod decode;
#[cfg(feature = "cuda")]
pub(crate) use decode::sample_size as decode_sample_size;
#[cfg(feature = "fits")]
mod fits;
mod npy;
mod output;

pub use array::{parse_numpy_dtype, ArrayElement, ArraySource, ByteOrder, RawSource};
#[cfg(feature = "fits")]
pub(crate) use fits::check_hdu_headers;
#[cfg(feature = "fits")]
pub use fits::FitsSource;
pub use npy::{NpyHeader, NpySource};
pub use output::{
    available_memory, MappedOutput, OutputElement, OutputFormat, OutputLayout, OutputType,
    SharedOutputMap,
};

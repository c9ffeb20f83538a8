//! Sample types, byte orders and numpy dtype strings: the vocabulary of stored pixels shared by
//! the decoder (`decode`), the in-memory sources (`array`) and the file sources (`npy`, `fits`).
//!
//! It imports none of the other `io` modules (only [`crate::error`]), so that the modules using
//! these types need not import one another for them (`array` and `decode` used to, both ways).
//! Everything public here is re-exported from [`crate::io`] (`reproject::io::SampleType`,
//! `reproject::io::ByteOrder`, ...).

use crate::error::{Error, Result};

/// The stored sample type of an input, which decides reproject's float32 rounding rules.
///
/// ```
/// use ndarray::Array2;
/// use reproject::io::{ArraySource, ImageSource, SampleType};
/// let image = Array2::<u16>::zeros((4, 4));
/// let source = ArraySource::new(image.view().into_dyn())?;
/// assert_eq!(source.stored_type().sample, SampleType::U16);
/// # Ok::<(), reproject::Error>(())
/// ```
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
///
/// ```
/// use ndarray::Array2;
/// use reproject::io::{ArraySource, ImageSource, SampleType, StoredType};
/// let image = Array2::<f32>::zeros((4, 4));
/// let stored = ArraySource::new(image.view().into_dyn())?.stored_type();
/// assert_eq!(stored, StoredType { sample: SampleType::F32, big_endian: false, scaled: false });
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredType {
    /// The sample type.
    pub sample: SampleType,
    /// Whether the bytes are big-endian (FITS) rather than native.
    pub big_endian: bool,
    /// Whether values are scaled (FITS BSCALE/BZERO other than 1/0).
    pub scaled: bool,
}

/// Size in bytes of one sample.
pub(crate) fn sample_size(sample: SampleType) -> usize {
    match sample {
        SampleType::U8 | SampleType::I8 => 1,
        SampleType::U16 | SampleType::I16 => 2,
        SampleType::U32 | SampleType::I32 | SampleType::F32 => 4,
        SampleType::U64 | SampleType::I64 | SampleType::F64 => 8,
    }
}

/// Byte order of raw samples.
///
/// ```
/// use reproject::io::ByteOrder;
/// let native = if cfg!(target_endian = "big") { ByteOrder::Big } else { ByteOrder::Little };
/// assert_eq!(ByteOrder::NATIVE, native);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (numpy `<`).
    Little,
    /// Most significant byte first (numpy `>`, FITS).
    Big,
}

impl ByteOrder {
    /// The byte order of this machine.
    ///
    /// ```
    /// use reproject::io::ByteOrder;
    /// assert_eq!(ByteOrder::NATIVE == ByteOrder::Little, cfg!(target_endian = "little"));
    /// ```
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };

    /// Whether this is the machine's byte order.
    ///
    /// ```
    /// use reproject::io::ByteOrder;
    /// assert!(ByteOrder::NATIVE.is_native());
    /// ```
    pub fn is_native(self) -> bool {
        self == ByteOrder::NATIVE
    }
}

/// Parses a numpy dtype string such as `'<f4'`, `'>f8'`, `'|u1'`, `'<i2'`, `'=u4'` or `'|b1'`
/// (bool, served as `U8`) into a sample type and byte order.
///
/// Complex, object, string, structured, datetime and float16 types are rejected with
/// [`Error::InvalidValue`], and so is `'|'` (byte order not applicable) on a multi-byte type.
///
/// The one parser of numpy dtype strings: [`NpySource`](crate::io::NpySource) headers,
/// [`RawSource::from_numpy`](crate::io::RawSource::from_numpy) and the Python bindings (host
/// and GPU arrays) all go through it.
///
/// ```
/// use reproject::io::{parse_numpy_dtype, ByteOrder, SampleType};
/// assert_eq!(parse_numpy_dtype(">f4")?, (SampleType::F32, ByteOrder::Big));
/// assert_eq!(parse_numpy_dtype("|u1")?.0, SampleType::U8);
/// assert_eq!(parse_numpy_dtype("|b1")?, (SampleType::U8, ByteOrder::NATIVE));
/// assert_eq!(parse_numpy_dtype("=i2")?, (SampleType::I16, ByteOrder::NATIVE));
/// assert!(parse_numpy_dtype("<c8").is_err());
/// assert!(parse_numpy_dtype("|f4").is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn parse_numpy_dtype(descr: &str) -> Result<(SampleType, ByteOrder)> {
    let bad = |reason: String| Error::InvalidValue {
        keyword: "dtype".into(),
        reason,
    };
    let (order, rest) = match descr.chars().next() {
        Some('<') => (Some(ByteOrder::Little), &descr[1..]),
        Some('>') => (Some(ByteOrder::Big), &descr[1..]),
        Some('=') => (Some(ByteOrder::NATIVE), &descr[1..]),
        Some('|') => (None, &descr[1..]),
        _ => (Some(ByteOrder::NATIVE), descr),
    };
    let sample = match rest {
        "f4" => SampleType::F32,
        "f8" => SampleType::F64,
        "u1" | "b1" => SampleType::U8,
        "i1" => SampleType::I8,
        "u2" => SampleType::U16,
        "i2" => SampleType::I16,
        "u4" => SampleType::U32,
        "i4" => SampleType::I32,
        "u8" => SampleType::U64,
        "i8" => SampleType::I64,
        _ => {
            let what = match rest.chars().next() {
                Some('c') => "complex numbers are not supported",
                Some('O') => "object arrays are not supported",
                Some('S') | Some('a') | Some('U') => "string arrays are not supported",
                Some('V') => "structured or void arrays are not supported",
                Some('M') | Some('m') => "datetime arrays are not supported",
                Some('f') => "only float32 and float64 are supported",
                _ => "unsupported or malformed dtype",
            };
            return Err(bad(format!(
                "'{descr}': {what} (supported: f4 f8 i1 u1 b1 i2 u2 i4 u4 i8 u8, any byte order)"
            )));
        }
    };
    let size = sample_size(sample);
    let order = match order {
        Some(o) => o,
        None if size == 1 => ByteOrder::NATIVE,
        None => {
            return Err(bad(format!(
                "'{descr}': '|' (not applicable) byte order on a {size}-byte type"
            )))
        }
    };
    Ok((sample, order))
}

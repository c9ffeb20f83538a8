//! In-memory sources: ndarray views of native numbers ([`ArraySource`]) and raw byte buffers in
//! either byte order ([`RawSource`], e.g. a numpy `>f4` array handed over as bytes).

use std::ops::Range;

use ndarray::{s, ArrayViewD, Axis, Ix2};

use crate::error::{Error, Result};
use crate::io::decode::{self, ByteImage, Decoder, Layout};
use crate::io::sample::{parse_numpy_dtype, sample_size, ByteOrder, SampleType, StoredType};
use crate::io::ImageSource;

mod sealed {
    pub trait Sealed {}
}

/// A native number type that an [`ArraySource`] can serve: `f32`, `f64`, `u8`, `i8`, `u16`,
/// `i16`, `u32`, `i32`, `u64`, `i64` and `bool` (served as `U8`, values 0 and 1).
///
/// ```
/// use reproject::io::{ArrayElement, SampleType};
/// assert_eq!(<i16 as ArrayElement>::SAMPLE, SampleType::I16);
/// assert_eq!(7u8.to_f64(), 7.0);
/// ```
pub trait ArrayElement: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The stored sample type reported by [`ImageSource::stored_type`].
    const SAMPLE: SampleType;
    /// The exact value as f64 (64-bit integers above 2^53 are rounded to nearest).
    fn to_f64(self) -> f64;
}

macro_rules! element {
    ($t:ty, $s:ident) => {
        impl sealed::Sealed for $t {}
        impl ArrayElement for $t {
            const SAMPLE: SampleType = SampleType::$s;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

element!(f32, F32);
element!(f64, F64);
element!(u8, U8);
element!(i8, I8);
element!(u16, U16);
element!(i16, I16);
element!(u32, U32);
element!(i32, I32);
element!(u64, U64);
element!(i64, I64);

impl sealed::Sealed for bool {}
impl ArrayElement for bool {
    const SAMPLE: SampleType = SampleType::U8;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
}

/// An [`ImageSource`] over an ndarray view of native numbers, with any strides (negative,
/// transposed, sliced) and any number of leading dimensions (at least 2 dimensions).
///
/// The stored type is the element type in native byte order, unscaled.
///
/// ```
/// use ndarray::Array3;
/// use reproject::io::{ArraySource, ImageSource};
/// let a = Array3::from_shape_fn((2, 3, 4), |(p, y, x)| (100 * p + 10 * y + x) as i16);
/// let src = ArraySource::new(a.view().into_dyn())?;
/// assert_eq!(src.planes(), 2);
/// let mut out = [0.0; 2];
/// src.read_window(1, 2..3, 1..3, &mut out)?;
/// assert_eq!(out, [121.0, 122.0]);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ArraySource<'a, T: ArrayElement> {
    view: ArrayViewD<'a, T>,
}

impl<'a, T: ArrayElement> ArraySource<'a, T> {
    /// Wraps a view; fails with [`Error::ShapeMismatch`] for fewer than 2 dimensions.
    ///
    /// ```
    /// use ndarray::Array1;
    /// use reproject::io::ArraySource;
    /// let a = Array1::<f32>::zeros(5);
    /// assert!(ArraySource::new(a.view().into_dyn()).is_err());
    /// ```
    pub fn new(view: ArrayViewD<'a, T>) -> Result<Self> {
        if view.ndim() < 2 {
            return Err(Error::ShapeMismatch(format!(
                "an image needs at least 2 dimensions, got shape {:?}",
                view.shape()
            )));
        }
        Ok(ArraySource { view })
    }

    /// The wrapped view.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::io::ArraySource;
    /// let a = Array2::<f64>::zeros((2, 3));
    /// let src = ArraySource::new(a.view().into_dyn())?;
    /// assert_eq!(src.view().shape(), &[2, 3]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn view(&self) -> &ArrayViewD<'a, T> {
        &self.view
    }
}

impl<T: ArrayElement> ImageSource for ArraySource<'_, T> {
    fn shape(&self) -> &[usize] {
        self.view.shape()
    }

    fn stored_type(&self) -> StoredType {
        StoredType {
            sample: T::SAMPLE,
            big_endian: false,
            scaled: false,
        }
    }

    fn raw_plane(&self, plane: usize) -> Option<crate::io::RawPlane<'_>> {
        let mut v = self.view.view();
        for i in decode::unravel_plane(self.view.shape(), plane) {
            v = v.index_axis_move(Axis(0), i);
        }
        let s = v.to_slice()?;
        if std::mem::size_of::<T>() != sample_size(T::SAMPLE) {
            return None;
        }
        // SAFETY: T is one of the sealed plain number types (or bool, one byte of 0 or 1),
        // without padding; the bytes stay borrowed from the view.
        let bytes = unsafe {
            std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s))
        };
        Some(crate::io::RawPlane {
            bytes,
            sample: T::SAMPLE,
            big_endian: false,
        })
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        decode::check_window(self.view.shape(), plane, &rows, &cols, out.len())?;
        if rows.is_empty() || cols.is_empty() {
            return Ok(());
        }
        let mut v = self.view.view();
        for i in decode::unravel_plane(self.view.shape(), plane) {
            v = v.index_axis_move(Axis(0), i);
        }
        let v = v
            .into_dimensionality::<Ix2>()
            .map_err(|e| Error::ShapeMismatch(e.to_string()))?;
        let w = v.slice_move(s![rows, cols.clone()]);
        for (out_row, row) in out.chunks_exact_mut(cols.len()).zip(w.rows()) {
            match row.as_slice() {
                Some(src) => {
                    for (o, &x) in out_row.iter_mut().zip(src) {
                        *o = x.to_f64();
                    }
                }
                None => {
                    for (o, &x) in out_row.iter_mut().zip(row.iter()) {
                        *o = x.to_f64();
                    }
                }
            }
        }
        Ok(())
    }
}

/// An [`ImageSource`] over raw bytes in either byte order, with any byte strides: for example
/// a numpy array (`>f4`, `<i2`, ...) handed over as a buffer + dtype + shape + strides.
///
/// The stored type reports `big_endian: true` when multi-byte samples are not in native order
/// (astropy's big-endian precision path; 1-byte samples have no byte order), unscaled.
///
/// ```
/// use reproject::io::{ByteOrder, ImageSource, RawSource, SampleType};
/// // A 2x2 big-endian float32 image.
/// let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, f32::NAN]
///     .iter()
///     .flat_map(|v| v.to_be_bytes())
///     .collect();
/// let src = RawSource::new(&bytes, SampleType::F32, ByteOrder::Big, &[2, 2])?;
/// let mut out = [0.0; 4];
/// src.read_window(0, 0..2, 0..2, &mut out)?;
/// assert_eq!(&out[..3], &[1.0, 2.0, 3.0]);
/// assert!(out[3].is_nan());
/// assert_eq!(src.stored_type().big_endian, !ByteOrder::Big.is_native());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RawSource<'a> {
    image: ByteImage<&'a [u8]>,
}

impl<'a> RawSource<'a> {
    /// A C-contiguous array of `shape` starting at byte 0 of `bytes`. Fails with
    /// [`Error::ShapeMismatch`] if the buffer is too short or the shape has fewer than 2
    /// dimensions.
    ///
    /// ```
    /// use reproject::io::{ByteOrder, RawSource, SampleType};
    /// assert!(RawSource::new(&[0u8; 7], SampleType::U16, ByteOrder::Little, &[2, 2]).is_err());
    /// ```
    pub fn new(
        bytes: &'a [u8],
        sample: SampleType,
        order: ByteOrder,
        shape: &[usize],
    ) -> Result<Self> {
        let layout = Layout::c_contiguous(shape, sample_size(sample), 0);
        Self::build(bytes, sample, order, layout)
    }

    /// An array with explicit byte `strides` (numpy's `strides`, possibly negative) whose
    /// element `[0, ..., 0]` sits at byte `offset` of `bytes`. Every element reachable through
    /// the strides must lie inside `bytes`.
    ///
    /// ```
    /// use reproject::io::{ByteOrder, ImageSource, RawSource, SampleType};
    /// // The transpose of the little-endian u16 array [[1, 2, 3], [4, 5, 6]].
    /// let bytes: Vec<u8> = (1u16..=6).flat_map(|v| v.to_le_bytes()).collect();
    /// let t = RawSource::with_strides(
    ///     &bytes,
    ///     SampleType::U16,
    ///     ByteOrder::Little,
    ///     &[3, 2],
    ///     &[2, 6],
    ///     0,
    /// )?;
    /// let mut out = [0.0; 6];
    /// t.read_window(0, 0..3, 0..2, &mut out)?;
    /// assert_eq!(out, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_strides(
        bytes: &'a [u8],
        sample: SampleType,
        order: ByteOrder,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self> {
        let layout = Layout {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
        };
        Self::build(bytes, sample, order, layout)
    }

    /// Like [`RawSource::with_strides`] with a numpy dtype string (see [`parse_numpy_dtype`]).
    ///
    /// ```
    /// use reproject::io::{ImageSource, RawSource, SampleType};
    /// let bytes: Vec<u8> = [1.5f64, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    /// let src = RawSource::from_numpy(&bytes, ">f8", &[1, 2], &[16, 8], 0)?;
    /// assert_eq!(src.stored_type().sample, SampleType::F64);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_numpy(
        bytes: &'a [u8],
        dtype: &str,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self> {
        let (sample, order) = parse_numpy_dtype(dtype)?;
        Self::with_strides(bytes, sample, order, shape, strides, offset)
    }

    fn build(
        bytes: &'a [u8],
        sample: SampleType,
        order: ByteOrder,
        layout: Layout,
    ) -> Result<Self> {
        if layout.shape.len() < 2 {
            return Err(Error::ShapeMismatch(format!(
                "an image needs at least 2 dimensions, got shape {:?}",
                layout.shape
            )));
        }
        layout.check_fits(sample_size(sample), bytes.len())?;
        Ok(RawSource {
            image: ByteImage {
                bytes,
                layout,
                decoder: Decoder::plain(sample, order == ByteOrder::Big),
            },
        })
    }

    /// The byte order of the samples.
    ///
    /// ```
    /// use reproject::io::{ByteOrder, RawSource, SampleType};
    /// let src = RawSource::new(&[0u8; 8], SampleType::I16, ByteOrder::Big, &[2, 2])?;
    /// assert_eq!(src.byte_order(), ByteOrder::Big);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn byte_order(&self) -> ByteOrder {
        self.image.byte_order()
    }
}

impl ImageSource for RawSource<'_> {
    fn shape(&self) -> &[usize] {
        self.image.shape()
    }

    fn raw_plane(&self, plane: usize) -> Option<crate::io::RawPlane<'_>> {
        self.image.raw_plane(plane)
    }

    fn stored_type(&self) -> StoredType {
        self.image.plain_stored_type()
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        self.image.read_window(plane, rows, cols, out)
    }
}

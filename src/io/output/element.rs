//! The sample types and file formats an output can have: [`OutputType`], the sealed
//! [`OutputElement`] trait of the Rust types that view its data, and [`OutputFormat`].

#[cfg(doc)]
use super::MappedOutput;

/// The sample type of an output file.
///
/// ```
/// use reproject::io::OutputType;
/// assert_eq!(OutputType::F32.size(), 4);
/// assert_eq!(OutputType::F64.bitpix(), -64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OutputType {
    /// 32-bit float (`<f4` / BITPIX -32).
    F32,
    /// 64-bit float (`<f8` / BITPIX -64).
    F64,
}

impl OutputType {
    /// Bytes per sample.
    ///
    /// ```
    /// assert_eq!(reproject::io::OutputType::F64.size(), 8);
    /// ```
    pub fn size(self) -> usize {
        match self {
            OutputType::F32 => 4,
            OutputType::F64 => 8,
        }
    }

    /// The FITS BITPIX.
    ///
    /// ```
    /// assert_eq!(reproject::io::OutputType::F32.bitpix(), -32);
    /// ```
    pub fn bitpix(self) -> i32 {
        match self {
            OutputType::F32 => -32,
            OutputType::F64 => -64,
        }
    }

    /// The native-endian numpy dtype string (`'<f4'` on little-endian machines).
    ///
    /// ```
    /// # if cfg!(target_endian = "little") {
    /// assert_eq!(reproject::io::OutputType::F64.npy_descr(), "<f8");
    /// # }
    /// ```
    pub fn npy_descr(self) -> &'static str {
        match (self, cfg!(target_endian = "big")) {
            (OutputType::F32, false) => "<f4",
            (OutputType::F64, false) => "<f8",
            (OutputType::F32, true) => ">f4",
            (OutputType::F64, true) => ">f8",
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A sample type that output data can be viewed as: `f32` or `f64`.
///
/// ```
/// use reproject::io::{OutputElement, OutputType};
/// assert_eq!(<f32 as OutputElement>::TYPE, OutputType::F32);
/// ```
pub trait OutputElement: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The matching [`OutputType`].
    const TYPE: OutputType;
    /// Converts native-endian values to big-endian in place.
    ///
    /// ```
    /// use reproject::io::OutputElement;
    /// let mut values = [1.5f64, 0.0];
    /// f64::to_big_endian(&mut values);
    /// assert_eq!(values[0].to_bits(), 1.5f64.to_bits().to_be());
    /// assert_eq!(values[1], 0.0); // zero is the same in both byte orders
    /// ```
    fn to_big_endian(values: &mut [Self]);
}

impl OutputElement for f32 {
    const TYPE: OutputType = OutputType::F32;
    fn to_big_endian(values: &mut [Self]) {
        for v in values {
            let (bits, be) = (v.to_bits(), v.to_bits().to_be());
            // Leave unchanged samples (zeros) untouched, so never-written pages of the sparse
            // file are not dirtied.
            if be != bits {
                *v = f32::from_bits(be);
            }
        }
    }
}

impl OutputElement for f64 {
    const TYPE: OutputType = OutputType::F64;
    fn to_big_endian(values: &mut [Self]) {
        for v in values {
            let (bits, be) = (v.to_bits(), v.to_bits().to_be());
            // Leave unchanged samples (zeros) untouched, so never-written pages of the sparse
            // file are not dirtied.
            if be != bits {
                *v = f64::from_bits(be);
            }
        }
    }
}

/// The file format of a [`MappedOutput`].
///
/// ```
/// use reproject::io::{MappedOutput, OutputFormat, OutputType};
/// let dir = std::env::temp_dir().join(format!("output_format_doc_{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let npy = MappedOutput::create_npy(dir.join("a.npy"), &[2], OutputType::F32, true)?;
/// let fits = MappedOutput::create_fits(dir.join("a.fits"), &[2], OutputType::F32, "", true)?;
/// assert_eq!((npy.format(), fits.format()), (OutputFormat::Npy, OutputFormat::Fits));
/// let (npy, fits) = (npy.finish()?, fits.finish()?);
/// assert!(std::fs::read(npy)?.starts_with(b"\x93NUMPY"));
/// assert!(std::fs::read(fits)?.starts_with(b"SIMPLE  ="));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OutputFormat {
    /// A `.npy` file (version 1.0, or 2.0 for very long headers), C order, native byte order.
    Npy,
    /// A FITS file: the image in the primary HDU, optionally a footprint image extension.
    Fits,
}

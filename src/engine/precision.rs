//! reproject's float32 rounding rules (its `at_least_float32` cast and scipy's output dtype).
//!
//! reproject casts any input that is not a float of 4+ bytes to float32 before interpolating,
//! and on some code paths scipy returns float32 results that are then stored in the float64
//! output: for float32-like inputs the result is rounded to float32 for orders ≥ 2, and also
//! for order 1 when the data are not in native byte order (FITS memory maps).

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::interp::Order;
use crate::io::{SampleType, StoredType};

/// Which arithmetic decides the stored values.
///
/// ```
/// use reproject::engine::Precision;
/// assert_eq!(Precision::default(), Precision::Reproject);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Precision {
    /// Reproduce astropy reproject's float32 rounding for float32 and integer inputs, and
    /// astropy's default SIP inversion tolerance (1e-4 px).
    #[default]
    Reproject,
    /// Keep every value in float64 and invert SIP to 1e-12 px (more accurate; differs from
    /// reproject by up to 6e-8 relative for float32 inputs and 1e-4 relative for SIP inputs).
    Float64,
}

impl FromStr for Precision {
    type Err = Error;

    /// `"reproject"` or `"float64"` (the names of the Python bindings' `precision=`); anything
    /// else is an [`Error::InvalidArgument`] naming the accepted names.
    ///
    /// ```
    /// use reproject::engine::Precision;
    /// assert_eq!("reproject".parse::<Precision>()?, Precision::Reproject);
    /// assert_eq!("float64".parse::<Precision>()?, Precision::Float64);
    /// let err = "half".parse::<Precision>().unwrap_err();
    /// assert!(matches!(err, reproject::Error::InvalidArgument(_)));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid argument: unknown precision 'half': expected 'reproject' or 'float64'"
    /// );
    /// # Ok::<(), reproject::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Precision> {
        match s {
            "reproject" => Ok(Precision::Reproject),
            "float64" => Ok(Precision::Float64),
            _ => Err(Error::InvalidArgument(format!(
                "unknown precision '{s}': expected 'reproject' or 'float64'"
            ))),
        }
    }
}

/// The rounding steps one call applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rounding {
    /// Input values pass through float32 first (integer inputs).
    values_to_f32: bool,
    /// Results are rounded to float32.
    result_to_f32: bool,
}

impl Rounding {
    pub(crate) fn new(precision: Precision, stored: StoredType, order: Order) -> Rounding {
        let none = Rounding {
            values_to_f32: false,
            result_to_f32: false,
        };
        if precision == Precision::Float64 {
            return none;
        }
        use SampleType::*;
        let one_byte = matches!(stored.sample, U8 | I8);
        let (float32_like, values_to_f32) = match stored.sample {
            F64 => (false, false),
            F32 => (true, false),
            // astropy scales BITPIX 8/16 data to float32 and wider integers to float64.
            U8 | I8 | U16 | I16 if stored.scaled => (true, false),
            _ if stored.scaled => (false, false),
            _ => (true, true),
        };
        if !float32_like {
            return none;
        }
        let native = !stored.big_endian || stored.scaled || one_byte;
        let result_to_f32 = match order.degree() {
            0 => false,
            1 => !native,
            _ => true,
        };
        Rounding {
            values_to_f32,
            result_to_f32,
        }
    }

    /// Applies the input cast to a window of values.
    #[inline]
    pub(crate) fn convert_values(&self, values: &mut [f64]) {
        if self.values_to_f32 {
            for v in values {
                *v = *v as f32 as f64;
            }
        }
    }

    /// Whether input values are rounded to float32 first (integer input), for the GPU.
    pub(crate) fn rounds_values(&self) -> bool {
        self.values_to_f32
    }

    /// Whether results are rounded to float32.
    #[inline(always)]
    pub(crate) fn rounds_results(&self) -> bool {
        self.result_to_f32
    }

    /// Applies the result rounding to one value.
    #[inline(always)]
    pub(crate) fn round_result(&self, v: f64) -> f64 {
        if self.result_to_f32 {
            v as f32 as f64
        } else {
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(sample: SampleType, big_endian: bool) -> StoredType {
        StoredType {
            sample,
            big_endian,
            scaled: false,
        }
    }

    #[test]
    fn the_table_of_reproject() {
        let r = |s, be, o| Rounding::new(Precision::Reproject, stored(s, be), o);
        // native float32: f64 bilinear, rounded spline.
        assert!(!r(SampleType::F32, false, Order::Bilinear).result_to_f32);
        assert!(r(SampleType::F32, false, Order::Bicubic).result_to_f32);
        // big-endian float32 (FITS): rounded from order 1 on.
        assert!(r(SampleType::F32, true, Order::Bilinear).result_to_f32);
        assert!(!r(SampleType::F32, true, Order::NearestNeighbor).result_to_f32);
        // float64 never rounds; integers go through float32.
        assert!(!r(SampleType::F64, true, Order::Bicubic).result_to_f32);
        assert!(r(SampleType::I32, false, Order::Bilinear).values_to_f32);
        assert!(!r(SampleType::U8, true, Order::Bilinear).result_to_f32);
        let exact = Rounding::new(
            Precision::Float64,
            stored(SampleType::I16, true),
            Order::Bicubic,
        );
        assert!(!exact.values_to_f32 && !exact.result_to_f32);
    }
}

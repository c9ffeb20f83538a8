//! The sample types a [`Plane`](super::Plane) can store: `f64`, and `f32` so that float32
//! images are sampled straight from a copy of their stored values (half the bytes of a widened
//! copy). Every float32 is exactly a float64, so both give the same results.

/// A stored sample type of a [`Plane`](super::Plane), read as `f64` (sealed: `f32` and `f64`).
///
/// ```
/// use reproject::interp::{Order, Plane};
/// let narrow = [1.5f32, 2.0, 3.0, 4.25];
/// let wide = narrow.map(f64::from);
/// let (a, b) = (Plane::full(&narrow, 2, 2)?, Plane::full(&wide, 2, 2)?);
/// assert_eq!(a.sample(Order::Bilinear, 0.3, 0.6), b.sample(Order::Bilinear, 0.3, 0.6));
/// # Ok::<(), reproject::Error>(())
/// ```
pub trait Sample: Copy + Send + Sync + std::fmt::Debug + sealed::Sealed + 'static {
    /// The value as `f64` (exact for both types).
    fn to_f64(self) -> f64;

    /// The slice as one of the concrete types, for the vector loops.
    #[doc(hidden)]
    fn as_concrete(data: &[Self]) -> Concrete<'_>;
}

/// A slice of samples of a known concrete type (see [`Sample::as_concrete`]).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Concrete<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

impl Sample for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn as_concrete(data: &[f64]) -> Concrete<'_> {
        Concrete::F64(data)
    }
}

impl Sample for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn as_concrete(data: &[f32]) -> Concrete<'_> {
        Concrete::F32(data)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

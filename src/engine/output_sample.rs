//! The sample types a plan writes its outputs in (`f64`, `f32`), and how a block's values
//! are stored into them.

use ndarray::ArrayViewMut3;

use super::executor::BlockOut;
use super::streaming;

/// An output sample type: `f64` (reproject's default) or `f32`.
///
/// ```
/// use reproject::engine::OutputSample;
/// fn third<T: OutputSample>() -> T {
///     T::from_f64(1.0 / 3.0)
/// }
/// assert_eq!(third::<f64>(), 1.0 / 3.0);
/// assert_eq!(third::<f32>(), 1.0f32 / 3.0);
/// # Ok::<(), reproject::Error>(())
/// ```
pub trait OutputSample: Copy + Send + Sync + 'static {
    /// Converts a computed value.
    fn from_f64(v: f64) -> Self;

    /// Block outputs of this type, as executors take them.
    fn block_out<'a>(
        data: ArrayViewMut3<'a, Self>,
        footprint: ArrayViewMut3<'a, Self>,
    ) -> BlockOut<'a>;

    /// Stores a row of computed `values` into `data` ([`OutputSample::from_f64`]) and their
    /// footprint into `footprint` (1 where the value is a number, 0 where it is NaN), with
    /// streaming stores where the platform has them: the same bits as storing them one by
    /// one, without reading the outputs' cache lines first. The stores are ordered before the
    /// thread's later ones only after [`OutputSample::finish_rows`].
    ///
    /// ```
    /// use reproject::engine::OutputSample;
    /// let (mut data, mut footprint) = ([0.0f32; 3], [0.0f32; 3]);
    /// f32::store_row(&[1.5, f64::NAN, 2.0], &mut data, &mut footprint);
    /// f32::finish_rows();
    /// assert_eq!(footprint, [1.0, 0.0, 1.0]);
    /// assert!(data[0] == 1.5 && data[1].is_nan() && data[2] == 2.0);
    /// ```
    ///
    /// Panics if the three lengths differ.
    fn store_row(values: &[f64], data: &mut [Self], footprint: &mut [Self]);

    /// Orders the rows [`OutputSample::store_row`] stored on this thread before its later
    /// stores (the end of a block, before another thread may read it).
    fn finish_rows() {
        streaming::finish();
    }
}

impl OutputSample for f64 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }

    fn block_out<'a>(
        data: ArrayViewMut3<'a, f64>,
        footprint: ArrayViewMut3<'a, f64>,
    ) -> BlockOut<'a> {
        BlockOut::F64(data, footprint)
    }

    fn store_row(values: &[f64], data: &mut [f64], footprint: &mut [f64]) {
        streaming::store_f64_row(values, data, footprint);
    }
}

impl OutputSample for f32 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }

    fn block_out<'a>(
        data: ArrayViewMut3<'a, f32>,
        footprint: ArrayViewMut3<'a, f32>,
    ) -> BlockOut<'a> {
        BlockOut::F32(data, footprint)
    }

    fn store_row(values: &[f64], data: &mut [f32], footprint: &mut [f32]) {
        streaming::store_f64_row(values, data, footprint);
    }
}

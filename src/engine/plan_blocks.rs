//! A [`Plan`]'s blocks and their computation: one block into the caller's buffers, or the
//! whole output through the scheduler.

use std::ops::Range;

use ndarray::{ArrayView2, ArrayViewMut3, ArrayViewMutD};

use super::blocks::{blocks, Block};
use super::coords::Bounds;
use super::{schedule, KernelView, OutputSample, Plan};
use crate::error::{Error, Result};
use crate::interp::Window;

impl<'a> Plan<'a> {
    /// The blocks of the output plane, in row-major order.
    ///
    /// ```
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// let options = Options { block_size: Some((16, 16)), ..Options::default() };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 40], &options)?;
    /// let blocks = plan.blocks();
    /// assert_eq!(blocks.len(), 6);
    /// assert_eq!((blocks[1].rows.clone(), blocks[1].cols.clone()), (0..16, 16..32));
    /// assert_eq!((blocks[5].rows.clone(), blocks[5].cols.clone()), (16..32, 32..40));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn blocks(&self) -> Vec<Block> {
        blocks(self.plane_shape_out(), self.block_shape()).collect()
    }

    /// Rows `rows` × columns `cols` of input plane `plane` as the values the engine
    /// interpolates (read, and rounded to float32 where reproject rounds), into `out`
    /// (row-major), on this thread.
    pub(crate) fn read_values(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        self.source.read_window(plane, rows, cols, out)?;
        self.rounding.convert_values(out);
        Ok(())
    }

    /// Computes one block for every plane: `data` and `footprint` are (planes, block rows,
    /// block columns) views. This is the one per-block function behind every schedule; it
    /// runs on the plan's executor ([`Plan::executor`]).
    ///
    /// ```
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// use ndarray::{s, Array3, ArrayD, IxDyn};
    /// // Block by block, in any order, the same bits as the whole output at once.
    /// let options = Options { block_size: Some((16, 16)), ..Options::default() };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
    /// let (whole, _) = reproject::engine::reproject_interp(&source, &wcs_in, &wcs_out, &[32, 32],
    ///     &options)?;
    /// for block in plan.blocks().iter().rev() {
    ///     let shape = (1, block.rows.len(), block.cols.len());
    ///     let (mut data, mut footprint) = (Array3::<f64>::zeros(shape), Array3::zeros(shape));
    ///     plan.compute_block(block, data.view_mut(), footprint.view_mut())?;
    ///     let want = whole.slice(s![block.rows.clone(), block.cols.clone()]);
    ///     assert!(data.index_axis(ndarray::Axis(0), 0).iter().zip(want.iter())
    ///         .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())));
    /// }
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_block<T: OutputSample>(
        &self,
        block: &Block,
        mut data: ArrayViewMut3<T>,
        mut footprint: ArrayViewMut3<T>,
    ) -> Result<()> {
        self.check_block(block, Some((data.shape(), footprint.shape())))?;
        if block.is_empty() {
            return Ok(());
        }
        let out = T::block_out(data.view_mut(), footprint.view_mut());
        self.executor()?.compute(self, block, out)
    }

    /// Checks that `block` lies within the output plane and, when given, that the shapes of
    /// its two output views are (planes, block rows, block columns).
    pub(crate) fn check_block(
        &self,
        block: &Block,
        views: Option<(&[usize], &[usize])>,
    ) -> Result<()> {
        let expected = [self.planes, block.rows.len(), block.cols.len()];
        if let Some((data, footprint)) = views
            && (data != expected || footprint != expected)
        {
            return Err(Error::ShapeMismatch(format!(
                "block buffers of shapes {data:?} and {footprint:?}, expected {expected:?}"
            )));
        }
        let (ny, nx) = self.plane_shape_out();
        if block.rows.end > ny || block.cols.end > nx {
            return Err(Error::ShapeMismatch(format!(
                "block rows {:?}, columns {:?} outside the {ny}x{nx} output plane",
                block.rows, block.cols
            )));
        }
        Ok(())
    }

    /// What the kernel parameter encoder needs ([`kernel_params`](super::kernel_params)).
    pub(crate) fn kernel_view(&self) -> KernelView<'_> {
        KernelView {
            coords: &self.coords,
            values_f32: self.rounding.rounds_values(),
            result_f32: self.rounding.rounds_results(),
            interpolates_beyond_plane: self.spectral.is_some(),
        }
    }

    /// The input window of a block with input positions within `b`, and the spline
    /// coefficients of input plane `plane` (orders >= 2), for the GPU encoder.
    pub(crate) fn gpu_window(
        &self,
        b: Bounds,
        plane: usize,
    ) -> Result<(Window, Option<ArrayView2<'_, f64>>)> {
        let c = self
            .coefficients()?
            .filter(|c| plane < c.planes.len())
            .map(|c| c.planes.plane(plane));
        Ok((self.window_for(b), c))
    }

    /// The input window holding every tap of positions within `b` (mirrored taps included:
    /// they fall within `degree/2 + 1` of an edge the window then reaches).
    pub(super) fn window_for(&self, b: Bounds) -> Window {
        let (ny, nx) = self.plane_shape_in;
        let margin = self.options.order.degree() / 2 + 2;
        let span = |(lo, hi): (f64, f64), n: usize| {
            let lo = lo.max(0.0).floor() as usize;
            let hi = hi.min(n as f64 - 1.0).ceil() as usize;
            lo.saturating_sub(margin)..(hi + margin + 1).min(n)
        };
        Window {
            rows: span(b.y, ny),
            cols: span(b.x, nx),
        }
    }

    /// Computes every block into `data` and `footprint` (full output shape), on the threads
    /// the options ask for.
    ///
    /// ```
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// use ndarray::ArrayD;
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &Options::default())?;
    /// let mut data = ArrayD::<f32>::zeros(vec![32, 32]);
    /// let mut footprint = data.clone();
    /// plan.compute_into(data.view_mut(), footprint.view_mut())?;
    /// assert!((data[[7, 3]] - image[[7, 4]] as f32).abs() < 1e-4);
    /// // The arrays must have the plan's output shape.
    /// let mut small = ArrayD::<f32>::zeros(vec![16, 32]);
    /// let mut small_footprint = small.clone();
    /// assert!(plan.compute_into(small.view_mut(), small_footprint.view_mut()).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_into<T: OutputSample>(
        &self,
        data: ArrayViewMutD<T>,
        footprint: ArrayViewMutD<T>,
    ) -> Result<()> {
        self.compute_into_with(data, footprint, &schedule::Schedule::default())
    }

    /// [`Plan::compute_into`] as `schedule` says (threads, progress, cancellation: see
    /// [`schedule::run`]).
    ///
    /// ```
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// use std::sync::atomic::AtomicBool;
    /// use ndarray::ArrayD;
    /// use reproject::engine::schedule::Schedule;
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &Options::default())?;
    /// let mut data = ArrayD::<f64>::zeros(vec![32, 32]);
    /// let mut footprint = data.clone();
    /// let cancel = AtomicBool::new(true); // cancelled before it starts
    /// let schedule = Schedule { cancel: Some(&cancel), ..Schedule::default() };
    /// let run = plan.compute_into_with(data.view_mut(), footprint.view_mut(), &schedule);
    /// assert!(matches!(run, Err(reproject::Error::Cancelled(_))));
    /// assert_eq!(footprint.sum(), 0.0); // no block computed
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_into_with<T: OutputSample>(
        &self,
        data: ArrayViewMutD<T>,
        footprint: ArrayViewMutD<T>,
        schedule: &schedule::Schedule<'_>,
    ) -> Result<()> {
        if data.shape() != self.shape_out.as_slice()
            || footprint.shape() != self.shape_out.as_slice()
        {
            return Err(Error::ShapeMismatch(format!(
                "output arrays of shapes {:?} and {:?}, expected {:?}",
                data.shape(),
                footprint.shape(),
                self.shape_out
            )));
        }
        let (ny, nx) = self.plane_shape_out();
        let planes = self.planes;
        let data = data.into_shape_with_order((planes, ny, nx)).map_err(|_| {
            Error::ShapeMismatch("output arrays must be contiguous (C order)".into())
        })?;
        let footprint = footprint
            .into_shape_with_order((planes, ny, nx))
            .map_err(|_| {
                Error::ShapeMismatch("output arrays must be contiguous (C order)".into())
            })?;
        let (mut data, mut footprint) = (data, footprint);
        schedule::run(self, data.view_mut(), footprint.view_mut(), schedule).map(|_| ())
    }
}

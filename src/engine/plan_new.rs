//! Making a [`Plan`]: from two WCS or from given input positions, with a borrowed or a shared
//! input, and its spline coefficients where the CPU computes them.

use std::sync::{Arc, OnceLock};

use super::checks::plan_geometry;
use super::precision::Rounding;
use super::prefilter::Sharing;
use super::spline_share::SplinePrep;
use super::{Geometry, Options, Parallel, Plan, SourceRef};
use crate::error::{Error, Result};
use crate::interp::NanPolicy;
use crate::io::ImageSource;
use crate::pixel_transform::PositionTable;
use crate::wcs::Wcs;

impl<'a> Plan<'a> {
    /// Validates the inputs and prepares the transform (and, for orders ≥ 2, the spline
    /// coefficients of every input plane).
    ///
    /// `shape_out` is the output shape: either just (rows, columns), in which case the input's
    /// leading dimensions are prepended, or the full shape with the same leading dimensions
    /// as the input.
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
    /// # use ndarray::Array3;
    /// let cube = Array3::<f32>::zeros((3, 32, 32));
    /// let cube = ArraySource::new(cube.view().into_dyn())?;
    /// // The input's leading dimension comes first in the output.
    /// let plan = Plan::new(&cube, &wcs_in, &wcs_out, &[20, 24], &Options::default())?;
    /// assert_eq!(plan.shape_out(), &[3, 20, 24]);
    /// // A full shape must keep the input's leading dimensions.
    /// assert!(Plan::new(&cube, &wcs_in, &wcs_out, &[2, 20, 24], &Options::default()).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(
        source: &'a dyn ImageSource,
        wcs_in: &Wcs,
        wcs_out: &Wcs,
        shape_out: &[usize],
        options: &Options,
    ) -> Result<Plan<'a>> {
        Plan::build(
            SourceRef::Borrowed(source),
            Geometry::Wcs { wcs_in, wcs_out },
            shape_out,
            options,
        )
    }

    /// Like [`Plan::new`] with an input the plan shares ownership of, so the plan (and block
    /// handles made from it) can live on by themselves.
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
    /// use std::sync::Arc;
    /// use reproject::engine::lazy::LazyReprojection;
    /// // The plan owns its input: it can outlive this scope (here, as lazy block handles).
    /// let owned = ArraySource::new(image.view().into_dyn())?;
    /// let plan = Plan::with_shared_source(Arc::new(owned), &wcs_in, &wcs_out, &[32, 32],
    ///     &Options::default())?;
    /// let lazy = LazyReprojection::new(plan);
    /// let (data, _) = lazy.compute()?;
    /// assert!((data[[0, 5]] - image[[0, 6]]).abs() < 1e-6);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_shared_source(
        source: Arc<dyn ImageSource + 'a>,
        wcs_in: &Wcs,
        wcs_out: &Wcs,
        shape_out: &[usize],
        options: &Options,
    ) -> Result<Plan<'a>> {
        Plan::with_shared_source_and(
            source,
            wcs_in,
            wcs_out,
            shape_out,
            options,
            SplinePrep::Usual,
        )
    }

    /// Like [`Plan::with_shared_source`], with the CPU's spline coefficients prepared as
    /// `splines` says (made for, or taken from, other processes:
    /// [`spline_share`](super::spline_share)).
    pub(crate) fn with_shared_source_and(
        source: Arc<dyn ImageSource + 'a>,
        wcs_in: &Wcs,
        wcs_out: &Wcs,
        shape_out: &[usize],
        options: &Options,
        splines: SplinePrep<'_>,
    ) -> Result<Plan<'a>> {
        Plan::build_with(
            SourceRef::Shared(source),
            Geometry::Wcs { wcs_in, wcs_out },
            shape_out,
            options,
            splines,
        )
    }

    /// Like [`Plan::new`] with the input position of every output pixel given instead of two
    /// WCS (computed elsewhere, e.g. by astropy for a WCS this crate does not evaluate): the
    /// same interpolation, edge rule, NaN rule and footprint. The positions cover one output
    /// plane and serve every leading plane.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::pixel_transform::PositionTable;
    /// let image = Array2::from_shape_fn((4, 5), |(y, x)| (10 * y + x) as f64);
    /// let source = ArraySource::new(image.view().into_dyn()).unwrap();
    /// // A 2 x 2 output whose pixels see input (x, y) = (1, 1), (2.5, 1), (f64::NAN, ..), (4, 3).
    /// let table = PositionTable::new(
    ///     (2, 2),
    ///     vec![1.0, 2.5, f64::NAN, 4.0],
    ///     vec![1.0, 1.0, 0.0, 3.0],
    /// )
    /// .unwrap();
    /// let plan = Plan::from_positions(&source, table, &[2, 2], &Options::default()).unwrap();
    /// let (mut data, mut footprint) = (
    ///     ndarray::ArrayD::<f64>::zeros(vec![2, 2]),
    ///     ndarray::ArrayD::<f64>::zeros(vec![2, 2]),
    /// );
    /// plan.compute_into(data.view_mut(), footprint.view_mut()).unwrap();
    /// assert_eq!(data[[0, 0]], 11.0);
    /// assert_eq!(data[[0, 1]], 12.5);
    /// assert!(data[[1, 0]].is_nan() && footprint[[1, 0]] == 0.0);
    /// assert_eq!(data[[1, 1]], 34.0);
    /// ```
    pub fn from_positions(
        source: &'a dyn ImageSource,
        positions: PositionTable,
        shape_out: &[usize],
        options: &Options,
    ) -> Result<Plan<'a>> {
        Plan::build(
            SourceRef::Borrowed(source),
            Geometry::Positions(positions),
            shape_out,
            options,
        )
    }

    fn build(
        source: SourceRef<'a>,
        geometry: Geometry<'_>,
        shape_out: &[usize],
        options: &Options,
    ) -> Result<Plan<'a>> {
        Plan::build_with(source, geometry, shape_out, options, SplinePrep::Usual)
    }

    pub(super) fn build_with(
        source: SourceRef<'a>,
        geometry: Geometry<'_>,
        shape_out: &[usize],
        options: &Options,
        splines: SplinePrep<'_>,
    ) -> Result<Plan<'a>> {
        let shape_in = source.shape().to_vec();
        let planes_in = source.planes();
        let (mut coords, spectral, shape_out) =
            plan_geometry(geometry, &shape_in, shape_out, options)?;
        let planes_out = shape_out[..shape_out.len() - 2].iter().product();
        let lead_in = &shape_in[..shape_in.len() - 2];
        if let Some((by, bx)) = options.block_size
            && (by == 0 || bx == 0)
        {
            return Err(Error::InvalidArgument(format!(
                "block_size must be positive, got ({by}, {bx})"
            )));
        }
        if let Parallel::Threads(0) = options.parallel {
            return Err(Error::InvalidArgument(
                "the number of threads must be strictly positive".into(),
            ));
        }
        if let Some(tolerance) = options.approximate {
            if !(tolerance > 0.0 && tolerance.is_finite()) {
                return Err(Error::InvalidArgument(format!(
                    "the approximation tolerance must be a positive number of pixels, got {tolerance}"
                )));
            }
            coords = coords.with_approximation(tolerance);
        }
        let rounding = Rounding::new(options.precision, source.stored_type(), options.order);
        let plane_shape = source.plane_shape();
        let plan = Plan {
            source,
            coords,
            planes: planes_out,
            planes_in,
            lead_in: lead_in.to_vec(),
            spectral,
            plane_shape_in: plane_shape,
            shape_out,
            options: options.clone(),
            rounding,
            coefficients: OnceLock::new(),
            executor: OnceLock::new(),
            auto: OnceLock::new(),
            fresh_output_bytes: 0,
            stream_outputs: true,
            device_resident: OnceLock::new(),
        };
        // Usually the CPU computes the coefficients now (so their errors come from here)
        // unless a GPU may prefilter on the device. Coefficients made for worker processes,
        // or by their owner, are for workers that compute on the CPU.
        let parallel = plan.options.parallel;
        let made = match splines {
            _ if !options.order.needs_prefilter() => None,
            SplinePrep::Usual if !plan.gpu_may_prefilter() => {
                Some(plan.prefilter_all(parallel, Sharing::Private)?)
            }
            SplinePrep::Usual | SplinePrep::Deferred => None,
            SplinePrep::Export(export) => {
                let made = plan.prefilter_all(export.parallel(), Sharing::Shareable)?;
                export.push(&made)?;
                Some(made)
            }
            SplinePrep::Import(import) => Some(import.next_for(
                plan.planes_in,
                plan.plane_shape_in,
                plan.options.nan_policy == NanPolicy::Renormalize,
            )?),
        };
        if let Some(made) = made {
            let _ = plan.coefficients.set(Ok(made));
        }
        Ok(plan)
    }
}

//! Inputs made ready to sample: the output rectangle each covers, its plans (values and
//! weights), and its samples over a block of the output.

use std::ops::Range;
use std::sync::Arc;

use ndarray::{Array3, ArrayViewMut3, ArrayViewMutD};

use super::cache::Cache;
use super::combine::combine_blocks;
use super::input::{check_inputs, SharedInput};
use super::{Correction, MosaicOptions, Watch};
use crate::engine::blocks::Block;
use crate::engine::spline_share::SplinePrep;
use crate::engine::{Options, Parallel, Plan};
use crate::error::{Error, Result};
use crate::io::{ImageSource, RawPlane, StoredType};
use crate::pixel_transform::PixelTransform;
use crate::wcs::Wcs;

/// An image source with NaN values read as 0 (reproject's `np.nan_to_num` of weights).
struct NanAsZero<'a>(Arc<dyn ImageSource + 'a>);

impl ImageSource for NanAsZero<'_> {
    fn shape(&self) -> &[usize] {
        self.0.shape()
    }

    fn stored_type(&self) -> StoredType {
        self.0.stored_type()
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        self.0.read_window(plane, rows, cols, out)?;
        out.iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = 0.0);
        Ok(())
    }

    fn raw_plane(&self, _plane: usize) -> Option<RawPlane<'_>> {
        None
    }
}

/// The output rectangle (rows, columns) an input covers, as reproject finds it: 11 samples
/// along each edge of the input, mapped to output pixels, rounded outwards by half a pixel;
/// the whole output when any edge sample has no output position; `None` when it misses the
/// output.
///
/// ```
/// # use ndarray::Array2;
/// # use reproject::io::ArraySource;
/// # use reproject::mosaic::coadd::*;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix1: f64| Wcs::from_header_str(&format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// # let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// # let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// # let sa = ArraySource::new(a.view().into_dyn())?;
/// # let sb = ArraySource::new(b.view().into_dyn())?;
/// // Two 32 × 32 images, of 1 (output columns 10..42) and of 3 (columns 30..52).
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// // Its left edge, at output x = 29.5, rounds outwards to column 29.
/// let (rows, cols) = covered_rectangle((32, 32), &right, &out, (32, 52))?.unwrap();
/// assert_eq!((rows, cols), (0..32, 29..52));
/// let far = header(500.0)?; // 474 pixels to the left of the output
/// assert_eq!(covered_rectangle((32, 32), &far, &out, (32, 52))?, None);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn covered_rectangle(
    input_plane: (usize, usize),
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    plane_out: (usize, usize),
) -> Result<Option<(Range<usize>, Range<usize>)>> {
    let (ny, nx) = (input_plane.0 as f64, input_plane.1 as f64);
    let (oy, ox) = plane_out;
    let to_out = PixelTransform::new(wcs_in, wcs_out)?;
    let samples = 11;
    let along = |n: f64, k: usize| -0.5 + n * k as f64 / (samples - 1) as f64;
    let mut points = Vec::with_capacity(4 * samples);
    for k in 0..samples {
        for (x, y) in [
            (along(nx, k), -0.5),
            (along(nx, k), ny - 0.5),
            (-0.5, along(ny, k)),
            (nx - 0.5, along(ny, k)),
        ] {
            points.push((x, y));
        }
    }
    let mut mapped = Vec::with_capacity(points.len());
    for (x, y) in points {
        match to_out.map(x, y) {
            Some((px, py)) if px.is_finite() && py.is_finite() => mapped.push((px, py)),
            _ => return Ok(Some((0..oy, 0..ox))),
        }
    }
    let range = |values: &mut dyn Iterator<Item = f64>, n: usize| {
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let start = ((lo + 0.5).floor().max(0.0) as usize).min(n);
        let end = ((hi + 0.5).ceil().max(0.0) as usize).min(n);
        start..end
    };
    let cols = range(&mut mapped.iter().map(|p| p.0), ox);
    let rows = range(&mut mapped.iter().map(|p| p.1), oy);
    Ok((!rows.is_empty() && !cols.is_empty()).then_some((rows, cols)))
}

/// An input ready to sample: its plans (values, weights) and the output rectangle it covers.
pub(in crate::mosaic) struct Prepared<'a> {
    pub(in crate::mosaic) plan: Plan<'a>,
    /// The plan of its weights (NaN weights read as 0).
    pub(in crate::mosaic) weights: Option<Plan<'a>>,
    pub(super) rows: Range<usize>,
    pub(super) cols: Range<usize>,
    /// Its samples over the whole rectangle, when background matching reads them several times
    /// and they fit in the memory budget.
    pub(in crate::mosaic) cache: Option<Cache>,
}

/// One input's values over a block: NaN reset to 0, footprint × weights (0 where reset).
pub(in crate::mosaic) struct Sampled {
    pub(super) values: Array3<f64>,
    pub(super) footprint: Array3<f64>,
}

impl Prepared<'_> {
    /// The part of `block` this input covers.
    pub(in crate::mosaic) fn clip(&self, block: &Block) -> Option<Block> {
        let rows = block.rows.start.max(self.rows.start)..block.rows.end.min(self.rows.end);
        let cols = block.cols.start.max(self.cols.start)..block.cols.end.min(self.cols.end);
        (!rows.is_empty() && !cols.is_empty()).then_some(Block { rows, cols })
    }

    /// `block` relative to the input's rectangle.
    pub(super) fn local(&self, block: &Block) -> (Range<usize>, Range<usize>) {
        (
            block.rows.start - self.rows.start..block.rows.end - self.rows.start,
            block.cols.start - self.cols.start..block.cols.end - self.cols.start,
        )
    }

    /// Reprojects the input over `block`, as reproject prepares each input for combining.
    pub(super) fn compute(&self, block: &Block) -> Result<Sampled> {
        let shape = (self.plan.planes(), block.rows.len(), block.cols.len());
        let mut values = Array3::<f64>::zeros(shape);
        let mut footprint = Array3::<f64>::zeros(shape);
        self.compute_into(block, values.view_mut(), footprint.view_mut())?;
        Ok(Sampled { values, footprint })
    }

    /// [`Prepared::compute`] into views (planes, block rows, block columns): NaN values (or
    /// weights) become 0 with a zero footprint; the footprint is multiplied by the weight.
    pub(super) fn compute_into(
        &self,
        block: &Block,
        mut values: ArrayViewMut3<f64>,
        mut footprint: ArrayViewMut3<f64>,
    ) -> Result<()> {
        self.plan
            .compute_block(block, values.view_mut(), footprint.view_mut())?;
        let weights = match &self.weights {
            Some(w) => {
                let shape = (self.plan.planes(), block.rows.len(), block.cols.len());
                let mut weights = Array3::<f64>::zeros(shape);
                let mut unused = Array3::<f64>::zeros(shape);
                w.compute_block(block, weights.view_mut(), unused.view_mut())?;
                Some(weights)
            }
            None => None,
        };
        match weights {
            None => ndarray::Zip::from(&mut values)
                .and(&mut footprint)
                .for_each(|v, f| {
                    if v.is_nan() {
                        *v = 0.0;
                        *f = 0.0;
                    }
                }),
            Some(w) => ndarray::Zip::from(&mut values)
                .and(&mut footprint)
                .and(&w)
                .for_each(|v, f, &w| {
                    if v.is_nan() || w.is_nan() {
                        *v = 0.0;
                        *f = 0.0;
                    } else {
                        *f *= w;
                    }
                }),
        }
        Ok(())
    }
}

/// The inputs of a mosaic prepared once (their plans and output rectangles), whose windows
/// are then combined with corrections computed before (`super::plan::OpenedMosaic`).
pub(crate) struct PreparedInputs<'a>(Vec<(usize, Prepared<'a>)>);

impl<'a> PreparedInputs<'a> {
    /// Checks and prepares `inputs` for a mosaic of full output shape `shape`.
    pub(crate) fn new(
        inputs: &[SharedInput<'a, '_>],
        wcs_out: &Wcs,
        shape: &[usize],
        options: &MosaicOptions,
        splines: SplinePrep<'_>,
    ) -> Result<PreparedInputs<'a>> {
        check_inputs(inputs, shape, options)?;
        prepare(inputs, wcs_out, shape, options, splines).map(PreparedInputs)
    }

    /// Whether the plan of any input (or of its weights) is worth a GPU.
    pub(crate) fn worth_a_gpu(&self) -> bool {
        self.0.iter().any(|(_, p)| {
            std::iter::once(&p.plan)
                .chain(&p.weights)
                .any(|plan| plan.worth_a_gpu())
        })
    }

    /// Combines `window` (every leading plane) into `data` and `footprint` (the window's
    /// shape, C order), subtracting `corrections` (one per input).
    pub(crate) fn combine(
        &self,
        corrections: &[Correction],
        window: &Block,
        data: ArrayViewMutD<f64>,
        footprint: ArrayViewMutD<f64>,
        options: &MosaicOptions,
    ) -> Result<()> {
        let watch = Watch {
            progress: &|_, _| {},
            cancel: None,
        };
        combine_blocks(
            &self.0,
            corrections,
            data,
            footprint,
            window,
            options,
            watch,
        )
    }
}

/// The plans of the inputs that cover some of the output (full shape `shape`), with their
/// output rectangles and input indices.
pub(super) fn prepare<'a>(
    inputs: &[SharedInput<'a, '_>],
    wcs_out: &Wcs,
    shape: &[usize],
    options: &MosaicOptions,
    mut splines: SplinePrep<'_>,
) -> Result<Vec<(usize, Prepared<'a>)>> {
    let plane_out = (shape[shape.len() - 2], shape[shape.len() - 1]);
    // Each input reprojects on one thread per output block; blocks run in parallel.
    let reprojection = Options {
        parallel: Parallel::Serial,
        block_size: None,
        ..options.reprojection.clone()
    };
    let mut prepared = Vec::with_capacity(inputs.len());
    for (k, input) in inputs.iter().enumerate() {
        let input_plane = input.source.plane_shape();
        let Some((rows, cols)) = covered_rectangle(input_plane, input.wcs, wcs_out, plane_out)?
        else {
            continue;
        };
        // Each block is combined as soon as it is computed: its results stay in the caches.
        let plan_of = |source, wcs, splines: SplinePrep<'_>| {
            Plan::with_shared_source_and(source, wcs, wcs_out, shape, &reprojection, splines)
                .map(Plan::with_outputs_read_back)
                .map_err(|e| with_input(e, k))
        };
        let plan = plan_of(input.source.clone(), input.wcs, splines.reborrow())?;
        let weights = match &input.weights {
            Some((w, w_wcs)) => {
                let nan_as_zero: Arc<dyn ImageSource + 'a> = Arc::new(NanAsZero(w.clone()));
                let wcs = w_wcs.unwrap_or(input.wcs);
                Some(plan_of(nan_as_zero, wcs, splines.reborrow())?)
            }
            None => None,
        };
        prepared.push((
            k,
            Prepared {
                plan,
                weights,
                rows,
                cols,
                cache: None,
            },
        ));
    }
    Ok(prepared)
}

fn with_input(e: Error, k: usize) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("input {k}: {m}")),
        Error::ShapeMismatch(m) => Error::ShapeMismatch(format!("input {k}: {m}")),
        e => e,
    }
}

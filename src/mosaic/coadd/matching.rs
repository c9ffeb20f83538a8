//! Background matching: per overlapping pair of inputs, the median difference (or a fitted
//! plane) over the overlap, and from them one correction per input.

use std::ops::Range;

use rayon::prelude::*;

use super::cache::{cache_bytes_per_pixel, with_rows, Cache};
use super::input::{check_inputs, shared};
use super::prepared::{prepare, Prepared};
use super::{blocks_of, full_shape_of, MOSAIC_BLOCK};
use super::{Background, Correction, MosaicInput, MosaicOptions};
use crate::engine::spline_share::SplinePrep;
use crate::error::Result;
use crate::io::available_memory;
use crate::mosaic::background::{fit_plane, median, solve_corrections};
use crate::mosaic::pair_median::{pair_fit, row_of};
use crate::wcs::Wcs;

/// The background correction of every input of the mosaic (zero without matching), as
/// [`reproject_and_coadd`](super::reproject_and_coadd) computes and subtracts them: computed
/// once, then given to every [`MosaicPart`](super::MosaicPart) computed apart. `shape_out` as
/// for [`reproject_and_coadd`](super::reproject_and_coadd).
///
/// ```
/// use ndarray::{s, Array2};
/// use reproject::engine::blocks::Block;
/// use reproject::io::ArraySource;
/// use reproject::mosaic::coadd::*;
/// use reproject::wcs::Wcs;
/// let header = |crpix1: f64| Wcs::from_header_str(&format!(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix1}\nCRPIX2 = 16\n\
///      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"));
/// let (left, right, out) = (header(16.0)?, header(-4.0)?, header(26.0)?);
/// let (a, b) = (Array2::from_elem((32, 32), 1.0), Array2::from_elem((32, 32), 3.0));
/// let (sa, sb) = (ArraySource::new(a.view().into_dyn())?, ArraySource::new(b.view().into_dyn())?);
/// let inputs = [MosaicInput::new(&sa, &left), MosaicInput::new(&sb, &right)];
/// let options = MosaicOptions { background: Background::Offset, ..MosaicOptions::default() };
/// let corrections = background_corrections(&inputs, &out, &[32, 52], &options)?;
/// assert_eq!(corrections[1].offset - corrections[0].offset, 2.0);
/// // Columns 30..52 alone, with those corrections: the same pixels as the whole mosaic.
/// let part = MosaicPart {
///     window: Block {
///         rows: 0..32,
///         cols: 30..52,
///     },
///     corrections: Some(corrections),
/// };
/// let (mut data, mut footprint) = (
///     Array2::<f64>::zeros((32, 22)),
///     Array2::<f64>::zeros((32, 22)),
/// );
/// reproject_and_coadd_part(&inputs, &out, &[32, 52], &part,
///     data.view_mut().into_dyn(), footprint.view_mut().into_dyn(), &options)?;
/// let whole = reproject_and_coadd(&inputs, &out, &[32, 52], &options)?;
/// assert_eq!(data.into_dyn(), whole.data.slice(s![.., 30..52]).into_dyn());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn background_corrections(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    shape_out: &[usize],
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    let full = full_shape_of(inputs, shape_out)?;
    let n_inputs = inputs.len();
    let inputs = shared(inputs);
    check_inputs(&inputs, &full, options)?;
    let mut prepared = prepare(&inputs, wcs_out, &full, options, SplinePrep::Usual)?;
    corrections(&mut prepared, n_inputs, options)
}

/// One correction per input (of `n_inputs`): matched from the overlaps when the options ask
/// (the inputs' samples then cached, when they fit), else zero.
pub(super) fn corrections(
    prepared: &mut [(usize, Prepared)],
    n_inputs: usize,
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    if options.background == Background::None {
        return Ok(vec![Correction::default(); n_inputs]);
    }
    // Background matching reads every overlap twice or more: the inputs' samples are kept
    // when they fit in a quarter of the memory available (else recomputed).
    let bytes: u64 = prepared
        .iter()
        .map(|(_, p)| {
            (p.plan.planes() * p.rows.len() * p.cols.len() * cache_bytes_per_pixel(p)) as u64
        })
        .sum();
    if available_memory().is_none_or(|m| bytes <= m / 4) {
        let size = options
            .reprojection
            .block_size
            .unwrap_or((MOSAIC_BLOCK, MOSAIC_BLOCK));
        options.reprojection.parallel.install(|| {
            prepared
                .par_iter_mut()
                .try_for_each(|(_, p)| p.fill_cache(size))
        })??;
    }
    match_backgrounds(prepared, n_inputs, options.background, options)
}

/// One correction per input from the pairwise differences of the overlapping inputs.
fn match_backgrounds(
    prepared: &[(usize, Prepared)],
    n_inputs: usize,
    mode: Background,
    options: &MosaicOptions,
) -> Result<Vec<Correction>> {
    let n = prepared.len();
    let size = options
        .reprojection
        .block_size
        .unwrap_or((MOSAIC_BLOCK, MOSAIC_BLOCK));
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    // Per pair: the differences (x, y, first - second) where both have data.
    let fits = options.reprojection.parallel.install(|| {
        pairs
            .par_iter()
            .map(|&(a, b)| -> Result<Option<(f64, f64, f64)>> {
                let (pa, pb) = (&prepared[a].1, &prepared[b].1);
                let rows = pa.rows.start.max(pb.rows.start)..pa.rows.end.min(pb.rows.end);
                let cols = pa.cols.start.max(pb.cols.start)..pa.cols.end.min(pb.cols.end);
                if rows.is_empty() || cols.is_empty() {
                    return Ok(None);
                }
                if pa.cache.is_some() && pb.cache.is_some() {
                    return Ok(cached_pair_fit(pa, pb, &rows, &cols, mode));
                }
                let plane = mode == Background::Plane;
                let (mut points, mut differences) = (Vec::new(), Vec::new());
                for block in blocks_of(&rows, &cols, size) {
                    let (sa, sb) = (pa.sample(&block)?, pb.sample(&block)?);
                    let width = block.cols.len();
                    let pixels = block.rows.len() * width;
                    let pairs = sa
                        .values
                        .iter()
                        .zip(&sa.footprint)
                        .zip(sb.values.iter().zip(&sb.footprint));
                    for (i, ((va, fa), (vb, fb))) in pairs.enumerate() {
                        if *fa > 0.0 && *fb > 0.0 {
                            if plane {
                                let p = i % pixels;
                                let x = (block.cols.start + p % width) as f64;
                                let y = (block.rows.start + p / width) as f64;
                                points.push((x, y, va - vb));
                            } else {
                                differences.push(va - vb);
                            }
                        }
                    }
                }
                Ok(if plane {
                    fit_plane(&points)
                } else {
                    let m = median(&mut differences);
                    m.is_finite().then_some((m, 0.0, 0.0))
                })
            })
            .collect::<Result<Vec<_>>>()
    })??;
    // One least-squares system per coefficient (offset, x slope, y slope).
    let mut solved = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for (c, out) in solved.iter_mut().enumerate() {
        let mut matrix = vec![vec![f64::NAN; n]; n];
        for (&(a, b), fit) in pairs.iter().zip(&fits) {
            if let Some(f) = fit {
                let v = [f.0, f.1, f.2][c];
                matrix[a][b] = v;
                matrix[b][a] = -v;
            }
        }
        *out = solve_corrections(&matrix);
    }
    let mut corrections = vec![Correction::default(); n_inputs];
    for (p, (k, _)) in prepared.iter().enumerate() {
        corrections[*k] = Correction {
            offset: solved[0][p],
            slope_x: solved[1][p],
            slope_y: solved[2][p],
        };
    }
    if let Some(r) = options.background_reference {
        let reference = corrections[r];
        for c in &mut corrections {
            c.offset -= reference.offset;
            c.slope_x -= reference.slope_x;
            c.slope_y -= reference.slope_y;
        }
    }
    Ok(corrections)
}

/// The pair's offset (median difference, numpy's) or plane from the cached samples
/// ([`pair_fit`] over rows of the two caches).
fn cached_pair_fit(
    pa: &Prepared,
    pb: &Prepared,
    rows: &Range<usize>,
    cols: &Range<usize>,
    mode: Background,
) -> Option<(f64, f64, f64)> {
    let (Some(ca), Some(cb)) = (&pa.cache, &pb.cache) else {
        return None;
    };
    let planes = pa.plan.planes();
    let (xa, xb, w) = (
        cols.start - pa.cols.start,
        cols.start - pb.cols.start,
        cols.len(),
    );
    let (ya, yb) = (pa.rows.start, pb.rows.start);
    with_rows!(ca, |row_a| with_rows!(cb, |row_b| pair_fit(
        planes,
        rows,
        cols,
        move |p, y| row_a(p, y - ya, xa, w),
        move |p, y| row_b(p, y - yb, xb, w),
        mode == Background::Plane
    )))
}

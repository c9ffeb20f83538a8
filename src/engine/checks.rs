//! What a plan is checked against before anything is computed: reproject's rules for the WCS
//! pair, the shapes, and the geometry (coordinate map, interpolation beyond the plane, full
//! output shape) that [`Plan`](super::Plan)'s constructors share.

use std::sync::Arc;

use super::blocks::Block;
use super::coords::CoordinateMap;
use super::spectral::SpectralAxis;
use super::{Geometry, Options, Precision};
use crate::error::{Error, Result};
use crate::interp::NanPolicy;
use crate::pixel_transform::{PixelTransform, PositionTable};
use crate::wcs::distortion::sip::SipInversion;
use crate::wcs::distortion::GridSchedule;
use crate::wcs::plane::{world_conversions, WorldClass};
use crate::wcs::{spectral_kind, Wcs};

/// The full output shape, checked against the input as reproject does.
pub(super) fn check_shapes(
    shape_in: &[usize],
    shape_out: &[usize],
    leading_may_differ: bool,
) -> Result<Vec<usize>> {
    if shape_in.len() < 2 {
        return Err(Error::ShapeMismatch(format!(
            "too few dimensions in input data: {shape_in:?}"
        )));
    }
    if shape_out.len() < 2 {
        return Err(Error::ShapeMismatch(format!(
            "too few dimensions in shape_out: {shape_out:?}"
        )));
    }
    if shape_in.contains(&0) {
        return Err(Error::ShapeMismatch(format!(
            "empty input shape {shape_in:?}"
        )));
    }
    if shape_out.contains(&0) {
        return Err(Error::ShapeMismatch(format!(
            "empty output shape {shape_out:?}"
        )));
    }
    let lead = &shape_in[..shape_in.len() - 2];
    let full = if shape_out.len() == 2 {
        lead.iter().chain(shape_out).copied().collect()
    } else {
        if shape_out.len() != shape_in.len() {
            return Err(Error::ShapeMismatch(format!(
                "number of dimensions in input {shape_in:?} and output {shape_out:?} should match"
            )));
        }
        if !leading_may_differ && &shape_out[..shape_out.len() - 2] != lead {
            return Err(Error::ShapeMismatch(format!(
                "dimensions to be looped over must match exactly: input {shape_in:?}, output \
                 {shape_out:?}"
            )));
        }
        shape_out.to_vec()
    };
    Ok(full)
}

/// What a plan needs of its geometry: the coordinate map of the output plane, the
/// interpolation along the axes beyond it, and the full output shape. Checks the WCS pair
/// (reproject's rules and the engine's own limits) and the shapes.
pub(super) fn plan_geometry(
    geometry: Geometry<'_>,
    shape_in: &[usize],
    shape_out: &[usize],
    options: &Options,
) -> Result<(CoordinateMap, Option<SpectralAxis>, Vec<usize>)> {
    if let Geometry::Wcs { wcs_in, wcs_out } = geometry {
        check_wcs(wcs_in, wcs_out)?;
    }
    let lead_in = &shape_in[..shape_in.len().saturating_sub(2)];
    let lead_out = match shape_out.len() {
        0..=2 => lead_in,
        n => &shape_out[..n - 2],
    };
    let spectral = match geometry {
        Geometry::Wcs { wcs_in, wcs_out } => {
            // Identical extra axes are interpolated as scipy does (carrying NaN along them), as
            // reproject does, unless the GPU was asked for: `Cuda` plans (whichever executor
            // runs them) and the engine's own NaN renormalisation go plane by plane, which the
            // kernels cover. `Auto` keeps reproject's values, so such a plan runs on the CPU.
            let scipy_axes = options.nan_policy != NanPolicy::Renormalize
                && options.backend != crate::gpu::Backend::Cuda;
            SpectralAxis::new(
                wcs_in,
                wcs_out,
                lead_in,
                lead_out,
                options.order,
                scipy_axes,
            )?
        }
        Geometry::Positions(_) => None,
    };
    if spectral.is_some() && options.nan_policy == NanPolicy::Renormalize {
        return Err(Error::Unsupported(
            "nan_policy Renormalize is not available when the third axis is interpolated too"
                .into(),
        ));
    }
    let shape_out = check_shapes(shape_in, shape_out, spectral.is_some())?;
    let n = shape_in.len();
    let plane_in = (shape_in[n - 2], shape_in[n - 1]);
    let coords = match geometry {
        Geometry::Wcs { wcs_in, wcs_out } => {
            // reproject inverts SIP with astropy's default tolerance (1e-4 px, 20 iterations);
            // its input positions, and so its values, are that close to the exact inverse.
            let (wcs_in, wcs_out) = match options.precision {
                Precision::Reproject => (
                    wcs_in.clone().with_sip_inversion(SipInversion::astropy()),
                    wcs_out.clone().with_sip_inversion(SipInversion::astropy()),
                ),
                Precision::Float64 => (wcs_in.clone(), wcs_out.clone()),
            };
            CoordinateMap::new(&wcs_out, &wcs_in, options.roundtrip_coords, plane_in)?
        }
        Geometry::Positions(table) => {
            let n = shape_out.len();
            let plane_out = (shape_out[n - 2], shape_out[n - 1]);
            if table.shape() != plane_out {
                return Err(Error::ShapeMismatch(format!(
                    "input positions for an output plane of {:?}, the output plane is \
                     {plane_out:?}",
                    table.shape()
                )));
            }
            CoordinateMap::from_transform(PixelTransform::from_positions(table), plane_in)
        }
    };
    Ok((coords, spectral, shape_out))
}

/// Whether the engine can reproject data of `shape_in` from `wcs_in` onto `wcs_out` with
/// `shape_out` (see [`Plan::new`](super::Plan::new)): the checks and transforms of a plan without
/// its data, so a caller can learn early that a pair is refused, e.g. as not implemented.
///
/// ```
/// use reproject::engine::{check_plan, Options};
/// use reproject::wcs::Wcs;
/// let sky =
///     Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")
///         .unwrap();
/// let pixels = Wcs::from_header_str("CTYPE1 = 'PIXX'\nCTYPE2 = 'PIXY'\n").unwrap();
/// assert!(check_plan(&sky, &sky, &[10, 10], &[5, 5], &Options::default()).is_ok());
/// assert!(check_plan(&sky, &pixels, &[10, 10], &[5, 5], &Options::default()).is_err());
/// ```
pub fn check_plan(
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    shape_in: &[usize],
    shape_out: &[usize],
    options: &Options,
) -> Result<()> {
    plan_geometry(
        Geometry::Wcs { wcs_in, wcs_out },
        shape_in,
        shape_out,
        options,
    )
    .map(|_| ())
}

/// The input position (0-based `x`, `y`) of every pixel of an output plane of `plane_out`
/// (rows, columns), as a plan computes them for its blocks: out of the input plane of
/// `plane_in`, and dropped by the round-trip check, NaN. For a caller that feeds them to
/// [`Plan::from_positions`](super::Plan::from_positions), e.g. a binding whose other paths
/// take positions; computed in bands of rows on the current rayon pool.
///
/// ```
/// use reproject::engine::{input_positions, Options};
/// use reproject::wcs::Wcs;
/// let header = |crpix: f64| format!(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
///      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// let (wcs_in, wcs_out) = (Wcs::from_header_str(&header(16.0))?, Wcs::from_header_str(&header(15.0))?);
/// let table = input_positions(&wcs_in, &wcs_out, (32, 32), (20, 24), &Options::default())?;
/// assert_eq!(table.shape(), (20, 24));
/// let (xs, ys) = table.positions();
/// // Output row 7, column 3 sees input column 4, row 7.
/// assert!((xs[7 * 24 + 3] - 4.0).abs() < 1e-9 && (ys[7 * 24 + 3] - 7.0).abs() < 1e-9);
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn input_positions(
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    plane_in: (usize, usize),
    plane_out: (usize, usize),
    options: &Options,
) -> Result<PositionTable> {
    let emulate = options.precision == Precision::Reproject
        && wcs_in
            .celestial()
            .ok()
            .and_then(|c| c.distortion())
            .is_some_and(|d| d.iterates());
    if !emulate {
        return positions_once(wcs_in, wcs_out, plane_in, plane_out, options);
    }
    // reproject inverts the input's distortion for the whole grid in one astropy call:
    // find that call's schedule (GridSchedule), then every point is astropy's.
    let (mut grid, mut pass) = (Arc::new(GridSchedule::first()), 1);
    loop {
        let scheduled = wcs_in.clone().with_grid_schedule(grid.clone());
        let table = positions_once(&scheduled, wcs_out, plane_in, plane_out, options)?;
        match grid.next() {
            Some(next) if pass < MAX_GRID_PASSES => (grid, pass) = (Arc::new(next), pass + 1),
            _ => return Ok(table),
        }
    }
}

/// Passes of [`input_positions`] to find astropy's schedule: each finds the call's slowest
/// point or an earlier divergence, and astropy's call stops after 20 iterations.
const MAX_GRID_PASSES: usize = 8;

/// [`input_positions`] with each point inverted as the WCS says.
fn positions_once(
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    plane_in: (usize, usize),
    plane_out: (usize, usize),
    options: &Options,
) -> Result<PositionTable> {
    use rayon::prelude::*;
    let (coords, _, _) = plan_geometry(
        Geometry::Wcs { wcs_in, wcs_out },
        &[plane_in.0, plane_in.1],
        &[plane_out.0, plane_out.1],
        options,
    )?;
    let (ny, nx) = plane_out;
    let (mut xs, mut ys) = (vec![f64::NAN; ny * nx], vec![f64::NAN; ny * nx]);
    if nx > 0 {
        let band = ny.div_ceil(4 * rayon::current_num_threads().max(1)).max(8);
        xs.par_chunks_mut(band * nx)
            .zip(ys.par_chunks_mut(band * nx))
            .enumerate()
            .for_each(|(i, (x, y))| {
                let rows = i * band..i * band + x.len() / nx;
                coords.block_coords(&Block { rows, cols: 0..nx }, x, y);
            });
    }
    PositionTable::new(plane_out, xs, ys)
}

/// reproject's checks of the two WCS (`_validate_wcs`), then the engine's own limits.
pub(super) fn check_wcs(wcs_in: &Wcs, wcs_out: &Wcs) -> Result<()> {
    let (pi, po) = (wcs_in.params(), wcs_out.params());
    let both_celestial = match (wcs_in.has_celestial(), wcs_out.has_celestial()) {
        (true, true) => true,
        (true, false) => {
            return Err(Error::InvalidArgument(
                "input WCS has celestial components but output WCS does not".into(),
            ))
        }
        (false, true) => {
            return Err(Error::InvalidArgument(
                "output WCS has celestial components but input WCS does not".into(),
            ))
        }
        (false, false) => false,
    };
    // A celestial 2-D WCS may describe the plane of a cube's input or output (the leading
    // axes broadcast); otherwise the dimensions agree, as reproject requires.
    let celestial_plane = both_celestial && (pi.naxis() == 2 || po.naxis() == 2);
    if pi.naxis() != po.naxis() && !celestial_plane {
        return Err(Error::InvalidArgument(
            "number of dimensions in input and output WCS should match".into(),
        ));
    }
    // WCSLIB's spectral axis: the first one of a spectral type (compared between WCS of the
    // same dimension; a 2-D WCS of a cube's plane has none).
    let spectral = |w: &Wcs| (0..w.naxis()).find(|&i| WorldClass::of(w, i) == WorldClass::Spectral);
    let spectral_axes = match pi.naxis() == po.naxis() {
        true => (spectral(wcs_in), spectral(wcs_out)),
        false => (None, None),
    };
    match spectral_axes {
        (Some(i), Some(o)) => {
            let (ti, to) = (&pi.ctype[i], &po.ctype[o]);
            if spectral_kind(ti) != spectral_kind(to) {
                return Err(Error::InvalidArgument(format!(
                    "the input ({ti}) and output ({to}) spectral coordinate types are not \
                     equivalent"
                )));
            }
        }
        (Some(_), None) => {
            return Err(Error::InvalidArgument(
                "input WCS has a spectral component but output WCS does not".into(),
            ))
        }
        (None, Some(_)) => {
            return Err(Error::InvalidArgument(
                "output WCS has a spectral component but input WCS does not".into(),
            ))
        }
        (None, None) => {}
    }
    if pi.naxis() == po.naxis() {
        // astropy's pixel_to_pixel: world axes of the same kinds, units that convert.
        world_conversions(wcs_out, wcs_in)?;
    }
    for (p, which) in [(pi, "input"), (po, "output")] {
        if let Some((lng, lat)) = p.celestial_axes()
            && lng.max(lat) > 1
        {
            return Err(Error::Unsupported(format!(
                "the {which} WCS's celestial axes must be its first two axes"
            )));
        }
    }
    Ok(())
}

//! `_core.reproject_and_coadd`: the core's mosaic ([`reproject::mosaic::coadd`]) on numpy
//! arrays and FITS header text.
//!
//! ```text
//! numpy arrays (any dtype, byte order, strides) ──borrowed bytes──▶ RawSource ┐
//! weights (same)                                ──borrowed bytes──▶ RawSource ├▶ MosaicInput
//! header text per input (and per weights)       ──Wcs::from_header_str──▶ Wcs ┘
//!     └─ GIL released ─▶ reproject_and_coadd_cancellable (blocks in parallel; Ctrl-C
//!        stops mosaics of 4M output pixels or more: errors::run_for_size), or
//!        reproject_and_coadd_part (one window, the corrections given: a dask block)
//!        ─▶ the caller's float64 arrays, or fresh ones moved into numpy
//! ```

use numpy::PyUntypedArray;
use pyo3::prelude::*;
use reproject::engine::blocks::Block;
use reproject::io::{ImageSource, RawSource};
use reproject::mosaic::coadd::{
    background_corrections as core_background_corrections, reproject_and_coadd_cancellable,
    reproject_and_coadd_part, Background, Combine, Correction, MosaicInput, MosaicOptions,
    MosaicPart,
};
use reproject::wcs::Wcs;
use std::sync::atomic::AtomicBool;

use crate::arrays::{borrow_bytes, BorrowedBytes};
use crate::errors::{guard_panics, new_err, run_detached, run_for_size, to_pyerr, Kind};
use crate::options::{OptionArgs, OrderArg};
use crate::outputs::OutputArrays;
use crate::{full_shape, parse_wcs};

/// `background=`: 'none', 'offset' or 'plane'.
fn parse_background(py: Python<'_>, background: &str) -> PyResult<Background> {
    match background {
        "none" => Ok(Background::None),
        "offset" => Ok(Background::Offset),
        "plane" => Ok(Background::Plane),
        other => Err(new_err(
            py,
            Kind::InvalidArgument,
            format!("background should be 'none', 'offset' or 'plane', got '{other}'"),
        )),
    }
}

/// The mosaic's inputs (numpy arrays read in place, header texts parsed), given to `f`.
fn with_inputs<'py, R>(
    py: Python<'py>,
    arrays: &[Bound<'py, PyUntypedArray>],
    headers_in: &[String],
    weights: Option<Vec<Option<Bound<'py, PyUntypedArray>>>>,
    weight_headers: Option<Vec<Option<String>>>,
    f: impl FnOnce(&[MosaicInput], Option<&[usize]>) -> PyResult<R>,
) -> PyResult<R> {
    let n = arrays.len();
    if headers_in.len() != n {
        return Err(new_err(
            py,
            Kind::InvalidArgument,
            format!("{n} arrays but {} input headers", headers_in.len()),
        ));
    }
    let weights = weights.unwrap_or_else(|| vec![None; n]);
    let weight_headers = weight_headers.unwrap_or_else(|| vec![None; n]);
    if weights.len() != n || weight_headers.len() != n {
        return Err(new_err(
            py,
            Kind::InvalidArgument,
            format!(
                "{n} arrays but {} weights and {} weight headers",
                weights.len(),
                weight_headers.len()
            ),
        ));
    }
    let wcs_in = headers_in
        .iter()
        .enumerate()
        .map(|(k, h)| parse_wcs(py, h, &format!("input {k}")))
        .collect::<PyResult<Vec<Wcs>>>()?;
    let wcs_weights = weight_headers
        .iter()
        .enumerate()
        .map(|(k, h)| {
            h.as_deref()
                .map(|h| parse_wcs(py, h, &format!("weights {k}")))
                .transpose()
        })
        .collect::<PyResult<Vec<Option<Wcs>>>>()?;
    // Borrowed, never copied: the arrays stay alive (and their buffers in place) while the
    // caller holds them.
    let bytes = arrays
        .iter()
        .map(borrow_bytes)
        .collect::<PyResult<Vec<BorrowedBytes>>>()?;
    let sources = bytes
        .iter()
        .map(|b| b.source(py))
        .collect::<PyResult<Vec<RawSource>>>()?;
    let weight_bytes = weights
        .iter()
        .map(|w| w.as_ref().map(borrow_bytes).transpose())
        .collect::<PyResult<Vec<Option<BorrowedBytes>>>>()?;
    let weight_sources = weight_bytes
        .iter()
        .map(|w| w.as_ref().map(|b| b.source(py)).transpose())
        .collect::<PyResult<Vec<Option<RawSource>>>>()?;
    let inputs: Vec<MosaicInput> = (0..n)
        .map(|k| MosaicInput {
            source: &sources[k] as &dyn ImageSource,
            wcs: &wcs_in[k],
            weights: weight_sources[k]
                .as_ref()
                .map(|w| (w as &dyn ImageSource, wcs_weights[k].as_ref())),
        })
        .collect();
    f(&inputs, bytes.first().map(|b| b.shape.as_slice()))
}

/// `combine=` with the clipped mean's `clip=(sigma, ampfrac)`.
fn parse_combine(py: Python<'_>, combine: &str, (sigma, ampfrac): (f64, f64)) -> PyResult<Combine> {
    match combine.parse().map_err(|e| to_pyerr(py, e))? {
        Combine::Clipped { .. } => {
            if !(sigma.is_finite() && sigma >= 0.0 && ampfrac.is_finite() && ampfrac >= 0.0) {
                return Err(new_err(
                    py,
                    Kind::InvalidArgument,
                    format!("clip_sigma and clip_ampfrac must be finite and non-negative, got {sigma}, {ampfrac}"),
                ));
            }
            Ok(Combine::Clipped { sigma, ampfrac })
        }
        other => Ok(other),
    }
}

/// The mosaic options of the keyword arguments (`clip`: the clipped mean's sigma and
/// ampfrac).
fn mosaic_options(
    py: Python<'_>,
    (combine, clip): (&str, (f64, f64)),
    background: &str,
    background_reference: Option<usize>,
    blank_pixel_value: f64,
    reprojection: OptionArgs,
) -> PyResult<MosaicOptions> {
    Ok(MosaicOptions {
        reprojection: reprojection.options(py)?,
        combine: parse_combine(py, combine, clip)?,
        background: parse_background(py, background)?,
        background_reference,
        blank_pixel_value,
    })
}

/// Reprojects every input onto the WCS of ``header_out`` and combines them, as astropy
/// reproject's ``reproject_and_coadd`` with ``reproject_interp`` (the core's
/// ``reproject::mosaic::coadd``): each input reprojected over the output rectangle its edges
/// cover, weighted by its footprint (times its reprojected weights), background-matched if
/// asked, then combined, block by block in parallel.
///
/// Parameters
/// ----------
/// arrays : list of numpy.ndarray
///     The inputs, at least 2-D, any of f4 f8 i1 u1 b1 i2 u2 i4 u4 i8 u8 in either byte order,
///     any strides (read in place, never copied). Leading dimensions are independent planes,
///     the same for every input.
/// headers_in : list of str
///     The FITS header text of each input's WCS.
/// header_out : str
///     The FITS header text of the output WCS.
/// shape_out : sequence of int
///     (rows, columns), or the full shape with the inputs' leading dimensions.
/// weights : list of (numpy.ndarray or None), optional
///     Per-input weights of the input's shape (NaN counts as 0); None for an input without.
/// weight_headers : list of (str or None), optional
///     The header text of each weights array's WCS; None: the input's.
/// combine : str
///     'mean' (default), 'sum', 'first', 'last', 'min', 'max', 'median' or 'clipped'.
/// clip_sigma, clip_ampfrac : float
///     The clipped mean's rejection threshold in standard deviations (default 4) and extra
///     tolerance as a fraction of the absolute median (default 0.3), as SWarp's CLIP_SIGMA and
///     CLIP_AMPFRAC.
/// background : str
///     'none' (default), 'offset' (one offset per input, reproject's
///     ``match_background=True``) or 'plane' (a plane per input).
/// background_reference : int, optional
///     The input whose correction is zero (None: the corrections average to zero).
/// blank_pixel_value : float
///     The value of output pixels no input covers (default 0).
/// order, roundtrip_coords, nan_policy, precision, device
///     As for :func:`reproject_interp`, for every input and its weights.
/// block_size : (int, int) or None
///     The output block (rows, columns); None: the core's choice. Never changes a value.
/// threads : int
///     1 (default): serial; 0: every core; n: n threads. Never changes a value.
/// output_array, output_footprint : numpy.ndarray, optional
///     C-contiguous native float64 arrays of the full output shape, overwritten and returned.
/// progress : callable, optional
///     Called as ``progress(done, total)`` (with the GIL, from any thread) as output blocks
///     are combined; its exceptions are reported as unraisable and otherwise ignored (not
///     called for a ``window``).
/// window : ((int, int), (int, int)), optional
///     Only this part of the output: ``((row_start, row_stop), (col_start, col_stop))`` of
///     the output plane (every leading plane); the arrays then have the part's shape, and its
///     pixels are bit-identical to the same pixels of the whole mosaic.
/// corrections : list of (float, float, float), optional
///     The background correction of each input (from :func:`background_corrections`),
///     subtracted instead of matching the backgrounds here (e.g. for parts computed apart).
///
/// Returns
/// -------
/// (data, footprint, corrections)
///     float64 arrays of the full output shape (or the window's), and the background
///     correction ``(offset, slope_x, slope_y)`` subtracted from each input (zeros without
///     matching).
#[pyfunction]
#[pyo3(signature = (arrays, headers_in, header_out, shape_out, *, weights=None,
    weight_headers=None, combine="mean", clip_sigma=4.0, clip_ampfrac=0.3, background="none",
    background_reference=None,
    blank_pixel_value=0.0, order=None, roundtrip_coords=true, block_size=None, threads=1,
    nan_policy="propagate", precision="reproject", output_array=None, output_footprint=None,
    device="auto", progress=None, window=None, corrections=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn reproject_and_coadd<'py>(
    py: Python<'py>,
    arrays: Vec<Bound<'py, PyUntypedArray>>,
    headers_in: Vec<String>,
    header_out: &str,
    shape_out: Vec<usize>,
    weights: Option<Vec<Option<Bound<'py, PyUntypedArray>>>>,
    weight_headers: Option<Vec<Option<String>>>,
    combine: &str,
    clip_sigma: f64,
    clip_ampfrac: f64,
    background: &str,
    background_reference: Option<usize>,
    blank_pixel_value: f64,
    order: Option<OrderArg>,
    roundtrip_coords: bool,
    block_size: Option<(usize, usize)>,
    threads: usize,
    nan_policy: &str,
    precision: &str,
    output_array: Option<Bound<'py, PyAny>>,
    output_footprint: Option<Bound<'py, PyAny>>,
    device: &str,
    progress: Option<Py<PyAny>>,
    window: Option<Window>,
    corrections: Option<Vec<(f64, f64, f64)>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Vec<(f64, f64, f64)>)> {
    guard_panics(|| {
        let reprojection = OptionArgs {
            block_size,
            threads,
            device,
            ..OptionArgs::serial(order, roundtrip_coords, nan_policy, precision)
        };
        let options = mosaic_options(
            py,
            (combine, (clip_sigma, clip_ampfrac)),
            background,
            background_reference,
            blank_pixel_value,
            reprojection,
        )?;
        let wcs_out = parse_wcs(py, header_out, "output")?;
        with_inputs(
            py,
            &arrays,
            &headers_in,
            weights,
            weight_headers,
            |inputs, first| {
                let shape = match first {
                    Some(shape_in) => full_shape(shape_in, &shape_out),
                    None => shape_out.clone(),
                };
                let plane = match shape.as_slice() {
                    [.., ny, nx] => (*ny, *nx),
                    _ => (0, 0),
                };
                let part = part_of(window, corrections, plane);
                // A part's arrays: the leading dimensions, then the window's rows and columns.
                let shape = match &part {
                    Some(p) if shape.len() >= 2 => {
                        let mut s = shape[..shape.len() - 2].to_vec();
                        s.extend([p.window.rows.len(), p.window.cols.len()]);
                        s
                    }
                    _ => shape,
                };
                let mut outputs = OutputArrays::<f64>::from_arguments(
                    py,
                    output_array.as_ref(),
                    output_footprint.as_ref(),
                    &shape,
                )?;
                let [data_view, fp_view] = outputs.views(py)?;
                let report = |done: usize, total: usize| {
                    if let Some(callback) = &progress {
                        Python::attach(|py| {
                            if let Err(e) = callback.call1(py, (done, total)) {
                                e.write_unraisable(py, Some(callback.bind(py)));
                            }
                        });
                    }
                };
                // A whole mosaic of many pixels stops on Ctrl-C (see `run_for_size`).
                let corrections = match &part {
                    None => run_for_size(py, shape.iter().product(), |cancel| {
                        let never = AtomicBool::new(false);
                        let cancel = cancel.unwrap_or(&never);
                        reproject_and_coadd_cancellable(
                            inputs, &wcs_out, data_view, fp_view, &options, &report, cancel,
                        )
                    })?,
                    Some(part) => run_detached(py, || {
                        reproject_and_coadd_part(
                            inputs, &wcs_out, &shape_out, part, data_view, fp_view, &options,
                        )
                    })?,
                };
                let (data, footprint) = outputs.into_numpy(py)?;
                Ok((data, footprint, as_tuples(&corrections)))
            },
        )
    })
}

/// `((row_start, row_stop), (col_start, col_stop))` of the output plane.
type Window = ((usize, usize), (usize, usize));

/// The part of the mosaic the keyword arguments ask for: a window, given corrections, both
/// (corrections alone: the whole output `plane` with them), or neither (`None`: the whole
/// mosaic).
fn part_of(
    window: Option<Window>,
    corrections: Option<Vec<(f64, f64, f64)>>,
    (ny, nx): (usize, usize),
) -> Option<MosaicPart> {
    let corrections = corrections.map(|c| {
        c.into_iter()
            .map(|(offset, slope_x, slope_y)| Correction {
                offset,
                slope_x,
                slope_y,
            })
            .collect()
    });
    let window = match window {
        Some(((r0, r1), (c0, c1))) => Block {
            rows: r0..r1.max(r0),
            cols: c0..c1.max(c0),
        },
        None if corrections.is_some() => Block {
            rows: 0..ny,
            cols: 0..nx,
        },
        None => return None,
    };
    Some(MosaicPart {
        window,
        corrections,
    })
}

fn as_tuples(corrections: &[Correction]) -> Vec<(f64, f64, f64)> {
    corrections
        .iter()
        .map(|c| (c.offset, c.slope_x, c.slope_y))
        .collect()
}

/// The background correction ``(offset, slope_x, slope_y)`` of every input (zeros with
/// ``background='none'``), as :func:`reproject_and_coadd` computes and subtracts them: once
/// for a mosaic computed in parts (``window=``), each part then given them
/// (``corrections=``). The arguments are :func:`reproject_and_coadd`'s.
#[pyfunction]
#[pyo3(signature = (arrays, headers_in, header_out, shape_out, *, weights=None,
    weight_headers=None, combine="mean", clip_sigma=4.0, clip_ampfrac=0.3, background="none",
    background_reference=None,
    blank_pixel_value=0.0, order=None, roundtrip_coords=true, block_size=None, threads=1,
    nan_policy="propagate", precision="reproject", device="auto"))]
#[allow(clippy::too_many_arguments)]
pub fn background_corrections<'py>(
    py: Python<'py>,
    arrays: Vec<Bound<'py, PyUntypedArray>>,
    headers_in: Vec<String>,
    header_out: &str,
    shape_out: Vec<usize>,
    weights: Option<Vec<Option<Bound<'py, PyUntypedArray>>>>,
    weight_headers: Option<Vec<Option<String>>>,
    combine: &str,
    clip_sigma: f64,
    clip_ampfrac: f64,
    background: &str,
    background_reference: Option<usize>,
    blank_pixel_value: f64,
    order: Option<OrderArg>,
    roundtrip_coords: bool,
    block_size: Option<(usize, usize)>,
    threads: usize,
    nan_policy: &str,
    precision: &str,
    device: &str,
) -> PyResult<Vec<(f64, f64, f64)>> {
    guard_panics(|| {
        let reprojection = OptionArgs {
            block_size,
            threads,
            device,
            ..OptionArgs::serial(order, roundtrip_coords, nan_policy, precision)
        };
        let options = mosaic_options(
            py,
            (combine, (clip_sigma, clip_ampfrac)),
            background,
            background_reference,
            blank_pixel_value,
            reprojection,
        )?;
        let wcs_out = parse_wcs(py, header_out, "output")?;
        with_inputs(
            py,
            &arrays,
            &headers_in,
            weights,
            weight_headers,
            |inputs, _| {
                let corrections = run_detached(py, || {
                    core_background_corrections(inputs, &wcs_out, &shape_out, &options)
                })?;
                Ok(as_tuples(&corrections))
            },
        )
    })
}

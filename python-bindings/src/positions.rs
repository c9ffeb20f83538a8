//! `_core.input_positions`: the engine's input position of every output pixel, for a pair of
//! WCS whose lookup tables (CPDIS, D2IM) come with them as arrays.
//!
//! ```text
//! header text + astropy's DistortionLookupTable arrays ──Wcs::with_lookup_tables──▶ Wcs
//!        └─ GIL released ─▶ engine::input_positions ─▶ two numpy planes (x, y)
//! ```
//!
//! The tables live in other HDUs of a FITS file, beside the header; astropy has read them
//! (`WCS(header, fobj)`). The positions then feed `reproject_positions` (and every path that
//! takes positions: dask results, lazy refusals, the CPU-only rule), as astropy's positions
//! did.

use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use reproject::wcs::distortion::{LookupTable, LookupTables};
use reproject::wcs::Wcs;

use crate::errors::{guard_panics, new_err, run_detached, to_pyerr, Kind};
use crate::options::OptionArgs;
use crate::parse_wcs;

/// One lookup table as Python gives it: the samples (rows, columns; float32), and the
/// table's `CRPIX`, `CRVAL` and `CDELT` (axis 1 first).
type TableArg<'py> = (PyReadonlyArray2<'py, f32>, [f64; 2], [f64; 2], [f64; 2]);

/// The tables of one WCS, `[det2im1, det2im2, cpdis1, cpdis2]` (each optional).
fn lookup_tables(
    py: Python<'_>,
    args: Option<Vec<Option<TableArg<'_>>>>,
) -> PyResult<LookupTables> {
    let Some(args) = args else {
        return Ok(LookupTables::default());
    };
    let tables = args
        .into_iter()
        .map(|arg| -> PyResult<Option<LookupTable>> {
            arg.map(|(data, crpix, crval, cdelt)| {
                let samples = data.as_array();
                let (rows, cols) = samples.dim();
                let data = samples.iter().copied().collect();
                LookupTable::new(data, [cols, rows], crpix, crval, cdelt)
                    .map_err(|e| to_pyerr(py, e))
            })
            .transpose()
        })
        .collect::<PyResult<Vec<_>>>()?;
    let [det2im1, det2im2, cpdis1, cpdis2] = <[_; 4]>::try_from(tables).map_err(|t| {
        new_err(
            py,
            Kind::InvalidArgument,
            format!(
                "lookup tables: expected [det2im1, det2im2, cpdis1, cpdis2], got {} entries",
                t.len()
            ),
        )
    })?;
    Ok(LookupTables {
        det2im: [det2im1, det2im2],
        cpdis: [cpdis1, cpdis2],
    })
}

/// The input pixel position (0-based x, y) of every pixel of an output plane of
/// ``shape_out`` (rows, columns) seen from an input plane of ``shape_in``: NaN off the input
/// and where reproject's round-trip check drops a pixel. ``tables_in``/``tables_out``:
/// ``[det2im1, det2im2, cpdis1, cpdis2]``, each None or ``(samples, crpix, crval, cdelt)``
/// (astropy's ``DistortionLookupTable``), added to the WCS of the header text.
#[pyfunction]
#[pyo3(signature = (
    header_in, header_out, shape_in, shape_out, *, tables_in=None, tables_out=None,
    roundtrip_coords=true, precision="reproject"
))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn input_positions<'py>(
    py: Python<'py>,
    header_in: &str,
    header_out: &str,
    shape_in: (usize, usize),
    shape_out: (usize, usize),
    tables_in: Option<Vec<Option<TableArg<'py>>>>,
    tables_out: Option<Vec<Option<TableArg<'py>>>>,
    roundtrip_coords: bool,
    precision: &str,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
    guard_panics(|| {
        let options =
            OptionArgs::serial(None, roundtrip_coords, "propagate", precision).options(py)?;
        let with_tables = |wcs: Wcs, tables: LookupTables, which: &str| {
            wcs.with_lookup_tables(tables)
                .map_err(|e| new_err(py, crate::errors::kind_of(&e), format!("{which} WCS: {e}")))
        };
        let wcs_in = with_tables(
            parse_wcs(py, header_in, "input")?,
            lookup_tables(py, tables_in)?,
            "input",
        )?;
        let wcs_out = with_tables(
            parse_wcs(py, header_out, "output")?,
            lookup_tables(py, tables_out)?,
            "output",
        )?;
        let table = run_detached(py, || {
            reproject::engine::input_positions(&wcs_in, &wcs_out, shape_in, shape_out, &options)
        })?;
        let (xs, ys) = table.positions();
        let plane = |v: &[f64]| {
            numpy::ndarray::Array2::from_shape_vec(shape_out, v.to_vec())
                .map(|a| a.into_pyarray(py))
                .map_err(|e| new_err(py, Kind::Shape, e.to_string()))
        };
        Ok((plane(xs)?, plane(ys)?))
    })
}

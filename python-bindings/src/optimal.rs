//! `find_optimal_celestial_wcs` on the core (`reproject::mosaic::optimal_wcs`): the Python
//! layer parses reproject's input forms into (shape, header text) pairs and its keywords into
//! plain values; this returns the chosen header text and shape.

use pyo3::prelude::*;
use reproject::mosaic::optimal_wcs::{
    frame_from_name, optimal_celestial_wcs, LonCdeltSign, OptimalWcsOptions, SkyPosition,
};
use reproject::wcs::Wcs;

use crate::errors::{guard_panics, new_err, run_detached, Kind};
use crate::parse_wcs;

/// The optimal celestial WCS of images given as `shapes` (numpy order) and FITS `headers`:
/// `(header text, (rows, columns))`. `frame` is a frame name (icrs, fk5, fk4, galactic, ...;
/// None: the first input's), `resolution` in degrees, `reference` `(lon, lat, frame name)` in
/// degrees, `negative_lon_cdelt` 'true', 'false' or 'auto'.
#[pyfunction]
#[pyo3(signature = (shapes, headers, *, frame=None, projection="TAN", resolution=None,
    reference=None, auto_rotate=false, negative_lon_cdelt="true"))]
#[allow(clippy::too_many_arguments)]
pub fn optimal_celestial_wcs_header(
    py: Python<'_>,
    shapes: Vec<Vec<usize>>,
    headers: Vec<String>,
    frame: Option<&str>,
    projection: &str,
    resolution: Option<f64>,
    reference: Option<(f64, f64, String)>,
    auto_rotate: bool,
    negative_lon_cdelt: &str,
) -> PyResult<(String, (usize, usize))> {
    guard_panics(|| {
        if shapes.len() != headers.len() {
            return Err(new_err(
                py,
                Kind::InvalidArgument,
                format!("{} shapes for {} headers", shapes.len(), headers.len()),
            ));
        }
        let wcs: Vec<Wcs> = headers
            .iter()
            .map(|h| parse_wcs(py, h, "input"))
            .collect::<PyResult<_>>()?;
        let frame_of = |name: &str| {
            frame_from_name(name).map_err(|e| new_err(py, Kind::InvalidArgument, e.to_string()))
        };
        let options = OptimalWcsOptions {
            frame: frame.map(frame_of).transpose()?,
            projection: projection.to_string(),
            resolution,
            reference: match reference {
                Some((lon, lat, f)) => Some(SkyPosition::new(lon, lat, frame_of(&f)?)),
                None => None,
            },
            auto_rotate,
            negative_lon_cdelt: negative_lon_cdelt
                .parse::<LonCdeltSign>()
                .map_err(|e| new_err(py, Kind::InvalidArgument, e.to_string()))?,
        };
        run_detached(py, || {
            let inputs: Vec<(&[usize], &Wcs)> = shapes
                .iter()
                .map(|s| s.as_slice())
                .zip(wcs.iter())
                .collect();
            optimal_celestial_wcs(&inputs, &options).map(|o| (o.header, o.shape))
        })
    })
}

//! Reprojection along a third (spectral) axis that differs between the input and output WCS:
//! reproject interpolates along it with the same order, edge rule and NaN rule as on the sky.
//!
//! The third axis is separable from the celestial pair, so each output plane k has one input
//! position `z(k)` along it; the output plane is the weighted sum, with scipy's spline weights
//! and mirrored taps, of the celestial samples of a few input planes.

use crate::error::{Error, Result};
use crate::interp::kernel::{mirror_index, spline_weights};
use crate::interp::{clip_coordinate, Order};
use crate::wcs::plane::world_factors;
use crate::wcs::Wcs;

/// Input planes and weights of every output plane (`None`: outside the input, all NaN).
#[derive(Debug, Clone)]
pub(crate) struct SpectralAxis {
    pub(crate) taps: Vec<Option<Vec<(usize, f64)>>>,
}

impl SpectralAxis {
    /// The map for cubes whose third axis differs; `None` when there is nothing to
    /// interpolate (2-D WCS, or identical third axes).
    pub(crate) fn new(
        wcs_in: &Wcs,
        wcs_out: &Wcs,
        planes_in: usize,
        planes_out: usize,
        order: Order,
    ) -> Result<Option<SpectralAxis>> {
        let (pi, po) = (wcs_in.params(), wcs_out.params());
        if pi.naxis() <= 2 || po.naxis() <= 2 {
            return Ok(None);
        }
        let same_axis = |i: usize| {
            pi.ctype[i] == po.ctype[i]
                && pi.crpix[i] == po.crpix[i]
                && pi.crval[i] == po.crval[i]
                && pi.cdelt[i] == po.cdelt[i]
                && pi.pc[i] == po.pc[i]
                && pi.cunit[i] == po.cunit[i]
        };
        if (2..pi.naxis()).all(same_axis) && pi.naxis() == po.naxis() {
            return Ok(None);
        }
        let unsupported = |why: String| {
            Error::Unsupported(format!(
                "reprojecting along non-celestial axes: {why} (only a third axis of the same \
                 type and unit, separable from the celestial axes, is interpolated)"
            ))
        };
        if pi.naxis() != 3 || po.naxis() != 3 {
            return Err(unsupported(format!(
                "{} and {} axes",
                pi.naxis(),
                po.naxis()
            )));
        }
        let coupled = |p: &crate::wcs::WcsParams| {
            p.pc[2][0] != 0.0 || p.pc[2][1] != 0.0 || p.pc[0][2] != 0.0 || p.pc[1][2] != 0.0
        };
        if coupled(pi) || coupled(po) {
            return Err(unsupported(
                "the third axis is coupled to the image plane".into(),
            ));
        }
        // The output's world values in the input's units (1 for spectral axes, both SI).
        let factors = world_factors(wcs_out, wcs_in)?;
        // A valid point of the (separable) image plane of the N-d transforms: the reference
        // pixel, on the sky for celestial planes.
        let mut pixel_out = vec![po.crpix[0] - 1.0, po.crpix[1] - 1.0, 0.0];
        let degree = order.degree();
        let mut taps = Vec::with_capacity(planes_out);
        for k in 0..planes_out {
            pixel_out[2] = k as f64;
            let mut world = wcs_out.pixel_to_world_nd(&pixel_out)?;
            for (w, f) in world.iter_mut().zip(&factors) {
                *w *= f;
            }
            let z = wcs_in.world_to_pixel_nd(&world)?[2];
            taps.push(clip_coordinate(z, planes_in).map(|cc| {
                let start = if degree % 2 == 1 {
                    cc.floor()
                } else {
                    (cc + 0.5).floor()
                } as isize
                    - (degree / 2) as isize;
                let weights = spline_weights(order, cc);
                (0..=degree)
                    .map(|t| {
                        let index = mirror_index(start + t as isize, planes_in as isize);
                        (index as usize, weights[t])
                    })
                    .collect()
            }));
        }
        Ok(Some(SpectralAxis { taps }))
    }
}

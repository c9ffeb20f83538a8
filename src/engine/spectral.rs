//! Reprojection along the axes beyond the image plane (a spectral axis, a Stokes axis, any
//! linear axis) where they differ between the input and output WCS: reproject interpolates
//! along them with the same order, edge rule and NaN rule as on the plane.
//!
//! Each such axis is separable from the plane and from the others, so output index `k` along
//! it has one input position `z(k)`; an output plane is the weighted sum, with scipy's spline
//! weights and mirrored taps along every axis (their tensor product), of the plane samples of
//! a few input planes.

use crate::error::{Error, Result};
use crate::interp::kernel::{mirror_index, spline_weights};
use crate::interp::{clip_coordinate, Order};
use crate::wcs::plane::{world_conversions, Conversion};
use crate::wcs::{Wcs, WcsParams};

/// Input planes and weights of every output plane (`None`: outside the input, all NaN).
#[derive(Debug, Clone)]
pub(crate) struct SpectralAxis {
    pub(crate) taps: Vec<Option<Vec<(usize, f64)>>>,
}

/// Taps along one axis: for each output index, (input index, weight) pairs.
type AxisTaps = Vec<Option<Vec<(usize, f64)>>>;

impl SpectralAxis {
    /// The map for cubes whose axes beyond the plane differ, or are identical and
    /// `interpolate_identical` (scipy's NaN propagation along them); `None` when there is nothing
    /// to interpolate (2-D WCS, identical extra axes otherwise). `lead_in` and `lead_out` are the
    /// leading (numpy-order) dimensions of the input data and of the output: one per extra WCS
    /// axis, the last WCS axis first.
    pub(crate) fn new(
        wcs_in: &Wcs,
        wcs_out: &Wcs,
        lead_in: &[usize],
        lead_out: &[usize],
        order: Order,
        interpolate_identical: bool,
    ) -> Result<Option<SpectralAxis>> {
        let (pi, po) = (wcs_in.params(), wcs_out.params());
        let n = pi.naxis();
        if n <= 2 || po.naxis() != n {
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
        // Identical extra axes are interpolated too, as scipy does in reproject's 3-D call: an
        // output plane takes its own input plane with weight 1 and, for orders >= 1, the next
        // ones with weight 0 (which carry their NaN along, as in scipy), and spline orders
        // prefilter along the axis. Nearest-neighbour sampling has nothing to add, and the
        // engine's own NaN renormalisation works plane by plane.
        let plane_by_plane = order == Order::NearestNeighbor
            || !interpolate_identical
            || lead_in.len() != n - 2
            || lead_out.len() != n - 2;
        if (2..n).all(same_axis) && plane_by_plane {
            return Ok(None);
        }
        for p in [pi, po] {
            if let Some((i, j)) = coupling(p) {
                return Err(Error::Unsupported(format!(
                    "reprojecting along non-celestial axes: WCS axis {} is coupled to axis {} by \
                     the PC matrix (only axes separable from the image plane and from each other \
                     are interpolated)",
                    i + 1,
                    j + 1
                )));
            }
        }
        let m = n - 2;
        if lead_in.len() != m || lead_out.len() != m {
            return Err(Error::ShapeMismatch(format!(
                "a cube reprojected along its {m} axes beyond the image plane needs one data \
                 dimension per WCS axis: the WCS has {n} axes, the input has leading dimensions \
                 {lead_in:?} and the output {lead_out:?}"
            )));
        }
        // The output's world values in the input's units and time references.
        let conversions = world_conversions(wcs_out, wcs_in)?;
        // numpy axis a holds WCS axis n - 1 - a.
        let per_axis = (0..m)
            .map(|a| {
                axis_taps(
                    wcs_in,
                    wcs_out,
                    &conversions,
                    n - 1 - a,
                    lead_in[a],
                    lead_out[a],
                    order,
                )
            })
            .collect::<Result<Vec<AxisTaps>>>()?;
        // Input planes are numbered in C order of the leading dimensions.
        let mut strides = vec![1usize; m];
        for a in (0..m.saturating_sub(1)).rev() {
            strides[a] = strides[a + 1] * lead_in[a + 1];
        }
        let planes_out: usize = lead_out.iter().product();
        let mut taps = Vec::with_capacity(planes_out);
        let mut index = vec![0usize; m];
        for _ in 0..planes_out {
            taps.push(combine(&per_axis, &index, &strides));
            // Next output multi-index, C order.
            for a in (0..m).rev() {
                index[a] += 1;
                if index[a] < lead_out[a] {
                    break;
                }
                index[a] = 0;
            }
        }
        Ok(Some(SpectralAxis { taps }))
    }
}

/// The first pair of different axes, one of them beyond the plane, that the PC matrix couples.
fn coupling(p: &WcsParams) -> Option<(usize, usize)> {
    let n = p.naxis();
    (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .find(|&(i, j)| i != j && (i >= 2 || j >= 2) && p.pc[i][j] != 0.0)
}

/// Taps along WCS axis `k` for each of the `count_out` output indices, into `count_in`.
fn axis_taps(
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    conversions: &[Conversion],
    k: usize,
    count_in: usize,
    count_out: usize,
    order: Order,
) -> Result<AxisTaps> {
    // A valid point of the other (separable) axes: the reference pixel, on the sky for
    // celestial planes.
    let mut pixel_out: Vec<f64> = wcs_out.params().crpix.iter().map(|c| c - 1.0).collect();
    let degree = order.degree();
    (0..count_out)
        .map(|index| {
            pixel_out[k] = index as f64;
            let mut world = wcs_out.pixel_to_world_nd(&pixel_out)?;
            for (w, c) in world.iter_mut().zip(conversions) {
                *w = c.apply(*w);
            }
            let z = wcs_in.world_to_pixel_nd(&world)?[k];
            Ok(clip_coordinate(z, count_in).map(|cc| {
                let start = if degree % 2 == 1 {
                    cc.floor()
                } else {
                    (cc + 0.5).floor()
                } as isize
                    - (degree / 2) as isize;
                let weights = spline_weights(order, cc);
                (0..=degree)
                    .map(|t| {
                        let i = mirror_index(start + t as isize, count_in as isize);
                        (i as usize, weights[t])
                    })
                    .collect()
            }))
        })
        .collect()
}

/// The tensor product of the taps of every axis at one output multi-index.
fn combine(per_axis: &[AxisTaps], index: &[usize], strides: &[usize]) -> Option<Vec<(usize, f64)>> {
    let mut taps = vec![(0usize, 1.0f64)];
    for ((axis, &i), &stride) in per_axis.iter().zip(index).zip(strides) {
        let along = axis[i].as_ref()?;
        taps = taps
            .iter()
            .flat_map(|&(plane, w)| along.iter().map(move |&(j, v)| (plane + j * stride, w * v)))
            .collect();
    }
    Some(taps)
}

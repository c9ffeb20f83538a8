//! The geometry of the inputs: pixel scales, the mean reference, corners, the minimum-area
//! rectangle and the output's extent, with reproject's arithmetic.

use crate::error::{Error, Result};
use crate::wcs::Wcs;

/// reproject's `pixel_scale` for a FITS WCS: the smaller of the column norms of CDELT·PC
/// (astropy's `proj_plane_pixel_scales`), degrees; distortions are not included.
pub(super) fn pixel_scale(wcs: &Wcs) -> f64 {
    let p = wcs.params();
    let m = |i: usize, j: usize| p.cdelt[i] * p.pc[i][j];
    let column = |j: usize| (m(0, j) * m(0, j) + m(1, j) * m(1, j)).sqrt().abs();
    column(0).min(column(1))
}

/// The reference of reproject: the mean of the unit vectors (astropy's
/// `UnitSphericalRepresentation.mean`, numpy's pairwise sums), back to (lon, lat) degrees with
/// the longitude in [0, 360).
pub(super) fn mean_position(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let mut xyz: [Vec<f64>; 3] = Default::default();
    for &(lon, lat) in points {
        // ERFA s2c.
        let (theta, phi) = (lon.to_radians(), lat.to_radians());
        let cp = phi.cos();
        xyz[0].push(theta.cos() * cp);
        xyz[1].push(theta.sin() * cp);
        xyz[2].push(phi.sin());
    }
    let [x, y, z] = xyz.map(|v| pairwise_sum(&v) / n);
    // ERFA c2s.
    let d2 = x * x + y * y;
    let theta = if d2 == 0.0 { 0.0 } else { y.atan2(x) };
    let phi = if z == 0.0 { 0.0 } else { z.atan2(d2.sqrt()) };
    // astropy's Longitude wraps in radians, then converts.
    let full = 360.0 * (std::f64::consts::PI / 180.0);
    let mut lon = theta;
    if lon < 0.0 {
        lon += full;
        if lon >= full {
            lon -= full;
        }
    }
    (lon.to_degrees(), phi.to_degrees())
}

/// numpy's pairwise summation of a float64 array (`np.add.reduce`).
pub(super) fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &a[i..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// The corners in the output projection, 1-based (astropy's `skycoord_to_pixel(...,
/// origin=1)`); an error if any has no pixel position (reproject would fail converting NaN
/// to an integer shape).
pub(super) fn corner_pixels(wcs: &Wcs, corners: &[(f64, f64)]) -> Result<Vec<(f64, f64)>> {
    corners
        .iter()
        .enumerate()
        .map(|(i, &(lon, lat))| {
            wcs.world_to_pixel(lon, lat)
                .map(|(x, y)| (x + 1.0, y + 1.0))
                .ok_or_else(|| {
                    let what = if lon.is_finite() && lat.is_finite() {
                        format!(
                            "({lon}, {lat}) has no pixel position in the output's {} projection",
                            wcs.projection_code().map_or("?", |c| c.as_str())
                        )
                    } else {
                        "has no sky position".to_string()
                    };
                    Error::InvalidArgument(format!(
                        "corner {} of input {}: {what}, so the output cannot cover it",
                        i % 4,
                        i / 4
                    ))
                })
        })
        .collect()
}

/// reproject's auto-rotation angle (radians, in (-π/4, π/4]): the minimum-area rectangle
/// around the points (shapely's `minimum_rotated_rectangle`, GEOS), the direction of the edge
/// between its two lowest vertices, modulo π/2.
pub(super) fn rotation_angle(points: &[(f64, f64)]) -> Result<f64> {
    let rect = minimum_area_rectangle(points).ok_or_else(|| {
        Error::InvalidArgument(
            "auto_rotate: the input corners are collinear in the output projection, so they \
             have no enclosing rectangle"
                .into(),
        )
    })?;
    // The vertices with the two smallest y (a stable sort, as numpy's argsort of 4 values).
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&a, &b| rect[a].1.total_cmp(&rect[b].1));
    let (x1, y1) = rect[order[0]];
    let (x2, y2) = rect[order[1]];
    let quarter = std::f64::consts::PI / 2.0;
    let mut angle = py_mod((y2 - y1).atan2(x2 - x1), quarter);
    if angle > std::f64::consts::PI / 4.0 {
        angle -= quarter;
    }
    Ok(angle)
}

/// Python's float modulo for a positive divisor (result in [0, b)).
pub(super) fn py_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r == 0.0 {
        0.0
    } else if r < 0.0 {
        r + b
    } else {
        r
    }
}

/// The minimum-area rectangle enclosing the points, its 4 vertices in order; `None` when the
/// points' convex hull is a point or a line. Every edge of the convex hull is tried (the
/// optimal rectangle has a side along one), which finds the rectangle GEOS's rotating calipers
/// find; only exact ties between edges of different directions (symmetric point sets) may be
/// broken otherwise.
fn minimum_area_rectangle(points: &[(f64, f64)]) -> Option<[(f64, f64); 4]> {
    let hull = convex_hull(points);
    if hull.len() < 3 {
        return None;
    }
    let n = hull.len();
    let mut best: Option<(f64, [(f64, f64); 4])> = None;
    for i in 0..n {
        let p = hull[i];
        let q = hull[(i + 1) % n];
        let (dx, dy) = (q.0 - p.0, q.1 - p.1);
        let len = dx.hypot(dy);
        let (ux, uy) = (dx / len, dy / len);
        let (mut amin, mut amax, mut bmin, mut bmax) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for r in &hull {
            let (rx, ry) = (r.0 - p.0, r.1 - p.1);
            let a = rx * ux + ry * uy;
            let b = ry * ux - rx * uy;
            amin = amin.min(a);
            amax = amax.max(a);
            bmin = bmin.min(b);
            bmax = bmax.max(b);
        }
        let area = (amax - amin) * (bmax - bmin);
        if best.as_ref().is_none_or(|(min, _)| area < *min) {
            let corner = |a: f64, b: f64| (p.0 + a * ux - b * uy, p.1 + a * uy + b * ux);
            best = Some((
                area,
                [
                    corner(amin, bmin),
                    corner(amax, bmin),
                    corner(amax, bmax),
                    corner(amin, bmax),
                ],
            ));
        }
    }
    best.map(|(_, rect)| rect)
}

/// The convex hull (Andrew's monotone chain), counter-clockwise, without repeated or collinear
/// points.
pub(super) fn convex_hull(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points.to_vec();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut hull: Vec<(f64, f64)> = Vec::with_capacity(2 * pts.len());
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &(f64, f64)>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop(); // the last point starts the other chain
    }
    hull
}

/// An image extent in pixels as reproject rounds it (`int(round(max - min))`, half to even).
pub(super) fn extent(span: f64) -> Result<usize> {
    let n = span.round_ties_even();
    if !(0.0..=(isize::MAX as f64)).contains(&n) {
        return Err(Error::InvalidArgument(format!(
            "the output would be {span} pixels across"
        )));
    }
    Ok(n as usize)
}

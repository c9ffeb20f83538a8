//! Input-pixel coordinates of a block of output pixels, with reproject's round-trip check.

use super::blocks::Block;
use crate::error::Result;
use crate::pixel_transform::PixelTransform;
use crate::wcs::plane::{Conversion, LinearPlane};
use crate::wcs::Wcs;

/// Output pixel → input pixel for whole blocks.
///
/// Positions outside the input's valid range `[-0.5, n - 0.5)` come out as NaN straight away:
/// the sampler would return NaN for them anyway, so nothing else is computed for them.
///
/// With `roundtrip` (reproject's `roundtrip_coords=True`, the default) every other input
/// position is mapped back to the output grid, and a pixel that lands more than one output
/// pixel away from where it started (on either axis) is dropped: that only happens where a
/// projection is not one-to-one. A point whose way back fails altogether is kept, as in
/// reproject (its comparison with NaN is false). The exact TAN → TAN homography is one-to-one
/// on the near hemisphere, and its inverse returns every point inside the input to within
/// 1e-9 px, so the check cannot drop anything there and is skipped; the same holds, and the
/// check is skipped, for a TAN output fed by the inputs `roundtrip_always_passes` lists.
///
/// ```
/// use reproject::engine::{blocks::Block, coords::CoordinateMap};
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 10\nCRVAL2 = 20\n\
///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// )
/// .unwrap();
/// let map = CoordinateMap::new(&wcs, &wcs, true, (2, 3)).unwrap();
/// let block = Block { rows: 0..2, cols: 0..4 };
/// let (mut x, mut y) = (vec![0.0; 8], vec![0.0; 8]);
/// let bbox = map.block_coords(&block, &mut x, &mut y).unwrap();
/// assert!((x[6] - 2.0).abs() < 1e-9 && (y[6] - 1.0).abs() < 1e-9);
/// assert!(x[7].is_nan()); // column 3 is outside the 3-column input
/// assert!(bbox.x.1 < 2.1);
/// ```
#[derive(Debug, Clone)]
pub struct CoordinateMap {
    forward: PixelTransform,
    backward: Option<PixelTransform>,
    /// Input plane (rows, columns).
    shape_in: (usize, usize),
    /// Opt-in approximation: the largest error allowed (input pixels) at the check points.
    approximate: Option<f64>,
}

/// Side of the cells of the approximate transform, in output pixels. Cells are anchored to
/// the output grid, not to blocks, so the result does not depend on the block size.
///
/// ```
/// use reproject::engine::coords::{CoordinateMap, APPROX_CELL};
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// // An approximate CAR → TAN map is exact on the corners of the cells.
/// let car = Wcs::from_header_str(&header(15.0).replace("TAN", "CAR"))?;
/// let exact = CoordinateMap::new(&car, &wcs_in, true, (64, 64))?;
/// let approx = CoordinateMap::new(&car, &wcs_in, true, (64, 64))?.with_approximation(0.01);
/// let at = APPROX_CELL as f64;
/// assert_eq!(approx.map(at, at), exact.map(at, at));
/// # Ok::<(), reproject::Error>(())
/// ```
pub const APPROX_CELL: usize = 16;

/// The range of valid input positions of a block: `x` (columns) and `y` (rows), inclusive.
///
/// ```
/// use reproject::engine::{blocks::Block, coords::CoordinateMap};
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// let map = CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 32))?;
/// let block = Block { rows: 0..4, cols: 0..8 };
/// let (mut xs, mut ys) = (vec![0.0; 32], vec![0.0; 32]);
/// let bounds = map.block_coords(&block, &mut xs, &mut ys).unwrap();
/// // Output columns 0..8 see input columns 1..9 (a shift of one pixel).
/// assert!((bounds.x.0 - 1.0).abs() < 1e-9 && (bounds.x.1 - 8.0).abs() < 1e-9);
/// assert!(bounds.y.0.abs() < 1e-9 && (bounds.y.1 - 3.0).abs() < 1e-9);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Smallest and largest column.
    pub x: (f64, f64),
    /// Smallest and largest row.
    pub y: (f64, f64),
}

impl CoordinateMap {
    /// The map from `wcs_out` pixels to `wcs_in` pixels for an input plane of `shape_in`
    /// (rows, columns), with or without the round-trip check.
    ///
    /// ```
    /// use reproject::engine::coords::CoordinateMap;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// let map = CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 32))?;
    /// let (x, y) = map.map(4.0, 7.0);
    /// assert!((x - 5.0).abs() < 1e-9 && (y - 7.0).abs() < 1e-9);
    /// assert!(map.map(31.0, 7.0).0.is_nan()); // input column 32: off the image
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(
        wcs_out: &Wcs,
        wcs_in: &Wcs,
        roundtrip: bool,
        shape_in: (usize, usize),
    ) -> Result<CoordinateMap> {
        let forward = PixelTransform::new(wcs_out, wcs_in)?;
        // Homographies and linear planes are inverted exactly (up to rounding).
        let needed = !forward.is_homography()
            && !forward.is_linear()
            && !roundtrip_always_passes(wcs_out, wcs_in, &forward)?;
        let backward = if roundtrip && needed {
            Some(PixelTransform::new(wcs_in, wcs_out)?)
        } else {
            None
        };
        Ok(CoordinateMap {
            forward,
            backward,
            shape_in,
            approximate: None,
        })
    }

    /// The map of a transform that needs no round-trip check (a homography, given positions).
    ///
    /// ```
    /// use reproject::engine::coords::CoordinateMap;
    /// use reproject::pixel_transform::PixelTransform;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// let map = CoordinateMap::from_transform(PixelTransform::new(&wcs_out, &wcs_in)?, (32, 32));
    /// assert!(map.is_homography());
    /// assert!((map.map(2.0, 3.0).0 - 3.0).abs() < 1e-9);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_transform(forward: PixelTransform, shape_in: (usize, usize)) -> CoordinateMap {
        CoordinateMap {
            forward,
            backward: None,
            shape_in,
            approximate: None,
        }
    }

    /// Switches on the approximate transform (SWarp/GDAL style): exact positions on a grid of
    /// [`APPROX_CELL`]-pixel cells, bilinear in between. A cell is interpolated only if its
    /// four corners are valid and the interpolation is within `tolerance` input pixels of the
    /// exact position at the cell centre and at the midpoints of its four edges; any other
    /// cell is computed exactly, pixel by pixel. The exact TAN → TAN homography is never
    /// approximated.
    ///
    /// ```
    /// use reproject::engine::coords::CoordinateMap;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// let car = Wcs::from_header_str(&header(15.0).replace("TAN", "CAR"))?;
    /// let exact = CoordinateMap::new(&car, &wcs_in, true, (64, 64))?;
    /// let approx = CoordinateMap::new(&car, &wcs_in, true, (64, 64))?.with_approximation(1e-3);
    /// // Between the cells' corners, within the tolerance of the exact position.
    /// let ((ax, ay), (ex, ey)) = (approx.map(20.5, 9.25), exact.map(20.5, 9.25));
    /// assert!((ax - ex).abs() <= 1e-3 && (ay - ey).abs() <= 1e-3);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_approximation(mut self, tolerance: f64) -> CoordinateMap {
        self.approximate = Some(tolerance);
        self
    }

    /// Forward and backward transforms and the approximation tolerance, for the GPU encoder.
    pub(crate) fn parts(&self) -> (&PixelTransform, Option<&PixelTransform>, Option<f64>) {
        (&self.forward, self.backward.as_ref(), self.approximate)
    }

    /// Whether the exact homography is in use.
    ///
    /// ```
    /// use reproject::engine::coords::CoordinateMap;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// assert!(CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 32))?.is_homography());
    /// let car = Wcs::from_header_str(&header(15.0).replace("TAN", "CAR"))?;
    /// assert!(!CoordinateMap::new(&car, &wcs_in, true, (32, 32))?.is_homography());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_homography(&self) -> bool {
        self.forward.is_homography()
    }

    /// Whether either WCS has a SIP or TPV distortion ([`PixelTransform::is_distorted`]).
    ///
    /// ```
    /// use reproject::engine::coords::CoordinateMap;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// assert!(!CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 32))?.is_distorted());
    /// let sip = header(16.0).replace("TAN'", "TAN-SIP'")
    ///     + "A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n";
    /// let sip = Wcs::from_header_str(&sip)?;
    /// assert!(CoordinateMap::new(&wcs_out, &sip, true, (32, 32))?.is_distorted());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_distorted(&self) -> bool {
        self.forward.is_distorted()
    }

    /// The input position of one output pixel (`x` column, `y` row), NaN if it has none or
    /// it is outside the input.
    ///
    /// ```
    /// use reproject::engine::coords::CoordinateMap;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// let map = CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 32))?;
    /// let (x, y) = map.map(0.0, 0.0);
    /// assert!((x - 1.0).abs() < 1e-9 && y.abs() < 1e-9);
    /// // Valid input positions reach half a pixel beyond the centres of the edge pixels.
    /// assert!(!map.map(-1.4, 0.0).0.is_nan() && map.map(-1.6, 0.0).0.is_nan());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn map(&self, x: f64, y: f64) -> (f64, f64) {
        let Some((px, py)) = self.forward.map(x, y) else {
            return (f64::NAN, f64::NAN);
        };
        self.accept(x, y, px, py)
    }

    /// The checks of [`CoordinateMap::map`] after the forward transform: output pixel (`x`,
    /// `y`) keeps the input position (`px`, `py`) if it lies inside the input and maps back
    /// within a pixel (when the round trip is checked); NaN otherwise (NaN stays NaN).
    #[inline(always)]
    fn accept(&self, x: f64, y: f64, px: f64, py: f64) -> (f64, f64) {
        if !self.inside(px, py) {
            return (f64::NAN, f64::NAN);
        }
        if let Some(back) = &self.backward
            && let Some((bx, by)) = back.map(px, py)
            && ((bx - x).abs() > 1.0 || (by - y).abs() > 1.0)
        {
            return (f64::NAN, f64::NAN);
        }
        (px, py)
    }

    /// Whether an input position is inside the valid range `[-0.5, n - 0.5)` on both axes.
    #[inline(always)]
    fn inside(&self, px: f64, py: f64) -> bool {
        let (ny, nx) = self.shape_in;
        px >= -0.5 && px < nx as f64 - 0.5 && py >= -0.5 && py < ny as f64 - 0.5
    }

    /// Input columns `xs` and rows `ys` for every pixel of `block`, row-major, and the bounds
    /// of the valid ones (`None` if no pixel of the block sees the input).
    ///
    /// # Panics
    /// If `xs` or `ys` is shorter than the block.
    ///
    /// ```
    /// use reproject::engine::{blocks::Block, coords::CoordinateMap};
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// let map = CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 32))?;
    /// let block = Block { rows: 10..12, cols: 29..32 }; // 2 × 3 pixels, row-major
    /// let (mut xs, mut ys) = (vec![0.0; 6], vec![0.0; 6]);
    /// let bounds = map.block_coords(&block, &mut xs, &mut ys).unwrap();
    /// assert!((xs[1] - map.map(30.0, 10.0).0).abs() < 1e-9); // the second pixel: (30, 10)
    /// assert!(xs[2].is_nan()); // column 31 would see input column 32: past 31.5
    /// assert!((bounds.x.1 - 31.0).abs() < 1e-9);
    /// assert!(map.block_coords(&Block { rows: 0..2, cols: 40..42 }, &mut xs, &mut ys).is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn block_coords(&self, block: &Block, xs: &mut [f64], ys: &mut [f64]) -> Option<Bounds> {
        if let Some(h) = self.forward.homography() {
            return self.homography_block(&h, block, xs, ys);
        }
        if self.forward.is_separable() && self.backward.is_none() {
            return self.separable_block(block, xs, ys);
        }
        if let (Some(planes), None, None) = (
            self.forward.linear_planes(),
            &self.backward,
            self.approximate,
        ) {
            return self.linear_block(planes, block, xs, ys);
        }
        let width = block.cols.len();
        if let Some(tolerance) = self.approximate {
            self.approximate_block(block, tolerance, xs, ys);
        } else {
            for (r, row) in block.rows.clone().enumerate() {
                let y = row as f64;
                let xs = &mut xs[r * width..(r + 1) * width];
                let ys = &mut ys[r * width..(r + 1) * width];
                // The forward transform of the whole row first (SIP inverted for several
                // pixels at once), then map's checks pixel by pixel: map's bits.
                self.forward.map_row(y, block.cols.clone(), xs, ys);
                for ((c, px), py) in block.cols.clone().zip(xs.iter_mut()).zip(ys.iter_mut()) {
                    (*px, *py) = self.accept(c as f64, y, *px, *py);
                }
            }
        }
        bounds(&xs[..block.len()], &ys[..block.len()])
    }
}

impl CoordinateMap {
    /// Bounds holding the input position of every pixel of `block`, found from its four
    /// corners alone, when the map is a homography with W > 0 at the four corners: W is
    /// affine, so positive on the whole block, and the homography maps the block's rectangle
    /// onto the convex quadrilateral of the corners' images, whose bounding box this is (not
    /// clipped to the input; the pixels outside it see nothing). `None` otherwise.
    pub(crate) fn corner_bounds(&self, block: &Block) -> Option<Bounds> {
        let [[h00, h01, h02], [h10, h11, h12], [h20, h21, h22]] = self.forward.homography()?;
        if block.is_empty() {
            return None;
        }
        let (x0, x1) = (block.cols.start as f64, (block.cols.end - 1) as f64);
        let (y0, y1) = (block.rows.start as f64, (block.rows.end - 1) as f64);
        let mut lo = (f64::INFINITY, f64::INFINITY);
        let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for (x, y) in [(x0, y0), (x1, y0), (x0, y1), (x1, y1)] {
            let w = h20 * x + h21 * y + h22;
            let (px, py) = ((h00 * x + h01 * y + h02) / w, (h10 * x + h11 * y + h12) / w);
            // W > 0 (NaN fails it too) and a finite image.
            if w.is_nan() || w <= 0.0 || !px.is_finite() || !py.is_finite() {
                return None;
            }
            lo = (lo.0.min(px), lo.1.min(py));
            hi = (hi.0.max(px), hi.1.max(py));
        }
        Some(Bounds {
            x: (lo.0, hi.0),
            y: (lo.1, hi.1),
        })
    }

    /// [`block_coords`](CoordinateMap::block_coords) through the homography `h`.
    ///
    /// Along an output row, both input coordinates are x ↦ (p·x + q) / (w1·x + w0), monotone
    /// wherever the denominator keeps its sign, and a valid point needs W > 0 and both
    /// coordinates inside the input: the valid pixels of a row are one run, whose two ends hold
    /// the row's extreme coordinates. So the bounds come from the first and last valid pixel
    /// of each row (rounding can only move them by ulps; the window has a margin of pixels).
    fn homography_block(
        &self,
        h: &[[f64; 3]; 3],
        block: &Block,
        xs: &mut [f64],
        ys: &mut [f64],
    ) -> Option<Bounds> {
        let width = block.cols.len();
        let (ny, nx) = self.shape_in;
        let (x_hi, y_hi) = (nx as f64 - 0.5, ny as f64 - 0.5);
        let [[h00, h01, h02], [h10, h11, h12], [h20, h21, h22]] = *h;
        let mut lo = (f64::INFINITY, f64::INFINITY);
        let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        let x0 = block.cols.start;
        for (r, row) in block.rows.clone().enumerate() {
            // The y terms are constant along a row (computed per pixel of the output grid,
            // so blocks of any size give the same values).
            let y = row as f64;
            let (cw, ca, cb) = (h21 * y + h22, h01 * y + h02, h11 * y + h12);
            let xs = &mut xs[r * width..(r + 1) * width];
            let ys = &mut ys[r * width..(r + 1) * width];
            // Groups of four with AVX2 where the CPU has it (the same operations, so the same
            // bits), the rest here.
            let row_h = RowHomography {
                h: [h00, h10, h20],
                c: [ca, cb, cw],
                hi: (x_hi, y_hi),
            };
            let done = row_h.fill_avx2(x0, xs, ys);
            #[cfg(test)]
            AVX2_PIXELS.with(|c| c.set(c.get() + done));
            let (xs_rest, ys_rest) = (&mut xs[done..], &mut ys[done..]);
            for (i, (px, py)) in xs_rest.iter_mut().zip(ys_rest.iter_mut()).enumerate() {
                let x = (x0 + done + i) as f64;
                let w = h20 * x + cw;
                let inv_w = 1.0 / w;
                let a = (h00 * x + ca) * inv_w;
                let b = (h10 * x + cb) * inv_w;
                // W > 0 is TAN's near hemisphere; the range test rejects NaN too.
                let ok = (w > 0.0) & (a >= -0.5) & (a < x_hi) & (b >= -0.5) & (b < y_hi);
                *px = if ok { a } else { f64::NAN };
                *py = if ok { b } else { f64::NAN };
            }
            let first = xs.iter().position(|v| !v.is_nan());
            let last = xs.iter().rposition(|v| !v.is_nan());
            for i in first.into_iter().chain(last) {
                lo = (lo.0.min(xs[i]), lo.1.min(ys[i]));
                hi = (hi.0.max(xs[i]), hi.1.max(ys[i]));
            }
        }
        (lo.0 <= hi.0).then_some(Bounds {
            x: (lo.0, hi.0),
            y: (lo.1, hi.1),
        })
    }

    /// [`block_coords`](CoordinateMap::block_coords) of a separable transform: the input
    /// column of each output column and the input row of each output row, computed once per
    /// block with [`CoordinateMap::map`]'s arithmetic, then paired (no per-pixel transform).
    fn separable_block(&self, block: &Block, xs: &mut [f64], ys: &mut [f64]) -> Option<Bounds> {
        let (ny, nx) = self.shape_in;
        let along = |axis: usize, range: std::ops::Range<usize>, n: usize| -> Vec<f64> {
            range
                .map(|p| {
                    let q = self.forward.map_axis(axis, p as f64);
                    // The edge rule of `inside`; NaN fails it too.
                    if q >= -0.5 && q < n as f64 - 0.5 {
                        q
                    } else {
                        f64::NAN
                    }
                })
                .collect()
        };
        let cols = along(0, block.cols.clone(), nx);
        let rows = along(1, block.rows.clone(), ny);
        let width = cols.len();
        for (r, &py) in rows.iter().enumerate() {
            let xs = &mut xs[r * width..(r + 1) * width];
            let ys = &mut ys[r * width..(r + 1) * width];
            for ((x, y), &px) in xs.iter_mut().zip(ys.iter_mut()).zip(&cols) {
                let ok = !px.is_nan() && !py.is_nan();
                *x = if ok { px } else { f64::NAN };
                *y = if ok { py } else { f64::NAN };
            }
        }
        let valid = |v: &[f64]| bounds(v, v).map(|b| b.x);
        Some(Bounds {
            x: valid(&cols)?,
            y: valid(&rows)?,
        })
    }

    /// [`block_coords`](CoordinateMap::block_coords) of two linear planes: the per-pixel
    /// map's operations in one loop, without its dispatch.
    fn linear_block(
        &self,
        (out, inp, [ca, cb]): (&LinearPlane, &LinearPlane, [Conversion; 2]),
        block: &Block,
        xs: &mut [f64],
        ys: &mut [f64],
    ) -> Option<Bounds> {
        let width = block.cols.len();
        for (r, row) in block.rows.clone().enumerate() {
            let y = row as f64;
            let xs = &mut xs[r * width..(r + 1) * width];
            let ys = &mut ys[r * width..(r + 1) * width];
            for ((c, px), py) in block.cols.clone().zip(xs.iter_mut()).zip(ys.iter_mut()) {
                let (a, b) = out.pixel_to_world(c as f64, y);
                let (p, q) = inp.world_to_pixel(ca.apply(a), cb.apply(b));
                // `map`'s rules: finite and inside, else NaN.
                let ok = p.is_finite() && q.is_finite() && self.inside(p, q);
                *px = if ok { p } else { f64::NAN };
                *py = if ok { q } else { f64::NAN };
            }
        }
        bounds(&xs[..block.len()], &ys[..block.len()])
    }

    /// Fills a block cell by cell (see [`CoordinateMap::with_approximation`]).
    fn approximate_block(&self, block: &Block, tolerance: f64, xs: &mut [f64], ys: &mut [f64]) {
        let g = APPROX_CELL;
        let width = block.cols.len();
        let (cell_rows, cell_cols) = (
            block.rows.start / g..(block.rows.end - 1) / g + 1,
            block.cols.start / g..(block.cols.end - 1) / g + 1,
        );
        for cr in cell_rows {
            for cc in cell_cols.clone() {
                let (y0, x0) = (cr * g, cc * g);
                let rows = y0.max(block.rows.start)..(y0 + g).min(block.rows.end);
                let cols = x0.max(block.cols.start)..(x0 + g).min(block.cols.end);
                let corner = |dy: usize, dx: usize| self.map((x0 + dx) as f64, (y0 + dy) as f64);
                let corners = [corner(0, 0), corner(0, g), corner(g, 0), corner(g, g)];
                let lerp = |u: f64, v: f64| {
                    let w = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
                    let x = corners.iter().zip(w).map(|(c, w)| c.0 * w).sum::<f64>();
                    let y = corners.iter().zip(w).map(|(c, w)| c.1 * w).sum::<f64>();
                    (x, y)
                };
                let half = g as f64 / 2.0;
                let smooth = corners.iter().all(|c| !c.0.is_nan())
                    && [
                        (half, half),
                        (half, 0.0),
                        (half, g as f64),
                        (0.0, half),
                        (g as f64, half),
                    ]
                    .iter()
                    .all(|&(dy, dx)| {
                        let exact = self.map(x0 as f64 + dx, y0 as f64 + dy);
                        let approx = lerp(dx / g as f64, dy / g as f64);
                        (exact.0 - approx.0).abs() <= tolerance
                            && (exact.1 - approx.1).abs() <= tolerance
                    });
                for row in rows {
                    let r = row - block.rows.start;
                    for col in cols.clone() {
                        let i = r * width + (col - block.cols.start);
                        let (px, py) = if smooth {
                            let (u, v) =
                                ((col - x0) as f64 / g as f64, (row - y0) as f64 / g as f64);
                            let (px, py) = lerp(u, v);
                            if self.inside(px, py) {
                                (px, py)
                            } else {
                                (f64::NAN, f64::NAN)
                            }
                        } else {
                            self.map(col as f64, row as f64)
                        };
                        xs[i] = px;
                        ys[i] = py;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Pixels whose positions the AVX2 homography loop computed on this thread (test builds
    /// only: the tests check that the loop ran).
    static AVX2_PIXELS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One output row of the homography: input column `(h[0]·x + c[0]) / W`, row
/// `(h[1]·x + c[1]) / W` with `W = h[2]·x + c[2]`, valid where W > 0 and inside `hi`.
struct RowHomography {
    h: [f64; 3],
    c: [f64; 3],
    hi: (f64, f64),
}

impl RowHomography {
    /// Fills whole groups of four pixels (columns `x0`, `x0 + 1`, ...) with AVX2 when the CPU
    /// has it and returns how many it filled (0 otherwise). Each lane does the scalar loop's
    /// operations in its order (no FMA), so the values are bit-identical.
    fn fill_avx2(&self, x0: usize, xs: &mut [f64], ys: &mut [f64]) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            // Columns are integers below 2^53, exact in f64 (as in the scalar loop).
            if std::arch::is_x86_feature_detected!("avx2") && x0 + xs.len() < 1 << 53 {
                // SAFETY: AVX2 is present; the function only writes within the slices.
                return unsafe { self.fill_avx2_unchecked(x0, xs, ys) };
            }
        }
        let _ = (x0, xs, ys);
        0
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn fill_avx2_unchecked(&self, x0: usize, xs: &mut [f64], ys: &mut [f64]) -> usize {
        // SAFETY: the caller checked AVX2; loads and stores stay below `n`, within both slices.
        unsafe {
            use std::arch::x86_64::*;
            let n = xs.len().min(ys.len());
            let [h0, h1, h2] = self.h.map(|v| _mm256_set1_pd(v));
            let [c0, c1, c2] = self.c.map(|v| _mm256_set1_pd(v));
            let (x_hi, y_hi) = (_mm256_set1_pd(self.hi.0), _mm256_set1_pd(self.hi.1));
            let (zero, one, half_neg) = (
                _mm256_setzero_pd(),
                _mm256_set1_pd(1.0),
                _mm256_set1_pd(-0.5),
            );
            let (nan, four) = (_mm256_set1_pd(f64::NAN), _mm256_set1_pd(4.0));
            let x0f = x0 as f64;
            let mut x = _mm256_setr_pd(x0f, x0f + 1.0, x0f + 2.0, x0f + 3.0);
            let mut i = 0;
            while i + 4 <= n {
                let w = _mm256_add_pd(_mm256_mul_pd(h2, x), c2);
                let inv_w = _mm256_div_pd(one, w);
                let a = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(h0, x), c0), inv_w);
                let b = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(h1, x), c1), inv_w);
                let ok = _mm256_and_pd(
                    _mm256_and_pd(
                        _mm256_cmp_pd::<_CMP_GT_OQ>(w, zero),
                        _mm256_and_pd(
                            _mm256_cmp_pd::<_CMP_GE_OQ>(a, half_neg),
                            _mm256_cmp_pd::<_CMP_LT_OQ>(a, x_hi),
                        ),
                    ),
                    _mm256_and_pd(
                        _mm256_cmp_pd::<_CMP_GE_OQ>(b, half_neg),
                        _mm256_cmp_pd::<_CMP_LT_OQ>(b, y_hi),
                    ),
                );
                _mm256_storeu_pd(xs.as_mut_ptr().add(i), _mm256_blendv_pd(nan, a, ok));
                _mm256_storeu_pd(ys.as_mut_ptr().add(i), _mm256_blendv_pd(nan, b, ok));
                x = _mm256_add_pd(x, four);
                i += 4;
            }
            i
        }
    }
}

/// Whether reproject's round-trip check provably keeps every pixel, so that it can be skipped.
///
/// The check maps an input position back to the output and drops the pixel if it lands more
/// than a pixel away. Going back retraces the forward path exactly (up to rounding) when
/// (a) the output projection is TAN, whose plane-to-sphere map is one-to-one onto the near
/// hemisphere and inverted exactly by its sphere-to-plane map, (b) the input projection's
/// plane-to-sphere map returns every point its sphere-to-plane map produced (true of the
/// projections listed below: they are one-to-one on their domain, or map several plane points
/// only to one sky point, a pole or the antipode), (c) neither side has SIP/TPV distortion
/// (iterative inverses) and (d) the frame change is a rotation. Perspective and polynomial
/// projections (SIN, AZP, SZP, ZPN, ...), whose far sides can overlap their near sides, keep
/// the check.
fn roundtrip_always_passes(wcs_out: &Wcs, wcs_in: &Wcs, forward: &PixelTransform) -> Result<bool> {
    use crate::wcs::projection::ProjectionCode as P;
    let (code_out, code_in) = (
        wcs_out.celestial()?.projection().code(),
        wcs_in.celestial()?.projection().code(),
    );
    let invertible_input = matches!(
        code_in,
        P::Tan
            | P::Stg
            | P::Zea
            | P::Arc
            | P::Car
            | P::Cea
            | P::Mer
            | P::Sfl
            | P::Par
            | P::Mol
            | P::Ait
    );
    Ok(code_out == P::Tan
        && invertible_input
        && !wcs_out.has_distortion()
        && !wcs_in.has_distortion()
        && forward.is_rotation())
}

/// Smallest and largest non-NaN values of both coordinate arrays.
fn bounds(xs: &[f64], ys: &[f64]) -> Option<Bounds> {
    let fold = |v: &[f64]| {
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &a| {
                (lo.min(a), hi.max(a))
            })
    };
    let (x, y) = (fold(xs), fold(ys));
    (x.0 <= x.1).then_some(Bounds { x, y })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of `map` equal its per-pixel positions bit for bit, and their bounds.
    fn assert_blocks_equal_the_per_pixel_map(map: &CoordinateMap) {
        for (rows, cols) in [(0..40, 0..30), (5..6, 7..8), (18..33, 2..19)] {
            let block = Block { rows, cols };
            let (mut xs, mut ys) = (vec![0.0; block.len()], vec![0.0; block.len()]);
            let got = map.block_coords(&block, &mut xs, &mut ys);
            let (mut want_x, mut want_y) = (Vec::new(), Vec::new());
            for y in block.rows.clone() {
                for x in block.cols.clone() {
                    let (px, py) = map.map(x as f64, y as f64);
                    want_x.push(px);
                    want_y.push(py);
                }
            }
            let same = |a: &[f64], b: &[f64]| {
                a.iter()
                    .zip(b)
                    .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
            };
            assert!(same(&xs, &want_x) && same(&ys, &want_y), "{block:?}");
            let want = bounds(&want_x, &want_y);
            assert!(
                want.is_some() || block.len() == 1,
                "{block:?}: no valid pixel"
            );
            assert_eq!(
                got.map(|b| (b.x, b.y)),
                want.map(|b| (b.x, b.y)),
                "{block:?}"
            );
        }
    }

    /// Linear planes rotated against each other (the per-pixel linear loop).
    #[test]
    fn linear_blocks_equal_the_per_pixel_map() {
        let out = Wcs::from_header_str(
            "CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = 3.3\nCRPIX2 = 2\nPC1_1 = 0.9\n\
             PC1_2 = -0.43\nPC2_1 = 0.43\nPC2_2 = 0.9\n",
        )
        .unwrap();
        let inp = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\nCRPIX1 = -4\n").unwrap();
        let map = CoordinateMap::new(&out, &inp, true, (23, 17)).unwrap();
        assert!(map.forward.is_linear() && !map.forward.is_separable());
        assert_blocks_equal_the_per_pixel_map(&map);
    }

    /// Separable blocks (linear planes with diagonal matrices, a logarithmic axis, units)
    /// give the per-pixel map's positions bit for bit, and its bounds.
    #[test]
    fn separable_blocks_equal_the_per_pixel_map() {
        let out = Wcs::from_header_str(
            "CTYPE1 = 'X'\nCUNIT1 = 'km'\nCTYPE2 = 'WAVE-LOG'\nCRPIX1 = 3.3\nCRPIX2 = 2\n\
             CRVAL1 = 0.5\nCRVAL2 = 5E-7\nCDELT1 = 0.0011\nCDELT2 = 1.3E-9\n",
        )
        .unwrap();
        let inp = Wcs::from_header_str(
            "CTYPE1 = 'X'\nCUNIT1 = 'm'\nCTYPE2 = 'WAVE-LOG'\nCRPIX1 = 1\nCRPIX2 = 1\n\
             CRVAL1 = 499\nCRVAL2 = 5.002E-7\nPC1_1 = 1.0\nPC2_2 = 1E-9\n",
        )
        .unwrap();
        let map = CoordinateMap::new(&out, &inp, true, (23, 17)).unwrap();
        assert!(map.forward.is_separable());
        assert_blocks_equal_the_per_pixel_map(&map);
    }

    /// A TAN WCS at `crval`, rotated by `rot` degrees, of `cdelt` degrees a pixel.
    fn tan(crval: (f64, f64), rot: f64, cdelt: f64) -> Wcs {
        let (s, c) = rot.to_radians().sin_cos();
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 40.5\nCRPIX2 = 30.5\n\
             CRVAL1 = {}\nCRVAL2 = {}\nCD1_1 = {}\nCD1_2 = {}\nCD2_1 = {}\nCD2_2 = {}\n",
            crval.0,
            crval.1,
            -cdelt * c,
            cdelt * s,
            cdelt * s,
            cdelt * c
        ))
        .unwrap()
    }

    /// The bounds of a block's corners hold the input position of every valid pixel of the
    /// block (what the GPU's windows of resident planes rely on), for a rotated and scaled
    /// TAN pair, blocks inside, across and outside the input; other maps have none.
    #[test]
    fn corner_bounds_hold_every_pixel_of_a_homography_block() {
        let (out, inp) = (
            tan((150.02, 30.01), 12.0, 1.05e-3),
            tan((150.0, 30.0), 0.0, 1e-3),
        );
        let map = CoordinateMap::new(&out, &inp, true, (60, 80)).unwrap();
        for (rows, cols) in [
            (0..7, 0..9),
            (20..45, 30..95),
            (50..61, 70..130),
            (0..1, 5..6),
        ] {
            let block = Block { rows, cols };
            let (mut xs, mut ys) = (vec![0.0; block.len()], vec![0.0; block.len()]);
            let corners = map.corner_bounds(&block).expect("a homography");
            if let Some(b) = map.block_coords(&block, &mut xs, &mut ys) {
                let eps = 1e-9;
                assert!(
                    corners.x.0 <= b.x.0 + eps && b.x.1 <= corners.x.1 + eps,
                    "{block:?}"
                );
                assert!(
                    corners.y.0 <= b.y.0 + eps && b.y.1 <= corners.y.1 + eps,
                    "{block:?}"
                );
            }
        }
        let linear = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\n").unwrap();
        let map = CoordinateMap::new(&linear, &linear, true, (5, 5)).unwrap();
        let block = Block {
            rows: 0..2,
            cols: 0..2,
        };
        assert!(map.corner_bounds(&block).is_none());
    }

    /// The homography rows (AVX2 groups of four plus the scalar tail) against the scalar
    /// formula written out here, bit for bit, for rotated and tilted TAN pairs, blocks of
    /// every width from 1 to 13 and a wide one, and rows that leave the input.
    #[test]
    fn homography_rows_equal_the_scalar_formula_bit_for_bit() {
        let pairs = [
            (
                tan((150.0, 30.0), 30.0, 1e-3),
                tan((150.01, 30.02), 0.0, 1.1e-3),
            ),
            (
                tan((10.0, 89.9), -75.0, 2e-2),
                tan((190.0, 89.8), 10.0, 1.5e-2),
            ),
            (tan((0.0, 0.0), 0.0, 0.9), tan((30.0, 20.0), 45.0, 0.7)),
        ];
        // On x86-64 (CI included) the AVX2 loop must run, so that the comparison is not
        // of the scalar loop with itself: it fills every whole group of four of each row.
        #[cfg(target_arch = "x86_64")]
        assert!(
            std::arch::is_x86_feature_detected!("avx2"),
            "this x86-64 CPU has no AVX2: the AVX2 homography loop cannot be tested here"
        );
        let vector_expected = cfg!(target_arch = "x86_64");
        let (mut compared, mut groups) = (0, 0);
        let before = AVX2_PIXELS.with(|c| c.get());
        for (out, inp) in &pairs {
            let shape_in = (60, 80);
            let map = CoordinateMap::new(out, inp, true, shape_in).unwrap();
            let h = map
                .forward
                .homography()
                .expect("TAN pairs use the homography");
            let (x_hi, y_hi) = (shape_in.1 as f64 - 0.5, shape_in.0 as f64 - 0.5);
            for width in (1..=13).chain([200]) {
                for x0 in [0usize, 3, 37] {
                    let block = Block {
                        rows: 5..12,
                        cols: x0..x0 + width,
                    };
                    let (mut xs, mut ys) = (vec![0.0; block.len()], vec![0.0; block.len()]);
                    map.block_coords(&block, &mut xs, &mut ys);
                    groups += block.rows.len() * (width / 4 * 4);
                    for (r, row) in block.rows.clone().enumerate() {
                        let y = row as f64;
                        let (cw, ca, cb) = (
                            h[2][1] * y + h[2][2],
                            h[0][1] * y + h[0][2],
                            h[1][1] * y + h[1][2],
                        );
                        for (i, col) in block.cols.clone().enumerate() {
                            let x = col as f64;
                            let w = h[2][0] * x + cw;
                            let inv_w = 1.0 / w;
                            let a = (h[0][0] * x + ca) * inv_w;
                            let b = (h[1][0] * x + cb) * inv_w;
                            let ok =
                                (w > 0.0) & (a >= -0.5) & (a < x_hi) & (b >= -0.5) & (b < y_hi);
                            let k = r * width + i;
                            let (ea, eb) = if ok { (a, b) } else { (f64::NAN, f64::NAN) };
                            assert_eq!(xs[k].to_bits(), ea.to_bits(), "x at ({row}, {col})");
                            assert_eq!(ys[k].to_bits(), eb.to_bits(), "y at ({row}, {col})");
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert!(compared > 15_000, "{compared}");
        let vector = AVX2_PIXELS.with(|c| c.get()) - before;
        println!("{vector} of {compared} positions from the AVX2 loop");
        assert_eq!(
            vector,
            if vector_expected { groups } else { 0 },
            "pixels from the AVX2 loop"
        );
    }
}

//! Input-pixel coordinates of a block of output pixels, with reproject's round-trip check.

use super::blocks::Block;
use crate::error::Result;
use crate::pixel_transform::PixelTransform;
use crate::wcs::Wcs;

/// Output pixel → input pixel for whole blocks.
///
/// With `roundtrip` (reproject's `roundtrip_coords=True`, the default) every input position is
/// mapped back to the output grid, and a pixel that lands more than one output pixel away
/// from where it started (on either axis) is dropped: that only happens where a projection is
/// not one-to-one. A point whose way back fails altogether is kept, as in reproject (its
/// comparison with NaN is false).
///
/// ```
/// use reproject::engine::{blocks::Block, coords::CoordinateMap};
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 10\nCRVAL2 = 20\nCDELT1 = -0.01\nCDELT2 = 0.01\n").unwrap();
/// let map = CoordinateMap::new(&wcs, &wcs, true).unwrap();
/// let block = Block { rows: 0..2, cols: 0..3 };
/// let (mut x, mut y) = (vec![0.0; 6], vec![0.0; 6]);
/// map.block_coords(&block, &mut x, &mut y);
/// assert!((x[5] - 2.0).abs() < 1e-9 && (y[5] - 1.0).abs() < 1e-9);
/// ```
#[derive(Debug, Clone)]
pub struct CoordinateMap {
    forward: PixelTransform,
    backward: Option<PixelTransform>,
}

impl CoordinateMap {
    /// The map from `wcs_out` pixels to `wcs_in` pixels, with or without the round-trip check.
    pub fn new(wcs_out: &Wcs, wcs_in: &Wcs, roundtrip: bool) -> Result<CoordinateMap> {
        Ok(CoordinateMap {
            forward: PixelTransform::new(wcs_out, wcs_in)?,
            backward: if roundtrip {
                Some(PixelTransform::new(wcs_in, wcs_out)?)
            } else {
                None
            },
        })
    }

    /// Whether the exact homography is in use.
    pub fn is_homography(&self) -> bool {
        self.forward.is_homography()
    }

    /// The input position of one output pixel (`x` column, `y` row), NaN if it has none.
    #[inline]
    pub fn map(&self, x: f64, y: f64) -> (f64, f64) {
        let Some((px, py)) = self.forward.map(x, y) else {
            return (f64::NAN, f64::NAN);
        };
        if let Some(back) = &self.backward {
            if let Some((bx, by)) = back.map(px, py) {
                if (bx - x).abs() > 1.0 || (by - y).abs() > 1.0 {
                    return (f64::NAN, f64::NAN);
                }
            }
        }
        (px, py)
    }

    /// Input columns `xs` and rows `ys` for every pixel of `block`, row-major.
    ///
    /// # Panics
    /// If `xs` or `ys` is shorter than the block.
    pub fn block_coords(&self, block: &Block, xs: &mut [f64], ys: &mut [f64]) {
        let width = block.cols.len();
        for (r, row) in block.rows.clone().enumerate() {
            let y = row as f64;
            let xs = &mut xs[r * width..(r + 1) * width];
            let ys = &mut ys[r * width..(r + 1) * width];
            for ((c, px), py) in block.cols.clone().zip(xs.iter_mut()).zip(ys.iter_mut()) {
                (*px, *py) = self.map(c as f64, y);
            }
        }
    }
}

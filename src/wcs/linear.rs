//! The linear part of the WCS (WCSLIB `lin.c`): pixel → intermediate world coordinates.
//!
//! `x_i = Σ_j CDELT_i · PC_ij · (p_j − CRPIX_j)` with FITS 1-based pixels `p`. The public API
//! is 0-based, so `p = pixel + 1`. Matrix terms that are exactly zero are skipped, so a NaN on
//! one uncoupled axis does not leak into the others (lin.c `linp2x`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An N-dimensional linear transformation with its inverse.
///
/// ```
/// use reproject::wcs::linear::Linear;
/// let lin = Linear::new(
///     vec![10.0, 20.0],
///     vec![-0.5, 0.5],
///     vec![vec![1.0, 0.0], vec![0.0, 1.0]],
/// )
/// .unwrap();
/// let mut img = [0.0; 2];
/// lin.pix_to_img(&[9.0, 19.0], &mut img);   // 0-based (9, 19) is CRPIX
/// assert_eq!(img, [0.0, 0.0]);
/// let mut pix = [0.0; 2];
/// lin.img_to_pix(&[1.0, 1.0], &mut pix);
/// assert_eq!(pix, [7.0, 21.0]);
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Linear {
    crpix: Vec<f64>,
    /// `CDELT_i · PC_ij`, row-major.
    piximg: Vec<f64>,
    /// Inverse of `piximg`, row-major.
    imgpix: Vec<f64>,
    /// CDELT when PC is the unit matrix: WCSLIB then divides by CDELT on the way back
    /// (`linx2p`'s "simple" case) instead of multiplying by the inverse matrix.
    unity_cdelt: Option<Vec<f64>>,
}

impl Linear {
    /// Builds the transformation from CRPIX (1-based), CDELT and the PC matrix (`pc[i][j]`).
    ///
    /// ```
    /// use reproject::{wcs::linear::Linear, Error};
    /// let pc = vec![vec![1.0, 0.5], vec![0.0, 1.0]];
    /// let lin = Linear::new(vec![1.0, 1.0], vec![2.0, 3.0], pc)?;
    /// assert_eq!(lin.matrix(), &[2.0, 1.0, 0.0, 3.0]); // CDELT_i · PC_ij
    /// let singular = vec![vec![1.0, 2.0], vec![2.0, 4.0]];
    /// let err = Linear::new(vec![1.0, 1.0], vec![1.0, 1.0], singular).unwrap_err();
    /// assert!(matches!(err, Error::SingularMatrix));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(crpix: Vec<f64>, cdelt: Vec<f64>, pc: Vec<Vec<f64>>) -> Result<Linear> {
        let n = crpix.len();
        if cdelt.len() != n || pc.len() != n || pc.iter().any(|row| row.len() != n) {
            return Err(Error::ShapeMismatch(format!(
                "linear transformation of {n} axes needs {n} CDELT and an {n}x{n} PC matrix"
            )));
        }
        let mut piximg = Vec::with_capacity(n * n);
        for (i, row) in pc.iter().enumerate() {
            piximg.extend(row.iter().map(|&v| cdelt[i] * v));
        }
        if piximg.iter().chain(&crpix).any(|v| !v.is_finite()) {
            return Err(Error::InvalidValue {
                keyword: "CRPIX/CDELT/PC/CD".into(),
                reason: "not a finite number".into(),
            });
        }
        let imgpix = invert(&piximg, n).ok_or(Error::SingularMatrix)?;
        let unity = pc.iter().enumerate().all(|(i, row)| {
            row.iter()
                .enumerate()
                .all(|(j, &v)| v == if i == j { 1.0 } else { 0.0 })
        });
        Ok(Linear {
            crpix,
            piximg,
            imgpix,
            unity_cdelt: unity.then_some(cdelt),
        })
    }

    /// Number of axes.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let unit = vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]];
    /// let lin = Linear::new(vec![1.0; 3], vec![1.0; 3], unit)?;
    /// assert_eq!(lin.naxis(), 3);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn naxis(&self) -> usize {
        self.crpix.len()
    }

    /// CRPIX (1-based).
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    /// let lin = Linear::new(vec![10.0, 20.0], vec![1.0, 1.0], pc)?;
    /// assert_eq!(lin.crpix(), &[10.0, 20.0]);
    /// let mut pix = [0.0; 2];
    /// lin.img_to_pix(&[0.0, 0.0], &mut pix);
    /// assert_eq!(pix, [9.0, 19.0]); // CRPIX is 1-based, the pixel 0-based
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn crpix(&self) -> &[f64] {
        &self.crpix
    }

    /// The matrix `CDELT · PC`, row-major.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![0.0, 1.0], vec![-1.0, 0.0]];
    /// let lin = Linear::new(vec![1.0, 1.0], vec![2.0, 4.0], pc)?;
    /// assert_eq!(lin.matrix(), &[0.0, 2.0, -4.0, 0.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn matrix(&self) -> &[f64] {
        &self.piximg
    }

    /// 0-based pixel → intermediate world coordinates.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    /// let lin = Linear::new(vec![1.0, 1.0], vec![2.0, 3.0], pc)?;
    /// let mut img = [0.0; 2];
    /// lin.pix_to_img(&[4.0, 1.0], &mut img); // FITS pixel (5, 2)
    /// assert_eq!(img, [8.0, 3.0]);
    /// lin.pix_to_img(&[f64::NAN, 1.0], &mut img); // zero terms are skipped: no NaN leak
    /// assert!(img[0].is_nan() && img[1] == 3.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pix_to_img(&self, pix: &[f64], img: &mut [f64]) {
        let n = self.naxis();
        if n == 0 {
            return;
        }
        for (row, out) in self.piximg.chunks_exact(n).zip(img.iter_mut()) {
            let mut sum = 0.0;
            for ((&m, &p), &c) in row.iter().zip(pix).zip(&self.crpix) {
                if m != 0.0 {
                    sum += m * ((p + 1.0) - c);
                }
            }
            *out = sum;
        }
    }

    /// 1-based (FITS) pixel → intermediate world coordinates: the step after a prior
    /// distortion (SIP), which hands over 1-based focal-plane coordinates.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    /// let lin = Linear::new(vec![1.0, 1.0], vec![2.0, 3.0], pc)?;
    /// let (mut a, mut b) = ([0.0; 2], [0.0; 2]);
    /// lin.pix1_to_img(&[5.0, 2.0], &mut a);
    /// lin.pix_to_img(&[4.0, 1.0], &mut b);
    /// assert_eq!((a, b), ([8.0, 3.0], [8.0, 3.0]));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pix1_to_img(&self, pix1: &[f64], img: &mut [f64]) {
        let n = self.naxis();
        if n == 0 {
            return;
        }
        for (row, out) in self.piximg.chunks_exact(n).zip(img.iter_mut()) {
            let mut sum = 0.0;
            for ((&m, &p), &c) in row.iter().zip(pix1).zip(&self.crpix) {
                if m != 0.0 {
                    sum += m * (p - c);
                }
            }
            *out = sum;
        }
    }

    /// Intermediate world coordinates → 0-based pixel.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![0.8, -0.6], vec![0.6, 0.8]];
    /// let lin = Linear::new(vec![12.0, -3.0], vec![-0.01, 0.02], pc)?;
    /// let (mut img, mut pix) = ([0.0; 2], [0.0; 2]);
    /// lin.pix_to_img(&[37.25, 4.5], &mut img);
    /// lin.img_to_pix(&img, &mut pix);
    /// assert!((pix[0] - 37.25).abs() < 1e-12 && (pix[1] - 4.5).abs() < 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn img_to_pix(&self, img: &[f64], pix: &mut [f64]) {
        let n = self.naxis();
        if n == 0 {
            return;
        }
        if let Some(cdelt) = &self.unity_cdelt {
            for (((out, &x), &d), &c) in pix.iter_mut().zip(img).zip(cdelt).zip(&self.crpix) {
                *out = (x / d + c) - 1.0;
            }
            return;
        }
        for ((row, out), &c) in self
            .imgpix
            .chunks_exact(n)
            .zip(pix.iter_mut())
            .zip(&self.crpix)
        {
            let mut sum = 0.0;
            for (&m, &x) in row.iter().zip(img) {
                if m != 0.0 {
                    sum += m * x;
                }
            }
            *out = (sum + c) - 1.0;
        }
    }

    /// The 2-D transformation of two of the axes (e.g. the celestial pair of a cube), valid
    /// when the other pixel axes do not feed them.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![0.0, 0.0, 1.0], vec![0.0, 1.0, 0.0], vec![1.0, 0.0, 0.0]];
    /// let cube = Linear::new(vec![5.0, 6.0, 7.0], vec![1.0, 2.0, 3.0], pc)?;
    /// let pair = cube.sub2(0, 2)?; // axes 1 and 3 feed each other only
    /// assert_eq!(pair.crpix(), [5.0, 7.0]);
    /// assert_eq!(pair.matrix(), [[0.0, 1.0], [3.0, 0.0]]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn sub2(&self, a: usize, b: usize) -> Result<Linear2> {
        let n = self.naxis();
        let crpix = [self.crpix[a], self.crpix[b]];
        if let Some(cdelt) = &self.unity_cdelt {
            return Linear2::unity(crpix, [cdelt[a], cdelt[b]]);
        }
        let m = |i: usize, j: usize| self.piximg[i * n + j];
        Linear2::new(crpix, [[m(a, a), m(a, b)], [m(b, a), m(b, b)]])
    }
}

/// The 2-D linear transformation of a celestial axis pair, the hot path of every transform.
///
/// ```
/// use reproject::wcs::linear::Linear2;
/// let lin = Linear2::new([1.0, 1.0], [[2.0, 0.0], [0.0, 4.0]]).unwrap();
/// assert_eq!(lin.pix_to_img(1.0, 1.0), (2.0, 4.0));
/// assert_eq!(lin.img_to_pix(2.0, 4.0), (1.0, 1.0));
/// ```
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Linear2 {
    crpix: [f64; 2],
    m: [[f64; 2]; 2],
    inv: [[f64; 2]; 2],
    /// CDELT when PC is the unit matrix (WCSLIB's "simple" case, which divides on the way back).
    unity: Option<[f64; 2]>,
}

impl Linear2 {
    /// Builds it from CRPIX (1-based) and the matrix `CDELT · PC`.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::new([1.0, 1.0], [[0.0, -2.0], [2.0, 0.0]])?;
    /// assert_eq!(lin.inverse(), [[0.0, 0.5], [-0.5, 0.0]]);
    /// assert!(Linear2::new([1.0, 1.0], [[1.0, 2.0], [2.0, 4.0]]).is_err()); // singular
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(crpix: [f64; 2], m: [[f64; 2]; 2]) -> Result<Linear2> {
        let flat = [m[0][0], m[0][1], m[1][0], m[1][1]];
        let inv = invert(&flat, 2).ok_or(Error::SingularMatrix)?;
        Ok(Linear2 {
            crpix,
            m,
            inv: [[inv[0], inv[1]], [inv[2], inv[3]]],
            unity: None,
        })
    }

    /// Builds it for a unit PC matrix from CRPIX (1-based) and CDELT.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::unity([1.0, 1.0], [0.25, 0.3]).unwrap();
    /// // WCSLIB divides by CDELT here: 0.3 / 0.3 is exactly 1 (0.3 * (1 / 0.3) is not).
    /// assert_eq!(lin.img_to_pix(0.5, 0.3), (2.0, 1.0));
    /// ```
    pub fn unity(crpix: [f64; 2], cdelt: [f64; 2]) -> Result<Linear2> {
        let mut lin = Linear2::new(crpix, [[cdelt[0], 0.0], [0.0, cdelt[1]]])?;
        lin.unity = Some(cdelt);
        Ok(lin)
    }

    /// CRPIX (1-based).
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::new([10.0, 20.0], [[1.0, 0.0], [0.0, 1.0]])?;
    /// assert_eq!(lin.crpix(), [10.0, 20.0]);
    /// assert_eq!(lin.pix_to_img(9.0, 19.0), (0.0, 0.0)); // 0-based pixel CRPIX - 1
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn crpix(&self) -> [f64; 2] {
        self.crpix
    }

    /// The matrix `CDELT · PC`.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear;
    /// let pc = vec![vec![0.8, -0.6], vec![0.6, 0.8]];
    /// let lin = Linear::new(vec![1.0, 1.0], vec![2.0, 3.0], pc)?.sub2(0, 1)?;
    /// assert_eq!(lin.matrix(), [[2.0 * 0.8, 2.0 * -0.6], [3.0 * 0.6, 3.0 * 0.8]]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn matrix(&self) -> [[f64; 2]; 2] {
        self.m
    }

    /// The inverse matrix.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::new([1.0, 1.0], [[0.3, -0.1], [0.2, 0.5]])?;
    /// let (m, inv) = (lin.matrix(), lin.inverse());
    /// for i in 0..2 {
    ///     for j in 0..2 {
    ///         let mij = m[i][0] * inv[0][j] + m[i][1] * inv[1][j];
    ///         assert!((mij - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
    ///     }
    /// }
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn inverse(&self) -> [[f64; 2]; 2] {
        self.inv
    }

    /// CDELT when PC is the unit matrix (pixels are then found by division), for the GPU.
    pub(crate) fn unity_cdelt(&self) -> Option<[f64; 2]> {
        self.unity
    }

    /// 0-based pixel → intermediate world coordinates (degrees).
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::new([1.0, 1.0], [[2.0, 0.0], [0.0, 3.0]])?;
    /// assert_eq!(lin.pix_to_img(0.0, 0.0), (0.0, 0.0)); // 0-based (0, 0) is FITS (1, 1)
    /// assert_eq!(lin.pix_to_img(4.0, 1.0), (8.0, 3.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn pix_to_img(&self, x: f64, y: f64) -> (f64, f64) {
        self.pix1_to_img(x + 1.0, y + 1.0)
    }

    /// 1-based (FITS) pixel → intermediate world coordinates; after SIP, whose focal-plane
    /// coordinates are 1-based, this is the exact arithmetic of astropy + WCSLIB.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::new([1.0, 1.0], [[2.0, 0.0], [0.0, 3.0]])?;
    /// assert_eq!(lin.pix1_to_img(5.0, 2.0), (8.0, 3.0));
    /// assert_eq!(lin.pix1_to_img(5.0, 2.0), lin.pix_to_img(4.0, 1.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn pix1_to_img(&self, p1: f64, p2: f64) -> (f64, f64) {
        let u = p1 - self.crpix[0];
        let v = p2 - self.crpix[1];
        (
            mul_skip_zero(self.m[0], u, v),
            mul_skip_zero(self.m[1], u, v),
        )
    }

    /// Intermediate world coordinates → 0-based pixel.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// let lin = Linear2::new([12.0, -3.0], [[-0.008, 0.006], [0.012, 0.016]])?;
    /// let (u, v) = lin.pix_to_img(37.25, 4.5);
    /// let (x, y) = lin.img_to_pix(u, v);
    /// assert!((x - 37.25).abs() < 1e-12 && (y - 4.5).abs() < 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn img_to_pix(&self, u: f64, v: f64) -> (f64, f64) {
        if let Some(cdelt) = self.unity {
            return (
                (u / cdelt[0] + self.crpix[0]) - 1.0,
                (v / cdelt[1] + self.crpix[1]) - 1.0,
            );
        }
        (
            (mul_skip_zero(self.inv[0], u, v) + self.crpix[0]) - 1.0,
            (mul_skip_zero(self.inv[1], u, v) + self.crpix[1]) - 1.0,
        )
    }
}

/// The 2-D linear step of a WCS with a *sequent* distortion (TPV) between the matrix and the
/// scale, as lin.c orders it when `disseq` is set: `t = PC·(p − CRPIX)`, then the distortion,
/// then `× CDELT`. Unlike the affine case, no term is skipped (lin.c sums from 0.0).
///
/// ```
/// use reproject::wcs::linear::SequentLinear2;
/// let lin = SequentLinear2::new([1.0, 1.0], [[0.0, 1.0], [1.0, 0.0]], [2.0, 3.0]).unwrap();
/// assert_eq!(lin.pix1_to_pc(3.0, 5.0), (4.0, 2.0));
/// assert_eq!(lin.pc_to_pix1(4.0, 2.0), (3.0, 5.0));
/// assert_eq!(lin.scale(1.0, 1.0), (2.0, 3.0));
/// ```
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct SequentLinear2 {
    crpix: [f64; 2],
    pc: [[f64; 2]; 2],
    pc_inv: [[f64; 2]; 2],
    cdelt: [f64; 2],
}

impl SequentLinear2 {
    /// Builds it from CRPIX (1-based), the PC matrix (the CD matrix when CD is used) and CDELT.
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], [0.5, 0.25])?;
    /// assert_eq!(lin.scale(4.0, 4.0), (2.0, 1.0));
    /// // A zero CDELT cannot be undone.
    /// assert!(SequentLinear2::new([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], [0.0, 1.0]).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(crpix: [f64; 2], pc: [[f64; 2]; 2], cdelt: [f64; 2]) -> Result<SequentLinear2> {
        if cdelt.contains(&0.0) {
            return Err(Error::SingularMatrix);
        }
        let inv =
            invert(&[pc[0][0], pc[0][1], pc[1][0], pc[1][1]], 2).ok_or(Error::SingularMatrix)?;
        Ok(SequentLinear2 {
            crpix,
            pc,
            pc_inv: [[inv[0], inv[1]], [inv[2], inv[3]]],
            cdelt,
        })
    }

    /// CRPIX (1-based).
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([10.0, 20.0], [[1.0, 0.0], [0.0, 1.0]], [0.5, 0.5])?;
    /// assert_eq!(lin.crpix(), [10.0, 20.0]);
    /// assert_eq!(lin.pix1_to_pc(10.0, 20.0), (0.0, 0.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn crpix(&self) -> [f64; 2] {
        self.crpix
    }

    /// The PC matrix (without CDELT).
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let pc = [[0.0, 1.0], [-1.0, 0.0]];
    /// let lin = SequentLinear2::new([1.0, 1.0], pc, [2.0, 3.0])?;
    /// assert_eq!(lin.pc(), pc); // CDELT is kept apart
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pc(&self) -> [[f64; 2]; 2] {
        self.pc
    }

    /// CDELT.
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([1.0, 1.0], [[0.0, 1.0], [-1.0, 0.0]], [2.0, 3.0])?;
    /// assert_eq!(lin.cdelt(), [2.0, 3.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn cdelt(&self) -> [f64; 2] {
        self.cdelt
    }

    /// The inverse of PC, for the GPU encoder.
    pub(crate) fn pc_inverse(&self) -> [[f64; 2]; 2] {
        self.pc_inv
    }

    /// 1-based pixel → `PC·(p − CRPIX)` (linp2x before `disseq`).
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([1.0, 2.0], [[1.0, 0.5], [0.0, 1.0]], [2.0, 3.0])?;
    /// // PC · (p - CRPIX), without CDELT: (1 · 2 + 0.5 · 4, 1 · 4)
    /// assert_eq!(lin.pix1_to_pc(3.0, 6.0), (4.0, 4.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn pix1_to_pc(&self, p1: f64, p2: f64) -> (f64, f64) {
        let t0 = p1 - self.crpix[0];
        let t1 = p2 - self.crpix[1];
        (
            (0.0 + self.pc[0][0] * t0) + self.pc[0][1] * t1,
            (0.0 + self.pc[1][0] * t0) + self.pc[1][1] * t1,
        )
    }

    /// Distorted `PC·(p − CRPIX)` → intermediate coordinates (`× CDELT`).
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], [2.0, -0.5])?;
    /// assert_eq!(lin.scale(3.0, 4.0), (6.0, -2.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn scale(&self, d0: f64, d1: f64) -> (f64, f64) {
        (self.cdelt[0] * d0, self.cdelt[1] * d1)
    }

    /// Intermediate coordinates → distorted `PC·(p − CRPIX)` (`/ CDELT`, linx2p).
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], [0.3, -0.5])?;
    /// assert_eq!(lin.unscale(0.3, -2.0), (1.0, 4.0)); // a division: 0.3 / 0.3 is exactly 1
    /// let (u, v) = lin.scale(3.0, 4.0);
    /// assert_eq!(lin.unscale(u, v), (3.0, 4.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn unscale(&self, u: f64, v: f64) -> (f64, f64) {
        (u / self.cdelt[0], v / self.cdelt[1])
    }

    /// Undistorted `PC·(p − CRPIX)` → 1-based pixel (linx2p after `disx2p`).
    ///
    /// ```
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([12.0, -3.0], [[0.8, -0.6], [0.6, 0.8]], [2.0, 3.0])?;
    /// let (t0, t1) = lin.pix1_to_pc(37.25, 4.5);
    /// let (p1, p2) = lin.pc_to_pix1(t0, t1);
    /// assert!((p1 - 37.25).abs() < 1e-12 && (p2 - 4.5).abs() < 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(always)]
    pub fn pc_to_pix1(&self, t0: f64, t1: f64) -> (f64, f64) {
        (
            (self.crpix[0] + self.pc_inv[0][0] * t0) + self.pc_inv[0][1] * t1,
            (self.crpix[1] + self.pc_inv[1][0] * t0) + self.pc_inv[1][1] * t1,
        )
    }
}

#[inline(always)]
fn mul_skip_zero(row: [f64; 2], u: f64, v: f64) -> f64 {
    let a = if row[0] != 0.0 { row[0] * u } else { 0.0 };
    if row[1] != 0.0 {
        a + row[1] * v
    } else {
        a
    }
}

/// Inverts an n×n row-major matrix as WCSLIB's `matinv` does (LU factorisation with scaled
/// partial pivoting, then forward and backward substitution per column), so that the inverse,
/// and every world → pixel result built on it, is bit-identical to astropy's. `None` if the
/// matrix is singular (WCSLIB only catches an all-zero row; a matrix whose inverse is not
/// finite is refused here too).
fn invert(mat: &[f64], n: usize) -> Option<Vec<f64>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let mut lu = mat.to_vec();
    let mut rowmax: Vec<f64> = lu
        .chunks_exact(n)
        .map(|row| {
            row.iter()
                .fold(0.0f64, |m, v| if v.abs() > m { v.abs() } else { m })
        })
        .collect();
    if rowmax.contains(&0.0) {
        return None;
    }
    // mxl[i]: the row of `mat` that became row i of `lu`.
    let mut mxl: Vec<usize> = (0..n).collect();
    for k in 0..n {
        let mut pivot = k;
        let mut colmax = lu[k * n + k].abs() / rowmax[k];
        for i in k + 1..n {
            let d = lu[i * n + k].abs() / rowmax[i];
            if d > colmax {
                colmax = d;
                pivot = i;
            }
        }
        if pivot > k {
            for j in 0..n {
                lu.swap(pivot * n + j, k * n + j);
            }
            rowmax.swap(pivot, k);
            mxl.swap(pivot, k);
        }
        for i in k + 1..n {
            let ik = i * n + k;
            if lu[ik] != 0.0 {
                lu[ik] /= lu[k * n + k];
                for j in k + 1..n {
                    lu[i * n + j] -= lu[ik] * lu[k * n + j];
                }
            }
        }
    }
    // lxm[i]: the row of `lu` holding row i of `mat`.
    let mut lxm = vec![0; n];
    for (i, &m) in mxl.iter().enumerate() {
        lxm[m] = i;
    }
    let mut inv = vec![0.0; n * n];
    for k in 0..n {
        inv[lxm[k] * n + k] = 1.0;
        for i in lxm[k] + 1..n {
            for j in lxm[k]..i {
                inv[i * n + k] -= lu[i * n + j] * inv[j * n + k];
            }
        }
        for i in (0..n).rev() {
            for j in i + 1..n {
                inv[i * n + k] -= lu[i * n + j] * inv[j * n + k];
            }
            inv[i * n + k] /= lu[i * n + i];
        }
    }
    inv.iter().all(|v| v.is_finite()).then_some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_rotation() {
        let (s, c) = 0.3f64.sin_cos();
        let inv = invert(&[c, -s, s, c], 2).unwrap();
        for (a, b) in inv.iter().zip([c, s, -s, c]) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    #[test]
    fn singular_is_rejected() {
        assert!(invert(&[1.0, 2.0, 2.0, 4.0], 2).is_none());
        assert!(matches!(
            Linear2::new([0.0, 0.0], [[0.0, 0.0], [0.0, 1.0]]),
            Err(Error::SingularMatrix)
        ));
    }

    #[test]
    fn nan_on_uncoupled_axis_does_not_leak() {
        let lin = Linear2::new([1.0, 1.0], [[2.0, 0.0], [0.0, 3.0]]).unwrap();
        let (u, v) = lin.pix_to_img(f64::NAN, 1.0);
        assert!(u.is_nan());
        assert_eq!(v, 3.0);
    }
}

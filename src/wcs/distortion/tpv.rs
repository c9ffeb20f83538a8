//! TPV distortion, as WCSLIB implements it (`dis.c`: `tpvset`, the `tpd1`..`tpd7` polynomials,
//! `disx2p`; `wcs.c` `wcsset` for the translation of `CTYPE = '-TPV'`).
//!
//! TPV is a *sequent* distortion: it acts on the intermediate coordinates after PC (or CD) and
//! before CDELT. Each celestial axis has its own polynomial, whose coefficients are the `PVi_m`
//! of that axis (m = 0..39; missing ones are 0, `PVi_1` included). WCSLIB's axis map is fixed:
//! the longitude polynomial is evaluated on (x₁, x₂) and the latitude polynomial on (x₂, x₁),
//! x₁ and x₂ being the first and second celestial axes in header order. For the usual
//! longitude-first header that is (ξ, η) and (η, ξ):
//!
//! ```text
//! ξ' = Σ_k PV1_k T_k(ξ, η),   η' = Σ_k PV2_k T_k(η, ξ)
//! T: 0:1 1:x 2:y 3:r 4:x² 5:xy 6:y² 7:x³ 8:x²y 9:xy² 10:y³ 11:r³ 12..16:x⁴..y⁴
//!    17..22:x⁵..y⁵ 23:r⁵ 24..30:x⁶..y⁶ 31..38:x⁷..y⁷ 39:r⁷         (r = √(x² + y²))
//! ```
//!
//! There is no closed-form inverse: [`Tpv::undistort`] is WCSLIB's `disx2p` iteration
//! (tolerance 1e-13, relative beyond 1; 30 iterations), and a point where it does not converge
//! has no pixel, where astropy returns NaN.
//!
//! ```
//! use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
//! // ξ' = ξ + 0.01 ξ², η' = η
//! let params = TpvParams { lng: vec![(1, 1.0), (4, 0.01)], lat: vec![(1, 1.0)] };
//! let tpv = Tpv::new(&params).unwrap();
//! assert_eq!(tpv.distort(2.0, 3.0), (2.04, 3.0));
//! let (x, y) = tpv.undistort(2.04, 3.0).unwrap();
//! assert!((x - 2.0).abs() < 1e-13 && (y - 3.0).abs() < 1e-13);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The highest TPV term number (`PVi_39`, the r⁷ term).
///
/// ```
/// use reproject::wcs::distortion::tpv::{TpvPolynomial, TPV_MAX_TERM};
/// assert_eq!(TpvPolynomial::new(&[(TPV_MAX_TERM, 1.0)])?.degree(), 7);
/// assert!(TpvPolynomial::new(&[(TPV_MAX_TERM + 1, 1.0)]).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub const TPV_MAX_TERM: usize = 39;

/// WCSLIB `disx2p` convergence tolerance.
const TOL: f64 = 1.0e-13;

/// WCSLIB `disx2p` iteration limit (`disitermax`).
const ITERMAX: usize = 30;

/// Index of the coefficient of x^n (pure powers of the axis's own coordinate), n = 0..7.
const X_POW: [usize; 8] = [0, 1, 4, 7, 12, 17, 24, 31];

/// Index of the first term of each degree, so that x^(n−b) y^b is `DEG_START[n] + b`.
const DEG_START: [usize; 8] = [0, 1, 4, 7, 12, 17, 24, 31];

/// The TPV coefficients of a header: `PVi_m` of each celestial axis, as (m, value) in header
/// order. A term listed with value 0 still raises the polynomial degree, as in WCSLIB.
///
/// ```
/// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
/// // The identity terms: PV1_1 = 1 (ξ' = ξ) and PV2_1 = 1 (η' = η).
/// let identity = TpvParams { lng: vec![(1, 1.0)], lat: vec![(1, 1.0)] };
/// assert_eq!(Tpv::new(&identity)?.distort(0.25, -0.5), (0.25, -0.5));
/// // Without them the linear terms are 0, not 1.
/// assert_eq!(Tpv::new(&TpvParams::default())?.distort(0.25, -0.5), (0.0, 0.0));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TpvParams {
    /// `PVi_m` of the longitude axis.
    pub lng: Vec<(usize, f64)>,
    /// `PVi_m` of the latitude axis.
    pub lat: Vec<(usize, f64)>,
}

/// One axis's TPV polynomial (WCSLIB's TPD form: degree and radial flag fixed by the terms
/// present, coefficients zero-filled).
///
/// ```
/// use reproject::wcs::distortion::tpv::TpvPolynomial;
/// // 0.5 + x + 2y + 0.1 r, evaluated at (3, 4) where r = 5.
/// let poly = TpvPolynomial::new(&[(0, 0.5), (1, 1.0), (2, 2.0), (3, 0.1)])?;
/// assert!((poly.eval(3.0, 4.0) - 12.0).abs() < 1e-12);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TpvPolynomial {
    degree: usize,
    radial: bool,
    c: [f64; TPV_MAX_TERM + 1],
}

impl TpvPolynomial {
    /// Builds the polynomial from (term number, coefficient) pairs (`tpvset`).
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::TpvPolynomial;
    /// let xy = TpvPolynomial::new(&[(5, 2.0)])?; // 2·xy; no PVi_1, so no linear term
    /// assert_eq!(xy.eval(3.0, 4.0), 24.0);
    /// assert!(TpvPolynomial::new(&[(1, f64::NAN)]).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(terms: &[(usize, f64)]) -> Result<TpvPolynomial> {
        let mut c = [0.0; TPV_MAX_TERM + 1];
        let mut nparm = 0;
        let mut radial = false;
        for &(k, value) in terms {
            if k > TPV_MAX_TERM {
                return Err(Error::PvOutOfRange {
                    keyword: format!("PV (TPV term {k})"),
                    reason: format!("TPV terms go up to {TPV_MAX_TERM}"),
                });
            }
            if !value.is_finite() {
                return Err(Error::InvalidValue {
                    keyword: format!("PV (TPV term {k})"),
                    reason: "not a finite number".into(),
                });
            }
            nparm = nparm.max(k + 1);
            radial |= matches!(k, 3 | 11 | 23 | 39);
            c[k] = value;
        }
        let degree = match nparm {
            0..=4 => 1,
            5..=7 => 2,
            8..=12 => 3,
            13..=17 => 4,
            18..=24 => 5,
            25..=31 => 6,
            _ => 7,
        };
        Ok(TpvPolynomial { degree, radial, c })
    }

    /// The polynomial degree WCSLIB evaluates (1..7).
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::TpvPolynomial;
    /// assert_eq!(TpvPolynomial::new(&[(1, 1.0)])?.degree(), 1);
    /// // A term listed with value 0 still sets the degree (PVi_12 is x⁴).
    /// assert_eq!(TpvPolynomial::new(&[(1, 1.0), (12, 0.0)])?.degree(), 4);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Whether a radial term is present, and the 40 coefficients, for the GPU encoder.
    pub(crate) fn terms(&self) -> (bool, &[f64; TPV_MAX_TERM + 1]) {
        (self.radial, &self.c)
    }

    /// Coefficient of x^a y^b for a + b = n ≥ 2.
    #[inline(always)]
    fn coeff(&self, a: usize, b: usize) -> f64 {
        self.c[DEG_START[a + b] + b]
    }

    /// `tpdN(u, v)`, with the parenthesisation of dis.c for this degree.
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::TpvPolynomial;
    /// // u + 0.5 u² - 0.25 v² (terms 1, 4 and 6)
    /// let poly = TpvPolynomial::new(&[(1, 1.0), (4, 0.5), (6, -0.25)])?;
    /// assert_eq!(poly.eval(2.0, 4.0), 2.0 + 0.5 * 4.0 - 0.25 * 16.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn eval(&self, u: f64, v: f64) -> f64 {
        // A copy per degree, with the degree a constant the compiler unrolls the sums by; each
        // runs the same operations in the same order, so the results are the same bits.
        match self.degree {
            1 => self.eval_degree(1, u, v),
            2 => self.eval_degree(2, u, v),
            3 => self.eval_degree(3, u, v),
            4 => self.eval_degree(4, u, v),
            5 => self.eval_degree(5, u, v),
            6 => self.eval_degree(6, u, v),
            _ => self.eval_degree(7, u, v),
        }
    }

    /// [`TpvPolynomial::eval`] at degree `n` (`self.degree`).
    #[inline(always)]
    fn eval_degree(&self, n: usize, u: f64, v: f64) -> f64 {
        let p = &self.c;
        // p[0] + u*(p[1] + u*(p[4] + ...))
        let mut h = p[X_POW[n]];
        for k in (1..n).rev() {
            h = p[X_POW[k]] + u * h;
        }
        let mut d = p[0] + u * h;
        if n == 1 {
            d += v * p[2];
        } else {
            // v*(p[2] + v*(p[6] + ...))
            let mut hv = p[DEG_START[n] + n];
            for k in (1..n).rev() {
                hv = p[DEG_START[k] + k] + v * hv;
            }
            // Mixed terms: u*(R0 + u*(R1 + u*(...)))*v, each Ra a Horner sum in v over the
            // terms x^(a+1) y^b, b ≥ 1.
            let row = |a: usize| {
                let top = n - 1 - a;
                let mut t = self.coeff(a + 1, top);
                for b in (1..top).rev() {
                    t = self.coeff(a + 1, b) + v * t;
                }
                t
            };
            let mut y = row(n - 2);
            for a in (0..n - 2).rev() {
                y = row(a) + u * y;
            }
            d += v * hv + u * y * v;
        }
        if self.radial {
            let s = u * u + v * v;
            let r = s.sqrt();
            let rr = match n {
                1 | 2 => p[3],
                3 | 4 => p[3] + s * p[11],
                5 | 6 => p[3] + s * (p[11] + s * p[23]),
                _ => p[3] + s * (p[11] + s * (p[23] + s * p[39])),
            };
            d += r * rr;
        }
        d
    }
}

/// The TPV distortion of a celestial axis pair, in FITS axis order: `poly[0]` belongs to the
/// first of the two celestial axes, `poly[1]` to the second. As in WCSLIB (`wcsset` fills
/// the axis maps with the fixed axis numbers 1 and 2), the longitude polynomial takes
/// (x0, x1) and the latitude polynomial (x1, x0), whichever axis comes first.
///
/// ```
/// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
/// // ξ' = ξ + 0.5 η, η' = η + 0.25 ξ (term 2 is the *other* coordinate for each axis).
/// let params = TpvParams { lng: vec![(1, 1.0), (2, 0.5)], lat: vec![(1, 1.0), (2, 0.25)] };
/// let tpv = Tpv::new(&params)?;
/// assert_eq!(tpv.distort(2.0, 4.0), (4.0, 4.5));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Tpv {
    poly: [TpvPolynomial; 2],
    lat_first: bool,
}

impl Tpv {
    /// TPV for a WCS whose longitude axis comes first (`RA---TPV`, `DEC--TPV`).
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
    /// let params = TpvParams { lng: vec![(1, 1.0), (2, 0.5)], lat: vec![(1, 1.0)] };
    /// let tpv = Tpv::new(&params)?;
    /// assert_eq!(tpv, Tpv::in_axis_order(&params, false)?);
    /// assert_eq!(tpv.distort(2.0, 4.0), (4.0, 4.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(params: &TpvParams) -> Result<Tpv> {
        Tpv::in_axis_order(params, false)
    }

    /// TPV in FITS axis order; `lat_first` when the latitude axis precedes the longitude axis.
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
    /// let params = TpvParams { lng: vec![(1, 1.0), (2, 0.5)], lat: vec![(1, 1.0), (2, 0.25)] };
    /// // x0 = latitude = 4, x1 = longitude = 2: longitude still takes (x0, x1), latitude (x1, x0).
    /// let tpv = Tpv::in_axis_order(&params, true)?;
    /// assert_eq!(tpv.distort(4.0, 2.0), (2.0 + 0.25 * 4.0, 4.0 + 0.5 * 2.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn in_axis_order(params: &TpvParams, lat_first: bool) -> Result<Tpv> {
        let lng = TpvPolynomial::new(&params.lng)?;
        let lat = TpvPolynomial::new(&params.lat)?;
        Ok(Tpv {
            poly: if lat_first { [lat, lng] } else { [lng, lat] },
            lat_first,
        })
    }

    /// The two polynomials, in axis order.
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
    /// let params = TpvParams { lng: vec![(1, 1.0), (7, 1e-3)], lat: vec![(1, 1.0)] };
    /// let [first, second] = Tpv::in_axis_order(&params, true)?.polynomials().clone();
    /// assert_eq!((first.degree(), second.degree()), (1, 3)); // latitude first
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn polynomials(&self) -> &[TpvPolynomial; 2] {
        &self.poly
    }

    /// Whether the polynomials are in (latitude, longitude) order, for the GPU encoder.
    pub(crate) fn lat_first(&self) -> bool {
        self.lat_first
    }

    /// Distorted coordinates (WCSLIB `disp2x` for TPV, which computes them directly).
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
    /// // ξ' = ξ + 0.01 ξ², η' = η − 0.01 η³ (terms 4 and 7 are x² and x³ of each axis).
    /// let params = TpvParams { lng: vec![(1, 1.0), (4, 0.01)], lat: vec![(1, 1.0), (7, -0.01)] };
    /// let (xi, eta) = Tpv::new(&params)?.distort(2.0, 3.0);
    /// assert!((xi - 2.04).abs() < 1e-12 && (eta - 2.73).abs() < 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn distort(&self, x0: f64, x1: f64) -> (f64, f64) {
        if self.lat_first {
            (self.poly[0].eval(x1, x0), self.poly[1].eval(x0, x1))
        } else {
            (self.poly[0].eval(x0, x1), self.poly[1].eval(x1, x0))
        }
    }

    /// WCSLIB `disx2p`: the coordinates whose distortion is (d0, d1); `None` when the iteration
    /// does not converge in 30 steps or the result is not finite.
    ///
    /// ```
    /// use reproject::wcs::distortion::tpv::{Tpv, TpvParams};
    /// let cubic = TpvParams { lng: vec![(1, 1.0), (7, -1.0)], lat: vec![(1, 1.0)] }; // ξ − ξ³
    /// let tpv = Tpv::new(&cubic)?;
    /// let (x, y) = tpv.undistort(0.3 - 0.027, 0.1).unwrap();
    /// assert!((x - 0.3).abs() < 1e-12 && (y - 0.1).abs() < 1e-15);
    /// let square = TpvParams { lng: vec![(4, 1.0)], lat: vec![(1, 1.0)] }; // ξ' = ξ² ≥ 0
    /// assert_eq!(Tpv::new(&square)?.undistort(-1.0, 0.1), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn undistort(&self, d0: f64, d1: f64) -> Option<(f64, f64)> {
        let dis = [d0, d1];
        let mut raw = dis;
        let mut convergence = false;
        for iter in 0..ITERMAX {
            let dcrd0 = self.distort_arr(raw);
            convergence = true;
            let mut delta = [0.0; 2];
            for j in 0..2 {
                delta[j] = dis[j] - dcrd0[j];
                let dd = if dis[j].abs() < 1.0 {
                    delta[j]
                } else {
                    // TOL may be below the precision of the subtraction: relative tolerance.
                    delta[j] / dis[j]
                };
                // (A NaN counts as converged, as in C.)
                if TOL < dd.abs() {
                    convergence = false;
                }
            }
            if convergence {
                break;
            }
            // A test point for the gradient, displacement constrained to [1e-6, 1].
            for d in &mut delta {
                *d /= 2.0;
                if d.abs() < 1.0e-6 {
                    *d = if *d < 0.0 { -1.0e-6 } else { 1.0e-6 };
                } else if 1.0 < d.abs() {
                    *d = if *d < 0.0 { -1.0 } else { 1.0 };
                }
            }
            if iter < ITERMAX / 2 {
                // Separable to first order: one test point for both axes.
                let rcrd1 = [raw[0] + delta[0], raw[1] + delta[1]];
                let dcrd1 = self.distort_arr(rcrd1);
                for j in 0..2 {
                    raw[j] += (dis[j] - dcrd0[j]) * (delta[j] / (dcrd1[j] - dcrd0[j]));
                }
            } else {
                // Slow: the diagonal of the full gradient, one axis at a time.
                let mut rcrd1 = raw;
                for j in 0..2 {
                    rcrd1[j] += delta[j];
                    let dcrd1 = self.distort_arr(rcrd1);
                    raw[j] += (dis[j] - dcrd0[j]) * (delta[j] / (dcrd1[j] - dcrd0[j]));
                    rcrd1[j] -= delta[j];
                }
            }
        }
        (convergence && raw[0].is_finite() && raw[1].is_finite()).then_some((raw[0], raw[1]))
    }

    /// [`Tpv::undistort`] for `L` points at once, in lockstep: each lane makes `undistort`'s
    /// operations in `undistort`'s order (the same bits), and the lanes' chains of dependent
    /// operations overlap in the CPU. A lane that has converged keeps its point while the
    /// others go on (the rounds' choice of gradient, by the round number, is the same for
    /// all lanes).
    pub(crate) fn undistort_lanes<const L: usize>(
        &self,
        d0: [f64; L],
        d1: [f64; L],
    ) -> [Option<(f64, f64)>; L] {
        let dis = [d0, d1];
        let mut raw = dis;
        let mut convergence = [false; L];
        let mut going = [true; L];
        for iter in 0..ITERMAX {
            let dcrd0 = self.distort_lanes(&raw);
            let mut delta = [[0.0; L]; 2];
            for l in 0..L {
                if !going[l] {
                    continue;
                }
                convergence[l] = true;
                for j in 0..2 {
                    delta[j][l] = dis[j][l] - dcrd0[j][l];
                    let dd = if dis[j][l].abs() < 1.0 {
                        delta[j][l]
                    } else {
                        delta[j][l] / dis[j][l]
                    };
                    if TOL < dd.abs() {
                        convergence[l] = false;
                    }
                }
                going[l] = !convergence[l];
            }
            if !going.contains(&true) {
                break;
            }
            for d in delta.iter_mut().flatten() {
                *d /= 2.0;
                if d.abs() < 1.0e-6 {
                    *d = if *d < 0.0 { -1.0e-6 } else { 1.0e-6 };
                } else if 1.0 < d.abs() {
                    *d = if *d < 0.0 { -1.0 } else { 1.0 };
                }
            }
            let step = |raw: &mut [[f64; L]; 2], j: usize, dcrd1: &[[f64; L]; 2]| {
                for l in (0..L).filter(|&l| going[l]) {
                    raw[j][l] +=
                        (dis[j][l] - dcrd0[j][l]) * (delta[j][l] / (dcrd1[j][l] - dcrd0[j][l]));
                }
            };
            if iter < ITERMAX / 2 {
                let mut rcrd1 = raw;
                for (r, d) in rcrd1.iter_mut().flatten().zip(delta.iter().flatten()) {
                    *r += d;
                }
                let dcrd1 = self.distort_lanes(&rcrd1);
                step(&mut raw, 0, &dcrd1);
                step(&mut raw, 1, &dcrd1);
            } else {
                let mut rcrd1 = raw;
                for j in 0..2 {
                    for l in 0..L {
                        rcrd1[j][l] += delta[j][l];
                    }
                    let dcrd1 = self.distort_lanes(&rcrd1);
                    step(&mut raw, j, &dcrd1);
                    for l in 0..L {
                        rcrd1[j][l] -= delta[j][l];
                    }
                }
            }
        }
        std::array::from_fn(|l| {
            let (x, y) = (raw[0][l], raw[1][l]);
            (convergence[l] && x.is_finite() && y.is_finite()).then_some((x, y))
        })
    }

    /// [`Tpv::distort`] of `L` points (`x[axis][lane]`).
    #[inline(always)]
    fn distort_lanes<const L: usize>(&self, x: &[[f64; L]; 2]) -> [[f64; L]; 2] {
        let mut out = [[0.0; L]; 2];
        for l in 0..L {
            (out[0][l], out[1][l]) = self.distort(x[0][l], x[1][l]);
        }
        out
    }

    #[inline]
    fn distort_arr(&self, x: [f64; 2]) -> [f64; 2] {
        let (a, b) = self.distort(x[0], x[1]);
        [a, b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All 40 terms evaluated one by one.
    fn direct(c: &[f64; 40], x: f64, y: f64) -> f64 {
        let r = (x * x + y * y).sqrt();
        let mut sum = 0.0;
        for (k, &ck) in c.iter().enumerate() {
            let t = match k {
                3 => r,
                11 => r.powi(3),
                23 => r.powi(5),
                39 => r.powi(7),
                _ => {
                    let n = (1..8).rev().find(|&n| DEG_START[n] <= k).unwrap_or(0);
                    let b = k - DEG_START[n];
                    x.powi((n - b) as i32) * y.powi(b as i32)
                }
            };
            sum += ck * t;
        }
        sum
    }

    #[test]
    fn every_degree_matches_the_direct_sum() {
        let (x, y) = (0.3, -0.7);
        for top in 0..=TPV_MAX_TERM {
            let terms: Vec<(usize, f64)> = (0..=top).map(|k| (k, 0.1 + 0.01 * k as f64)).collect();
            let poly = TpvPolynomial::new(&terms).unwrap();
            let mut c = [0.0; 40];
            for &(k, v) in &terms {
                c[k] = v;
            }
            let want = direct(&c, x, y);
            assert!(
                (poly.eval(x, y) - want).abs() < 1e-14,
                "top term {top}, degree {}: {} vs {want}",
                poly.degree(),
                poly.eval(x, y)
            );
        }
    }

    #[test]
    fn missing_coefficients_are_zero() {
        // No PV1_1: the linear term is 0, not 1 (WCSLIB's dparm comes from calloc).
        let poly = TpvPolynomial::new(&[(5, 2.0)]).unwrap();
        assert_eq!(poly.degree(), 2);
        assert_eq!(poly.eval(3.0, 4.0), 24.0);
        let none = TpvPolynomial::new(&[]).unwrap();
        assert_eq!(none.eval(3.0, 4.0), 0.0);
        // A radial term switches r on.
        let radial = TpvPolynomial::new(&[(3, 1.0)]).unwrap();
        assert_eq!(radial.eval(3.0, 4.0), 5.0);
        // A zero-valued high term still sets the degree.
        assert_eq!(
            TpvPolynomial::new(&[(1, 1.0), (38, 0.0)]).unwrap().degree(),
            7
        );
        assert!(matches!(
            TpvPolynomial::new(&[(40, 1.0)]),
            Err(Error::PvOutOfRange { .. })
        ));
    }

    #[test]
    fn axis_map_is_fixed_to_axes_one_and_two() {
        let params = TpvParams {
            lng: vec![(1, 1.0), (2, 0.5)],
            lat: vec![(1, 1.0), (2, 0.25)],
        };
        // Longitude first: each polynomial takes its own axis first.
        let tpv = Tpv::new(&params).unwrap();
        assert_eq!(tpv.distort(2.0, 4.0), (2.0 + 0.5 * 4.0, 4.0 + 0.25 * 2.0));
        // Latitude first (x0 = lat, x1 = lng): longitude still takes (x0, x1), latitude (x1, x0).
        let lat_first = Tpv::in_axis_order(&params, true).unwrap();
        assert_eq!(
            lat_first.distort(4.0, 2.0),
            (2.0 + 0.25 * 4.0, 4.0 + 0.5 * 2.0)
        );
    }

    #[test]
    fn inverse_converges_near_and_fails_without_a_solution() {
        // ξ' = ξ − ξ³ is invertible near the origin.
        let params = TpvParams {
            lng: vec![(1, 1.0), (7, -1.0)],
            lat: vec![(1, 1.0)],
        };
        let tpv = Tpv::new(&params).unwrap();
        let (x, y) = tpv.undistort(0.3 - 0.027, 0.1).unwrap();
        assert!((x - 0.3).abs() < 1e-12 && (y - 0.1).abs() < 1e-15);
        // ξ' = ξ² never reaches −1.
        let params = TpvParams {
            lng: vec![(4, 1.0)],
            lat: vec![(1, 1.0)],
        };
        let tpv = Tpv::new(&params).unwrap();
        assert_eq!(tpv.undistort(-1.0, 0.1), None);
    }

    /// Lanes in lockstep give each point `undistort`'s bits, whatever their neighbours do:
    /// points that converge at different rounds, need the slow gradient (past half the
    /// iterations), never converge, sit beyond |1| (the relative tolerance) or are NaN, for
    /// latitude-first and longitude-first polynomials.
    #[test]
    fn lanes_give_each_point_undistorts_bits() {
        let cases = [
            // A gentle distortion of every degree up to 5, radial terms included.
            TpvParams {
                lng: vec![
                    (0, 1e-4),
                    (1, 1.0),
                    (2, 2e-3),
                    (3, 1e-3),
                    (4, 5e-3),
                    (7, -2e-2),
                    (11, 1e-3),
                    (17, 3e-3),
                ],
                lat: vec![
                    (1, 1.0),
                    (2, -1e-3),
                    (5, 4e-3),
                    (6, 1e-3),
                    (9, -1e-2),
                    (13, 2e-3),
                    (23, 1e-4),
                ],
            },
            // ξ − ξ³ (folds back beyond ±0.577) and ξ² (no solution for ξ' < 0).
            TpvParams {
                lng: vec![(1, 1.0), (7, -1.0)],
                lat: vec![(1, 1.0)],
            },
            TpvParams {
                lng: vec![(4, 1.0)],
                lat: vec![(1, 1.0)],
            },
        ];
        let points = [
            (0.01, -0.02),
            (0.273, 0.1),
            (-0.35, 0.2),
            (0.5, -0.4),
            (-1.0, 0.1),
            (3.5, -2.25),
            (f64::NAN, 0.1),
            (0.2, f64::INFINITY),
            (0.0, 0.0),
            // Near the fold of ξ − ξ³ (ξ' ≤ 0.3849): slow, some past half the iterations.
            (0.3845, 0.05),
            (0.38489, -0.05),
        ];
        let mut answered = 0;
        for params in &cases {
            for lat_first in [false, true] {
                let tpv = Tpv::in_axis_order(params, lat_first).unwrap();
                for start in 0..points.len() {
                    let lane = |l: usize| points[(start + l) % points.len()];
                    let d0 = std::array::from_fn::<f64, 4, _>(|l| lane(l).0);
                    let d1 = std::array::from_fn::<f64, 4, _>(|l| lane(l).1);
                    let got = tpv.undistort_lanes(d0, d1);
                    for l in 0..4 {
                        let want = tpv.undistort(d0[l], d1[l]);
                        let bits =
                            |p: Option<(f64, f64)>| p.map(|(x, y)| (x.to_bits(), y.to_bits()));
                        assert_eq!(
                            bits(got[l]),
                            bits(want),
                            "{params:?}, lat first {lat_first}, {:?}",
                            (d0[l], d1[l])
                        );
                        answered += usize::from(want.is_some());
                    }
                }
            }
        }
        // Points with and without a solution (the fold, ξ² < 0, NaN, far out): 92 of 216.
        assert!(answered > 60 && answered < 200, "{answered}");
    }
}

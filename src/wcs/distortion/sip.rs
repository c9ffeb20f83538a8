//! SIP (Simple Imaging Polynomial) distortion, as astropy implements it: its own code applied
//! to the pixel coordinates *before* WCSLIB sees them (astropy `wcs/src/sip.c`,
//! `wcs/src/pipeline.c`, `WCS._read_sip_kw` and `WCS._all_world2pix`), not WCSLIB's `sipset`.
//!
//! Forward, with 1-based pixel `p` and `(u, v) = p − CRPIX`:
//!
//! ```text
//! foc = (p1 + A(u, v), p2 + B(u, v)),   A(u, v) = Σ_{p+q ≤ A_ORDER} A_p_q u^p v^q
//! ```
//!
//! evaluated by the Horner scheme of `sip.c` (in v, then in u), including whatever constant and
//! linear terms the header gives. The focal-plane point then goes through the ordinary linear
//! step (`foc − CRPIX`, PC/CD).
//!
//! Inverse: WCSLIB's inverse without SIP gives `x'`; astropy then iterates
//! `x_{k+1} = x_k − (foc(x_k) − x')` with divergence detection ([`Sip::invert`]). `AP`/`BP` are
//! not used by astropy there; they are kept, and can serve as the starting guess
//! ([`SipInversion::ap_bp_guess`]).
//!
//! ```
//! use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
//! let mut a = SipPolynomial::zeros(2);
//! a.coeffs[2][0] = 1e-4; // A_2_0
//! let params = SipParams {
//!     crpix: [50.0, 50.0],
//!     ab: Some((a, SipPolynomial::zeros(2))),
//!     apbp: None,
//! };
//! let sip = Sip::new(&params).unwrap();
//! let (fx, fy) = sip.pix_to_foc(59.0, 49.0); // 0-based; u = 10, v = 0
//! assert!((fx - 59.01).abs() < 1e-12 && fy == 49.0);
//! let back = sip.invert(fx, fy, &Default::default());
//! assert!(back.converged && (back.x - 59.0).abs() < 1e-9);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::wcs::header::Header;

/// The highest SIP order read. astropy's SIP keyword pattern (`[AB]P?_1?[0-9]_1?[0-9]`) covers
/// indices up to 19; a higher `A_ORDER` is refused rather than read term by term.
///
/// ```
/// use reproject::wcs::{distortion::sip::{SipParams, MAX_SIP_ORDER}, header::Header};
/// let header = |order: usize| {
///     Header::parse(&format!("CRPIX1 = 1\nCRPIX2 = 1\nA_ORDER = {order}\nB_ORDER = 2\n"))
/// };
/// assert!(SipParams::from_header(&header(MAX_SIP_ORDER)?, "")?.is_some());
/// assert!(SipParams::from_header(&header(MAX_SIP_ORDER + 1)?, "").is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub const MAX_SIP_ORDER: usize = 19;

/// Tolerance (pixels) of the world → pixel iteration. astropy's default is 1e-4 px; the test
/// vectors and this crate use 1e-12 px, which costs a few iterations and gains five digits.
///
/// ```
/// use reproject::wcs::distortion::sip::{SipInversion, SIP_TOLERANCE};
/// assert_eq!(SipInversion::default().tolerance, SIP_TOLERANCE);
/// assert!(SIP_TOLERANCE < SipInversion::astropy().tolerance);
/// ```
pub const SIP_TOLERANCE: f64 = 1e-12;

/// Iteration limit of the world → pixel iteration (astropy's default is 20; the vectors use 100).
///
/// ```
/// use reproject::wcs::distortion::sip::{SipInversion, SIP_MAX_ITER};
/// assert_eq!(SipInversion::default().max_iter, SIP_MAX_ITER);
/// assert!(SIP_MAX_ITER > SipInversion::astropy().max_iter);
/// ```
pub const SIP_MAX_ITER: usize = 100;

/// One SIP polynomial: `coeffs[p][q]` multiplies `u^p v^q`. Terms with `p + q > order` are
/// ignored, as in `sip.c`.
///
/// ```
/// use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
/// let mut a = SipPolynomial::zeros(2);
/// a.coeffs[2][2] = 1.0; // u² v²: p + q = 4 > order 2, ignored
/// let ab = Some((a, SipPolynomial::zeros(2)));
/// let sip = Sip::new(&SipParams { crpix: [1.0, 1.0], ab, apbp: None })?;
/// assert_eq!(sip.pix_to_foc(5.0, 7.0), (5.0, 7.0));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SipPolynomial {
    /// The order (`A_ORDER`, ...).
    pub order: usize,
    /// `(order + 1) × (order + 1)` coefficients, `coeffs[p][q]`.
    pub coeffs: Vec<Vec<f64>>,
}

impl SipPolynomial {
    /// A polynomial of the given order with all coefficients 0.
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::SipPolynomial;
    /// let p = SipPolynomial::zeros(3);
    /// assert_eq!(p.order, 3);
    /// assert_eq!(p.coeffs, vec![vec![0.0; 4]; 4]);
    /// ```
    pub fn zeros(order: usize) -> SipPolynomial {
        SipPolynomial {
            order,
            coeffs: vec![vec![0.0; order + 1]; order + 1],
        }
    }

    fn check(&self, name: &str) -> Result<()> {
        let n = self.order + 1;
        if self.order > MAX_SIP_ORDER
            || self.coeffs.len() != n
            || self.coeffs.iter().any(|row| row.len() != n)
        {
            return Err(Error::InvalidValue {
                keyword: format!("{name}_ORDER"),
                reason: format!(
                    "a SIP polynomial of order {} (at most {MAX_SIP_ORDER}) needs {n}x{n} coefficients",
                    self.order
                ),
            });
        }
        if self.coeffs.iter().flatten().any(|c| !c.is_finite()) {
            return Err(Error::InvalidValue {
                keyword: format!("{name}_p_q"),
                reason: "not a finite number".into(),
            });
        }
        Ok(())
    }
}

/// The SIP parameters of a header (astropy's `Sip` object).
///
/// ```
/// use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
/// let mut b = SipPolynomial::zeros(2);
/// b.coeffs[0][2] = -1e-4; // B_0_2
/// let ab = Some((SipPolynomial::zeros(2), b));
/// let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
/// // 0-based (49, 59) is u = 0, v = 10: B = -1e-4 · 10² = -0.01.
/// assert_eq!(sip.pix_to_foc(49.0, 59.0), (49.0, 58.99));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SipParams {
    /// The SIP reference point, 1-based: the header's `CRPIX1`/`CRPIX2`.
    pub crpix: [f64; 2],
    /// The forward polynomials (A, B), pixel → focal plane; `None` when `A_ORDER` is absent or
    /// not above 1, or `B_ORDER` is not above 1 (astropy then ignores SIP).
    pub ab: Option<(SipPolynomial, SipPolynomial)>,
    /// The reverse polynomials (AP, BP), an approximate focal plane → pixel map.
    pub apbp: Option<(SipPolynomial, SipPolynomial)>,
}

impl SipParams {
    /// Reads the SIP keywords as astropy's `WCS._read_sip_kw` does. The SIP keywords have no
    /// alternate-WCS letter; the reference point is `CRPIX1<alt>`/`CRPIX2<alt>`.
    ///
    /// * `A_ORDER > 1` enables A and B (`B_ORDER` must then be present; `B_ORDER ≤ 1` disables
    ///   both); every `A_p_q` with `p + q ≤ A_ORDER` is read, constant and linear terms
    ///   included; missing ones are 0.
    /// * `B_ORDER > 1` without `A_ORDER > 1` is an error; likewise for AP/BP.
    /// * `None` when neither pair is present.
    ///
    /// ```
    /// use reproject::wcs::{distortion::sip::SipParams, header::Header};
    /// let text = "CRPIX1 = 50\nCRPIX2 = 60\nA_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\n";
    /// let h = Header::parse(text)?;
    /// let sip = SipParams::from_header(&h, "")?.unwrap();
    /// assert_eq!(sip.crpix, [50.0, 60.0]);
    /// assert_eq!(sip.ab.unwrap().0.coeffs[2][0], 1e-5);
    /// let plain = Header::parse("CRPIX1 = 50\nCRPIX2 = 60\n")?;
    /// assert_eq!(SipParams::from_header(&plain, "")?, None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_header(header: &Header, alt: &str) -> Result<Option<SipParams>> {
        let ab = read_pair(header, "A", "B")?;
        let apbp = read_pair(header, "AP", "BP")?;
        if ab.is_none() && apbp.is_none() {
            return Ok(None);
        }
        let mut crpix = [0.0; 2];
        for (i, c) in crpix.iter_mut().enumerate() {
            let key = format!("CRPIX{}{alt}", i + 1);
            *c = header
                .float(&key)?
                .ok_or_else(|| Error::MissingKeyword(format!("{key} (needed by SIP)")))?;
        }
        Ok(Some(SipParams { crpix, ab, apbp }))
    }
}

/// Reads one pair of polynomials (`A`/`B` or `AP`/`BP`).
fn read_pair(header: &Header, a: &str, b: &str) -> Result<Option<(SipPolynomial, SipPolynomial)>> {
    let a_key = format!("{a}_ORDER");
    let b_key = format!("{b}_ORDER");
    let a_order = header.float(&a_key)?;
    let b_order = header.float(&b_key)?;
    match a_order {
        Some(ao) if ao > 1.0 => {
            let bo = b_order.ok_or_else(|| {
                Error::MissingKeyword(format!("{b_key} (required with {a_key} > 1)"))
            })?;
            let pa = read_polynomial(header, a, ao)?;
            // astropy: `int(B_ORDER) > 1`, else both polynomials are dropped.
            if bo.trunc() > 1.0 {
                Ok(Some((pa, read_polynomial(header, b, bo)?)))
            } else {
                Ok(None)
            }
        }
        _ => match b_order {
            Some(bo) if bo > 1.0 => Err(Error::InvalidValue {
                keyword: b_key,
                reason: format!("given without a corresponding {a_key} above 1"),
            }),
            _ => Ok(None),
        },
    }
}

fn read_polynomial(header: &Header, name: &str, order: f64) -> Result<SipPolynomial> {
    let order_key = format!("{name}_ORDER");
    if order.trunc() > MAX_SIP_ORDER as f64 {
        return Err(Error::InvalidValue {
            keyword: order_key,
            reason: format!("SIP orders above {MAX_SIP_ORDER} are not supported"),
        });
    }
    let m = order.trunc() as usize;
    let mut poly = SipPolynomial::zeros(m);
    for p in 0..=m {
        for q in 0..=(m - p) {
            if let Some(v) = header.float(&format!("{name}_{p}_{q}"))? {
                poly.coeffs[p][q] = v;
            }
        }
    }
    Ok(poly)
}

/// A polynomial flattened for evaluation: `c[p * (m + 1) + q]`.
#[derive(Debug, Clone)]
struct Poly {
    m: usize,
    c: Vec<f64>,
}

impl Poly {
    fn new(p: &SipPolynomial) -> Poly {
        Poly {
            m: p.order,
            c: p.coeffs.iter().flatten().copied().collect(),
        }
    }

    /// `sip.c` `sip_compute`: for each power of u (high to low) a Horner sum in v, then a Horner
    /// sum in u over those. The orders headers use (2 to 7) have a copy each with the order
    /// fixed, which the compiler unrolls; every order runs the same operations in the same
    /// order, so the results are the same bits.
    #[inline]
    fn eval(&self, x: f64, y: f64) -> f64 {
        match self.m {
            2 => horner::<2>(&self.c, x, y),
            3 => horner::<3>(&self.c, x, y),
            4 => horner::<4>(&self.c, x, y),
            5 => horner::<5>(&self.c, x, y),
            6 => horner::<6>(&self.c, x, y),
            7 => horner::<7>(&self.c, x, y),
            m => horner_any(m, &self.c, x, y),
        }
    }

    /// `(a.eval(x, y), b.eval(x, y))`, with one dispatch on the order when both have the same
    /// (as headers' A and B do), so both sums are one stretch of straight-line code.
    #[inline]
    fn eval_pair(a: &Poly, b: &Poly, x: f64, y: f64) -> (f64, f64) {
        fn both<const M: usize>(a: &Poly, b: &Poly, x: f64, y: f64) -> (f64, f64) {
            (horner::<M>(&a.c, x, y), horner::<M>(&b.c, x, y))
        }
        match (a.m == b.m).then_some(a.m) {
            Some(2) => both::<2>(a, b, x, y),
            Some(3) => both::<3>(a, b, x, y),
            Some(4) => both::<4>(a, b, x, y),
            Some(5) => both::<5>(a, b, x, y),
            Some(6) => both::<6>(a, b, x, y),
            Some(7) => both::<7>(a, b, x, y),
            _ => (a.eval(x, y), b.eval(x, y)),
        }
    }
}

/// [`Poly::eval`] for order `M` known when compiling.
#[inline(always)]
fn horner<const M: usize>(c: &[f64], x: f64, y: f64) -> f64 {
    let c = &c[..(M + 1) * (M + 1)];
    horner_any(M, c, x, y)
}

/// [`Poly::eval`] for any order `m`, `c` holding `(m + 1)²` coefficients.
#[inline(always)]
fn horner_any(m: usize, c: &[f64], x: f64, y: f64) -> f64 {
    let n = m + 1;
    // tmp[j] = Σ_{k ≤ j} a[m−j][k] y^k, by Horner from k = j down to 0.
    let row = |j: usize| {
        let base = (m - j) * n;
        let mut t = c[base + j];
        for k in (0..j).rev() {
            t = y * t + c[base + k];
        }
        t
    };
    let mut sum = row(0);
    // `1..n`, not `1..=m`: an inclusive range keeps a loop the compiler does not unroll.
    for j in 1..n {
        sum = x * sum + row(j);
    }
    sum
}

/// How [`Sip::invert`] iterates.
///
/// ```
/// # use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
/// use reproject::wcs::distortion::sip::SipInversion;
/// # let mut a = SipPolynomial::zeros(2);
/// # a.coeffs[2][0] = 1e-4;
/// # let ab = Some((a, SipPolynomial::zeros(2)));
/// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
/// let how = SipInversion { tolerance: 1e-6, max_iter: 3, ap_bp_guess: false };
/// let s = sip.invert(59.01, 49.0, &how); // the focal-plane image of 0-based (59, 49)
/// assert!(s.iterations <= 3 && (s.x - 59.0).abs() < 1e-4 && s.y == 49.0);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SipInversion {
    /// Stop when the focal-plane residual is below this (pixels).
    pub tolerance: f64,
    /// Iteration limit (astropy's `maxiter`).
    pub max_iter: usize,
    /// Start from the AP/BP polynomial instead of the undistorted solution (astropy always
    /// starts from the undistorted solution; ignored when the header has no AP/BP).
    pub ap_bp_guess: bool,
}

impl SipInversion {
    /// astropy's defaults for `all_world2pix` (tolerance 1e-4 px, 20 iterations), which
    /// reproject uses: its input positions for SIP images are only that close to the exact
    /// inverse, and matching reproject's values means stopping where it stops.
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::SipInversion;
    /// assert_eq!(SipInversion::astropy().max_iter, 20);
    /// ```
    pub fn astropy() -> SipInversion {
        SipInversion {
            tolerance: 1e-4,
            max_iter: 20,
            ap_bp_guess: false,
        }
    }
}

impl Default for SipInversion {
    fn default() -> Self {
        SipInversion {
            tolerance: SIP_TOLERANCE,
            max_iter: SIP_MAX_ITER,
            ap_bp_guess: false,
        }
    }
}

/// The result of [`Sip::invert`]: astropy's `best_solution`, with how it ended.
///
/// ```
/// # use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
/// # let mut a = SipPolynomial::zeros(2);
/// # a.coeffs[2][0] = 1e-4;
/// # let ab = Some((a, SipPolynomial::zeros(2)));
/// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
/// let (fx, fy) = sip.pix_to_foc(59.0, 49.0);
/// let s = sip.invert(fx, fy, &Default::default());
/// assert!(s.converged && !s.diverged && s.iterations > 1);
/// assert!((s.x - 59.0).abs() < 1e-9 && (s.y - 49.0).abs() < 1e-9);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SipSolution {
    /// Pixel x, 0-based.
    pub x: f64,
    /// Pixel y, 0-based.
    pub y: f64,
    /// The residual fell below the tolerance.
    pub converged: bool,
    /// The residual grew (astropy's divergence detection); `x`, `y` are the last point before.
    pub diverged: bool,
    /// Iterations done (astropy's `niter`).
    pub iterations: usize,
}

/// SIP ready to evaluate. Coordinates are in FITS axis order (x = axis 1, y = axis 2).
///
/// ```
/// use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
/// let mut a = SipPolynomial::zeros(2);
/// a.coeffs[2][0] = 1e-4; // A_2_0
/// let ab = Some((a, SipPolynomial::zeros(2)));
/// let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
/// // The distortion vanishes at CRPIX (0-based 49, 49).
/// assert_eq!(sip.pix_to_foc(49.0, 49.0), (49.0, 49.0));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sip {
    crpix: [f64; 2],
    forward: Option<(Poly, Poly)>,
    reverse: Option<(Poly, Poly)>,
}

impl Sip {
    /// Builds it from its parameters, checking their shapes.
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
    /// let ok = SipParams { crpix: [1.0, 1.0], ab: None, apbp: None };
    /// assert!(Sip::new(&ok).is_ok());
    /// // An order-2 polynomial needs 3x3 coefficients.
    /// let short = SipPolynomial { order: 2, coeffs: vec![vec![0.0; 2]; 2] };
    /// let bad = SipParams { ab: Some((short, SipPolynomial::zeros(2))), ..ok };
    /// assert!(Sip::new(&bad).is_err());
    /// ```
    pub fn new(params: &SipParams) -> Result<Sip> {
        if !params.crpix.iter().all(|c| c.is_finite()) {
            return Err(Error::InvalidValue {
                keyword: "CRPIX (SIP)".into(),
                reason: "not a finite number".into(),
            });
        }
        let build = |pair: &Option<(SipPolynomial, SipPolynomial)>, a: &str, b: &str| {
            pair.as_ref()
                .map(|(pa, pb)| -> Result<(Poly, Poly)> {
                    pa.check(a)?;
                    pb.check(b)?;
                    Ok((Poly::new(pa), Poly::new(pb)))
                })
                .transpose()
        };
        Ok(Sip {
            crpix: params.crpix,
            forward: build(&params.ab, "A", "B")?,
            reverse: build(&params.apbp, "AP", "BP")?,
        })
    }

    /// Whether the forward polynomials are present (otherwise SIP changes nothing).
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
    /// let zeros = || SipPolynomial::zeros(2);
    /// let params = SipParams { crpix: [1.0, 1.0], ab: Some((zeros(), zeros())), apbp: None };
    /// assert!(Sip::new(&params)?.is_active());
    /// // AP/BP alone (reverse polynomials only) do not make SIP active.
    /// let reverse_only = SipParams { ab: None, apbp: Some((zeros(), zeros())), ..params };
    /// assert!(!Sip::new(&reverse_only)?.is_active());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_active(&self) -> bool {
        self.forward.is_some()
    }

    /// The SIP reference point (1-based).
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::{Sip, SipParams};
    /// let sip = Sip::new(&SipParams { crpix: [50.0, 60.0], ab: None, apbp: None })?;
    /// assert_eq!(sip.crpix(), [50.0, 60.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn crpix(&self) -> [f64; 2] {
        self.crpix
    }

    /// Order and row-major `(order+1)²` coefficients of A and B (forward) and of AP and BP
    /// (reverse), for the GPU encoder.
    #[allow(clippy::type_complexity)]
    pub(crate) fn polynomials(&self) -> [Option<((usize, &[f64]), (usize, &[f64]))>; 2] {
        fn view(p: Option<&(Poly, Poly)>) -> Option<((usize, &[f64]), (usize, &[f64]))> {
            p.map(|(a, b)| ((a.m, a.c.as_slice()), (b.m, b.c.as_slice())))
        }
        [view(self.forward.as_ref()), view(self.reverse.as_ref())]
    }

    /// 1-based pixel → 1-based focal plane (astropy `pipeline_pix2foc`:
    /// `foc = p + SIP(p − CRPIX)`).
    ///
    /// ```
    /// # use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// // A_2_0 = 1e-4, CRPIX = (50, 50): at the 1-based pixel (60, 50), u = 10 and A = 0.01.
    /// assert_eq!(sip.pix1_to_foc1(50.0, 50.0), (50.0, 50.0));
    /// let (f1, f2) = sip.pix1_to_foc1(60.0, 50.0);
    /// assert!((f1 - 60.01).abs() < 1e-12 && f2 == 50.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pix1_to_foc1(&self, p1: f64, p2: f64) -> (f64, f64) {
        match &self.forward {
            None => (p1, p2),
            Some((a, b)) => {
                let u = p1 - self.crpix[0];
                let v = p2 - self.crpix[1];
                let (da, db) = Poly::eval_pair(a, b, u, v);
                (p1 + da, p2 + db)
            }
        }
    }

    /// 0-based pixel → 0-based focal plane (astropy `WCS.pix2foc(..., 0)`).
    ///
    /// ```
    /// # use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// // CRPIX (50, 50) is the 0-based pixel (49, 49), where the distortion vanishes.
    /// assert_eq!(sip.pix_to_foc(49.0, 49.0), (49.0, 49.0));
    /// let (fx, fy) = sip.pix_to_foc(59.0, 49.0);
    /// let (f1, f2) = sip.pix1_to_foc1(60.0, 50.0);
    /// assert_eq!((fx, fy), (f1 - 1.0, f2 - 1.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pix_to_foc(&self, x: f64, y: f64) -> (f64, f64) {
        let (f1, f2) = self.pix1_to_foc1(x + 1.0, y + 1.0);
        (f1 - 1.0, f2 - 1.0)
    }

    /// 0-based focal plane → 0-based pixel by the AP/BP polynomials (astropy `WCS.foc2pix`, an
    /// approximation); `None` without AP/BP.
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::{Sip, SipParams, SipPolynomial};
    /// # let poly = |c20: f64| {
    /// #     let mut p = SipPolynomial::zeros(2);
    /// #     p.coeffs[2][0] = c20;
    /// #     (p, SipPolynomial::zeros(2))
    /// # };
    /// let (ab, apbp) = (Some(poly(1e-4)), Some(poly(-1e-4))); // A_2_0 = 1e-4, AP_2_0 = -1e-4
    /// let params = SipParams { crpix: [50.0, 50.0], ab, apbp };
    /// let sip = Sip::new(&params)?;
    /// let (fx, fy) = sip.pix_to_foc(59.0, 49.0);
    /// let (x, y) = sip.foc_to_pix_approx(fx, fy).unwrap();
    /// assert!((x - 59.0).abs() < 1e-3 && y == 49.0); // AP/BP only approximate the inverse
    /// let no_reverse = Sip::new(&SipParams { apbp: None, ..params })?;
    /// assert_eq!(no_reverse.foc_to_pix_approx(fx, fy), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn foc_to_pix_approx(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (ap, bp) = self.reverse.as_ref()?;
        let (f1, f2) = (x + 1.0, y + 1.0);
        let u = f1 - self.crpix[0];
        let v = f2 - self.crpix[1];
        Some(((f1 + ap.eval(u, v)) - 1.0, (f2 + bp.eval(u, v)) - 1.0))
    }

    /// Solves `pix_to_foc(x, y) = (fx, fy)` (0-based) by astropy's fixed-point iteration
    /// (`WCS._all_world2pix` with `detect_divergence=True`, one point at a time, which is what
    /// astropy computes for each point of a batch too):
    ///
    /// `x_{k+1} = x_k − (foc(x_k) − x')`, stopping when `|Δ|² < tolerance²`, after `max_iter`
    /// steps, or when `|Δ|²` stops decreasing (divergence: the last point is kept, as astropy's
    /// `best_solution`).
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::{Sip, SipInversion, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let mut b = SipPolynomial::zeros(2);
    /// # b.coeffs[1][1] = -2e-4; // B_1_1
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab: Some((a, b)), apbp: None })?;
    /// let (fx, fy) = sip.pix_to_foc(80.0, 20.0);
    /// let s = sip.invert(fx, fy, &SipInversion::default());
    /// assert!(s.converged && (s.x - 80.0).abs() < 1e-9 && (s.y - 20.0).abs() < 1e-9);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn invert(&self, fx: f64, fy: f64, how: &SipInversion) -> SipSolution {
        if !self.is_active() {
            return SipSolution {
                x: fx,
                y: fy,
                converged: true,
                diverged: false,
                iterations: 0,
            };
        }
        let start = how
            .ap_bp_guess
            .then(|| self.foc_to_pix_approx(fx, fy))
            .flatten()
            .unwrap_or((fx, fy));
        super::fixed_point::invert(|x, y| self.pix_to_foc(x, y), fx, fy, start, how)
    }

    /// [`Sip::invert`] for `L` points at once, in lockstep: each lane makes `invert`'s
    /// operations in `invert`'s order (the same bits), and the lanes' chains of dependent
    /// multiplications, which bound one point's time, overlap in the CPU. A lane that has
    /// stopped (converged, diverged) keeps its point while the others go on; returns the
    /// solutions' `(x, y)`.
    pub(crate) fn invert_lanes<const L: usize>(
        &self,
        fx: [f64; L],
        fy: [f64; L],
        how: &SipInversion,
    ) -> ([f64; L], [f64; L]) {
        let (mut x, mut y) = (fx, fy);
        let Some((a, b)) = &self.forward else {
            return (x, y);
        };
        if how.ap_bp_guess {
            for l in 0..L {
                if let Some((gx, gy)) = self.foc_to_pix_approx(fx[l], fy[l]) {
                    (x[l], y[l]) = (gx, gy);
                }
            }
        }
        let tol2 = how.tolerance * how.tolerance;
        let (f0, f1) = self.foc_lanes(a, b, &x, &y);
        let mut dn_prev = [0.0; L];
        let mut active = [false; L];
        for l in 0..L {
            let (dx, dy) = (f0[l] - fx[l], f1[l] - fy[l]);
            x[l] -= dx;
            y[l] -= dy;
            dn_prev[l] = dx * dx + dy * dy;
            active[l] = dn_prev[l] >= tol2;
        }
        let mut k = 1;
        while k < how.max_iter && active.contains(&true) {
            let (f0, f1) = self.foc_lanes(a, b, &x, &y);
            for l in 0..L {
                let (dx, dy) = (f0[l] - fx[l], f1[l] - fy[l]);
                let dn = dx * dx + dy * dy;
                if !active[l] {
                    continue;
                }
                if dn >= dn_prev[l] && dn >= tol2 {
                    active[l] = false; // diverged: the point before
                    continue;
                }
                dn_prev[l] = dn;
                x[l] -= dx;
                y[l] -= dy;
                active[l] = dn >= tol2;
            }
            k += 1;
        }
        (x, y)
    }

    /// [`Sip::pix_to_foc`] of `L` points, A and B of the order dispatched once for all.
    #[inline(always)]
    fn foc_lanes<const L: usize>(
        &self,
        a: &Poly,
        b: &Poly,
        x: &[f64; L],
        y: &[f64; L],
    ) -> ([f64; L], [f64; L]) {
        #[inline(always)]
        fn lanes<const L: usize, const M: usize>(
            sip: &Sip,
            a: &Poly,
            b: &Poly,
            x: &[f64; L],
            y: &[f64; L],
        ) -> ([f64; L], [f64; L]) {
            let (mut f0, mut f1) = ([0.0; L], [0.0; L]);
            for l in 0..L {
                // pix_to_foc: 1-based, p + SIP(p − CRPIX), back to 0-based.
                let (p1, p2) = (x[l] + 1.0, y[l] + 1.0);
                let (u, v) = (p1 - sip.crpix[0], p2 - sip.crpix[1]);
                let (da, db) = (horner::<M>(&a.c, u, v), horner::<M>(&b.c, u, v));
                (f0[l], f1[l]) = ((p1 + da) - 1.0, (p2 + db) - 1.0);
            }
            (f0, f1)
        }
        match (a.m == b.m).then_some(a.m) {
            Some(2) => lanes::<L, 2>(self, a, b, x, y),
            Some(3) => lanes::<L, 3>(self, a, b, x, y),
            Some(4) => lanes::<L, 4>(self, a, b, x, y),
            Some(5) => lanes::<L, 5>(self, a, b, x, y),
            _ => {
                let (mut f0, mut f1) = ([0.0; L], [0.0; L]);
                for l in 0..L {
                    (f0[l], f1[l]) = self.pix_to_foc(x[l], y[l]);
                }
                (f0, f1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Header {
        Header::parse(text).unwrap()
    }

    const BASE: &str = "CRPIX1 = 10.0\nCRPIX2 = 20.0\n";

    #[test]
    fn order_one_is_ignored() {
        let h = header(&format!(
            "{BASE}A_ORDER = 1\nB_ORDER = 1\nA_1_0 = 0.5\nB_0_1 = 0.5\n"
        ));
        assert_eq!(SipParams::from_header(&h, "").unwrap(), None);
        // B_ORDER <= 1 drops A as well.
        let h = header(&format!("{BASE}A_ORDER = 2\nB_ORDER = 1\nA_2_0 = 0.5\n"));
        assert_eq!(SipParams::from_header(&h, "").unwrap(), None);
    }

    #[test]
    fn constant_and_linear_terms_are_used() {
        let h = header(&format!(
            "{BASE}A_ORDER = 2\nB_ORDER = 2\nA_0_0 = 0.25\nA_1_0 = 0.5\nB_0_1 = -0.5\nB_2_0 = 0.125\nA_3_0 = 9.0\n"
        ));
        let p = SipParams::from_header(&h, "").unwrap().unwrap();
        let (a, b) = p.ab.as_ref().unwrap();
        assert_eq!(a.coeffs[0][0], 0.25);
        assert_eq!(a.coeffs[1][0], 0.5);
        assert_eq!(b.coeffs[0][1], -0.5);
        assert_eq!(b.coeffs[2][0], 0.125);
        let sip = Sip::new(&p).unwrap();
        // 0-based (11, 19) is u = 2, v = 0.
        let (fx, fy) = sip.pix_to_foc(11.0, 19.0);
        assert_eq!(fx, 11.0 + 0.25 + 0.5 * 2.0);
        assert_eq!(fy, 19.0 + 0.125 * 4.0);
        // A_3_0 is beyond A_ORDER and not read.
        assert_eq!(a.coeffs.len(), 3);
    }

    #[test]
    fn sip_keyword_errors() {
        let e = SipParams::from_header(&header(&format!("{BASE}A_ORDER = 2\n")), "");
        assert!(matches!(e, Err(Error::MissingKeyword(_))));
        let e = SipParams::from_header(&header(&format!("{BASE}B_ORDER = 3\n")), "");
        assert!(matches!(e, Err(Error::InvalidValue { keyword, .. }) if keyword == "B_ORDER"));
        let e = SipParams::from_header(&header("A_ORDER = 2\nB_ORDER = 2\nCRPIX1 = 1.0\n"), "");
        assert!(matches!(e, Err(Error::MissingKeyword(_))));
        let e = SipParams::from_header(&header(&format!("{BASE}A_ORDER = 25\nB_ORDER = 2\n")), "");
        assert!(matches!(e, Err(Error::InvalidValue { .. })));
    }

    #[test]
    fn only_reverse_polynomials_do_nothing() {
        let h = header(&format!(
            "{BASE}AP_ORDER = 2\nBP_ORDER = 2\nAP_2_0 = 0.001\n"
        ));
        let p = SipParams::from_header(&h, "").unwrap().unwrap();
        assert!(p.ab.is_none() && p.apbp.is_some());
        let sip = Sip::new(&p).unwrap();
        assert!(!sip.is_active());
        assert_eq!(sip.pix_to_foc(3.0, 4.0), (3.0, 4.0));
        let (x, _) = sip.foc_to_pix_approx(11.0, 19.0).unwrap();
        assert_eq!(x, (12.0 + 0.001 * 4.0) - 1.0);
    }

    #[test]
    fn horner_matches_the_direct_sum() {
        let mut a = SipPolynomial::zeros(4);
        let mut k = 1.0;
        for p in 0..=4 {
            for q in 0..=(4 - p) {
                a.coeffs[p][q] = k * 1e-3;
                k += 1.0;
            }
        }
        let poly = Poly::new(&a);
        let (x, y): (f64, f64) = (1.7, -2.3);
        let mut direct = 0.0;
        for p in 0..=4 {
            for q in 0..=(4 - p) {
                direct += a.coeffs[p][q] * x.powi(p as i32) * y.powi(q as i32);
            }
        }
        assert!((poly.eval(x, y) - direct).abs() < 1e-14);
    }

    /// The order-specialised sums are `sip.c`'s operations in `sip.c`'s order: the same bits as
    /// the plain loop below (the code before the specialisation), for every order up to the
    /// highest read (and the orders 0 and 1 the API accepts), alone and in pairs of equal and of
    /// different orders.
    #[test]
    fn specialised_orders_give_the_plain_loops_bits() {
        fn plain(p: &Poly, x: f64, y: f64) -> f64 {
            let (m, n) = (p.m, p.m + 1);
            let row = |j: usize| {
                let base = (m - j) * n;
                let mut t = p.c[base + j];
                for k in (0..j).rev() {
                    t = y * t + p.c[base + k];
                }
                t
            };
            let mut sum = row(0);
            for j in 1..=m {
                sum = x * sum + row(j);
            }
            sum
        }
        // A fixed pseudo-random sequence (an LCG): coefficients of mixed signs and scales.
        let mut uniform = crate::wcs::distortion::test_sequence(0x2545_f491_4f6c_dd1d);
        let mut next = move || uniform() - 0.5;
        let mut poly = |order: usize| {
            let mut p = SipPolynomial::zeros(order);
            for (i, row) in p.coeffs.iter_mut().enumerate() {
                for (j, c) in row.iter_mut().enumerate() {
                    *c = next() * 10f64.powi(-2 - 3 * (i + j) as i32);
                }
            }
            Poly::new(&p)
        };
        let polys: Vec<Poly> = (0..=MAX_SIP_ORDER).map(&mut poly).collect();
        let points = [
            (0.0, 0.0),
            (1.5, -2.25),
            (-1023.7, 511.3),
            (4095.0, -2047.5),
            (3e4, 7e3),
        ];
        for a in &polys {
            for &(x, y) in &points {
                assert_eq!(
                    a.eval(x, y).to_bits(),
                    plain(a, x, y).to_bits(),
                    "order {}",
                    a.m
                );
            }
            for b in &polys {
                for &(x, y) in &points {
                    let (da, db) = Poly::eval_pair(a, b, x, y);
                    let want = (plain(a, x, y), plain(b, x, y));
                    assert_eq!(
                        (da.to_bits(), db.to_bits()),
                        (want.0.to_bits(), want.1.to_bits())
                    );
                }
            }
        }
    }

    #[test]
    fn inversion_converges_and_detects_divergence() {
        let mut a = SipPolynomial::zeros(2);
        a.coeffs[2][0] = 1e-3;
        let mut b = SipPolynomial::zeros(2);
        b.coeffs[1][1] = -2e-3;
        let p = SipParams {
            crpix: [0.0, 0.0],
            ab: Some((a, b)),
            apbp: None,
        };
        let sip = Sip::new(&p).unwrap();
        let (fx, fy) = sip.pix_to_foc(30.0, -40.0);
        let s = sip.invert(fx, fy, &SipInversion::default());
        assert!(s.converged && !s.diverged);
        assert!((s.x - 30.0).abs() < 1e-10 && (s.y + 40.0).abs() < 1e-10);
        // Far away the fixed point is repelling: divergence is detected, not looped on.
        let s = sip.invert(5000.0, 5000.0, &SipInversion::default());
        assert!(s.diverged && !s.converged && s.iterations < 10);
    }

    /// Lanes in lockstep give each point `invert`'s bits, whatever their neighbours do: points
    /// that converge at once, slowly, at different rounds, diverge, run out of iterations or
    /// are NaN, with and without the AP/BP start, for orders with and without a specialised
    /// copy (and A and B of different orders).
    #[test]
    fn lanes_give_each_point_inverts_bits() {
        let sip_of = |order_a: usize, order_b: usize, apbp: bool| {
            let mut a = SipPolynomial::zeros(order_a);
            let mut b = SipPolynomial::zeros(order_b);
            a.coeffs[2][0] = 1e-3;
            a.coeffs[0][2] = -4e-4;
            b.coeffs[1][1] = -2e-3;
            b.coeffs[2][0] = 5e-4;
            a.coeffs[order_a][0] += 1e-9;
            b.coeffs[0][order_b] -= 2e-9;
            let apbp = apbp.then(|| {
                let mut ap = SipPolynomial::zeros(2);
                ap.coeffs[2][0] = -1e-3;
                (ap, SipPolynomial::zeros(2))
            });
            Sip::new(&SipParams {
                crpix: [10.0, -5.0],
                ab: Some((a, b)),
                apbp,
            })
            .unwrap()
        };
        let mut points: Vec<(f64, f64)> = Vec::new();
        for &(x, y) in &[
            (9.0, -6.0),
            (30.0, -40.0),
            (-120.0, 75.0),
            (300.0, 200.0),
            (-450.0, 0.5),
        ] {
            points.push((x, y)); // focal-plane points near and far
        }
        points.extend([
            (5000.0, 5000.0),
            (f64::NAN, 1.0),
            (2.0, f64::INFINITY),
            (-800.0, -900.0),
        ]);
        let hows = [
            SipInversion::default(),
            SipInversion::astropy(),
            SipInversion {
                tolerance: 1e-12,
                max_iter: 3,
                ap_bp_guess: false,
            },
            SipInversion {
                ap_bp_guess: true,
                ..SipInversion::astropy()
            },
        ];
        for (order_a, order_b) in [(2, 2), (3, 3), (5, 5), (7, 7), (9, 9), (3, 4)] {
            for apbp in [false, true] {
                let sip = sip_of(order_a, order_b, apbp);
                for how in &hows {
                    // Every window of four consecutive points (wrapping), so each point meets
                    // different neighbours.
                    for start in 0..points.len() {
                        let lane = |l: usize| points[(start + l) % points.len()];
                        let fx = std::array::from_fn::<f64, 4, _>(|l| lane(l).0);
                        let fy = std::array::from_fn::<f64, 4, _>(|l| lane(l).1);
                        let (x, y) = sip.invert_lanes(fx, fy, how);
                        for l in 0..4 {
                            let want = sip.invert(fx[l], fy[l], how);
                            assert_eq!(
                                (x[l].to_bits(), y[l].to_bits()),
                                (want.x.to_bits(), want.y.to_bits()),
                                "orders {order_a}/{order_b}, AP/BP {apbp}, {how:?}, point {:?}",
                                (fx[l], fy[l])
                            );
                        }
                    }
                }
            }
        }
    }
}

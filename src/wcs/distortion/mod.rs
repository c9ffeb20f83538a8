//! Distortions of the celestial pixel ↔ intermediate step: SIP, lookup tables and TPV, as
//! astropy applies them.
//!
//! ```text
//! pixel ──D2IM, SIP, CPDIS (astropy, prior; 1-based focal plane)──▶ foc
//!       ──CRPIX, PC──▶ t ──TPV (WCSLIB dis.c, sequent)──▶ t' ──CDELT──▶ intermediate (x, y)
//! ```
//!
//! and back: WCSLIB's `disx2p` iteration for TPV, then astropy's fixed-point iteration for SIP
//! and the lookup tables ([`lookup`]; attached with [`crate::wcs::Wcs::with_lookup_tables`],
//! since they live in other HDUs).
//! Without distortion none of this runs: [`crate::wcs::CelestialTransform`] keeps the plain
//! linear step and checks once per point whether a [`Distortion`] is attached.
//!
//! Header handling follows astropy (`WCS.__init__`, `_fix_pre2012_scamp_tpv`, `_read_sip_kw`,
//! `_fix_scamp`):
//!
//! * SIP keywords (`A_ORDER > 1` ...) are applied with or without `-SIP` in CTYPE;
//! * `CTYPE = 'xxxx-TPV'` makes the `PVi_m` of both celestial axes TPV coefficients and the
//!   projection TAN;
//! * a pre-2012 SCAMP header (`CTYPE1`/`CTYPE2` ending in `-TAN` with some `PV1_j`/`PV2_j`,
//!   j ≥ 5) is read as TPV, and its SIP keywords are ignored ([`scamp_pre2012`]);
//! * with `-TPV` CTYPEs any SIP is dropped; with `-TAN-SIP` CTYPEs and SCAMP `PVi_j` (j ≥ 5)
//!   the PV keywords are dropped instead ([`scamp_pv_with_sip`]).
//!
//! ```
//! use reproject::wcs::Wcs;
//! let h = "CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nCRPIX1 = 50.0\nCRPIX2 = 50.0\n\
//!          CRVAL1 = 10.0\nCRVAL2 = 20.0\nCD1_1 = -1E-4\nCD2_2 = 1E-4\n\
//!          A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n";
//! let wcs = Wcs::from_header_str(h).unwrap();
//! assert!(wcs.has_distortion());
//! let (ra, dec) = wcs.pixel_to_world(10.0, 80.0).unwrap();
//! let (x, y) = wcs.world_to_pixel(ra, dec).unwrap();
//! assert!((x - 10.0).abs() < 1e-9 && (y - 80.0).abs() < 1e-9);
//! ```

pub mod fixed_point;
pub mod lookup;
pub mod sip;
pub mod tpv;

use std::sync::Arc;

use crate::error::Result;
use crate::wcs::header::Header;
use crate::wcs::linear::{Linear2, SequentLinear2};

pub use fixed_point::GridSchedule;
pub use lookup::{LookupTable, LookupTables};
pub use sip::{Sip, SipInversion, SipParams, SipPolynomial, SipSolution};
pub use tpv::{Tpv, TpvParams};

/// The distortions of a celestial axis pair, ready to evaluate.
///
/// Public coordinates are in the order of the celestial axes (longitude, latitude), like
/// [`crate::wcs::CelestialTransform`]; internally SIP and TPV work in FITS axis order.
///
/// ```
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
/// let distortion = wcs.celestial()?.distortion().unwrap();
/// // SIP vanishes at CRPIX (the 0-based pixel (15, 15)).
/// assert_eq!(distortion.pix_to_foc(15.0, 15.0), (15.0, 15.0));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Distortion {
    /// The latitude axis precedes the longitude axis in the header.
    lat_first: bool,
    sip: Option<Sip>,
    tpv: Option<(SequentLinear2, Tpv)>,
    /// D2IM and CPDIS lookup tables (never empty when present).
    tables: Option<Arc<LookupTables>>,
    inversion: SipInversion,
    /// The astropy call whose points world → pixel computes, when it emulates one.
    grid: Option<Arc<GridSchedule>>,
}

impl Distortion {
    /// Builds the distortion stage of a celestial pair. `sip` is in FITS axis order; `tpv` is
    /// the sequent linear step in FITS axis order with its polynomials. `None` if neither is
    /// present (or SIP has no forward polynomials).
    ///
    /// ```
    /// use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// let sip = |ab, apbp| Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp });
    /// let pair = || Some((SipPolynomial::zeros(2), SipPolynomial::zeros(2)));
    /// assert!(Distortion::new(false, Some(sip(pair(), None)?), None).is_some());
    /// // Neither stage, or SIP with reverse (AP/BP) polynomials only: nothing to apply.
    /// assert!(Distortion::new(false, None, None).is_none());
    /// assert!(Distortion::new(false, Some(sip(None, pair())?), None).is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn new(
        lat_first: bool,
        sip: Option<Sip>,
        tpv: Option<(SequentLinear2, Tpv)>,
    ) -> Option<Distortion> {
        let sip = sip.filter(Sip::is_active);
        (sip.is_some() || tpv.is_some()).then_some(Distortion {
            lat_first,
            sip,
            tpv,
            tables: None,
            inversion: SipInversion::default(),
            grid: None,
        })
    }

    /// `distortion` (built by [`Distortion::new`], `None` for none) with lookup tables added;
    /// `None` only if there is neither a distortion nor a table.
    ///
    /// ```
    /// use reproject::wcs::distortion::{Distortion, LookupTable, LookupTables};
    /// let t = LookupTable::new(vec![0.5], [1, 1], [1.0; 2], [0.0; 2], [1.0; 2])?;
    /// let tables = LookupTables { cpdis: [Some(t), None], ..Default::default() };
    /// let d = Distortion::with_lookup_tables(None, false, tables).unwrap();
    /// assert_eq!(d.pix_to_foc(10.0, 20.0), (10.5, 20.0)); // CPDIS1 adds half a pixel to x
    /// assert!(Distortion::with_lookup_tables(None, false, LookupTables::default()).is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_lookup_tables(
        distortion: Option<Distortion>,
        lat_first: bool,
        tables: LookupTables,
    ) -> Option<Distortion> {
        let tables = (!tables.is_empty()).then(|| Arc::new(tables));
        match distortion {
            Some(d) => Some(Distortion { tables, ..d }),
            None => tables.map(|tables| Distortion {
                lat_first,
                sip: None,
                tpv: None,
                tables: Some(tables),
                inversion: SipInversion::default(),
                grid: None,
            }),
        }
    }

    /// The lookup tables (D2IM, CPDIS), if any.
    ///
    /// ```
    /// use reproject::wcs::distortion::{Distortion, LookupTable, LookupTables};
    /// let t = LookupTable::new(vec![0.5], [1, 1], [1.0; 2], [0.0; 2], [1.0; 2])?;
    /// let tables = LookupTables { det2im: [None, Some(t)], ..Default::default() };
    /// let d = Distortion::with_lookup_tables(None, false, tables.clone()).unwrap();
    /// assert_eq!(d.lookup_tables(), Some(&tables));
    /// assert!(d.sip().is_none() && d.tpv().is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn lookup_tables(&self) -> Option<&LookupTables> {
        self.tables.as_deref()
    }

    /// Whether world → pixel iterates (SIP or lookup tables: astropy's fixed point).
    pub(crate) fn iterates(&self) -> bool {
        self.sip.is_some() || self.tables.is_some()
    }

    /// The astropy call world → pixel emulates, if any ([`GridSchedule`]).
    pub(crate) fn grid_schedule(&self) -> Option<&GridSchedule> {
        self.grid.as_deref()
    }

    /// Makes world → pixel compute each point as one point of the astropy call `grid`
    /// describes (`None`: each point by itself).
    pub(crate) fn set_grid_schedule(&mut self, grid: Option<Arc<GridSchedule>>) {
        self.grid = grid;
    }

    /// The SIP stage, if any.
    ///
    /// ```
    /// # use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// let d = Distortion::new(false, Some(sip), None).unwrap();
    /// assert_eq!(d.sip().unwrap().crpix(), [50.0, 50.0]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn sip(&self) -> Option<&Sip> {
        self.sip.as_ref()
    }

    /// The TPV stage (its linear step and polynomials), if any.
    ///
    /// ```
    /// use reproject::wcs::distortion::{Distortion, Tpv, TpvParams};
    /// use reproject::wcs::linear::SequentLinear2;
    /// let lin = SequentLinear2::new([50.0, 50.0], [[1.0, 0.0], [0.0, 1.0]], [-1e-4, 1e-4])?;
    /// let tpv = Tpv::new(&TpvParams { lng: vec![(1, 1.0)], lat: vec![(1, 1.0), (7, 0.1)] })?;
    /// let d = Distortion::new(false, None, Some((lin, tpv))).unwrap();
    /// let (lin, tpv) = d.tpv().unwrap();
    /// assert_eq!((lin.cdelt(), tpv.polynomials()[1].degree()), ([-1e-4, 1e-4], 3));
    /// assert!(d.sip().is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn tpv(&self) -> Option<&(SequentLinear2, Tpv)> {
        self.tpv.as_ref()
    }

    /// Whether the latitude axis comes first (SIP/TPV work in FITS axis order), for the GPU.
    pub(crate) fn lat_first(&self) -> bool {
        self.lat_first
    }

    /// How world → pixel inverts SIP (default: astropy's iteration, tolerance 1e-12 px).
    ///
    /// ```
    /// use reproject::wcs::distortion::sip::SIP_TOLERANCE;
    /// # use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// # let d = Distortion::new(false, Some(sip), None).unwrap();
    /// assert_eq!(d.sip_inversion().tolerance, SIP_TOLERANCE);
    /// assert_eq!(SIP_TOLERANCE, 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn sip_inversion(&self) -> &SipInversion {
        &self.inversion
    }

    /// Replaces the SIP inversion settings.
    ///
    /// ```
    /// use reproject::wcs::distortion::SipInversion;
    /// # use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// # let mut d = Distortion::new(false, Some(sip), None).unwrap();
    /// d.set_sip_inversion(SipInversion::astropy());
    /// assert_eq!(d.sip_inversion().tolerance, 1e-4);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn set_sip_inversion(&mut self, how: SipInversion) {
        self.inversion = how;
    }

    #[inline(always)]
    fn order(&self, a: f64, b: f64) -> (f64, f64) {
        if self.lat_first {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// 0-based pixel (lng, lat order) → 0-based focal-plane coordinates (pixel after SIP).
    ///
    /// ```
    /// # use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// # let d = Distortion::new(false, Some(sip), None).unwrap();
    /// // A_2_0 = 1e-4 and CRPIX = (50, 50): the 0-based (59, 49) is u = 10, v = 0.
    /// let (fx, fy) = d.pix_to_foc(59.0, 49.0);
    /// assert!((fx - 59.01).abs() < 1e-12 && fy == 49.0);
    /// assert_eq!(d.pix_to_foc(49.0, 49.0), (49.0, 49.0)); // none at CRPIX
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pix_to_foc(&self, x: f64, y: f64) -> (f64, f64) {
        let (p0, p1) = self.order(x, y);
        let (f0, f1) = self.pix_to_foc_axes(p0, p1);
        self.order(f0, f1)
    }

    /// 1-based pixel → 1-based focal plane in FITS axis order: D2IM, SIP and CPDIS in
    /// astropy's order (`pipeline_pix2foc`).
    #[inline(always)]
    fn pix1_to_foc1(&self, p0: f64, p1: f64) -> (f64, f64) {
        let sip = |a: f64, b: f64| match &self.sip {
            None => (a, b),
            Some(sip) => sip.pix1_to_foc1(a, b),
        };
        match &self.tables {
            None => sip(p0, p1),
            Some(tables) => tables.pix1_to_foc1(p0, p1, sip),
        }
    }

    /// [`Distortion::pix1_to_foc1`] 0-based (astropy's `pix2foc(..., 0)`).
    #[inline(always)]
    fn pix_to_foc_axes(&self, x0: f64, x1: f64) -> (f64, f64) {
        if self.sip.is_none() && self.tables.is_none() {
            return (x0, x1);
        }
        let (f0, f1) = self.pix1_to_foc1(x0 + 1.0, x1 + 1.0);
        (f0 - 1.0, f1 - 1.0)
    }

    /// 0-based pixel → intermediate coordinates (lng, lat order), `linear` being the affine
    /// step used when there is no TPV.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// # use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// # let d = Distortion::new(false, Some(sip), None).unwrap();
    /// let linear = Linear2::unity([50.0, 50.0], [-1e-4, 1e-4])?;
    /// assert_eq!(d.pix_to_img(&linear, 49.0, 49.0), (0.0, 0.0)); // CRPIX
    /// // Ten pixels along x, plus A = 0.01 px of distortion, times CDELT1.
    /// let (u, v) = d.pix_to_img(&linear, 59.0, 49.0);
    /// assert!((u + 10.01e-4).abs() < 1e-15 && v == 0.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(never)]
    pub fn pix_to_img(&self, linear: &Linear2, x: f64, y: f64) -> (f64, f64) {
        let (p0, p1) = self.order(x + 1.0, y + 1.0);
        let (f0, f1) = self.pix1_to_foc1(p0, p1);
        match &self.tpv {
            None => {
                let (a, b) = self.order(f0, f1);
                linear.pix1_to_img(a, b)
            }
            Some((lin, tpv)) => {
                let (t0, t1) = lin.pix1_to_pc(f0, f1);
                let (d0, d1) = tpv.distort(t0, t1);
                let (u0, u1) = lin.scale(d0, d1);
                self.order(u0, u1)
            }
        }
    }

    /// Intermediate coordinates (lng, lat order) → 0-based pixel, or `None` where the TPV
    /// inverse does not converge or the result is not finite. For SIP this is astropy's
    /// `best_solution` (see [`Sip::invert`]), whether or not the iteration converged.
    ///
    /// ```
    /// use reproject::wcs::linear::Linear2;
    /// # use reproject::wcs::distortion::{Distortion, Sip, SipParams, SipPolynomial};
    /// # let mut a = SipPolynomial::zeros(2);
    /// # a.coeffs[2][0] = 1e-4; // A_2_0
    /// # let ab = Some((a, SipPolynomial::zeros(2)));
    /// # let sip = Sip::new(&SipParams { crpix: [50.0, 50.0], ab, apbp: None })?;
    /// # let d = Distortion::new(false, Some(sip), None).unwrap();
    /// let linear = Linear2::unity([50.0, 50.0], [-1e-4, 1e-4])?;
    /// let (u, v) = d.pix_to_img(&linear, 80.0, 20.0);
    /// let (x, y) = d.img_to_pix(&linear, u, v).unwrap();
    /// assert!((x - 80.0).abs() < 1e-9 && (y - 20.0).abs() < 1e-9);
    /// assert_eq!(d.img_to_pix(&linear, f64::NAN, 0.0), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline(never)]
    pub fn img_to_pix(&self, linear: &Linear2, u: f64, v: f64) -> Option<(f64, f64)> {
        let (x0, x1) = match &self.tpv {
            None => {
                let (a, b) = linear.img_to_pix(u, v);
                self.order(a, b)
            }
            Some((lin, tpv)) => {
                let (w0, w1) = self.order(u, v);
                let (d0, d1) = lin.unscale(w0, w1);
                let (t0, t1) = tpv.undistort(d0, d1)?;
                let (p0, p1) = lin.pc_to_pix1(t0, t1);
                (p0 - 1.0, p1 - 1.0)
            }
        };
        let (x, y) = if self.iterates() {
            if !(x0.is_finite() && x1.is_finite()) {
                return None;
            }
            let focal = |a, b| self.pix_to_foc_axes(a, b);
            let how = &self.inversion;
            let s = match (&self.grid, &self.tables, &self.sip) {
                (Some(grid), _, _) => {
                    fixed_point::invert_on_grid(focal, x0, x1, (x0, x1), how, grid)
                }
                (None, None, Some(sip)) => sip.invert(x0, x1, how),
                _ => fixed_point::invert(focal, x0, x1, (x0, x1), how),
            };
            (s.x, s.y)
        } else {
            (x0, x1)
        };
        let (x, y) = self.order(x, y);
        (x.is_finite() && y.is_finite()).then_some((x, y))
    }

    /// Whether [`Distortion::img_to_pix_lanes`] inverts several points at once (SIP's, the
    /// lookup tables' and TPV's inverses all iterate).
    pub(crate) fn inverts_in_lanes(&self) -> bool {
        self.tpv.is_some() || self.iterates()
    }

    /// [`Distortion::img_to_pix`] of `L` points, the TPV and SIP inversions in lockstep
    /// ([`Tpv::undistort_lanes`], [`Sip::invert_lanes`]); the same bits as `L` calls. `None`
    /// marks a lane without a pixel.
    pub(crate) fn img_to_pix_lanes<const L: usize>(
        &self,
        linear: &Linear2,
        u: [f64; L],
        v: [f64; L],
    ) -> [Option<(f64, f64)>; L] {
        let before_sip: [Option<(f64, f64)>; L] = match &self.tpv {
            None => std::array::from_fn(|l| {
                let (a, b) = linear.img_to_pix(u[l], v[l]);
                Some(self.order(a, b))
            }),
            Some((lin, tpv)) => {
                let (mut d0, mut d1) = ([0.0; L], [0.0; L]);
                for l in 0..L {
                    let (w0, w1) = self.order(u[l], v[l]);
                    (d0[l], d1[l]) = lin.unscale(w0, w1);
                }
                tpv.undistort_lanes(d0, d1).map(|t| {
                    let (p0, p1) = lin.pc_to_pix1(t?.0, t?.1);
                    Some((p0 - 1.0, p1 - 1.0))
                })
            }
        };
        let general = self.tables.is_some() || self.grid.is_some();
        let pixels: [Option<(f64, f64)>; L] = match &self.sip {
            _ if general => self.invert_lanes_generally(before_sip),
            None => before_sip,
            Some(sip) => {
                let (mut x0, mut x1) = ([0.0; L], [0.0; L]);
                let mut valid = [false; L];
                for l in 0..L {
                    if let Some((a, b)) = before_sip[l]
                        && a.is_finite()
                        && b.is_finite()
                    {
                        (x0[l], x1[l], valid[l]) = (a, b, true);
                    } else {
                        // No pixel (as img_to_pix). The lane iterates from the reference
                        // pixel instead, where SIP vanishes unless the header gives A_0_0 or
                        // B_0_0, so it usually stops at once and keeps the others no longer.
                        let [c0, c1] = sip.crpix();
                        (x0[l], x1[l]) = (c0 - 1.0, c1 - 1.0);
                    }
                }
                let (x, y) = sip.invert_lanes(x0, x1, &self.inversion);
                std::array::from_fn(|l| valid[l].then_some((x[l], y[l])))
            }
        };
        pixels.map(|p| {
            let (x, y) = p?;
            let (x, y) = self.order(x, y);
            (x.is_finite() && y.is_finite()).then_some((x, y))
        })
    }

    /// The focal-plane points of `L` lanes (0-based, FITS axis order; `None`, or not finite:
    /// no pixel) inverted by the general fixed-point iteration: lookup tables, or astropy's
    /// call emulated ([`fixed_point::invert_lanes`]).
    fn invert_lanes_generally<const L: usize>(
        &self,
        focal: [Option<(f64, f64)>; L],
    ) -> [Option<(f64, f64)>; L] {
        let focal = focal.map(|p| p.filter(|(a, b)| a.is_finite() && b.is_finite()));
        let start = focal.map(|p| p.unwrap_or((f64::NAN, f64::NAN)));
        let (x, y) = fixed_point::invert_lanes(
            |a, b| self.pix_to_foc_axes(a, b),
            start.map(|p| p.0),
            start.map(|p| p.1),
            &self.inversion,
            self.grid.as_deref(),
        );
        std::array::from_fn(|l| focal[l].map(|_| (x[l], y[l])))
    }
}

/// A fixed pseudo-random sequence in [0, 1) (an LCG seeded with `seed`), for the
/// distortion modules' tests.
#[cfg(test)]
pub(crate) fn test_sequence(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// astropy's `_fix_pre2012_scamp_tpv`: whether the primary `CTYPE1` and `CTYPE2` both end in
/// `-TAN` and `PV1_j` or `PV2_j` with j ≥ 5 is present, in which case astropy reads the header
/// as TPV (`-TAN` → `-TPV`) and drops its SIP keywords.
///
/// ```
/// use reproject::wcs::{distortion::scamp_pre2012, header::Header};
/// let h = Header::parse("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPV2_7 = 0.0\n").unwrap();
/// assert!(scamp_pre2012(&h).unwrap());
/// let h = Header::parse("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPV2_4 = 0.0\n").unwrap();
/// assert!(!scamp_pre2012(&h).unwrap());
/// ```
pub fn scamp_pre2012(header: &Header) -> Result<bool> {
    for i in 1..=2 {
        let ctype = header.string(&format!("CTYPE{i}"))?.unwrap_or_default();
        if !ctype.trim().ends_with("-TAN") {
            return Ok(false);
        }
    }
    Ok(header.keywords().any(|k| {
        ["PV1_", "PV2_"].iter().any(|prefix| {
            k.strip_prefix(prefix).is_some_and(|m| {
                !m.is_empty()
                    && m.bytes().all(|b| b.is_ascii_digit())
                    && m.parse::<u64>().map_or(true, |m| m >= 5)
            })
        })
    }))
}

/// The CTYPE astropy writes for a pre-2012 SCAMP axis: upper case, `-TAN` → `-TPV`.
///
/// ```
/// use reproject::wcs::distortion::scamp_ctype;
/// assert_eq!(scamp_ctype(" ra---tan "), "RA---TPV");
/// assert_eq!(scamp_ctype("DEC--TAN"), "DEC--TPV");
/// ```
pub fn scamp_ctype(ctype: &str) -> String {
    ctype.trim().to_uppercase().replace("-TAN", "-TPV")
}

/// astropy's `_fix_scamp`, second rule: with SIP present, whether some axis whose CTYPE
/// contains `-TAN` carries `PVi_j` with j ≥ 5 while every CTYPE ends in `-SIP`; astropy then
/// removes all PV keywords. `pv` lists (0-based axis, m) of the `PVi_m` keywords.
///
/// ```
/// use reproject::wcs::distortion::scamp_pv_with_sip;
/// let sip = ["RA---TAN-SIP".to_string(), "DEC--TAN-SIP".to_string()];
/// assert!(scamp_pv_with_sip(&sip, &[(0, 1), (0, 5)])); // PV1_5: SCAMP's
/// assert!(!scamp_pv_with_sip(&sip, &[(0, 1), (1, 4)])); // no j ≥ 5
/// ```
pub fn scamp_pv_with_sip(ctype: &[String], pv: &[(usize, usize)]) -> bool {
    let upper: Vec<String> = ctype.iter().map(|c| c.trim().to_uppercase()).collect();
    let scamp = pv.iter().any(|&(i, _)| {
        let max_m = pv.iter().filter(|(a, _)| *a == i).map(|(_, m)| *m).max();
        upper.get(i).is_some_and(|c| c.contains("-TAN")) && max_m.is_some_and(|m| m >= 5)
    });
    scamp && upper.iter().all(|c| c.ends_with("-SIP"))
}

/// astropy's `_fix_scamp`, first rule: SIP is dropped when exactly two CTYPEs end in `-TPV`.
///
/// ```
/// use reproject::wcs::distortion::tpv_overrides_sip;
/// let ctypes = |a: &str, b: &str| [a.to_string(), b.to_string()];
/// assert!(tpv_overrides_sip(&ctypes("RA---TPV", "DEC--TPV")));
/// assert!(!tpv_overrides_sip(&ctypes("RA---TAN-SIP", "DEC--TAN-SIP")));
/// ```
pub fn tpv_overrides_sip(ctype: &[String]) -> bool {
    ctype
        .iter()
        .filter(|c| c.trim().to_uppercase().ends_with("-TPV"))
        .count()
        == 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scamp_conversion_rules() {
        let h = |t: &str| Header::parse(t).unwrap();
        assert!(scamp_pre2012(&h(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPV1_5 = 1.0\n"
        ))
        .unwrap());
        assert!(scamp_pre2012(&h(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPV2_12 = 1.0\n"
        ))
        .unwrap());
        // -TAN-SIP is not pre-2012 SCAMP; nor is an alternate description's PV.
        assert!(!scamp_pre2012(&h(
            "CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nPV1_5 = 1.0\n"
        ))
        .unwrap());
        assert!(!scamp_pre2012(&h(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPV1_5A = 1.0\n"
        ))
        .unwrap());
        assert!(!scamp_pre2012(&h(
            "CTYPE1 = 'RA---SIN'\nCTYPE2 = 'DEC--SIN'\nPV1_5 = 1.0\n"
        ))
        .unwrap());
        assert_eq!(scamp_ctype("ra---tan"), "RA---TPV");

        let sip = strings(&["RA---TAN-SIP", "DEC--TAN-SIP"]);
        assert!(scamp_pv_with_sip(&sip, &[(0, 1), (0, 5)]));
        assert!(!scamp_pv_with_sip(&sip, &[(0, 1), (1, 4)]));
        assert!(!scamp_pv_with_sip(
            &strings(&["RA---TAN-SIP", "DEC--TAN"]),
            &[(0, 5)]
        ));
        assert!(tpv_overrides_sip(&strings(&["RA---TPV", "DEC--TPV"])));
        assert!(!tpv_overrides_sip(&sip));
    }
}

//! [`CelestialTransform`]: a WCS's celestial part (the 2-D linear step, any SIP or TPV
//! distortion, the projection and the spherical rotation), and how it is built from the
//! parameters.

use super::celestial::SphericalRotation;
use super::distortion::{Distortion, LookupTables, Sip, Tpv};
use super::frame::CelestialFrame;
use super::linear::{Linear, Linear2, SequentLinear2};
use super::projection::Projection;
use super::WcsParams;
use crate::error::{Error, Result};

/// The celestial part: the 2-D linear step, the projection and the spherical rotation.
///
/// ```
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
/// let cel = wcs.celestial()?;
/// let (u, v) = cel.pixel_to_intermediate(20.0, 5.0);
/// let (phi, theta) = cel.projection().x2s(u, v).unwrap();
/// let (ra, dec) = cel.rotation().native_to_celestial(phi, theta);
/// assert_eq!(cel.pixel_to_world(20.0, 5.0), Some((ra, dec)));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct CelestialTransform {
    pub(super) lng: usize,
    pub(super) lat: usize,
    pub(super) linear: Linear2,
    /// SIP/TPV, checked once per point; `None` on the fast path.
    pub(super) distortion: Option<Box<Distortion>>,
    pub(super) projection: Projection,
    pub(super) rotation: SphericalRotation,
    pub(super) frame: CelestialFrame,
}

impl CelestialTransform {
    /// Indices of the longitude and latitude axes.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.celestial()?.axes(), (0, 1));
    /// let swapped = Wcs::from_header_str("CTYPE1 = 'DEC--TAN'\nCTYPE2 = 'RA---TAN'\n\
    ///     CRVAL1 = 30\nCRVAL2 = 150\n")?;
    /// assert_eq!(swapped.celestial()?.axes(), (1, 0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn axes(&self) -> (usize, usize) {
        (self.lng, self.lat)
    }

    /// The 2-D linear step of the celestial axes (`CDELT·PC`; with TPV the distortion sits
    /// between PC and CDELT, see [`CelestialTransform::distortion`]).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let linear = wcs.celestial()?.linear();
    /// assert_eq!(linear.crpix(), [16.0, 16.0]);
    /// assert_eq!(linear.matrix(), [[-0.001, 0.0], [0.0, 0.001]]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn linear(&self) -> &Linear2 {
        &self.linear
    }

    /// The SIP/TPV distortion, if any.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
    ///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
    ///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
    /// let distortion = wcs.celestial()?.distortion().unwrap();
    /// assert!(distortion.sip().is_some() && distortion.tpv().is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn distortion(&self) -> Option<&Distortion> {
        self.distortion.as_deref()
    }

    /// Mutable access to the distortion, e.g. to change how SIP is inverted.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::distortion::SipInversion;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\n\
    ///     CRPIX1 = 16\nCRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n\
    ///     A_ORDER = 2\nB_ORDER = 2\nA_2_0 = 1E-5\nB_0_2 = -1E-5\n")?;
    /// let mut cel = wcs.celestial()?.clone();
    /// cel.distortion_mut().unwrap().set_sip_inversion(SipInversion::astropy());
    /// assert_eq!(cel.distortion().unwrap().sip_inversion().max_iter, 20);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn distortion_mut(&mut self) -> Option<&mut Distortion> {
        self.distortion.as_deref_mut()
    }

    /// Adds distortion lookup tables (FITS axis order) to the distortion step
    /// ([`crate::wcs::Wcs::with_lookup_tables`]).
    pub(crate) fn add_lookup_tables(&mut self, tables: LookupTables) {
        let existing = self.distortion.take().map(|d| *d);
        self.distortion =
            Distortion::with_lookup_tables(existing, self.lat < self.lng, tables).map(Box::new);
    }

    /// Pixel (0-based, celestial axis order) → intermediate world coordinates (degrees),
    /// distortions included.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// // Ten pixels from the reference pixel along x: ten times CDELT1.
    /// let (u, v) = wcs.celestial()?.pixel_to_intermediate(25.0, 15.0);
    /// assert!((u + 0.01).abs() < 1e-15 && v == 0.0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pixel_to_intermediate(&self, x: f64, y: f64) -> (f64, f64) {
        match &self.distortion {
            None => self.linear.pix_to_img(x, y),
            Some(d) => d.pix_to_img(&self.linear, x, y),
        }
    }

    /// Intermediate world coordinates → pixel (0-based), distortions included; `None` where
    /// the TPV inverse fails or the result is not finite.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let cel = wcs.celestial()?;
    /// let (x, y) = cel.intermediate_to_pixel(-0.01, 0.02).unwrap();
    /// assert!((x - 25.0).abs() < 1e-9 && (y - 35.0).abs() < 1e-9);
    /// assert_eq!(cel.intermediate_to_pixel(f64::NAN, 0.0), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn intermediate_to_pixel(&self, u: f64, v: f64) -> Option<(f64, f64)> {
        let (x, y) = match &self.distortion {
            None => self.linear.img_to_pix(u, v),
            Some(d) => d.img_to_pix(&self.linear, u, v)?,
        };
        (x.is_finite() && y.is_finite()).then_some((x, y))
    }

    /// The projection.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::projection::ProjectionCode;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let projection = wcs.celestial()?.projection();
    /// assert_eq!(projection.code(), ProjectionCode::Tan);
    /// assert_eq!(projection.fiducial(), (0.0, 90.0));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// The native → celestial rotation.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// // TAN's fiducial point, the native pole, goes to CRVAL.
    /// let (ra, dec) = wcs.celestial()?.rotation().native_to_celestial(0.0, 90.0);
    /// assert!((ra - 150.0).abs() < 1e-12 && (dec - 30.0).abs() < 1e-12);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn rotation(&self) -> &SphericalRotation {
        &self.rotation
    }

    /// The celestial frame of the world coordinates.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// use reproject::wcs::frame::CelestialFrame;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert_eq!(wcs.celestial()?.frame(), &CelestialFrame::Icrs); // no RADESYS, no EQUINOX
    /// let gal = Wcs::from_header_str("CTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\n\
    ///     CRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// assert_eq!(gal.celestial()?.frame(), &CelestialFrame::Galactic);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn frame(&self) -> &CelestialFrame {
        &self.frame
    }

    /// Whether the latitude axis comes first in the header (`CTYPE1 = 'DEC--...'`), so that
    /// image order (x, y) is (latitude pixel, longitude pixel).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// assert!(!wcs.celestial()?.pixel_axes_swapped());
    /// let swapped = Wcs::from_header_str("CTYPE1 = 'DEC--CAR'\nCTYPE2 = 'RA---CAR'\n\
    ///     CRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// let cel = swapped.celestial()?;
    /// assert!(cel.pixel_axes_swapped());
    /// assert_eq!(cel.pixel_to_world(0.0, 1.0), Some((2.0, 1.0))); // x: latitude, y: longitude
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pixel_axes_swapped(&self) -> bool {
        self.lat < self.lng
    }

    /// Pixel (0-based, image order: `x` along the first FITS axis, `y` along the second) →
    /// (lon, lat), degrees.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let cel = wcs.celestial()?;
    /// let (ra, dec) = cel.pixel_to_world(15.0, 15.0).unwrap();
    /// assert!((ra - 150.0).abs() < 1e-12 && (dec - 30.0).abs() < 1e-12);
    /// assert!(cel.pixel_to_world(16.0, 15.0).unwrap().0 < ra); // CDELT1 < 0
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pixel_to_world(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (x, y) = if self.lat < self.lng { (y, x) } else { (x, y) };
        let (u, v) = self.pixel_to_intermediate(x, y);
        let (phi, theta) = self.projection.x2s(u, v)?;
        let (lon, lat) = self.rotation.native_to_celestial(phi, theta);
        // Huge but finite angles (LONPOLE, PVi_1 = 1E308) overflow to NaN in the rotation
        // (found by fuzzing); astropy gives NaN there, so `None`.
        (lon.is_finite() && lat.is_finite()).then_some((lon, lat))
    }

    /// Pixel (0-based, image order) → native unit vector of the projection (before the
    /// rotation to celestial coordinates); `None` outside the projection's domain.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let cel = wcs.celestial()?;
    /// assert_eq!(cel.pixel_to_native_vector(15.0, 15.0), Some([0.0, 0.0, 1.0])); // TAN's pole
    /// let v = cel.pixel_to_native_vector(40.0, -3.0).unwrap();
    /// assert!((v.iter().map(|c| c * c).sum::<f64>() - 1.0).abs() < 1e-15);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn pixel_to_native_vector(&self, x: f64, y: f64) -> Option<[f64; 3]> {
        let (x, y) = if self.lat < self.lng { (y, x) } else { (x, y) };
        let (u, v) = self.pixel_to_intermediate(x, y);
        self.projection.x2v(u, v)
    }

    /// Native direction → pixel (0-based, image order); `None` where the projection or the
    /// distortion inverse has no solution.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let cel = wcs.celestial()?;
    /// let v = cel.pixel_to_native_vector(40.0, -3.0).unwrap();
    /// let (x, y) = cel.native_vector_to_pixel(v).unwrap();
    /// assert!((x - 40.0).abs() < 1e-9 && (y + 3.0).abs() < 1e-9);
    /// assert_eq!(cel.native_vector_to_pixel([0.0, 0.0, -1.0]), None); // TAN: far hemisphere
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn native_vector_to_pixel(&self, v: [f64; 3]) -> Option<(f64, f64)> {
        let (u, w) = self.native_vector_to_intermediate(v)?;
        self.intermediate_to_image(u, w)
    }

    /// The first half of [`CelestialTransform::native_vector_to_pixel`]: the projection.
    #[inline]
    pub(crate) fn native_vector_to_intermediate(&self, v: [f64; 3]) -> Option<(f64, f64)> {
        self.projection.v2x(v)
    }

    /// The second half of [`CelestialTransform::native_vector_to_pixel`] and
    /// [`CelestialTransform::world_to_pixel`]: intermediate coordinates → pixel in image order.
    #[inline]
    pub(crate) fn intermediate_to_image(&self, u: f64, v: f64) -> Option<(f64, f64)> {
        let (a, b) = self.intermediate_to_pixel(u, v)?;
        Some(self.image_order(a, b))
    }

    /// [`CelestialTransform::intermediate_to_image`] of `L` points, SIP inverted in lockstep
    /// where [`CelestialTransform::inverts_in_lanes`]; the same bits as `L` calls.
    #[inline]
    pub(crate) fn intermediate_to_image_lanes<const L: usize>(
        &self,
        u: [f64; L],
        v: [f64; L],
    ) -> [Option<(f64, f64)>; L] {
        match self.distortion.as_deref() {
            Some(d) if d.inverts_in_lanes() => {
                let pixels = d.img_to_pix_lanes(&self.linear, u, v);
                pixels.map(|p| {
                    let (a, b) = p?;
                    (a.is_finite() && b.is_finite()).then_some(self.image_order(a, b))
                })
            }
            _ => std::array::from_fn(|l| self.intermediate_to_image(u[l], v[l])),
        }
    }

    /// Whether the inverse has a step worth running for several points at once (SIP's
    /// iteration).
    pub(crate) fn inverts_in_lanes(&self) -> bool {
        self.distortion
            .as_deref()
            .is_some_and(Distortion::inverts_in_lanes)
    }

    #[inline(always)]
    fn image_order(&self, a: f64, b: f64) -> (f64, f64) {
        if self.lat < self.lng {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// (lon, lat), degrees → pixel (0-based, image order).
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 16\n\
    ///     CRPIX2 = 16\nCRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n")?;
    /// let cel = wcs.celestial()?;
    /// let (x, y) = cel.world_to_pixel(150.0, 30.0).unwrap();
    /// assert!((x - 15.0).abs() < 1e-9 && (y - 15.0).abs() < 1e-9);
    /// assert_eq!(cel.world_to_pixel(330.0, -30.0), None); // the antipode: no TAN pixel
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[inline]
    pub fn world_to_pixel(&self, lon: f64, lat: f64) -> Option<(f64, f64)> {
        let (u, v) = self.world_to_intermediate(lon, lat)?;
        self.intermediate_to_image(u, v)
    }

    /// The first half of [`CelestialTransform::world_to_pixel`]: the rotation to native
    /// coordinates and the projection.
    #[inline]
    pub(crate) fn world_to_intermediate(&self, lon: f64, lat: f64) -> Option<(f64, f64)> {
        if !(lon.is_finite() && lat.is_finite()) {
            return None;
        }
        let (phi, theta) = self.rotation.celestial_to_native(lon, lat);
        self.projection.s2x(phi, theta)
    }
}

pub(super) fn build_celestial(
    params: &WcsParams,
    linear: &Linear,
    sip: &Option<Sip>,
    lng: usize,
    lat: usize,
) -> Result<CelestialTransform> {
    let code = params
        .projection
        .ok_or_else(|| Error::InconsistentAxes("celestial axes without a projection".into()))?;
    let projection = Projection::new(code, &params.projection_params)?;
    let (proj_phi0, proj_theta0) = projection.fiducial();
    let phi0 = params.phi0.unwrap_or(proj_phi0);
    let theta0 = params.theta0.unwrap_or(proj_theta0);
    let rotation = SphericalRotation::new(
        params.crval[lng],
        params.crval[lat],
        phi0,
        theta0,
        params.lonpole,
        params.latpole,
    )?;
    let frame = params.frame();
    // SIP and TPV work in FITS axis order; the celestial transform in (lng, lat) order.
    let (a, b) = (lng.min(lat), lng.max(lat));
    let tpv = match &params.tpv {
        None => None,
        Some(t) => {
            let seq = SequentLinear2::new(
                [params.crpix[a], params.crpix[b]],
                [
                    [params.pc[a][a], params.pc[a][b]],
                    [params.pc[b][a], params.pc[b][b]],
                ],
                [params.cdelt[a], params.cdelt[b]],
            )?;
            Some((seq, Tpv::in_axis_order(t, lat < lng)?))
        }
    };
    let distortion = Distortion::new(lat < lng, sip.clone(), tpv).map(Box::new);
    Ok(CelestialTransform {
        lng,
        lat,
        linear: linear.sub2(lng, lat)?,
        distortion,
        projection,
        rotation,
        frame,
    })
}

//! WCS parameters read from a header (WCSLIB's `wcspih` + the header parts of `wcsset`):
//! axis types, the PC/CD/CROTA precedence, units, projection parameters and aliases.

use serde::{Deserialize, Serialize};

use super::distortion::{self, SipParams, TpvParams};
use super::frame::CelestialFrame;
use super::header::Header;
use super::projection::{ProjectionCode, ProjectionParams, PV_COUNT};
use super::trig::{cosd, sincosd, sind, R2D};
use super::units;
use crate::error::{Error, Result};

/// The most axes a FITS WCS may have.
const MAX_AXES: usize = 99;

/// What kind of world coordinate an axis carries.
///
/// ```
/// use reproject::wcs::{AxisType, Wcs};
/// let wcs = Wcs::from_header_str("NAXIS = 3\nCTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\n\
///     CTYPE3 = 'FREQ'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
/// assert_eq!(wcs.params().axis_types,
///     [AxisType::Longitude, AxisType::Latitude, AxisType::Linear]);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AxisType {
    /// Celestial longitude of a projection pair (`RA---TAN`, `GLON-CAR`, ...).
    Longitude,
    /// Celestial latitude of a projection pair.
    Latitude,
    /// Linear: `world = CRVAL + x` (also plain `FREQ`, `STOKES`, 4-character `RA`, ...).
    Linear,
    /// Logarithmic (`-LOG`): `world = CRVAL · exp(x / CRVAL)`.
    Log,
    /// A spectral type with a non-linear algorithm code (`WAVE-F2W`, `VRAD-V2F`, ...; see
    /// [`super::spectral`]).
    SpectralAlgorithm,
    /// An algorithm this crate does not evaluate (`-TAB`, grisms, ...).
    Unsupported(String),
}

/// Everything needed to build a [`super::Wcs`], in canonical units (degrees for celestial
/// axes), after the header precedence rules and astropy's default repairs.
///
/// ```
/// use reproject::wcs::{header::Header, WcsParams};
/// let h = Header::parse(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCD1_1 = -2.0\nCD2_2 = 3.0\n\
///      CDELT1 = 7.0\nCRVAL1 = 0.0\nCRVAL2 = 0.0\n",
/// )
/// .unwrap();
/// let p = WcsParams::from_header(&h, None).unwrap();
/// assert_eq!(p.cdelt, vec![1.0, 1.0]);          // CD wins: CDELT is reset to 1
/// assert_eq!(p.pc, vec![vec![-2.0, 0.0], vec![0.0, 3.0]]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WcsParams {
    /// CTYPEi, trailing blanks removed.
    pub ctype: Vec<String>,
    /// CUNITi (celestial axes: "deg" after conversion).
    pub cunit: Vec<String>,
    /// CRPIXi, 1-based.
    pub crpix: Vec<f64>,
    /// CRVALi.
    pub crval: Vec<f64>,
    /// CDELTi (1 when a CD matrix is used).
    pub cdelt: Vec<f64>,
    /// PCi_j as `pc[i][j]` (the CD matrix when CD is used; from CROTA otherwise).
    pub pc: Vec<Vec<f64>>,
    /// Kind of each axis.
    pub axis_types: Vec<AxisType>,
    /// The projection of the celestial pair (NCP and GLS already translated).
    pub projection: Option<ProjectionCode>,
    /// Projection parameters (PVi_m of the latitude axis, fiducial offset).
    pub projection_params: ProjectionParams,
    /// Native longitude of the fiducial point if given (PVj_1 of the longitude axis).
    pub phi0: Option<f64>,
    /// Native latitude of the fiducial point if given (PVj_2 of the longitude axis).
    pub theta0: Option<f64>,
    /// LONPOLE (or PVj_3), `None` = default.
    pub lonpole: Option<f64>,
    /// LATPOLE (or PVj_4), `None` = default (+90).
    pub latpole: Option<f64>,
    /// RADESYS (or legacy RADECSYS).
    pub radesys: Option<String>,
    /// EQUINOX (or legacy EPOCH).
    pub equinox: Option<f64>,
    /// MJD-OBS, from the header or derived from DATE-OBS (WCSLIB's `datfix`).
    pub mjd_obs: Option<f64>,
    /// DATE-OBS in ISO 8601 form (old `DD/MM/YY` dates rewritten, or derived from MJD-OBS).
    #[serde(default)]
    pub date_obs: Option<String>,
    /// RESTFRQ (Hz; legacy RESTFREQ), 0 when absent: spectral algorithms with velocities use it.
    #[serde(default)]
    pub restfrq: f64,
    /// RESTWAV (m), 0 when absent.
    #[serde(default)]
    pub restwav: f64,
    /// The observer keywords of the header (`HGLN_OBS`, `DSUN_OBS`, `DATE-OBS`, ...) as
    /// `KEY=value` pairs: solar frames (helioprojective, heliographic, heliocentric) depend on
    /// them, so two such frames are the same only when these agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<String>,
    /// The time keywords of the header other than the reference date (`TIMESYS`, `TREFPOS`,
    /// `TIMEUNIT`, ...) as `KEY=value` pairs: time axes of two WCS convert only when they agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_reference: Option<String>,
    /// The reference time of time axes as MJD (integer and fractional parts, from MJDREF\[IF\],
    /// JDREF\[IF\] or DATEREF), `None` when the header has none (astropy then uses MJD 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mjdref: Option<[f64; 2]>,
    /// TIMESYS, the time scale of `TIME` axes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timesys: Option<String>,
    /// NAXISn of the header (the image shape, FITS order), empty if NAXIS = 0.
    pub image_shape: Vec<usize>,
    /// SIP distortion (astropy's, applied to pixel coordinates before everything else).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sip: Option<SipParams>,
    /// TPV distortion of the celestial axes (`-TPV`; the projection is then TAN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpv: Option<TpvParams>,
}

impl WcsParams {
    /// Number of axes.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("NAXIS = 3\nCTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    ///     CTYPE3 = 'FREQ'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// assert_eq!(wcs.params().naxis(), 3);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn naxis(&self) -> usize {
        self.crpix.len()
    }

    /// Indices of the (longitude, latitude) axes, when the WCS is celestial.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// // Latitude first: (longitude, latitude) = (1, 0).
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'DEC--SIN'\nCTYPE2 = 'RA---SIN'\n\
    ///     CRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// assert_eq!(wcs.params().celestial_axes(), Some((1, 0)));
    /// let linear = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\n")?;
    /// assert_eq!(linear.params().celestial_axes(), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn celestial_axes(&self) -> Option<(usize, usize)> {
        let lng = self
            .axis_types
            .iter()
            .position(|t| *t == AxisType::Longitude)?;
        let lat = self
            .axis_types
            .iter()
            .position(|t| *t == AxisType::Latitude)?;
        Some((lng, lat))
    }

    /// The time scale of time axis `i` as astropy reads it: the CTYPE's own scale, or
    /// TIMESYS (default UTC) for `TIME`.
    ///
    /// ```
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'TIME'\nCTYPE2 = 'TAI'\nTIMESYS = 'TT'\n")?;
    /// assert_eq!(wcs.params().time_scale(0), "tt"); // TIME: TIMESYS's scale
    /// assert_eq!(wcs.params().time_scale(1), "tai"); // its own
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn time_scale(&self, i: usize) -> String {
        let name = self.ctype[i].split('-').next().unwrap_or("");
        let name = name.trim().to_ascii_lowercase();
        if name != "time" {
            return name;
        }
        self.timesys
            .as_deref()
            .map(|t| t.trim().to_ascii_lowercase())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "utc".into())
    }

    /// The celestial frame (astropy's choice from CTYPE, RADESYS and EQUINOX).
    ///
    /// ```
    /// use reproject::wcs::{frame::CelestialFrame, Wcs};
    /// let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n";
    /// let fk4 = Wcs::from_header_str(&format!("{header}RADESYS = 'FK4'\n"))?;
    /// assert_eq!(fk4.params().frame(), CelestialFrame::Fk4 { equinox: 1950.0 });
    /// let icrs = Wcs::from_header_str(header)?; // no RADESYS nor EQUINOX: ICRS
    /// assert_eq!(icrs.params().frame(), CelestialFrame::Icrs);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn frame(&self) -> CelestialFrame {
        let prefix = self
            .celestial_axes()
            .map(|(lng, _)| ctype_prefix(&self.ctype[lng]).to_string())
            .unwrap_or_default();
        let frame = CelestialFrame::from_keywords(&prefix, self.radesys.as_deref(), self.equinox);
        match (&frame, &self.observer) {
            (CelestialFrame::Other(name), Some(observer))
                if SOLAR_FRAMES.contains(&prefix.as_str()) =>
            {
                CelestialFrame::Other(format!("{name} seen by the observer {observer}"))
            }
            _ => frame,
        }
    }

    /// Reads the WCS `alt` (`None` = primary) of a header.
    ///
    /// ```
    /// use reproject::wcs::{header::Header, WcsParams};
    /// let header = Header::parse("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 10\n\
    ///     CRVAL2 = 20\nCTYPE1A = 'GLON-CAR'\nCTYPE2A = 'GLAT-CAR'\nCRVAL1A = 1\nCRVAL2A = 2\n")?;
    /// assert_eq!(WcsParams::from_header(&header, None)?.crval, [10.0, 20.0]);
    /// assert_eq!(WcsParams::from_header(&header, Some('A'))?.crval, [1.0, 2.0]);
    /// assert!(WcsParams::from_header(&header, Some('B')).is_err()); // no such WCS
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_header(header: &Header, alt: Option<char>) -> Result<WcsParams> {
        let alt = match alt {
            None | Some(' ') => String::new(),
            Some(c @ 'A'..='Z') => c.to_string(),
            Some(c) => {
                return Err(Error::InvalidArgument(format!(
                    "alternate WCS letter must be A-Z, got '{c}'"
                )))
            }
        };
        let key = |base: &str| format!("{base}{alt}");
        let indexed = IndexedKeywords::scan(header, &alt)?;

        let naxis_header = header.int("NAXIS")?.unwrap_or(0);
        if !(0..=MAX_AXES as i64).contains(&naxis_header) {
            return Err(Error::InvalidValue {
                keyword: "NAXIS".into(),
                reason: format!("{naxis_header} is not in 0..={MAX_AXES}"),
            });
        }
        let wcsaxes = header.int(&key("WCSAXES"))?.unwrap_or(0);
        if !(0..=MAX_AXES as i64).contains(&wcsaxes) {
            return Err(Error::InvalidValue {
                keyword: key("WCSAXES"),
                reason: format!("{wcsaxes} is not in 0..={MAX_AXES}"),
            });
        }
        // An alternate description exists only through its keywords (WCSLIB's wcspih): one
        // the header never mentions is refused, as astropy refuses it (KeyError), not read as
        // an empty WCS.
        if !alt.is_empty() && indexed.max_axis == 0 && !header.contains(&key("WCSAXES")) {
            return Err(Error::InvalidArgument(format!(
                "the header has no alternate WCS '{alt}' (no WCSAXES{alt}, CTYPEi{alt}, \
                 CRVALi{alt}, ... keyword)"
            )));
        }
        let n = (naxis_header as usize)
            .max(wcsaxes as usize)
            .max(indexed.max_axis);

        let mut image_shape = Vec::with_capacity(naxis_header as usize);
        for i in 1..=naxis_header as usize {
            let len = header.int(&format!("NAXIS{i}"))?.unwrap_or(0);
            image_shape.push(usize::try_from(len).map_err(|_| Error::InvalidValue {
                keyword: format!("NAXIS{i}"),
                reason: format!("negative axis length {len}"),
            })?);
        }

        // astropy reads pre-2012 SCAMP headers (-TAN with PV1_j/PV2_j, j >= 5) as TPV and
        // ignores their SIP keywords; otherwise it reads SIP (WCS.__init__).
        let scamp_tpv = distortion::scamp_pre2012(header)?;
        let mut sip = if scamp_tpv {
            None
        } else {
            SipParams::from_header(header, &alt)?
        };

        let float_or = |base: &str, i: usize, default: f64| -> Result<f64> {
            Ok(header
                .float(&key(&format!("{base}{i}")))?
                .unwrap_or(default))
        };
        let mut ctype = Vec::with_capacity(n);
        let mut cunit = Vec::with_capacity(n);
        let mut crpix = Vec::with_capacity(n);
        let mut crval = Vec::with_capacity(n);
        let mut cdelt = Vec::with_capacity(n);
        for i in 1..=n {
            ctype.push(
                header
                    .string(&key(&format!("CTYPE{i}")))?
                    .unwrap_or_default(),
            );
            cunit.push(
                header
                    .string(&key(&format!("CUNIT{i}")))?
                    .unwrap_or_default(),
            );
            crpix.push(float_or("CRPIX", i, 0.0)?);
            crval.push(float_or("CRVAL", i, 0.0)?);
            cdelt.push(float_or("CDELT", i, 1.0)?);
        }
        if scamp_tpv && alt.is_empty() {
            for c in ctype.iter_mut().take(2) {
                *c = distortion::scamp_ctype(c);
            }
        }
        // astropy _fix_scamp: explicit -TPV CTYPEs win over SIP.
        if distortion::tpv_overrides_sip(&ctype) {
            sip = None;
        }
        if sip.is_some() && n != 2 {
            return Err(Error::InconsistentAxes(format!(
                "SIP distortion needs exactly 2 WCS axes, the header has {n}"
            )));
        }

        // Axis types and the celestial pair.
        let parsed: Vec<ParsedCtype> = ctype
            .iter()
            .map(|c| ParsedCtype::parse(c))
            .collect::<Result<_>>()?;
        let axis_types: Vec<AxisType> = parsed.iter().map(|p| p.axis_type.clone()).collect();
        let (celestial, code) = celestial_pair(&ctype, &parsed)?;

        let pc = linear_matrix(header, &indexed, &alt, celestial, &mut cdelt)?;
        normalise_units(&ctype, &mut cunit, &mut crval, &mut cdelt, celestial, &alt)?;
        let ProjectionKeywords {
            mut projection_params,
            mut phi0,
            mut theta0,
            mut offset,
            lonpole,
            latpole,
            tpv,
        } = projection_keywords(
            header,
            &indexed,
            &alt,
            code.as_deref(),
            celestial,
            &ctype,
            sip.is_some(),
        )?;

        // Aliases: NCP -> SIN, GLS -> SFL (wcs.c, wcsfix.c celfix).
        let mut projection = None;
        if let (Some(code), Some((_, lat))) = (code, celestial) {
            projection = Some(match code.as_str() {
                "NCP" => {
                    let lat0 = crval[lat];
                    if lat0 == 0.0 {
                        return Err(Error::InvalidProjectionParameters {
                            code: "NCP".into(),
                            reason: "the reference latitude must not be 0".into(),
                        });
                    }
                    projection_params.pv[1] = Some(0.0);
                    projection_params.pv[2] = Some(cosd(lat0) / sind(lat0));
                    ProjectionCode::Sin
                }
                "GLS" => {
                    offset = true;
                    phi0 = Some(0.0);
                    theta0 = Some(crval[lat]);
                    ProjectionCode::Sfl
                }
                // TPV is TAN with a sequent distortion (wcsset).
                "TPV" => ProjectionCode::Tan,
                other => other.parse()?,
            });
        }
        // WCSLIB would default a missing CRVAL to 0; a celestial header without one is broken
        // far more often than it means (0, 0), so it is refused.
        if let Some((lng, lat)) = celestial {
            for i in [lng, lat] {
                let k = key(&format!("CRVAL{}", i + 1));
                if !header.contains(&k) {
                    return Err(Error::MissingKeyword(k));
                }
            }
        }
        if offset && let (Some(p), Some(t)) = (phi0, theta0) {
            projection_params.fiducial = Some((p, t));
        }

        let radesys = match header.string(&key("RADESYS"))? {
            Some(r) => Some(r),
            None => header.string("RADECSYS")?,
        };
        let equinox = match header.float(&key("EQUINOX"))? {
            Some(e) => Some(e),
            None => header.float("EPOCH")?,
        };
        let (date_obs, mjd_obs) = date_fix(
            header.string("DATE-OBS").ok().flatten(),
            header.float("MJD-OBS").ok().flatten(),
        );

        // Distortion-paper lookup tables live in other HDUs and are not evaluated: refuse
        // them rather than reproject as if they were absent.
        if let Some(k) = header.keywords().find(|k| {
            ["CPDIS", "CQDIS", "D2IMDIS"]
                .iter()
                .any(|p| k.starts_with(p))
        }) {
            return Err(Error::Unsupported(format!(
                "{k}: distortion lookup tables (CPDIS/CQDIS/D2IM) are not evaluated by the \
                 engine (from Python, astropy computes the positions of such WCS)"
            )));
        }
        let restfrq = match header.float(&key("RESTFRQ"))? {
            Some(f) => f,
            None => header.float(&key("RESTFREQ"))?.unwrap_or(0.0),
        };
        let restwav = header.float(&key("RESTWAV"))?.unwrap_or(0.0);
        let observer = keyword_values(header, &OBSERVER_KEYWORDS)?;
        let time_reference = keyword_values(header, &TIME_REFERENCE_KEYWORDS)?;
        let mjdref = reference_mjd(header)?;
        let timesys = header.string(&key("TIMESYS"))?;
        Ok(WcsParams {
            ctype,
            cunit,
            crpix,
            crval,
            cdelt,
            pc,
            axis_types,
            projection,
            projection_params,
            phi0,
            theta0,
            lonpole,
            latpole,
            radesys,
            equinox,
            mjd_obs,
            date_obs,
            restfrq,
            restwav,
            observer,
            time_reference,
            mjdref,
            timesys,
            image_shape,
            sip,
            tpv,
        })
    }
}

/// The PCi_j matrix of an alternate description `alt` (`""`: primary) of `cdelt.len()` axes,
/// by WCSLIB's precedence (wcs.c `altlin`): PCi_j where any is given; else CDi_j, with
/// `cdfix`'s unit diagonal for an all-zero row and column, and `cdelt` then all ones (CD is
/// PC × CDELT); else, for a celestial pair, CROTA of its latitude axis with the pair's CDELT
/// ratio; else the identity.
fn linear_matrix(
    header: &Header,
    indexed: &IndexedKeywords,
    alt: &str,
    celestial: Option<(usize, usize)>,
    cdelt: &mut Vec<f64>,
) -> Result<Vec<Vec<f64>>> {
    let key = |base: &str| format!("{base}{alt}");
    let n = cdelt.len();
    let mut pc = identity(n);
    if !indexed.pc.is_empty() {
        for &(i, j, ref k) in &indexed.pc {
            pc[i][j] = header.float(k)?.unwrap_or(0.0);
        }
    } else if !indexed.cd.is_empty() {
        let mut cd = vec![vec![0.0; n]; n];
        for &(i, j, ref k) in &indexed.cd {
            cd[i][j] = header.float(k)?.unwrap_or(0.0);
        }
        // cdfix: an all-zero row and column gets a unit diagonal.
        for i in 0..n {
            let row_zero = cd[i].iter().all(|&v| v == 0.0);
            if row_zero && cd.iter().all(|row| row[i] == 0.0) {
                cd[i][i] = 1.0;
            }
        }
        pc = cd;
        *cdelt = vec![1.0; n];
    } else if let Some((lng, lat)) = celestial
        && let Some(rho) = header.float(&key(&format!("CROTA{}", lat + 1)))?
    {
        let (s, c) = sincosd(rho);
        let lambda = cdelt[lat] / cdelt[lng];
        pc[lng][lng] = c;
        pc[lat][lat] = c;
        pc[lng][lat] = -s * lambda;
        pc[lat][lng] = s / lambda;
    }
    Ok(pc)
}

/// The units of an alternate description `alt` (`""`: primary) made WCSLIB's (`wcs_units`,
/// `unitfix`): the celestial pair's CRVAL and CDELT in degrees, each spectral axis's in SI
/// units, and their CUNIT saying so.
fn normalise_units(
    ctype: &[String],
    cunit: &mut [String],
    crval: &mut [f64],
    cdelt: &mut [f64],
    celestial: Option<(usize, usize)>,
    alt: &str,
) -> Result<()> {
    let key = |base: &str| format!("{base}{alt}");
    // Celestial units to degrees (wcs_units / unitfix).
    if let Some((lng, lat)) = celestial {
        for i in [lng, lat] {
            let scale = angle_unit_scale(&cunit[i]).ok_or_else(|| Error::InvalidValue {
                keyword: key(&format!("CUNIT{}", i + 1)),
                reason: format!("'{}' is not an angular unit", cunit[i]),
            })?;
            if scale != 1.0 {
                crval[i] *= scale;
                cdelt[i] *= scale;
            }
            cunit[i] = "deg".into();
        }
    }

    // Spectral units to SI (wcs_units): a spectral world value is always in SI.
    for i in 0..ctype.len() {
        let Some(si) = units::spectral_si_unit(spectral_kind(&ctype[i])) else {
            continue;
        };
        if !cunit[i].trim().is_empty() {
            let scale =
                units::conversion_factor(&cunit[i], si).map_err(|e| Error::InvalidValue {
                    keyword: key(&format!("CUNIT{}", i + 1)),
                    reason: format!("'{}' is not a unit of {}: {e}", cunit[i], ctype[i]),
                })?;
            if scale != 1.0 {
                crval[i] *= scale;
                cdelt[i] *= scale;
            }
        }
        cunit[i] = si.into();
    }
    Ok(())
}

/// What the keywords of the projection and of the celestial rotation say.
struct ProjectionKeywords {
    projection_params: ProjectionParams,
    /// PVi_1 and PVi_2 of the longitude axis: the fiducial point's native coordinates.
    phi0: Option<f64>,
    theta0: Option<f64>,
    /// PVi_0 of the longitude axis: whether the fiducial point is offset to (phi0, theta0).
    offset: bool,
    /// LONPOLE and LATPOLE, or PVi_3 and PVi_4 of the longitude axis.
    lonpole: Option<f64>,
    latpole: Option<f64>,
    /// A TPV projection's coefficients: the PVi_m of both celestial axes.
    tpv: Option<TpvParams>,
}

/// The projection and rotation keywords of an alternate description `alt` (`""`: primary):
/// LONPOLE, LATPOLE, and the PVi_m (PROJPm) of the celestial pair, which are the projection's
/// parameters on the latitude axis, the fiducial point and pole on the longitude axis, and
/// the coefficients of a TPV (`code`) on both; a SIP header's SCAMP PVs are dropped, as
/// astropy's `_fix_scamp` drops them.
fn projection_keywords(
    header: &Header,
    indexed: &IndexedKeywords,
    alt: &str,
    code: Option<&str>,
    celestial: Option<(usize, usize)>,
    ctype: &[String],
    has_sip: bool,
) -> Result<ProjectionKeywords> {
    let key = |base: &str| format!("{base}{alt}");
    let mut projection_params = ProjectionParams::default();
    let (mut phi0, mut theta0, mut offset) = (None, None, false);
    let mut lonpole = header.float(&key("LONPOLE"))?;
    let mut latpole = header.float(&key("LATPOLE"))?;
    // TPV: the PVi_m of both celestial axes are its coefficients (wcsset).
    let mut tpv = (code == Some("TPV")).then(TpvParams::default);
    // astropy _fix_scamp: SIP with SCAMP PVs on -TAN-SIP axes: the PVs are dropped.
    let axis_pv: Vec<(usize, usize)> = indexed
        .pv
        .iter()
        .filter_map(|(i, m, _)| i.map(|i| (i, *m)))
        .collect();
    let drop_pv = has_sip && distortion::scamp_pv_with_sip(ctype, &axis_pv);
    if let (Some((lng, lat)), false) = (celestial, drop_pv) {
        for (i, m, k) in &indexed.pv {
            let value = header.float(k)?.unwrap_or(0.0);
            if let (Some(t), Some(i)) = (tpv.as_mut(), *i)
                && (i == lng || i == lat)
            {
                if *m > distortion::tpv::TPV_MAX_TERM {
                    return Err(Error::PvOutOfRange {
                        keyword: k.clone(),
                        reason: format!("TPV terms go up to {}", distortion::tpv::TPV_MAX_TERM),
                    });
                }
                let list = if i == lng { &mut t.lng } else { &mut t.lat };
                list.push((*m, value));
                continue;
            }
            let i = i.unwrap_or(lat);
            if i == lat {
                if *m >= PV_COUNT {
                    return Err(Error::PvOutOfRange {
                        keyword: k.clone(),
                        reason: format!("projection parameters go up to {}", PV_COUNT - 1),
                    });
                }
                projection_params.pv[*m] = Some(value);
            } else if i == lng {
                match m {
                    0 => offset = value != 0.0,
                    1 => phi0 = Some(value),
                    2 => theta0 = Some(value),
                    3 => lonpole = Some(value),
                    4 => latpole = Some(value),
                    _ => {
                        return Err(Error::PvOutOfRange {
                            keyword: k.clone(),
                            reason: "the longitude axis takes PV 0 to 4".into(),
                        })
                    }
                }
            }
        }
    }
    Ok(ProjectionKeywords {
        projection_params,
        phi0,
        theta0,
        offset,
        lonpole,
        latpole,
        tpv,
    })
}

/// WCSLIB's `datfix` for the observation date: an old `DD/MM/YY` DATE-OBS becomes ISO 8601,
/// a missing MJD-OBS is derived from DATE-OBS and a missing DATE-OBS from MJD-OBS. An
/// unreadable date is left as it is (no supported frame depends on it).
fn date_fix(date: Option<String>, mjd: Option<f64>) -> (Option<String>, Option<f64>) {
    let date = date.map(|d| {
        let d = d.trim().to_string();
        match d.split('/').collect::<Vec<_>>()[..] {
            [dd, mm, yy] if dd.len() == 2 && mm.len() == 2 && yy.len() == 2 => {
                format!("19{yy}-{mm}-{dd}")
            }
            _ => d,
        }
    });
    let mjd = mjd.or_else(|| date.as_deref().and_then(iso_to_mjd));
    let date = date.or_else(|| mjd.and_then(mjd_to_iso));
    (date, mjd)
}

/// Days from 1858-11-17 of a proleptic Gregorian date.
fn days_from_mjd_epoch(y: i64, m: i64, d: i64) -> i64 {
    // Days since 0000-03-01 (March-based year), then shifted.
    let (y, m) = if m <= 2 { (y - 1, m + 12) } else { (y, m) };
    let days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * (m - 3) + 2) / 5 + d - 1;
    days - 678_881 // 1858-11-17
}

/// `YYYY-MM-DD[Thh:mm:ss[.s]]` → MJD.
fn iso_to_mjd(text: &str) -> Option<f64> {
    let (date, time) = text.split_once('T').unwrap_or((text, ""));
    let mut parts = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    // Years beyond ±10^9 would overflow the day count (found by fuzzing).
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
        || y.unsigned_abs() > 1_000_000_000
        || parts.next().is_some()
    {
        return None;
    }
    let mut seconds = 0.0;
    if !time.is_empty() {
        let mut hms = time.split(':').map(|p| p.parse::<f64>().ok());
        let (h, mi, s) = (
            hms.next()??,
            hms.next().flatten().unwrap_or(0.0),
            hms.next().flatten().unwrap_or(0.0),
        );
        seconds = h * 3600.0 + mi * 60.0 + s;
    }
    Some(days_from_mjd_epoch(y, m, d) as f64 + seconds / 86400.0)
}

/// MJD → `YYYY-MM-DDThh:mm:ss` (to the second); `None` beyond ±10^11 days, where the
/// integer day arithmetic would overflow (found by fuzzing: MJD-OBS = 1E300).
fn mjd_to_iso(mjd: f64) -> Option<String> {
    if mjd.is_nan() || mjd.abs() > 1e11 {
        return None;
    }
    let day = mjd.floor();
    let mut seconds = ((mjd - day) * 86400.0).round() as i64;
    let mut day = day as i64;
    if seconds >= 86400 {
        seconds -= 86400;
        day += 1;
    }
    // Inverse of days_from_mjd_epoch (civil-from-days).
    let z = day + 678_881;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    ))
}

/// CTYPE split into its parts.
struct ParsedCtype {
    axis_type: AxisType,
    /// Projection code of a celestial axis.
    code: Option<String>,
}

impl ParsedCtype {
    fn parse(ctype: &str) -> Result<ParsedCtype> {
        let t = ctype.trim_end();
        let bytes = t.as_bytes();
        let linear = ParsedCtype {
            axis_type: AxisType::Linear,
            code: None,
        };
        if t.len() >= 8 && t.is_ascii() && bytes[4] == b'-' {
            let prefix = ctype_prefix(t);
            let code = &t[5..8];
            let suffix = &t[8..];
            let celestial = if is_longitude(prefix) {
                Some(AxisType::Longitude)
            } else if is_latitude(prefix) {
                Some(AxisType::Latitude)
            } else {
                None
            };
            return match celestial {
                Some(axis_type) => {
                    if !(suffix.is_empty() || suffix == "-SIP") || code.contains('-') {
                        return Err(Error::MalformedCtype(t.to_string()));
                    }
                    Ok(ParsedCtype {
                        axis_type,
                        code: Some(code.to_string()),
                    })
                }
                None if code == "LOG" && suffix.is_empty() => Ok(ParsedCtype {
                    axis_type: AxisType::Log,
                    code: None,
                }),
                None if code == "---" || code.trim_matches('-').is_empty() => Ok(linear),
                None if super::spectral::is_algorithm(t) => Ok(ParsedCtype {
                    axis_type: AxisType::SpectralAlgorithm,
                    code: None,
                }),
                None => Ok(ParsedCtype {
                    axis_type: AxisType::Unsupported(t.to_string()),
                    code: None,
                }),
            };
        }
        // Not in 4-3 form: linear, unless it is a mangled celestial type such as 'RA--TAN'.
        let head = t.split('-').next().unwrap_or("");
        if (is_longitude(head) || is_latitude(head))
            && !t[head.len()..].trim_matches('-').is_empty()
        {
            return Err(Error::MalformedCtype(t.to_string()));
        }
        Ok(linear)
    }
}

/// The axis-type part of a CTYPE (`RA`, `DEC`, `GLON`, ...).
fn ctype_prefix(ctype: &str) -> &str {
    ctype.get(..4).unwrap_or(ctype).trim_end_matches('-')
}

fn is_longitude(prefix: &str) -> bool {
    prefix == "RA" || (prefix.len() == 4 && (prefix.ends_with("LON") || prefix.ends_with("LN")))
}

fn is_latitude(prefix: &str) -> bool {
    prefix == "DEC" || (prefix.len() == 4 && (prefix.ends_with("LAT") || prefix.ends_with("LT")))
}

/// The (longitude, latitude) axis indices and their projection code, if the WCS is celestial.
type CelestialPair = (Option<(usize, usize)>, Option<String>);

/// The (lng, lat) axes and their projection code, checking that they pair up.
fn celestial_pair(ctype: &[String], parsed: &[ParsedCtype]) -> Result<CelestialPair> {
    let find = |want: AxisType| -> Result<Option<usize>> {
        let found: Vec<usize> = parsed
            .iter()
            .enumerate()
            .filter(|(_, p)| p.axis_type == want)
            .map(|(i, _)| i)
            .collect();
        match found.len() {
            0 => Ok(None),
            1 => Ok(Some(found[0])),
            _ => Err(Error::InconsistentAxes(format!(
                "more than one {want:?} axis: {:?}",
                found.iter().map(|&i| &ctype[i]).collect::<Vec<_>>()
            ))),
        }
    };
    match (find(AxisType::Longitude)?, find(AxisType::Latitude)?) {
        (None, None) => Ok((None, None)),
        (Some(lng), Some(lat)) => {
            let (a, b) = (&parsed[lng].code, &parsed[lat].code);
            if a != b {
                return Err(Error::InconsistentAxes(format!(
                    "projection codes differ: '{}' and '{}'",
                    ctype[lng], ctype[lat]
                )));
            }
            let (pl, pb) = (ctype_prefix(&ctype[lng]), ctype_prefix(&ctype[lat]));
            let paired = match pl {
                "RA" => pb == "DEC",
                _ if pl.ends_with("LON") => pb.ends_with("LAT") && pl[..1] == pb[..1],
                _ => pb.ends_with("LT") && pl[..2] == pb[..2],
            };
            if !paired {
                return Err(Error::InconsistentAxes(format!(
                    "'{}' and '{}' are not a longitude/latitude pair",
                    ctype[lng], ctype[lat]
                )));
            }
            Ok((Some((lng, lat)), a.clone()))
        }
        (Some(i), None) | (None, Some(i)) => Err(Error::InconsistentAxes(format!(
            "celestial axis '{}' has no partner",
            ctype[i]
        ))),
    }
}

/// Degrees per unit of an angular CUNIT (empty = degrees), as astropy's unit fix reads it.
/// Longitude prefixes of the solar frames, which depend on the observer and the time.
const SOLAR_FRAMES: [&str; 4] = ["HPLN", "HGLN", "CRLN", "SOLX"];

/// The keywords solar frames depend on: the observer and the time.
const OBSERVER_KEYWORDS: [&str; 16] = [
    "DATE-OBS", "MJD-OBS", "DATE-AVG", "MJD-AVG", "HGLN_OBS", "HGLT_OBS", "CRLN_OBS", "CRLT_OBS",
    "DSUN_OBS", "RSUN_REF", "HEEX_OBS", "HEEY_OBS", "HEEZ_OBS", "OBSGEO-X", "OBSGEO-Y", "OBSGEO-Z",
];

/// The time keywords besides the reference date that time axes depend on.
const TIME_REFERENCE_KEYWORDS: [&str; 8] = [
    "TIMESYS", "TREFPOS", "TREFDIR", "TIMEUNIT", "TIMEOFFS", "OBSGEO-X", "OBSGEO-Y", "OBSGEO-Z",
];

/// The reference time of time axes as MJD [integer, fraction] (WCSLIB's `mjdref`, from
/// MJDREFI/MJDREFF, MJDREF, JDREFI/JDREFF, JDREF or DATEREF, in that order).
fn reference_mjd(header: &Header) -> Result<Option<[f64; 2]>> {
    let (i, f) = (header.float("MJDREFI")?, header.float("MJDREFF")?);
    if i.is_some() || f.is_some() {
        return Ok(Some([i.unwrap_or(0.0), f.unwrap_or(0.0)]));
    }
    if let Some(m) = header.float("MJDREF")? {
        return Ok(Some([m, 0.0]));
    }
    let (i, f) = (header.float("JDREFI")?, header.float("JDREFF")?);
    if i.is_some() || f.is_some() {
        return Ok(Some([i.unwrap_or(0.0) - 2400000.0, f.unwrap_or(0.0) - 0.5]));
    }
    if let Some(j) = header.float("JDREF")? {
        return Ok(Some([j - 2400000.5, 0.0]));
    }
    Ok(header
        .string("DATEREF")?
        .and_then(|d| iso_to_mjd(d.trim()))
        .map(|m| [m, 0.0]))
}

/// The values of `keys` present in a header, `KEY=value` joined by `, ` (`None` if none).
fn keyword_values(header: &Header, keys: &[&str]) -> Result<Option<String>> {
    let mut pairs = Vec::new();
    for &key in keys {
        if let Some(value) = header.value(key)? {
            pairs.push(format!("{key}={value:?}"));
        }
    }
    Ok((!pairs.is_empty()).then(|| pairs.join(", ")))
}

/// The spectral type of a CTYPE (its first four characters, as reproject compares them).
pub(crate) fn spectral_kind(ctype: &str) -> &str {
    ctype.get(..4).unwrap_or(ctype)
}

fn angle_unit_scale(unit: &str) -> Option<f64> {
    Some(match unit.trim().to_ascii_lowercase().as_str() {
        "" | "deg" | "degree" | "degrees" => 1.0,
        "arcmin" => 1.0 / 60.0,
        "arcsec" => 1.0 / 3600.0,
        "mas" => 1.0 / 3.6e6,
        "rad" => R2D,
        _ => return None,
    })
}

fn identity(n: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect()
}

/// The indexed WCS keywords of one alternate description found in a header.
#[derive(Default)]
struct IndexedKeywords {
    /// Highest axis number seen (1-based), i.e. the implied number of axes.
    max_axis: usize,
    /// (i, j, keyword) of PCi_j, 0-based.
    pc: Vec<(usize, usize, String)>,
    /// (i, j, keyword) of CDi_j, 0-based.
    cd: Vec<(usize, usize, String)>,
    /// (axis (None = PROJPn), m, keyword) of PVi_m / PROJPm.
    pv: Vec<(Option<usize>, usize, String)>,
}

impl IndexedKeywords {
    fn scan(header: &Header, alt: &str) -> Result<IndexedKeywords> {
        let mut found = IndexedKeywords::default();
        let out_of_range = |k: &str| Error::InvalidValue {
            keyword: k.to_string(),
            reason: format!("axis number must be 1..={MAX_AXES}"),
        };
        let mut seen = std::collections::HashSet::new();
        for k in header.keywords() {
            if !seen.insert(k) {
                continue;
            }
            // Alternate descriptions end in their letter; primary keywords end in a digit.
            let body = if alt.is_empty() {
                k
            } else {
                match k.strip_suffix(alt) {
                    Some(body) => body,
                    None => continue,
                }
            };
            for base in ["CTYPE", "CUNIT", "CRPIX", "CRVAL", "CDELT", "CROTA"] {
                if let Some(i) = body.strip_prefix(base).and_then(parse_index) {
                    if i == 0 || i > MAX_AXES {
                        return Err(out_of_range(k));
                    }
                    found.max_axis = found.max_axis.max(i);
                }
            }
            for (base, list) in [("PC", &mut found.pc), ("CD", &mut found.cd)] {
                if let Some((i, j)) = body.strip_prefix(base).and_then(parse_pair) {
                    if i == 0 || j == 0 || i > MAX_AXES || j > MAX_AXES {
                        return Err(out_of_range(k));
                    }
                    found.max_axis = found.max_axis.max(i).max(j);
                    list.push((i - 1, j - 1, k.to_string()));
                }
            }
            if let Some((i, m)) = body.strip_prefix("PV").and_then(parse_pair) {
                if i == 0 || i > MAX_AXES {
                    return Err(out_of_range(k));
                }
                found.max_axis = found.max_axis.max(i);
                found.pv.push((Some(i - 1), m, k.to_string()));
            }
            if alt.is_empty()
                && let Some(m) = k.strip_prefix("PROJP").and_then(parse_index)
            {
                found.pv.push((None, m, k.to_string()));
            }
        }
        Ok(found)
    }
}

/// "12" → 12 (digits only).
fn parse_index(s: &str) -> Option<usize> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// "1_2" → (1, 2).
fn parse_pair(s: &str) -> Option<(usize, usize)> {
    let (a, b) = s.split_once('_')?;
    Some((parse_index(a)?, parse_index(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Result<WcsParams> {
        let text = if text.contains("CRVAL1") {
            text.to_string()
        } else {
            format!("{text}CRVAL1 = 0.0\nCRVAL2 = 0.0\n")
        };
        WcsParams::from_header(&Header::parse(&text)?, None)
    }

    #[test]
    fn crota_with_unequal_cdelt() {
        // extra_SIN_CROTA2_synth: astropy's PC after wcsset.
        let p = params(
            "CTYPE1 = 'RA---SIN'\nCTYPE2 = 'DEC--SIN'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\nCDELT1 = -0.002\nCDELT2 = 0.003\nCROTA2 = 25.0\n",
        )
        .unwrap();
        let want = [
            [0.9063077870366499, 0.6339273926110491],
            [-0.281745507827133, 0.9063077870366499],
        ];
        for (got, want) in p.pc.iter().flatten().zip(want.iter().flatten()) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
    }

    #[test]
    fn pc_beats_cd_and_crota_on_longitude_is_ignored() {
        let p =
            params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPC1_2 = 0.5\nCD1_1 = 3.0\n").unwrap();
        assert_eq!(p.pc, vec![vec![1.0, 0.5], vec![0.0, 1.0]]);
        let p = params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCROTA1 = 30.0\n").unwrap();
        assert_eq!(p.pc, identity(2));
    }

    #[test]
    fn cd_with_missing_diagonal_gets_cdfix() {
        let p = params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCD1_1 = 2.0\n").unwrap();
        assert_eq!(p.pc, vec![vec![2.0, 0.0], vec![0.0, 1.0]]);
    }

    #[test]
    fn arcsec_units_become_degrees() {
        let p = params(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCUNIT1 = 'arcsec'\nCUNIT2 = 'ARCSEC'\nCDELT1 = -3.6\nCDELT2 = 3.6\nCRVAL1 = 0.0\nCRVAL2 = 36.0\n",
        )
        .unwrap();
        assert_eq!(p.cdelt, vec![-0.001, 0.001]);
        assert_eq!(p.crval[1], 0.01);
    }

    #[test]
    fn ctype_forms() {
        assert!(matches!(
            params("CTYPE1 = 'RA--TAN'\nCTYPE2 = 'DEC--TAN'\n"),
            Err(Error::MalformedCtype(_))
        ));
        assert!(matches!(
            params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--SIN'\n"),
            Err(Error::InconsistentAxes(_))
        ));
        assert!(matches!(
            params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'GLAT-TAN'\n"),
            Err(Error::InconsistentAxes(_))
        ));
        let p = params("CTYPE1 = 'RA'\nCTYPE2 = 'DEC'\nCTYPE3 = 'FREQ-LOG'\n").unwrap();
        assert_eq!(
            p.axis_types,
            vec![AxisType::Linear, AxisType::Linear, AxisType::Log]
        );
        assert_eq!(p.celestial_axes(), None);
    }

    /// The TAN header of tests/bad_headers.rs with extra cards; the expected values are
    /// astropy 8.0.2's `all_pix2world` at 0-based pixels (0, 0) and (99, 10).
    fn distorted(ctype: (&str, &str), extra: &[&str]) -> crate::wcs::Wcs {
        let mut cards = vec![
            "NAXIS   = 2".to_string(),
            format!("CTYPE1  = '{}'", ctype.0),
            format!("CTYPE2  = '{}'", ctype.1),
        ];
        for c in [
            "CRPIX1  = 50.5",
            "CRPIX2  = 50.5",
            "CRVAL1  = 150.0",
            "CRVAL2  = 30.0",
            "CDELT1  = -0.001",
            "CDELT2  = 0.001",
        ]
        .iter()
        .chain(extra)
        {
            cards.push(c.to_string());
        }
        crate::wcs::Wcs::from_header_str(&cards.join("\n")).unwrap()
    }

    fn assert_world(wcs: &crate::wcs::Wcs, want: [[f64; 2]; 2]) {
        assert_world_inverse(wcs, want, [true, true]);
    }

    /// `inverse[i]`: whether astropy's `all_world2pix` brings point i back (it gives NaN or
    /// inf where WCSLIB's TPV inverse fails).
    fn assert_world_inverse(wcs: &crate::wcs::Wcs, want: [[f64; 2]; 2], inverse: [bool; 2]) {
        let points = [(0.0, 0.0), (99.0, 10.0)];
        for (((x, y), w), back) in points.into_iter().zip(want).zip(inverse) {
            let (lon, lat) = wcs.pixel_to_world(x, y).unwrap();
            assert!(
                (lon - w[0]).abs() < 1e-12 && (lat - w[1]).abs() < 1e-12,
                "({x}, {y}) -> ({lon}, {lat}), astropy {w:?}"
            );
            match wcs.world_to_pixel(lon, lat) {
                Some((bx, by)) if back => assert!((bx - x).abs() < 1e-9 && (by - y).abs() < 1e-9),
                got => assert!(got.is_none() && !back, "({x}, {y}): back to {got:?}"),
            }
        }
    }

    const SIP: [&str; 5] = [
        "A_ORDER = 2",
        "B_ORDER = 2",
        "A_2_0 = 1.0E-5",
        "B_0_2 = -2.0E-5",
        "A_0_0 = 0.5",
    ];
    const SIP_WORLD: [[f64; 2]; 2] = [
        [150.0565237932971, 29.950438946552985],
        [149.94225970000878, 29.960456213191065],
    ];
    const TPV_WORLD: [[f64; 2]; 2] = [
        [150.02885023392128, 29.95049687026913],
        [149.914583334954, 29.960472458453083],
    ];

    #[test]
    fn sip_applies_with_or_without_the_ctype_suffix() {
        let tan_sip = distorted(("RA---TAN-SIP", "DEC--TAN-SIP"), &SIP);
        assert!(tan_sip.params().sip.is_some());
        assert_world(&tan_sip, SIP_WORLD);
        assert_world(&distorted(("RA---TAN", "DEC--TAN"), &SIP), SIP_WORLD);
        // -SIP without coefficients is TAN.
        let plain = distorted(("RA---TAN-SIP", "DEC--TAN-SIP"), &[]);
        assert!(!plain.has_distortion());
    }

    #[test]
    fn sip_order_one_is_ignored() {
        let w = distorted(
            ("RA---TAN-SIP", "DEC--TAN-SIP"),
            &["A_ORDER = 1", "B_ORDER = 1", "A_0_0 = 0.5", "A_1_0 = 0.1"],
        );
        assert!(!w.has_distortion() && w.params().sip.is_none());
        assert_world(
            &w,
            [
                [150.0571291619775, 29.950487691778907],
                [149.94286508360352, 29.96048768074654],
            ],
        );
    }

    #[test]
    fn sip_needs_two_axes() {
        let h = "NAXIS = 3\nCTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nCTYPE3 = 'FREQ'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\nCRPIX1 = 1.0\nCRPIX2 = 1.0\nA_ORDER = 2\nB_ORDER = 2\n";
        assert!(matches!(
            WcsParams::from_header(&Header::parse(h).unwrap(), None),
            Err(Error::InconsistentAxes(_))
        ));
    }

    #[test]
    fn tpv_header_and_sip_precedence() {
        let tpv = ["PV1_1 = 1.0", "PV2_1 = 1.0", "PV1_4 = 0.01"];
        let w = distorted(("RA---TPV", "DEC--TPV"), &tpv);
        assert_eq!(w.projection_code(), Some(ProjectionCode::Tan));
        assert_eq!(w.params().tpv.as_ref().unwrap().lng.len(), 2);
        assert_world(&w, TPV_WORLD);
        // -TPV wins over SIP keywords.
        let both: Vec<&str> = SIP.iter().chain(&tpv).copied().collect();
        let w = distorted(("RA---TPV", "DEC--TPV"), &both);
        assert!(w.params().sip.is_none());
        assert_world(&w, TPV_WORLD);
        // Radial and latitude terms, CDELT applied after the polynomial.
        let w = distorted(
            ("RA---TPV", "DEC--TPV"),
            &[
                "PV1_1 = 1.0",
                "PV2_1 = 1.0",
                "PV1_4 = 0.01",
                "PV2_6 = -0.02",
                "PV1_3 = 0.001",
            ],
        );
        assert_world_inverse(
            &w,
            [
                [150.02875524862122, 29.90149197876144],
                [149.91455241650183, 29.91146752999601],
            ],
            [false, true],
        );
        // TPV terms stop at 39 (tpvset).
        let h =
            "CTYPE1 = 'RA---TPV'\nCTYPE2 = 'DEC--TPV'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\nPV1_40 = 1.0\n";
        assert!(matches!(
            WcsParams::from_header(&Header::parse(h).unwrap(), None),
            Err(Error::PvOutOfRange { keyword, .. }) if keyword == "PV1_40"
        ));
    }

    #[test]
    fn scamp_pre2012_tan_becomes_tpv() {
        // PV1_5 on TAN: TPV with PV1_1 missing (0) and no latitude terms.
        let w = distorted(("RA---TAN", "DEC--TAN"), &["PV1_5 = 1.0"]);
        assert_eq!(w.params().ctype[0], "RA---TPV");
        assert_world_inverse(
            &w,
            [
                [147.17299135548728, 29.969797264044537],
                [152.2565607619876, 29.98075711780056],
            ],
            [false, false],
        );
        // ... and its SIP keywords are ignored.
        let scamp: Vec<&str> = SIP
            .iter()
            .chain(&["PV1_1 = 1.0", "PV2_1 = 1.0", "PV1_4 = 0.01", "PV2_5 = 0.0"])
            .copied()
            .collect();
        let w = distorted(("RA---TAN", "DEC--TAN"), &scamp);
        assert!(w.params().sip.is_none() && w.params().tpv.is_some());
        assert_world(&w, TPV_WORLD);
        // With -TAN-SIP the SCAMP PVs go instead.
        let scamp: Vec<&str> = SIP
            .iter()
            .chain(&["PV1_1 = 1.0", "PV1_5 = 0.01", "PV2_1 = 1.0"])
            .copied()
            .collect();
        let w = distorted(("RA---TAN-SIP", "DEC--TAN-SIP"), &scamp);
        assert!(w.params().sip.is_some() && w.params().tpv.is_none());
        assert_world(&w, SIP_WORLD);
    }

    #[test]
    fn latitude_first_distortions() {
        // CTYPE1 = DEC, CTYPE2 = RA: pixels stay in image order (p1, p2), and
        // WCSLIB's TPV axis map is fixed to axes 1 and 2 (see distortion::tpv).
        let h = |code: &str, extra: &str| {
            format!(
                "NAXIS = 2\nCTYPE2 = 'RA---{code}'\nCTYPE1 = 'DEC--{code}'\nCRPIX1 = 50.5\nCRPIX2 = 40.5\nCRVAL2 = 150.0\nCRVAL1 = 30.0\nCD2_2 = -0.001\nCD1_1 = 0.001\nCD1_2 = 0.0002\n{extra}"
            )
        };
        let check = |w: crate::wcs::Wcs, want: [[f64; 2]; 2]| {
            for ((p1, p2), w_axis) in [(0.0, 0.0), (99.0, 10.0)].into_iter().zip(want) {
                let (lon, lat) = w.pixel_to_world(p1, p2).unwrap();
                assert!(
                    (lon - w_axis[1]).abs() < 1e-12 && (lat - w_axis[0]).abs() < 1e-12,
                    "({p1}, {p2}) -> ({lat}, {lon}), astropy {w_axis:?}"
                );
                let (x, y) = w.world_to_pixel(lon, lat).unwrap();
                assert!((x - p1).abs() < 1e-9 && (y - p2).abs() < 1e-9);
                let nd = w.pixel_to_world_nd(&[p1, p2]).unwrap();
                assert_eq!((nd[0], nd[1]), (lat, lon));
                let back = w.world_to_pixel_nd(&[lat, lon]).unwrap();
                assert_eq!((back[0], back[1]), (x, y));
            }
        };
        let tpv =
            "PV2_1 = 1.0\nPV1_1 = 1.0\nPV2_4 = 0.3\nPV1_6 = -0.2\nPV2_2 = 0.03\nPV1_3 = 0.01\n";
        check(
            crate::wcs::Wcs::from_header_str(&h("TPV", tpv)).unwrap(),
            [
                [30.03952242948107, 149.93620445719023],
                [30.029635988263863, 150.0520408974455],
            ],
        );
        check(
            crate::wcs::Wcs::from_header_str(&h("TAN", &(SIP.join("\n") + "\n"))).unwrap(),
            [
                [29.943110424757478, 150.04562054535162],
                [30.044116615188965, 150.03409891955073],
            ],
        );
    }

    #[test]
    fn dates_as_astropy_fixes_them() {
        // astropy: DATE-OBS '12/05/98' -> '1998-05-12', MJD-OBS 50945.0.
        let p = params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nDATE-OBS= '12/05/98'\n").unwrap();
        assert_eq!(p.date_obs.as_deref(), Some("1998-05-12"));
        assert_eq!(p.mjd_obs, Some(50945.0));
        // astropy: 2010-03-04T05:06:07.5 -> 55259.21258680556.
        let p =
            params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nDATE-OBS= '2010-03-04T05:06:07.5'\n")
                .unwrap();
        assert!((p.mjd_obs.unwrap() - 55259.21258680556).abs() < 1e-10);
        // astropy: MJD-OBS 55259.5 -> DATE-OBS 2010-03-04T12:00:00.
        let p = params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nMJD-OBS = 55259.5\n").unwrap();
        assert_eq!(p.date_obs.as_deref(), Some("2010-03-04T12:00:00"));
        assert_eq!(iso_to_mjd("1858-11-17"), Some(0.0));
        assert_eq!(mjd_to_iso(51544.0).unwrap(), "2000-01-01T00:00:00");
    }

    #[test]
    fn alternate_description() {
        let h = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCTYPE1B = 'GLON-CAR'\nCTYPE2B = 'GLAT-CAR'\nCRVAL1B = 10.0\nCRVAL2B = 0.0\n";
        let p = WcsParams::from_header(&Header::parse(h).unwrap(), Some('B')).unwrap();
        assert_eq!(p.projection, Some(ProjectionCode::Car));
        assert_eq!(p.crval, vec![10.0, 0.0]);
        assert_eq!(p.frame(), CelestialFrame::Galactic);
        // A letter the header never uses is no WCS (astropy: KeyError), even with NAXIS.
        let h = format!("NAXIS = 2\n{h}");
        let e = WcsParams::from_header(&Header::parse(&h).unwrap(), Some('C')).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("'C'")),
            "{e:?}"
        );
        // Its WCSAXES alone declares it.
        let p = WcsParams::from_header(
            &Header::parse(&format!("{h}WCSAXESC = 2\n")).unwrap(),
            Some('C'),
        )
        .unwrap();
        assert_eq!(p.naxis(), 2);
    }
}

//! WCS parameters read from a header (WCSLIB's `wcspih` + the header parts of `wcsset`):
//! axis types, the PC/CD/CROTA precedence, units, projection parameters and aliases.

use serde::{Deserialize, Serialize};

use super::distortion::{self, LookupTables, SipParams, TpvParams};
use super::frame::CelestialFrame;
use super::header::Header;
use super::projection::{ProjectionCode, ProjectionParams, PV_COUNT};
use super::trig::{cosd, sincosd, sind, R2D};
use super::units;
use crate::error::{Error, Result};

mod ctype;
mod date;
mod indexed;

use ctype::{celestial_pair, ctype_prefix, ParsedCtype};
use date::{date_fix, iso_to_mjd};
use indexed::IndexedKeywords;

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
    /// CPDIS/D2IM distortion lookup tables: they live in other HDUs of a FITS file, so a
    /// header never gives them (a header that names them is refused);
    /// [`crate::wcs::Wcs::with_lookup_tables`] adds them. Never empty when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup_tables: Option<LookupTables>,
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
            lookup_tables: None,
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

/// Degrees per unit of an angular CUNIT (empty = degrees), as astropy's unit fix reads it.
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

#[cfg(test)]
mod tests;

//! WcsParams::from_header against astropy's reading of the same headers: the PC/CD/CROTA
//! precedence, units, CTYPE forms, SIP and TPV, dates and alternate descriptions.

use super::date::{iso_to_mjd, mjd_to_iso};
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
    let p = params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nPC1_2 = 0.5\nCD1_1 = 3.0\n").unwrap();
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
    let h = "CTYPE1 = 'RA---TPV'\nCTYPE2 = 'DEC--TPV'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\nPV1_40 = 1.0\n";
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
    let tpv = "PV2_1 = 1.0\nPV1_1 = 1.0\nPV2_4 = 0.3\nPV1_6 = -0.2\nPV2_2 = 0.03\nPV1_3 = 0.01\n";
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
    let p = params("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nDATE-OBS= '2010-03-04T05:06:07.5'\n")
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

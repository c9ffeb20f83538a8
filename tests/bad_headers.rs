//! Malformed headers: each gives its specific error, and nothing panics.

mod common;

use reproject::wcs::Wcs;
use reproject::Error;

/// A valid TAN header with one card replaced (`None` = card removed) or added.
fn tan_with(replace: &[(&str, Option<&str>)]) -> String {
    let mut cards = vec![
        ("NAXIS", "NAXIS   = 2"),
        ("NAXIS1", "NAXIS1  = 100"),
        ("NAXIS2", "NAXIS2  = 100"),
        ("CTYPE1", "CTYPE1  = 'RA---TAN'"),
        ("CTYPE2", "CTYPE2  = 'DEC--TAN'"),
        ("CRPIX1", "CRPIX1  = 50.5"),
        ("CRPIX2", "CRPIX2  = 50.5"),
        ("CRVAL1", "CRVAL1  = 150.0"),
        ("CRVAL2", "CRVAL2  = 30.0"),
        ("CDELT1", "CDELT1  = -0.001"),
        ("CDELT2", "CDELT2  = 0.001"),
    ];
    for &(key, card) in replace {
        match cards.iter().position(|(k, _)| *k == key) {
            Some(i) => match card {
                Some(c) => cards[i].1 = c,
                None => {
                    cards.remove(i);
                }
            },
            None => cards.push((key, card.expect("new card"))),
        }
    }
    cards.iter().map(|(_, c)| format!("{c:<80}")).collect()
}

fn assert_error(name: &str, header: &str, check: impl Fn(&Error) -> bool) {
    match Wcs::from_header_str(header) {
        Ok(_) => panic!("{name}: accepted"),
        Err(e) => assert!(check(&e), "{name}: unexpected error {e:?}"),
    }
}

#[test]
fn the_reference_header_is_valid() {
    let wcs = Wcs::from_header_str(&tan_with(&[])).unwrap();
    assert!(wcs.pixel_to_world(49.5, 49.5).is_some());
}

#[test]
fn malformed_headers_give_specific_errors() {
    type Check = fn(&Error) -> bool;
    let table: Vec<(&str, String, Check)> = vec![
        (
            "missing CRVAL",
            tan_with(&[("CRVAL2", None)]),
            |e| matches!(e, Error::MissingKeyword(k) if k == "CRVAL2"),
        ),
        (
            "unknown projection code",
            tan_with(&[
                ("CTYPE1", Some("CTYPE1  = 'RA---XYZ'")),
                ("CTYPE2", Some("CTYPE2  = 'DEC--XYZ'")),
            ]),
            |e| matches!(e, Error::UnknownProjection(c) if c == "XYZ"),
        ),
        (
            "7-character CTYPE",
            tan_with(&[("CTYPE1", Some("CTYPE1  = 'RA--TAN'"))]),
            |e| matches!(e, Error::MalformedCtype(c) if c == "RA--TAN"),
        ),
        (
            "CTYPE with a stray suffix",
            tan_with(&[("CTYPE2", Some("CTYPE2  = 'DEC--TAN-XYZ'"))]),
            |e| matches!(e, Error::MalformedCtype(_)),
        ),
        (
            "singular CD matrix",
            tan_with(&[
                ("CD1_1", Some("CD1_1   = 0.001")),
                ("CD1_2", Some("CD1_2   = 0.002")),
                ("CD2_1", Some("CD2_1   = 0.002")),
                ("CD2_2", Some("CD2_2   = 0.004")),
            ]),
            |e| matches!(e, Error::SingularMatrix),
        ),
        (
            "zero CDELT",
            tan_with(&[("CDELT1", Some("CDELT1  = 0.0"))]),
            |e| matches!(e, Error::SingularMatrix),
        ),
        (
            "NaN value",
            tan_with(&[("CRVAL1", Some("CRVAL1  = NaN"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CRVAL1"),
        ),
        (
            "infinite value",
            tan_with(&[("CRPIX1", Some("CRPIX1  = 1.0E999"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CRPIX1"),
        ),
        (
            "non-numeric value",
            tan_with(&[("CDELT2", Some("CDELT2  = 'small'"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CDELT2"),
        ),
        (
            "garbled number",
            tan_with(&[("CDELT2", Some("CDELT2  = 1.0E-3x"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CDELT2"),
        ),
        (
            "truncated card",
            {
                let mut h = tan_with(&[]);
                h.truncate(h.len() - 40);
                h
            },
            |e| matches!(e, Error::MalformedCard { card: 11, .. }),
        ),
        (
            "duplicate keyword with different values",
            tan_with(&[
                ("CRVAL1", Some("CRVAL1  = 150.0")),
                ("CRVAL1b", Some("CRVAL1  = 151.0")),
            ]),
            |e| matches!(e, Error::DuplicateKeyword(k) if k == "CRVAL1"),
        ),
        // On TAN, PVi_m with m >= 5 turn the header into SCAMP's TPV (astropy's fix), whose
        // polynomial stops at term 39; elsewhere the longitude axis takes PV 0..4 only.
        (
            "PV index out of range on the latitude axis",
            tan_with(&[("PV2_40", Some("PV2_40  = 1.0"))]),
            |e| matches!(e, Error::PvOutOfRange { keyword, .. } if keyword == "PV2_40"),
        ),
        (
            "PV index out of range on the longitude axis",
            tan_with(&[
                ("CTYPE1", Some("CTYPE1  = 'RA---SIN'")),
                ("CTYPE2", Some("CTYPE2  = 'DEC--SIN'")),
                ("PV1_5", Some("PV1_5   = 1.0")),
            ]),
            |e| matches!(e, Error::PvOutOfRange { keyword, .. } if keyword == "PV1_5"),
        ),
        (
            "projection parameter beyond 29 on a non-TAN projection",
            tan_with(&[
                ("CTYPE1", Some("CTYPE1  = 'RA---ZPN'")),
                ("CTYPE2", Some("CTYPE2  = 'DEC--ZPN'")),
                ("PV2_30", Some("PV2_30  = 1.0")),
            ]),
            |e| matches!(e, Error::PvOutOfRange { keyword, .. } if keyword == "PV2_30"),
        ),
        (
            "different projection codes",
            tan_with(&[("CTYPE2", Some("CTYPE2  = 'DEC--SIN'"))]),
            |e| matches!(e, Error::InconsistentAxes(_)),
        ),
        (
            "longitude without latitude",
            tan_with(&[("CTYPE2", Some("CTYPE2  = 'FREQ'"))]),
            |e| matches!(e, Error::InconsistentAxes(_)),
        ),
        (
            "mismatched pair",
            tan_with(&[("CTYPE2", Some("CTYPE2  = 'GLAT-TAN'"))]),
            |e| matches!(e, Error::InconsistentAxes(_)),
        ),
        (
            "two longitude axes",
            tan_with(&[
                ("NAXIS", Some("NAXIS   = 3")),
                ("CTYPE3", Some("CTYPE3  = 'RA---TAN'")),
            ]),
            |e| matches!(e, Error::InconsistentAxes(_)),
        ),
        (
            "NCP at the equator",
            tan_with(&[
                ("CTYPE1", Some("CTYPE1  = 'RA---NCP'")),
                ("CTYPE2", Some("CTYPE2  = 'DEC--NCP'")),
                ("CRVAL2", Some("CRVAL2  = 0.0")),
            ]),
            |e| matches!(e, Error::InvalidProjectionParameters { code, .. } if code == "NCP"),
        ),
        (
            "reference latitude beyond the pole",
            tan_with(&[("CRVAL2", Some("CRVAL2  = 95.0"))]),
            |e| matches!(e, Error::InvalidCelestial(_)),
        ),
        (
            "unterminated string",
            tan_with(&[("CTYPE1", Some("CTYPE1  = 'RA---TAN"))]),
            |e| matches!(e, Error::MalformedCard { card: 4, .. }),
        ),
        (
            "negative NAXIS",
            tan_with(&[("NAXIS", Some("NAXIS   = -1"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "NAXIS"),
        ),
        (
            "negative axis length",
            tan_with(&[("NAXIS1", Some("NAXIS1  = -100"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "NAXIS1"),
        ),
        (
            "axis number beyond 99",
            tan_with(&[("CTYPE100", Some("CTYPE100= 'FREQ'"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CTYPE100"),
        ),
        (
            "non-angular celestial unit",
            tan_with(&[("CUNIT1", Some("CUNIT1  = 'furlong'"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CUNIT1"),
        ),
        (
            "non-ASCII text",
            tan_with(&[("OBJECT", Some("OBJECT  = 'Orion Nébula'"))]),
            |e| matches!(e, Error::MalformedCard { .. }),
        ),
        (
            "CTYPE that is not a string",
            tan_with(&[("CTYPE1", Some("CTYPE1  = 12"))]),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "CTYPE1"),
        ),
    ];
    for (name, header, check) in &table {
        assert_error(name, header, check);
    }
}

#[test]
fn a_header_without_celestial_axes_reports_it_where_needed() {
    let wcs = Wcs::from_header_str("CTYPE1  = 'FREQ'\nCTYPE2  = 'STOKES'\n").unwrap();
    assert!(matches!(wcs.celestial(), Err(Error::NoCelestialAxes)));
    let (mut a, mut b) = ([0.0], [0.0]);
    assert!(matches!(
        wcs.pixel_to_world_slice(&[0.0], &[0.0], &mut a, &mut b),
        Err(Error::NoCelestialAxes)
    ));
    assert_eq!(wcs.pixel_to_world(0.0, 0.0), None);
    let empty = Wcs::from_header_str("").unwrap();
    assert_eq!(empty.naxis(), 0);
}

#[test]
fn batch_forms_check_lengths() {
    let wcs = Wcs::from_header_str(&tan_with(&[])).unwrap();
    let (mut a, mut b) = ([0.0; 2], [0.0; 3]);
    assert!(matches!(
        wcs.pixel_to_world_slice(&[0.0, 1.0], &[0.0, 1.0], &mut a, &mut b),
        Err(Error::ShapeMismatch(_))
    ));
}

/// A small deterministic generator (no dependency needed for a mutation test).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Randomly mutated real headers either parse or return an error; transforming with whatever
/// parses never panics either.
#[test]
fn mutated_headers_never_panic() {
    let dir = common::vectors_dir();
    let mut rng = Lcg(20261122);
    let alphabet = b" '=-._0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ/EDNaninf+";
    let mut parsed = 0;
    for name in common::all_cases() {
        let original = std::fs::read(dir.join(format!("{name}.hdr"))).unwrap();
        for _ in 0..60 {
            let mut bytes = original.clone();
            for _ in 0..1 + rng.next() % 6 {
                let i = (rng.next() as usize) % bytes.len();
                bytes[i] = alphabet[(rng.next() as usize) % alphabet.len()];
            }
            if rng.next().is_multiple_of(10) {
                let cut = (rng.next() as usize) % bytes.len();
                bytes.truncate(cut);
            }
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(wcs) = Wcs::from_header_str(&text) {
                parsed += 1;
                for &(x, y) in &[(0.0, 0.0), (50.0, -20.0), (1e6, 1e6), (f64::NAN, 1.0)] {
                    if let Some((lon, lat)) = wcs.pixel_to_world(x, y) {
                        let _ = wcs.world_to_pixel(lon, lat);
                    }
                }
            }
        }
    }
    assert!(
        parsed > 100,
        "too few mutants parsed ({parsed}) for the test to mean much"
    );
}

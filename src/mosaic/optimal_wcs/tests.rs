use super::axes::isot_milliseconds;
use super::geometry::{convex_hull, mean_position, pairwise_sum, py_mod, rotation_angle};
use super::header::card_float;
use super::*;

fn tan(crval: (f64, f64), crpix: (f64, f64), extra: &str) -> Wcs {
    Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {}\nCRPIX2 = {}\n\
         CRVAL1 = {}\nCRVAL2 = {}\nCDELT1 = -0.002\nCDELT2 = 0.002\n{extra}",
        crpix.0, crpix.1, crval.0, crval.1
    ))
    .unwrap()
}

#[test]
fn pairwise_sum_is_numpy_s() {
    // numpy: i = np.arange(n, dtype=float); np.add.reduce(np.sqrt(i) * 1e-3 + 1e9 * (i % 7
    // == 0)) for n = 5, 20, 300 (sequential below 8, 8 accumulators to 128, halves beyond);
    // a sequential sum differs in the last digits for 20 and 300.
    let a: Vec<f64> = (0..300)
        .map(|i| f64::from(i).sqrt() * 1e-3 + 1e9 * f64::from(u8::from(i % 7 == 0)))
        .collect();
    assert_eq!(pairwise_sum(&a[..5]), 1000000000.0061462);
    assert_eq!(pairwise_sum(&a[..20]), 3000000000.0571938);
    assert_eq!(pairwise_sum(&a), 43000000003.45524);
    assert_eq!(pairwise_sum(&[]), 0.0);
}

#[test]
fn mean_position_wraps_longitude() {
    let (lon, lat) = mean_position(&[(359.0, 0.0), (3.0, 0.0)]);
    assert!((lon - 1.0).abs() < 1e-12 && lat.abs() < 1e-12);
    let (lon, _) = mean_position(&[(358.0, 10.0), (0.0, 10.0)]);
    assert!((lon - 359.0).abs() < 1e-12);
    let (_, lat) = mean_position(&[(10.0, 90.0)]);
    assert_eq!(lat, 90.0);
}

#[test]
fn minimum_area_rectangle_of_a_rotated_rectangle() {
    let (s, c) = 0.3f64.sin_cos();
    let rect = [(0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (0.0, 1.0), (2.0, 0.5)];
    let pts: Vec<(f64, f64)> = rect
        .iter()
        .map(|&(x, y)| (10.0 + c * x - s * y, -3.0 + s * x + c * y))
        .collect();
    assert!((rotation_angle(&pts).unwrap() - 0.3).abs() < 1e-14);
    // 60 degrees is -30 degrees modulo 90.
    let (s, c) = 60f64.to_radians().sin_cos();
    let pts: Vec<(f64, f64)> = rect
        .iter()
        .map(|&(x, y)| (c * x - s * y, s * x + c * y))
        .collect();
    assert!((rotation_angle(&pts).unwrap() + 30f64.to_radians()).abs() < 1e-14);
    assert!(rotation_angle(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]).is_err());
    assert_eq!(convex_hull(&[(0.0, 0.0), (1.0, 0.0), (2.0, 0.0)]).len(), 2);
}

#[test]
fn py_mod_matches_python() {
    assert_eq!(py_mod(-0.1, 1.0), 0.9);
    assert_eq!(py_mod(-0.0, 1.0), 0.0);
    assert!(py_mod(-0.0, 1.0).is_sign_positive());
    assert_eq!(py_mod(2.5, 1.0), 0.5);
}

#[test]
fn dates_as_astropy_isot() {
    assert_eq!(isot_milliseconds("2020-05-01"), "2020-05-01T00:00:00.000");
    assert_eq!(
        isot_milliseconds("2020-12-31T23:59:59.9996"),
        "2021-01-01T00:00:00.000"
    );
    assert_eq!(
        isot_milliseconds("2021-03-04T05:06:07.5"),
        "2021-03-04T05:06:07.500"
    );
    assert_eq!(isot_milliseconds("yesterday"), "yesterday");
}

#[test]
fn float_cards_read_back_exactly() {
    for v in [1e-5, -0.002, 150.0, 1.0 / 3.0, 1e22, -2.5e-300, 0.0] {
        let text = card_float("CRVAL1", v, "c") + "\nEND\n";
        let h = crate::wcs::header::Header::parse(&text).unwrap();
        assert_eq!(h.float("CRVAL1").unwrap(), Some(v), "{text}");
    }
}

#[test]
fn single_tan_input_maps_to_itself() {
    let wcs = tan((150.0, 30.0), (20.5, 15.5), "");
    let out = optimal_celestial_wcs(&[((30, 40), &wcs)], &OptimalWcsOptions::default()).unwrap();
    assert_eq!(out.shape, (30, 40));
    let p = out.wcs.params();
    assert!((p.crpix[0] - 20.5).abs() < 1e-9 && (p.crpix[1] - 15.5).abs() < 1e-9);
    assert!((p.crval[0] - 150.0).abs() < 1e-12 && (p.crval[1] - 30.0).abs() < 1e-12);
    assert_eq!(p.cdelt, vec![-0.002, 0.002]);
    assert_eq!(out.wcs.frame(), Some(&CelestialFrame::Icrs));
    assert_eq!(Wcs::from_header_str(&out.header).unwrap(), out.wcs);
    assert!(out.header.starts_with("NAXIS   =                    2 / "));
    assert!(out.header.contains("\nNAXIS1  =                   40\n"));
}

#[test]
fn errors() {
    let wcs = tan((150.0, 30.0), (20.5, 15.5), "");
    let opts = OptimalWcsOptions::default();
    let err = |r: Result<OptimalWcs>| r.unwrap_err();
    assert!(matches!(
        err(optimal_celestial_wcs(
            &[([40usize].as_slice(), &wcs)],
            &opts
        )),
        Error::ShapeMismatch(_)
    ));
    let linear = Wcs::from_header_str("CTYPE1 = 'X'\nCTYPE2 = 'Y'\n").unwrap();
    assert_eq!(
        err(optimal_celestial_wcs(
            &[((30, 40), &wcs), ((30, 40), &linear)],
            &opts
        )),
        Error::NoCelestialAxes
    );
    for (projection, want) in [("XYZ", "UnknownProjection"), ("TA'", "UnknownProjection")] {
        let o = OptimalWcsOptions {
            projection: projection.into(),
            ..opts.clone()
        };
        let e = err(optimal_celestial_wcs(&[((30, 40), &wcs)], &o));
        assert!(format!("{e:?}").starts_with(want), "{e:?}");
    }
    let o = OptimalWcsOptions {
        frame: Some(CelestialFrame::Supergalactic),
        ..opts.clone()
    };
    assert!(matches!(
        err(optimal_celestial_wcs(&[((30, 40), &wcs)], &o)),
        Error::Unsupported(_)
    ));
    for resolution in [0.0, f64::NAN] {
        let o = OptimalWcsOptions {
            resolution: Some(resolution),
            ..opts.clone()
        };
        assert!(matches!(
            err(optimal_celestial_wcs(&[((30, 40), &wcs)], &o)),
            Error::InvalidArgument(_)
        ));
    }
}

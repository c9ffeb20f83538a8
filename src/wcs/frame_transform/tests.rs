use super::epoch::Epoch;
use super::eterms::eterms;
use super::matrices::{bias, bp06_rp};
use super::*;
use crate::error::Error;

fn max_diff(a: &Mat3, b: &Mat3) -> f64 {
    let mut m: f64 = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            m = m.max((a[i][j] - b[i][j]).abs());
        }
    }
    m
}

fn fk4noe(e: f64) -> CelestialFrame {
    CelestialFrame::Fk4NoETerms { equinox: e }
}

// Matrices printed from astropy 8.0.2 (shared/reference/wcs-math.md §3.2 and §3.4).

#[test]
fn frame_bias_matches_astropy() {
    let want = [
        [
            9.9999999999999278e-01,
            -1.1102233297408340e-07,
            -4.4118044980967761e-08,
        ],
        [
            1.1102233723050031e-07,
            9.9999999999998912e-01,
            9.6477922540797404e-08,
        ],
        [
            4.4118034269763241e-08,
            -9.6477927438885170e-08,
            9.9999999999999434e-01,
        ],
    ];
    let t = FrameTransform::new(
        &CelestialFrame::Icrs,
        &CelestialFrame::Fk5 { equinox: 2000.0 },
    )
    .unwrap();
    assert!(max_diff(&bias(), &want) < 1e-17);
    // astropy multiplies in an IAU 2006 precession J2000 → J2000, the identity to rounding.
    assert!(max_diff(&t.matrix().unwrap(), &want) < 1e-15);
}

#[test]
fn iau2006_rp_matches_astropy() {
    let want = [
        [
            9.999814271280901e-01,
            5.589639933678092e-03,
            2.429264143699530e-03,
        ],
        [
            -5.589639858576726e-03,
            9.999843778178408e-01,
            -6.820334164042905e-06,
        ],
        [
            -2.429264316504769e-03,
            -6.758504193854441e-06,
            9.999970493102482e-01,
        ],
    ];
    assert!(max_diff(&bp06_rp(Epoch::julian(1975.0)), &want) < 1e-16);
    // At J2000 the precession without bias is the identity.
    assert!(max_diff(&bp06_rp(Epoch::julian(2000.0)), &IDENTITY) < 1e-15);
}

#[test]
fn galactic_matrices_match_astropy() {
    let icrs_gal = [
        [
            -0.0548756577125917,
            -0.8734370519556163,
            -0.4838350736167155,
        ],
        [0.4941094371927275, -0.44482972122329534, 0.7469821839866675],
        [
            -0.8676661375596588,
            -0.19807633727300059,
            0.4559838136873017,
        ],
    ];
    let fk5_gal = [
        [
            -0.05487553939571456,
            -0.8734371047274334,
            -0.48383499177032246,
        ],
        [0.4941094536233638, -0.4448295942988167, 0.74698224870205],
        [
            -0.8676661356858699,
            -0.19807638961094992,
            0.4559837945175692,
        ],
    ];
    let fk4_gal = [
        [
            -0.06698873941515084,
            -0.8727557658519927,
            -0.48353891463218424,
        ],
        [0.49272846607532356, -0.4503469580199614, 0.7445846332830311],
        [
            -0.8676008111514348,
            -0.18837460172292037,
            0.4601997847838517,
        ],
    ];
    let m = |a: &CelestialFrame| {
        FrameTransform::new(a, &CelestialFrame::Galactic)
            .unwrap()
            .matrix()
            .unwrap()
    };
    assert!(max_diff(&m(&CelestialFrame::Icrs), &icrs_gal) < 2e-15);
    assert!(max_diff(&m(&CelestialFrame::Fk5 { equinox: 2000.0 }), &fk5_gal) < 2e-15);
    assert!(max_diff(&m(&fk4noe(1950.0)), &fk4_gal) < 2e-15);
}

#[test]
fn fk4noe_b1950_matrices_match_astropy() {
    let to_fk5 = [
        [
            9.9992567949569322e-01,
            -1.1181483218047921e-02,
            -4.8590038197832454e-03,
        ],
        [
            1.1181483236753272e-02,
            9.9993748489334056e-01,
            -2.7162594763660118e-05,
        ],
        [
            4.8590037767386870e-03,
            -2.7170293732259645e-05,
            9.9998819460235266e-01,
        ],
    ];
    let to_icrs = [
        [
            9.9992568095145018e-01,
            -1.1181372203849882e-02,
            -4.8589597052854268e-03,
        ],
        [
            1.1181371753884799e-02,
            9.9993748613734534e-01,
            -2.7258532094198410e-05,
        ],
        [
            4.8589607407388278e-03,
            -2.7073328535866745e-05,
            9.9998819481409618e-01,
        ],
    ];
    let m = |b: &CelestialFrame| {
        FrameTransform::new(&fk4noe(1950.0), b)
            .unwrap()
            .matrix()
            .unwrap()
    };
    assert!(max_diff(&m(&CelestialFrame::Fk5 { equinox: 2000.0 }), &to_fk5) < 2e-15);
    assert!(max_diff(&m(&CelestialFrame::Icrs), &to_icrs) < 2e-15);
}

#[test]
fn eterms_b1950_match_astropy() {
    let want = [
        -1.6255741516894347e-06,
        -3.1919053715637909e-07,
        -1.3842906719296589e-07,
    ];
    let a = eterms(Epoch::besselian(1950.0));
    for i in 0..3 {
        assert!((a[i] - want[i]).abs() < 1e-21, "{a:?}");
    }
}

#[test]
fn eterms_add_inverts_remove() {
    let a = eterms(Epoch::besselian(1900.0));
    for v in [[1.0, 0.0, 0.0], [0.6, -0.48, 0.64], [0.0, 0.0, -1.0]] {
        let back = eterms_add(eterms_remove(v, &a), &a);
        for i in 0..3 {
            assert!((back[i] - v[i]).abs() < 1e-15);
        }
    }
}

#[test]
fn epochs_match_erfa() {
    // Time(1950, format='byear') and Time(2000, format='jyear') in astropy 8.0.2.
    let b = Epoch::besselian(1950.0);
    assert_eq!((b.jd1, b.jd2), (2433282.0, 0.4234590499982005));
    let j = Epoch::julian(2000.0);
    assert_eq!((j.jd1, j.jd2), (2451545.0, 0.0));
    assert!((Epoch::julian(2000.0).byear() - 2000.001277513665).abs() < 1e-12);
    assert!((b.jyear() - 1949.9997904422999).abs() < 1e-12);
}

#[test]
fn unsupported_frames_are_errors() {
    let other = CelestialFrame::Other("MARS".into());
    assert!(matches!(
        FrameTransform::new(&other, &CelestialFrame::Icrs),
        Err(Error::InvalidArgument(_))
    ));
    assert!(FrameTransform::new(&other, &other).unwrap().is_identity());
    let gappt = CelestialFrame::GeocentricApparent;
    assert!(FrameTransform::new(&gappt, &gappt).is_err());
    let nan = CelestialFrame::Fk5 { equinox: f64::NAN };
    assert!(FrameTransform::new(&nan, &CelestialFrame::Icrs).is_err());
}

#[test]
fn wrap() {
    assert_eq!(wrap_360(-1e-20), 0.0);
    assert_eq!(wrap_360(360.0), 0.0);
    assert_eq!(wrap_360(-90.0), 270.0);
}

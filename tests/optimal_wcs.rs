//! Golden tests of [`reproject::mosaic::optimal_wcs::optimal_celestial_wcs`] against reproject
//! 0.21's `find_optimal_celestial_wcs`.
//!
//! The fixtures in `tests/fixtures/optimal_wcs/cases.json` are written by
//! `scripts/make_optimal_wcs_fixtures.py`: for every case the input headers and shapes, the
//! options, and reproject's output WCS values and shape, or the exception it raised with the
//! `reproject::Error` variant expected for it.
//!
//! Tolerances: every number of the output header (CRPIX, CDELT, CRVAL, PC, LONPOLE, LATPOLE,
//! EQUINOX) within `max(1e-9 |want|, 1e-10)` (pixels, degrees; longitudes compared modulo 360);
//! CTYPE, CUNIT, RADESYS, DATE-OBS and the shape identical; the same keywords as astropy's
//! `WCS.to_header()` (but MJDREF, which only time axes use) besides NAXIS, NAXIS1, NAXIS2. The
//! header text must parse back to the returned WCS. The worst difference of each quantity is
//! printed (`cargo test --test optimal_wcs -- --nocapture`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use reproject::mosaic::optimal_wcs::{
    frame_from_name, optimal_celestial_wcs, LonCdeltSign, OptimalWcs, OptimalWcsOptions,
    SkyPosition,
};
use reproject::wcs::frame::CelestialFrame;
use reproject::wcs::header::Header;
use reproject::wcs::Wcs;
use reproject::Error;
use serde_json::Value;

const REL_TOL: f64 = 1e-9;
const ABS_TOL: f64 = 1e-10;

/// Keywords astropy writes that the output leaves out: the reference time of time axes.
const NOT_WRITTEN: [&str; 1] = ["MJDREF"];
/// Keywords the output writes that astropy's `to_header` leaves out: the shape.
const SHAPE_KEYWORDS: [&str; 3] = ["NAXIS", "NAXIS1", "NAXIS2"];

/// One case of the fixtures.
struct Case {
    name: String,
    description: String,
    inputs: Vec<(Vec<usize>, Wcs)>,
    options: OptimalWcsOptions,
    /// reproject's output, or the error.
    want: std::result::Result<Value, Value>,
}

fn load() -> Vec<Case> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/optimal_wcs/cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run scripts/make_optimal_wcs_fixtures.py)",
            path.display()
        )
    });
    let meta: Value = serde_json::from_str(&text).unwrap();
    meta["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap().to_string();
            let inputs = meta["inputs"][c["inputs"].as_str().unwrap()]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    let shape = i["shape"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| n.as_u64().unwrap() as usize)
                        .collect();
                    let wcs = Wcs::from_header_str(i["header"].as_str().unwrap())
                        .unwrap_or_else(|e| panic!("{name}: input header: {e}"));
                    (shape, wcs)
                })
                .collect();
            let want = match (c.get("expected"), c.get("error")) {
                (Some(e), None) => Ok(e.clone()),
                (None, Some(e)) => Err(e.clone()),
                _ => panic!("{name}: neither expected nor error"),
            };
            Case {
                description: c["description"].as_str().unwrap().to_string(),
                inputs,
                options: options(&c["options"]),
                want,
                name,
            }
        })
        .collect()
}

fn frame(spec: &Value) -> Option<CelestialFrame> {
    match spec {
        Value::Null => None,
        Value::String(name) => Some(frame_from_name(name).unwrap()),
        Value::Object(o) => {
            let equinox = o["equinox"].as_f64().unwrap();
            Some(match o["name"].as_str().unwrap() {
                "fk5" => CelestialFrame::Fk5 { equinox },
                "fk4" => CelestialFrame::Fk4 { equinox },
                "fk4noeterms" => CelestialFrame::Fk4NoETerms { equinox },
                other => panic!("frame {other}"),
            })
        }
        other => panic!("frame {other}"),
    }
}

fn options(o: &Value) -> OptimalWcsOptions {
    OptimalWcsOptions {
        frame: frame(&o["frame"]),
        projection: o["projection"].as_str().unwrap().to_string(),
        resolution: o["resolution"].as_f64(),
        reference: match &o["reference"] {
            Value::Null => None,
            r => Some(SkyPosition::new(
                r["lon"].as_f64().unwrap(),
                r["lat"].as_f64().unwrap(),
                frame(&r["frame"]).unwrap(),
            )),
        },
        auto_rotate: o["auto_rotate"].as_bool().unwrap(),
        negative_lon_cdelt: match &o["negative_lon_cdelt"] {
            Value::Null => LonCdeltSign::default(),
            Value::Bool(true) => LonCdeltSign::Negative,
            Value::Bool(false) => LonCdeltSign::Positive,
            Value::String(s) => s.parse().unwrap(),
            other => panic!("negative_lon_cdelt {other}"),
        },
    }
}

fn run(case: &Case) -> reproject::Result<OptimalWcs> {
    let inputs: Vec<(Vec<usize>, &Wcs)> = case
        .inputs
        .iter()
        .map(|(shape, wcs)| (shape.clone(), wcs))
        .collect();
    optimal_celestial_wcs(&inputs, &case.options)
}

/// The worst difference of one quantity over all cases.
#[derive(Default)]
struct Worst {
    /// (scaled difference = |got - want| / max(1e-9 |want|, 1e-10), |got - want|, case).
    worst: Option<(f64, f64, String)>,
}

impl Worst {
    fn add(&mut self, scaled: f64, diff: f64, case: &str) {
        if self.worst.as_ref().is_none_or(|(s, _, _)| scaled > *s) {
            self.worst = Some((scaled, diff, case.to_string()));
        }
    }
}

#[test]
fn optimal_wcs_matches_reproject() {
    let cases = load();
    let mut failures = Vec::new();
    let mut worst: std::collections::BTreeMap<&str, Worst> = Default::default();
    let mut checked = 0;
    for case in &cases {
        let Ok(want) = &case.want else { continue };
        checked += 1;
        let name = &case.name;
        let out = match run(case) {
            Ok(out) => out,
            Err(e) => {
                failures.push(format!("{name} ({}): {e}", case.description));
                continue;
            }
        };
        let mut fail = |what: String| failures.push(format!("{name}: {what}"));

        // The shape, and the header text read back.
        let shape: Vec<usize> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap() as usize)
            .collect();
        if [out.shape.0, out.shape.1] != shape[..] {
            fail(format!("shape {:?}, reproject {shape:?}", out.shape));
        }
        match Wcs::from_header_str(&out.header) {
            Ok(w) if w == out.wcs => {}
            Ok(_) => fail("the header text reads back to another WCS".into()),
            Err(e) => fail(format!("the header text does not read back: {e}")),
        }
        let header = Header::parse(&out.header).unwrap();
        let float = |key: &str| header.float(key).unwrap();
        let string = |key: &str| header.string(key).unwrap().unwrap_or_default();
        if float("NAXIS1") != Some(out.shape.1 as f64)
            || float("NAXIS2") != Some(out.shape.0 as f64)
        {
            fail("NAXIS1/NAXIS2 are not the shape".into());
        }

        // The numbers.
        let mut numbers: Vec<(String, &str, f64, Option<f64>)> = Vec::new();
        for (key, field) in [("CRPIX", "crpix"), ("CDELT", "cdelt"), ("CRVAL", "crval")] {
            for i in 0..2 {
                let k = format!("{key}{}", i + 1);
                numbers.push((
                    k.clone(),
                    field,
                    want[field][i].as_f64().unwrap(),
                    float(&k),
                ));
            }
        }
        for i in 0..2 {
            for j in 0..2 {
                let k = format!("PC{}_{}", i + 1, j + 1);
                let unit = f64::from(u8::from(i == j));
                let got = float(&k).or(Some(unit));
                numbers.push((k, "pc", want["pc"][i][j].as_f64().unwrap(), got));
            }
        }
        numbers.push((
            "LONPOLE".into(),
            "lonpole",
            want["lonpole"].as_f64().unwrap(),
            float("LONPOLE"),
        ));
        numbers.push((
            "LATPOLE".into(),
            "latpole",
            want["latpole"].as_f64().unwrap(),
            float("LATPOLE"),
        ));
        if let Some(e) = want["equinox"].as_f64() {
            numbers.push(("EQUINOX".into(), "equinox", e, float("EQUINOX")));
        } else if float("EQUINOX").is_some() {
            fail("EQUINOX written, astropy has none".into());
        }
        let mut case_worst = 0.0f64;
        for (key, field, w, got) in numbers {
            let Some(g) = got else {
                fail(format!("{key} missing"));
                continue;
            };
            let mut diff = (g - w).abs();
            if key == "CRVAL1" || key == "LONPOLE" {
                diff = diff.min((diff - 360.0).abs());
            }
            let tol = (REL_TOL * w.abs()).max(ABS_TOL);
            worst.entry(field).or_default().add(diff / tol, diff, name);
            case_worst = case_worst.max(diff / tol);
            if diff > tol {
                fail(format!(
                    "{key} = {g:?}, reproject {w:?} (difference {diff:.3e})"
                ));
            }
        }

        eprintln!(
            "  {name:30} shape {:?}, numbers within {case_worst:.2e} of the tolerance",
            out.shape
        );

        // The strings.
        let mut strings = vec![
            (
                "RADESYS",
                string("RADESYS"),
                want["radesys"].as_str().unwrap().to_string(),
            ),
            (
                "DATE-OBS",
                string("DATE-OBS"),
                want["dateobs"].as_str().unwrap().to_string(),
            ),
        ];
        for i in 0..2 {
            strings.push((
                ["CTYPE1", "CTYPE2"][i],
                string(&format!("CTYPE{}", i + 1)),
                want["ctype"][i].as_str().unwrap().to_string(),
            ));
            strings.push((
                ["CUNIT1", "CUNIT2"][i],
                string(&format!("CUNIT{}", i + 1)),
                want["cunit"][i].as_str().unwrap().to_string(),
            ));
        }
        for (key, got, w) in strings {
            if got != w {
                fail(format!("{key} = '{got}', reproject '{w}'"));
            }
        }

        // The keywords.
        let ours: BTreeSet<&str> = header
            .keywords()
            .filter(|k| !SHAPE_KEYWORDS.contains(k))
            .collect();
        // A PC element within the tolerance of the unit matrix may be written on one side
        // only (an angle of 0 here, 1e-17 in reproject).
        let unit_pc = |k: &&str| {
            let pc = |i: usize, j: usize| want["pc"][i][j].as_f64().unwrap();
            let (i, j) = match *k {
                "PC1_1" => (0, 0),
                "PC1_2" => (0, 1),
                "PC2_1" => (1, 0),
                "PC2_2" => (1, 1),
                _ => return false,
            };
            (pc(i, j) - f64::from(u8::from(i == j))).abs() <= ABS_TOL
        };
        let ours: BTreeSet<&str> = ours.into_iter().filter(|k| !unit_pc(k)).collect();
        let theirs: BTreeSet<&str> = want["keywords"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .filter(|k| !NOT_WRITTEN.contains(k) && !unit_pc(k))
            .collect();
        if ours != theirs {
            fail(format!(
                "keywords differ: only ours {:?}, only astropy's {:?}",
                ours.difference(&theirs).collect::<Vec<_>>(),
                theirs.difference(&ours).collect::<Vec<_>>()
            ));
        }

        // The output is in the frame asked for.
        if let Some(f) = &case.options.frame
            && out.wcs.frame() != Some(f)
        {
            fail(format!("frame {:?}, asked for {f:?}", out.wcs.frame()));
        }
    }
    eprintln!("{checked} cases; worst differences (scaled = difference / tolerance):");
    for (field, w) in &worst {
        if let Some((scaled, diff, case)) = &w.worst {
            eprintln!("  {field:8} {diff:.3e} ({scaled:.3} of the tolerance) in {case}");
        }
    }
    assert!(checked >= 30, "only {checked} cases with an output");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn variant(e: &Error) -> &'static str {
    match e {
        Error::ShapeMismatch(_) => "ShapeMismatch",
        Error::NoCelestialAxes => "NoCelestialAxes",
        Error::InvalidArgument(_) => "InvalidArgument",
        Error::Unsupported(_) => "Unsupported",
        Error::UnknownProjection(_) => "UnknownProjection",
        Error::InvalidProjectionParameters { .. } => "InvalidProjectionParameters",
        _ => "another variant",
    }
}

#[test]
fn optimal_wcs_errors_match_reproject() {
    let cases = load();
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let Err(want) = &case.want else { continue };
        checked += 1;
        let expected = want["rust"].as_str().unwrap();
        match run(case) {
            Ok(out) => failures.push(format!(
                "{}: no error (shape {:?}); reproject raised {}: {}",
                case.name, out.shape, want["python"], want["message"]
            )),
            Err(e) if variant(&e) == expected => {
                eprintln!(
                    "  {}: {e}  (reproject: {}: {})",
                    case.name, want["python"], want["message"]
                );
            }
            Err(e) => failures.push(format!(
                "{}: {e:?}, expected Error::{expected} (reproject raised {}: {})",
                case.name, want["python"], want["message"]
            )),
        }
    }
    assert!(checked >= 10, "only {checked} error cases");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The header of a result is what the CLI reads as `--to TARGET.hdr`: NAXIS1/NAXIS2 and the WCS.
#[test]
fn header_is_a_reprojection_target() {
    let cases = load();
    let case = cases
        .iter()
        .find(|c| c.name == "tan_mosaic_rotate")
        .unwrap();
    let out = run(case).unwrap();
    let header = Header::parse(&out.header).unwrap();
    assert_eq!(header.int("NAXIS").unwrap(), Some(2));
    let wcs = Wcs::from_header(&header, None).unwrap();
    assert_eq!(wcs, out.wcs);
    assert_eq!(wcs.params().image_shape, vec![out.shape.1, out.shape.0]);
    // Every input corner lies inside the output (within rounding of the shape).
    for (shape, input) in &case.inputs {
        let (ny, nx) = (shape[0] as f64, shape[1] as f64);
        for (x, y) in [
            (-0.5, -0.5),
            (nx - 0.5, -0.5),
            (nx - 0.5, ny - 0.5),
            (-0.5, ny - 0.5),
        ] {
            let (lon, lat) = input.pixel_to_world(x, y).unwrap();
            let (px, py) = wcs.world_to_pixel(lon, lat).unwrap();
            assert!(px > -1.0 && px < out.shape.1 as f64 && py > -1.0 && py < out.shape.0 as f64);
        }
    }
}

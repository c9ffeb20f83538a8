//! Cubes whose third (spectral) axis differs between input and output: reproject interpolates
//! along it too. Golden values from astropy reproject 0.21
//! (`scripts/make_spectral_fixtures.py`): within 1e-6 relative, identical footprints.

use ndarray::{Array3, ArrayD};
use reproject::engine::{reproject_interp, Options};
use reproject::interp::Order;
use reproject::io::ArraySource;
use reproject::wcs::Wcs;
use serde_json::Value;

#[test]
fn spectral_axis_matches_reproject() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spectral/cases.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let shape: Vec<usize> = doc["shape_in"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let values: Vec<f64> = doc["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let image = Array3::from_shape_vec((shape[0], shape[1], shape[2]), values).unwrap();
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let wcs_in = Wcs::from_header_str(case["header_in"].as_str().unwrap()).unwrap();
        let wcs_out = Wcs::from_header_str(case["header_out"].as_str().unwrap()).unwrap();
        let shape_out: Vec<usize> = case["shape_out"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        for order in 0..4 {
            let run = &case["runs"][order.to_string()];
            let want: Vec<f64> = run["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap_or(f64::NAN))
                .collect();
            let want_fp: Vec<f64> = run["footprint"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let options = Options {
                order: Order::try_from(order as i64).unwrap(),
                ..Options::default()
            };
            let (got, got_fp): (ArrayD<f64>, ArrayD<f64>) =
                reproject_interp(&source, &wcs_in, &wcs_out, &shape_out, &options).unwrap();
            assert_eq!(got.shape(), shape_out.as_slice());
            let fp_diff = got_fp.iter().zip(&want_fp).filter(|(a, b)| a != b).count();
            assert_eq!(
                fp_diff, 0,
                "{name} order {order}: footprints differ at {fp_diff} pixels"
            );
            let mut worst = 0.0f64;
            for (g, w) in got.iter().zip(&want) {
                if g.is_nan() || w.is_nan() {
                    continue;
                }
                let err = (g - w).abs() / w.abs().max(1e-3);
                worst = worst.max(err);
            }
            eprintln!("{name} order {order}: max relative difference {worst:e}");
            assert!(worst <= 1e-6, "{name} order {order}: {worst:e}");
        }
    }
}

//! Mosaics against astropy reproject 0.21's `reproject_and_coadd` (fixtures made by
//! `scripts/make_mosaic_fixtures.py`): every combine function, with and without weights and
//! background matching, TAN and non-TAN inputs with a frame change, cubes, a NaN blank value.
//! Values within 1e-6 relative, footprints identical.

use std::fs::File;
use std::path::PathBuf;

use ndarray::ArrayD;
use ndarray_npy::NpzReader;
use reproject::io::ArraySource;
use reproject::mosaic::coadd::{reproject_and_coadd, Background, MosaicInput, MosaicOptions};
use reproject::wcs::Wcs;
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mosaic")
}

#[test]
fn mosaics_match_reproject_and_coadd() {
    let meta: Value =
        serde_json::from_reader(File::open(fixtures().join("cases.json")).unwrap()).unwrap();
    let mut npz = NpzReader::new(File::open(fixtures().join("arrays.npz")).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in meta["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let headers: Vec<Wcs> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| Wcs::from_header_str(h.as_str().unwrap()).unwrap())
            .collect();
        let images: Vec<ArrayD<f64>> = (0..headers.len())
            .map(|k| npz.by_name(&format!("{name}_input{k}")).unwrap())
            .collect();
        let weights: Vec<ArrayD<f64>> = (0..headers.len())
            .map(|k| npz.by_name(&format!("{name}_weights{k}")).unwrap())
            .collect();
        let sources: Vec<ArraySource<f64>> = images
            .iter()
            .map(|a| ArraySource::new(a.view()).unwrap())
            .collect();
        let weight_sources: Vec<ArraySource<f64>> = weights
            .iter()
            .map(|a| ArraySource::new(a.view()).unwrap())
            .collect();
        let wcs_out = Wcs::from_header_str(case["output_header"].as_str().unwrap()).unwrap();
        let shape_out: Vec<usize> = case["shape_out"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        for run in case["runs"].as_array().unwrap() {
            runs += 1;
            let run_name = run["name"].as_str().unwrap();
            let use_weights = run["weights"].as_bool().unwrap();
            let inputs: Vec<MosaicInput> = (0..headers.len())
                .map(|k| MosaicInput {
                    source: &sources[k],
                    wcs: &headers[k],
                    weights: use_weights
                        .then(|| (&weight_sources[k] as &dyn reproject::io::ImageSource, None)),
                })
                .collect();
            let options = MosaicOptions {
                combine: run["combine"].as_str().unwrap().parse().unwrap(),
                background: if run["match_background"].as_bool().unwrap() {
                    Background::Offset
                } else {
                    Background::None
                },
                blank_pixel_value: if run["blank"] == "nan" { f64::NAN } else { 0.0 },
                ..MosaicOptions::default()
            };
            let mosaic = reproject_and_coadd(&inputs, &wcs_out, &shape_out, &options).unwrap();
            let want: ArrayD<f64> = npz.by_name(&format!("{name}_{run_name}_data")).unwrap();
            let want_fp: ArrayD<f64> = npz
                .by_name(&format!("{name}_{run_name}_footprint"))
                .unwrap();
            assert_eq!(mosaic.data.shape(), want.shape(), "{name} {run_name}");
            let scale = want
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, v| m.max(v.abs()));
            let mut bad_values = 0;
            let mut worst = 0.0f64;
            let mut bad_fp = 0;
            for ((v, w), (f, wf)) in mosaic
                .data
                .iter()
                .zip(&want)
                .zip(mosaic.footprint.iter().zip(&want_fp))
            {
                if (f - wf).abs() > 1e-9 * wf.abs().max(1.0) {
                    bad_fp += 1;
                }
                if v.is_nan() && w.is_nan() {
                    continue;
                }
                let rel = (v - w).abs() / w.abs().max(1e-3 * scale);
                worst = worst.max(if rel.is_nan() { f64::INFINITY } else { rel });
                if rel.is_nan() || rel > 1e-6 {
                    bad_values += 1;
                }
            }
            eprintln!("{name:>10} {run_name:<16} worst relative difference {worst:.2e}");
            if bad_values > 0 || bad_fp > 0 {
                failures.push(format!(
                    "{name} {run_name}: {bad_values} values beyond 1e-6 (worst {worst:.2e}), \
                     {bad_fp} footprint differences"
                ));
            }
        }
    }
    assert!(runs >= 30, "{runs} runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

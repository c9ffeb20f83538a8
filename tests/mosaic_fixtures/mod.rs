//! The mosaic fixtures made by `scripts/make_mosaic_fixtures.py` (astropy reproject 0.21's
//! `reproject_and_coadd`): cases of inputs and an output grid, each with runs (combine
//! function, weights, background matching, blank value) and reproject's results.
#![allow(dead_code)]

use std::fs::File;
use std::path::PathBuf;

use ndarray::ArrayD;
use ndarray_npy::NpzReader;
use reproject::io::{ArraySource, ImageSource};
use reproject::mosaic::coadd::{Background, MosaicInput, MosaicOptions};
use reproject::wcs::Wcs;
use serde_json::Value;

/// One case: the inputs (pixels, weights, WCS), the output grid and the runs.
pub struct Case {
    pub name: String,
    pub headers: Vec<Wcs>,
    pub images: Vec<ArrayD<f64>>,
    pub weights: Vec<ArrayD<f64>>,
    pub wcs_out: Wcs,
    pub shape_out: Vec<usize>,
    pub runs: Vec<Value>,
}

/// Every case, and the arrays file (reproject's results, `{case}_{run}_data` and
/// `{case}_{run}_footprint`).
pub fn load() -> (Vec<Case>, NpzReader<File>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mosaic");
    let meta: Value = serde_json::from_reader(File::open(dir.join("cases.json")).unwrap()).unwrap();
    let mut npz = NpzReader::new(File::open(dir.join("arrays.npz")).unwrap()).unwrap();
    let mut cases = Vec::new();
    for case in meta["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap().to_string();
        let headers: Vec<Wcs> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| Wcs::from_header_str(h.as_str().unwrap()).unwrap())
            .collect();
        let mut array = |what: &str, k: usize| -> ArrayD<f64> {
            npz.by_name(&format!("{name}_{what}{k}")).unwrap()
        };
        let images = (0..headers.len()).map(|k| array("input", k)).collect();
        let weights = (0..headers.len()).map(|k| array("weights", k)).collect();
        cases.push(Case {
            wcs_out: Wcs::from_header_str(case["output_header"].as_str().unwrap()).unwrap(),
            shape_out: case["shape_out"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect(),
            runs: case["runs"].as_array().unwrap().clone(),
            name,
            headers,
            images,
            weights,
        });
    }
    (cases, npz)
}

impl Case {
    /// The images and the weights as sources.
    pub fn sources(&self) -> (Vec<ArraySource<'_, f64>>, Vec<ArraySource<'_, f64>>) {
        (
            self.images.iter().map(source).collect(),
            self.weights.iter().map(source).collect(),
        )
    }

    /// The mosaic inputs of a run (with the weights when it uses them).
    pub fn inputs<'a>(
        &'a self,
        images: &'a [ArraySource<'a, f64>],
        weights: &'a [ArraySource<'a, f64>],
        run: &Value,
    ) -> Vec<MosaicInput<'a>> {
        let use_weights = run["weights"].as_bool().unwrap();
        (0..self.headers.len())
            .map(|k| MosaicInput {
                source: &images[k],
                wcs: &self.headers[k],
                weights: use_weights.then(|| (&weights[k] as &dyn ImageSource, None)),
            })
            .collect()
    }
}

/// The run's options as reproject's call had them (background matching by offsets).
pub fn options(run: &Value) -> MosaicOptions {
    MosaicOptions {
        combine: run["combine"].as_str().unwrap().parse().unwrap(),
        background: if matched(run) {
            Background::Offset
        } else {
            Background::None
        },
        blank_pixel_value: if run["blank"] == "nan" { f64::NAN } else { 0.0 },
        ..MosaicOptions::default()
    }
}

/// Whether the run matches backgrounds.
pub fn matched(run: &Value) -> bool {
    run["match_background"].as_bool().unwrap()
}

fn source(a: &ArrayD<f64>) -> ArraySource<'_, f64> {
    ArraySource::new(a.view()).unwrap()
}

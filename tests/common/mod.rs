//! Shared helpers for tests: the astropy-generated WCS vectors in `../shared/wcs-vectors`.
#![allow(dead_code)]

use std::fs::File;
use std::path::PathBuf;

use ndarray::{Array1, Array2};
use ndarray_npy::NpzReader;
use reproject::wcs::linear::Linear2;
use serde_json::Value;

/// The vector directory: `$WCS_VECTORS`, or `../shared/wcs-vectors` beside the checkout.
pub fn vectors_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("WCS_VECTORS") {
        return PathBuf::from(dir);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/wcs-vectors");
    assert!(
        dir.join("summary.json").exists(),
        "WCS test vectors not found at {}: put shared/ beside the checkout or set WCS_VECTORS",
        dir.display()
    );
    dir
}

/// One case of the vectors.
pub struct Case {
    pub name: String,
    pub header: String,
    pub meta: Value,
    npz: NpzReader<File>,
}

impl Case {
    pub fn load(name: &str) -> Case {
        let dir = vectors_dir();
        let header = std::fs::read_to_string(dir.join(format!("{name}.hdr"))).unwrap();
        let meta: Value =
            serde_json::from_reader(File::open(dir.join(format!("{name}.meta.json"))).unwrap())
                .unwrap();
        let npz = NpzReader::new(File::open(dir.join(format!("{name}.npz"))).unwrap()).unwrap();
        Case {
            name: name.to_string(),
            header,
            meta,
            npz,
        }
    }

    pub fn has(&mut self, key: &str) -> bool {
        self.npz
            .names()
            .unwrap()
            .iter()
            .any(|n| n == key || n == &format!("{key}.npy"))
    }

    /// An (N, 2) array.
    pub fn pairs(&mut self, key: &str) -> Array2<f64> {
        self.npz
            .by_name(key)
            .or_else(|_| self.npz.by_name(&format!("{key}.npy")))
            .unwrap_or_else(|e| panic!("{}: array {key}: {e}", self.name))
    }

    /// An (N,) array.
    pub fn values(&mut self, key: &str) -> Array1<f64> {
        self.npz
            .by_name(key)
            .or_else(|_| self.npz.by_name(&format!("{key}.npy")))
            .unwrap_or_else(|e| panic!("{}: array {key}: {e}", self.name))
    }

    /// An (N,) array of status flags (non-zero = invalid).
    pub fn flags(&mut self, key: &str) -> Vec<bool> {
        self.values(key).iter().map(|&v| v != 0.0).collect()
    }

    pub fn param(&self, key: &str) -> &Value {
        &self.meta["params"][key]
    }

    /// The linear step from astropy's post-wcsset parameters: 0-based pixel -> imgcrd.
    pub fn meta_linear(&self) -> Linear2 {
        let crpix = floats(self.param("crpix"));
        let cdelt = floats(self.param("cdelt"));
        let pc: Vec<Vec<f64>> = self
            .param("pc")
            .as_array()
            .unwrap()
            .iter()
            .map(floats)
            .collect();
        let m = |i: usize, j: usize| cdelt[i] * pc[i][j];
        Linear2::new(
            [crpix[0], crpix[1]],
            [[m(0, 0), m(0, 1)], [m(1, 0), m(1, 1)]],
        )
        .unwrap()
    }
}

pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap_or(f64::NAN))
        .collect()
}

/// Difference of two angles in degrees, modulo 360.
pub fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// Names of all cases in summary.json.
pub fn all_cases() -> Vec<String> {
    let summary: Value =
        serde_json::from_reader(File::open(vectors_dir().join("summary.json")).unwrap()).unwrap();
    summary
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// Cases carrying SIP or TPV distortion (the distortion issue's).
pub const DISTORTED: &[&str] = &["sip", "irac_sip", "extra_siponly", "tpvonly"];

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

/// Whether the host builds of the CUDA kernels (`tests/gpu_host_*.rs`) must run: in CI (`$CI`
/// set to anything but `false` or `0`) or with `REPROJECT_RS_REQUIRE_HOST_KERNELS=1`. Then a
/// missing C++ compiler or missing WCS vectors fail those tests instead of skipping them.
pub fn host_kernels_required() -> bool {
    let set = |var: &str| {
        std::env::var(var)
            .is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
    };
    set("CI") || set("REPROJECT_RS_REQUIRE_HOST_KERNELS")
}

/// Skips a host-kernel test (`None`, with the reason on stderr) or, where the host kernels
/// are required ([`host_kernels_required`]), fails it.
pub fn skip_host_kernels<T>(test: &str, why: &str) -> Option<T> {
    assert!(
        !host_kernels_required(),
        "{test}: {why}; the host parity of the CUDA kernels is required here ($CI or \
         REPROJECT_RS_REQUIRE_HOST_KERNELS=1) and cannot be skipped"
    );
    eprintln!(
        "SKIPPED {test}: {why} (set CI or REPROJECT_RS_REQUIRE_HOST_KERNELS=1 to fail instead)"
    );
    None
}

/// The C++ compiler for the host builds of the kernels: the first of `$CXX`, `c++`, `g++`,
/// `clang++` that answers `--version`; `None` (skipped, see [`skip_host_kernels`]) without one.
pub fn host_cxx(test: &str) -> Option<String> {
    let candidates = std::env::var("CXX")
        .ok()
        .into_iter()
        .chain(["c++", "g++", "clang++"].map(String::from));
    let found = candidates.into_iter().find(|cxx| {
        std::process::Command::new(cxx)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    found.or_else(|| skip_host_kernels(test, "no C++ compiler ($CXX, c++, g++, clang++)"))
}

/// The flags of every host build of the kernels, after its optimisation level: one rounding
/// per operation (`-ffp-contract=off`, as the device's `--fmad=false`), C++14, warnings, and
/// AddressSanitizer and UBSan with no recovery. What a GPU would fault on or read wrongly, or
/// what x86 and a GPU do differently, then stops the harness, and so fails its test, where x86
/// alone would let it pass:
/// - a read or write past the buffers the harness gives the kernel (a fault on the device,
///   or garbage in the result);
/// - a misaligned load or store (a misaligned-address fault on the device);
/// - a float converted to an integer type that cannot hold it (the device saturates, x86
///   gives the type's minimum);
/// - a signed overflow, a shift past a type's width, and the rest of UBSan's `undefined`:
///   undefined in the C++ the kernels are written in.
pub const HOST_KERNEL_FLAGS: [&str; 5] = [
    "-ffp-contract=off",
    "-std=c++14",
    "-Wall",
    SANITIZER_FLAGS[0],
    SANITIZER_FLAGS[1],
];

include!("../../kernels/host/sanitizers.rs");

/// The vector directory ([`vectors_dir`]: `$WCS_VECTORS` or `../shared/wcs-vectors`) for the
/// host-kernel tests, when it holds the vectors; `None` (skipped, see [`skip_host_kernels`])
/// otherwise.
pub fn host_vectors_dir(test: &str) -> Option<PathBuf> {
    let dir = match std::env::var("WCS_VECTORS") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/wcs-vectors"),
    };
    if dir.join("summary.json").is_file() {
        Some(dir)
    } else {
        skip_host_kernels(
            test,
            &format!(
                "no WCS test vectors at {} (set WCS_VECTORS or put shared/ beside the checkout)",
                dir.display()
            ),
        )
    }
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

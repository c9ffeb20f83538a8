//! The fuzz targets' short mode, on the stable toolchain: every committed corpus input
//! (`fuzz/corpus/<target>/`) and crash regression (`fuzz/regressions/<target>/`) goes through
//! the same body as the cargo-fuzz binary (`fuzz/bodies/`), then a bounded number of random
//! mutations of them (fixed seed; `REPROJECT_FUZZ_RUNS` changes the count, `REPROJECT_FUZZ_SEED`
//! the seed). A failing input is saved under `target/fuzz-replay-failures/` and named in the
//! panic message. The long runs are `scripts/fuzz.sh` (nightly + cargo-fuzz).

#[path = "../fuzz/bodies/mod.rs"]
mod bodies;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Mutated inputs per target by default (40 000 in all, about 5 s in a debug build).
const DEFAULT_RUNS: [(&str, usize); 4] = [
    ("header_text", 10000),
    ("fits_open", 6000),
    ("npy_header", 10000),
    ("wcs_transform", 14000),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The committed inputs of a target: corpus and regressions, sorted by path.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for kind in ["corpus", "regressions"] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() && path.file_name().is_some_and(|n| n != ".gitkeep") {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

/// Runs one input; on a panic, saves it and panics with its name.
fn run_one(target: &str, body: fn(&[u8]), data: &[u8], origin: &str) {
    if catch_unwind(AssertUnwindSafe(|| body(data))).is_ok() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-replay-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{target}-{:016x}", fnv1a(data)));
    std::fs::write(&path, data).unwrap();
    panic!(
        "fuzz target {target} panicked on {origin}; the input is saved in {} \
         (replay: cargo +nightly fuzz run {target} {})",
        path.display(),
        path.display()
    );
}

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// xorshift64*: a small, fixed, reproducible generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Byte strings that matter to the parsers under test.
const TOKENS: &[&[u8]] = &[
    b"END",
    b"= ",
    b"'",
    b"''",
    b"/",
    b" ",
    b"\n",
    b"\0",
    b"\xff",
    b"\x80",
    b"-",
    b"E",
    b"D",
    b"1E400",
    b"NaN",
    b"T",
    b"F",
    b"NAXIS",
    b"BITPIX",
    b"BSCALE",
    b"BZERO",
    b"BLANK",
    b"XTENSION",
    b"SIMPLE  =",
    b"CTYPE1  = 'RA---TAN'",
    b"PV2_1",
    b"A_ORDER = 5",
    b"99999999999999999999",
    b"-2147483648",
    b"\x93NUMPY",
    b"{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
    b"(",
    b")",
    b",",
    b"True",
    b"0L",
];

/// One to four libFuzzer-style mutations of `data`.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                data.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                data.drain(i..i + n);
            }
            4 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(len + 1);
                data.splice(i..i, t.iter().copied());
            }
            5 if len > 0 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(len);
                let end = (i + t.len()).min(len);
                data.splice(i..end, t.iter().copied());
            }
            6 if len > 0 => {
                let n = rng.below(len);
                data.truncate(n);
            }
            7 if len > 1 => {
                // Copy a chunk over another place.
                let n = 1 + rng.below(len.min(80));
                let from = rng.below(len - n + 1);
                let to = rng.below(len - n + 1);
                let chunk = data[from..from + n].to_vec();
                data[to..to + n].copy_from_slice(&chunk);
            }
            _ if len > 0 => {
                // An ASCII digit somewhere (numbers are what the parsers read most).
                let i = rng.below(len);
                data[i] = b"0123456789+-.E"[rng.below(14)];
            }
            _ => data.push(rng.next() as u8),
        }
    }
}

fn replay(target: &str) {
    let body = bodies::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|&(_, f)| f)
        .unwrap();
    let seeds = inputs(target);
    assert!(
        !seeds.is_empty(),
        "no corpus for {target} under {}",
        fuzz_dir().display()
    );
    for (path, data) in &seeds {
        run_one(target, body, data, &path.display().to_string());
    }
    let runs = std::env::var("REPROJECT_FUZZ_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| DEFAULT_RUNS.iter().find(|(t, _)| *t == target).unwrap().1);
    let seed = std::env::var("REPROJECT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f022);
    let mut rng = Rng(seed ^ fnv1a(target.as_bytes()) | 1);
    for run in 0..runs {
        let (path, data) = &seeds[rng.below(seeds.len())];
        let mut data = data.clone();
        mutate(&mut rng, &mut data);
        let origin = format!("mutation {run} of {}", path.display());
        run_one(target, body, &data, &origin);
    }
}

#[test]
fn header_text() {
    replay("header_text");
}

#[cfg(feature = "fits")]
#[test]
fn fits_open() {
    replay("fits_open");
}

#[test]
fn npy_header() {
    replay("npy_header");
}

#[test]
fn wcs_transform() {
    replay("wcs_transform");
}

/// Prints the header a `wcs_transform` input decodes to (debugging aid):
/// `REPROJECT_FUZZ_INPUT=path cargo test --test fuzz_replay show_wcs_transform_input -- --ignored --nocapture`
#[test]
#[ignore]
fn show_wcs_transform_input() {
    let path = std::env::var("REPROJECT_FUZZ_INPUT").expect("set REPROJECT_FUZZ_INPUT");
    let data = std::fs::read(path).unwrap();
    let mut r = bodies::common::Reader::new(&data);
    let header = bodies::wcs_transform::build_header(&mut r);
    println!("{header}");
    let points: Vec<(f64, f64)> = (0..1 + r.below(6)).map(|_| r.point()).collect();
    println!("points: {points:?}");
    println!("{:?}", reproject::wcs::Wcs::from_header_str(&header));
}

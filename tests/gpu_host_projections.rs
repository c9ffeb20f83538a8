//! GPU-free parity test of `kernels/projections.cuh`, the CUDA port of the 28 projections.
//!
//! The kernel source is built as host C++ (`kernels/host/projections_harness.cpp`, with the
//! system `c++`/`g++`, `-O2 -ffp-contract=off`) and run on the same points as
//! [`Projection::x2s`], [`Projection::s2x`], [`Projection::x2v`] and [`Projection::v2x`]: every
//! code, default and non-default parameters (those of the astropy test headers in
//! /work/shared/wcs-vectors and more, to reach every branch), user fiducial points, plane and
//! native grids over the valid and invalid regions, images of the domain boundaries nudged by a
//! few ulp, far-side, huge, NaN and infinite points. Validity must be identical and the values
//! within 1e-12 (relative above 1); the summary printed with `--nocapture` gives the largest
//! difference and how many values are not bit-identical (on the host: none expected, as both
//! sides call the same libm). `rp_prj_setup` must reject exactly what [`Projection::new`]
//! rejects.
//!
//! Without a C++ compiler the tests fail in CI (`$CI` set) and with
//! `REPROJECT_RS_REQUIRE_HOST_KERNELS=1` (which `scripts/test.sh` sets); elsewhere they print
//! why and pass without checking anything (see `tests/common/mod.rs`).
//! Run with `cargo test --test gpu_host_projections -- --nocapture`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use reproject::wcs::projection::{Projection, ProjectionCode, ProjectionParams};
use reproject::wcs::Wcs;

mod common;

/// Doubles in the flat parameter array (`RP_PRJ_PARAMS`).
const PARAMS: usize = 35;
/// Doubles the harness writes per point.
const PER_POINT: usize = 13;
/// Allowed difference, absolute up to magnitude 1 and relative above.
const TOL: f64 = 1e-12;

/// The harness, compiled once per test process (the tests run in parallel and must not
/// write and run the same file at once); `None` without a compiler.
fn build_harness() -> Option<PathBuf> {
    static BIN: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BIN.get_or_init(compile_harness).clone()
}

/// Compiles the harness into the test's scratch directory; `None` without a compiler (a
/// failure where the host kernels are required, see `common::host_cxx`).
fn compile_harness() -> Option<PathBuf> {
    let cxx = common::host_cxx("gpu_host_projections")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = root.join("kernels/host/projections_harness.cpp");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpu_host_projections");
    std::fs::create_dir_all(&dir).expect("creating the scratch directory");
    let exe = dir.join(format!("projections_harness_{}", std::process::id()));
    let out = Command::new(&cxx)
        .arg("-O2")
        .args(common::HOST_KERNEL_FLAGS)
        .args(["-Wextra", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("running the C++ compiler");
    assert!(
        out.status.success(),
        "{cxx} failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(
        warnings.trim().is_empty(),
        "{cxx} warns on the kernel source:\n{warnings}"
    );
    Some(exe)
}

/// Runs the harness on the given input records and returns its output doubles.
fn run_harness(exe: &Path, input: Vec<f64>) -> Vec<f64> {
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting the harness");
    let mut stdin = child.stdin.take().expect("harness stdin");
    let writer = std::thread::spawn(move || {
        let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_ne_bytes()).collect();
        stdin.write_all(&bytes).expect("writing to the harness");
    });
    let mut bytes = Vec::new();
    child
        .stdout
        .take()
        .expect("harness stdout")
        .read_to_end(&mut bytes)
        .expect("reading the harness output");
    writer.join().expect("writer thread");
    let status = child.wait().expect("waiting for the harness");
    assert!(status.success(), "harness exited with {status}");
    assert_eq!(bytes.len() % 8, 0);
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// The flat parameter layout of `Projection::device_params`, also for parameter sets that
/// `Projection::new` rejects (checked against `device_params` for the accepted ones).
fn flat_params(code: ProjectionCode, params: &ProjectionParams) -> [f64; PARAMS] {
    let mut flat = [0.0; PARAMS];
    flat[0] = ProjectionCode::ALL.iter().position(|c| *c == code).unwrap() as f64;
    let mut mask = 0u32;
    for (m, v) in params.pv.iter().enumerate() {
        if let Some(v) = v {
            mask |= 1 << m;
            flat[2 + m] = *v;
        }
    }
    flat[1] = f64::from(mask);
    if let Some((phi0, theta0)) = params.fiducial {
        flat[32] = 1.0;
        flat[33] = phi0;
        flat[34] = theta0;
    }
    flat
}

fn params(pv: &[(usize, f64)], fiducial: Option<(f64, f64)>) -> ProjectionParams {
    let mut p = ProjectionParams::default();
    for &(m, v) in pv {
        p.pv[m] = Some(v);
    }
    p.fiducial = fiducial;
    p
}

/// One projection to compare: code, parameters and a label.
struct Set {
    label: String,
    code: ProjectionCode,
    params: ProjectionParams,
}

fn set(code: &str, pv: &[(usize, f64)], fiducial: Option<(f64, f64)>) -> Set {
    let code: ProjectionCode = code.parse().unwrap();
    let pv_text: Vec<String> = pv.iter().map(|(m, v)| format!("PV{m}={v}")).collect();
    let mut label = format!("{} [{}]", code.as_str(), pv_text.join(" "));
    if let Some((p, t)) = fiducial {
        label.push_str(&format!(" fiducial ({p}, {t})"));
    }
    Set {
        label,
        code,
        params: params(pv, fiducial),
    }
}

/// The parameter sets that `Projection::new` accepts: defaults for every code that has them
/// (not the conics, BON and ZPN),
/// the astropy test headers' values, and more to reach each branch.
fn valid_sets() -> Vec<Set> {
    let mut sets = Vec::new();
    for code in ProjectionCode::ALL {
        if !matches!(code.as_str(), "COP" | "COE" | "COD" | "COO" | "BON" | "ZPN") {
            sets.push(set(code.as_str(), &[], None));
        }
    }
    // The 1904-66 maps headers and the labelled extras of /work/shared/wcs-vectors.
    let zpn_1904: Vec<(usize, f64)> = [
        0.05, 0.975, -0.807, 0.337, -0.065, 0.01, 0.003, -0.001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0,
    ]
    .into_iter()
    .enumerate()
    .collect();
    sets.extend([
        set("AIR", &[(1, 45.0)], None),
        set("AZP", &[(1, 2.0), (2, 30.0)], None),
        set("BON", &[(1, 45.0)], None),
        set("CEA", &[(1, 1.0)], None),
        set("COD", &[(1, 45.0), (2, 25.0)], None),
        set("COE", &[(1, -45.0), (2, 25.0)], None),
        set("COO", &[(1, 45.0), (2, 25.0)], None),
        set("COP", &[(1, 45.0), (2, 25.0)], None),
        set("CYP", &[(1, 1.0), (2, 7.071067811870E-01)], None),
        set("SIN", &[(1, 0.0), (2, -1.216796447506E-08)], None),
        set("SIN", &[(1, 0.0), (2, 0.0)], None),
        set("SZP", &[(1, 2.0), (2, 180.0), (3, 60.0)], None),
        set("ZPN", &zpn_1904, None),
        set("COE", &[(1, 30.0), (2, 10.0)], None),
        set(
            "SIN",
            &[(1, -0.755124458581295), (2, 0.209028857410973)],
            None,
        ),
        set("ZPN", &[(0, 0.1), (1, 0.975)], None),
        set("SFL", &[], Some((0.0, 20.0))),
    ]);
    // More branches.
    sets.extend([
        set("AZP", &[(1, 0.5)], None),
        set("AZP", &[(1, -3.0), (2, 60.0)], None),
        set("AZP", &[(1, 1.5), (2, -20.0)], None),
        set("SZP", &[(1, 0.5), (2, 30.0), (3, 45.0)], None),
        set("SZP", &[(1, -3.0), (2, -60.0), (3, 20.0)], None),
        set("SIN", &[(1, 0.1), (2, -0.2)], None),
        set("ZPN", &[(0, 0.1), (1, 1.0)], None),
        set("ZPN", &[(0, 0.01), (1, 0.9), (2, 0.05)], None),
        set("ZPN", &[(1, 1.0), (2, -0.2)], None),
        set("ZPN", &[(1, 1.0), (3, -0.05)], None),
        set("ZPN", &[(1, 1.0), (3, 0.01)], None),
        set("ZPN", &[(0, 0.5)], None),
        set("AIR", &[(1, -45.0)], None),
        set("AIR", &[(1, 89.0)], None),
        set("CYP", &[(1, 0.5), (2, 2.0)], None),
        set("CYP", &[(1, -0.5), (2, 1.0)], None),
        set("CEA", &[(1, 0.25)], None),
        set("COP", &[(1, -30.0), (2, 5.0)], None),
        set("COP", &[(1, 60.0)], None),
        set("COE", &[(1, 45.0)], None),
        set("COD", &[(1, 45.0)], None),
        set("COD", &[(1, -30.0), (2, 10.0)], None),
        set("COO", &[(1, -45.0)], None),
        set("COO", &[(1, 45.0)], None),
        set("COO", &[(1, -30.0), (2, 20.0)], None),
        set("BON", &[(1, 0.0)], None),
        set("BON", &[(1, -30.0)], None),
        set("HPX", &[(1, 4.0), (2, 4.0)], None),
        set("HPX", &[(1, 5.0), (2, 3.0)], None),
        set("HPX", &[(1, 6.0), (2, 5.0)], None),
        set("HPX", &[(1, 3.0), (2, 2.0)], None),
    ]);
    // User fiducial points (plane offsets).
    sets.extend([
        set("TAN", &[], Some((0.0, 90.0))),
        set("TAN", &[], Some((10.0, 60.0))),
        set("SIN", &[(1, 0.1)], Some((5.0, 70.0))),
        set("CAR", &[], Some((30.0, 20.0))),
        set("AIT", &[], Some((-40.0, 10.0))),
        set("COE", &[(1, 45.0), (2, 10.0)], Some((0.0, 20.0))),
        set("ZEA", &[], Some((45.0, 45.0))),
        set("HPX", &[], Some((0.0, 10.0))),
        set("MOL", &[], Some((20.0, -30.0))),
        set("QSC", &[], Some((10.0, 10.0))),
        set("CSC", &[], Some((-10.0, 30.0))),
        set("XPH", &[], Some((0.0, 0.0))),
        set("ZPN", &[(1, 1.0), (3, -0.05)], Some((0.0, 60.0))),
    ]);
    sets
}

/// The projection of every case of the WCS vectors (`$WCS_VECTORS` or `../shared/wcs-vectors`),
/// as [`Wcs::from_header_str`] builds it from the case's header: `(case, code, parameters)`.
/// Empty without the vectors (a failure where the host kernels are required, see
/// `common::host_vectors_dir`).
fn vector_projections() -> Vec<(String, ProjectionCode, ProjectionParams)> {
    let what = "gpu_host_projections (the projections of the WCS vectors' headers)";
    let Some(dir) = common::host_vectors_dir(what) else {
        return Vec::new();
    };
    let cases = common::all_cases();
    assert!(!cases.is_empty(), "{}: no cases", dir.display());
    cases
        .into_iter()
        .map(|name| {
            let path = dir.join(format!("{name}.hdr"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let wcs = Wcs::from_header_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let prj = wcs
                .celestial()
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .projection();
            (name, prj.code(), *prj.params())
        })
        .collect()
}

/// Parameter sets that `Projection::new` rejects.
fn invalid_sets() -> Vec<Set> {
    vec![
        set("AZP", &[(1, -1.0)], None),
        set("SZP", &[(1, -1.0)], None),
        set("ZPN", &[], None),
        set("ZPN", &[(0, 0.0), (5, 0.0)], None),
        set("ZPN", &[(1, 0.0), (3, 1.0)], None),
        set("ZPN", &[(1, -1.0), (2, 1.0)], None),
        set("AIR", &[(1, -90.0)], None),
        set("AIR", &[(1, -120.0)], None),
        set("CYP", &[(2, 0.0)], None),
        set("CYP", &[(1, -1.0), (2, 1.0)], None),
        set("CEA", &[(1, 0.0)], None),
        set("CEA", &[(1, 1.5)], None),
        set("CEA", &[(1, -0.5)], None),
        set("COP", &[], None),
        set("COP", &[(2, 10.0)], None),
        set("COP", &[(1, 0.0)], None),
        set("COE", &[(1, 0.0), (2, 30.0)], None),
        set("COE", &[(2, 30.0)], None),
        set("COD", &[(1, 0.0)], None),
        set("COD", &[], None),
        set("COO", &[(1, 0.0)], None),
        set("COO", &[], None),
        set("BON", &[], None),
        set("HPX", &[(1, 0.0)], None),
        set("HPX", &[(2, -3.0)], None),
        // Non-finite parameters, for any code.
        set("TAN", &[(5, f64::NAN)], None),
        set("CAR", &[(1, f64::INFINITY)], None),
        set("ZPN", &[(1, 1.0), (29, f64::NEG_INFINITY)], None),
        // Fiducial points that cannot be projected, or are not finite.
        set("TAN", &[], Some((0.0, -10.0))),
        set("MER", &[], Some((0.0, 90.0))),
        set("STG", &[], Some((0.0, -90.0))),
        set("SIN", &[], Some((0.0, -5.0))),
        set("TAN", &[], Some((f64::NAN, 45.0))),
        set("CAR", &[], Some((0.0, f64::INFINITY))),
    ]
}

/// splitmix64, for reproducible pseudo-random points.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
}

/// The next representable value `n` steps away (n may be negative).
fn ulps(v: f64, n: i64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let bits = v.to_bits() as i64;
    let step = if v > 0.0 { n } else { -n };
    f64::from_bits((bits + step) as u64)
}

/// Adds the point (a, b) with a third component for v2x: 0, ±1 or a random value.
fn push(pts: &mut Vec<[f64; 3]>, a: f64, b: f64, rng: &mut Rng) {
    let c = match rng.next_u64() % 8 {
        0 => 0.0,
        1 => -1.0,
        2 => 1.0,
        _ => rng.uniform(-400.0, 400.0),
    };
    pts.push([a, b, c]);
}

/// The points (a, b, c) for one projection: used as (x, y) by x2s and x2v, as (φ, θ) by s2x,
/// and as the direction (a, b, c) by v2x.
fn points(prj: &Projection, seed: u64) -> Vec<[f64; 3]> {
    let mut rng = Rng(seed);
    let mut pts = Vec::new();

    // Plane and native grids, on round values (boundaries, poles, ±180) ...
    for i in -40..=40 {
        for j in -40..=40 {
            push(&mut pts, f64::from(i) * 10.0, f64::from(j) * 10.0, &mut rng);
        }
    }
    for i in -36..=36 {
        for j in -20..=20 {
            push(&mut pts, f64::from(i) * 15.0, f64::from(j) * 5.0, &mut rng);
        }
    }
    // ... and off them.
    for i in -50..=50 {
        for j in -50..=50 {
            push(
                &mut pts,
                f64::from(i) * 8.123 + 0.37,
                f64::from(j) * 8.123 - 0.21,
                &mut rng,
            );
        }
    }
    for _ in 0..3000 {
        let (a, b) = (rng.uniform(-450.0, 450.0), rng.uniform(-450.0, 450.0));
        push(&mut pts, a, b, &mut rng);
    }
    for _ in 0..1000 {
        let (a, b) = (rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0));
        push(&mut pts, a, b, &mut rng);
    }
    // Large, tiny and special values.
    let specials = [
        0.0,
        -0.0,
        1e-300,
        -5e-324,
        1e-9,
        90.0,
        -90.0,
        180.0,
        -180.0,
        360.0,
        540.0,
        1e6,
        -1e10,
        1e15,
        -1e15,
        1e300,
        -1e300,
        f64::MAX,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for &a in &specials {
        for &b in &specials {
            push(&mut pts, a, b, &mut rng);
            pts.push([a, b, rng.uniform(-1.0, 1.0)]);
            pts.push([a, rng.uniform(-1.0, 1.0), b]);
        }
        for _ in 0..5 {
            let b = rng.uniform(-200.0, 200.0);
            push(&mut pts, a, b, &mut rng);
            push(&mut pts, b, a, &mut rng);
        }
    }
    // Unit vectors for v2x, and near the native poles and the ±180 meridian.
    for _ in 0..1500 {
        let (phi, theta) = (rng.uniform(-180.0, 180.0), rng.uniform(-90.0, 90.0));
        let (sp, cp) = phi.to_radians().sin_cos();
        let (st, ct) = theta.to_radians().sin_cos();
        pts.push([ct * cp, ct * sp, st]);
    }
    pts.push([0.0, 0.0, 1.0]);
    pts.push([0.0, 0.0, -1.0]);
    pts.push([1.0, 0.0, 0.0]);
    pts.push([-1.0, -0.0, 0.0]);

    // Images of boundary and far-side native points, nudged by a few ulp and by 1e-14 .. 1e-11
    // relative, to sit on both sides of every tolerance of x2s.
    let (phi0, theta0) = prj.fiducial();
    let mut natives = Vec::new();
    for &phi in &[
        -180.0,
        ulps(-180.0, 1),
        -179.999999,
        -135.0,
        -90.0,
        -45.0,
        0.0,
        1e-7,
        45.0,
        90.0,
        135.0,
        179.999999,
        ulps(180.0, -1),
        180.0,
        phi0,
    ] {
        for &theta in &[
            -90.0,
            ulps(-90.0, 1),
            -89.9999999,
            -89.0,
            -60.0,
            -45.0,
            -30.0,
            -1e-5,
            0.0,
            1e-5,
            30.0,
            45.0,
            60.0,
            89.0,
            89.9999999,
            ulps(90.0, -1),
            90.0,
            theta0,
            theta0 + 1e-7,
            theta0 - 10.0,
            theta0 + 10.0,
        ] {
            natives.push((phi, theta));
        }
    }
    for _ in 0..300 {
        natives.push((rng.uniform(-180.0, 180.0), rng.uniform(-90.0, 90.0)));
    }
    for &(phi, theta) in &natives {
        push(&mut pts, phi, theta, &mut rng);
        let Some((x, y)) = prj.s2x(phi, theta) else {
            continue;
        };
        for &(dx, dy) in &[(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (2, 2), (-2, -2)] {
            push(&mut pts, ulps(x, dx), ulps(y, dy), &mut rng);
        }
        for &f in &[1e-14, -1e-14, 1e-13, -1e-13, 1e-12, -1e-12, 1e-11, -1e-11] {
            push(&mut pts, x * (1.0 + f), y * (1.0 + f), &mut rng);
            push(&mut pts, x, y * (1.0 + f), &mut rng);
        }
    }
    pts
}

/// Largest difference and count of non-identical values, per parameter set.
#[derive(Default)]
struct Stats {
    values: usize,
    not_identical: usize,
    max_err: f64,
    worst: String,
}

impl Stats {
    fn compare(&mut self, what: &str, pt: &[f64; 3], gpu: f64, cpu: f64) {
        self.values += 1;
        if gpu.to_bits() == cpu.to_bits() {
            return;
        }
        self.not_identical += 1;
        let err = (gpu - cpu).abs() / cpu.abs().max(1.0);
        assert!(
            err <= TOL,
            "{what} at {pt:?}: kernel {gpu:e}, Rust {cpu:e} (difference {err:e})"
        );
        if err > self.max_err || self.worst.is_empty() {
            self.max_err = err.max(self.max_err);
            self.worst = format!("{what} at {pt:?}: {gpu:e} vs {cpu:e}");
        }
    }
}

#[test]
fn kernel_projections_match_rust() {
    let Some(exe) = build_harness() else {
        return;
    };

    let mut sets = valid_sets();
    // Every projection of the WCS vectors is among the sets: those not listed above are added.
    let vectors = vector_projections();
    for (name, code, params) in &vectors {
        let same = |s: &Set| {
            s.code == *code && flat_params(s.code, &s.params) == flat_params(*code, params)
        };
        if !sets.iter().any(same) {
            let pv: Vec<(usize, f64)> = (params.pv.iter().enumerate())
                .filter_map(|(m, v)| Some((m, (*v)?)))
                .collect();
            let mut s = set(code.as_str(), &pv, params.fiducial);
            assert!(same(&s), "{name}: {} rebuilt differently", s.label);
            s.label = format!("{name} (WCS vectors) {}", s.label);
            sets.push(s);
        }
    }
    let mut built = Vec::new();
    let mut input = Vec::new();
    for (k, s) in sets.iter().enumerate() {
        let prj = Projection::new(s.code, &s.params)
            .unwrap_or_else(|e| panic!("{}: Projection::new failed: {e}", s.label));
        let flat = prj.device_params();
        assert_eq!(
            flat.map(f64::to_bits),
            flat_params(s.code, &s.params).map(f64::to_bits),
            "{}: device_params layout",
            s.label
        );
        let pts = points(&prj, 0x5EED + k as u64);
        input.extend_from_slice(&flat);
        input.push(pts.len() as f64);
        input.extend(pts.iter().flatten());
        built.push((prj, pts));
    }
    let output = run_harness(&exe, input);

    println!(
        "{} projections of the WCS vectors, {} of them not among the listed sets",
        vectors.len(),
        sets.len() - valid_sets().len()
    );

    let mut at = 0;
    let mut total = Stats::default();
    let mut n_points = 0;
    let mut n_valid = [0usize; 4];
    for (s, (prj, pts)) in sets.iter().zip(&built) {
        let head = &output[at..at + 3];
        at += 3;
        assert_eq!(
            head[0], 0.0,
            "{}: rp_prj_setup failed ({})",
            s.label, head[0]
        );
        let (phi0, theta0) = prj.fiducial();
        assert_eq!(
            (head[1].to_bits(), head[2].to_bits()),
            (phi0.to_bits(), theta0.to_bits()),
            "{}: rp_prj_fiducial",
            s.label
        );

        let mut stats = Stats::default();
        for pt in pts {
            let out = &output[at..at + PER_POINT];
            at += PER_POINT;
            let [a, b, c] = *pt;
            let ctx = |f: &str| format!("{} {f}", s.label);

            let check2 = |stats: &mut Stats, f: &str, o: &[f64], r: Option<(f64, f64)>| {
                assert_eq!(o[0] == 0.0, r.is_some(), "{}: validity at {pt:?}", ctx(f));
                if let Some((u, v)) = r {
                    stats.compare(&ctx(f), pt, o[1], u);
                    stats.compare(&ctx(f), pt, o[2], v);
                }
            };
            let x2s = prj.x2s(a, b);
            let s2x = prj.s2x(a, b);
            let x2v = prj.x2v(a, b);
            let v2x = prj.v2x([a, b, c]);
            check2(&mut stats, "x2s", &out[0..3], x2s);
            check2(&mut stats, "s2x", &out[3..6], s2x);
            assert_eq!(
                out[6] == 0.0,
                x2v.is_some(),
                "{}: validity at {pt:?}",
                ctx("x2v")
            );
            if let Some(v) = x2v {
                for i in 0..3 {
                    stats.compare(&ctx("x2v"), pt, out[7 + i], v[i]);
                }
            }
            check2(&mut stats, "v2x", &out[10..13], v2x);
            for (n, valid) in
                n_valid
                    .iter_mut()
                    .zip([x2s.is_some(), s2x.is_some(), x2v.is_some(), v2x.is_some()])
            {
                *n += usize::from(valid);
            }
        }
        n_points += pts.len();
        println!(
            "{:<60} {:>6} points, {:>7} values, {:>4} not bit-identical, max diff {:.1e}{}",
            s.label,
            pts.len(),
            stats.values,
            stats.not_identical,
            stats.max_err,
            if stats.worst.is_empty() {
                String::new()
            } else {
                format!(" ({})", stats.worst)
            }
        );
        total.values += stats.values;
        total.not_identical += stats.not_identical;
        if stats.max_err >= total.max_err {
            total.max_err = stats.max_err;
            total.worst = stats.worst;
        }
    }
    assert_eq!(at, output.len(), "harness output length");
    println!(
        "TOTAL: {} parameter sets, {n_points} points (valid: x2s {}, s2x {}, x2v {}, v2x {}), \
         {} values compared, {} not bit-identical, max difference {:.1e} {}",
        sets.len(),
        n_valid[0],
        n_valid[1],
        n_valid[2],
        n_valid[3],
        total.values,
        total.not_identical,
        total.max_err,
        total.worst
    );
    // Every kind of result must have been exercised, valid and invalid.
    for n in n_valid {
        assert!(n > 0 && n < n_points);
    }
}

#[test]
fn kernel_setup_rejects_what_rust_rejects() {
    let Some(exe) = build_harness() else {
        return;
    };
    let invalid = invalid_sets();
    let mut input = Vec::new();
    for s in &invalid {
        assert!(
            Projection::new(s.code, &s.params).is_err(),
            "{}: Projection::new accepted it",
            s.label
        );
        input.extend_from_slice(&flat_params(s.code, &s.params));
        input.push(0.0);
    }
    // Malformed arrays: code and mask out of range or not integers.
    let tan = flat_params(ProjectionCode::Tan, &ProjectionParams::default());
    let mut malformed = Vec::new();
    for (i, v) in [
        (0, 28.0),
        (0, -1.0),
        (0, 2.5),
        (0, f64::NAN),
        (1, 1073741824.0),
        (1, 0.5),
        (1, -1.0),
    ] {
        let mut flat = tan;
        flat[i] = v;
        malformed.push(flat);
        input.extend_from_slice(&flat);
        input.push(0.0);
    }
    // A valid set last, to show the harness still accepts good input after bad.
    input.extend_from_slice(&tan);
    input.push(0.0);

    let output = run_harness(&exe, input);
    assert_eq!(output.len(), 3 * (invalid.len() + malformed.len() + 1));
    for (s, head) in invalid.iter().zip(output.chunks_exact(3)) {
        assert_ne!(head[0], 0.0, "{}: rp_prj_setup accepted it", s.label);
    }
    for (flat, head) in malformed
        .iter()
        .zip(output.chunks_exact(3).skip(invalid.len()))
    {
        assert_ne!(head[0], 0.0, "malformed {:?}: accepted", &flat[..2]);
    }
    let last = &output[output.len() - 3..];
    assert_eq!(last, &[0.0, 0.0, 90.0]);
}

//! GPU parity suite: the GPU backend (`Backend::Cuda`) against the CPU engine on every
//! projection family, SIP and TPV distortions, celestial frames, orders 0-5, NaN inputs and
//! float32 outputs.
//!
//! Values must agree within 1e-9 relative; footprints must be identical except at pixels whose
//! footprint the CPU itself changes when the output grid moves by 1e-9 px (pixels that close to
//! a boundary). Each GPU job runs twice, the second time once the plan's kernel variant has
//! compiled (a fresh machine runs the general kernel first), and both runs must give the same
//! bits. Without a usable GPU every test prints `SKIPPED` and the reason, and passes.
//!
//! On a GPU machine: `cargo test --release --test gpu_parity -- --nocapture`, or the prebuilt
//! binary from `scripts/gpu_bundle.sh` (`gpu-bundle/run.sh`).
#![cfg(feature = "cuda")]

use ndarray::{Array2, ArrayD, IxDyn};
use reproject::engine::{reproject_interp, Options, Parallel, Plan};
use reproject::gpu::{gpu_info, Backend};
use reproject::interp::{NanPolicy, Order};
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

/// A celestial header: axis types, reference value and pixel, scale, extra cards.
fn header(
    ctype: (&str, &str),
    crval: (f64, f64),
    crpix: (f64, f64),
    cdelt: (f64, f64),
    extra: &str,
) -> String {
    format!(
        "CTYPE1  = '{}'\nCTYPE2  = '{}'\nCRVAL1  = {:?}\nCRVAL2  = {:?}\nCRPIX1  = {:?}\n\
         CRPIX2  = {:?}\nCDELT1  = {:?}\nCDELT2  = {:?}\n{extra}",
        ctype.0, ctype.1, crval.0, crval.1, crpix.0, crpix.1, cdelt.0, cdelt.1
    )
}

/// A smooth test image with some structure (and optionally NaN holes).
fn image(ny: usize, nx: usize, holes: bool) -> Array2<f64> {
    Array2::from_shape_fn((ny, nx), |(y, x)| {
        if holes && (y * 7 + x * 3) % 97 == 0 {
            return f64::NAN;
        }
        let (fy, fx) = (y as f64 / ny as f64, x as f64 / nx as f64);
        100.0 + 40.0 * (6.0 * fx).sin() * (4.0 * fy).cos() + 3.0 * (37.0 * fx * fy).sin() + x as f64
    })
}

/// The all-sky plate carrée input most cases use: 1 deg/px, 360 x 180.
fn allsky_input(frame: &str) -> (String, Array2<f64>) {
    let (lon, lat) = match frame {
        "galactic" => ("GLON-CAR", "GLAT-CAR"),
        _ => ("RA---CAR", "DEC--CAR"),
    };
    (
        header((lon, lat), (0.0, 0.0), (180.5, 90.5), (-1.0, 1.0), ""),
        image(180, 360, false),
    )
}

/// One parity case.
struct Case {
    name: String,
    input_header: String,
    input: Array2<f64>,
    output_header: String,
    shape: (usize, usize),
    order: Order,
    nan_policy: NanPolicy,
}

/// PV cards that the projections needing parameters get (typical WCSLIB test values).
fn pv(code: &str) -> &'static str {
    match code {
        "AZP" => "PV2_1   = 2.0\nPV2_2   = 30.0\n",
        "SZP" => "PV2_1   = 2.0\nPV2_2   = 180.0\nPV2_3   = 60.0\n",
        "ZPN" => "PV2_0   = 0.05\nPV2_1   = 0.975\nPV2_2   = -0.807\nPV2_3   = 0.337\n",
        "AIR" => "PV2_1   = 45.0\n",
        "CYP" => "PV2_1   = 1.0\nPV2_2   = 0.70710678118654752\n",
        "CEA" => "PV2_1   = 1.0\n",
        "COP" | "COE" | "COD" | "COO" => "PV2_1   = 45.0\nPV2_2   = 25.0\n",
        "BON" => "PV2_1   = 45.0\n",
        _ => "",
    }
}

const CODES: [&str; 27] = [
    "AZP", "SZP", "TAN", "STG", "SIN", "ARC", "ZPN", "ZEA", "AIR", "CYP", "CEA", "CAR", "MER",
    "SFL", "PAR", "MOL", "AIT", "COP", "COE", "COD", "COO", "BON", "PCO", "TSC", "CSC", "QSC",
    "HPX",
];

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Every projection family, as the output of an all-sky CAR input (bilinear), and the
    // zenithal/cylindrical ones as inputs too.
    for code in CODES {
        let (input_header, input) = allsky_input("icrs");
        let lon = format!("RA---{code}");
        let lat = format!("DEC--{code}");
        cases.push(Case {
            name: format!("CAR -> {code}"),
            input_header,
            input,
            output_header: header(
                (&lon, &lat),
                (30.0, 20.0),
                (48.5, 40.5),
                (-1.5, 1.5),
                pv(code),
            ),
            shape: (80, 96),
            order: Order::Bilinear,
            nan_policy: NanPolicy::Propagate,
        });
    }
    for code in ["TAN", "ZEA", "SIN", "AIT", "MOL", "HPX", "COE", "BON"] {
        let lon = format!("RA---{code}");
        let lat = format!("DEC--{code}");
        cases.push(Case {
            name: format!("{code} -> TAN"),
            input_header: header(
                (&lon, &lat),
                (30.0, 20.0),
                (60.5, 50.5),
                (-0.5, 0.5),
                pv(code),
            ),
            input: image(100, 120, false),
            output_header: header(
                ("RA---TAN", "DEC--TAN"),
                (31.0, 21.0),
                (40.5, 40.5),
                (-0.4, 0.4),
                "",
            ),
            shape: (80, 80),
            order: Order::Bilinear,
            nan_policy: NanPolicy::Propagate,
        });
    }
    // Orders 0-3 on the homography (TAN -> TAN, rotated) and on a general transform, with
    // NaN holes in the input, both NaN policies for orders 0-1.
    let tan_in = header(
        ("RA---TAN", "DEC--TAN"),
        (150.0, 2.0),
        (64.5, 64.5),
        (-0.01, 0.01),
        "",
    );
    let tan_out = header(
        ("RA---TAN", "DEC--TAN"),
        (150.05, 2.03),
        (60.5, 50.5),
        (-0.012, 0.012),
        "PC1_1   = 0.9659258262890683\nPC1_2   = -0.25881904510252074\n\
         PC2_1   = 0.25881904510252074\nPC2_2   = 0.9659258262890683\n",
    );
    let ait_out = header(
        ("RA---AIT", "DEC--AIT"),
        (150.0, 2.0),
        (50.5, 50.5),
        (-0.013, 0.013),
        "",
    );
    for (label, out) in [("TAN -> rotated TAN", &tan_out), ("TAN -> AIT", &ait_out)] {
        for order in Order::ALL {
            // NaN holes make a spline's whole output NaN (scipy's prefilter spreads them).
            for holes in [false, true] {
                if holes && order.needs_prefilter() {
                    continue;
                }
                let policies: &[NanPolicy] = if !holes {
                    &[NanPolicy::Propagate]
                } else {
                    &[NanPolicy::Propagate, NanPolicy::Renormalize]
                };
                for &nan_policy in policies {
                    cases.push(Case {
                        name: format!("{label}, {order:?}, holes {holes}, {nan_policy:?}"),
                        input_header: tan_in.clone(),
                        input: image(128, 128, holes),
                        output_header: out.clone(),
                        shape: (100, 120),
                        order,
                        nan_policy,
                    });
                }
            }
        }
    }
    // SIP (forward and reverse coefficients) and TPV.
    let sip = "CTYPE1  = 'RA---TAN-SIP'\nCTYPE2  = 'DEC--TAN-SIP'\nCRVAL1  = 150.0\n\
               CRVAL2  = 2.0\nCRPIX1  = 64.5\nCRPIX2  = 64.5\nCD1_1   = -0.01\nCD1_2   = 0.0002\n\
               CD2_1   = 0.0001\nCD2_2   = 0.01\nA_ORDER = 2\nA_0_2   = 2.0E-5\nA_1_1   = -1.5E-5\n\
               A_2_0   = 3.0E-5\nB_ORDER = 2\nB_0_2   = -2.5E-5\nB_1_1   = 1.0E-5\nB_2_0   = 1.2E-5\n";
    let sip_rev = format!(
        "{sip}AP_ORDER= 2\nAP_0_2  = -2.0E-5\nAP_1_1  = 1.5E-5\nAP_2_0  = -3.0E-5\nBP_ORDER= 2\n\
         BP_0_2  = 2.5E-5\nBP_1_1  = -1.0E-5\nBP_2_0  = -1.2E-5\n"
    );
    let tpv = "CTYPE1  = 'RA---TPV'\nCTYPE2  = 'DEC--TPV'\nCRVAL1  = 150.0\nCRVAL2  = 2.0\n\
               CRPIX1  = 64.5\nCRPIX2  = 64.5\nCD1_1   = -0.01\nCD1_2   = 0.0\nCD2_1   = 0.0\n\
               CD2_2   = 0.01\nPV1_1   = 1.0\nPV1_4   = 0.002\nPV1_7   = 0.001\nPV2_1   = 1.0\n\
               PV2_6   = -0.002\nPV2_9   = 0.0015\n";
    for (label, h) in [
        ("SIP", sip.to_string()),
        ("SIP with AP/BP", sip_rev),
        ("TPV", tpv.into()),
    ] {
        for order in [Order::Bilinear, Order::Bicubic] {
            cases.push(Case {
                name: format!("{label} -> rotated TAN, {order:?}"),
                input_header: h.clone(),
                input: image(128, 128, false),
                output_header: tan_out.clone(),
                shape: (100, 120),
                order,
                nan_policy: NanPolicy::Propagate,
            });
            cases.push(Case {
                name: format!("rotated TAN -> {label}, {order:?}"),
                input_header: tan_out.clone(),
                input: image(100, 120, false),
                output_header: h.clone(),
                shape: (128, 128),
                order,
                nan_policy: NanPolicy::Propagate,
            });
        }
    }
    // Frames: galactic CAR -> ICRS TAN, and ICRS -> FK5 J2000 / FK4 B1950 (no E-terms) /
    // ecliptic outputs.
    let (gal_header, gal) = allsky_input("galactic");
    cases.push(Case {
        name: "galactic CAR -> ICRS TAN".into(),
        input_header: gal_header,
        input: gal,
        output_header: header(
            ("RA---TAN", "DEC--TAN"),
            (266.4, -28.9),
            (50.5, 50.5),
            (-0.5, 0.5),
            "",
        ),
        shape: (100, 100),
        order: Order::Bilinear,
        nan_policy: NanPolicy::Propagate,
    });
    for (label, ctype, extra) in [
        (
            "FK5 J2000",
            ("RA---SIN", "DEC--SIN"),
            "RADESYS = 'FK5'\nEQUINOX = 2000.0\n",
        ),
        (
            "FK4 B1950 no E-terms",
            ("RA---ZEA", "DEC--ZEA"),
            "RADESYS = 'FK4-NO-E'\nEQUINOX = 1950.0\n",
        ),
        ("ecliptic", ("ELON-ARC", "ELAT-ARC"), ""),
        ("galactic", ("GLON-AIT", "GLAT-AIT"), ""),
    ] {
        let (input_header, input) = allsky_input("icrs");
        cases.push(Case {
            name: format!("ICRS CAR -> {label}"),
            input_header,
            input,
            output_header: header(ctype, (60.0, -30.0), (48.5, 40.5), (-1.0, 1.0), extra),
            shape: (80, 96),
            order: Order::Bilinear,
            nan_policy: NanPolicy::Propagate,
        });
    }
    cases
}

/// Runs one case on `backend`, with the output grid shifted by `shift` pixels.
fn run(
    case: &Case,
    backend: Backend,
    shift: (f64, f64),
) -> reproject::Result<(ArrayD<f64>, ArrayD<f64>)> {
    let wcs_in = Wcs::from_header_str(&case.input_header)?;
    let out_header = if shift == (0.0, 0.0) {
        case.output_header.clone()
    } else {
        shifted(&case.output_header, shift)
    };
    let wcs_out = Wcs::from_header_str(&out_header)?;
    let source = ArraySource::new(case.input.view().into_dyn())?;
    let options = case_options(case, backend);
    let shape = [case.shape.0, case.shape.1];
    let first = reproject_interp(&source, &wcs_in, &wcs_out, &shape, &options)?;
    if backend != Backend::Cuda {
        return Ok(first);
    }
    // On a machine that has not compiled the plan's kernel variant yet, the first run
    // launched the general kernel while the variant compiled; the second runs the variant.
    // Both builds must give the same bits.
    reproject::gpu::wait_for_compilations();
    let second = reproject_interp(&source, &wcs_in, &wcs_out, &shape, &options)?;
    assert!(
        bits(&first.0) == bits(&second.0) && bits(&first.1) == bits(&second.1),
        "{}: a second run (the plan's kernel variant compiled by then) gives other bits",
        case.name
    );
    Ok(second)
}

/// The options of `case` on `backend`.
fn case_options(case: &Case, backend: Backend) -> Options {
    Options {
        order: case.order,
        nan_policy: case.nan_policy,
        backend,
        ..Options::default()
    }
}

/// The values' bits, every NaN alike.
fn bits(a: &ArrayD<f64>) -> Vec<u64> {
    a.iter()
        .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
        .collect()
}

/// The header with CRPIX moved by `shift` (x, y) pixels.
fn shifted(header: &str, (dx, dy): (f64, f64)) -> String {
    header
        .lines()
        .map(|l| {
            for (key, d) in [("CRPIX1", dx), ("CRPIX2", dy)] {
                if l.starts_with(key) {
                    let v: f64 = l.split('=').nth(1).unwrap().trim().parse().unwrap();
                    return format!("{key:<8}= {:?}", v + d);
                }
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn gpu_or_skip(test: &str) -> bool {
    match gpu_info() {
        Ok(info) => {
            eprintln!("{test}: GPU {info}");
            true
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: no usable GPU ({e})");
            false
        }
    }
}

/// Sets off the compilation of every case's kernel variant at once (a plan's executor starts
/// it in the background when the variant is not compiled yet), so that a fresh GPU machine
/// compiles them on all its cores instead of one after the other as the cases run.
fn start_compiling_the_variants_of<'a>(cases: impl IntoIterator<Item = &'a Case>) {
    for case in cases {
        let (Ok(wcs_in), Ok(wcs_out)) = (
            Wcs::from_header_str(&case.input_header),
            Wcs::from_header_str(&case.output_header),
        ) else {
            continue;
        };
        let Ok(source) = ArraySource::new(case.input.view().into_dyn()) else {
            continue;
        };
        let options = case_options(case, Backend::Cuda);
        let shape = [case.shape.0, case.shape.1];
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &shape, &options);
        if let Ok(plan) = &plan {
            let _ = plan.executor();
        }
    }
}

/// Compares a GPU result with the CPU's; returns a description of the problems, if any.
fn compare(
    case: &Case,
    gpu: &(ArrayD<f64>, ArrayD<f64>),
    cpu: &(ArrayD<f64>, ArrayD<f64>),
) -> Option<String> {
    let mut worst_rel = 0.0f64;
    let mut bad_values = 0usize;
    let mut fp_mismatch = Vec::new();
    for (i, ((g, c), (gf, cf))) in gpu
        .0
        .iter()
        .zip(cpu.0.iter())
        .zip(gpu.1.iter().zip(cpu.1.iter()))
        .enumerate()
    {
        if gf != cf {
            fp_mismatch.push(i);
            continue;
        }
        if *cf == 1.0 {
            let rel = (g - c).abs() / c.abs().max(1e-300);
            let within = rel <= 1e-9 || (g.is_nan() && c.is_nan());
            if !within {
                bad_values += 1;
            }
            if rel.is_finite() {
                worst_rel = worst_rel.max(rel);
            }
        }
    }
    // Footprint differences are allowed only where the CPU itself flips under a 1e-9 px move.
    let mut unexplained = 0usize;
    if !fp_mismatch.is_empty() {
        let shifts = [(1e-9, 0.0), (-1e-9, 0.0), (0.0, 1e-9), (0.0, -1e-9)];
        let moved: Vec<_> = shifts
            .iter()
            .filter_map(|&s| run(case, Backend::Cpu, s).ok())
            .collect();
        for &i in &fp_mismatch {
            let g = gpu.1.as_slice().unwrap()[i];
            if !moved.iter().any(|m| m.1.as_slice().unwrap()[i] == g) {
                unexplained += 1;
            }
        }
    }
    eprintln!(
        "  {:<50} max rel {:.2e}, footprint differences {} ({} not at a boundary)",
        case.name,
        worst_rel,
        fp_mismatch.len(),
        unexplained
    );
    (bad_values > 0 || unexplained > 0).then(|| {
        format!(
            "{}: {bad_values} values beyond 1e-9 relative (max {worst_rel:.3e}), {unexplained} \
             footprint differences away from boundaries",
            case.name
        )
    })
}

#[test]
fn gpu_matches_cpu_on_every_family_frame_distortion_and_order() {
    if !gpu_or_skip("gpu_matches_cpu_on_every_family_frame_distortion_and_order") {
        return;
    }
    let mut failures = Vec::new();
    let cases = cases();
    start_compiling_the_variants_of(&cases);
    for case in &cases {
        let cpu = match run(case, Backend::Cpu, (0.0, 0.0)) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: the CPU fails: {e}", case.name));
                continue;
            }
        };
        match run(case, Backend::Cuda, (0.0, 0.0)) {
            Ok(gpu) => failures.extend(compare(case, &gpu, &cpu)),
            Err(e) => failures.push(format!("{}: the GPU fails: {e}", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn float32_outputs_and_small_blocks_match() {
    if !gpu_or_skip("float32_outputs_and_small_blocks_match") {
        return;
    }
    let case = &cases()[2]; // CAR -> TAN
    let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
    let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
    let source = ArraySource::new(case.input.view().into_dyn()).unwrap();
    let mut results = Vec::new();
    for backend in [Backend::Cpu, Backend::Cuda] {
        let options = Options {
            backend,
            block_size: Some((17, 23)),
            ..Options::default()
        };
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &[80, 96], &options).unwrap();
        let mut data = ArrayD::<f32>::zeros(IxDyn(&[80, 96]));
        let mut footprint = data.clone();
        plan.compute_into(data.view_mut(), footprint.view_mut())
            .unwrap();
        results.push((data, footprint));
    }
    let (cpu, gpu) = (&results[0], &results[1]);
    assert_eq!(cpu.1, gpu.1, "float32 footprints differ");
    for (c, g) in cpu.0.iter().zip(gpu.0.iter()) {
        assert!(
            c == g || (c.is_nan() && g.is_nan()) || ((c - g) / c).abs() <= 1e-7,
            "{c} vs {g}"
        );
    }
}

#[test]
fn auto_gives_the_cpu_result_and_cuda_errors_without_a_gpu() {
    let (input_header, input) = allsky_input("icrs");
    let wcs_in = Wcs::from_header_str(&input_header).unwrap();
    let wcs_out = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        (30.0, 20.0),
        (20.5, 20.5),
        (-1.0, 1.0),
        "",
    ))
    .unwrap();
    let source = ArraySource::new(input.view().into_dyn()).unwrap();
    let run = |backend| {
        let options = Options {
            backend,
            ..Options::default()
        };
        reproject_interp(&source, &wcs_in, &wcs_out, &[40, 40], &options)
    };
    let cpu = run(Backend::Cpu).unwrap();
    let auto = run(Backend::Auto).unwrap();
    assert_eq!(cpu.1, auto.1);
    for (a, b) in cpu.0.iter().zip(auto.0.iter()) {
        assert!(a == b || (a.is_nan() && b.is_nan()) || ((a - b) / a).abs() <= 1e-9);
    }
    match gpu_info() {
        Ok(_) => assert!(run(Backend::Cuda).is_ok()),
        Err(_) => assert!(matches!(
            run(Backend::Cuda),
            Err(reproject::Error::GpuUnavailable(_))
        )),
    }
}

/// Runs here too: every case is a valid job for the CPU and covers part of its output, so the
/// suite compares something on a GPU machine.
/// `Auto` asks the cost model: a small job stays on the CPU (the GPU is not even opened), a
/// large one goes to the GPU when there is one and this process has it open (the executor is
/// chosen without computing). Four CPU threads, so that the CPU's side of the estimate does not
/// depend on the machine.
#[test]
fn auto_sends_small_jobs_to_the_cpu_and_large_ones_to_the_gpu() {
    let wcs = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        (30.0, 20.0),
        (20.5, 20.5),
        (-0.001, 0.001),
        "",
    ))
    .unwrap();
    let input = Array2::<f32>::zeros((64, 64));
    let source = ArraySource::new(input.view().into_dyn()).unwrap();
    let options = Options {
        backend: Backend::Auto,
        parallel: Parallel::Threads(4),
        ..Options::default()
    };
    let small = Plan::new(&source, &wcs, &wcs, &[64, 64], &options).unwrap();
    assert!(
        !small.cost_estimate().prefers_gpu(),
        "{}",
        small.cost_estimate()
    );
    assert_eq!(small.executor().unwrap().name(), "cpu");
    let large = Plan::new(&source, &wcs, &wcs, &[8192, 8192], &options).unwrap();
    // gpu_info opens the GPU when there is one (as `warmup` does).
    match gpu_info() {
        Ok(_) => {
            let estimate = large.cost_estimate();
            assert!(estimate.prefers_gpu(), "{estimate}");
            assert_eq!(large.executor().unwrap().name(), "cuda:0");
        }
        Err(_) => assert_eq!(large.executor().unwrap().name(), "cpu"),
    }
}

#[test]
fn every_case_is_a_valid_cpu_job_with_coverage() {
    let cases = cases();
    let mut problems = Vec::new();
    for case in &cases {
        match run(case, Backend::Cpu, (0.0, 0.0)) {
            Ok((_, footprint)) => {
                let covered = footprint.iter().filter(|&&f| f == 1.0).count();
                if covered < footprint.len() / 20 {
                    problems.push(format!("{}: only {covered} pixels covered", case.name));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", case.name)),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(cases.len() > 60, "{} cases", cases.len());
}

/// Every way of running a plan computes on the GPU with the same bits as the GPU's eager run:
/// threads, block sizes, lazy block handles in a scrambled order, float32 blocks; and each is
/// the CPU's result within the parity tolerance. Covers TAN, non-homography pairs, SIP, frame
/// changes and orders 0-5 (a subset of the cases). Runs on the CUDA simulator in CI
/// (`REPROJECT_RS_CUDA_SIM=1`, see scripts/test.sh).
#[test]
fn every_path_computes_on_the_gpu_with_the_same_bits() {
    use reproject::engine::lazy::LazyReprojection;
    use reproject::engine::Parallel;
    use reproject::io::ImageSource;
    if !gpu_or_skip("every_path_computes_on_the_gpu_with_the_same_bits") {
        return;
    }
    let all = cases();
    let picked: Vec<&Case> = all
        .iter()
        .filter(|c| {
            ["CAR -> TAN", "CAR -> AIT", "TAN -> TAN", "SIP"]
                .iter()
                .any(|n| c.name.starts_with(n))
                || c.name.contains("galactic")
                || c.order != Order::Bilinear
        })
        .collect();
    start_compiling_the_variants_of(picked.iter().copied());
    assert!(picked.len() >= 8, "{} cases picked", picked.len());
    let mut failures = Vec::new();
    for case in picked {
        let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
        let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
        let source = std::sync::Arc::new(ArraySource::new(case.input.view().into_dyn()).unwrap());
        let shape = [case.shape.0, case.shape.1];
        let options = |parallel, block_size| Options {
            parallel,
            block_size,
            ..case_options(case, Backend::Cuda)
        };
        let eager = |o: &Options| {
            let plan = Plan::new(source.as_ref(), &wcs_in, &wcs_out, &shape, o).unwrap();
            let mut data = ArrayD::<f64>::zeros(IxDyn(&shape));
            let mut footprint = data.clone();
            plan.compute_into(data.view_mut(), footprint.view_mut())
                .unwrap();
            (data, footprint)
        };
        let reference = eager(&options(Parallel::Serial, None));
        let cpu = run(case, Backend::Cpu, (0.0, 0.0)).unwrap();
        failures.extend(compare(case, &reference, &cpu));
        let mut results = vec![
            (
                "2 threads, 17x23 blocks",
                eager(&options(Parallel::Threads(2), Some((17, 23)))),
            ),
            (
                "serial, 64x8 blocks",
                eager(&options(Parallel::Serial, Some((64, 8)))),
            ),
        ];
        let shared: std::sync::Arc<dyn ImageSource> = source.clone();
        let plan = Plan::with_shared_source(
            shared,
            &wcs_in,
            &wcs_out,
            &shape,
            &options(Parallel::Serial, Some((16, 20))),
        )
        .unwrap();
        let lazy = LazyReprojection::new(plan);
        let mut handles = lazy.blocks();
        let n = handles.len();
        handles.sort_by_key(|h| (h.index() * 7919) % n);
        let mut data = ndarray::Array3::<f64>::zeros((1, shape[0], shape[1]));
        let mut footprint = data.clone();
        for h in &handles {
            let b = h.block().clone();
            let s = ndarray::s![.., b.rows.clone(), b.cols.clone()];
            h.compute_into(data.slice_mut(s), footprint.slice_mut(s))
                .unwrap();
        }
        let to_d = |a: ndarray::Array3<f64>| a.into_shape_with_order(IxDyn(&shape)).unwrap();
        results.push(("lazy handles, scrambled", (to_d(data), to_d(footprint))));
        for (what, r) in &results {
            if bits(&r.0) != bits(&reference.0) || bits(&r.1) != bits(&reference.1) {
                failures.push(format!(
                    "{} ({what}): not the eager GPU result's bits",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Device-resident inputs and outputs (as CuPy arrays are): the whole output at once and block
/// by block (as the chunks of a dask array of CuPy arrays) give the same bits, and the host
/// path's values; bilinear reads the device input, orders 2-5 the coefficients made from it
/// on the device once (see also tests/gpu_device_spline.rs). Runs on the CUDA simulator in CI.
#[test]
fn device_resident_blocks_match_the_whole_and_the_host_path() {
    use reproject::engine::blocks::Block;
    use reproject::gpu::{DeviceBuffer, DeviceImage};
    use reproject::io::SampleType;
    if !gpu_or_skip("device_resident_blocks_match_the_whole_and_the_host_path") {
        return;
    }
    let case = &cases()[2]; // CAR -> TAN
    let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
    let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
    let input32 = case.input.mapv(|v| v as f32);
    let source = ArraySource::new(input32.view().into_dyn()).unwrap();
    let bytes: Vec<u8> = input32.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let d_input = DeviceBuffer::from_host(&bytes).unwrap();
    let (ny, nx) = case.shape;
    let image = DeviceImage {
        ptr: d_input.device_ptr(),
        sample: SampleType::F32,
        big_endian: false,
        pitch: input32.shape()[1],
    };
    let f64s = |b: &DeviceBuffer| -> Vec<f64> {
        b.to_host()
            .unwrap()
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    };
    for order in [
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ] {
        let options = Options {
            order,
            ..Options::default()
        };
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &[ny, nx], &options).unwrap();
        let (data, footprint) = (
            DeviceBuffer::zeros(ny * nx * 8).unwrap(),
            DeviceBuffer::zeros(ny * nx * 8).unwrap(),
        );
        // SAFETY: device buffers of the sizes described.
        unsafe {
            plan.compute_on_device(&image, data.device_ptr(), footprint.device_ptr(), true)
                .unwrap()
        };
        let whole = (f64s(&data), f64s(&footprint));
        let mut blocks = (vec![0.0; ny * nx], vec![0.0; ny * nx]);
        for rows in [0..30, 30..ny] {
            for cols in [0..41, 41..nx] {
                let block = Block {
                    rows: rows.clone(),
                    cols: cols.clone(),
                };
                let n = block.len();
                let (d, f) = (
                    DeviceBuffer::zeros(n * 8).unwrap(),
                    DeviceBuffer::zeros(n * 8).unwrap(),
                );
                // SAFETY: as above, sized for the block.
                unsafe {
                    plan.compute_block_on_device(
                        &block,
                        &image,
                        d.device_ptr(),
                        f.device_ptr(),
                        true,
                    )
                    .unwrap()
                };
                let (vd, vf) = (f64s(&d), f64s(&f));
                for (r, y) in rows.clone().enumerate() {
                    for (c, x) in cols.clone().enumerate() {
                        blocks.0[y * nx + x] = vd[r * cols.len() + c];
                        blocks.1[y * nx + x] = vf[r * cols.len() + c];
                    }
                }
            }
        }
        let bits = |v: &[f64]| -> Vec<u64> {
            v.iter()
                .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
                .collect()
        };
        assert_eq!(bits(&blocks.0), bits(&whole.0), "{order:?}: block values");
        assert_eq!(
            bits(&blocks.1),
            bits(&whole.1),
            "{order:?}: block footprints"
        );
        let host = reproject_interp(&source, &wcs_in, &wcs_out, &[ny, nx], &options).unwrap();
        let device = (
            ArrayD::from_shape_vec(IxDyn(&[ny, nx]), whole.0).unwrap(),
            ArrayD::from_shape_vec(IxDyn(&[ny, nx]), whole.1).unwrap(),
        );
        let named = Case {
            name: format!("device-resident {order:?}"),
            input_header: case.input_header.clone(),
            input: case.input.clone(),
            output_header: case.output_header.clone(),
            shape: case.shape,
            order,
            nan_policy: case.nan_policy,
        };
        assert!(
            compare(&named, &device, &host).is_none(),
            "{order:?}: device vs host"
        );
    }
}

/// An output taller than one launch's grid may be (65,535 thread blocks of 8 rows along y):
/// the device-resident whole-output call launches bands of rows, with the CPU's bits. The
/// simulator refuses oversized grids as CUDA does, so CI checks it too.
#[test]
fn outputs_taller_than_one_grid_launch_in_bands() {
    use reproject::gpu::{DeviceBuffer, DeviceImage};
    use reproject::io::SampleType;
    if !gpu_or_skip("outputs_taller_than_one_grid_launch_in_bands") {
        return;
    }
    let input = image(40, 48, false);
    let wcs_in = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        (150.0, 30.0),
        (24.5, 20.5),
        (-0.01, 0.01),
        "",
    ))
    .unwrap();
    // 530,000 rows of 2 columns, of which the input covers a few dozen.
    let (ny, nx) = (530_000, 2);
    let wcs_out = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        (150.0, 30.0),
        (1.5, 265_000.0),
        (-0.01, 0.0001),
        "",
    ))
    .unwrap();
    let source = ArraySource::new(input.view().into_dyn()).unwrap();
    let plan = Plan::new(&source, &wcs_in, &wcs_out, &[ny, nx], &Options::default()).unwrap();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let d_input = DeviceBuffer::from_host(&bytes).unwrap();
    let image = DeviceImage {
        ptr: d_input.device_ptr(),
        sample: SampleType::F64,
        big_endian: false,
        pitch: 48,
    };
    let (data, footprint) = (
        DeviceBuffer::zeros(ny * nx * 8).unwrap(),
        DeviceBuffer::zeros(ny * nx * 8).unwrap(),
    );
    // SAFETY: device buffers of the sizes described.
    unsafe {
        plan.compute_on_device(&image, data.device_ptr(), footprint.device_ptr(), true)
            .unwrap()
    };
    let f64s = |b: &DeviceBuffer| -> Vec<f64> {
        b.to_host()
            .unwrap()
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (values, covered) = (f64s(&data), f64s(&footprint));
    let (want, want_fp) =
        reproject_interp(&source, &wcs_in, &wcs_out, &[ny, nx], &Options::default()).unwrap();
    let bits = |v: &[f64]| -> Vec<u64> {
        v.iter()
            .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
            .collect()
    };
    assert!(
        want_fp.iter().filter(|&&f| f > 0.0).count() > 50,
        "the input is not seen"
    );
    assert_eq!(covered, want_fp.as_slice().unwrap(), "footprints");
    let close = values
        .iter()
        .zip(want.iter())
        .all(|(a, b)| (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * b.abs());
    assert!(close, "values beyond 1e-9 of the CPU's");
    if gpu_info().is_ok_and(|i| i.name.contains("simulator")) {
        assert_eq!(
            bits(&values),
            bits(want.as_slice().unwrap()),
            "the simulator's bits"
        );
    }
}

/// Mosaics reproject their inputs on the GPU when the options ask for it (each input's plan
/// runs on the CUDA executor), with the CPU's values within the parity tolerance. Runs on the
/// CUDA simulator in CI.
#[test]
fn mosaics_reproject_their_inputs_on_the_gpu() {
    use reproject::mosaic::coadd::{reproject_and_coadd, Background, MosaicInput, MosaicOptions};
    if !gpu_or_skip("mosaics_reproject_their_inputs_on_the_gpu") {
        return;
    }
    let all = cases();
    let case = &all[2]; // CAR -> TAN
    let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
    let shifted_in: Vec<String> = [(0.0, 0.0), (6.0, -4.0), (-5.0, 3.0)]
        .iter()
        .map(|&d| shifted(&case.input_header, d))
        .collect();
    let wcss: Vec<Wcs> = shifted_in
        .iter()
        .map(|h| Wcs::from_header_str(h).unwrap())
        .collect();
    let images: Vec<Array2<f64>> = (0..3).map(|k| case.input.mapv(|v| v + k as f64)).collect();
    let sources: Vec<ArraySource<f64>> = images
        .iter()
        .map(|i| ArraySource::new(i.view().into_dyn()).unwrap())
        .collect();
    let inputs: Vec<MosaicInput> = sources
        .iter()
        .zip(&wcss)
        .map(|(s, w)| MosaicInput::new(s, w))
        .collect();
    let run = |backend| {
        let options = MosaicOptions {
            background: Background::Offset,
            reprojection: Options {
                backend,
                ..Options::default()
            },
            ..MosaicOptions::default()
        };
        reproject_and_coadd(&inputs, &wcs_out, &[case.shape.0, case.shape.1], &options).unwrap()
    };
    let (cpu, gpu) = (run(Backend::Cpu), run(Backend::Cuda));
    assert_eq!(cpu.footprint, gpu.footprint);
    for (a, b) in cpu.data.iter().zip(gpu.data.iter()) {
        assert!(
            a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0),
            "{a} vs {b}"
        );
    }
    assert!(cpu.footprint.iter().any(|&f| f == 3.0));
}

/// The kernels specialised per plan: a homography plan (TAN -> rotated TAN, every order and
/// NaN policy of the cases) launches the homography variant of its order and input type, a
/// plan through the sky (CAR -> AIT, one frame; SIP -> TAN) the sky variant of its projection
/// pair, with the CPU's values within the parity tolerance; a TPV one the general kernel. The plans run on a simulated device of their own (whose
/// records no other test shares) whenever the GPU backend is in use (the simulator in CI).
#[test]
fn plans_launch_the_variant_of_their_key() {
    use reproject::engine::kernel_variant::{
        KernelVariant, VariantInput, VariantNan, VariantOutput,
    };
    use reproject::engine::CudaExecutor;
    use reproject::gpu::driver::Driver;
    use reproject::gpu::sim::{SimConfig, SimDriver};
    use reproject::wcs::projection::ProjectionCode;
    use std::sync::Arc;
    if !gpu_or_skip("plans_launch_the_variant_of_their_key") {
        return;
    }
    let all = cases();
    let tan: Vec<&Case> = all
        .iter()
        .filter(|c| c.name.starts_with("TAN -> rotated TAN"))
        .collect();
    let ait = all.iter().find(|c| c.name == "CAR -> AIT").unwrap();
    let sip = all.iter().find(|c| c.name.starts_with("SIP")).unwrap();
    let tpv = all.iter().find(|c| c.name.starts_with("TPV")).unwrap();
    assert!(tan.len() >= 6, "{} TAN -> rotated TAN cases", tan.len());
    let mut failures = Vec::new();
    for case in tan.into_iter().chain([ait, sip, tpv]) {
        let sim = Arc::new(SimDriver::new(SimConfig::default()));
        let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
        let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
        let source = ArraySource::new(case.input.view().into_dyn()).unwrap();
        let shape = [case.shape.0, case.shape.1];
        let options = case_options(case, Backend::Cuda);
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &shape, &options).unwrap();
        let executor = CudaExecutor::new(&plan, vec![sim.clone() as Arc<dyn Driver>]).unwrap();
        let plan = plan.with_executor(Arc::new(executor));
        let mut data = ArrayD::<f64>::zeros(IxDyn(&shape));
        let mut footprint = data.clone();
        plan.compute_into(data.view_mut(), footprint.view_mut())
            .unwrap();
        let cpu = run(case, Backend::Cpu, (0.0, 0.0)).unwrap();
        failures.extend(compare(case, &(data, footprint), &cpu));
        let order = Order::ALL.iter().position(|&o| o == case.order).unwrap() as u8;
        // A float64 input (spline coefficients for orders 2 and 3: float64 too).
        let input = VariantInput::F64;
        let want = if case.name.starts_with("TAN") {
            KernelVariant::Homography {
                order,
                input,
                // Float64 outputs; the output type and the NaN policy keyed for orders 0 and 1.
                output: match order {
                    0 | 1 => VariantOutput::F64,
                    _ => VariantOutput::Any,
                },
                nan: match (order, case.nan_policy) {
                    (1, NanPolicy::Propagate) => VariantNan::Propagate,
                    (1, NanPolicy::Renormalize) => VariantNan::Renormalize,
                    _ => VariantNan::Any,
                },
            }
        } else if case.name.starts_with("CAR") {
            // AIT from CAR.
            KernelVariant::Sky {
                out_prj: ProjectionCode::Ait as u8,
                in_prj: ProjectionCode::Car as u8,
                frame: false,
                sip: false,
                order,
                input,
            }
        } else if case.name.starts_with("SIP") {
            // TAN from TAN-SIP.
            KernelVariant::Sky {
                out_prj: ProjectionCode::Tan as u8,
                in_prj: ProjectionCode::Tan as u8,
                frame: false,
                sip: true,
                order,
                input,
            }
        } else {
            KernelVariant::General
        };
        let launched = sim.launched_variants();
        assert!(!launched.is_empty(), "{}: nothing launched", case.name);
        for v in launched {
            assert_eq!(v, want.defines(), "{}", case.name);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

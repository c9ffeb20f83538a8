//! Spline coefficients that do not fit in memory go to a memory-mapped scratch file
//! (src/engine/coefficients.rs). `REPROJECT_RS_SPLINE_MEMORY=0` sends every plan there; the
//! results must be bit-identical to the in-memory ones, for both NaN policies and for a cube.
//! One test function, so that the environment variable is never changed under another test.

use ndarray::{Array2, Array3, ArrayD};
use reproject::engine::{Options, Plan};
use reproject::interp::{NanPolicy, Order};
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

fn wcs(code: &str, crval: (f64, f64), cdelt: f64) -> Wcs {
    Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---{code}'\nCTYPE2 = 'DEC--{code}'\nCRPIX1 = 30\nCRPIX2 = 25\n\
         CRVAL1 = {}\nCRVAL2 = {}\nCDELT1 = -{cdelt}\nCDELT2 = {cdelt}\n",
        crval.0, crval.1
    ))
    .unwrap()
}

fn run(image: &ArrayD<f64>, order: Order, nan_policy: NanPolicy) -> (ArrayD<f64>, bool) {
    let source = ArraySource::new(image.view()).unwrap();
    let (wcs_in, wcs_out) = (
        wcs("TAN", (150.0, 30.0), 0.01),
        wcs("SIN", (150.01, 30.02), 0.012),
    );
    let n = image.ndim();
    let mut shape = image.shape().to_vec();
    shape[n - 2] = 40;
    shape[n - 1] = 45;
    let options = Options {
        order,
        nan_policy,
        ..Options::default()
    };
    let plan = Plan::new(&source, &wcs_in, &wcs_out, &shape, &options).unwrap();
    let (mut data, mut footprint) = (ArrayD::zeros(shape.clone()), ArrayD::zeros(shape));
    plan.compute_into(data.view_mut(), footprint.view_mut())
        .unwrap();
    (data, plan.spline_in_scratch_file())
}

/// Sets (or, given `None`, removes) an environment variable the plans read.
fn set_env(name: &str, value: Option<&str>) {
    // SAFETY: only the binary's one test calls this; plans read these variables on its
    // thread, and the engine's worker threads read no environment.
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
}

#[test]
fn scratch_file_coefficients_equal_in_memory_ones() {
    let plane = Array2::from_shape_fn((50, 60), |(y, x)| {
        if (y, x) == (20, 31) {
            f64::NAN
        } else {
            ((x as f64) * 0.3).sin() + ((y as f64) * 0.2).cos() * 2.0
        }
    });
    // One NaN pixel: Renormalize fills around it; under Propagate it would blank the plane.
    let clean = plane.mapv(|v| if v.is_nan() { 0.5 } else { v });
    let cube = Array3::from_shape_fn((3, 50, 60), |(p, y, x)| clean[[y, x]] * (p as f64 + 1.0));
    let cases = [
        (clean.into_dyn(), Order::Bicubic, NanPolicy::Propagate),
        (
            plane.clone().into_dyn(),
            Order::Biquadratic,
            NanPolicy::Renormalize,
        ),
        (cube.into_dyn(), Order::Bicubic, NanPolicy::Propagate),
    ];
    set_env("REPROJECT_RS_SPLINE_MEMORY", None);
    let in_memory: Vec<_> = cases.iter().map(|(i, o, p)| run(i, *o, *p)).collect();
    set_env("REPROJECT_RS_SPLINE_MEMORY", Some("0"));
    let in_file: Vec<_> = cases.iter().map(|(i, o, p)| run(i, *o, *p)).collect();
    set_env("REPROJECT_RS_SPLINE_MEMORY", None);
    for ((mem, file), (_, order, policy)) in in_memory.iter().zip(&in_file).zip(&cases) {
        assert!(
            !mem.1 && file.1,
            "{order:?} {policy:?}: placement not as asked"
        );
        let same = mem
            .0
            .iter()
            .zip(file.0.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{order:?} {policy:?}: results differ");
        let valid = mem.0.iter().filter(|v| !v.is_nan()).count();
        assert!(
            valid > mem.0.len() / 2,
            "{order:?} {policy:?}: {valid} of {} valid",
            mem.0.len()
        );
    }

    // A scratch folder that does not exist: a clear error from Plan::new, not a crash.
    set_env("REPROJECT_RS_SPLINE_MEMORY", Some("0"));
    set_env("REPROJECT_RS_SCRATCH_DIR", Some("/nonexistent/scratch"));
    let source = ArraySource::new(plane.view().into_dyn()).unwrap();
    let w = wcs("TAN", (150.0, 30.0), 0.01);
    let options = Options {
        order: Order::Bicubic,
        ..Options::default()
    };
    let err = Plan::new(&source, &w, &w, &[50, 60], &options)
        .err()
        .unwrap();
    set_env("REPROJECT_RS_SPLINE_MEMORY", None);
    set_env("REPROJECT_RS_SCRATCH_DIR", None);
    assert!(err.to_string().contains("scratch file"), "{err}");
}

//! Lazy block handles and serialised plans give results bit-identical to the eager call.

use std::sync::Arc;

use ndarray::{s, Array3, ArrayD, IxDyn};
use reproject::engine::lazy::{InputSpec, LazyReprojection, ReprojectPlan};
use reproject::engine::{reproject_interp, Options, Parallel, Plan};
use reproject::interp::Order;
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

fn wcs(code: &str, frame: (&str, &str), lon: f64, lat: f64, scale: f64, rot: f64) -> Wcs {
    let (sn, cs) = rot.to_radians().sin_cos();
    let (lng_axis, lat_axis) = (
        format!("{:-<5}{code}", frame.0),
        format!("{:-<5}{code}", frame.1),
    );
    Wcs::from_header_str(&format!(
        "CTYPE1 = '{lng_axis}'\nCTYPE2 = '{lat_axis}'\nCRPIX1 = 40.5\nCRPIX2 = 30.5\n\
         CRVAL1 = {lon}\nCRVAL2 = {lat}\nCDELT1 = {}\nCDELT2 = {scale}\nPC1_1 = {cs}\n\
         PC1_2 = {}\nPC2_1 = {sn}\nPC2_2 = {cs}\n",
        -scale, -sn
    ))
    .unwrap()
}

fn image() -> Array3<f64> {
    Array3::from_shape_fn((2, 60, 80), |(p, y, x)| {
        ((x * 7 + y * 13 + p * 5) % 17) as f64 + 0.25 * p as f64
    })
}

/// Lazy blocks computed in a shuffled order, some twice, on several threads.
#[test]
fn lazy_blocks_in_any_order_match_the_eager_call() {
    let img = image();
    let source = Arc::new(ArraySource::new(img.view().into_dyn()).unwrap());
    let (wcs_in, wcs_out) = (
        wcs("CAR", ("GLON", "GLAT"), 0.0, 0.0, 0.01, 0.0),
        wcs("TAN", ("RA", "DEC"), 266.4, -28.94, 0.009, 20.0),
    );
    for order in [
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
    ] {
        let options = Options {
            order,
            block_size: Some((13, 17)),
            ..Options::default()
        };
        let (want, want_fp) =
            reproject_interp(source.as_ref(), &wcs_in, &wcs_out, &[50, 70], &options).unwrap();
        let lazy = LazyReprojection::new(
            Plan::with_shared_source(source.clone(), &wcs_in, &wcs_out, &[50, 70], &options)
                .unwrap(),
        );
        let mut handles = lazy.blocks();
        // A deterministic shuffle, and a few handles repeated.
        handles.sort_by_key(|h| (h.index() * 7919) % 101);
        let extra: Vec<_> = handles.iter().step_by(5).cloned().collect();
        handles.extend(extra);
        let results: Vec<_> = std::thread::scope(|scope| {
            let chunks: Vec<_> = handles.chunks(handles.len().div_ceil(3)).collect();
            let workers: Vec<_> = chunks
                .into_iter()
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .iter()
                            .map(|h| (h.block().clone(), h.compute().unwrap()))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let mut got = ArrayD::<f64>::from_elem(IxDyn(&[2, 50, 70]), -1.0);
        let mut got_fp = got.clone();
        for (block, (d, f)) in results {
            got.slice_mut(s![.., block.rows.clone(), block.cols.clone()])
                .assign(&d);
            got_fp
                .slice_mut(s![.., block.rows.clone(), block.cols.clone()])
                .assign(&f);
        }
        let same = |a: &ArrayD<f64>, b: &ArrayD<f64>| {
            a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        assert!(same(&got, &want), "{order:?}: data differ");
        assert!(same(&got_fp, &want_fp), "{order:?}: footprints differ");
        let (whole, whole_fp) = lazy.compute().unwrap();
        assert!(
            same(&whole, &want) && same(&whole_fp, &want_fp),
            "{order:?}: compute()"
        );
    }
}

/// A plan written to JSON and reopened (as another process would) computes the same image.
#[test]
fn serialised_plan_reopens_to_the_same_result() {
    let img = image();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("lazy_plan_input.npy");
    ndarray_npy::write_npy(&path, &img).unwrap();
    let (wcs_in, wcs_out) = (
        wcs("TAN", ("RA", "DEC"), 150.0, 30.0, 0.01, 0.0),
        wcs("SIN", ("RA", "DEC"), 150.05, 30.02, 0.012, 33.0),
    );
    let options = Options {
        order: Order::Bicubic,
        parallel: Parallel::Threads(2),
        ..Options::default()
    };
    let plan = ReprojectPlan {
        input: InputSpec::Npy { path: path.clone() },
        wcs_in: Some(wcs_in.clone()),
        wcs_out: wcs_out.clone(),
        shape_out: vec![45, 55],
        options: options.clone(),
    };
    let json = plan.to_json().unwrap();
    let reopened = ReprojectPlan::from_json(&json).unwrap();
    assert_eq!(reopened, plan);
    let lazy = LazyReprojection::new(reopened.open().unwrap());
    let (got, got_fp) = lazy.compute().unwrap();
    let source = ArraySource::new(img.view().into_dyn()).unwrap();
    let (want, want_fp) =
        reproject_interp(&source, &wcs_in, &wcs_out, &[45, 55], &options).unwrap();
    assert!(got
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(got_fp
        .iter()
        .zip(&want_fp)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    // A .npy input has no header: the plan must carry its WCS.
    let mut headless = plan.clone();
    headless.wcs_in = None;
    assert!(headless.open().is_err());
    std::fs::remove_file(&path).unwrap();
    assert!(plan.open().is_err(), "a missing input file is an error");
}

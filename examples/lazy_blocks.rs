//! Lazy reprojection: compute only the blocks you look at, in any order, on any thread, and
//! ship the plan to another process as JSON.
//!
//! Run with `cargo run --release --example lazy_blocks`.

use std::sync::Arc;

use ndarray::Array2;
use reproject::engine::lazy::{InputSpec, LazyReprojection, ReprojectPlan};
use reproject::engine::{Options, Plan};
use reproject::io::ArraySource;
use reproject::wcs::Wcs;

fn main() -> reproject::Result<()> {
    let tan = |ra: f64, rot: f64| {
        let (s, c) = rot.to_radians().sin_cos();
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 512.5\nCRPIX2 = 512.5\n\
             CRVAL1 = {ra}\nCRVAL2 = 20\nCDELT1 = -0.0005\nCDELT2 = 0.0005\nPC1_1 = {c}\n\
             PC1_2 = {}\nPC2_1 = {s}\nPC2_2 = {c}\n",
            -s
        ))
    };
    let (wcs_in, wcs_out) = (tan(150.0, 0.0)?, tan(150.05, 30.0)?);
    let image = Array2::from_shape_fn((1024, 1024), |(y, x)| ((x / 32 + y / 32) % 2) as f32);
    let source = Arc::new(ArraySource::new(image.view().into_dyn())?);
    let options = Options {
        order: "bicubic".parse()?,
        block_size: Some((256, 256)),
        ..Options::default()
    };
    // The spline coefficients are computed once, here; every block shares them.
    let plan = Plan::with_shared_source(source, &wcs_in, &wcs_out, &[1024, 1024], &options)?;
    let lazy = LazyReprojection::new(plan);
    let handles = lazy.blocks();
    println!("{} blocks of 256x256", handles.len());

    // Only the blocks along the diagonal, from the last to the first, two threads.
    let diagonal: Vec<_> = handles
        .iter()
        .filter(|h| h.block().rows.start == h.block().cols.start)
        .rev()
        .cloned()
        .collect();
    std::thread::scope(|scope| {
        for part in diagonal.chunks(2) {
            scope.spawn(move || {
                for h in part {
                    let (data, footprint) = h.compute().expect("block");
                    let covered = footprint.iter().filter(|&&f| f > 0.0).count();
                    println!(
                        "block {:>2} rows {:?} cols {:?}: {covered} pixels covered, mean {:.4}",
                        h.index(),
                        h.block().rows,
                        h.block().cols,
                        data.iter().filter(|v| v.is_finite()).sum::<f64>() / covered.max(1) as f64
                    );
                }
            });
        }
    });

    // A plan is data: another process can reopen it (its input must be a file it can read).
    let plan = ReprojectPlan {
        input: InputSpec::Npy {
            path: "input.npy".into(),
        },
        wcs_in: Some(wcs_in),
        wcs_out,
        shape_out: vec![1024, 1024],
        options,
    };
    let json = plan.to_json()?;
    println!("the plan as JSON: {} bytes", json.len());
    assert_eq!(ReprojectPlan::from_json(&json)?, plan);
    Ok(())
}

//! The scheduler (`engine::schedule::run`): every block once, progress per block, cancellation
//! that keeps the blocks already written and skips the rest.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use ndarray::{Array2, Array3};
use reproject::engine::schedule::{run, Schedule};
use reproject::engine::{Options, Parallel, Plan};
use reproject::io::ArraySource;
use reproject::wcs::Wcs;
use reproject::Error;

fn wcs(crpix: f64) -> Wcs {
    Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 20\nCRVAL1 = 150\n\
         CRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n"
    ))
    .unwrap()
}

#[test]
fn progress_reports_every_block_once_on_any_number_of_threads() {
    let image = Array2::from_shape_fn((40, 50), |(y, x)| (y * 50 + x) as f64);
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    for parallel in [Parallel::Serial, Parallel::Threads(3)] {
        let options = Options {
            block_size: Some((7, 11)),
            parallel,
            ..Options::default()
        };
        let plan = Plan::new(&source, &wcs(25.0), &wcs(24.0), &[40, 50], &options).unwrap();
        let seen = Mutex::new(Vec::new());
        let progress = |i: usize| seen.lock().unwrap().push(i);
        let schedule = Schedule {
            progress: Some(&progress),
            ..Schedule::default()
        };
        let (mut data, mut footprint) = (
            Array3::<f64>::zeros((1, 40, 50)),
            Array3::zeros((1, 40, 50)),
        );
        let n = run(&plan, data.view_mut(), footprint.view_mut(), &schedule).unwrap();
        assert_eq!(n, 6 * 5);
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
        assert!((data[[0, 10, 10]] - image[[10, 11]]).abs() < 1e-6);
    }
}

#[test]
fn cancellation_keeps_finished_blocks_and_skips_the_rest() {
    let image = Array2::from_elem((40, 50), 5.0);
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let options = Options {
        block_size: Some((10, 10)),
        ..Options::default()
    };
    let plan = Plan::new(&source, &wcs(25.0), &wcs(25.0), &[40, 50], &options).unwrap();
    let cancel = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let progress = |_: usize| {
        if done.fetch_add(1, Ordering::SeqCst) + 1 == 3 {
            cancel.store(true, Ordering::SeqCst);
        }
    };
    let schedule = Schedule {
        progress: Some(&progress),
        cancel: Some(&cancel),
        ..Schedule::default()
    };
    let (mut data, mut footprint) = (
        Array3::<f64>::zeros((1, 40, 50)),
        Array3::zeros((1, 40, 50)),
    );
    let r = run(&plan, data.view_mut(), footprint.view_mut(), &schedule);
    assert!(matches!(r, Err(Error::Cancelled(_))), "{r:?}");
    assert_eq!(done.load(Ordering::SeqCst), 3);
    // Serial, row-major: the first three blocks (rows 0..10, columns 0..30) are written.
    assert!(footprint
        .slice(ndarray::s![0, 0..10, 0..30])
        .iter()
        .all(|&f| f == 1.0));
    assert_eq!(data[[0, 5, 25]], 5.0);
    assert!(footprint
        .slice(ndarray::s![0, 0..10, 30..50])
        .iter()
        .all(|&f| f == 0.0));
    assert!(footprint
        .slice(ndarray::s![0, 10..40, ..])
        .iter()
        .all(|&f| f == 0.0));
}

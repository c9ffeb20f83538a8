//! Plans from given input positions (`Plan::from_positions`, the route for WCS this crate does
//! not evaluate, whose positions astropy computes): with the positions the WCS path computes,
//! every value and footprint is the WCS plan's, bit for bit, whatever the order, block size or
//! threads.

use ndarray::{Array2, Array3, ArrayD};
use reproject::engine::coords::CoordinateMap;
use reproject::engine::{Options, Parallel, Plan};
use reproject::interp::Order;
use reproject::io::ArraySource;
use reproject::pixel_transform::PositionTable;
use reproject::wcs::Wcs;

fn same(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

fn run(plan: &Plan, shape: &[usize]) -> (ArrayD<f64>, ArrayD<f64>) {
    let (mut data, mut footprint) = (ArrayD::zeros(shape.to_vec()), ArrayD::zeros(shape.to_vec()));
    plan.compute_into(data.view_mut(), footprint.view_mut())
        .unwrap();
    (data, footprint)
}

#[test]
fn given_positions_reproduce_the_wcs_plan_bit_for_bit() {
    let wcs_in = Wcs::from_header_str(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 20.5\nCRPIX2 = 16.5\n\
         CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.01\nCDELT2 = 0.01\n",
    )
    .unwrap();
    let wcs_out = Wcs::from_header_str(
        "CTYPE1 = 'RA---SIN'\nCTYPE2 = 'DEC--SIN'\nCRPIX1 = 14\nCRPIX2 = 12.2\n\
         CRVAL1 = 150.03\nCRVAL2 = 30.02\nCD1_1 = -0.0093\nCD1_2 = 0.003\nCD2_1 = 0.003\n\
         CD2_2 = 0.0093\n",
    )
    .unwrap();
    let (ny, nx) = (30usize, 27usize);
    let cube = Array3::from_shape_fn((2, 32, 40), |(p, y, x)| {
        if (x * 7 + y * 3) % 41 == 0 {
            f64::NAN
        } else {
            ((x as f64) * 0.4).sin() * 30.0 + (y * y) as f64 * 0.1 + p as f64
        }
    });
    let source = ArraySource::new(cube.view().into_dyn()).unwrap();
    let coords = CoordinateMap::new(&wcs_out, &wcs_in, true, (32, 40)).unwrap();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for y in 0..ny {
        for x in 0..nx {
            let (px, py) = coords.map(x as f64, y as f64);
            xs.push(px);
            ys.push(py);
        }
    }
    let valid = xs.iter().filter(|v| !v.is_nan()).count();
    assert!(valid > 300 && valid < ny * nx, "{valid} valid positions");
    let table = PositionTable::new((ny, nx), xs, ys).unwrap();
    let shape = [2, ny, nx];
    for order in [0, 1, 2, 3, 5].map(|k| Order::try_from(k).unwrap()) {
        let options = Options {
            order,
            ..Options::default()
        };
        let want = run(
            &Plan::new(&source, &wcs_in, &wcs_out, &shape, &options).unwrap(),
            &shape,
        );
        for (block_size, parallel) in [
            (None, Parallel::Serial),
            (Some((7, 5)), Parallel::Threads(2)),
            (Some((1, 1)), Parallel::Serial),
        ] {
            let options = Options {
                block_size,
                parallel,
                ..options.clone()
            };
            let plan = Plan::from_positions(&source, table.clone(), &shape, &options).unwrap();
            let got = run(&plan, &shape);
            assert!(same(&got.0, &want.0), "{order:?} {block_size:?}: data");
            assert!(same(&got.1, &want.1), "{order:?} {block_size:?}: footprint");
        }
    }
}

#[test]
fn position_tables_of_the_wrong_shape_are_refused() {
    assert!(PositionTable::new((2, 3), vec![0.0; 6], vec![0.0; 5]).is_err());
    let image = Array2::<f64>::zeros((4, 4));
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let table = PositionTable::new((2, 3), vec![0.0; 6], vec![0.0; 6]).unwrap();
    let err = Plan::from_positions(&source, table, &[3, 2], &Options::default())
        .err()
        .expect("a 2 x 3 table for a 3 x 2 output");
    assert!(matches!(err, reproject::Error::ShapeMismatch(_)), "{err}");
}

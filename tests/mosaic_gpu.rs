//! Mosaics combined on the GPU (`src/mosaic/device.rs`), on the CUDA simulator: the inputs'
//! samples stay on the device, the accumulate kernel adds them there, and only the sums come
//! back. Runs without a GPU (the simulator runs the kernels compiled as host C++).
//!
//! - Every combine mode the device has (mean, sum, first, last, min, max) × with and without
//!   weights × no, constant and plane corrections × a cube and a window of the output: the
//!   CPU's bits, values and footprints.
//! - The bytes that come back are the block sums, once: 16 bytes a pixel a plane.
//! - A fault injected at every driver call of a mosaic ends with the CPU's bits (the block
//!   and the later ones combine on the host).

use std::sync::{Mutex, MutexGuard};

use ndarray::{s, Array3, ArrayD, IxDyn};
use reproject::engine::blocks::Block;
use reproject::engine::{Backend, Options};
use reproject::gpu::driver::FaultKind;
use reproject::gpu::sim::SimDriver;
use reproject::io::ArraySource;
use reproject::mosaic::coadd::{
    reproject_and_coadd_part, Combine, Correction, MosaicInput, MosaicOptions, MosaicPart,
};
use reproject::wcs::Wcs;

/// The simulator is one per process: the tests take turns.
fn simulator() -> (MutexGuard<'static, ()>, std::sync::Arc<SimDriver>) {
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: every test of this binary takes the turn first, so no other thread reads or
    // writes the environment meanwhile.
    unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    assert!(
        SimDriver::has_kernels(),
        "the CUDA simulator was built without its host kernels (no C++ compiler)"
    );
    let sim = reproject::gpu::simulated_device(0).expect("the simulated device");
    (turn, sim)
}

fn header(ctype: (&str, &str), crval: (f64, f64), crpix: (f64, f64), extra: &str) -> String {
    format!(
        "CTYPE1 = '{}'\nCTYPE2 = '{}'\nCRVAL1 = {:?}\nCRVAL2 = {:?}\nCRPIX1 = {:?}\n\
         CRPIX2 = {:?}\nCDELT1 = -0.01\nCDELT2 = 0.01\n{extra}",
        ctype.0, ctype.1, crval.0, crval.1, crpix.0, crpix.1
    )
}

/// Three overlapping exposures (a rotated TAN: a homography; CAR: the general transform; SIP)
/// with different backgrounds and NaN holes, of `planes` planes, onto a TAN grid.
struct Fixture {
    headers: Vec<Wcs>,
    images: Vec<Array3<f64>>,
    weights: Array3<f64>,
    out: Wcs,
    shape: (usize, usize),
}

fn fixture(planes: usize) -> Fixture {
    let rot = "PC1_1 = 0.96\nPC1_2 = -0.28\nPC2_1 = 0.28\nPC2_2 = 0.96\n";
    let sip = "A_ORDER = 2\nA_0_2 = 2.0e-5\nA_1_1 = -1.5e-5\nB_ORDER = 2\nB_2_0 = 1.5e-5\n";
    let headers = [
        header(("RA---TAN", "DEC--TAN"), (150.0, 30.0), (30.5, 28.5), rot),
        header(("RA---CAR", "DEC--CAR"), (150.2, 30.1), (30.0, 25.0), ""),
        header(
            ("RA---TAN-SIP", "DEC--TAN-SIP"),
            (150.1, 29.9),
            (32.0, 30.0),
            sip,
        ),
    ];
    let images = (0..3)
        .map(|k| {
            Array3::from_shape_fn((planes, 56, 64), |(p, y, x)| {
                if (y * 7 + x * 3 + k) % 53 == 0 {
                    return f64::NAN;
                }
                let (fy, fx) = (y as f64 / 56.0, x as f64 / 64.0);
                10.0 * k as f64 + p as f64 + 40.0 * (6.0 * fx).sin() * (4.0 * fy).cos()
            })
        })
        .collect();
    // Weights of the second input: positive, with zeros and NaNs.
    let weights = Array3::from_shape_fn((planes, 56, 64), |(_, y, x)| match (y * 5 + x) % 41 {
        0 => f64::NAN,
        1 => 0.0,
        n => 0.5 + n as f64 / 41.0,
    });
    Fixture {
        headers: headers
            .iter()
            .map(|h| Wcs::from_header_str(h).unwrap())
            .collect(),
        images,
        weights,
        out: Wcs::from_header_str(&header(
            ("RA---TAN", "DEC--TAN"),
            (150.1, 30.0),
            (48.5, 40.5),
            "",
        ))
        .unwrap(),
        shape: (80, 96),
    }
}

/// The mosaic's window `window` (the whole output when `None`) with `corrections` given (or
/// none) on `backend`.
fn mosaic(
    f: &Fixture,
    combine: Combine,
    with_weights: bool,
    corrections: Option<Vec<Correction>>,
    window: Option<Block>,
    backend: Backend,
) -> (ArrayD<f64>, ArrayD<f64>) {
    let views: Vec<_> = f
        .images
        .iter()
        .map(|i| {
            if i.shape()[0] == 1 {
                i.index_axis(ndarray::Axis(0), 0).into_dyn()
            } else {
                i.view().into_dyn()
            }
        })
        .collect();
    let sources: Vec<ArraySource<f64>> = views
        .iter()
        .map(|v| ArraySource::new(v.clone()).unwrap())
        .collect();
    let weight_view = if f.weights.shape()[0] == 1 {
        f.weights.index_axis(ndarray::Axis(0), 0).into_dyn()
    } else {
        f.weights.view().into_dyn()
    };
    let weights = ArraySource::new(weight_view).unwrap();
    let mut inputs: Vec<MosaicInput> = sources
        .iter()
        .zip(&f.headers)
        .map(|(s, w)| MosaicInput::new(s, w))
        .collect();
    if with_weights {
        inputs[1].weights = Some((&weights, None));
    }
    let options = MosaicOptions {
        combine,
        reprojection: Options {
            backend,
            block_size: Some((32, 40)),
            ..Options::default()
        },
        ..MosaicOptions::default()
    };
    let window = window.unwrap_or(Block {
        rows: 0..f.shape.0,
        cols: 0..f.shape.1,
    });
    let planes = f.images[0].shape()[0];
    let mut shape = if planes > 1 { vec![planes] } else { vec![] };
    shape.extend([window.rows.len(), window.cols.len()]);
    let mut data = ArrayD::zeros(IxDyn(&shape));
    let mut footprint = ArrayD::zeros(IxDyn(&shape));
    let part = MosaicPart {
        window,
        corrections,
    };
    reproject_and_coadd_part(
        &inputs,
        &f.out,
        &[f.shape.0, f.shape.1],
        &part,
        data.view_mut(),
        footprint.view_mut(),
        &options,
    )
    .unwrap();
    (data, footprint)
}

fn bits(a: &ArrayD<f64>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

fn assert_same(what: &str, gpu: &(ArrayD<f64>, ArrayD<f64>), cpu: &(ArrayD<f64>, ArrayD<f64>)) {
    let differ = |a: &ArrayD<f64>, b: &ArrayD<f64>| {
        bits(a)
            .iter()
            .zip(bits(b))
            .filter(|(x, y)| **x != *y)
            .count()
    };
    assert_eq!(differ(&gpu.0, &cpu.0), 0, "{what}: values differ");
    assert_eq!(differ(&gpu.1, &cpu.1), 0, "{what}: footprints differ");
}

const COMBINES: [Combine; 6] = [
    Combine::Mean,
    Combine::Sum,
    Combine::First,
    Combine::Last,
    Combine::Min,
    Combine::Max,
];

fn corrections() -> Vec<Option<Vec<Correction>>> {
    let offset = |o: f64| Correction {
        offset: o,
        ..Correction::default()
    };
    let plane = |o: f64, x: f64, y: f64| Correction {
        offset: o,
        slope_x: x,
        slope_y: y,
    };
    vec![
        None,
        Some(vec![offset(0.0), offset(9.5), offset(-19.25)]),
        Some(vec![
            plane(0.5, 0.0, 0.0),
            plane(9.0, 0.013, -0.021),
            plane(-20.0, -0.007, 0.0),
        ]),
    ]
}

#[test]
fn every_device_combine_gives_the_cpu_bits() {
    let (_turn, sim) = simulator();
    let f = fixture(1);
    for combine in COMBINES {
        for with_weights in [false, true] {
            for c in corrections() {
                let what = format!("{combine:?}, weights {with_weights}, corrections {c:?}");
                let launches = sim.stats().launches;
                let gpu = mosaic(&f, combine, with_weights, c.clone(), None, Backend::Cuda);
                assert!(
                    sim.stats().launches > launches,
                    "{what}: nothing on the GPU"
                );
                let cpu = mosaic(&f, combine, with_weights, c, None, Backend::Cpu);
                let overlaps = !matches!(combine, Combine::Mean | Combine::Sum)
                    || cpu.1.iter().any(|&w| w > 1.0);
                assert!(
                    cpu.1.iter().any(|&w| w == 0.0) && overlaps,
                    "{what}: the fixture needs gaps and overlaps"
                );
                assert_same(&what, &gpu, &cpu);
            }
        }
    }
    assert!(sim.hazards().is_empty(), "{:?}", sim.hazards());
}

#[test]
fn cubes_and_windows_give_the_cpu_bits() {
    let (_turn, _sim) = simulator();
    let cube = fixture(2);
    let window = Block {
        rows: 13..71,
        cols: 21..90,
    };
    for combine in [Combine::Mean, Combine::Max] {
        for c in corrections() {
            let what = format!("cube, {combine:?}, corrections {c:?}");
            let run = |backend, window: Option<Block>| {
                mosaic(&cube, combine, true, c.clone(), window, backend)
            };
            assert_same(&what, &run(Backend::Cuda, None), &run(Backend::Cpu, None));
            let part = run(Backend::Cuda, Some(window.clone()));
            let whole = run(Backend::Cpu, None);
            let cut = |a: &ArrayD<f64>| {
                a.slice(s![.., window.rows.clone(), window.cols.clone()])
                    .to_owned()
                    .into_dyn()
            };
            assert_same(
                &format!("{what}, window"),
                &part,
                &(cut(&whole.0), cut(&whole.1)),
            );
        }
    }
}

#[test]
fn only_the_block_sums_come_back() {
    let (_turn, sim) = simulator();
    let f = fixture(1);
    for with_weights in [false, true] {
        let before = sim.stats();
        mosaic(&f, Combine::Mean, with_weights, None, None, Backend::Cuda);
        let after = sim.stats();
        // Data and footprint, float64, once per output pixel: nothing of the three inputs'
        // samples (which overlap, so they are more).
        let pixels = (f.shape.0 * f.shape.1) as u64;
        assert_eq!(
            after.downloaded - before.downloaded,
            16 * pixels,
            "weights {with_weights}"
        );
        // The inputs go up once each (with the weights), as raw float64 planes.
        let inputs = 3 * 56 * 64 * 8 + if with_weights { 56 * 64 * 8 } else { 0 };
        assert!(after.uploaded - before.uploaded >= inputs);
    }
}

#[test]
fn a_fault_at_any_driver_call_ends_with_the_cpu_bits() {
    let (_turn, sim) = simulator();
    let f = fixture(1);
    let cpu = mosaic(&f, Combine::Mean, true, None, None, Backend::Cpu);
    let first = sim.calls().len();
    let clean = mosaic(&f, Combine::Mean, true, None, None, Backend::Cuda);
    assert_same("no fault", &clean, &cpu);
    let calls = sim.calls().len() - first;
    assert!(calls > 20, "{calls} driver calls");
    for kind in [FaultKind::OutOfMemory, FaultKind::Other] {
        for i in 0..calls {
            sim.inject(Some((sim.calls().len() + i, kind)));
            let gpu = mosaic(&f, Combine::Mean, true, None, None, Backend::Cuda);
            assert_same(&format!("{kind} at call {i} of {calls}"), &gpu, &cpu);
        }
    }
    sim.inject(None);
    assert!(sim.hazards().is_empty(), "{:?}", sim.hazards());
}

#[test]
fn the_median_samples_on_the_gpu_and_combines_on_the_host() {
    let (_turn, sim) = simulator();
    let f = fixture(1);
    let run = |backend| mosaic(&f, Combine::Median, true, None, None, backend);
    let before = sim.stats();
    let gpu = run(Backend::Cuda);
    let after = sim.stats();
    assert_same("median", &gpu, &run(Backend::Cpu));
    // Every input's samples come back (values and footprints, weights too): more than the sums.
    let pixels = (f.shape.0 * f.shape.1) as u64;
    assert!(after.downloaded - before.downloaded > 16 * pixels);
}

//! Soak test: 1000 random small reprojections, each computed with random block sizes and
//! thread counts and compared bit for bit with the single-threaded whole-image path of the
//! same plan (`Plan::compute_block` over one block covering the output, on this thread).
//!
//! Random WCS pairs from TAN, SIN, CAR, AIT, ZEA and TAN-SIP (some near a pole, some with a
//! frame change ICRS -> Galactic), random orders 0-3, both NaN policies, both precisions,
//! float32 or float64 inputs with random NaN pixels, random block sizes and 1-4 threads.
//! Every run also checks the top-level `reproject_interp` (a plan of its own), every float32
//! run of order 0 or 1 the same values as a float64 input (float32 windows against float64
//! windows), and every tenth run the blocks of a lazy reprojection computed in reverse order.
//!
//! The seed is fixed; `SOAK_SEED` and `SOAK_RUNS` override it and the number of runs. The
//! sizes are small so that the debug build finishes in about a minute; the run count and the
//! time are printed (`cargo test --test soak -- --nocapture`).

use std::sync::Arc;
use std::time::Instant;

use ndarray::{Array3, ArrayD, IxDyn};
use reproject::engine::blocks::Block;
use reproject::engine::lazy::LazyReprojection;
use reproject::engine::{reproject_interp, Options, Parallel, Plan, Precision};
use reproject::interp::{NanPolicy, Order};
use reproject::io::{ArraySource, ImageSource};
use reproject::wcs::Wcs;

/// splitmix64: small, fast, and good enough for test parameters.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// Uniform integer in lo..=hi.
    fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.int(0, items.len() - 1)]
    }
}

const PROJECTIONS: [&str; 6] = ["TAN", "SIN", "CAR", "AIT", "ZEA", "TAN-SIP"];

/// A random WCS of `projection` around (lon, lat) for an image of `shape` (rows, columns).
fn random_wcs(
    rng: &mut Rng,
    projection: &str,
    (lon, lat): (f64, f64),
    shape: (usize, usize),
    cdelt: f64,
    galactic: bool,
) -> Wcs {
    let (lng, lat_ax) = if galactic {
        ("GLON", "GLAT")
    } else {
        ("RA--", "DEC-")
    };
    let code = &projection[..3];
    let sip = projection.ends_with("SIP");
    let rot = rng.range(-180.0, 180.0).to_radians();
    let (s, c) = rot.sin_cos();
    let flip = if rng.chance(0.8) { -1.0 } else { 1.0 };
    let aspect = rng.range(0.8, 1.25);
    let mut h = format!(
        "CTYPE1  = '{lng}-{code}{}'\nCTYPE2  = '{lat_ax}-{code}{}'\n\
         CRPIX1  = {}\nCRPIX2  = {}\nCRVAL1  = {lon}\nCRVAL2  = {lat}\n\
         CD1_1   = {}\nCD1_2   = {}\nCD2_1   = {}\nCD2_2   = {}\n",
        if sip { "-SIP" } else { "" },
        if sip { "-SIP" } else { "" },
        rng.range(0.0, shape.1 as f64 + 1.0),
        rng.range(0.0, shape.0 as f64 + 1.0),
        flip * cdelt * c,
        -cdelt * aspect * s,
        flip * cdelt * s,
        cdelt * aspect * c,
    );
    if !galactic {
        h.push_str("RADESYS = 'ICRS'\n");
    }
    if sip {
        h.push_str("A_ORDER = 2\nB_ORDER = 2\n");
        for (k, v) in [
            ("A_2_0", rng.range(-1e-4, 1e-4)),
            ("A_1_1", rng.range(-1e-4, 1e-4)),
            ("A_0_2", rng.range(-1e-4, 1e-4)),
            ("B_2_0", rng.range(-1e-4, 1e-4)),
            ("B_1_1", rng.range(-1e-4, 1e-4)),
            ("B_0_2", rng.range(-1e-4, 1e-4)),
        ] {
            h.push_str(&format!("{k:<8}= {v:e}\n"));
        }
    }
    Wcs::from_header_str(&h).unwrap_or_else(|e| panic!("{e}:\n{h}"))
}

/// Bitwise equality of two arrays (NaN payloads included: both paths run the same code).
fn identical(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// What one run did, for the summary.
#[derive(Default)]
struct Tally {
    runs: usize,
    covered: usize,
    with_nan: usize,
    lazy: usize,
    blocks: usize,
    widened: usize,
}

fn one_run(rng: &mut Rng, run: usize, tally: &mut Tally) {
    let p_in = *rng.pick(&PROJECTIONS);
    let p_out = *rng.pick(&PROJECTIONS);
    let shape_in = (rng.int(1, 64), rng.int(1, 64));
    let shape_out = (rng.int(1, 48), rng.int(1, 48));
    let frame_change = rng.chance(0.15);
    let near_pole = !frame_change && rng.chance(0.1);
    let (lon, lat) = if frame_change {
        // The Galactic centre, in ICRS.
        (266.405, -28.936)
    } else if near_pole {
        (
            rng.range(0.0, 360.0),
            rng.pick(&[-1.0, 1.0]) * rng.range(88.0, 90.0),
        )
    } else {
        (rng.range(0.0, 360.0), rng.range(-75.0, 75.0))
    };
    let cdelt_in = rng.range(0.002, 0.05);
    let cdelt_out = cdelt_in * rng.range(0.5, 2.0);
    let wcs_in = random_wcs(rng, p_in, (lon, lat), shape_in, cdelt_in, false);
    let centre_out = if frame_change {
        (rng.range(-0.1, 0.1), rng.range(-0.1, 0.1))
    } else {
        let d = cdelt_in * shape_in.0.max(shape_in.1) as f64 * 0.3;
        (
            lon + rng.range(-d, d),
            (lat + rng.range(-d, d)).clamp(-90.0, 90.0),
        )
    };
    let wcs_out = random_wcs(rng, p_out, centre_out, shape_out, cdelt_out, frame_change);

    let order = *rng.pick(&[
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
    ]);
    let nan_fraction = if rng.chance(0.5) {
        0.0
    } else {
        rng.range(0.0, 0.1)
    };
    let options = Options {
        order,
        nan_policy: if rng.chance(0.5) {
            NanPolicy::Propagate
        } else {
            NanPolicy::Renormalize
        },
        roundtrip_coords: rng.chance(0.9),
        block_size: if rng.chance(0.2) {
            None
        } else {
            Some((rng.int(1, shape_out.0 + 2), rng.int(1, shape_out.1 + 2)))
        },
        parallel: Parallel::from_threads(rng.int(1, 4)),
        precision: if rng.chance(0.7) {
            Precision::Reproject
        } else {
            Precision::Float64
        },
        approximate: if rng.chance(0.1) { Some(0.1) } else { None },
        ..Options::default()
    };

    let planes = if rng.chance(0.1) { 2 } else { 1 };
    let mut nan_pixels = 0;
    let values = Array3::from_shape_fn((planes, shape_in.0, shape_in.1), |(p, y, x)| {
        if rng.chance(nan_fraction) {
            nan_pixels += 1;
            f64::NAN
        } else {
            ((x as f64 * 0.37).sin() + (y as f64 * 0.21).cos()) * 100.0 + p as f64
        }
    });
    tally.with_nan += usize::from(nan_pixels > 0);
    let values32 = values.mapv(|v| v as f32);
    let as_f32 = rng.chance(0.4);
    let source: Arc<dyn ImageSource> = if as_f32 {
        Arc::new(ArraySource::new(values32.view().into_dyn()).unwrap())
    } else {
        Arc::new(ArraySource::new(values.view().into_dyn()).unwrap())
    };
    let (ny, nx) = shape_out;
    let describe = || {
        format!(
            "run {run}: {p_in} {shape_in:?} -> {p_out} {shape_out:?}, centre ({lon}, {lat}), \
             {options:?}, planes {planes}, f32 {as_f32}"
        )
    };

    let plan = Plan::with_shared_source(source.clone(), &wcs_in, &wcs_out, &[ny, nx], &options)
        .unwrap_or_else(|e| panic!("{}: {e}", describe()));
    let full = plan.shape_out().to_vec();
    tally.blocks += plan.blocks().len();

    // The blocks on the threads.
    let mut data = ArrayD::<f64>::zeros(IxDyn(&full));
    let mut footprint = ArrayD::<f64>::zeros(IxDyn(&full));
    plan.compute_into(data.view_mut(), footprint.view_mut())
        .unwrap_or_else(|e| panic!("{}: {e}", describe()));

    // The reference: one block covering the whole output, on this thread.
    let mut ref_data = Array3::<f64>::zeros((full[0], ny, nx));
    let mut ref_fp = Array3::<f64>::zeros((full[0], ny, nx));
    let whole = Block {
        rows: 0..ny,
        cols: 0..nx,
    };
    plan.compute_block(&whole, ref_data.view_mut(), ref_fp.view_mut())
        .unwrap_or_else(|e| panic!("{}: {e}", describe()));
    let (ref_data, ref_fp) = (
        ref_data.into_shape_with_order(IxDyn(&full)).unwrap(),
        ref_fp.into_shape_with_order(IxDyn(&full)).unwrap(),
    );
    assert!(identical(&data, &ref_data), "data differ: {}", describe());
    assert!(
        identical(&footprint, &ref_fp),
        "footprints differ: {}",
        describe()
    );
    tally.covered += usize::from(footprint.iter().any(|&f| f > 0.0));

    // The top-level call (a plan of its own) gives the same bits.
    let (d, f) = reproject_interp(&*source, &wcs_in, &wcs_out, &[ny, nx], &options)
        .unwrap_or_else(|e| panic!("{}: {e}", describe()));
    assert!(
        identical(&d, &ref_data) && identical(&f, &ref_fp),
        "reproject_interp differs: {}",
        describe()
    );

    if as_f32 && order.degree() <= 1 {
        // Float32 inputs are sampled from float32 windows; the same values stored as float64
        // (read through float64 windows) give the same bits for orders 0 and 1, where no
        // float32 rounding of results applies to native data.
        let widened = values32.mapv(f64::from);
        let wide = ArraySource::new(widened.view().into_dyn()).unwrap();
        let (d, f) = reproject_interp(&wide, &wcs_in, &wcs_out, &[ny, nx], &options)
            .unwrap_or_else(|e| panic!("{}: {e}", describe()));
        assert!(
            identical(&d, &ref_data) && identical(&f, &ref_fp),
            "float64 copy of a float32 input differs: {}",
            describe()
        );
        tally.widened += 1;
    }

    if run.is_multiple_of(10) {
        // The lazy path: a plan of its own, blocks computed last to first.
        let lazy = LazyReprojection::new(
            Plan::with_shared_source(source, &wcs_in, &wcs_out, &[ny, nx], &options).unwrap(),
        );
        let mut lazy_data = ArrayD::<f64>::from_elem(IxDyn(&full), -1.0);
        for handle in lazy.blocks().into_iter().rev() {
            let (d, _) = handle.compute().unwrap();
            let b = handle.block();
            let mut window = lazy_data.slice_each_axis_mut(|ax| match ax.axis.index() {
                1 => ndarray::Slice::from(b.rows.clone()),
                2 => ndarray::Slice::from(b.cols.clone()),
                _ => ndarray::Slice::from(..),
            });
            window.assign(&d.into_dyn());
        }
        assert!(
            identical(&lazy_data, &ref_data),
            "lazy differs: {}",
            describe()
        );
        tally.lazy += 1;
    }
    tally.runs += 1;
}

#[test]
fn thousand_random_reprojections_match_the_serial_whole_image_path() {
    let seed = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261122u64);
    let runs = std::env::var("SOAK_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000usize);
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    let start = Instant::now();
    for run in 0..runs {
        one_run(&mut rng, run, &mut tally);
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "soak: {} runs (seed {seed}) in {elapsed:.1} s: {} with output coverage, {} with NaN \
         inputs, {} blocks, {} lazy reverse-order checks, {} float32 inputs against their \
         float64 copies",
        tally.runs, tally.covered, tally.with_nan, tally.blocks, tally.lazy, tally.widened
    );
    assert_eq!(tally.runs, runs);
    assert!(
        tally.widened * 10 > runs,
        "only {} float32 comparisons",
        tally.widened
    );
    // Most runs must overlap, or the comparison says little.
    assert!(
        tally.covered * 2 > runs,
        "only {} runs overlap",
        tally.covered
    );
}

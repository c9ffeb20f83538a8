//! Soak test: 1000 random small reprojections, each computed with random block sizes and
//! thread counts and compared bit for bit with the single-threaded whole-image path of the
//! same plan (`Plan::compute_block` over one block covering the output, on this thread), and
//! that path with an independent per-pixel reference (see [`check_against_reference`]).
//!
//! Random WCS pairs from TAN, SIN, CAR, AIT, ZEA and TAN-SIP (some near a pole, some with a
//! frame change ICRS -> Galactic), random orders 0-3, both NaN policies, both precisions,
//! float32 or float64 inputs with random NaN pixels, random block sizes and 1-4 threads.
//! Every run overlaps the input: the output's reference pixel is put on the sky position of a
//! random point inside the input, whose neighbourhood has no NaN pixel (and inputs of
//! reproject's all-NaN case, NaN pixels with a spline of `NanPolicy::Propagate`, have none),
//! so every run's footprint is non-empty, which is asserted.
//! Every run also checks the top-level `reproject_interp` (a plan of its own), every float32
//! run of order 0 or 1 the same values as a float64 input (float32 windows against float64
//! windows), and every tenth run the blocks of a lazy reprojection computed in reverse order.
//!
//! The seed is fixed; `SOAK_SEED` and `SOAK_RUNS` override it and the number of runs. The
//! sizes are small so that the debug build finishes in seconds; the run count, the time and
//! what the reference saw are printed (`cargo test --test soak -- --nocapture`).

use std::sync::Arc;
use std::time::Instant;

use ndarray::{Array3, ArrayD, Axis, IxDyn};
use reproject::engine::blocks::Block;
use reproject::engine::coords::CoordinateMap;
use reproject::engine::lazy::LazyReprojection;
use reproject::engine::{reproject_interp, Options, Parallel, Plan, Precision};
use reproject::interp::{Interpolator, NanPolicy, Order};
use reproject::io::{ArraySource, ImageSource};
use reproject::wcs::distortion::SipInversion;
use reproject::wcs::frame_transform::FrameTransform;
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

/// A random WCS of `projection` with reference point (lon, lat) at `crpix` (FITS 1-based
/// (CRPIX1, CRPIX2)), or at a random position of an image of `shape` (rows, columns).
fn random_wcs(
    rng: &mut Rng,
    projection: &str,
    (lon, lat): (f64, f64),
    shape: (usize, usize),
    crpix: Option<(f64, f64)>,
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
    let (crpix1, crpix2) = crpix.unwrap_or_else(|| {
        (
            rng.range(0.0, shape.1 as f64 + 1.0),
            rng.range(0.0, shape.0 as f64 + 1.0),
        )
    });
    let mut h = format!(
        "CTYPE1  = '{lng}-{code}{}'\nCTYPE2  = '{lat_ax}-{code}{}'\n\
         CRPIX1  = {}\nCRPIX2  = {}\nCRVAL1  = {lon}\nCRVAL2  = {lat}\n\
         CD1_1   = {}\nCD1_2   = {}\nCD2_1   = {}\nCD2_2   = {}\n",
        if sip { "-SIP" } else { "" },
        if sip { "-SIP" } else { "" },
        crpix1,
        crpix2,
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
    reference: Seen,
}

/// Largest difference allowed between the engine's input positions and the reference's
/// (input pixels), where the engine computes them exactly (see [`check_against_reference`]):
/// both are exact up to rounding, about 1e-16 relative on degrees, i.e. ~1e-11 px at the
/// smallest pixels here (0.002 deg); the largest difference seen is printed (4.6e-11 px with
/// the fixed seed). With the approximate transform the allowance is its own tolerance.
const POS_TOL: f64 = 1e-9;

/// One run, as the reference sees it.
struct Case<'a> {
    wcs_in: &'a Wcs,
    wcs_out: &'a Wcs,
    shape_in: (usize, usize),
    shape_out: (usize, usize),
    options: &'a Options,
    /// The input planes in float64 (float32 inputs widened, exactly).
    input: &'a Array3<f64>,
    /// Whether results are rounded to float32 (reproject's rule for float32 inputs).
    rounds_results: bool,
}

/// What the reference checks saw, for the summary.
#[derive(Default)]
struct Seen {
    /// Output pixels whose input positions were compared.
    pixels: usize,
    /// Pixels valid for both (engine and reference).
    valid: usize,
    /// Largest position difference on valid pixels, exact runs.
    max_pos: f64,
    /// The same for runs with the approximate transform.
    max_pos_approx: f64,
    /// Pixels whose validity differs, each within the tolerance of a boundary: the edge of
    /// the input's valid range, or the round-trip check's one output pixel.
    edge_flips: usize,
    roundtrip_flips: usize,
    /// Values (all planes) compared bit for bit.
    values: usize,
    /// Pixels inside the input that the round-trip check drops.
    dropped: usize,
}

impl Seen {
    fn merge(&mut self, o: &Seen) {
        self.pixels += o.pixels;
        self.valid += o.valid;
        self.max_pos = self.max_pos.max(o.max_pos);
        self.max_pos_approx = self.max_pos_approx.max(o.max_pos_approx);
        self.edge_flips += o.edge_flips;
        self.roundtrip_flips += o.roundtrip_flips;
        self.values += o.values;
        self.dropped += o.dropped;
    }
}

/// reproject's transform written out per pixel through the public WCS API, independently of
/// the engine's (homography, native-vector rotations, round-trip shortcuts): output pixel ->
/// world (`wcs_out.pixel_to_world`) -> frame change -> input pixel (`wcs_in.world_to_pixel`),
/// and back the same way for the round-trip check.
struct WorldPath {
    wcs_out: Wcs,
    wcs_in: Wcs,
    to_in: Option<FrameTransform>,
    to_out: Option<FrameTransform>,
}

impl WorldPath {
    fn new(case: &Case) -> WorldPath {
        // reproject inverts SIP with astropy's defaults (Precision::Reproject); Float64
        // inverts it fully (the crate's default).
        let sip = |w: &Wcs| match case.options.precision {
            Precision::Reproject => w.clone().with_sip_inversion(SipInversion::astropy()),
            Precision::Float64 => w.clone(),
        };
        let (f_out, f_in) = (case.wcs_out.frame().unwrap(), case.wcs_in.frame().unwrap());
        let change = |a, b| (f_out != f_in).then(|| FrameTransform::new(a, b).unwrap());
        WorldPath {
            wcs_out: sip(case.wcs_out),
            wcs_in: sip(case.wcs_in),
            to_in: change(f_out, f_in),
            to_out: change(f_in, f_out),
        }
    }

    fn convert(t: &Option<FrameTransform>, (lon, lat): (f64, f64)) -> (f64, f64) {
        t.as_ref().map_or((lon, lat), |t| t.apply(lon, lat))
    }

    /// The input position of output pixel (x, y), if it has one.
    fn forward(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let world = Self::convert(&self.to_in, self.wcs_out.pixel_to_world(x, y)?);
        self.wcs_in.world_to_pixel(world.0, world.1)
    }

    /// The output position of input position (x, y), if it has one.
    fn backward(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let world = Self::convert(&self.to_out, self.wcs_in.pixel_to_world(x, y)?);
        self.wcs_out.world_to_pixel(world.0, world.1)
    }
}

/// Checks the whole-image output of one run (`data`, `footprint`: planes × rows × columns)
/// against an independent reference that applies reproject's rules pixel by pixel:
///
/// * positions: [`WorldPath`]; valid inside `[-0.5, n - 0.5)` on both axes; with
///   `roundtrip_coords`, dropped when the position maps back more than one output pixel away
///   on either axis (kept when the way back fails: reproject's comparison with NaN is false).
///   The engine's positions ([`CoordinateMap`], which `Plan` samples at) must agree within
///   [`POS_TOL`] (with the approximate transform: within its tolerance, 0.1 px): the two are
///   different arithmetic (the engine's homography or rotation of native vectors against
///   spherical trigonometry through the sky), equal up to rounding; the largest difference
///   seen is printed. Where only one of them finds a pixel valid, the reference's position
///   must lie within that tolerance of the decision (the input edge, or a round-trip
///   distance of one output pixel): a last-bit difference decides such pixels.
/// * values: reproject's sampling with the scalar sampler ([`Interpolator::sample`]:
///   scipy's `map_coordinates` with reproject's edge and NaN rules, the whole-image spline
///   prefilter, no AVX2, no windows) at the engine's positions, rounded to float32 where
///   reproject does so, must equal the engine's values bit for bit (the same arithmetic on the
///   same positions), and the footprint must be 1 exactly where the value is not NaN.
///
/// Returns what it saw.
fn check_against_reference(
    case: &Case,
    data: &ArrayD<f64>,
    footprint: &ArrayD<f64>,
    describe: &dyn Fn() -> String,
) -> Seen {
    let (ny, nx) = case.shape_out;
    let (iy, ix) = case.shape_in;
    let options = case.options;
    let mut seen = Seen::default();

    let path = WorldPath::new(case);
    // The engine's positions (those `Plan` samples at), for the whole output.
    let mut map = CoordinateMap::new(
        &path.wcs_out,
        &path.wcs_in,
        options.roundtrip_coords,
        case.shape_in,
    )
    .unwrap();
    if let Some(tolerance) = options.approximate {
        map = map.with_approximation(tolerance);
    }
    let block = Block {
        rows: 0..ny,
        cols: 0..nx,
    };
    let (mut xs, mut ys) = (vec![0.0; ny * nx], vec![0.0; ny * nx]);
    map.block_coords(&block, &mut xs, &mut ys);

    // The reference's positions, compared with them.
    let tol = options.approximate.unwrap_or(POS_TOL);
    let inside = |(px, py): (f64, f64)| {
        px >= -0.5 && px < ix as f64 - 0.5 && py >= -0.5 && py < iy as f64 - 0.5
    };
    let near_edge = |(px, py): (f64, f64)| {
        let near = |c: f64, n: usize| (c + 0.5).abs() <= tol || (c - (n as f64 - 0.5)).abs() <= tol;
        near(px, ix) || near(py, iy)
    };
    for r in 0..ny {
        for c in 0..nx {
            let i = r * nx + c;
            let (x, y) = (c as f64, r as f64);
            let engine = (!xs[i].is_nan()).then_some((xs[i], ys[i]));
            let forward = path.forward(x, y);
            // The largest distance of the way back from the pixel, where it is checked.
            let back = forward
                .filter(|&p| options.roundtrip_coords && inside(p))
                .and_then(|(px, py)| path.backward(px, py))
                .map(|(bx, by)| (bx - x).abs().max((by - y).abs()));
            let valid = forward.is_some_and(inside) && back.is_none_or(|d| d <= 1.0);
            seen.pixels += 1;
            seen.dropped += usize::from(back.is_some_and(|d| d > 1.0));
            match (valid, engine) {
                (true, Some((ex, ey))) => {
                    let (px, py) = forward.unwrap();
                    let d = (ex - px).abs().max((ey - py).abs());
                    assert!(
                        d <= tol,
                        "pixel ({r}, {c}): input position {ex}, {ey} (engine) vs {px}, {py} \
                         (reference): {d:e} px apart: {}",
                        describe()
                    );
                    seen.valid += 1;
                    if options.approximate.is_some() {
                        seen.max_pos_approx = seen.max_pos_approx.max(d);
                    } else {
                        seen.max_pos = seen.max_pos.max(d);
                    }
                }
                (false, None) => {}
                _ => {
                    if forward.is_some_and(near_edge) {
                        seen.edge_flips += 1;
                    } else if back.is_some_and(|d| (d - 1.0).abs() <= tol) {
                        seen.roundtrip_flips += 1;
                    } else {
                        panic!(
                            "pixel ({r}, {c}): valid for the {} only (engine {engine:?}, \
                             reference {forward:?}, round trip {back:?}): {}",
                            if valid { "reference" } else { "engine" },
                            describe()
                        );
                    }
                }
            }
        }
    }

    // The values, plane by plane, with the scalar sampler at the engine's positions.
    for (p, plane) in case.input.axis_iter(Axis(0)).enumerate() {
        let sampler = Interpolator::new(plane, options.order, options.nan_policy);
        for r in 0..ny {
            for c in 0..nx {
                let i = r * nx + c;
                let mut want = sampler.sample(ys[i], xs[i]);
                if case.rounds_results {
                    want = want as f32 as f64;
                }
                let (got, fp) = (data[[p, r, c]], footprint[[p, r, c]]);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "plane {p}, pixel ({r}, {c}) at input ({}, {}): engine {got:e}, reference \
                     {want:e}: {}",
                    xs[i],
                    ys[i],
                    describe()
                );
                assert_eq!(
                    fp,
                    if want.is_nan() { 0.0 } else { 1.0 },
                    "plane {p}, pixel ({r}, {c}): footprint: {}",
                    describe()
                );
                seen.values += 1;
            }
        }
    }
    seen
}

fn one_run(rng: &mut Rng, run: usize, tally: &mut Tally) {
    let p_in = *rng.pick(&PROJECTIONS);
    let p_out = *rng.pick(&PROJECTIONS);
    let shape_in = (rng.int(1, 64), rng.int(1, 64));
    let shape_out = (rng.int(1, 48), rng.int(1, 48));
    let frame_change = rng.chance(0.15);
    let near_pole = !frame_change && rng.chance(0.1);
    // Some runs cover a large part of the sky, where projections stop being one-to-one and
    // reproject's round-trip check drops pixels.
    let wide = rng.chance(0.1);
    let cdelt_in = if wide {
        rng.range(0.5, 6.0)
    } else {
        rng.range(0.002, 0.05)
    };
    let cdelt_out = cdelt_in * rng.range(0.5, 2.0);
    // The input, and an anchor: a point at least 0.3 px inside the input's valid range
    // [-0.5, n - 0.5) that is on the sky (drawn again until there is one).
    let (lon, lat, wcs_in, anchor, anchor_sky) = loop {
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
        let wcs_in = random_wcs(rng, p_in, (lon, lat), shape_in, None, cdelt_in, false);
        let inside = |rng: &mut Rng, n: usize| rng.range(-0.2, n as f64 - 0.8);
        let found = (0..20).find_map(|_| {
            let (ax, ay) = (inside(rng, shape_in.1), inside(rng, shape_in.0));
            let sky = wcs_in.pixel_to_world(ax, ay)?;
            Some(((ax, ay), sky))
        });
        if let Some((anchor, sky)) = found {
            break (lon, lat, wcs_in, anchor, sky);
        }
    };
    // The output's reference pixel, an integer pixel of the output, sees the anchor.
    let centre_out = if frame_change {
        let to_galactic = FrameTransform::new(
            wcs_in.frame().unwrap(),
            &reproject::wcs::frame::CelestialFrame::Galactic,
        )
        .unwrap();
        to_galactic.apply(anchor_sky.0, anchor_sky.1)
    } else {
        anchor_sky
    };
    let crpix_out = (
        rng.int(1, shape_out.1) as f64,
        rng.int(1, shape_out.0) as f64,
    );
    let wcs_out = random_wcs(
        rng,
        p_out,
        centre_out,
        shape_out,
        Some(crpix_out),
        cdelt_out,
        frame_change,
    );

    let order = *rng.pick(&[
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
    ]);
    let nan_policy = if rng.chance(0.5) {
        NanPolicy::Propagate
    } else {
        NanPolicy::Renormalize
    };
    // reproject's NaN rule makes a spline of an input with a NaN pixel all NaN: those inputs
    // have none, so that every run has output.
    let nan_fraction =
        if rng.chance(0.5) || (nan_policy == NanPolicy::Propagate && order.degree() >= 2) {
            0.0
        } else {
            rng.range(0.0, 0.1)
        };
    let options = Options {
        order,
        nan_policy,
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
        // No NaN within 3 px of the anchor: every tap of its samples is a value.
        let near = (x as f64 - anchor.0).abs() <= 3.0 && (y as f64 - anchor.1).abs() <= 3.0;
        if !near && rng.chance(nan_fraction) {
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
             anchor {anchor:?}, {options:?}, planes {planes}, f32 {as_f32}, {nan_pixels} NaN \
             pixels"
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
    for (p, fp) in ref_fp.axis_iter(Axis(0)).enumerate() {
        assert!(
            fp.iter().any(|&f| f > 0.0),
            "plane {p}: empty footprint: {}",
            describe()
        );
    }
    tally.covered += 1;

    // The whole-image path against the independent per-pixel reference.
    let (input, rounds_results) = if as_f32 {
        // reproject rounds spline results of float32 inputs to float32 (Precision::Reproject).
        let rounds = options.precision == Precision::Reproject && order.degree() >= 2;
        (values32.mapv(f64::from), rounds)
    } else {
        (values.clone(), false)
    };
    let reference = Case {
        wcs_in: &wcs_in,
        wcs_out: &wcs_out,
        shape_in,
        shape_out,
        options: &options,
        input: &input,
        rounds_results,
    };
    let seen = check_against_reference(&reference, &ref_data, &ref_fp, &describe);
    tally.reference.merge(&seen);

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
    let seen = &tally.reference;
    println!(
        "reference: {} output pixels ({} valid), input positions within {:.2e} px ({:.2e} px \
         with the approximate transform), {} validity differences at the input edge and {} at \
         the round-trip limit, {} values bit-identical, {} pixels dropped by the round trip",
        seen.pixels,
        seen.valid,
        seen.max_pos,
        seen.max_pos_approx,
        seen.edge_flips,
        seen.roundtrip_flips,
        seen.values,
        seen.dropped
    );
    assert_eq!(tally.runs, runs);
    assert_eq!(tally.covered, runs);
    assert!(
        tally.widened * 10 > runs,
        "only {} float32 comparisons",
        tally.widened
    );
    // Validity differences are last-bit decisions: rare.
    assert!(
        (seen.edge_flips + seen.roundtrip_flips) * 10_000 <= seen.pixels,
        "{} validity differences",
        seen.edge_flips + seen.roundtrip_flips
    );
}

//! Golden tests of the whole engine ([`reproject::engine::reproject_interp`]) against astropy
//! reproject 0.21's `reproject_interp`.
//!
//! The fixtures in `tests/fixtures/reproject/` are written by
//! `scripts/make_reproject_fixtures.py`: for every case the input image, both headers as text
//! and reproject's data and footprint for orders 0-3 (and `roundtrip_coords=False` runs).
//!
//! Tolerances: on pixels both sides find valid, `|got - want| <= max(1e-6 |want|, 1e-9)`;
//! footprints equal except at most 0.01% of the pixels of a run.
//!
//! Ties: a pixel whose input position lies within 1e-9 px of a half-integer on either axis (an
//! order-0 tie or the `-0.5` / `n - 0.5` edge) is decided by last-bit WCS round-off on both
//! sides. Such a pixel may differ from reproject only by landing on the other side of the tie:
//! it is forgiven only if reproject's value and footprint, and ours, are each (within the
//! tolerance above) what the scalar sampler gives with the tied coordinate put exactly on the
//! half-integer or 1e-9 px below it (one side of the tie each: a valid value with footprint 1
//! or NaN with footprint 0 at the edge, the one pixel or its neighbour for order 0). Any other
//! difference fails. Forgiven pixels are counted and printed per run and per case; outside
//! the `edge_ties` group, whose cases put every output pixel on a tie, they may be at most
//! 0.01% of a run's pixels. The per-run maximum relative error, the number of bit-identical
//! values and the footprint differences are printed to stderr
//! (`cargo test --release --test reproject_golden -- --nocapture`).

use std::cell::OnceCell;
use std::fs::File;
use std::path::PathBuf;

use ndarray::{ArrayD, Axis, Dimension, Ix2};
use ndarray_npy::NpzReader;
use reproject::engine::blocks::Block;
use reproject::engine::coords::CoordinateMap;
use reproject::engine::{reproject_interp, Options, Parallel};
use reproject::interp::{Interpolator, NanPolicy, Order};
use reproject::io::{
    parse_numpy_dtype, ArraySource, ByteOrder, ImageSource, RawSource, SampleType,
};
use reproject::pixel_transform::PixelTransform;
use reproject::wcs::Wcs;
use serde_json::Value;

const REL_TOL: f64 = 1e-6;
const ABS_TOL: f64 = 1e-9;
/// The largest fraction of a run's pixels whose footprints may differ.
const FOOTPRINT_FRACTION: f64 = 1e-4;
/// The largest fraction of a run's pixels that may be forgiven as ties (outside the
/// `edge_ties` group, whose cases put every pixel on a tie).
const FORGIVEN_FRACTION: f64 = 1e-4;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reproject")
}

/// One run of a case: an order and `roundtrip_coords`.
struct Run {
    key: String,
    order: Order,
    roundtrip: bool,
}

/// One case of the fixtures.
struct Case {
    name: String,
    /// The test that checks the case.
    group: String,
    description: String,
    dtype: String,
    shape_out: Vec<usize>,
    wcs_in: Wcs,
    wcs_out: Wcs,
    image: ArrayD<f64>,
    runs: Vec<Run>,
}

struct Fixtures {
    cases: Vec<Case>,
    npz: NpzReader<File>,
}

impl Fixtures {
    fn load() -> Fixtures {
        let dir = fixtures();
        let open = |name: &str| {
            File::open(dir.join(name)).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run scripts/make_reproject_fixtures.py)",
                    dir.join(name).display()
                )
            })
        };
        let meta: Value = serde_json::from_reader(open("cases.json")).unwrap();
        let mut npz = NpzReader::new(open("arrays.npz")).unwrap();
        let cases = meta["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap().to_string();
                let text = |key: &str| c[key].as_str().unwrap().to_string();
                let wcs = |key: &str| {
                    Wcs::from_header_str(&text(key))
                        .unwrap_or_else(|e| panic!("{name}: {key}: {e}"))
                };
                let shape = |key: &str| -> Vec<usize> {
                    c[key]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_u64().unwrap() as usize)
                        .collect()
                };
                let image: ArrayD<f64> = npz
                    .by_name(&format!("{name}_image.npy"))
                    .unwrap_or_else(|e| panic!("{name}: image: {e}"));
                assert_eq!(image.shape(), shape("shape_in").as_slice(), "{name}");
                let runs = c["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| Run {
                        key: r["key"].as_str().unwrap().to_string(),
                        order: Order::try_from(r["order"].as_i64().unwrap()).unwrap(),
                        roundtrip: r["roundtrip_coords"].as_bool().unwrap(),
                    })
                    .collect();
                Case {
                    group: text("group"),
                    description: text("description"),
                    dtype: text("dtype"),
                    shape_out: shape("shape_out"),
                    wcs_in: wcs("header_in"),
                    wcs_out: wcs("header_out"),
                    image,
                    runs,
                    name,
                }
            })
            .collect();
        Fixtures { cases, npz }
    }

    fn expected(&mut self, case: &Case, run: &Run) -> (ArrayD<f64>, ArrayD<f64>) {
        let mut get = |what: &str| -> ArrayD<f64> {
            let key = format!("{}_{}_{what}", case.name, run.key);
            self.npz
                .by_name(&format!("{key}.npy"))
                .unwrap_or_else(|e| panic!("array {key}: {e}"))
        };
        (get("data"), get("footprint"))
    }
}

/// Converts the float64 fixture image to the case's type, checking that nothing is lost.
fn typed<T: Copy>(
    image: &ArrayD<f64>,
    to: impl Fn(f64) -> T,
    back: impl Fn(T) -> f64,
) -> ArrayD<T> {
    image.mapv(|v| {
        let t = to(v);
        assert!(
            back(t).to_bits() == v.to_bits() || (v.is_nan() && back(t).is_nan()),
            "{v} is not exact in the case's dtype"
        );
        t
    })
}

/// The image as bytes of the case's sample type in byte order `order`, every value exact.
fn sample_bytes(image: &ArrayD<f64>, sample: SampleType, order: ByteOrder) -> Vec<u8> {
    macro_rules! encode {
        ($t:ty, $v:expr) => {{
            let t = $v as $t;
            assert!(
                t as f64 == $v || $v.is_nan(),
                "{} is not exact as {}",
                $v,
                stringify!($t)
            );
            match order {
                ByteOrder::Big => t.to_be_bytes().to_vec(),
                ByteOrder::Little => t.to_le_bytes().to_vec(),
            }
        }};
    }
    let mut bytes = Vec::new();
    for &v in image.iter() {
        bytes.extend(match sample {
            SampleType::U8 => encode!(u8, v),
            SampleType::I8 => encode!(i8, v),
            SampleType::U16 => encode!(u16, v),
            SampleType::I16 => encode!(i16, v),
            SampleType::U32 => encode!(u32, v),
            SampleType::I32 => encode!(i32, v),
            SampleType::U64 => encode!(u64, v),
            SampleType::I64 => encode!(i64, v),
            SampleType::F32 => encode!(f32, v),
            SampleType::F64 => encode!(f64, v),
        });
    }
    bytes
}

/// Calls `f` with an image source of the case's dtype: an [`ArraySource`] for native float64,
/// float32, int16 and uint8, a [`RawSource`] of the case's bytes otherwise.
fn with_source<R>(case: &Case, f: impl FnOnce(&dyn ImageSource) -> R) -> R {
    let (sample, order) = parse_numpy_dtype(&case.dtype).unwrap();
    let image = &case.image;
    match (sample, order) {
        (SampleType::F64, ByteOrder::Little) => f(&ArraySource::new(image.view()).unwrap()),
        (SampleType::F32, ByteOrder::Little) => {
            let a = typed(image, |v| v as f32, |t| t as f64);
            f(&ArraySource::new(a.view()).unwrap())
        }
        (SampleType::I16, ByteOrder::Little) => {
            let a = typed(image, |v| v as i16, |t| t as f64);
            f(&ArraySource::new(a.view()).unwrap())
        }
        (SampleType::U8, _) => {
            let a = typed(image, |v| v as u8, |t| t as f64);
            f(&ArraySource::new(a.view()).unwrap())
        }
        _ => {
            let bytes = sample_bytes(image, sample, order);
            let src = RawSource::new(&bytes, sample, order, image.shape()).unwrap();
            assert_eq!(src.stored_type().sample, sample);
            f(&src)
        }
    }
}

fn options(run: &Run) -> Options {
    Options {
        order: run.order,
        roundtrip_coords: run.roundtrip,
        ..Options::default()
    }
}

fn reproject(case: &Case, opts: &Options) -> (ArrayD<f64>, ArrayD<f64>) {
    with_source(case, |src| {
        reproject_interp(src, &case.wcs_in, &case.wcs_out, &case.shape_out, opts)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name))
    })
}

/// `|a - b|`, 0 for equal values (infinities included: inf - inf is NaN).
fn difference(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs()
    }
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// The comparison of one run.
#[derive(Default)]
struct Stats {
    pixels: usize,
    both_valid: usize,
    identical: usize,
    /// Largest `|got - want| / |want|` over pixels with `|want| >= ABS_TOL / REL_TOL`.
    max_rel: f64,
    max_abs: f64,
    /// Largest `|got - want| / max(REL_TOL |want|, ABS_TOL)`: the run passes at most 1.
    max_ratio: f64,
    out_of_tolerance: Vec<(Vec<usize>, f64, f64)>,
    footprint_diffs: Vec<(Vec<usize>, f64, f64)>,
    /// Pixels whose footprint is not `!isnan(data)` in the Rust output.
    inconsistent_footprint: usize,
    /// Differences at pixels whose input position is within 1e-9 px of a half-integer and
    /// whose two values are those of the two sides of the tie (see [`TieSides`]).
    forgiven: usize,
}

/// Distance below which an input position counts as sitting on a decision point.
const BOUNDARY: f64 = 1e-9;

/// The half-integer within [`BOUNDARY`] of a coordinate (an order-0 tie, or the `-0.5` /
/// `n - 0.5` edge of the valid range), if there is one.
fn tie(c: f64) -> Option<f64> {
    let h = (c + 0.5).round() - 0.5;
    ((c - h).abs() < BOUNDARY).then_some(h)
}

/// Whether `value` with footprint `footprint` is, within the tolerance, the sample `side`:
/// NaN with footprint 0, or a value within `max(REL_TOL |side|, ABS_TOL)` with footprint 1.
fn matches_side(value: f64, footprint: f64, side: f64) -> bool {
    if side.is_nan() {
        value.is_nan() && footprint == 0.0
    } else {
        footprint == 1.0 && (value - side).abs() <= (REL_TOL * side.abs()).max(ABS_TOL)
    }
}

/// The samples on the sides of the ties of one pixel: for each tied coordinate the
/// half-integer `h` itself and `h - BOUNDARY` (the two ways the edge rule and order-0 rounding
/// decide; not the next double below `h`, whose `c + 0.5` can round up to the integer), the
/// other coordinate as it is; empty if the pixel is on no tie. Along a tied axis the sample is
/// constant on either side near an edge (clamped to the edge pixel, or NaN) and for order 0,
/// so the nudge changes nothing else.
struct TieSides(Vec<f64>);

impl TieSides {
    fn of(x: f64, y: f64, interp: &Interpolator) -> TieSides {
        let sides = |c: f64| match tie(c) {
            Some(h) => vec![h, h - BOUNDARY],
            None => vec![c],
        };
        if tie(x).is_none() && tie(y).is_none() {
            return TieSides(Vec::new());
        }
        let mut values = Vec::new();
        for &sy in &sides(y) {
            for &sx in &sides(x) {
                values.push(interp.sample(sy, sx));
            }
        }
        TieSides(values)
    }

    /// Whether both our value and reproject's are one of the sides (a difference of tie
    /// decisions only).
    fn explain(&self, (got, got_fp): (f64, f64), (want, want_fp): (f64, f64)) -> bool {
        let on_a_side = |v, f| self.0.iter().any(|&side| matches_side(v, f, side));
        on_a_side(got, got_fp) && on_a_side(want, want_fp)
    }
}

impl Stats {
    fn compare(
        got: &ArrayD<f64>,
        got_fp: &ArrayD<f64>,
        want: &ArrayD<f64>,
        want_fp: &ArrayD<f64>,
        tie_sides: impl Fn(&[usize]) -> TieSides,
    ) -> Stats {
        assert_eq!(got.shape(), want.shape());
        assert_eq!(got_fp.shape(), want_fp.shape());
        let mut s = Stats {
            pixels: got.len(),
            ..Stats::default()
        };
        for ((idx, &g), (&w, (&gf, &wf))) in got
            .indexed_iter()
            .zip(want.iter().zip(got_fp.iter().zip(want_fp.iter())))
        {
            if same(g, w) {
                s.identical += 1;
            }
            if gf != if g.is_nan() { 0.0 } else { 1.0 } {
                s.inconsistent_footprint += 1;
            }
            let differs = gf != wf
                || (!g.is_nan() && !w.is_nan() && {
                    let diff = difference(g, w);
                    diff > (REL_TOL * w.abs()).max(ABS_TOL) || diff.is_nan()
                });
            if differs && tie_sides(idx.slice()).explain((g, gf), (w, wf)) {
                s.forgiven += 1;
                continue;
            }
            if gf != wf {
                s.footprint_diffs.push((idx.slice().to_vec(), g, w));
            }
            if g.is_nan() || w.is_nan() {
                continue;
            }
            s.both_valid += 1;
            let diff = difference(g, w);
            s.max_abs = s.max_abs.max(diff);
            if w.abs() >= ABS_TOL / REL_TOL {
                s.max_rel = s.max_rel.max(diff / w.abs());
            }
            let allowed = (REL_TOL * w.abs()).max(ABS_TOL);
            s.max_ratio = s.max_ratio.max(diff / allowed);
            if diff > allowed || diff.is_nan() {
                s.out_of_tolerance.push((idx.slice().to_vec(), g, w));
            }
        }
        s
    }

    fn allowed_footprint_diffs(&self) -> usize {
        (self.pixels as f64 * FOOTPRINT_FRACTION).floor() as usize
    }

    /// The most pixels of the run that may be forgiven as ties: every pixel in the
    /// `edge_ties` group (built on ties), 0.01% elsewhere.
    fn allowed_forgiven(&self, group: &str) -> usize {
        if group == "edge_ties" {
            self.pixels
        } else {
            (self.pixels as f64 * FORGIVEN_FRACTION).floor() as usize
        }
    }

    fn passes(&self, group: &str) -> bool {
        self.out_of_tolerance.is_empty()
            && self.footprint_diffs.len() <= self.allowed_footprint_diffs()
            && self.inconsistent_footprint == 0
            && self.forgiven <= self.allowed_forgiven(group)
    }
}

fn show(list: &[(Vec<usize>, f64, f64)]) -> String {
    list.iter()
        .take(8)
        .map(|(i, g, w)| format!("{i:?}: got {g:e}, want {w:e}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Compares every run of every case of `group` with reproject, prints one line per run to
/// stderr and fails with the list of runs out of tolerance.
fn check_group(group: &str) {
    let mut fx = Fixtures::load();
    let cases: Vec<Case> = std::mem::take(&mut fx.cases)
        .into_iter()
        .filter(|c| c.group == group)
        .collect();
    assert!(!cases.is_empty(), "no case in group {group}");
    let mut report = format!(
        "== {group}\n{:<22} {:<8} {:>7} {:>7} {:>17} {:>10} {:>10} {:>10} {:>4} {:>4}\n",
        "case",
        "run",
        "pixels",
        "valid",
        "bit-identical",
        "max rel",
        "max abs",
        "tol ratio",
        "fp",
        "ties"
    );
    let mut failures = Vec::new();
    let (mut total, mut total_identical, mut total_fp, mut total_forgiven) = (0, 0, 0, 0);
    for case in &cases {
        let mut case_forgiven = 0;
        for run in &case.runs {
            let (want, want_fp) = fx.expected(case, run);
            let opts = options(run);
            let (got, got_fp) = reproject(case, &opts);
            let coords = CoordinateMap::new(
                &case.wcs_out,
                &case.wcs_in,
                false,
                (
                    case.image.shape()[case.image.ndim() - 2],
                    case.image.shape()[case.image.ndim() - 1],
                ),
            )
            .unwrap();
            // The scalar sampler of each input plane, for the pixels on ties (built on first
            // use). The fixture images are exact in their dtypes, and reproject's float32
            // rounding of results is within the tolerance.
            let interpolators: OnceCell<Vec<Interpolator>> = OnceCell::new();
            let interpolator = |plane: usize| -> &Interpolator {
                &interpolators.get_or_init(|| {
                    let image = &case.image;
                    let planes: Vec<_> = if image.ndim() == 2 {
                        vec![image.view()]
                    } else {
                        image.axis_iter(Axis(0)).collect()
                    };
                    planes
                        .into_iter()
                        .map(|p| {
                            let p = p.into_dimensionality::<Ix2>().unwrap();
                            Interpolator::new(p, run.order, NanPolicy::Propagate)
                        })
                        .collect()
                })[plane]
            };
            let tie_sides = |idx: &[usize]| {
                let (row, col) = (idx[idx.len() - 2], idx[idx.len() - 1]);
                let plane = if idx.len() == 3 { idx[0] } else { 0 };
                let block = Block {
                    rows: row..row + 1,
                    cols: col..col + 1,
                };
                let (mut x, mut y) = ([0.0], [0.0]);
                coords.block_coords(&block, &mut x, &mut y);
                // Positions just outside the valid range come back NaN: recompute them without
                // the range cut through the plain transform.
                let (x, y) = if x[0].is_nan() {
                    PixelTransform::new(&case.wcs_out, &case.wcs_in)
                        .unwrap()
                        .map(col as f64, row as f64)
                        .unwrap_or((f64::NAN, f64::NAN))
                } else {
                    (x[0], y[0])
                };
                TieSides::of(x, y, interpolator(plane))
            };
            let s = Stats::compare(&got, &got_fp, &want, &want_fp, tie_sides);
            case_forgiven += s.forgiven;
            report += &format!(
                "{:<22} {:<8} {:>7} {:>7} {:>7} ({:>6.2}%) {:>10.3e} {:>10.3e} {:>10.3e} {:>4} {:>4}\n",
                case.name,
                run.key,
                s.pixels,
                s.both_valid,
                s.identical,
                100.0 * s.identical as f64 / s.pixels as f64,
                s.max_rel,
                s.max_abs,
                s.max_ratio,
                s.footprint_diffs.len(),
                s.forgiven
            );
            if !s.footprint_diffs.is_empty() {
                report += &format!(
                    "    footprint differs at {} pixels: {}\n",
                    s.footprint_diffs.len(),
                    show(&s.footprint_diffs)
                );
            }
            if !s.out_of_tolerance.is_empty() {
                report += &format!(
                    "    {} values out of tolerance: {}\n",
                    s.out_of_tolerance.len(),
                    show(&s.out_of_tolerance)
                );
            }
            total += s.pixels;
            total_identical += s.identical;
            total_fp += s.footprint_diffs.len();
            if !s.passes(group) {
                failures.push(format!(
                    "{} {} ({}): {} values out of tolerance [{}]; {} footprint differences \
                     (allowed {}) [{}]; {} footprints inconsistent with the data; {} pixels \
                     forgiven as ties (allowed {})",
                    case.name,
                    run.key,
                    case.description,
                    s.out_of_tolerance.len(),
                    show(&s.out_of_tolerance),
                    s.footprint_diffs.len(),
                    s.allowed_footprint_diffs(),
                    show(&s.footprint_diffs),
                    s.inconsistent_footprint,
                    s.forgiven,
                    s.allowed_forgiven(group)
                ));
            }
        }
        report += &format!(
            "    {}: {case_forgiven} pixels forgiven as ties (each on one side of its tie)\n",
            case.name
        );
        total_forgiven += case_forgiven;
    }
    report += &format!(
        "{group}: {total} pixels, {total_identical} bit-identical ({:.2}%), {total_fp} footprint \
         differences, {total_forgiven} pixels forgiven as ties\n",
        100.0 * total_identical as f64 / total as f64
    );
    eprint!("{report}");
    assert!(
        failures.is_empty(),
        "{group}: {} runs differ from reproject:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Case 1: TAN -> TAN rotated by 30 degrees, float32 and float64 input.
#[test]
fn tan_rotated() {
    check_group("tan_rotated");
}

/// Case 2: CAR galactic -> TAN equatorial (frame change).
#[test]
fn frame_change() {
    check_group("frame_change");
}

/// Case 3: SIN -> TAN.
#[test]
fn sin_to_tan() {
    check_group("sin_to_tan");
}

/// Case 4: AIT all-sky -> CAR beyond the poles (invalid world coordinates), with and without the
/// round-trip check.
#[test]
fn allsky() {
    check_group("allsky");
}

/// Case 5: A SIP input -> TAN.
///
/// reproject inverts SIP with `all_world2pix`'s defaults (tolerance 1e-4 px, at most 20
/// iterations): here it stops after 5 iterations, about 1e-7 px short of the converged
/// solution, which the values reflect (up to 1e-4 relative where the data cross zero).
#[test]
fn sip() {
    check_group("sip");
}

/// Case 6a: The edge rule with shifts of +-0.3 and +-0.7 px (no ties) and no shift.
#[test]
fn edges() {
    check_group("edges");
}

/// Case 6b: Shifts of +-0.5 px: order-0 ties and the exact `n - 0.5` / `-0.5` boundaries, which
/// reproject decides by its WCS round-off (about 1e-11 px, different from pixel to pixel), so
/// matching it needs the same round-off, not just accurate coordinates.
#[test]
fn edge_ties() {
    check_group("edge_ties");
}

/// Case 7: One NaN pixel in the interior, on an edge, in a corner.
#[test]
fn nan_placements() {
    check_group("nan");
}

/// Case 8: Input dtypes and reproject's float32 rounding rules.
#[test]
fn dtypes() {
    check_group("dtypes");
}

/// Case 9: A cube with a 2-D WCS (leading dimension broadcast).
#[test]
fn cube() {
    check_group("cube");
}

/// Case 10: Non-celestial planes (blank, PIXX/PIXY, LINEAR with unit conversion, rotated,
/// spectral with GHz/MHz, logarithmic), single-row and single-column images.
#[test]
fn linear() {
    check_group("linear");
}

/// Case 11a: The edge rule on PIXX/PIXY planes, without ties.
#[test]
fn linear_edges() {
    check_group("linear_edges");
}

/// Case 11b: Shifts of +-0.5 px on PIXX/PIXY planes, where the ties are exact.
#[test]
fn linear_edge_ties() {
    check_group("linear_edge_ties");
}

/// Case 11c: NaN and inf in the interior, on an edge, in a corner, on PIXX/PIXY planes.
#[test]
fn linear_nan_and_inf_placements() {
    check_group("linear_nan");
}

/// Case 12: Every input dtype on a PIXX/PIXY plane.
#[test]
fn linear_dtypes() {
    check_group("linear_dtypes");
}

/// Case 13: A PIXX/PIXY/WAVE cube (m -> Angstrom) and a RA/DEC/FREQ cube (GHz -> MHz).
#[test]
fn linear_cubes() {
    check_group("linear_cube");
}

#[test]
fn blocks_and_threads_do_not_change_any_value() {
    let fx = Fixtures::load();
    let schedules: Vec<(Parallel, Option<(usize, usize)>)> =
        [Parallel::Serial, Parallel::Threads(2)]
            .into_iter()
            .flat_map(|p| {
                [None, Some((1, 1)), Some((7, 5)), Some((64, 64))]
                    .into_iter()
                    .map(move |b| (p, b))
            })
            .filter(|&(p, b)| !(p == Parallel::Serial && b.is_none()))
            .collect();
    let mut failures = Vec::new();
    for case in &fx.cases {
        for run in &case.runs {
            let reference = reproject(case, &options(run));
            for &(parallel, block_size) in &schedules {
                let opts = Options {
                    parallel,
                    block_size,
                    ..options(run)
                };
                let got = reproject(case, &opts);
                for (what, g, r) in [
                    ("data", &got.0, &reference.0),
                    ("footprint", &got.1, &reference.1),
                ] {
                    let differing = g
                        .iter()
                        .zip(r.iter())
                        .filter(|(a, b)| !same(**a, **b))
                        .count();
                    if differing > 0 {
                        failures.push(format!(
                            "{} {} {parallel:?} {block_size:?}: {differing} {what} values differ",
                            case.name, run.key
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "{} cases x runs x {} schedules compared with the default call",
        fx.cases.iter().map(|c| c.runs.len()).sum::<usize>(),
        schedules.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The groups that have a test above.
const GROUPS: [&str; 16] = [
    "linear",
    "linear_edges",
    "linear_edge_ties",
    "linear_nan",
    "linear_dtypes",
    "linear_cube",
    "tan_rotated",
    "frame_change",
    "sin_to_tan",
    "allsky",
    "sip",
    "edges",
    "edge_ties",
    "nan",
    "dtypes",
    "cube",
];

#[test]
fn fixtures_cover_every_required_case() {
    let fx = Fixtures::load();
    for group in GROUPS {
        assert!(fx.cases.iter().any(|c| c.group == group), "no {group} case");
    }
    for case in &fx.cases {
        assert!(
            GROUPS.contains(&case.group.as_str()),
            "{}: unknown group {}",
            case.name,
            case.group
        );
        for degree in 0..=3 {
            assert!(
                case.runs
                    .iter()
                    .any(|r| r.order.degree() == degree && r.roundtrip),
                "{}: no order {degree}",
                case.name
            );
        }
    }
    let dtypes: Vec<&str> = fx.cases.iter().map(|c| c.dtype.as_str()).collect();
    for d in ["<f4", ">f4", "<f8", ">f8", "<i2", ">i2", "|u1"] {
        assert!(dtypes.contains(&d), "no {d} case");
    }
    assert!(fx.cases.iter().any(|c| c.runs.iter().any(|r| !r.roundtrip)));
    assert!(fx.cases.iter().any(|c| c.image.ndim() == 3));
}

//! Golden tests of the interpolation kernels against reproject 0.21 / scipy 1.17.
//!
//! The fixtures in `tests/fixtures/interp/` are written by `scripts/make_interp_fixtures.py`
//! (reproject's own `_array_utils.map_coordinates(image, coords, order=k, cval=nan,
//! mode='constant')` and `scipy.ndimage.spline_filter(..., mode='constant')`). Every value
//! must match **bit for bit** (`f64::to_bits`, any NaN equal to any NaN).

use std::collections::BTreeSet;
use std::fs::File;
use std::path::PathBuf;

use ndarray::{Array1, Array2};
use ndarray_npy::NpzReader;
use reproject::interp::spline::{filter_line, prefilter};
use reproject::interp::{clip_coordinate, covering_window, Interpolator, NanPolicy, Order, Plane};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/interp")
}

struct Npz(NpzReader<File>);

impl Npz {
    fn open(name: &str) -> Npz {
        let path = fixtures().join(name);
        let f = File::open(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run scripts/make_interp_fixtures.py)",
                path.display()
            )
        });
        Npz(NpzReader::new(f).unwrap())
    }

    /// Case names: the `<case>` of every `<case>_image` array.
    fn cases(&mut self) -> Vec<String> {
        let names: BTreeSet<String> = self
            .0
            .names()
            .unwrap()
            .into_iter()
            .filter_map(|n| {
                n.trim_end_matches(".npy")
                    .strip_suffix("_image")
                    .map(str::to_string)
            })
            .collect();
        names.into_iter().collect()
    }

    fn a2(&mut self, key: &str) -> Array2<f64> {
        self.0
            .by_name(&format!("{key}.npy"))
            .unwrap_or_else(|e| panic!("array {key}: {e}"))
    }

    fn a1(&mut self, key: &str) -> Array1<f64> {
        self.0
            .by_name(&format!("{key}.npy"))
            .unwrap_or_else(|e| panic!("array {key}: {e}"))
    }
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Compares, collecting up to a few mismatches for the message.
#[derive(Default)]
struct Tally {
    compared: usize,
    failures: Vec<String>,
    n_failed: usize,
}

impl Tally {
    fn check(&mut self, got: f64, want: f64, what: impl FnOnce() -> String) {
        self.compared += 1;
        if !same(got, want) {
            self.n_failed += 1;
            if self.failures.len() < 20 {
                self.failures.push(format!(
                    "{}: got {got:e} ({:#x}), want {want:e} ({:#x})",
                    what(),
                    got.to_bits(),
                    want.to_bits()
                ));
            }
        }
    }

    fn finish(self, label: &str) {
        eprintln!(
            "{label}: {} values compared, {} differ",
            self.compared, self.n_failed
        );
        assert!(self.compared > 0, "{label}: nothing compared");
        assert!(
            self.n_failed == 0,
            "{label}: {} of {} values differ:\n{}",
            self.n_failed,
            self.compared,
            self.failures.join("\n")
        );
    }
}

#[test]
fn samples_are_bit_identical_to_reproject() {
    let mut npz = Npz::open("sample.npz");
    let cases = npz.cases();
    assert!(
        cases.len() >= 15,
        "expected the full fixture set, got {cases:?}"
    );
    let mut tally = Tally::default();
    let mut windows = Tally::default();
    for case in &cases {
        let image = npz.a2(&format!("{case}_image"));
        let coords = npz.a2(&format!("{case}_coords"));
        let (ny, nx) = image.dim();
        let ys = coords.row(0).to_vec();
        let xs = coords.row(1).to_vec();
        for order in Order::ALL {
            let k = order.degree();
            let want = npz.a1(&format!("{case}_o{k}"));
            assert_eq!(want.len(), ys.len());

            // the whole image through Interpolator (reproject's NaN behaviour)
            let interp = Interpolator::new(image.view(), order, NanPolicy::Propagate);
            let mut got = vec![0.0; ys.len()];
            interp.sample_many(&ys, &xs, &mut got);
            for i in 0..ys.len() {
                tally.check(got[i], want[i], || {
                    format!("{case} order {k} point {i} (y={:e}, x={:e})", ys[i], xs[i])
                });
                let one = interp.sample(ys[i], xs[i]);
                assert!(same(one, got[i]));
            }

            // small windows of the (prefiltered) image, as an engine reads them
            let mut full = image.clone();
            prefilter(full.view_mut(), order);
            let full = full.as_standard_layout().to_owned();
            let flat = full.as_slice().unwrap();
            for (chunk, (cy, cx)) in ys.chunks(5).zip(xs.chunks(5)).enumerate() {
                let Some(w) = covering_window(order, ny, nx, cy, cx) else {
                    for j in 0..cy.len() {
                        windows.check(f64::NAN, want[chunk * 5 + j], || {
                            format!("{case} order {k}: no window")
                        });
                    }
                    continue;
                };
                let mut data = Vec::with_capacity(w.rows.len() * w.cols.len());
                for r in w.rows.clone() {
                    data.extend_from_slice(&flat[r * nx + w.cols.start..r * nx + w.cols.end]);
                }
                let plane = Plane::new(&data, w.rows.clone(), w.cols.clone(), ny, nx).unwrap();
                for j in 0..cy.len() {
                    let i = chunk * 5 + j;
                    windows.check(plane.sample(order, cy[j], cx[j]), want[i], || {
                        format!("{case} order {k} point {i} in window {w:?}")
                    });
                }
            }
        }
    }
    tally.finish("reproject map_coordinates, whole image");
    windows.finish("reproject map_coordinates, covering windows");
}

#[test]
fn prefilter_is_bit_identical_to_scipy() {
    let mut npz = Npz::open("prefilter.npz");
    let cases = npz.cases();
    assert!(
        cases.len() >= 9,
        "expected the full fixture set, got {cases:?}"
    );
    let mut tally = Tally::default();
    let mut lines = Tally::default();
    for case in &cases {
        let image = npz.a2(&format!("{case}_image"));
        for order in [
            Order::Biquadratic,
            Order::Bicubic,
            Order::Quartic,
            Order::Quintic,
        ] {
            let k = order.degree();
            let want = npz.a2(&format!("{case}_o{k}"));
            let mut got = image.clone();
            prefilter(got.view_mut(), order);
            for ((r, c), &w) in want.indexed_iter() {
                tally.check(got[[r, c]], w, || format!("{case} order {k} ({r}, {c})"));
            }
            // the scalar 1-D filter, column by column then row by row
            let mut by_line = image.clone();
            for mut col in by_line.columns_mut() {
                let mut v = col.to_vec();
                filter_line(&mut v, order);
                col.iter_mut().zip(&v).for_each(|(d, s)| *d = *s);
            }
            for mut row in by_line.rows_mut() {
                let mut v = row.to_vec();
                filter_line(&mut v, order);
                row.iter_mut().zip(&v).for_each(|(d, s)| *d = *s);
            }
            for ((r, c), &w) in want.indexed_iter() {
                lines.check(by_line[[r, c]], w, || {
                    format!("{case} order {k} ({r}, {c}) by line")
                });
            }
        }
    }
    tally.finish("scipy spline_filter, prefilter");
    lines.finish("scipy spline_filter, filter_line");
}

/// reproject-behaviour.md §5: a 5×5 image with value 10·row + col, output row 2 for shifts
/// of the column coordinate (input x = output column + dx, input y = 2). The table gives the
/// spline values to 4 (order 2) or 3-4 (order 3) decimals.
#[test]
fn worked_examples_of_section_5() {
    let image = Array2::from_shape_fn((5, 5), |(r, c)| 10.0 * r as f64 + c as f64);
    let nan = f64::NAN;
    #[rustfmt::skip]
    let table: [(f64, [[f64; 5]; 4]); 6] = [
        (0.3, [[20.0, 21.0, 22.0, 23.0, 24.0],
               [20.3, 21.3, 22.3, 23.3, 24.0],
               [20.1271, 21.3318, 22.2824, 23.3741, 24.0],
               [20.135, 21.351, 22.261, 23.405, 24.0]]),
        (0.5, [[21.0, 22.0, 23.0, 24.0, nan],
               [20.5, 21.5, 22.5, 23.5, nan],
               [20.3529, 21.5294, 22.4706, 23.6471, nan],
               [20.3393, 21.5536, 22.4464, 23.6607, nan]]),
        (0.7, [[21.0, 22.0, 23.0, 24.0, nan],
               [20.7, 21.7, 22.7, 23.7, nan],
               [20.6259, 21.7176, 22.6682, 23.8729, nan],
               [20.595, 21.739, 22.649, 23.865, nan]]),
        (-0.3, [[20.0, 21.0, 22.0, 23.0, 24.0],
                [20.0, 20.7, 21.7, 22.7, 23.7],
                [20.0, 20.6259, 21.7176, 22.6682, 23.8729],
                [20.0, 20.595, 21.739, 22.649, 23.865]]),
        (-0.5, [[20.0, 21.0, 22.0, 23.0, 24.0],
                [20.0, 20.5, 21.5, 22.5, 23.5],
                [20.0, 20.3529, 21.5294, 22.4706, 23.6471],
                [20.0, 20.3393, 21.5536, 22.4464, 23.6607]]),
        (-0.7, [[nan, 20.0, 21.0, 22.0, 23.0],
                [nan, 20.3, 21.3, 22.3, 23.3],
                [nan, 20.1271, 21.3318, 22.2824, 23.3741],
                [nan, 20.135, 21.351, 22.261, 23.405]]),
    ];
    for (dx, rows) in table {
        for (k, expect) in rows.iter().enumerate() {
            let order = Order::try_from(k as i64).unwrap();
            let interp = Interpolator::new(image.view(), order, NanPolicy::Propagate);
            // decimals given in the table: 4 for order 2, 3-4 for order 3; exact-ish otherwise
            let tol = [0.0, 1e-12, 5e-5, 5e-4][k];
            for (col, &e) in expect.iter().enumerate() {
                let got = interp.sample(2.0, col as f64 + dx);
                if e.is_nan() {
                    assert!(
                        got.is_nan(),
                        "dx {dx} order {k} col {col}: got {got}, want NaN"
                    );
                } else {
                    assert!(
                        (got - e).abs() <= tol,
                        "dx {dx} order {k} col {col}: got {got}, want {e}"
                    );
                }
            }
        }
    }
    // the NaN rule of §5: NaN at (2,2), identity transform
    let mut holed = image.clone();
    holed[[2, 2]] = nan;
    let nan_pixels = |order: Order, shift: f64| -> Vec<(usize, usize)> {
        let interp = Interpolator::new(holed.view(), order, NanPolicy::Propagate);
        let mut v = vec![];
        for r in 0..5 {
            for c in 0..5 {
                if interp.sample(r as f64 + shift, c as f64 + shift).is_nan() {
                    v.push((r, c));
                }
            }
        }
        v
    };
    assert_eq!(nan_pixels(Order::NearestNeighbor, 0.0), vec![(2, 2)]);
    assert_eq!(
        nan_pixels(Order::Bilinear, 0.0),
        vec![(1, 1), (1, 2), (2, 1), (2, 2)]
    );
    assert_eq!(
        nan_pixels(Order::Bilinear, 0.3),
        vec![(1, 1), (1, 2), (2, 1), (2, 2)]
    );
    assert_eq!(
        nan_pixels(Order::Bilinear, -0.3),
        vec![(2, 2), (2, 3), (3, 2), (3, 3)]
    );
    assert_eq!(nan_pixels(Order::Biquadratic, 0.0).len(), 25);
    assert_eq!(nan_pixels(Order::Bicubic, 0.3).len(), 25);
    // +inf at (2,2), order 1, shift 0.3: inf at the 4 pixels
    let mut inf = image.clone();
    inf[[2, 2]] = f64::INFINITY;
    let interp = Interpolator::new(inf.view(), Order::Bilinear, NanPolicy::Propagate);
    for (r, c) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        assert_eq!(interp.sample(r as f64 + 0.3, c as f64 + 0.3), f64::INFINITY);
    }
}

/// `NanPolicy::Renormalize` on the fixture images: equal to reproject wherever reproject is
/// not NaN for orders 0-1 (and for clean images at every order); for orders ≥ 2 on images
/// with non-finite pixels, finite exactly where the nearest pixel is finite and the mask
/// sample is ≥ 0.5.
#[test]
fn renormalize_policy_on_fixture_images() {
    let mut npz = Npz::open("sample.npz");
    let mut compared = 0;
    for case in npz.cases() {
        let image = npz.a2(&format!("{case}_image"));
        let coords = npz.a2(&format!("{case}_coords"));
        let (ny, nx) = image.dim();
        let bad = image.iter().any(|v| !v.is_finite());
        for order in Order::ALL {
            let want = npz.a1(&format!("{case}_o{}", order.degree()));
            let interp = Interpolator::new(image.view(), order, NanPolicy::Renormalize);
            // the validity mask, sampled with the same spline
            let valid = image.mapv(|v| if v.is_finite() { 1.0 } else { 0.0 });
            let mask = Interpolator::new(valid.view(), order, NanPolicy::Propagate);
            for (i, (&y, &x)) in coords.row(0).iter().zip(coords.row(1)).enumerate() {
                let got = interp.sample(y, x);
                let (Some(cy), Some(cx)) = (clip_coordinate(y, ny), clip_coordinate(x, nx)) else {
                    assert!(got.is_nan());
                    continue;
                };
                compared += 1;
                if !order.needs_prefilter() || !bad {
                    if !want[i].is_nan() {
                        assert!(
                            same(got, want[i]),
                            "{case} {order} point {i}: {got} vs {}",
                            want[i]
                        );
                    }
                } else {
                    let nearest = image[[(cy + 0.5).floor() as usize, (cx + 0.5).floor() as usize]];
                    let m = mask.sample(y, x);
                    assert_eq!(
                        got.is_finite(),
                        nearest.is_finite() && m >= 0.5,
                        "{case} {order} point {i}: {got}, mask {m}"
                    );
                }
            }
        }
    }
    assert!(compared > 10_000);
}

/// Normalised convolution recovers a smooth image around NaN holes.
#[test]
fn renormalize_spline_fills_around_holes() {
    let (ny, nx) = (40, 50);
    let smooth =
        |y: f64, x: f64| 100.0 + 0.8 * y - 0.3 * x + 5.0 * (0.11 * x).sin() * (0.07 * y).cos();
    let clean = Array2::from_shape_fn((ny, nx), |(r, c)| smooth(r as f64, c as f64));
    let mut holed = clean.clone();
    let holes = [(10usize, 10usize), (10, 11), (25, 30), (0, 20), (39, 49)];
    for &(r, c) in &holes {
        holed[[r, c]] = f64::NAN;
    }
    let valid = holed.mapv(|v| if v.is_finite() { 1.0 } else { 0.0 });
    for order in [
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ] {
        let reference = Interpolator::new(clean.view(), order, NanPolicy::Propagate);
        let propagate = Interpolator::new(holed.view(), order, NanPolicy::Propagate);
        let renorm = Interpolator::new(holed.view(), order, NanPolicy::Renormalize);
        let mask = Interpolator::new(valid.view(), order, NanPolicy::Propagate);
        let (mut worst_near, mut worst_far, mut n_masked, mut n_far) = (0.0f64, 0.0f64, 0, 0);
        for i in 0..4000 {
            let y = -0.5 + (i as f64 * 0.618_033_988_75) % ny as f64;
            let x = -0.5 + (i as f64 * 0.414_213_562_37) % nx as f64;
            assert!(
                propagate.sample(y, x).is_nan(),
                "reproject: one NaN poisons the image"
            );
            let got = renorm.sample(y, x);
            let (cy, cx) = (
                clip_coordinate(y, ny).unwrap(),
                clip_coordinate(x, nx).unwrap(),
            );
            let nearest = ((cy + 0.5).floor() as usize, (cx + 0.5).floor() as usize);
            let dist = holes
                .iter()
                .map(|&(r, c)| (r as f64 - y).abs().max((c as f64 - x).abs()))
                .fold(f64::INFINITY, f64::min);
            if holes.contains(&nearest) {
                assert!(
                    got.is_nan(),
                    "{order}: nearest pixel is a hole at ({y}, {x})"
                );
                continue;
            }
            if mask.sample(y, x) < 0.5 {
                // the second condition only bites right next to a hole
                assert!(
                    got.is_nan() && dist < 1.0,
                    "{order}: ({y}, {x}) dist {dist}: {got}"
                );
                n_masked += 1;
                continue;
            }
            assert!(got.is_finite(), "{order}: ({y}, {x}) -> {got}");
            let err = (got - reference.sample(y, x)).abs();
            // Next to a hole the fill is an estimate; far from holes the IIR influence has
            // decayed.
            if dist >= 10.0 {
                worst_far = worst_far.max(err);
                n_far += 1;
            } else {
                worst_near = worst_near.max(err);
            }
        }
        eprintln!(
            "{order}: max |renormalized - hole-free| = {worst_near:.2e} within 10 px of a hole, \
             {worst_far:.2e} beyond ({n_far} points); {n_masked} points NaN by the mask rule"
        );
        assert!(n_far > 1500);
        assert!(
            n_masked < 40,
            "{order}: {n_masked} points lost to the mask threshold"
        );
        assert!(
            worst_near < 0.5,
            "{order}: near the holes the error is {worst_near}"
        );
        assert!(
            worst_far < 1e-3,
            "{order}: far from the holes the error is {worst_far}"
        );
    }
}

use super::*;

fn ramp(ny: usize, nx: usize) -> Vec<f64> {
    (0..ny * nx)
        .map(|i| (10 * (i / nx) + i % nx) as f64)
        .collect()
}

#[test]
fn mirror_matches_reflection_definition() {
    for len in 1..7isize {
        for idx in -20..20isize {
            let m = mirror_index(idx, len);
            assert!((0..len).contains(&m));
            if len > 1 {
                // reflect about 0 and len-1 by brute force
                let mut i = idx;
                while !(0..len).contains(&i) {
                    i = if i < 0 { -i } else { 2 * (len - 1) - i };
                }
                assert_eq!(m, i, "idx {idx} len {len}");
            }
        }
    }
}

#[test]
fn weights_sum_to_one_and_last_is_remainder() {
    for order in Order::ALL.into_iter().skip(1) {
        let d = order.degree();
        for i in 0..100 {
            let c = 3.0 + i as f64 * 0.0123;
            let w = spline_weights(order, c);
            let mut last = 1.0;
            for v in &w[..d] {
                last -= v;
            }
            assert_eq!(w[d], last);
            assert!((w[..=d].iter().sum::<f64>() - 1.0).abs() < 1e-14);
            assert!(w[d + 1..].iter().all(|&v| v == 0.0));
        }
    }
}

#[test]
fn edge_rule_table() {
    let n = 5;
    assert_eq!(clip_coordinate(-0.5, n), Some(0.0));
    assert_eq!(clip_coordinate(-0.5 - 1e-12, n), None);
    assert_eq!(clip_coordinate(-0.2, n), Some(0.0));
    assert_eq!(
        clip_coordinate(-0.0, n).map(f64::to_bits),
        Some(0.0f64.to_bits())
    );
    assert_eq!(clip_coordinate(4.0, n), Some(4.0));
    assert_eq!(clip_coordinate(4.5 - 1e-12, n), Some(4.0));
    assert_eq!(clip_coordinate(4.5, n), None);
    assert_eq!(clip_coordinate(f64::INFINITY, n), None);
    assert_eq!(clip_coordinate(f64::NEG_INFINITY, n), None);
    assert_eq!(clip_coordinate(0.3, 1), Some(0.0));
    assert_eq!(clip_coordinate(0.0, 0), None);
}

#[test]
fn nan_spreads_up_left_through_zero_weight_taps() {
    // §2.5.4: NaN at (2,2), identity: order 1 NaN at (1,1),(1,2),(2,1),(2,2).
    let mut v = ramp(5, 5);
    v[2 * 5 + 2] = f64::NAN;
    let p = Plane::full(&v, 5, 5).unwrap();
    let mut nan = vec![];
    for r in 0..5 {
        for c in 0..5 {
            if p.sample(Order::Bilinear, r as f64, c as f64).is_nan() {
                nan.push((r, c));
            }
            // renormalised: only the pixel itself (all other taps have weight 0)
            let s = p.sample_renormalized(Order::Bilinear, r as f64, c as f64);
            assert_eq!(s.is_nan(), (r, c) == (2, 2));
            if !s.is_nan() {
                assert_eq!(s, v[r * 5 + c]);
            }
        }
    }
    assert_eq!(nan, vec![(1, 1), (1, 2), (2, 1), (2, 2)]);
    // NaN at (2,3): rows 1-2 x cols 2-4 (col 4 via the mirrored tap)
    let mut v = ramp(5, 5);
    v[2 * 5 + 3] = f64::NAN;
    let p = Plane::full(&v, 5, 5).unwrap();
    let mut nan = vec![];
    for r in 0..5 {
        for c in 0..5 {
            if p.sample(Order::Bilinear, r as f64, c as f64).is_nan() {
                nan.push((r, c));
            }
        }
    }
    assert_eq!(nan, vec![(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (2, 4)]);
}

#[test]
fn renormalized_bilinear_rule() {
    let mut v = ramp(4, 4);
    v[5] = f64::NAN; // (1,1)
    let p = Plane::full(&v, 4, 4).unwrap();
    // point (0.25, 0.5): taps (0,0) (0,1) (1,0) (1,1), weights
    let (y, x) = (0.25, 0.5);
    let (wy0, wy1, wx0, wx1) = (0.75, 0.25, 0.5, 0.5);
    let num = v[0] * wy0 * wx0 + v[1] * wy0 * wx1 + v[4] * wy1 * wx0;
    let den = wy0 * wx0 + wy0 * wx1 + wy1 * wx0;
    assert!(p.sample(Order::Bilinear, y, x).is_nan());
    assert_eq!(p.sample_renormalized(Order::Bilinear, y, x), num / den);
    // all contributing taps NaN -> NaN
    let v = [f64::NAN, f64::NAN, 1.0, 2.0];
    let p = Plane::full(&v, 2, 2).unwrap();
    assert!(p.sample_renormalized(Order::Bilinear, 0.0, 0.5).is_nan());
    assert_eq!(p.sample_renormalized(Order::Bilinear, 1.0, 0.5), 1.5);
    // inf with zero weight does not poison; with weight it gives inf
    let v = [1.0, 2.0, f64::INFINITY, 4.0];
    let p = Plane::full(&v, 2, 2).unwrap();
    assert!(p.sample(Order::Bilinear, 0.0, 0.5).is_nan());
    assert_eq!(p.sample_renormalized(Order::Bilinear, 0.0, 0.5), 1.5);
    assert_eq!(
        p.sample_renormalized(Order::Bilinear, 0.5, 0.5),
        f64::INFINITY
    );
    // order 0 is unchanged
    assert_eq!(
        p.sample_renormalized(Order::NearestNeighbor, 0.6, 0.4),
        f64::INFINITY
    );
}

#[test]
fn renormalized_equals_propagate_where_finite() {
    let mut v: Vec<f64> = (0..63)
        .map(|i| ((i * 37 % 11) as f64).sqrt() - 1.3)
        .collect();
    v[20] = f64::NAN;
    v[44] = f64::NAN;
    let p = Plane::full(&v, 7, 9).unwrap();
    for i in 0..2000 {
        let y = -0.6 + (i as f64 * 0.61803398875) % 7.2;
        let x = -0.6 + (i as f64 * 0.41421356237) % 9.2;
        let a = p.sample(Order::Bilinear, y, x);
        let b = p.sample_renormalized(Order::Bilinear, y, x);
        if !a.is_nan() {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}

#[test]
fn windows_cover_taps_and_match_full_plane() {
    let (ny, nx) = (13, 11);
    let full: Vec<f64> = (0..ny * nx).map(|i| (i as f64 * 0.7).cos()).collect();
    let fp = Plane::full(&full, ny, nx).unwrap();
    let pts: Vec<(f64, f64)> = (0..400)
        .map(|i| {
            (
                -1.0 + (i as f64 * 0.377) % 15.0,
                -1.0 + (i as f64 * 0.591) % 13.0,
            )
        })
        .collect();
    for order in Order::ALL {
        for chunk in pts.chunks(7) {
            let ys: Vec<f64> = chunk.iter().map(|p| p.0).collect();
            let xs: Vec<f64> = chunk.iter().map(|p| p.1).collect();
            let Some(w) = covering_window(order, ny, nx, &ys, &xs) else {
                for (&y, &x) in ys.iter().zip(&xs) {
                    assert!(fp.sample(order, y, x).is_nan());
                }
                continue;
            };
            // copy the window
            let mut data = vec![];
            for r in w.rows.clone() {
                data.extend_from_slice(&full[r * nx + w.cols.start..r * nx + w.cols.end]);
            }
            let wp = Plane::new(&data, w.rows.clone(), w.cols.clone(), ny, nx).unwrap();
            // and the same window as a strided part of the full buffer
            let first = w.rows.start * nx + w.cols.start;
            let vp = Plane::with_stride(&full[first..], nx, w.rows.clone(), w.cols.clone(), ny, nx)
                .unwrap();
            for (&y, &x) in ys.iter().zip(&xs) {
                let a = fp.sample(order, y, x).to_bits();
                assert_eq!(a, wp.sample(order, y, x).to_bits());
                assert_eq!(a, vp.sample(order, y, x).to_bits());
                if let (Some(sy), Some(sx)) = (tap_span(order, y, ny), tap_span(order, x, nx)) {
                    assert!(w.rows.start <= sy.start && sy.end <= w.rows.end);
                    assert!(w.cols.start <= sx.start && sx.end <= w.cols.end);
                }
            }
        }
    }
}

#[test]
#[should_panic(expected = "not all inside the window")]
fn tap_outside_window_panics() {
    let data = [1.0, 2.0, 3.0, 4.0];
    let p = Plane::new(&data, 0..2, 0..2, 5, 5).unwrap();
    p.sample(Order::Bilinear, 1.5, 0.5);
}

#[test]
fn constructor_checks() {
    let d = [0.0; 6];
    assert!(Plane::new(&d, 0..2, 0..3, 2, 3).is_ok());
    assert!(Plane::new(&d, 0..2, 0..2, 2, 3).is_err());
    assert!(Plane::new(&d, 0..3, 0..2, 2, 3).is_err());
    assert!(Plane::with_stride(&d, 4, 0..2, 0..2, 2, 3).is_ok());
    assert!(Plane::with_stride(&d, 1, 0..2, 0..2, 2, 3).is_err());
    let a = ndarray::Array2::from_shape_fn((3, 4), |(r, c)| (10 * r + c) as f64);
    assert!(Plane::from_view(a.t(), 0, 0, 4, 3).is_err());
    let p = Plane::from_view(a.slice(ndarray::s![1..3, ..]), 1, 0, 3, 4).unwrap();
    assert_eq!(p.rows(), 1..3);
    assert_eq!(p.get(2, 3), Some(23.0));
    assert_eq!(p.get(0, 3), None);
    assert_eq!(p.sample(Order::Bilinear, 1.5, 0.5), 15.5);
    assert!(Plane::with_stride(&d, 0, 0..0, 0..0, MAX_SIDE, 1).is_ok());
    assert!(Plane::with_stride(&d, 0, 0..0, 0..0, MAX_SIDE + 1, 1).is_err());
    let e: [f64; 0] = [];
    let p = Plane::full(&e, 0, 0).unwrap();
    assert!(p.sample(Order::Bicubic, 0.0, 0.0).is_nan());
}

#[test]
fn order0_returns_positive_zero_and_rounds_ties_up() {
    let v = [-0.0, 1.0, 2.0, 3.0];
    let p = Plane::full(&v, 1, 4).unwrap();
    assert_eq!(
        p.sample(Order::NearestNeighbor, 0.0, 0.0).to_bits(),
        0.0f64.to_bits()
    );
    assert_eq!(p.sample(Order::NearestNeighbor, 0.0, 0.5), 1.0);
    assert_eq!(p.sample(Order::NearestNeighbor, 0.0, 2.5), 3.0);
    assert_eq!(p.sample(Order::NearestNeighbor, 0.0, 2.4999), 2.0);
}

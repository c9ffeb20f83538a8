//! The device spline prefilter (`kernels/spline.cu`) compiled as host C++
//! (`kernels/host/spline_harness.cpp`, `-ffp-contract=off`) against the CPU's
//! `interp::spline::prefilter`: the same coefficients, bit for bit, for orders 2-5, planes of
//! one row or column, 2×2, odd shapes and larger ones (lines shorter than the kernel's chunk
//! of loads, whole chunks and tails), with negative values, and with a NaN.
//! Needs a C++ compiler (fails in CI and under `REPROJECT_RS_REQUIRE_HOST_KERNELS=1` without
//! one, as the other host-kernel tests).

use std::path::PathBuf;
use std::process::Command;

use ndarray::Array2;
use reproject::interp::spline::{filter_gain, filter_poles, prefilter, spline_pole_params};
use reproject::interp::Order;

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The harness, built once for the tests of this file (they run at once: a second build
/// would rewrite the binary while the first test runs it).
fn harness() -> Option<PathBuf> {
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_harness).clone()
}

fn build_harness() -> Option<PathBuf> {
    let cxx = common::host_cxx("gpu_host_spline")?;
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rp_spline_harness");
    let res = Command::new(&cxx)
        .arg("-O2")
        .args(common::HOST_KERNEL_FLAGS)
        .args(["-pthread", "-I"])
        .arg(root().join("kernels"))
        .arg(root().join("kernels/host/spline_harness.cpp"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
    assert!(
        res.status.success(),
        "the host build of the spline kernel failed:\n{}",
        String::from_utf8_lossy(&res.stderr)
    );
    Some(out)
}

/// The plane filtered by the host build of the device kernel.
/// `mode`: the harness's (`lines`: one line after another; `warps`: the rows by warps of host
/// threads, as the device streams them).
fn device_filter(
    bin: &PathBuf,
    plane: &Array2<f64>,
    order: Order,
    mode: &str,
    tag: &str,
) -> Vec<f64> {
    let (ny, nx) = plane.dim();
    let poles = filter_poles(order);
    let mut bytes = Vec::new();
    for v in [ny as i64, nx as i64, poles.len() as i64] {
        bytes.extend(v.to_le_bytes());
    }
    let mut doubles = vec![filter_gain(poles)];
    doubles.extend(spline_pole_params(order, ny));
    doubles.extend(spline_pole_params(order, nx));
    doubles.extend(plane.iter());
    for v in doubles {
        bytes.extend(v.to_le_bytes());
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (input, output) = (
        dir.join(format!("spline-in-{tag}")),
        dir.join(format!("spline-out-{tag}")),
    );
    std::fs::write(&input, bytes).unwrap();
    let status = Command::new(bin)
        .arg(&input)
        .arg(&output)
        .arg(mode)
        .status()
        .unwrap();
    assert!(status.success(), "{tag}: the harness failed: {status}");
    std::fs::read(&output)
        .unwrap()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// The device's coefficients are the CPU's bit for bit (any NaN matching any NaN: the two
/// sides' NaN payloads may differ).
fn assert_same_coefficients(cpu: &Array2<f64>, device: &[f64], tag: &str) {
    let bits = |v: f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
    let differ = cpu
        .iter()
        .zip(device)
        .filter(|(a, b)| bits(**a) != bits(**b))
        .count();
    assert_eq!(cpu.len(), device.len(), "{tag}: sizes");
    assert_eq!(differ, 0, "{tag}: {differ} coefficients differ");
}

#[test]
fn the_device_prefilter_gives_the_cpu_coefficients_bit_for_bit() {
    let Some(bin) = harness() else { return };
    // Lines shorter than a chunk of the device's loads, whole chunks and tails.
    let shapes = [
        (1, 9),
        (9, 1),
        (2, 2),
        (3, 5),
        (17, 23),
        (64, 47),
        (131, 70),
        (33, 16),
        (70, 131),
        // Lines whose last chunk of the anticausal pass (elements 1 + 32 j ..) is whole (33,
        // 65, 97), or one element whose neighbour is the previous chunk's checkpoint (34, 66),
        // or one short (32, 64).
        (34, 65),
        (65, 34),
        (33, 97),
        (97, 66),
        (32, 64),
    ];
    let orders = [
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ];
    let mut compared = 0;
    for (ny, nx) in shapes {
        for order in orders {
            // A NaN spreads along its row and column, and then over the whole plane (each
            // line's initialisation sums the whole line): planes without one carry the
            // comparison of values, a plane with one checks that it spreads as on the CPU.
            for with_nan in [false, true] {
                let mut plane = Array2::from_shape_fn((ny, nx), |(y, x)| {
                    ((y * 31 + x * 17) % 23) as f64 * 1.7 - 15.0 + (x as f64 * 0.37).sin()
                });
                if with_nan {
                    plane[[ny / 2, nx / 3]] = f64::NAN;
                }
                let mut cpu = plane.clone();
                prefilter(cpu.view_mut(), order);
                if !with_nan {
                    assert!(
                        cpu.iter().all(|v| v.is_finite()),
                        "{ny}x{nx} {order:?}: not finite"
                    );
                }
                // Line by line, and the rows by warps as on the device (lanes without a row
                // in the last warp of 131 and 33 rows, chunks and tails of 70 and 131).
                for mode in ["lines", "warps"] {
                    let tag = format!("{ny}x{nx}-{order:?}-{with_nan}-{mode}");
                    let device = device_filter(&bin, &plane, order, mode, &tag);
                    assert_same_coefficients(&cpu, &device, &tag);
                    compared += usize::from(!with_nan) * cpu.len();
                }
            }
        }
    }
    assert!(compared > 10_000);
}

#[test]
fn long_lines_stop_the_initial_sum_early_with_the_cpu_bits() {
    let Some(bin) = harness() else { return };
    // Lines long enough that z^i underflows to 0 within them for every order (about 420-890
    // terms), so the device's initialisation stops early where it can: along the rows, along
    // the columns, and in warps with spare lanes. The lines of the long axis are smooth
    // (the sum stops), zero for their first 1000 elements (the sum is still 0 there: it goes
    // on), alternately negative zeros, or zero until a few terms before z^i underflows. Planes with one value that is not finite (an
    // infinity or a NaN past where the sum stops, an infinity at a line's first element)
    // check that such a line ends all NaN as on the CPU (and then the whole plane: the other
    // axis spreads it).
    // The first term whose z^i (of the first pole) is 0: the sum stops after it.
    let underflow = |order: Order| {
        let z = filter_poles(order)[0];
        let (mut z_i, mut i) = (z, 1);
        while z_i != 0.0 {
            z_i *= z;
            i += 1;
        }
        i
    };
    let value = |line: usize, i: usize, order: Order| -> f64 {
        let smooth = 3.0 + (i as f64 * 0.013).sin() * 2.0 + line as f64 * 0.1;
        match line % 4 {
            1 if i < 1000 => 0.0,
            2 if i.is_multiple_of(2) => -0.0,
            // The sum's last terms are subnormal: stopping a term too early changes its bits.
            3 if i + 4 < underflow(order) => 0.0,
            _ => smooth,
        }
    };
    let orders = [
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ];
    let specials = [
        None,
        Some((900, f64::INFINITY)),
        Some((1050, f64::NAN)),
        Some((0, f64::NEG_INFINITY)),
    ];
    // Planes of one line (the other axis leaves them as they are, so the last bits of the
    // sum show: one of each kind, `first` being its kind), and planes of several.
    let planes = (0..4)
        .flat_map(|first| [(1, 1500, first), (1500, 1, first)])
        .chain([(6, 1500, 0), (1400, 6, 0), (40, 1100, 0)]);
    for (ny, nx, first) in planes {
        for special in specials {
            if special.is_some() && ny.min(nx) == 1 {
                continue;
            }
            for order in orders {
                let plane = Array2::from_shape_fn((ny, nx), |(y, x)| {
                    let (line, i) = if nx >= ny {
                        (y + first, x)
                    } else {
                        (x + first, y)
                    };
                    match special {
                        Some((at, v)) if line == 4 && i == at => v,
                        _ => value(line, i, order),
                    }
                });
                let mut cpu = plane.clone();
                prefilter(cpu.view_mut(), order);
                let finite = cpu.iter().filter(|v| v.is_finite()).count();
                if special.is_none() {
                    assert_eq!(finite, cpu.len(), "{ny}x{nx} {order:?}");
                } else {
                    assert!(finite < cpu.len(), "{ny}x{nx} {order:?} {special:?}");
                }
                for mode in ["lines", "warps"] {
                    let tag = format!("long-{ny}x{nx}-{order:?}-{special:?}-{mode}");
                    let device = device_filter(&bin, &plane, order, mode, &tag);
                    assert_same_coefficients(&cpu, &device, &tag);
                }
            }
        }
    }
}

#[test]
fn the_lanes_of_a_warp_stop_the_initial_sum_apart() {
    let Some(bin) = harness() else { return };
    // Rows only (no column pass to mix them), 40 of them: the first warp's lanes stop the
    // sum at different chunks or go on (zero-led rows), the second warp has spare lanes.
    // Each row must be the CPU's filter of that row alone.
    let (ny, nx) = (40, 1300);
    for order in [Order::Bicubic, Order::Quintic] {
        let plane = Array2::from_shape_fn((ny, nx), |(y, x)| {
            let smooth = 2.0 + (x as f64 * 0.021 + y as f64).cos();
            match y % 3 {
                1 if x < 700 + 10 * y => 0.0,
                2 if x < 300 + 5 * y => 1e-300,
                _ => smooth,
            }
        });
        let mut cpu = plane.clone();
        for mut row in cpu.rows_mut() {
            let mut line = row.to_owned().insert_axis(ndarray::Axis(0));
            prefilter(line.view_mut(), order);
            row.assign(&line.row(0));
        }
        let tag = format!("rows-{order:?}");
        let device = device_filter(&bin, &plane, order, "rows-by-warps", &tag);
        assert_same_coefficients(&cpu, &device, &tag);
    }
}

#[test]
fn every_line_length_up_to_three_chunks_gives_the_cpu_bits() {
    let Some(bin) = harness() else { return };
    // Each pole's passes take a line in chunks of 32 elements after the first (elements
    // 1 + 32 j ..): the causal pass stores the last of each whole chunk, and the anticausal
    // pass takes the chunks last first, from the checkpoint before each. Square planes of
    // every side from 2 to 99 give lines ending at every position of a chunk, along the
    // columns and along the rows (by warps, the last one with spare lanes).
    for n in 2..100 {
        let plane = Array2::from_shape_fn((n, n), |(y, x)| {
            ((y * 7 + x * 13) % 19) as f64 - 9.0 + (y as f64 * 0.29 - x as f64 * 0.11).cos()
        });
        for order in [Order::Bicubic, Order::Quintic] {
            let mut cpu = plane.clone();
            prefilter(cpu.view_mut(), order);
            assert!(cpu.iter().all(|v| v.is_finite()), "{n} {order:?}");
            for mode in ["lines", "warps"] {
                let tag = format!("side-{n}-{order:?}-{mode}");
                let device = device_filter(&bin, &plane, order, mode, &tag);
                assert_same_coefficients(&cpu, &device, &tag);
            }
        }
    }
}

#[test]
fn the_columns_read_device_samples_with_the_cpu_bits() {
    let Some(bin) = harness() else { return };
    // The column pass reads its values from the samples of a device input (`RpSource`: the
    // values kernel skipped), of each 4- and 8-byte type, in either byte order, with and
    // without the float32 rounding of integer input; the rows then filter the plane it wrote.
    // Integers near 2^24 are not all float32 values, so the rounding shows; a one-row plane's
    // column pass only copies its values, a one-column plane's reads its only column.
    let shapes = [(70, 131), (33, 40), (1, 9), (9, 1), (2, 2)];
    for (ny, nx) in shapes {
        for (type_name, integer) in [("f32", false), ("f64", false), ("i32", true), ("i64", true)] {
            let plane = Array2::from_shape_fn((ny, nx), |(y, x)| {
                let k = ((y * 31 + x * 17) % 23) as f64 - 11.0;
                if integer {
                    16_777_217.0 + 2.0 * k
                } else {
                    k * 1.37 + (x as f64 * 0.41).sin() / 3.0
                }
            });
            for big_endian in [false, true] {
                for rounded in [false, true] {
                    let read = |v: f64| {
                        let v = match type_name {
                            "f32" => v as f32 as f64,
                            "i32" => v as i32 as f64,
                            "i64" => v as i64 as f64,
                            _ => v,
                        };
                        if rounded {
                            v as f32 as f64
                        } else {
                            v
                        }
                    };
                    for order in [Order::Bicubic, Order::Quintic] {
                        let mut cpu = plane.mapv(read);
                        prefilter(cpu.view_mut(), order);
                        assert!(cpu.iter().all(|v| v.is_finite()));
                        let mode = format!(
                            "from-{type_name}{}{}",
                            if big_endian { "-be" } else { "" },
                            if rounded { "-f32" } else { "" }
                        );
                        let tag = format!("{ny}x{nx}-{order:?}-{mode}");
                        let device = device_filter(&bin, &plane, order, &mode, &tag);
                        assert_same_coefficients(&cpu, &device, &tag);
                    }
                }
            }
        }
    }
}

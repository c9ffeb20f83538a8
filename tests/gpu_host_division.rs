//! `rp_div_const` (`kernels/common.cuh`), the spline weights' division by a constant on the
//! device, compiled as host C++ (`kernels/host/division_harness.cpp`, `-ffp-contract=off`)
//! and compared bit for bit with the division for the weights' divisors (6, 12, 24, 120), over
//! dividends from its whole promised range and from the weights' own range. The harness also
//! counts where a plain product by the reciprocal rounds otherwise, so the comparison is seen
//! to tell two roundings apart.
//! Needs a C++ compiler (fails in CI and under `REPROJECT_RS_REQUIRE_HOST_KERNELS=1` without
//! one, as the other host-kernel tests).

use std::path::PathBuf;
use std::process::Command;

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn division_by_a_constant_gives_the_divisions_bits() {
    let Some(cxx) = common::host_cxx("gpu_host_division") else {
        return;
    };
    let bin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rp_division_harness");
    let built = Command::new(&cxx)
        .arg("-O2")
        .args(common::HOST_KERNEL_FLAGS)
        .arg("-I")
        .arg(root().join("kernels"))
        .arg(root().join("kernels/host/division_harness.cpp"))
        .arg("-o")
        .arg(&bin)
        .output()
        .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
    assert!(
        built.status.success(),
        "the host build of rp_div_const failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let count = 2_000_000;
    let run = Command::new(&bin)
        .args(["20261128", &count.to_string()])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "rp_div_const differs from the division:\n{report}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let lines: Vec<Vec<f64>> = report
        .lines()
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines.len(), 4, "one line per divisor:\n{report}");
    for line in &lines {
        let (divisor, checked, mismatches, product_differs) = (line[0], line[1], line[2], line[3]);
        assert_eq!(checked, count as f64, "divisor {divisor}");
        assert_eq!(mismatches, 0.0, "divisor {divisor}");
        // a * (1 / d) rounds otherwise for a good share of dividends: the comparison sees it.
        assert!(
            product_differs > checked / 20.0,
            "divisor {divisor}: the product by the reciprocal differed only {product_differs} times"
        );
    }
}

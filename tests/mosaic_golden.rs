//! Mosaics against astropy reproject 0.21's `reproject_and_coadd` (fixtures made by
//! `scripts/make_mosaic_fixtures.py`): every combine function, with and without weights and
//! background matching, TAN and non-TAN inputs with a frame change, cubes, a NaN blank value.
//! Values within 1e-6 relative, footprints identical.

use ndarray::ArrayD;
use reproject::mosaic::coadd::reproject_and_coadd;

mod mosaic_fixtures;

#[test]
fn mosaics_match_reproject_and_coadd() {
    let (cases, mut npz) = mosaic_fixtures::load();
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in &cases {
        let (name, wcs_out, shape_out) = (&case.name, &case.wcs_out, &case.shape_out);
        let (images, weights) = case.sources();
        for run in &case.runs {
            runs += 1;
            let run_name = run["name"].as_str().unwrap();
            let inputs = case.inputs(&images, &weights, run);
            let options = mosaic_fixtures::options(run);
            let mosaic = reproject_and_coadd(&inputs, wcs_out, shape_out, &options).unwrap();
            let want: ArrayD<f64> = npz.by_name(&format!("{name}_{run_name}_data")).unwrap();
            let want_fp: ArrayD<f64> = npz
                .by_name(&format!("{name}_{run_name}_footprint"))
                .unwrap();
            assert_eq!(mosaic.data.shape(), want.shape(), "{name} {run_name}");
            let scale = want
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, v| m.max(v.abs()));
            let mut bad_values = 0;
            let mut worst = 0.0f64;
            let mut bad_fp = 0;
            for ((v, w), (f, wf)) in mosaic
                .data
                .iter()
                .zip(&want)
                .zip(mosaic.footprint.iter().zip(&want_fp))
            {
                if (f - wf).abs() > 1e-9 * wf.abs().max(1.0) {
                    bad_fp += 1;
                }
                if v.is_nan() && w.is_nan() {
                    continue;
                }
                let rel = (v - w).abs() / w.abs().max(1e-3 * scale);
                worst = worst.max(if rel.is_nan() { f64::INFINITY } else { rel });
                if rel.is_nan() || rel > 1e-6 {
                    bad_values += 1;
                }
            }
            eprintln!("{name:>10} {run_name:<16} worst relative difference {worst:.2e}");
            if bad_values > 0 || bad_fp > 0 {
                failures.push(format!(
                    "{name} {run_name}: {bad_values} values beyond 1e-6 (worst {worst:.2e}), \
                     {bad_fp} footprint differences"
                ));
            }
        }
    }
    assert!(runs >= 30, "{runs} runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

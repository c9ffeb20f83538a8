//! Whole reprojections through the engine alone (in-memory float32 input, preallocated
//! float64 output and footprint, default options: round trip on), serial and on all cores.
//!
//! * `job_a_2048`: 2048×2048 TAN → TAN, bilinear; 1″ pixels, output rotated 30° with a CRPIX
//!   offset of (3.7, −2.2) px and a CRVAL shift of (2e-3, −1e-3) deg; output shape = input
//!   shape (about 84.5 % coverage). The job A is 4096²; 2048² keeps this bench short,
//!   `scripts/bench_peers.sh` runs the full size against the peers.
//! * `job_b_2048`: 2048×2048 Galactic CAR (0.001°) → ICRS TAN (0.001°) centred on the
//!   Galactic centre, bilinear (about 84 % coverage).
//! * `job_c_2048`: job A with bicubic interpolation (includes the spline prefilter).
//! * `job_d_2048`: non-celestial PIXX/PIXY planes, output pixels 1.09× larger (about 84 %
//!   coverage), bilinear: the separable path (one transform per output row and column).
//! * `job_e_2048`: non-celestial PIXX/PIXY planes, output rotated 30° (about 84.5 %
//!   coverage), bilinear: the per-pixel linear-plane path.
//! * `job_f_2048`: job A with a TAN-SIP input (order 3, up to about 3 px of distortion at the
//!   corners), bilinear: the unit-vector path and SIP's world → pixel iteration, run for
//!   several pixels of a row at once.
//! * `job_g_2048`: job A with a TPV input (degree 3, about 1 px of distortion at the
//!   corners), bilinear: WCSLIB's TPV inverse, run for several pixels of a row at once.
//!
//! * `small_64`: a 64² cutout of job A, bilinear and bicubic: a call's fixed costs.
//!
//! Run with `cargo bench --bench reproject`; throughput is in output pixels.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use ndarray::{Array2, ArrayD, IxDyn};
use reproject::engine::{reproject_interp_into, Options, Parallel};
use reproject::interp::Order;
use reproject::io::{ArraySource, ImageSource};
use reproject::wcs::Wcs;

const N: usize = 2048;

/// FITS header text from `KEY = value` pairs, one 80-character card each.
fn header(cards: &[(&str, String)]) -> String {
    cards
        .iter()
        .map(|(k, v)| format!("{:<80}", format!("{k:<8}= {v}")))
        .collect()
}

/// Job A's input and output headers for an `n`×`n` image.
fn tan_pair(n: usize) -> (String, String) {
    let s = 1.0 / 3600.0;
    let c = (n as f64) / 2.0 + 0.5;
    let common = |crpix1: f64, crpix2: f64, ra: f64, dec: f64| {
        vec![
            ("NAXIS", "2".to_string()),
            ("NAXIS1", n.to_string()),
            ("NAXIS2", n.to_string()),
            ("CTYPE1", "'RA---TAN'".to_string()),
            ("CTYPE2", "'DEC--TAN'".to_string()),
            ("CRPIX1", format!("{crpix1:.6}")),
            ("CRPIX2", format!("{crpix2:.6}")),
            ("CRVAL1", format!("{ra:.9}")),
            ("CRVAL2", format!("{dec:.9}")),
            ("RADESYS", "'ICRS'".to_string()),
        ]
    };
    let mut cin = common(c, c, 150.0, 30.0);
    cin.push(("CDELT1", format!("{:.15E}", -s)));
    cin.push(("CDELT2", format!("{s:.15E}")));
    let mut cout = common(c + 3.7, c - 2.2, 150.002, 29.999);
    let (sin, cos) = 30f64.to_radians().sin_cos();
    cout.push(("CD1_1", format!("{:.15E}", -s * cos)));
    cout.push(("CD1_2", format!("{:.15E}", s * sin)));
    cout.push(("CD2_1", format!("{:.15E}", s * sin)));
    cout.push(("CD2_2", format!("{:.15E}", s * cos)));
    (header(&cin), header(&cout))
}

/// Job A's headers with SIP distortion (order 3) on the input.
fn sip_pair(n: usize) -> (String, String) {
    let (tan_in, tan_out) = tan_pair(n);
    let sip = header(&[
        ("A_ORDER", "3".to_string()),
        ("B_ORDER", "3".to_string()),
        ("A_2_0", "2.0E-6".to_string()),
        ("A_0_2", "-1.0E-6".to_string()),
        ("A_1_1", "5.0E-7".to_string()),
        ("A_3_0", "1.0E-10".to_string()),
        ("B_2_0", "-3.0E-7".to_string()),
        ("B_0_2", "1.5E-6".to_string()),
        ("B_1_1", "4.0E-7".to_string()),
        ("B_0_3", "-1.0E-10".to_string()),
    ]);
    // Same-length replacements keep the 80-character cards.
    let tan_in = tan_in
        .replace("'RA---TAN'    ", "'RA---TAN-SIP'")
        .replace("'DEC--TAN'    ", "'DEC--TAN-SIP'");
    assert!(Wcs::from_header_str(&(tan_in.clone() + &sip))
        .unwrap()
        .has_distortion());
    (tan_in + &sip, tan_out)
}

/// Job A's headers with TPV distortion (degree 3) on the input.
fn tpv_pair(n: usize) -> (String, String) {
    let (tan_in, tan_out) = tan_pair(n);
    let pv = header(&[
        ("PV1_1", "1.0".to_string()),
        ("PV1_4", "1.0E-3".to_string()),
        ("PV1_5", "-5.0E-4".to_string()),
        ("PV1_7", "-2.0E-3".to_string()),
        ("PV2_1", "1.0".to_string()),
        ("PV2_5", "1.5E-3".to_string()),
        ("PV2_6", "4.0E-4".to_string()),
        ("PV2_9", "1.0E-3".to_string()),
    ]);
    // Same-length replacements keep the 80-character cards; TPV takes the scale in CD (its
    // polynomials act on degrees), not in CDELT.
    let tan_in = tan_in
        .replace("'RA---TAN'", "'RA---TPV'")
        .replace("'DEC--TAN'", "'DEC--TPV'")
        .replace("CDELT1  =", "CD1_1   =")
        .replace("CDELT2  =", "CD2_2   =");
    let wcs = Wcs::from_header_str(&(tan_in.clone() + &pv)).unwrap();
    assert!(wcs.params().tpv.is_some() && wcs.has_distortion());
    (tan_in + &pv, tan_out)
}

/// Non-celestial PIXX/PIXY input and output headers, the output scaled by `scale` and
/// rotated by `rot_deg` about the centre.
fn pixel_pair(n: usize, scale: f64, rot_deg: f64) -> (String, String) {
    let c = (n as f64 + 1.0) / 2.0;
    let plane = |pc: [f64; 4], cdelt: f64| {
        header(&[
            ("CTYPE1", "'PIXX'".to_string()),
            ("CTYPE2", "'PIXY'".to_string()),
            ("CRPIX1", format!("{c}")),
            ("CRPIX2", format!("{c}")),
            ("CRVAL1", "0.0".to_string()),
            ("CRVAL2", "0.0".to_string()),
            ("CDELT1", format!("{cdelt}")),
            ("CDELT2", format!("{cdelt}")),
            ("PC1_1", format!("{}", pc[0])),
            ("PC1_2", format!("{}", pc[1])),
            ("PC2_1", format!("{}", pc[2])),
            ("PC2_2", format!("{}", pc[3])),
        ])
    };
    let (s, co) = rot_deg.to_radians().sin_cos();
    (
        plane([1.0, 0.0, 0.0, 1.0], 1.0),
        plane([co, -s, s, co], scale),
    )
}

/// Job B's input (Galactic CAR) and output (ICRS TAN at the Galactic centre) headers.
fn car_to_tan(n: usize) -> (String, String) {
    let c = format!("{:.1}", (n as f64) / 2.0 + 0.5);
    let base = |t1: &str, t2: &str, lon: &str, lat: &str| {
        vec![
            ("NAXIS", "2".to_string()),
            ("NAXIS1", n.to_string()),
            ("NAXIS2", n.to_string()),
            ("CTYPE1", format!("'{t1}'")),
            ("CTYPE2", format!("'{t2}'")),
            ("CRPIX1", c.clone()),
            ("CRPIX2", c.clone()),
            ("CRVAL1", lon.to_string()),
            ("CRVAL2", lat.to_string()),
            ("CDELT1", "-0.001".to_string()),
            ("CDELT2", "0.001".to_string()),
        ]
    };
    let cin = base("GLON-CAR", "GLAT-CAR", "0.0", "0.0");
    let mut cout = base("RA---TAN", "DEC--TAN", "266.404988", "-28.936175");
    cout.push(("RADESYS", "'ICRS'".to_string()));
    (header(&cin), header(&cout))
}

/// A float32 sky-like image: smooth background, a grid of Gaussian sources, deterministic
/// noise.
fn image(n: usize) -> Array2<f32> {
    Array2::from_shape_fn((n, n), |(y, x)| {
        let (fx, fy) = (x as f32, y as f32);
        let (dx, dy) = ((fx % 64.0) - 32.0, (fy % 64.0) - 32.0);
        let noise = (((y * 7919 + x * 104_729) % 1009) as f32) / 1009.0 - 0.5;
        100.0 + 0.01 * fx - 0.005 * fy + 500.0 * (-(dx * dx + dy * dy) / 8.0).exp() + noise
    })
}

/// Times `reproject_interp_into` of `job` (input, its WCS, the output WCS) at `order` on
/// `parallel`'s threads (the other options their defaults), as `label` of `group`.
fn bench_call(
    group: &mut BenchmarkGroup<'_, WallTime>,
    label: &str,
    (source, wcs_in, wcs_out): (&dyn ImageSource, &Wcs, &Wcs),
    (order, parallel): (Order, Parallel),
    out: &mut ArrayD<f64>,
    footprint: &mut ArrayD<f64>,
) {
    let options = &Options {
        order,
        parallel,
        ..Options::default()
    };
    group.bench_function(label, |b| {
        b.iter(|| {
            reproject_interp_into(
                source,
                wcs_in,
                wcs_out,
                out.view_mut(),
                footprint.view_mut(),
                options,
            )
            .unwrap()
        })
    });
}

fn bench_jobs(c: &mut Criterion) {
    let data = image(N);
    let source = ArraySource::new(data.view().into_dyn()).unwrap();
    let jobs = [
        ("job_a_2048", tan_pair(N), Order::Bilinear),
        ("job_b_2048", car_to_tan(N), Order::Bilinear),
        ("job_c_2048", tan_pair(N), Order::Bicubic),
        ("job_d_2048", pixel_pair(N, 1.09, 0.0), Order::Bilinear),
        ("job_e_2048", pixel_pair(N, 1.0, 30.0), Order::Bilinear),
        ("job_f_2048", sip_pair(N), Order::Bilinear),
        ("job_g_2048", tpv_pair(N), Order::Bilinear),
    ];
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[N, N]));
    let mut footprint = ArrayD::<f64>::zeros(IxDyn(&[N, N]));
    for (name, (h_in, h_out), order) in jobs {
        let wcs_in = Wcs::from_header_str(&h_in).unwrap();
        let wcs_out = Wcs::from_header_str(&h_out).unwrap();
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements((N * N) as u64));
        group.sample_size(10);
        group.warm_up_time(std::time::Duration::from_secs(1));
        group.measurement_time(std::time::Duration::from_secs(4));
        for (label, parallel) in [
            ("serial", Parallel::Serial),
            ("all_cores", Parallel::AllCores),
        ] {
            let job: (&dyn ImageSource, _, _) = (&source, &wcs_in, &wcs_out);
            let how = (order, parallel);
            bench_call(&mut group, label, job, how, &mut out, &mut footprint);
        }
        group.finish();
        // Checked where the job ran (a name filter may skip it).
        let covered = footprint.sum() / footprint.len() as f64;
        assert!(
            covered == 0.0 || (0.80..0.90).contains(&covered),
            "{name}: coverage {covered:.4}, expected about 0.84"
        );
        footprint.fill(0.0);
    }
}

/// Small jobs (a 64² cutout, job A's geometry), where a call's fixed costs show: planning,
/// the threads, the spline prefilter's setup. Serial is reproject's default.
fn bench_small_jobs(c: &mut Criterion) {
    const SMALL: usize = 64;
    let data = image(SMALL);
    let source = ArraySource::new(data.view().into_dyn()).unwrap();
    let (h_in, h_out) = tan_pair(SMALL);
    let wcs_in = Wcs::from_header_str(&h_in).unwrap();
    let wcs_out = Wcs::from_header_str(&h_out).unwrap();
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[SMALL, SMALL]));
    let mut footprint = out.clone();
    let mut group = c.benchmark_group("small_64");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(2));
    for (label, order, parallel) in [
        ("bilinear_serial", Order::Bilinear, Parallel::Serial),
        ("bicubic_serial", Order::Bicubic, Parallel::Serial),
        ("bicubic_2_threads", Order::Bicubic, Parallel::Threads(2)),
    ] {
        let job: (&dyn ImageSource, _, _) = (&source, &wcs_in, &wcs_out);
        let how = (order, parallel);
        bench_call(&mut group, label, job, how, &mut out, &mut footprint);
    }
    group.finish();
}

criterion_group!(benches, bench_jobs, bench_small_jobs);
criterion_main!(benches);

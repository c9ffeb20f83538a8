//! SIP and TPV distortion cost: pixel -> world and world -> pixel on 1M points.
//!
//! The WCS is astropy's `siponly.hdr` (the vectors' `extra_siponly`: TAN-SIP, order 4, 2048 x 4096),
//! with its SIP removed for the undistorted baseline, and the same header as TPV (`tpvonly`).
//! Run with `cargo bench --bench distortion`; ns/point = 1e9 / (elements per second).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reproject::wcs::Wcs;

/// The WCS cards of siponly.hdr (TAN-SIP, A/B/AP/BP of order 4).
const SIPONLY: &str = "\
NAXIS   =                    2\n\
NAXIS1  =                 2048\n\
NAXIS2  =                 4096\n\
CRVAL1  =     274.806945708898\n\
CRVAL2  =    -25.9746476963393\n\
CRPIX1  =             -3925.16\n\
CRPIX2  =              4360.23\n\
CTYPE1  = 'RA---TAN-SIP'\n\
CTYPE2  = 'DEC--TAN-SIP'\n\
CUNIT1  = 'deg     '\n\
CUNIT2  = 'deg     '\n\
CD1_1   = 0.000286102658601581\n\
CD1_2   = -6.28816628331811E-07\n\
CD2_1   = -5.77207018114522E-06\n\
CD2_2   = -0.000281525256171892\n\
EQUINOX =                2000.\n\
RADECSYS= 'ICRS    '\n\
A_ORDER =                    4\n\
A_0_2   = -6.88320772436348E-08\n\
A_0_3   = -3.9165520771852E-11\n\
A_0_4   = -1.37347903340862E-15\n\
A_1_1   = 1.47451309698268E-06\n\
A_1_2   = -5.47895978084324E-11\n\
A_1_3   = 4.32571760220798E-15\n\
A_2_0   = -4.61014380203131E-06\n\
A_2_1   = -3.25701227339755E-10\n\
A_2_2   = 5.87253012315133E-15\n\
A_3_0   = 5.10801798928538E-10\n\
A_3_1   = 2.40245891539354E-14\n\
A_4_0   = -2.24100384816689E-14\n\
B_ORDER =                    4\n\
B_0_2   = 2.10619568626298E-07\n\
B_0_3   = -5.06225421390773E-12\n\
B_0_4   = 5.17539616845577E-16\n\
B_1_1   = 5.91465601878924E-08\n\
B_1_2   = -5.12374109506712E-11\n\
B_1_3   = -1.85594858389364E-15\n\
B_2_0   = -6.29264904991201E-06\n\
B_2_1   = -6.77151075883653E-11\n\
B_2_2   = 3.33079437463431E-15\n\
B_3_0   = 8.62409953895856E-10\n\
B_3_1   = 4.00773353822356E-15\n\
B_4_0   = -4.38536973214709E-14\n\
AP_ORDER=                    4\n\
AP_0_1  = -8.35636338195056E-06\n\
AP_0_2  = 6.41919370738511E-08\n\
AP_0_3  = 3.82575929801279E-11\n\
AP_0_4  = 1.34695941598154E-15\n\
AP_1_0  = 5.96496231342059E-06\n\
AP_1_1  = -1.47551597085589E-06\n\
AP_1_2  =  5.9682183111397E-11\n\
AP_1_3  = -4.07431356348696E-15\n\
AP_2_0  = 4.63912798241099E-06\n\
AP_2_1  =  3.2299095062767E-10\n\
AP_2_2  = -6.30497770263709E-15\n\
AP_3_0  = -5.03018200403734E-10\n\
AP_3_1  = -2.35315281608906E-14\n\
AP_4_0  = 2.13944449467657E-14\n\
BP_ORDER=                    4\n\
BP_0_1  = -5.35341799909328E-06\n\
BP_0_2  = -2.17548011382368E-07\n\
BP_0_3  = 3.46141884836402E-12\n\
BP_0_4  = -5.50225060304376E-16\n\
BP_1_0  = 2.24406272193445E-05\n\
BP_1_1  = -5.78663264876419E-08\n\
BP_1_2  =  5.4445150144274E-11\n\
BP_1_3  = 2.29942375548271E-15\n\
BP_2_0  = 6.33813482510013E-06\n\
BP_2_1  = 5.99623548359284E-11\n\
BP_2_2  = -3.3053766170687E-15\n\
BP_3_0  = -8.55094688760831E-10\n\
BP_3_1  = -2.73327308556661E-15\n\
BP_4_0  = 4.26704732113368E-14\n\
";

/// The PV cards of tpvonly.hdr (the same image as SCAMP TPV, degree 4).
const TPV_PV: &str = "\
PV1_0   =                   0.\n\
PV1_1   =                   1.\n\
PV1_2   =                   0.\n\
PV1_4   =   -0.016169561788921\n\
PV1_5   =  -0.0051747493874632\n\
PV1_6   = -0.000238504358056776\n\
PV1_7   =  0.00629760478963159\n\
PV1_8   =  0.00397207946734115\n\
PV1_9   = -0.000677296206451849\n\
PV1_10  = 0.000503546797066621\n\
PV1_12  = -0.000973553429744082\n\
PV1_13  = -0.00102312736844768\n\
PV1_14  = 0.000253623568347818\n\
PV1_15  = -0.000200211924758127\n\
PV1_16  = -6.21626607050974E-05\n\
PV2_0   =                   0.\n\
PV2_1   =                   1.\n\
PV2_2   =                   0.\n\
PV2_4   = -0.000743645656922906\n\
PV2_5   = 0.000184250025396486\n\
PV2_6   =   0.0219715919766664\n\
PV2_7   = -7.54497752637404E-05\n\
PV2_8   = 0.000649357185110191\n\
PV2_9   = -0.00081219646536117\n\
PV2_10  =  -0.0105098433615178\n\
PV2_12  = -2.1755521894303E-05\n\
PV2_13  = -7.90103717680049E-05\n\
PV2_14  = -0.000155711703067327\n\
PV2_15  = 0.000169335617180111\n\
PV2_16  =  0.00186540574051853\n\
";

/// 1000 × 1000 points spread over the 2048 × 4096 image.
const N: usize = 1000;

fn wcs_cases() -> Vec<(&'static str, Wcs)> {
    let sip = Wcs::from_header_str(SIPONLY).unwrap();
    assert!(sip.has_distortion());
    let mut params = sip.params().clone();
    params.sip = None;
    let plain = Wcs::from_params(params).unwrap();
    assert!(!plain.has_distortion());
    let tpv_header = SIPONLY
        .lines()
        .filter(|l| {
            !l.starts_with("A_")
                && !l.starts_with("B_")
                && !l.starts_with("AP_")
                && !l.starts_with("BP_")
        })
        .map(|l| l.replace("-TAN-SIP", "-TPV"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
        + TPV_PV;
    let tpv = Wcs::from_header_str(&tpv_header).unwrap();
    assert!(tpv.params().tpv.is_some() && tpv.params().sip.is_none());
    vec![
        ("TAN (no SIP)", plain),
        ("TAN-SIP order 4", sip),
        ("TPV degree 4", tpv),
    ]
}

fn distortion(c: &mut Criterion) {
    let xs: Vec<f64> = (0..N * N).map(|i| (i % N) as f64 * 2.047).collect();
    let ys: Vec<f64> = (0..N * N).map(|i| (i / N) as f64 * 4.095).collect();
    let n = xs.len();
    for (name, wcs) in wcs_cases() {
        let (mut lon, mut lat) = (vec![0.0; n], vec![0.0; n]);
        let (mut bx, mut by) = (vec![0.0; n], vec![0.0; n]);
        wcs.pixel_to_world_slice(&xs, &ys, &mut lon, &mut lat)
            .unwrap();
        wcs.world_to_pixel_slice(&lon, &lat, &mut bx, &mut by)
            .unwrap();
        let worst = (0..n)
            .map(|i| (bx[i] - xs[i]).abs().max((by[i] - ys[i]).abs()))
            .fold(0.0, f64::max);
        assert!(worst < 1e-6, "{name}: round trip {worst} px");

        let mut group = c.benchmark_group(format!("distortion_1M/{name}"));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        group.bench_function("pixel_to_world", |b| {
            b.iter(|| {
                wcs.pixel_to_world_slice(&xs, &ys, &mut lon, &mut lat)
                    .unwrap()
            })
        });
        group.bench_function("world_to_pixel", |b| {
            b.iter(|| {
                wcs.world_to_pixel_slice(&lon, &lat, &mut bx, &mut by)
                    .unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, distortion);
criterion_main!(benches);

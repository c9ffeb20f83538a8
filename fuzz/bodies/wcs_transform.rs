//! `wcs_transform`: a WCS assembled from fuzzed keyword values, then transforms of fuzzed
//! points.
//!
//! The input bytes are decoded (`common::Reader`, any input decodes) into a header: a
//! celestial pair (RA/DEC, GLON/GLAT, ELON/ELAT, HPLN/HPLT, ..., either axis first, with or
//! without a third spectral/Stokes axis), one of WCSLIB's 28 projection codes (or NCP, GLS, TPV,
//! a garbage code; optional `-SIP`), CRPIX/CRVAL/CDELT, PC or CD or CROTA2, PVi_m of both axes,
//! LONPOLE/LATPOLE, RADESYS/EQUINOX, SIP (A/B/AP/BP) and TPV coefficients, with values from a
//! distribution that favours special ones (0, ±90, ±180, 1e-300, 1e300, f64::MAX, ...).
//!
//! Then: `Wcs::from_header_str`; when it builds, `pixel_to_world`, `world_to_pixel`, the N-d and
//! native-vector forms, and `PixelTransform::new`/`general` (to itself and to and from a
//! galactic CAR WCS) on fixed and fuzzed points. Finally the parameters are perturbed directly
//! (NaN, ±Inf, huge values, inconsistent lengths, as a deserialised `WcsParams` can be) and
//! rebuilt with `Wcs::from_params`. Nothing may panic, and every `Some` result must be finite.

use std::fmt::Write;

use reproject::wcs::projection::ProjectionCode;
use reproject::wcs::{AxisType, Wcs, WcsParams};

use super::common::{check_pixel_transform, check_wcs, Reader};
use super::header_text::reference_wcs;

const PAIRS: [(&str, &str); 7] = [
    ("RA--", "DEC-"),
    ("GLON", "GLAT"),
    ("ELON", "ELAT"),
    ("HPLN", "HPLT"),
    ("SLON", "SLAT"),
    ("TLON", "TLAT"),
    ("RA--", "GLAT"),
];

const EXTRA_CODES: [&str; 6] = ["NCP", "GLS", "TPV", "XYZ", "---", "TA "];

const THIRD_AXES: [&str; 7] = [
    "FREQ", "VRAD", "WAVE-LOG", "STOKES", "FREQ-F2W", "", "RA---TAN",
];

const RADESYS: [&str; 7] = ["ICRS", "FK5", "FK4", "FK4-NO-E", "GAPPT", "GALACTIC", "XXX"];

/// A numeric card value, written in one of the forms FITS headers use.
fn number(r: &mut Reader, v: f64) -> String {
    match r.byte() % 4 {
        0 => format!("{v:?}"),
        1 => format!("{v:E}"),
        2 => format!("{v:E}").replace('E', "D"),
        _ if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
        _ => format!("{v:.17E}"),
    }
}

fn card(text: &mut String, key: &str, value: &str) {
    let _ = writeln!(text, "{key:<8}= {value:>20}");
}

fn num_card(text: &mut String, r: &mut Reader, key: &str, v: f64) {
    let s = number(r, v);
    card(text, key, &s);
}

/// A value for a header card: finite but otherwise arbitrary, sometimes anything.
fn value(r: &mut Reader) -> f64 {
    if r.byte() < 8 {
        r.f64()
    } else {
        r.finite()
    }
}

/// A coefficient of magnitude 10^k, k in -12..=3 mostly.
fn coefficient(r: &mut Reader) -> f64 {
    let mantissa = r.byte() as i8 as f64 / 64.0;
    let exp = -(r.below(16) as i32) + 3;
    if r.byte() < 16 {
        value(r)
    } else {
        mantissa * 10f64.powi(exp)
    }
}

/// The header text the input decodes to.
pub fn build_header(r: &mut Reader) -> String {
    let mut h = String::new();
    let flags = r.byte();
    let lat_first = flags & 1 != 0;
    let third = flags & 2 != 0;
    let sip_suffix = flags & 4 != 0;
    let with_sip = flags & 8 != 0;
    let with_naxis = flags & 16 != 0;
    let (lng, lat) = PAIRS[r.below(PAIRS.len())];
    let k = r.byte() as usize;
    let all = ProjectionCode::ALL;
    let code = if k < 240 {
        all[k % all.len()].as_str()
    } else {
        EXTRA_CODES[k % EXTRA_CODES.len()]
    };
    let suffix = if sip_suffix { "-SIP" } else { "" };
    let (a1, a2) = if lat_first { (2, 1) } else { (1, 2) };
    let naxis = if third { 3 } else { 2 };
    if with_naxis {
        card(&mut h, "NAXIS", &naxis.to_string());
        for i in 1..=naxis {
            card(
                &mut h,
                &format!("NAXIS{i}"),
                &(r.byte() as u16 * 4).to_string(),
            );
        }
    }
    card(
        &mut h,
        &format!("CTYPE{a1}"),
        &format!("'{lng}-{code}{suffix}'"),
    );
    card(
        &mut h,
        &format!("CTYPE{a2}"),
        &format!("'{lat}-{code}{suffix}'"),
    );
    if third {
        let t = THIRD_AXES[r.below(THIRD_AXES.len())];
        card(&mut h, "CTYPE3", &format!("'{t}'"));
        for key in ["CRVAL3", "CDELT3", "CRPIX3"] {
            let v = value(r);
            num_card(&mut h, r, key, v);
        }
    }
    // Reference point and scale.
    let present = r.byte();
    for (bit, key) in ["CRPIX1", "CRPIX2", "CRVAL1", "CRVAL2", "CDELT1", "CDELT2"]
        .into_iter()
        .enumerate()
    {
        if present & (1 << bit) != 0 {
            let v = value(r);
            num_card(&mut h, r, key, v);
        }
    }
    if present & 64 != 0 {
        for i in [1, 2] {
            let unit = ["deg", "arcsec", "rad", "arcmin", "mas", "m", ""][r.below(7)];
            card(&mut h, &format!("CUNIT{i}"), &format!("'{unit}'"));
        }
    }
    // The matrix.
    match r.below(4) {
        1 | 2 => {
            let base = if r.bool() { "PC" } else { "CD" };
            let present = r.byte();
            for (bit, (i, j)) in [(1, 1), (1, 2), (2, 1), (2, 2)].into_iter().enumerate() {
                if present & (1 << bit) != 0 {
                    let v = value(r);
                    num_card(&mut h, r, &format!("{base}{i}_{j}"), v);
                }
            }
        }
        3 => {
            let v = value(r);
            let key = format!("CROTA{}", 1 + r.below(2));
            num_card(&mut h, r, &key, v);
        }
        _ => {}
    }
    // Projection parameters of the latitude axis (m = 30 is out of range).
    for _ in 0..r.below(6) {
        let m = r.below(31);
        let v = value(r);
        num_card(&mut h, r, &format!("PV{a2}_{m}"), v);
    }
    // Fiducial point / pole of the longitude axis.
    for _ in 0..r.below(3) {
        let m = r.below(5);
        let v = value(r);
        num_card(&mut h, r, &format!("PV{a1}_{m}"), v);
    }
    let poles = r.byte();
    if poles & 1 != 0 {
        let v = value(r);
        num_card(&mut h, r, "LONPOLE", v);
    }
    if poles & 2 != 0 {
        let v = value(r);
        num_card(&mut h, r, "LATPOLE", v);
    }
    if poles & 4 != 0 {
        let s = RADESYS[r.below(RADESYS.len())];
        card(&mut h, "RADESYS", &format!("'{s}'"));
    }
    if poles & 8 != 0 {
        let v = [2000.0, 1950.0, 1900.0, 0.0, value(r)][r.below(5)];
        num_card(&mut h, r, "EQUINOX", v);
    }
    if poles & 16 != 0 {
        let v = value(r);
        num_card(&mut h, r, "MJD-OBS", v);
    }
    // SIP.
    if with_sip {
        for (p, q) in [("A", "B"), ("AP", "BP")] {
            if !r.bool() {
                continue;
            }
            let order = r.below(7);
            card(&mut h, &format!("{p}_ORDER"), &order.to_string());
            card(&mut h, &format!("{q}_ORDER"), &r.below(7).to_string());
            for _ in 0..r.below(10) {
                let name = if r.bool() { p } else { q };
                let (i, j) = (r.below(order + 2), r.below(order + 2));
                let v = coefficient(r);
                num_card(&mut h, r, &format!("{name}_{i}_{j}"), v);
            }
        }
    }
    // TPV (or pre-2012 SCAMP with TAN) distortion coefficients.
    if code == "TPV" || (code == "TAN" && flags & 32 != 0) {
        for _ in 0..r.below(12) {
            let axis = 1 + r.below(2);
            let m = r.below(41);
            let v = coefficient(r);
            num_card(&mut h, r, &format!("PV{axis}_{m}"), v);
        }
    }
    h
}

/// Changes one parameter the way only a hand-built or deserialised `WcsParams` can.
fn perturb(p: &mut WcsParams, r: &mut Reader) {
    let n = p.naxis();
    let i = r.below(n.max(1));
    let j = r.below(n.max(1));
    match r.below(12) {
        0 => set(&mut p.crval, i, r.f64()),
        1 => set(&mut p.crpix, i, r.f64()),
        2 => set(&mut p.cdelt, i, r.f64()),
        3 => {
            let v = r.f64();
            if let Some(row) = p.pc.get_mut(i) {
                set(row, j, v);
            }
        }
        4 => p.lonpole = r.bool().then(|| r.f64()),
        5 => p.latpole = r.bool().then(|| r.f64()),
        6 => {
            let m = r.below(p.projection_params.pv.len());
            p.projection_params.pv[m] = r.bool().then(|| r.f64());
        }
        7 => {
            p.phi0 = r.bool().then(|| r.f64());
            p.theta0 = r.bool().then(|| r.f64());
        }
        8 => {
            p.projection_params.fiducial = r.bool().then(|| (r.f64(), r.f64()));
        }
        9 => {
            let all = ProjectionCode::ALL;
            p.projection = r.bool().then(|| all[r.below(all.len())]);
        }
        10 => {
            let v = r.f64();
            if let Some(sip) = p.sip.as_mut() {
                sip.crpix[i % 2] = v;
                if let Some((a, _)) = sip.ab.as_mut() {
                    let (pp, qq) = (r.below(a.order + 1), r.below(a.order + 1));
                    a.coeffs[pp][qq] = v;
                }
            }
        }
        _ => {
            // Inconsistent lengths or axis types.
            match r.below(6) {
                0 => drop(p.crval.pop()),
                1 => drop(p.cdelt.pop()),
                2 => drop(p.pc.pop()),
                3 => {
                    if let Some(row) = p.pc.get_mut(i) {
                        row.pop();
                    }
                }
                4 => drop(p.axis_types.pop()),
                _ => {
                    if let Some(t) = p.axis_types.get_mut(i) {
                        *t = [AxisType::Longitude, AxisType::Latitude, AxisType::Linear]
                            [r.below(3)]
                        .clone();
                    }
                }
            }
        }
    }
}

fn set(v: &mut [f64], i: usize, x: f64) {
    if let Some(slot) = v.get_mut(i) {
        *slot = x;
    }
}

pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let text = build_header(&mut r);
    let points: Vec<(f64, f64)> = (0..1 + r.below(6)).map(|_| r.point()).collect();
    let Ok(wcs) = Wcs::from_header_str(&text) else {
        return;
    };
    check_wcs(&wcs, &points);
    check_pixel_transform(&wcs, &wcs, &points);
    check_pixel_transform(&wcs, reference_wcs(), &points);
    check_pixel_transform(reference_wcs(), &wcs, &points);
    let rounds = r.below(4);
    if rounds == 0 {
        return;
    }
    let mut params = wcs.params().clone();
    for _ in 0..rounds {
        perturb(&mut params, &mut r);
    }
    if let Ok(perturbed) = Wcs::from_params(params) {
        check_wcs(&perturbed, &points);
        check_pixel_transform(&perturbed, &wcs, &points);
        check_pixel_transform(&wcs, &perturbed, &points);
    }
}

//! The engine skips reproject's round-trip check for a TAN output fed by projections whose
//! way back retraces the way out (src/engine/coords.rs, `roundtrip_always_passes`). This test
//! runs the check anyway over random WCS pairs of that kind, wide fields, poles and frame
//! changes included, and asserts that it never drops a pixel; an all-sky CAR output shows
//! that the same measurement does catch drops.

use reproject::pixel_transform::PixelTransform;
use reproject::wcs::Wcs;

/// A small deterministic generator (xorshift64*), so the test needs no seed management.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() * items.len() as f64) as usize % items.len()]
    }
}

const FRAMES: [(&str, &str, &str); 3] = [
    ("RA--", "DEC-", "RADESYS = 'ICRS'"),
    ("GLON", "GLAT", ""),
    ("RA--", "DEC-", "RADESYS = 'FK5'\nEQUINOX = 1975.0"),
];

fn header(rng: &mut Rng, code: &str, scale: f64, extra: &str) -> String {
    let (lon, lat, frame) = FRAMES[(rng.next() * 3.0) as usize % 3];
    let rot = rng.range(-180.0, 180.0).to_radians();
    let (s, c) = rot.sin_cos();
    // Poles and the equator are as likely as anything else.
    let crval2 = match (rng.next() * 4.0) as u32 {
        0 => 90.0,
        1 => -90.0,
        2 => 0.0,
        _ => rng.range(-90.0, 90.0),
    };
    format!(
        "CTYPE1 = '{lon}-{code}'\nCTYPE2 = '{lat}-{code}'\nCRPIX1 = {}\nCRPIX2 = {}\n\
         CRVAL1 = {}\nCRVAL2 = {crval2}\nCD1_1 = {}\nCD1_2 = {}\nCD2_1 = {}\nCD2_2 = {}\n{frame}\n{extra}",
        rng.range(-50.0, 150.0),
        rng.range(-50.0, 150.0),
        rng.range(0.0, 360.0),
        -scale * c,
        scale * s,
        scale * s,
        scale * c,
    )
}

/// How many of the output `pixels` with an input position the round-trip check would drop
/// (reproject's rule: back more than one pixel away on either axis), and how many it checked.
fn check_roundtrip(
    out: &Wcs,
    inp: &Wcs,
    pixels: impl Iterator<Item = (f64, f64)>,
) -> (usize, usize) {
    let forward = PixelTransform::new(out, inp).unwrap();
    let backward = PixelTransform::new(inp, out).unwrap();
    let (mut dropped, mut checked) = (0, 0);
    for (x, y) in pixels {
        let Some((px, py)) = forward.map(x, y) else {
            continue;
        };
        checked += 1;
        if let Some((bx, by)) = backward.map(px, py)
            && ((bx - x).abs() > 1.0 || (by - y).abs() > 1.0)
        {
            dropped += 1;
        }
    }
    (dropped, checked)
}

/// Pixels of random pairs that the round-trip check would drop, and pixels checked.
fn drops(codes_in: &[&str], seed: u64, pairs: usize) -> (usize, usize) {
    let mut rng = Rng(seed);
    let (mut dropped, mut checked) = (0, 0);
    for _ in 0..pairs {
        let code = rng.pick(codes_in);
        // Output fields from arcminutes to most of a hemisphere; inputs up to the whole sky.
        let scale_out = rng.range(1e-4, 1.5);
        let out = Wcs::from_header_str(&header(&mut rng, "TAN", scale_out, "")).unwrap();
        let extra = if code == "CEA" {
            format!("PV2_1 = {}", rng.range(0.1, 1.0))
        } else {
            String::new()
        };
        let scale_in = rng.range(1e-3, 3.6);
        let inp = Wcs::from_header_str(&header(&mut rng, code, scale_in, &extra)).unwrap();
        let pixels: Vec<_> = (0..400)
            .map(|_| (rng.range(-20.0, 120.0), rng.range(-20.0, 120.0)))
            .collect();
        let (d, c) = check_roundtrip(&out, &inp, pixels.into_iter());
        dropped += d;
        checked += c;
    }
    (dropped, checked)
}

#[test]
fn the_check_never_drops_a_pixel_where_it_is_skipped() {
    let codes = [
        "TAN", "STG", "ZEA", "ARC", "CAR", "CEA", "MER", "SFL", "PAR", "MOL", "AIT",
    ];
    let (dropped, checked) = drops(&codes, 0x5EED_1234_ABCD_0001, 1500);
    println!("skipped round-trip check: {checked} pixels checked, {dropped} would be dropped");
    assert!(checked > 100_000, "too few valid pixels: {checked}");
    assert_eq!(dropped, 0);
}

#[test]
fn the_same_measurement_sees_the_drops_at_the_seam_of_an_all_sky_output() {
    // reproject's AIT -> CAR all-sky case (tests/fixtures/reproject, `ait_to_car_allsky`): the
    // CAR grid spans 400 degrees of longitude, and pixels past the ±180 degree seam come back
    // on the other side, 360 degrees away.
    let wcs = |code: &str, crval1: f64, crpix: (f64, f64)| {
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---{code}'\nCTYPE2 = 'DEC--{code}'\nCRVAL1 = {crval1}\nCRVAL2 = 0\n\
             CRPIX1 = {}\nCRPIX2 = {}\nCDELT1 = -4\nCDELT2 = 4\n",
            crpix.0, crpix.1
        ))
        .unwrap()
    };
    let out = wcs("CAR", 180.0, (50.5, 25.5));
    let inp = wcs("AIT", 0.0, (46.5, 23.5));
    let grid = (0..50).flat_map(|y| (0..100).map(move |x| (x as f64, y as f64)));
    let (dropped, checked) = check_roundtrip(&out, &inp, grid);
    println!("AIT -> all-sky CAR: {checked} pixels checked, {dropped} dropped by the check");
    assert!(dropped > 0);
}

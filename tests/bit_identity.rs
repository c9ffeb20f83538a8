//! The WCS engine reproduces astropy's pixel -> world results bit for bit on every valid point
//! of every non-distorted vector case (same libm on x86-64 Linux; WCSLIB's operation order,
//! including its unparenthesised D2R/R2D macros and `matinv`). World -> pixel is reported.

mod common;

use common::Case;
use reproject::wcs::Wcs;

#[test]
fn pixel_to_world_is_bit_identical_to_astropy() {
    let (mut same_p2w, mut total_p2w, mut same_w2p, mut total_w2p) = (0, 0, 0, 0);
    let mut first_miss = Vec::new();
    for name in common::all_cases() {
        let mut case = Case::load(&name);
        let wcs = Wcs::from_header_str(&case.header).unwrap();
        let (pix, world) = (case.pairs("pix"), case.pairs("world"));
        for i in 0..pix.nrows() {
            if world[[i, 0]].is_nan() {
                continue;
            }
            total_p2w += 1;
            match wcs.pixel_to_world(pix[[i, 0]], pix[[i, 1]]) {
                Some((a, d))
                    if a.to_bits() == world[[i, 0]].to_bits()
                        && d.to_bits() == world[[i, 1]].to_bits() =>
                {
                    same_p2w += 1
                }
                got => {
                    if first_miss.len() < 5 {
                        first_miss.push(format!(
                            "{name}[{i}]: {got:?} vs ({}, {})",
                            world[[i, 0]],
                            world[[i, 1]]
                        ));
                    }
                }
            }
        }
        let (sky, sky_pix) = (case.pairs("sky"), case.pairs("sky_pix"));
        for i in 0..sky.nrows() {
            if sky_pix[[i, 0]].is_nan() {
                continue;
            }
            total_w2p += 1;
            if let Some((x, y)) = wcs.world_to_pixel(sky[[i, 0]], sky[[i, 1]])
                && x.to_bits() == sky_pix[[i, 0]].to_bits()
                && y.to_bits() == sky_pix[[i, 1]].to_bits()
            {
                same_w2p += 1;
            }
        }
    }
    eprintln!(
        "pixel -> world bit-identical: {same_p2w}/{total_p2w}; world -> pixel: {same_w2p}/{total_w2p}"
    );
    assert_eq!(same_p2w, total_p2w, "first misses: {first_miss:#?}");
}

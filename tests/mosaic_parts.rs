//! Mosaics computed in parts (`reproject_and_coadd_part`, as dask blocks and worker processes
//! compute them): for every case of the golden fixtures (every combine function, weights,
//! background matching by offsets and planes, TAN and non-TAN inputs, a frame change, cubes),
//! the parts, with the corrections computed once by `background_corrections`, assemble into
//! the whole mosaic bit for bit; a part that matches the backgrounds itself gives the same
//! bits too. Bad parts get clear errors.

use ndarray::{ArrayD, IxDyn, SliceInfoElem};
use reproject::engine::blocks::Block;
use reproject::io::ArraySource;
use reproject::mosaic::coadd::{
    background_corrections, reproject_and_coadd, reproject_and_coadd_part, Background, MosaicInput,
    MosaicOptions, MosaicPart,
};
use reproject::wcs::Wcs;
use reproject::Error;

mod mosaic_fixtures;

/// The same bits (NaN equal to NaN).
fn same_bits(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Windows cutting the plane unevenly (3 bands of rows × 2 of columns), and one pixel.
fn windows((ny, nx): (usize, usize)) -> Vec<Block> {
    let rows = [0, ny / 3, ny / 3 + ny / 4 + 1, ny];
    let cols = [0, nx / 2 - 3, nx];
    let mut out = Vec::new();
    for r in rows.windows(2) {
        for c in cols.windows(2) {
            out.push(Block {
                rows: r[0]..r[1],
                cols: c[0]..c[1],
            });
        }
    }
    out.push(Block {
        rows: ny / 2..ny / 2 + 1,
        cols: nx / 2..nx / 2 + 1,
    });
    out
}

/// The part's pixels of the whole output (every leading plane).
fn window_of(a: &ArrayD<f64>, w: &Block) -> ArrayD<f64> {
    let lead = a.ndim() - 2;
    let mut info: Vec<SliceInfoElem> = (0..lead).map(|_| (..).into()).collect();
    info.push((w.rows.start as isize..w.rows.end as isize).into());
    info.push((w.cols.start as isize..w.cols.end as isize).into());
    a.slice(info.as_slice()).to_owned()
}

/// The mosaic of one part: (data, footprint) of the part's shape.
fn part_of(
    inputs: &[MosaicInput],
    wcs_out: &Wcs,
    full: &[usize],
    part: &MosaicPart,
    options: &MosaicOptions,
) -> reproject::Result<(ArrayD<f64>, ArrayD<f64>)> {
    let mut shape = full[..full.len() - 2].to_vec();
    shape.extend([part.window.rows.len(), part.window.cols.len()]);
    let mut data = ArrayD::<f64>::from_elem(IxDyn(&shape), -1.0);
    let mut footprint = ArrayD::<f64>::from_elem(IxDyn(&shape), -1.0);
    reproject_and_coadd_part(
        inputs,
        wcs_out,
        full,
        part,
        data.view_mut(),
        footprint.view_mut(),
        options,
    )?;
    Ok((data, footprint))
}

#[test]
fn parts_assemble_into_the_whole_mosaic_bit_for_bit() {
    let (cases, _) = mosaic_fixtures::load();
    let mut checked = 0;
    for case in &cases {
        let (name, wcs_out, shape_out) = (&case.name, &case.wcs_out, &case.shape_out);
        let (images, weights) = case.sources();
        for run in &case.runs {
            let run_name = run["name"].as_str().unwrap();
            let inputs = case.inputs(&images, &weights, run);
            // Offsets as the fixtures have them, and planes on the same runs.
            let modes: &[Background] = if mosaic_fixtures::matched(run) {
                &[Background::Offset, Background::Plane]
            } else {
                &[Background::None]
            };
            for &background in modes {
                let options = MosaicOptions {
                    background,
                    reprojection: reproject::engine::Options {
                        block_size: Some((7, 9)),
                        ..Default::default()
                    },
                    ..mosaic_fixtures::options(run)
                };
                let whole = reproject_and_coadd(&inputs, wcs_out, shape_out, &options).unwrap();
                let full = whole.data.shape().to_vec();
                let corrections =
                    background_corrections(&inputs, wcs_out, shape_out, &options).unwrap();
                assert_eq!(corrections, whole.corrections, "{name} {run_name}");
                let plane = (full[full.len() - 2], full[full.len() - 1]);
                for (i, window) in windows(plane).into_iter().enumerate() {
                    // The first window matches the backgrounds itself; the others are given
                    // the corrections.
                    let part = MosaicPart {
                        window: window.clone(),
                        corrections: (i > 0).then(|| corrections.clone()),
                    };
                    let (data, footprint) =
                        part_of(&inputs, wcs_out, shape_out, &part, &options).unwrap();
                    let what = format!("{name} {run_name} {background:?} window {window:?}");
                    assert!(same_bits(&data, &window_of(&whole.data, &window)), "{what}");
                    assert!(
                        same_bits(&footprint, &window_of(&whole.footprint, &window)),
                        "{what} (footprint)"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 30 * 7, "{checked} parts");
}

#[test]
fn bad_parts_get_clear_errors() {
    let wcs = Wcs::from_header_str(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 8\nCRPIX2 = 8\nCRVAL1 = 150\n\
         CRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n",
    )
    .unwrap();
    let image = ndarray::Array2::<f64>::from_elem((16, 16), 1.0).into_dyn();
    let source = ArraySource::new(image.view()).unwrap();
    let inputs = [
        MosaicInput::new(&source, &wcs),
        MosaicInput::new(&source, &wcs),
    ];
    let options = MosaicOptions::default();
    let part = |rows: std::ops::Range<usize>, cols, corrections| MosaicPart {
        window: Block { rows, cols },
        corrections,
    };
    let outside = part_of(
        &inputs,
        &wcs,
        &[16, 16],
        &part(10..17, 0..4, None),
        &options,
    );
    assert!(
        matches!(&outside, Err(Error::InvalidArgument(m)) if m.contains("outside")),
        "{outside:?}"
    );
    let few = part(0..4, 0..4, Some(vec![Default::default()]));
    let few = part_of(&inputs, &wcs, &[16, 16], &few, &options);
    assert!(
        matches!(&few, Err(Error::InvalidArgument(m)) if m.contains("1 background corrections for 2 inputs")),
        "{few:?}"
    );
    let mut data = ArrayD::<f64>::zeros(IxDyn(&[4, 5]));
    let mut footprint = ArrayD::<f64>::zeros(IxDyn(&[4, 5]));
    let shape = reproject_and_coadd_part(
        &inputs,
        &wcs,
        &[16, 16],
        &part(0..4, 0..4, None),
        data.view_mut(),
        footprint.view_mut(),
        &options,
    );
    assert!(matches!(shape, Err(Error::ShapeMismatch(_))), "{shape:?}");
    let none = background_corrections(&[], &wcs, &[16, 16], &options);
    assert!(matches!(none, Err(Error::InvalidArgument(_))), "{none:?}");
}

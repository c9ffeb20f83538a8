//! Bad input to the engine: clear errors, never a panic; no overlap is NaN, not an error.

use ndarray::{Array2, Array3, ArrayD, IxDyn};
use reproject::engine::{reproject_interp, reproject_interp_into, Options, Parallel};
use reproject::io::{ArraySource, NpySource};
use reproject::wcs::Wcs;
use reproject::Error;

fn tan(lon: f64, lat: f64) -> Wcs {
    Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 8\nCRPIX2 = 8\nCRVAL1 = {lon}\n\
         CRVAL2 = {lat}\nCDELT1 = -0.01\nCDELT2 = 0.01\n"
    ))
    .unwrap()
}

#[test]
fn shape_errors() {
    let image = Array3::<f64>::zeros((3, 16, 16));
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let (w, o) = (tan(10.0, 20.0), Options::default());
    fn shape_err<T>(r: Result<T, Error>) -> bool {
        matches!(r, Err(Error::ShapeMismatch(_)))
    }
    assert!(shape_err(reproject_interp(
        &source,
        &w,
        &w,
        &[2, 16, 16],
        &o
    )));
    assert!(shape_err(reproject_interp(
        &source,
        &w,
        &w,
        &[4, 3, 16, 16],
        &o
    )));
    assert!(shape_err(reproject_interp(&source, &w, &w, &[16], &o)));
    assert!(shape_err(reproject_interp(&source, &w, &w, &[0, 16], &o)));
    // The leading dimension is prepended when only the plane is given.
    let (data, _) = reproject_interp(&source, &w, &w, &[8, 9], &o).unwrap();
    assert_eq!(data.shape(), &[3, 8, 9]);
    // Caller-provided outputs must agree with each other.
    let mut d = ArrayD::<f64>::zeros(IxDyn(&[3, 8, 8]));
    let mut f = ArrayD::<f64>::zeros(IxDyn(&[3, 8, 9]));
    assert!(shape_err(reproject_interp_into(
        &source,
        &w,
        &w,
        d.view_mut(),
        f.view_mut(),
        &o
    )));
    let empty = Array2::<f64>::zeros((0, 5));
    let empty = ArraySource::new(empty.view().into_dyn()).unwrap();
    assert!(shape_err(reproject_interp(&empty, &w, &w, &[4, 4], &o)));
}

#[test]
fn option_and_wcs_errors() {
    let image = Array2::<f64>::zeros((16, 16));
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let w = tan(10.0, 20.0);
    let bad_block = Options {
        block_size: Some((0, 4)),
        ..Options::default()
    };
    assert!(matches!(
        reproject_interp(&source, &w, &w, &[4, 4], &bad_block),
        Err(Error::InvalidArgument(_))
    ));
    let no_threads = Options {
        parallel: Parallel::Threads(0),
        ..Options::default()
    };
    assert!(matches!(
        reproject_interp(&source, &w, &w, &[4, 4], &no_threads),
        Err(Error::InvalidArgument(_))
    ));
    let spectral = Wcs::from_header_str("CTYPE1 = 'FREQ'\nCTYPE2 = 'STOKES'\n").unwrap();
    assert!(reproject_interp(&source, &spectral, &w, &[4, 4], &Options::default()).is_err());
    assert!(reproject_interp(&source, &w, &spectral, &[4, 4], &Options::default()).is_err());
    // An output larger than memory is refused before anything is allocated.
    let huge = reproject_interp(&source, &w, &w, &[1 << 22, 1 << 22], &Options::default());
    assert!(
        matches!(&huge, Err(Error::InvalidArgument(m)) if m.contains("memory")),
        "{huge:?}"
    );
    // NaN in WCS parameters never gets this far.
    let mut params = w.params().clone();
    params.crval[0] = f64::NAN;
    assert!(Wcs::from_params(params).is_err());
}

/// Third axes the engine cannot interpolate along (other units, coupled to the sky, more than
/// three axes): valid requests it does not implement, `Error::Unsupported`, not
/// `Error::InvalidArgument`; spectral types that are not equivalent stay invalid arguments.
#[test]
fn unsupported_third_axes() {
    let cube = Array3::<f64>::zeros((4, 16, 16));
    let source = ArraySource::new(cube.view().into_dyn()).unwrap();
    let sky = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 8\nCRPIX2 = 8\nCRVAL1 = 10\n\
               CRVAL2 = 20\nCDELT1 = -0.01\nCDELT2 = 0.01\n";
    let freq = |unit: &str, scale: f64, extra: &str| {
        Wcs::from_header_str(&format!(
            "{sky}CTYPE3 = 'FREQ'\nCUNIT3 = '{unit}'\nCRVAL3 = {}\nCDELT3 = {}\nCRPIX3 = 1\n\
             {extra}",
            1E9 / scale,
            1E6 / scale
        ))
        .unwrap()
    };
    let run = |w_in: &Wcs, w_out: &Wcs| {
        reproject_interp(&source, w_in, w_out, &[4, 16, 16], &Options::default()).unwrap_err()
    };
    let unsupported = |e: &Error, needle: &str| {
        assert!(
            matches!(e, Error::Unsupported(m) if m.contains("non-celestial axes") && m.contains(needle)),
            "{e:?}"
        );
    };
    let base = freq("Hz", 1.0, "");
    // A change of unit alone is no error: the same frequencies in MHz map plane to plane.
    let (_, footprint) = reproject_interp(
        &source,
        &base,
        &freq("MHz", 1E6, ""),
        &[4, 16, 16],
        &Options::default(),
    )
    .unwrap();
    assert!(footprint.iter().all(|&f| f == 1.0));
    unsupported(&run(&base, &freq("Hz", 1.0, "PC3_1 = 0.5\n")), "coupled");
    let four = |crpix3: f64| {
        Wcs::from_header_str(&format!(
            "{sky}CTYPE3 = 'FREQ'\nCUNIT3 = 'Hz'\nCRVAL3 = 1E9\nCDELT3 = 1E6\nCRPIX3 = {crpix3}\n\
             CTYPE4 = 'STOKES'\n"
        ))
        .unwrap()
    };
    // Four axes are interpolated too, with one data dimension per WCS axis (this cube has 3).
    assert!(
        matches!(run(&four(1.0), &four(1.5)), Error::ShapeMismatch(m) if m.contains("one data dimension per WCS axis")),
        "4-axis WCS over 3-D data"
    );
    let velocity = Wcs::from_header_str(&format!(
        "{sky}CTYPE3 = 'VOPT'\nCUNIT3 = 'm/s'\nCRVAL3 = 0\nCDELT3 = 1E3\n"
    ))
    .unwrap();
    assert!(
        matches!(run(&base, &velocity), Error::InvalidArgument(m) if m.contains("not equivalent")),
        "spectral types"
    );
}

#[test]
fn no_overlap_is_all_nan_not_an_error() {
    let image = Array2::<f64>::ones((16, 16));
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let (data, footprint) = reproject_interp(
        &source,
        &tan(10.0, 20.0),
        &tan(190.0, -20.0),
        &[16, 16],
        &Options::default(),
    )
    .unwrap();
    assert!(data.iter().all(|v| v.is_nan()));
    assert!(footprint.iter().all(|&v| v == 0.0));
}

#[test]
fn unreadable_inputs_are_errors() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let truncated = dir.join("engine_errors_truncated.npy");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100, 100), }";
    let mut header = header.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(vec![0u8; 1000]);
    std::fs::write(&truncated, &bytes).unwrap();
    assert!(NpySource::open(&truncated).is_err());
}

/// A block with no rows or no columns computes nothing (and does not panic); buffers that do
/// not match the block are an error.
#[test]
fn empty_blocks_compute_nothing() {
    use reproject::engine::blocks::Block;
    use reproject::engine::Plan;
    let image = Array3::<f32>::from_elem((2, 16, 16), 1.5);
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let w = tan(10.0, 20.0);
    let plan = Plan::new(&source, &w, &w, &[16, 16], &Options::default()).unwrap();
    for block in [
        Block {
            rows: 3..3,
            cols: 0..16,
        },
        Block {
            rows: 0..16,
            cols: 5..5,
        },
    ] {
        let shape = (2, block.rows.len(), block.cols.len());
        let (mut d, mut f) = (Array3::<f64>::zeros(shape), Array3::<f64>::zeros(shape));
        plan.compute_block(&block, d.view_mut(), f.view_mut())
            .unwrap();
        let mut wrong = Array3::<f64>::zeros((2, 1, 1));
        assert!(matches!(
            plan.compute_block(&block, wrong.view_mut(), f.view_mut()),
            Err(Error::ShapeMismatch(_))
        ));
    }
    // A non-empty block still works next to them.
    let block = Block {
        rows: 2..5,
        cols: 4..9,
    };
    let (mut d, mut f) = (
        Array3::<f64>::zeros((2, 3, 5)),
        Array3::<f64>::zeros((2, 3, 5)),
    );
    plan.compute_block(&block, d.view_mut(), f.view_mut())
        .unwrap();
    assert!(d.iter().all(|&v| v == 1.5) && f.iter().all(|&v| v == 1.0));
}

//! A reprojection pipeline with the library: read a FITS image, reproject it onto another WCS,
//! write the result and its footprint as a FITS file. Input and output are memory-mapped, so
//! the same code handles images larger than memory.
//!
//! The example makes its own input (a Galactic TAN image of the Galactic centre with a few
//! Gaussian sources) and reprojects it onto a rotated equatorial SIN grid.
//!
//! Run with `cargo run --release --example pipeline [-- OUT_DIR]`.

#[cfg(feature = "fits")]
fn main() -> Result<(), reproject::Error> {
    use std::path::PathBuf;
    use std::time::Instant;

    use ndarray::{ArrayViewMutD, IxDyn};
    use reproject::engine::{reproject_interp_into, Options, Parallel};
    use reproject::interp::Order;
    use reproject::io::{FitsSource, ImageSource, MappedOutput, OutputType};
    use reproject::wcs::Wcs;

    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("reproject-pipeline-example"));
    std::fs::create_dir_all(&dir)?;
    let (input, output) = (dir.join("input.fits"), dir.join("output.fits"));

    // 1. A small input file: 512 x 512 pixels of 20 arcsec in Galactic TAN around the
    //    Galactic centre, float32, with Gaussian sources on a faint plane.
    let (ny, nx) = (512usize, 512usize);
    let header_in = "CTYPE1  = 'GLON-TAN'\nCTYPE2  = 'GLAT-TAN'\nCRPIX1  = 256.5\n\
                     CRPIX2  = 256.5\nCRVAL1  = 0.0\nCRVAL2  = 0.0\nCDELT1  = -0.005555555555555556\n\
                     CDELT2  = 0.005555555555555556\nCUNIT1  = 'deg'\nCUNIT2  = 'deg'\n\
                     BUNIT   = 'Jy/beam'";
    let mut seed = 12345u64;
    let mut rand = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let sources: Vec<(f64, f64, f64, f64)> = (0..40)
        .map(|_| {
            (
                nx as f64 * rand(),
                ny as f64 * rand(),
                1.0 + 9.0 * rand(),
                1.5 + 4.0 * rand(),
            )
        })
        .collect();
    let mut file = MappedOutput::create_fits(&input, &[ny, nx], OutputType::F32, header_in, true)?;
    for (i, v) in file.data_mut::<f32>()?.iter_mut().enumerate() {
        let (x, y) = ((i % nx) as f64, (i / nx) as f64);
        let plane = 0.5 * (-((y - 255.5) / 40.0).powi(2)).exp();
        let stars: f64 = sources
            .iter()
            .map(|&(sx, sy, amp, s)| {
                amp * (-((x - sx).powi(2) + (y - sy).powi(2)) / (2.0 * s * s)).exp()
            })
            .sum();
        *v = (plane + stars) as f32;
    }
    file.finish()?;
    println!("wrote the input {}", input.display());

    // 2. Read it: memory-mapped, decoded window by window; its WCS from its header.
    let source = FitsSource::open(&input, 0)?;
    let wcs_in = source.wcs()?;
    println!(
        "input: {:?} pixels, {} {:?}",
        source.shape(),
        wcs_in.projection_code().map_or("?", |c| c.as_str()),
        wcs_in.frame()
    );

    // 3. The target: ICRS SIN, 400 x 400 pixels of 24 arcsec centred on Sgr A*, rotated by
    //    30 degrees.
    let (ny_out, nx_out) = (400usize, 400usize);
    let header_out = "NAXIS   = 2\nNAXIS1  = 400\nNAXIS2  = 400\nCTYPE1  = 'RA---SIN'\n\
                      CTYPE2  = 'DEC--SIN'\nCRPIX1  = 200.5\nCRPIX2  = 200.5\n\
                      CRVAL1  = 266.416833\nCRVAL2  = -29.007806\nCDELT1  = -0.006666666666666667\n\
                      CDELT2  = 0.006666666666666667\nCROTA2  = 30.0\nCUNIT1  = 'deg'\n\
                      CUNIT2  = 'deg'\nRADESYS = 'ICRS'";
    let wcs_out = Wcs::from_header_str(header_out)?;

    // 4. The output file, memory-mapped: the image in the primary HDU with the target's header
    //    (plus the input's unit and a HISTORY card), the footprint in a second HDU.
    let cards = format!(
        "{header_out}\nBUNIT   = 'Jy/beam'\nHISTORY reprojected from {} by examples/pipeline.rs",
        input.file_name().unwrap().to_string_lossy()
    );
    let mut out = MappedOutput::create_fits_with_footprint(
        &output,
        &[ny_out, nx_out],
        OutputType::F32,
        &cards,
        OutputType::F32,
        true,
    )?;

    // 5. Reproject straight into the mapped file, on every core.
    let options = Options {
        order: Order::Bicubic,
        parallel: Parallel::AllCores,
        ..Options::default()
    };
    let start = Instant::now();
    let (data, footprint) = out.data_and_footprint_mut::<f32, f32>()?;
    let shape = IxDyn(&[ny_out, nx_out]);
    let data = ArrayViewMutD::from_shape(shape.clone(), data)
        .map_err(|e| reproject::Error::ShapeMismatch(e.to_string()))?;
    let footprint = ArrayViewMutD::from_shape(shape, footprint)
        .map_err(|e| reproject::Error::ShapeMismatch(e.to_string()))?;
    reproject_interp_into(&source, &wcs_in, &wcs_out, data, footprint, &options)?;
    let elapsed = start.elapsed();

    // 6. Publish the file (big-endian conversion, flush, atomic rename).
    out.finish()?;

    // Check: read the result back.
    let result = FitsSource::open(&output, 0)?;
    let fp = FitsSource::open(&output, 1)?;
    let mut values = vec![0.0; ny_out * nx_out];
    let mut covered = vec![0.0; ny_out * nx_out];
    result.read_window(0, 0..ny_out, 0..nx_out, &mut values)?;
    fp.read_window(0, 0..ny_out, 0..nx_out, &mut covered)?;
    let inside = covered.iter().filter(|&&c| c > 0.0).count();
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::MIN, f64::max);
    println!(
        "wrote {}: {nx_out} x {ny_out} ({}), {:.1}% covered, peak {max:.3} Jy/beam, reprojected \
         ({}) in {:.1} ms",
        output.display(),
        result.wcs()?.projection_code().map_or("?", |c| c.as_str()),
        100.0 * inside as f64 / covered.len() as f64,
        options.order,
        elapsed.as_secs_f64() * 1e3
    );
    assert!(inside > 0 && inside < covered.len());
    Ok(())
}

#[cfg(not(feature = "fits"))]
fn main() {
    eprintln!("this example reads and writes FITS files: build it with the `fits` feature");
}

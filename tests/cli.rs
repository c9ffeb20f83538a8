//! End-to-end tests of the `reproject-rs` binary: outputs against the library call, headers,
//! the `.npy` path, one-line errors, `info`, and a reduced `demo` with its PNG previews.

#![cfg(feature = "fits")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ndarray::Array2;
use reproject::engine::{reproject_interp, Options};
use reproject::interp::Order;
use reproject::io::{FitsSource, ImageSource, MappedOutput, OutputType};
use reproject::wcs::Wcs;

const BIN: &str = env!("CARGO_BIN_EXE_reproject-rs");

/// A fresh directory under the cargo test temp dir.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs the binary with `args` on the CUDA simulator with `gpus` devices.
fn run_simulated(args: &[&str], gpus: &str) -> Output {
    Command::new(BIN)
        .args(args)
        .env("REPROJECT_RS_CUDA_SIM", gpus)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts success, with the streams in the message otherwise.
fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Asserts a clean failure: non-zero exit, exactly one `error: ` line on stderr, no panic.
fn fails(out: &Output, expect: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "unexpected success: {err}");
    // Command lines that cannot be parsed exit with 2 (and point to --help), other errors 1.
    let code = if err.trim_end().ends_with("(see --help)") {
        2
    } else {
        1
    };
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("error: "), "{err:?}");
    assert!(!err.contains("panicked"), "{err:?}");
    assert!(err.contains(expect), "{err:?} lacks {expect:?}");
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The input: a rotated Galactic TAN image around (l, b) = (10, 0.5), 60 rows x 80 columns,
/// float32, with a few NaN pixels.
const INPUT_WCS: &str = "CTYPE1  = 'GLON-TAN'\nCTYPE2  = 'GLAT-TAN'\nCRPIX1  = 40.5\n\
CRPIX2  = 30.5\nCRVAL1  = 10.0\nCRVAL2  = 0.5\nCDELT1  = -0.01\nCDELT2  = 0.01\nCROTA2  = 15.0\n\
CUNIT1  = 'deg'\nCUNIT2  = 'deg'";

fn write_input(path: &Path) -> Array2<f32> {
    let header = format!("{INPUT_WCS}\nBUNIT   = 'K'\nOBJECT  = 'test'");
    let image = Array2::from_shape_fn((60, 80), |(y, x)| {
        if (y * 80 + x) % 97 == 5 {
            f32::NAN
        } else {
            ((x as f32 * 0.3).sin() + (y as f32 * 0.2).cos()) * 10.0 + y as f32
        }
    });
    let mut out =
        MappedOutput::create_fits(path, &[60, 80], OutputType::F32, &header, true).unwrap();
    out.data_mut::<f32>()
        .unwrap()
        .copy_from_slice(image.as_slice().unwrap());
    out.finish().unwrap();
    image
}

/// The target: an ICRS SIN image of 50 x 70 pixels overlapping the input partly.
const TARGET: &str = "NAXIS   = 2\nNAXIS1  = 70\nNAXIS2  = 50\nCTYPE1  = 'RA---SIN'\n\
CTYPE2  = 'DEC--SIN'\nCRPIX1  = 30.0\nCRPIX2  = 20.0\nCRVAL1  = 271.47\nCRVAL2  = -20.04\n\
CDELT1  = -0.012\nCDELT2  = 0.012\nPC1_1   = 0.98\nPC1_2   = -0.2\nPC2_1   = 0.2\nPC2_2   = 0.98\n\
RADESYS = 'ICRS'\nEND\n";

/// A whole plane of a FITS HDU as f64.
fn read_plane(path: &Path, hdu: usize) -> (FitsSource, Vec<f64>) {
    let src = FitsSource::open(path, hdu).unwrap();
    let (ny, nx) = src.plane_shape();
    let mut buf = vec![0.0; ny * nx];
    src.read_window(0, 0..ny, 0..nx, &mut buf).unwrap();
    (src, buf)
}

/// Bitwise equality, NaN equal to NaN.
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// `reproject_interp` of a source onto [`TARGET`].
fn library_call(src: &dyn ImageSource, wcs_in: &Wcs, order: Order) -> (Vec<f64>, Vec<f64>) {
    let wcs_out = Wcs::from_header_str(TARGET).unwrap();
    let options = Options {
        order,
        ..Options::default()
    };
    let (d, f) = reproject_interp(src, wcs_in, &wcs_out, &[50, 70], &options).unwrap();
    (d.iter().copied().collect(), f.iter().copied().collect())
}

/// `reproject_interp` of a FITS file onto [`TARGET`].
fn library(input: &Path, order: Order) -> (Vec<f64>, Vec<f64>) {
    let src = FitsSource::open(input, 0).unwrap();
    library_call(&src, &src.wcs().unwrap(), order)
}

#[test]
fn reproject_matches_the_library_exactly() {
    let d = dir("exact");
    let (input, target, out) = (d.join("in.fits"), d.join("target.hdr"), d.join("out.fits"));
    write_input(&input);
    std::fs::write(&target, TARGET).unwrap();
    let cases: [(&str, &[&str]); 3] = [
        ("bilinear", &[]),
        ("0", &["--block-size", "7x50", "--threads", "1"]),
        ("bicubic", &["--block-size", "16", "--threads", "2"]),
    ];
    for (order, extra) in cases {
        let mut args = vec![
            s(&input),
            "--to",
            s(&target),
            "-o",
            s(&out),
            "--order",
            order,
            "--overwrite",
        ];
        args.extend(extra);
        let o = run(&args);
        ok(&o);
        // Progress bars and messages never go to a stderr that is not a terminal.
        assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).starts_with("wrote "), "{}", text(&o.stdout));

        let (src, data) = read_plane(&out, 0);
        assert_eq!(src.shape(), &[50, 70]);
        assert_eq!(src.bitpix(), -64);
        let (fsrc, footprint) = read_plane(&out, 1);
        assert!(fsrc.header_text().contains("EXTNAME = 'FOOTPRINT'"));
        let order: Order = order
            .parse()
            .or_else(|_| Order::try_from(order.parse::<i64>().unwrap()))
            .unwrap();
        let (want, want_fp) = library(&input, order);
        assert!(same(&data, &want), "data differ from reproject_interp");
        assert!(same(&footprint, &want_fp), "footprint differs");
        // Partial overlap: some pixels in, some out (NaN input pixels make reproject's
        // spline orders all NaN).
        let covered = want_fp.iter().filter(|&&v| v == 1.0).count();
        if order.degree() < 2 {
            assert!(covered > 1000 && covered < want_fp.len(), "{covered}");
        }

        // The header: the target's WCS, the input's unit, provenance.
        let header = src.header_text();
        assert_eq!(
            Wcs::from_header_str(header).unwrap().params(),
            Wcs::from_header_str(TARGET).unwrap().params()
        );
        let cards: Vec<&str> = src.header_cards().collect();
        assert!(cards.iter().any(|c| c.starts_with("BUNIT   = 'K")));
        assert!(!cards.iter().any(|c| c.starts_with("OBJECT")));
        let history: Vec<&&str> = cards.iter().filter(|c| c.starts_with("HISTORY")).collect();
        assert!(history.len() >= 4, "{history:?}");
        assert!(history[0].contains("reproject-rs") && history[0].contains("reproject_interp"));
        assert!(history.iter().any(|c| c.contains("in.fits")));
        assert!(history.iter().any(|c| c.contains("target.hdr")));
    }
}

/// A FITS image of the target's grid (50 x 70 float32 zeros) with `header`: a `--to` target,
/// whose pixels the commands never read.
fn write_fits_target(path: &Path, header: &str) {
    MappedOutput::create_fits(path, &[50, 70], OutputType::F32, header, true)
        .unwrap()
        .finish()
        .unwrap();
}

#[test]
fn fits_target_f32_separate_footprint_and_png() {
    let d = dir("fits_target");
    let input = d.join("in.fits");
    write_input(&input);
    // A FITS target: its header (less its data keywords) and NAXISn give the output.
    let target = d.join("target.fits");
    let header = TARGET.replace("END\n", "BUNIT   = 'Jy/beam'\nEXTNAME = 'SCI'\n");
    write_fits_target(&target, &header);

    let (out, foot, png) = (d.join("o.fits"), d.join("fp.fits"), d.join("o.png"));
    let o = run(&[
        "reproject",
        s(&input),
        "--to",
        s(&target),
        "--output",
        s(&out),
        "--dtype",
        "f32",
        "--footprint",
        s(&foot),
        "--png",
        s(&png),
        "--quiet",
    ]);
    ok(&o);
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let (src, data) = read_plane(&out, 0);
    assert_eq!(src.bitpix(), -32);
    assert!(
        FitsSource::open(&out, 1).is_err(),
        "no footprint HDU with --footprint"
    );
    let (want, want_fp) = library(&input, Order::Bilinear);
    let want32: Vec<f64> = want.iter().map(|&v| v as f32 as f64).collect();
    assert!(same(&data, &want32));
    let (fsrc, fp) = read_plane(&foot, 0);
    assert!(same(&fp, &want_fp));
    assert!(!fsrc.header_text().contains("BUNIT"));
    let header = src.header_text();
    assert!(header.contains("BUNIT   = 'K"));
    assert!(!header.contains("Jy/beam") && !header.contains("'SCI"));
    assert_eq!(
        Wcs::from_header_str(header).unwrap().params().ctype,
        ["RA---SIN", "DEC--SIN"]
    );

    let img = image::open(&png).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (70, 50));
    // Outside the footprint is grey; inside is not uniform.
    let grey = img.pixels().filter(|p| p.0 == [128, 128, 128]).count();
    let outside = want_fp.iter().filter(|&&v| v == 0.0).count();
    assert_eq!(grey, outside);
    let mut colours: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 20, "{} colours", colours.len());
}

/// Header files that start like a FITS file but are not one: a header saved as text lines
/// (astropy's `Header.tostring(sep='\\n')` of a primary HDU starts with SIMPLE), and the
/// header block of an image without its data. Both are targets (`reproject`) and headers
/// (`info`), and give the FITS target's output; a broken FITS file is still an error.
#[test]
fn header_files_that_start_like_fits() {
    let d = dir("fits_like_headers");
    let input = d.join("in.fits");
    write_input(&input);
    let image = d.join("target.fits");
    let header = format!("SIMPLE  = T\nBITPIX  = -32\n{TARGET}");
    write_fits_target(&image, &header);
    let (lines, block) = (d.join("lines.hdr"), d.join("block.hdr"));
    std::fs::write(&lines, format!("{header}{}", " ".repeat(77))).unwrap();
    std::fs::write(&block, &std::fs::read(&image).unwrap()[..2880]).unwrap();
    let mut outputs = Vec::new();
    for (k, target) in [&image, &lines, &block].into_iter().enumerate() {
        let info = run(&["info", s(target)]);
        ok(&info);
        assert!(
            text(&info.stdout).contains("70 x 50 pixels"),
            "{}",
            text(&info.stdout)
        );
        let out = d.join(format!("out{k}.fits"));
        ok(&run(&[
            "reproject",
            s(&input),
            "--to",
            s(target),
            "-o",
            s(&out),
        ]));
        outputs.push(read_plane(&out, 0).1);
    }
    assert!(same(&outputs[0], &outputs[1]) && same(&outputs[0], &outputs[2]));
    let broken = d.join("broken.fits");
    std::fs::write(&broken, "SIMPLE  = not a FITS file").unwrap();
    fails(&run(&["info", s(&broken)]), "FITS error");
}

#[test]
fn npy_input_with_wcs_header() {
    let d = dir("npy");
    let fits = d.join("in.fits");
    let image = write_input(&fits);
    let npy = d.join("in.npy");
    let mut out = MappedOutput::create_npy(&npy, &[60, 80], OutputType::F32, true).unwrap();
    out.data_mut::<f32>()
        .unwrap()
        .copy_from_slice(image.as_slice().unwrap());
    out.finish().unwrap();
    let (wcs, target, o1, o2) = (
        d.join("in.hdr"),
        d.join("t.hdr"),
        d.join("a.fits"),
        d.join("b.fits"),
    );
    std::fs::write(&wcs, INPUT_WCS).unwrap();
    std::fs::write(&target, TARGET).unwrap();

    let o = run(&[s(&npy), "--to", s(&target), "-o", s(&o1)]);
    fails(&o, "--wcs");
    assert!(!o1.exists());

    ok(&run(&[
        s(&npy),
        "--wcs",
        s(&wcs),
        "--to",
        s(&target),
        "-o",
        s(&o1),
    ]));
    // The same numbers as from the FITS input (the WCS may also come from a FITS file).
    ok(&run(&[
        s(&npy),
        "--wcs",
        s(&fits),
        "--to",
        s(&target),
        "-o",
        s(&o2),
    ]));
    let src = reproject::io::NpySource::open(&npy).unwrap();
    let wcs_in = Wcs::from_header_str(INPUT_WCS).unwrap();
    let (want, _) = library_call(&src, &wcs_in, Order::Bilinear);
    assert!(same(&read_plane(&o1, 0).1, &want));
    assert!(same(&read_plane(&o2, 0).1, &want));
    assert!(read_plane(&o1, 0).0.header_text().contains("input WCS"));
}

#[test]
fn errors_are_one_line() {
    let d = dir("errors");
    let (input, target, out) = (d.join("in.fits"), d.join("t.hdr"), d.join("out.fits"));
    write_input(&input);
    std::fs::write(&target, TARGET).unwrap();
    let (i, t, o) = (s(&input), s(&target), s(&out));

    let missing = d.join("missing.fits");
    fails(&run(&[s(&missing), "--to", t, "-o", o]), "does not exist");
    fails(&run(&[i, "--to", s(&missing), "-o", o]), "does not exist");

    let bad = d.join("bad.hdr");
    std::fs::write(
        &bad,
        "NAXIS1  = 10\nNAXIS2  = 10\nCTYPE1  = 'RA---XYZ'\nCTYPE2  = 'DEC--XYZ'\n",
    )
    .unwrap();
    fails(&run(&[i, "--to", s(&bad), "-o", o]), "XYZ");
    let no_shape = d.join("noshape.hdr");
    std::fs::write(&no_shape, TARGET.replace("NAXIS1  = 70\n", "")).unwrap();
    fails(&run(&[i, "--to", s(&no_shape), "-o", o]), "NAXIS1");
    let junk = d.join("junk.fits");
    std::fs::write(&junk, [0u8, 159, 146, 150, 255, 0, 1]).unwrap();
    fails(&run(&[s(&junk), "--to", t, "-o", o]), "neither");
    fails(&run(&[i, "--to", s(&junk), "-o", o]), "target");
    fails(&run(&[i, "--to", t, "-o", o, "--hdu", "4"]), "HDU 4");
    assert!(!out.exists());

    // A command line that cannot be parsed: exit status 2, one line.
    for args in [
        vec![i, "--to", t, "-o", o, "--no-such-option"],
        vec![i, "--to", t],
        vec![i, "--to", t, "-o", o, "--order", "sextic"],
    ] {
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
        assert!(err.starts_with("error: "), "{err:?}");
    }

    // An existing output is kept without --overwrite.
    std::fs::write(&out, b"precious").unwrap();
    fails(&run(&[i, "--to", t, "-o", o]), "--overwrite");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    let png = d.join("p.png");
    std::fs::write(&png, b"precious").unwrap();
    let out2 = d.join("out2.fits");
    fails(
        &run(&[i, "--to", t, "-o", s(&out2), "--png", s(&png)]),
        "--overwrite",
    );
    assert!(!out2.exists());
    ok(&run(&[i, "--to", t, "-o", o, "--overwrite", "-q"]));
    assert!(FitsSource::open(&out, 0).is_ok());

    // Bad option values.
    for (args, expect) in [
        (vec!["--order", "cubic"], "--order"),
        (vec!["--order", "9"], "--order"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--threads", "many"], "--threads"),
        (vec!["--dtype", "f16"], "--dtype"),
        (vec!["--block-size", "0"], "--block-size"),
        (vec!["--block-size", "8x"], "--block-size"),
        (vec!["--hdu", "-1"], "-1"),
        (vec!["--frobnicate"], "--frobnicate"),
    ] {
        let mut all = vec![i, "--to", t, "-o", s(&out2)];
        all.extend(args);
        fails(&run(&all), expect);
    }
    fails(&run(&[i, "--to", t]), "--output");
    fails(&run(&["info", s(&missing)]), "does not exist");
    fails(&run(&["info", s(&bad)]), "XYZ");
    fails(&run(&["demo", "--size", "3"]), "--size");
    assert!(!out2.exists());
    // No partial files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn info_summarises_the_wcs() {
    let d = dir("info");
    let input = d.join("in.fits");
    write_input(&input);
    let o = run(&["info", s(&input)]);
    ok(&o);
    let out = text(&o.stdout);
    for want in [
        "TAN (gnomonic)",
        "Galactic",
        "80 x 60",
        "BITPIX -32",
        "corners:",
        "pixel scale: 36.0000 x 36.0000 arcsec",
        "rotation:    15.0000 deg",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
    let target = d.join("t.hdr");
    std::fs::write(&target, TARGET).unwrap();
    let o = run(&["info", s(&target)]);
    ok(&o);
    let out = text(&o.stdout);
    assert!(out.contains("SIN (orthographic/synthesis)") && out.contains("ICRS"));
    assert!(out.contains("70 x 50"));
    // Sexagesimal for equatorial frames.
    assert!(out.contains("18h05m52.80s -20d02m24.0s"), "{out}");
}

#[test]
fn demo_writes_fits_and_previews() {
    let d = dir("demo");
    let out_dir = d.join("demo-output");
    // A foreign file in the directory is left alone.
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::write(out_dir.join("mine.txt"), b"keep").unwrap();
    for _ in 0..2 {
        let o = run(&["demo", "--size", "128", "--out-dir", s(&out_dir)]);
        ok(&o);
        let stdout = text(&o.stdout);
        assert!(
            stdout.contains("[4/4]") && stdout.contains("done in"),
            "{stdout}"
        );
    }
    assert_eq!(std::fs::read(out_dir.join("mine.txt")).unwrap(), b"keep");
    // The mosaic step: six exposures, background-matched into the tile's grid.
    let mosaic = FitsSource::open(out_dir.join("galactic_centre_mosaic.fits"), 0).unwrap();
    assert_eq!(mosaic.shape(), &[28, 28]);
    assert!(FitsSource::open(out_dir.join("galactic_centre_mosaic.fits"), 1).is_ok());
    assert!(out_dir.join("galactic_centre_mosaic.png").exists());
    assert!(out_dir.join("mosaic_exposure5.fits").exists());
    let survey = FitsSource::open(out_dir.join("galactic_survey_car.fits"), 0).unwrap();
    assert_eq!(survey.shape(), &[64, 128]);
    for (name, shape, grey) in [
        ("galactic_survey_car", (128, 64), false),
        ("galactic_centre_tan", (28, 28), false),
        ("allsky_equatorial_ait", (64, 32), true),
    ] {
        let fits = out_dir.join(format!("{name}.fits"));
        let src = FitsSource::open(&fits, 0).unwrap();
        assert_eq!(src.shape(), &[shape.1 as usize, shape.0 as usize], "{name}");
        if name != "galactic_survey_car" {
            assert!(FitsSource::open(&fits, 1).is_ok(), "{name}: footprint HDU");
            assert!(out_dir.join(format!("{name}.hdr")).exists());
        }
        let png = out_dir.join(format!("{name}.png"));
        assert!(std::fs::metadata(&png).unwrap().len() > 500, "{name}");
        let img = image::open(&png).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), shape, "{name}");
        let mut colours: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
        colours.sort();
        colours.dedup();
        assert!(colours.len() > 30, "{name}: {} colours", colours.len());
        let has_grey = img.pixels().any(|p| p.0 == [128, 128, 128]);
        assert_eq!(has_grey, grey, "{name}: outside-footprint grey");
        // Rows top to bottom: the AIT map's top-left corner is outside the sky.
        if grey {
            assert_eq!(img.get_pixel(0, 0).0, [128, 128, 128]);
        }
    }
}

#[test]
fn help_and_version() {
    let o = run(&["--help"]);
    ok(&o);
    let help = text(&o.stdout);
    assert!(help.contains("demo") && help.contains("info") && help.contains("reproject"));
    let o = run(&["reproject", "--help"]);
    ok(&o);
    for opt in [
        "--to",
        "--output",
        "--hdu",
        "--order",
        "--block-size",
        "--threads",
        "--dtype",
        "--footprint",
        "--overwrite",
        "--png",
        "--quiet",
        "--wcs",
    ] {
        assert!(text(&o.stdout).contains(opt), "{opt}");
    }
    let o = run(&["--version"]);
    ok(&o);
    assert!(text(&o.stdout).contains(env!("CARGO_PKG_VERSION")));
}

/// `--processes N`: worker processes of the binary write one memory-mapped output whose values
/// equal the library call; `--plan-only` + `worker --blocks` + the same command again is the
/// external-scheduler way, and a partial job is resumed, not restarted.
#[test]
fn processes_and_external_workers() {
    let d = dir("processes");
    let (input, target) = (d.join("in.fits"), d.join("target.hdr"));
    write_input(&input);
    std::fs::write(&target, TARGET).unwrap();
    let (want, want_fp) = library(&input, Order::Bicubic);

    let out = d.join("out.fits");
    let base = [
        s(&input),
        "--to",
        s(&target),
        "-o",
        s(&out),
        "--order",
        "bicubic",
        "--block-size",
        "16",
    ];
    let mut args = base.to_vec();
    args.extend(["--processes", "3"]);
    ok(&run(&args));
    let (_, data) = read_plane(&out, 0);
    let (_, footprint) = read_plane(&out, 1);
    assert!(same(&data, &want) && same(&footprint, &want_fp));
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("out.fits."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // External scheduler: prepare, run the blocks in two parts, publish.
    let out2 = d.join("out2.fits");
    let base2 = [
        s(&input),
        "--to",
        s(&target),
        "-o",
        s(&out2),
        "--order",
        "bicubic",
        "--block-size",
        "16",
        "--processes",
        "1",
    ];
    let mut prepare = base2.to_vec();
    prepare.push("--plan-only");
    let o = run(&prepare);
    ok(&o);
    let job = d.join("out2.fits.job.json");
    assert!(job.exists() && !out2.exists(), "{}", text(&o.stdout));
    let said = text(&o.stdout);
    assert!(
        said.starts_with("prepared the job") && !said.contains("wrote"),
        "--plan-only says what it prepared: {said}"
    );
    let blocks: usize = said
        .split(": ")
        .nth(1)
        .and_then(|r| r.split(" of ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no block count in: {said}"));
    assert!(
        said.contains(&format!("{blocks} of {blocks} blocks to compute")),
        "{said}"
    );
    ok(&run(&["worker", "--job", s(&job), "--blocks", "0..7"]));
    // Prepared again: the same job is found, with the blocks still to compute.
    let again = text(&run(&prepare).stdout);
    assert!(
        again.contains("found the job") && again.contains(&format!("{} of {blocks}", blocks - 7)),
        "{again}"
    );
    ok(&run(&["worker", "--job", s(&job), "--blocks", "7..1000"]));
    assert!(!out2.exists(), "only the final command publishes");
    let o = run(&base2);
    ok(&o);
    let said = text(&o.stdout);
    assert!(
        said.contains("no block left to compute (earlier workers computed them all)")
            && !said.contains("worker process(es)"),
        "the publishing run computed nothing: {said}"
    );
    let (_, data) = read_plane(&out2, 0);
    assert!(same(&data, &want));
    assert!(!job.exists());
    fails(
        &run(&["worker", "--job", s(&job), "--share", "0/2"]),
        "job.json",
    );
}

/// A job worth a GPU prepared where there is none (`--device auto`, no GPU here) keeps the
/// GPU's blocks for its workers (1024 rows: 2 for a 2048² target, where this machine's CPU
/// would cut 256): `--plan-only` and the run that publishes count those blocks, not the
/// ones this machine would have cut.
#[test]
fn a_job_worth_a_gpu_prepared_without_one_counts_its_own_blocks() {
    let d = dir("worth-a-gpu");
    let (input, target) = (d.join("in.fits"), d.join("big.hdr"));
    write_input(&input);
    let big = TARGET
        .replace("NAXIS1  = 70", "NAXIS1  = 2048")
        .replace("NAXIS2  = 50", "NAXIS2  = 2048")
        .replace("CRPIX1  = 30.0", "CRPIX1  = 1024.0")
        .replace("CRPIX2  = 20.0", "CRPIX2  = 1024.0")
        .replace("0.012\nCDELT2  = 0.012", "0.0005\nCDELT2  = 0.0005");
    std::fs::write(&target, big).unwrap();
    let out = d.join("out.fits");
    let base = [
        s(&input),
        "--to",
        s(&target),
        "-o",
        s(&out),
        "--device",
        "auto",
        "--processes",
        "2",
    ];
    let mut prepare = base.to_vec();
    prepare.push("--plan-only");
    let o = run(&prepare);
    ok(&o);
    let said = text(&o.stdout);
    assert!(said.contains(": 2 of 2 blocks to compute"), "{said}");
    let o = run(&base);
    ok(&o);
    let said = text(&o.stdout);
    assert!(
        said.contains("2 block(s) computed on 2 worker process(es)"),
        "{said}"
    );
}

/// A spectrum-by-slit image (WAVE in nm, PIXY) onto a target in Angstrom: the command line
/// reprojects non-celestial WCS as the library does, with threads and with worker processes,
/// and `info` names the axes.
#[test]
fn non_celestial_axes() {
    let d = dir("linear");
    let input = d.join("in.fits");
    let wcs = "CTYPE1  = 'WAVE'\nCUNIT1  = 'nm'\nCRPIX1  = 1\nCRVAL1  = 500\nCDELT1  = 0.5\n\
               CTYPE2  = 'PIXY'\nCRPIX2  = 1\nCRVAL2  = 0\nCDELT2  = 1";
    let image = Array2::from_shape_fn((40, 50), |(y, x)| (x as f32 * 0.7).sin() * 10.0 + y as f32);
    let mut out = MappedOutput::create_fits(&input, &[40, 50], OutputType::F32, wcs, true).unwrap();
    out.data_mut::<f32>()
        .unwrap()
        .copy_from_slice(image.as_slice().unwrap());
    out.finish().unwrap();
    let target = d.join("t.hdr");
    let target_text = "NAXIS   = 2\nNAXIS1  = 30\nNAXIS2  = 40\nCTYPE1  = 'WAVE'\n\
                       CUNIT1  = 'Angstrom'\nCRPIX1  = 1\nCRVAL1  = 5010\nCDELT1  = 3.0\n\
                       CTYPE2  = 'PIXY'\nCRPIX2  = 1\nCRVAL2  = 0\nCDELT2  = 1\nEND\n";
    std::fs::write(&target, target_text).unwrap();
    let src = FitsSource::open(&input, 0).unwrap();
    let (want, want_fp) = reproject_interp(
        &src,
        &src.wcs().unwrap(),
        &Wcs::from_header_str(target_text).unwrap(),
        &[40, 30],
        &Options::default(),
    )
    .unwrap();
    let want: Vec<f64> = want.iter().copied().collect();
    assert!(want.iter().all(|v| v.is_finite()));
    for (name, extra) in [
        ("threads.fits", "--threads=2"),
        ("procs.fits", "--processes=2"),
    ] {
        let o = d.join(name);
        ok(&run(&[s(&input), "--to", s(&target), "-o", s(&o), extra]));
        assert!(same(&read_plane(&o, 0).1, &want), "{name}");
        let footprint: Vec<f64> = want_fp.iter().copied().collect();
        assert!(same(&read_plane(&o, 1).1, &footprint), "{name}");
    }
    let info = run(&["info", s(&input)]);
    ok(&info);
    assert!(
        text(&info.stdout).contains("WAVE, PIXY"),
        "{}",
        text(&info.stdout)
    );
}

/// The CLI writes into output files it creates, fresh memory: the GPU's blocks there are
/// 128 rows high (`Plan::with_fresh_outputs`), so a 300-row target takes 3 blocks, not the
/// one of 1024 rows a plan into outputs written before would cut; the values are the
/// library's.
#[test]
fn new_output_files_get_the_gpus_blocks_for_fresh_outputs() {
    let d = dir("gpu-sim-fresh");
    let (input, target) = (d.join("in.fits"), d.join("tall.hdr"));
    write_input(&input);
    let tall = TARGET
        .replace("NAXIS2  = 50", "NAXIS2  = 300")
        .replace("CDELT2  = 0.012", "CDELT2  = 0.002");
    std::fs::write(&target, tall).unwrap();
    let out = d.join("out.fits");
    let mut args = vec![s(&input), "--to", s(&target), "-o", s(&out)];
    args.extend(["--device", "cuda"]);
    let o = run_simulated(&args, "1");
    ok(&o);
    assert!(
        text(&o.stdout).contains("3 block(s) computed"),
        "{}",
        text(&o.stdout)
    );
}

/// `--device cuda`, `cuda:1` and `cuda:all` under the CUDA simulator (two simulated GPUs):
/// threads and worker processes (one per GPU) give the library's values; a GPU that does not
/// exist is a clean error.
#[test]
fn gpu_devices_under_the_cuda_simulator() {
    let d = dir("gpu-sim");
    let (input, target) = (d.join("in.fits"), d.join("target.hdr"));
    write_input(&input);
    std::fs::write(&target, TARGET).unwrap();
    let (want, want_fp) = library(&input, Order::Bilinear);
    let sim = |args: &[&str]| run_simulated(args, "2");
    for (name, extra) in [
        ("threads.fits", vec!["--device", "cuda", "--threads", "2"]),
        (
            "gpu1.fits",
            vec!["--device", "cuda:1", "--block-size", "16"],
        ),
        (
            "procs.fits",
            vec![
                "--device",
                "cuda:all",
                "--processes",
                "3",
                "--block-size",
                "16",
            ],
        ),
    ] {
        let out = d.join(name);
        let mut args = vec![s(&input), "--to", s(&target), "-o", s(&out)];
        args.extend(extra.iter().copied());
        let o = sim(&args);
        ok(&o);
        if name == "procs.fits" {
            assert!(
                text(&o.stdout).contains("2 worker process(es)"),
                "{}",
                text(&o.stdout)
            );
        }
        let (_, data) = read_plane(&out, 0);
        let (_, footprint) = read_plane(&out, 1);
        assert!(same(&data, &want) && same(&footprint, &want_fp), "{name}");
    }
    let out = d.join("none.fits");
    fails(
        &sim(&[
            s(&input),
            "--to",
            s(&target),
            "-o",
            s(&out),
            "--device",
            "cuda:2",
        ]),
        "no GPU 2",
    );
    fails(
        &run(&[
            s(&input),
            "--to",
            s(&target),
            "-o",
            s(&out),
            "--device",
            "cpu:1",
        ]),
        "--device",
    );
}

/// `reproject-rs warmup`: a line per GPU it opened (here the simulator's two), nothing to do
/// for the CPU, clean errors for a GPU that does not exist and an architecture that is not
/// one. (Compiling with `--arch` needs libnvrtc: tests/gpu_background_compile.rs.)
#[test]
fn warmup_opens_the_gpus() {
    let sim = |args: &[&str]| run_simulated(args, "2");
    let o = sim(&["warmup"]);
    ok(&o);
    let lines: Vec<String> = text(&o.stdout).lines().map(String::from).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("GPU 0: CUDA simulator") && lines[1].starts_with("GPU 1:"));
    let o = sim(&["warmup", "--device", "cuda:1"]);
    ok(&o);
    assert!(text(&o.stdout).starts_with("GPU 1:"), "{}", text(&o.stdout));
    fails(&sim(&["warmup", "--device", "cuda:2"]), "no GPU 2");
    let o = run(&["warmup", "--device", "cpu"]);
    ok(&o);
    assert_eq!(text(&o.stdout).trim(), "cpu: nothing to prepare");
    fails(&run(&["warmup", "--arch", "9.0"]), "sm_90");
    fails(
        &run(&["warmup", "--arch", "sm_90", "--device", "cuda"]),
        "cannot be used with",
    );
}

/// `reproject-rs mosaic --to` a FITS image, a header text file padded after END (as astropy's
/// `Header.tostring(sep='\\n')` writes it) or one of 80-character cards without newlines (a
/// FITS header's bytes): the mosaic's header is the target's WCS without the target's data
/// keywords, the inputs' BUNIT and the mosaic's HISTORY, and every target gives the same image.
#[test]
fn mosaic_header_from_a_fits_or_padded_target() {
    let d = dir("mosaic_targets");
    let inputs = [d.join("a.fits"), d.join("b.fits")];
    for input in &inputs {
        write_input(input);
    }
    let cards = TARGET.trim_end().trim_end_matches("END");
    let fits_target = d.join("target.fits");
    let header = format!("{cards}DATAMIN = 0.0\nBUNIT   = 'Jy'");
    write_fits_target(&fits_target, &header);
    let text_target = d.join("target.hdr");
    std::fs::write(&text_target, format!("{cards}END{}", " ".repeat(1000))).unwrap();
    let block_target = d.join("target_block.hdr");
    let block: String = format!("COMMENT a header dumped as 80-character cards\n{cards}END")
        .lines()
        .map(|c| format!("{c:<80}"))
        .collect();
    std::fs::write(&block_target, block).unwrap();
    let mut images = Vec::new();
    for (target, out) in [
        (&fits_target, "from_fits.fits"),
        (&text_target, "from_text.fits"),
        (&block_target, "from_block.fits"),
    ] {
        let out = d.join(out);
        let o = run(&[
            "mosaic",
            s(&inputs[0]),
            s(&inputs[1]),
            "--to",
            s(target),
            "-o",
            s(&out),
        ]);
        ok(&o);
        let (src, data) = read_plane(&out, 0);
        let cards: Vec<&str> = src
            .header_text()
            .as_bytes()
            .chunks(80)
            .map(|c| std::str::from_utf8(c).unwrap().trim_end())
            .collect();
        let has = |start: &str| cards.iter().any(|c| c.starts_with(start));
        assert!(
            has("HISTORY reproject-rs") && has("CTYPE1  = 'RA---SIN'"),
            "{cards:?}"
        );
        assert!(
            has("BUNIT   = 'K'") && !has("DATAMIN") && !has("BUNIT   = 'Jy'"),
            "{cards:?}"
        );
        images.push(data);
    }
    assert!(same(&images[0], &images[1]) && same(&images[0], &images[2]));
}

/// `reproject-rs mosaic`: three shifted exposures with different backgrounds (one given as
/// weights too), combined with background matching, equal the library's mosaic exactly; a PNG
/// preview; clean errors for a weight count that does not match and an unknown combine mode.
#[test]
fn mosaic_matches_the_library() {
    use reproject::mosaic::coadd::{reproject_and_coadd, Background, MosaicInput, MosaicOptions};
    let d = dir("mosaic");
    let target = d.join("target.hdr");
    std::fs::write(&target, TARGET).unwrap();
    let mut paths = Vec::new();
    for (k, (dx, bg)) in [(0.0, 0.0), (9.0, 2.5), (-7.0, -1.0)].iter().enumerate() {
        let path = d.join(format!("in{k}.fits"));
        let header = INPUT_WCS.replace("CRPIX1  = 40.5", &format!("CRPIX1  = {}", 40.5 + dx));
        // The same sky in every exposure (pixel x here is pixel x - dx of the first).
        let image = Array2::from_shape_fn((60, 80), |(y, x)| {
            let sky_x = x as f32 - *dx as f32;
            ((sky_x * 0.3).sin() + (y as f32 * 0.2).cos()) * 10.0 + bg
        });
        let mut out =
            MappedOutput::create_fits(&path, &[60, 80], OutputType::F32, &header, true).unwrap();
        out.data_mut::<f32>()
            .unwrap()
            .copy_from_slice(image.as_slice().unwrap());
        out.finish().unwrap();
        paths.push(path);
    }
    let (out, png) = (d.join("mosaic.fits"), d.join("mosaic.png"));
    let mut args = vec!["mosaic"];
    args.extend(paths.iter().map(|p| s(p)));
    args.extend([
        "--to",
        s(&target),
        "-o",
        s(&out),
        "--match-background",
        "offset",
        "--png",
        s(&png),
        "--threads",
        "2",
        "--block-size",
        "16",
    ]);
    let o = run(&args);
    ok(&o);
    assert!(
        text(&o.stdout).contains("3 input(s)"),
        "{}",
        text(&o.stdout)
    );
    let sources: Vec<FitsSource> = paths
        .iter()
        .map(|p| FitsSource::open(p, 0).unwrap())
        .collect();
    let wcss: Vec<Wcs> = sources.iter().map(|s| s.wcs().unwrap()).collect();
    let inputs: Vec<MosaicInput> = sources
        .iter()
        .zip(&wcss)
        .map(|(s, w)| MosaicInput::new(s, w))
        .collect();
    let options = MosaicOptions {
        background: Background::Offset,
        ..MosaicOptions::default()
    };
    let wcs_out = Wcs::from_header_str(TARGET).unwrap();
    let want = reproject_and_coadd(&inputs, &wcs_out, &[50, 70], &options).unwrap();
    let (_, data) = read_plane(&out, 0);
    let (_, footprint) = read_plane(&out, 1);
    let want_data: Vec<f64> = want.data.iter().copied().collect();
    let want_fp: Vec<f64> = want.footprint.iter().copied().collect();
    assert!(same(&data, &want_data) && same(&footprint, &want_fp));
    assert!(
        footprint.contains(&3.0),
        "no pixel covered by all three inputs"
    );
    // The three backgrounds differ by 2.5 and 1: matched, the overlaps agree.
    let offsets: Vec<f64> = want.corrections.iter().map(|c| c.offset).collect();
    assert!((offsets[1] - offsets[0] - 2.5).abs() < 0.05, "{offsets:?}");
    assert!(std::fs::metadata(&png).unwrap().len() > 100);

    // --processes: the corrections computed once, bands of rows combined by worker
    // processes, the same file byte for byte.
    let by_processes = d.join("mosaic-processes.fits");
    let mut args = vec!["mosaic"];
    args.extend(paths.iter().map(|p| s(p)));
    args.extend([
        "--to",
        s(&target),
        "-o",
        s(&by_processes),
        "--match-background",
        "offset",
        "--processes",
        "2",
        "--block-size",
        "16",
    ]);
    let o = run(&args);
    ok(&o);
    assert!(
        text(&o.stdout).contains("2 worker process(es)"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(
        std::fs::read(&by_processes).unwrap(),
        std::fs::read(&out).unwrap()
    );
    // The same on the CUDA simulator, into `output`, with `extra` arguments.
    let on_sim = |output: &Path, extra: &[&str]| {
        let sim_args: Vec<&str> = args
            .iter()
            .map(|a| if *a == s(&by_processes) { s(output) } else { a })
            .chain(extra.iter().copied())
            .collect();
        let o = run_simulated(&sim_args, "1");
        ok(&o);
        assert_eq!(std::fs::read(output).unwrap(), std::fs::read(&out).unwrap());
        text(&o.stdout)
    };
    // On the GPU: the workers, given the corrections, sample and combine their bands on the
    // device; the same file byte for byte.
    on_sim(&d.join("mosaic-processes-gpu.fits"), &["--device", "cuda"]);
    // The default device (`auto`) where there is a GPU: exposures too small to be worth it
    // stay on the CPU, with as many workers as asked (not one per GPU); the same bytes.
    let said = on_sim(&d.join("mosaic-processes-auto.fits"), &[]);
    assert!(said.contains("2 worker process(es)"), "{said}");

    // --auto-wcs: the grid reproject's find_optimal_celestial_wcs would choose, its header
    // published beside the mosaic.
    let auto = d.join("auto.fits");
    let mut args = vec!["mosaic"];
    args.extend(paths.iter().map(|p| s(p)));
    args.extend(["-o", s(&auto), "--auto-wcs", "--projection", "CAR"]);
    ok(&run(&args));
    let shapes: Vec<((usize, usize), &Wcs)> = sources
        .iter()
        .zip(&wcss)
        .map(|(s, w)| (s.plane_shape(), w))
        .collect();
    let options = reproject::mosaic::optimal_wcs::OptimalWcsOptions {
        projection: "CAR".into(),
        ..Default::default()
    };
    let optimal = reproject::mosaic::optimal_wcs::optimal_celestial_wcs(&shapes, &options).unwrap();
    assert_eq!(
        std::fs::read_to_string(d.join("auto.fits.hdr")).unwrap(),
        optimal.header
    );
    let (src, _) = read_plane(&auto, 0);
    assert_eq!(src.plane_shape(), optimal.shape);

    let out2 = d.join("mosaic2.fits");
    let mut bad = vec!["mosaic"];
    bad.extend(paths.iter().map(|p| s(p)));
    bad.extend([
        "--to",
        s(&target),
        "-o",
        s(&out2),
        "--weights",
        s(&paths[0]),
    ]);
    fails(&run(&bad), "--weights");
    let mut bad = vec!["mosaic", s(&paths[0])];
    bad.extend(["--to", s(&target), "-o", s(&out2), "--combine", "mode"]);
    fails(&run(&bad), "--combine");
    assert!(!out2.exists());
}

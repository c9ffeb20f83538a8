//! The bad-input catalogue (reliability issue): every way we know of to hand reproject-rs
//! bad input, through the public API and the `reproject-rs` binary, each with the documented
//! error or NaN behaviour of docs/reliability.md.
//!
//! Every case checks that nothing panics or dies of a signal, that a failed run leaves no file
//! under the final output name (outputs are written to `<name>.partial` and renamed only when
//! complete), and that an existing user file is never destroyed by a failed run, with or
//! without `--overwrite`.
//!
//! The cases are tables of `(name, fn(dir))`, one table per topic; every case runs in its own
//! fresh directory and a failing case is reported by name without stopping the others.
//! `catalogue_is_complete` checks that there are at least 40 distinct cases.

#![cfg(feature = "fits")]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use ndarray::{Array2, Array3, ArrayD, IxDyn};
use reproject::engine::lazy::{InputSpec, LazyReprojection, ReprojectPlan};
use reproject::engine::{reproject_interp, reproject_interp_into, Options, Plan};
use reproject::interp::{NanPolicy, Order};
use reproject::io::{
    ArraySource, FitsSource, ImageSource, MappedOutput, OutputType, SampleType, StoredType,
};
use reproject::processes::{
    missing_blocks, prepare_job, run_processes, run_worker, BlockSelection, FileRequest,
    FootprintRequest, OutputRequest, ProcessJob, WorkerCommand,
};
use reproject::wcs::Wcs;
use reproject::Error;

const BIN: &str = env!("CARGO_BIN_EXE_reproject-rs");

/// One case: a name and a check run in a fresh directory (panics on failure).
type Case = (&'static str, fn(&Path));

// ------------------------------------------------------------------------------------------
// Helpers

/// Runs a table: every case in its own fresh directory; failures are collected by name.
fn run_table(table: &str, cases: &[Case]) {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("bad_input_catalogue")
        .join(table);
    let mut failed = Vec::new();
    for (i, (name, case)) in cases.iter().enumerate() {
        let dir = root.join(format!("case{i:02}"));
        if dir.exists() {
            make_writable(&dir);
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| case(&dir))) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{table} / {name}: {msg}"));
        }
    }
    assert!(failed.is_empty(), "failed cases:\n{}", failed.join("\n"));
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755));
                make_writable(&e.path());
            }
        }
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
}

fn wcs(text: &str) -> Wcs {
    Wcs::from_header_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A TAN header (0-based pixel `crpix - 1` at (lon, lat)), `cdelt` degrees per pixel.
fn tan(lon: f64, lat: f64, crpix: (f64, f64), cdelt: f64) -> String {
    format!(
        "CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = {}\nCRPIX2  = {}\n\
         CRVAL1  = {lon}\nCRVAL2  = {lat}\nCDELT1  = {}\nCDELT2  = {cdelt}\nRADESYS = 'ICRS'\n",
        crpix.0, crpix.1, -cdelt
    )
}

/// The standard input WCS of the file cases: 20 rows x 24 columns around (150, 30).
fn input_header() -> String {
    tan(150.0, 30.0, (12.5, 10.5), 0.01)
}

/// The standard target: 16 x 18 pixels, overlapping the input, shifted by a fraction.
fn target_header() -> String {
    format!(
        "NAXIS   = 2\nNAXIS1  = 18\nNAXIS2  = 16\n{}",
        tan(150.001, 30.002, (9.0, 8.0), 0.011)
    )
}

/// A card `KEY = value` padded to 80 characters.
fn card(line: &str) -> String {
    let (k, v) = line.split_once('=').unwrap_or((line, ""));
    let c = if v.is_empty() {
        k.to_string()
    } else {
        format!("{:<8}= {:>20}", k.trim(), v.trim())
    };
    assert!(c.len() <= 80, "{c}");
    format!("{c:<80}")
}

/// A primary-HDU FITS file: SIMPLE, BITPIX, NAXIS/NAXISn for `shape` (C order), the cards of
/// `extra` (newline-separated), END; then `data` (already big-endian), padded.
fn fits_bytes(bitpix: &str, shape: &[usize], extra: &str, data: &[u8]) -> Vec<u8> {
    let mut cards = vec![card("SIMPLE = T"), card(&format!("BITPIX = {bitpix}"))];
    cards.push(card(&format!("NAXIS = {}", shape.len())));
    for (i, n) in shape.iter().rev().enumerate() {
        cards.push(card(&format!("NAXIS{} = {n}", i + 1)));
    }
    for l in extra.lines().filter(|l| !l.trim().is_empty()) {
        cards.push(card(l));
    }
    cards.push(format!("{:<80}", "END"));
    let mut out = cards.concat().into_bytes();
    out.resize(out.len().div_ceil(2880) * 2880, b' ');
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(2880) * 2880, 0);
    out
}

/// Big-endian f32 bytes.
fn be_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// The standard input image (20 x 24, f32, smooth) and its FITS file.
fn input_image() -> Array2<f32> {
    Array2::from_shape_fn((20, 24), |(y, x)| {
        (x as f32 * 0.4).sin() * 5.0 + (y as f32 * 0.3).cos() * 3.0 + 10.0
    })
}

fn write_input(path: &Path) {
    let data = be_f32(input_image().as_slice().unwrap());
    std::fs::write(path, fits_bytes("-32", &[20, 24], &input_header(), &data)).unwrap();
}

/// The standard CLI job: `in.fits`, `t.hdr` in `dir`.
fn standard_job(dir: &Path) -> (PathBuf, PathBuf) {
    let (input, target) = (dir.join("in.fits"), dir.join("t.hdr"));
    write_input(&input);
    std::fs::write(&target, target_header()).unwrap();
    (input, target)
}

fn cli<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The arguments of a CLI job: `input --to target -o out`, then `extra`.
fn job_args<'a>(
    input: &'a Path,
    target: &'a Path,
    out: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a OsStr> {
    let mut args = vec![
        input.as_os_str(),
        "--to".as_ref(),
        target.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ];
    args.extend(extra.iter().map(|a| OsStr::new(*a)));
    args
}

/// Runs `reproject-rs input --to target -o out extra...`.
fn reproject_cli(input: &Path, target: &Path, out: &Path, extra: &[&str]) -> Output {
    cli(&job_args(input, target, out, extra))
}

/// Runs `input` onto the standard target (written to `dir`), into `dir/out.fits`.
fn onto_standard_target(dir: &Path, input: &Path) -> Output {
    let (_, target) = standard_job(dir);
    reproject_cli(input, &target, &dir.join("out.fits"), &[])
}

/// The standard target header with `NAXIS1 = n1` and `NAXIS2 = n2`.
fn target_of_size(n1: impl std::fmt::Display, n2: impl std::fmt::Display) -> String {
    target_header()
        .replace("NAXIS1  = 18", &format!("NAXIS1  = {n1}"))
        .replace("NAXIS2  = 16", &format!("NAXIS2  = {n2}"))
}

/// The standard input, and a target header file `name` in `dir` holding `header`.
fn job_with_target(dir: &Path, name: &str, header: &str) -> (PathBuf, PathBuf) {
    let (input, _) = standard_job(dir);
    let target = dir.join(name);
    std::fs::write(&target, header).unwrap();
    (input, target)
}

/// The user's file that a failed run must not destroy.
const PRECIOUS: &[u8] = b"precious";

fn assert_precious(path: &Path) {
    assert_eq!(std::fs::read(path).unwrap(), PRECIOUS, "{}", path.display());
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A clean CLI failure: exit status 1 (not a signal), one `error: ` line containing
/// `expect`, no panic.
fn fails(out: &Output, expect: &str) {
    let err = text(&out.stderr);
    assert!(
        out.status.signal().is_none(),
        "killed by signal {:?}: {err}",
        out.status.signal()
    );
    assert!(!out.status.success(), "unexpected success: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("error: "), "{err:?}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err:?}"
    );
    assert!(err.contains(expect), "{err:?} lacks {expect:?}");
}

/// A clean CLI failure (see `fails`) that left nothing under the output name `out`.
fn refused_without_output(o: &Output, expect: &str, out: &Path) {
    fails(o, expect);
    assert!(!out.exists(), "{} exists", out.display());
}

/// `e` is an `Error::InvalidArgument` whose message contains each of `needles`.
fn assert_invalid_argument(e: &Error, needles: &[&str]) {
    assert!(
        matches!(e, Error::InvalidArgument(m) if needles.iter().all(|n| m.contains(n))),
        "{e:?}"
    );
}

/// `e` is an `Error::Unsupported` (a valid request not implemented) whose message contains
/// each of `needles`.
fn assert_unsupported(e: &Error, needles: &[&str]) {
    assert!(
        matches!(e, Error::Unsupported(m) if needles.iter().all(|n| m.contains(n))),
        "{e:?}"
    );
}

/// `e` is an `Error::Io` whose message contains each of `needles`.
fn assert_io_error(e: &Error, needles: &[&str]) {
    assert!(
        matches!(e, Error::Io(m) if needles.iter().all(|n| m.contains(n))),
        "{e:?}"
    );
}

fn succeeds(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        text(&out.stderr)
    );
}

/// Names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// No `.partial` (or job/progress) file left in `dir`.
fn no_leftovers(dir: &Path) {
    let left: Vec<String> = listing(dir)
        .into_iter()
        .filter(|n| n.ends_with(".partial") || n.ends_with(".job.json") || n.ends_with(".progress"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// All of a FITS HDU's first plane.
fn read_plane(path: &Path, hdu: usize) -> Vec<f64> {
    let src = FitsSource::open(path, hdu).unwrap();
    let (ny, nx) = src.plane_shape();
    let mut buf = vec![0.0; ny * nx];
    src.read_window(0, 0..ny, 0..nx, &mut buf).unwrap();
    buf
}

fn array_source(a: &Array2<f64>) -> ArraySource<'_, f64> {
    ArraySource::new(a.view().into_dyn()).unwrap()
}

/// `reproject_interp` of an in-memory image.
fn interp_array(
    image: &Array2<f64>,
    w_in: &Wcs,
    w_out: &Wcs,
    shape: &[usize],
    o: &Options,
) -> reproject::Result<(ArrayD<f64>, ArrayD<f64>)> {
    reproject_interp(&array_source(image), w_in, w_out, shape, o)
}

fn options(order: Order, nan_policy: NanPolicy) -> Options {
    Options {
        order,
        nan_policy,
        ..Options::default()
    }
}

const ORDERS: [Order; 6] = Order::ALL;

/// Same bits, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Footprint is 1 exactly where the data are not NaN.
fn footprint_consistent(data: &ArrayD<f64>, footprint: &ArrayD<f64>) {
    for (d, f) in data.iter().zip(footprint) {
        assert_eq!(*f, if d.is_nan() { 0.0 } else { 1.0 }, "value {d}");
    }
}

// ------------------------------------------------------------------------------------------
// Files: truncated, wrong BITPIX, scaled integers, empty HDUs

const FILE_CASES: &[Case] = &[
    ("truncated FITS input at 9 offsets (CLI)", |d| {
        let (input, target) = standard_job(d);
        let good = std::fs::read(&input).unwrap();
        let out = d.join("out.fits");
        std::fs::write(&out, PRECIOUS).unwrap();
        // The data area (20 x 24 f32 = 1920 bytes) ends at 4800; the rest is padding.
        for cut in [0, 5, 9, 80, 1440, 2879, 2880, 2881, 4799] {
            let cut_file = d.join("cut.fits");
            std::fs::write(&cut_file, &good[..cut]).unwrap();
            let o = reproject_cli(&cut_file, &target, &out, &["--overwrite"]);
            // Fewer than 9 bytes cannot be recognised at all; beyond, CFITSIO or the data
            // size check rejects the file.
            fails(
                &o,
                if cut < 9 {
                    "neither a FITS file"
                } else {
                    "input"
                },
            );
            if cut >= 2880 {
                fails(&o, "truncated");
            }
            assert_eq!(std::fs::read(&out).unwrap(), PRECIOUS, "cut {cut}");
            no_leftovers(d);
        }
        // Only the padding after complete data is cut: the file is read.
        let cut_file = d.join("cut.fits");
        std::fs::write(&cut_file, &good[..4800]).unwrap();
        succeeds(&reproject_cli(
            &cut_file,
            &target,
            &out,
            &["--overwrite", "-q"],
        ));
        assert!(FitsSource::open(&out, 0).is_ok());
    }),
    ("truncated .npy input at 6 offsets (CLI with --wcs)", |d| {
        let (_, target) = standard_job(d);
        let hdr = d.join("in.hdr");
        std::fs::write(&hdr, input_header()).unwrap();
        let npy = d.join("in.npy");
        ndarray_npy::write_npy(&npy, &input_image()).unwrap();
        let good = std::fs::read(&npy).unwrap();
        let out = d.join("out.fits");
        for cut in [0, 6, 9, 40, 128, good.len() - 1] {
            let cut_file = d.join("cut.npy");
            std::fs::write(&cut_file, &good[..cut]).unwrap();
            let o = reproject_cli(&cut_file, &target, &out, &["--wcs", hdr.to_str().unwrap()]);
            fails(
                &o,
                if cut < 6 {
                    "neither a FITS file"
                } else {
                    "input"
                },
            );
            assert!(!out.exists(), "cut {cut}");
            no_leftovers(d);
        }
    }),
    ("unsupported BITPIX values", |d| {
        for bitpix in ["24", "-16", "0", "12", "'abc'"] {
            let p = d.join("bad_bitpix.fits");
            std::fs::write(&p, fits_bytes(bitpix, &[4, 4], "", &[0u8; 64])).unwrap();
            let e = FitsSource::open(&p, 0).expect_err(bitpix);
            assert!(matches!(e, Error::Fits(_)), "BITPIX {bitpix}: {e:?}");
            let o = onto_standard_target(d, &p);
            refused_without_output(&o, "input", &d.join("out.fits"));
        }
    }),
    (
        "BITPIX 8/16/32/64/-32/-64 with BSCALE, BZERO and BLANK, end to end (CLI)",
        |d| {
            // 3 x 4 images, identity reprojection with nearest-neighbour: the output holds
            // BZERO + BSCALE * stored, and NaN (footprint 0) where the stored value is BLANK.
            let header = tan(150.0, 30.0, (2.0, 1.5), 0.01);
            let target = d.join("t.hdr");
            std::fs::write(&target, format!("NAXIS1  = 4\nNAXIS2  = 3\n{header}")).unwrap();
            let stored: Vec<i64> = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
            for bitpix in [8, 16, 32, 64, -32, -64] {
                let blank_at = 5;
                let data: Vec<u8> = stored
                    .iter()
                    .enumerate()
                    .flat_map(|(i, &v)| {
                        let blank = i == blank_at;
                        match bitpix {
                            8 => vec![if blank { 255 } else { v as u8 }],
                            16 => (if blank { -32768 } else { v as i16 })
                                .to_be_bytes()
                                .to_vec(),
                            32 => (if blank { i32::MIN } else { v as i32 })
                                .to_be_bytes()
                                .to_vec(),
                            64 => (if blank { i64::MIN } else { v }).to_be_bytes().to_vec(),
                            -32 => (if blank { f32::NAN } else { v as f32 })
                                .to_be_bytes()
                                .to_vec(),
                            _ => (if blank { f64::NAN } else { v as f64 })
                                .to_be_bytes()
                                .to_vec(),
                        }
                    })
                    .collect();
                let blank = match bitpix {
                    8 => "BLANK = 255\n",
                    16 => "BLANK = -32768\n",
                    32 => "BLANK = -2147483648\n",
                    64 => "BLANK = -9223372036854775808\n",
                    _ => "",
                };
                let extra = format!("BSCALE = 2.5\nBZERO = -7\n{blank}{header}");
                let input = d.join(format!("in{bitpix}.fits"));
                std::fs::write(
                    &input,
                    fits_bytes(&bitpix.to_string(), &[3, 4], &extra, &data),
                )
                .unwrap();
                let out = d.join(format!("out{bitpix}.fits"));
                succeeds(&reproject_cli(
                    &input,
                    &target,
                    &out,
                    &["--order", "0", "-q"],
                ));
                let (got, fp) = (read_plane(&out, 0), read_plane(&out, 1));
                for (i, &v) in stored.iter().enumerate() {
                    if i == blank_at {
                        assert!(
                            got[i].is_nan() && fp[i] == 0.0,
                            "BITPIX {bitpix}: {}",
                            got[i]
                        );
                    } else {
                        assert_eq!(got[i], -7.0 + 2.5 * v as f64, "BITPIX {bitpix} pixel {i}");
                        assert_eq!(fp[i], 1.0);
                    }
                }
            }
        },
    ),
    (
        "FITS input whose primary HDU has no data (NAXIS = 0)",
        |d| {
            let p = d.join("empty.fits");
            std::fs::write(&p, fits_bytes("8", &[], &input_header(), &[])).unwrap();
            let o = onto_standard_target(d, &p);
            refused_without_output(&o, "input", &d.join("out.fits"));
        },
    ),
    ("input image with a zero-length axis (NAXIS1 = 0)", |d| {
        let p = d.join("zero.fits");
        std::fs::write(&p, fits_bytes("-32", &[5, 0], &input_header(), &[])).unwrap();
        let o = onto_standard_target(d, &p);
        refused_without_output(&o, "input", &d.join("out.fits"));
    }),
    (
        "target HDU that is a binary table, not an image (CLI --to-hdu)",
        |d| {
            let (input, _) = standard_job(d);
            let mut bytes = fits_bytes("8", &[], "EXTEND = T", &[]);
            let mut table = vec![
                card("XTENSION= 'BINTABLE'"),
                card("BITPIX = 8"),
                card("NAXIS = 2"),
                card("NAXIS1 = 4"),
                card("NAXIS2 = 1"),
                card("PCOUNT = 0"),
                card("GCOUNT = 1"),
                card("TFIELDS = 1"),
                card("TFORM1 = '1J'"),
            ];
            table.push(format!("{:<80}", "END"));
            let mut t = table.concat().into_bytes();
            t.resize(2880, b' ');
            t.extend([0, 0, 0, 1]);
            t.resize(5760, 0);
            bytes.extend(t);
            let target = d.join("table.fits");
            std::fs::write(&target, bytes).unwrap();
            let out = d.join("out.fits");
            let o = reproject_cli(&input, &target, &out, &["--to-hdu", "1"]);
            refused_without_output(&o, "target", &out);
        },
    ),
    ("gzip magic followed by garbage", |d| {
        let p = d.join("bad.fits.gz");
        std::fs::write(&p, [0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).unwrap();
        fails(&onto_standard_target(d, &p), "input");
    }),
    ("singular CD matrix in an input FITS header (CLI)", |d| {
        let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 2\nCRPIX2 = 2\n\
                      CRVAL1 = 150\nCRVAL2 = 30\nCD1_1 = 0.01\nCD1_2 = 0.02\nCD2_1 = 0.005\n\
                      CD2_2 = 0.01";
        let p = d.join("singular.fits");
        std::fs::write(&p, fits_bytes("-32", &[3, 3], header, &be_f32(&[1.0; 9]))).unwrap();
        let o = onto_standard_target(d, &p);
        fails(&o, "singular");
        fails(&o, "input");
    }),
    ("singular PC matrix in the target header (CLI)", |d| {
        let header = format!(
            "{}PC1_1   = 1.0\nPC1_2   = 2.0\nPC2_1   = 0.5\nPC2_2   = 1.0\n",
            target_header()
        );
        let (input, target) = job_with_target(d, "t.hdr", &header);
        let o = reproject_cli(&input, &target, &d.join("out.fits"), &[]);
        fails(&o, "singular");
        fails(&o, "target");
    }),
];

#[test]
fn files() {
    run_table("files", FILE_CASES);
}

// ------------------------------------------------------------------------------------------
// Pixel values: NaN, Inf, denormals, huge values

/// A 9 x 9 image of ones with `value` at (4, 4), reprojected onto the same grid shifted by a
/// quarter pixel in x (output x = input x + 0.25).
fn one_odd_pixel(value: f64, order: Order, policy: NanPolicy) -> (ArrayD<f64>, ArrayD<f64>) {
    let mut image = Array2::from_elem((9, 9), 1.0);
    image[[4, 4]] = value;
    let w_in = wcs(&tan(150.0, 30.0, (5.0, 5.0), 0.01));
    let w_out = wcs(&tan(150.0, 30.0, (5.25, 5.0), 0.01));
    let (d, f) = interp_array(&image, &w_in, &w_out, &[9, 9], &options(order, policy)).unwrap();
    footprint_consistent(&d, &f);
    (d, f)
}

const VALUE_CASES: &[Case] = &[
    (
        "NaN pixel, Propagate: poisons exactly the samples whose taps touch it",
        |_| {
            // Orders 0 and 1: only the pixels whose taps include (4, 4); orders >= 2: the spline
            // prefilter spreads a NaN over the whole image, as scipy does.
            let (d, _) = one_odd_pixel(f64::NAN, Order::NearestNeighbor, NanPolicy::Propagate);
            let nan: Vec<(usize, usize)> = (0..81)
                .map(|i| (i / 9, i % 9))
                .filter(|&(y, x)| d[[y, x]].is_nan())
                .collect();
            assert_eq!(nan, [(4, 4)]);
            // Bilinear: the output pixels with a tap on it, even with a (near) zero weight: the
            // two columns sampling it, and the next row where the TAN curvature puts the sample a
            // hair off the row centre.
            let (d, _) = one_odd_pixel(f64::NAN, Order::Bilinear, NanPolicy::Propagate);
            for ((y, x), v) in d.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
                if (y, x) == (4, 4) || (y, x) == (4, 5) {
                    assert!(v.is_nan());
                } else if v.is_nan() {
                    assert!(
                        (3..=5).contains(&y) && (4..=5).contains(&x),
                        "NaN at ({y}, {x})"
                    );
                } else {
                    assert!((v - 1.0).abs() < 1e-12, "({y}, {x}): {v}");
                }
            }
            for order in &ORDERS[2..] {
                let (d, _) = one_odd_pixel(f64::NAN, *order, NanPolicy::Propagate);
                assert!(d.iter().all(|v| v.is_nan()), "{order:?}");
            }
        },
    ),
    (
        "NaN pixel, Renormalize: weights renormalised over valid taps",
        |_| {
            let (d, _) = one_odd_pixel(f64::NAN, Order::Bilinear, NanPolicy::Renormalize);
            assert!(d.iter().all(|v| *v == 1.0), "{d:?}");
            for order in &ORDERS[2..] {
                let (d, _) = one_odd_pixel(f64::NAN, *order, NanPolicy::Renormalize);
                for (i, v) in d.iter().enumerate() {
                    // NaN only where the nearest input pixel is the NaN one.
                    if i == 4 * 9 + 4 {
                        assert!(v.is_nan(), "{order:?}");
                    } else {
                        assert!((v - 1.0).abs() < 1e-12, "{order:?} {i}: {v}");
                    }
                }
            }
            let (d, _) = one_odd_pixel(f64::NAN, Order::NearestNeighbor, NanPolicy::Renormalize);
            assert!(d[[4, 4]].is_nan() && d[[4, 5]] == 1.0);
        },
    ),
    (
        "+-Inf pixel: a value for orders 0-1, NaN through the spline prefilter",
        |_| {
            for inf in [f64::INFINITY, f64::NEG_INFINITY] {
                let (d, _) = one_odd_pixel(inf, Order::NearestNeighbor, NanPolicy::Propagate);
                assert_eq!(d[[4, 4]], inf);
                assert_eq!(d.iter().filter(|v| v.is_infinite()).count(), 1);
                let (d, f) = one_odd_pixel(inf, Order::Bilinear, NanPolicy::Propagate);
                assert_eq!((d[[4, 4]], d[[4, 5]]), (inf, inf));
                assert_eq!(f[[4, 5]], 1.0, "an infinity is a value: footprint 1");
                let (d, _) = one_odd_pixel(inf, Order::Bicubic, NanPolicy::Propagate);
                assert!(d.iter().all(|v| v.is_nan()));
                // Renormalize treats non-finite pixels as missing for orders >= 2.
                let (d, _) = one_odd_pixel(inf, Order::Bicubic, NanPolicy::Renormalize);
                assert!(d[[4, 4]].is_nan());
                assert_eq!(d.iter().filter(|v| v.is_nan()).count(), 1);
                assert!(d.iter().all(|v| v.is_nan() || (v - 1.0).abs() < 1e-12));
            }
        },
    ),
    ("denormal values are kept, never flushed to zero", |_| {
        let tiny = f64::from_bits(1); // 4.9e-324, the smallest denormal
        let image = Array2::from_shape_fn((6, 7), |(y, x)| tiny * (1 + y * 7 + x) as f64);
        let w = wcs(&tan(150.0, 30.0, (4.0, 3.0), 0.01));
        for order in [Order::NearestNeighbor, Order::Bilinear] {
            let o = Options {
                precision: reproject::engine::Precision::Float64,
                ..options(order, NanPolicy::Propagate)
            };
            let (d, f) = interp_array(&image, &w, &w, &[6, 7], &o).unwrap();
            for ((y, x), v) in image.indexed_iter() {
                assert_eq!(d[[y, x]], *v, "{order:?} ({y}, {x})");
                assert_eq!(f[[y, x]], 1.0);
            }
        }
        // Through the spline prefilter the values stay finite and non-negative.
        let (d, _) = one_odd_pixel(tiny, Order::Bicubic, NanPolicy::Propagate);
        assert!(d.iter().all(|v| v.is_finite()));
    }),
    (
        "finite values near f64::MAX: exact for orders 0-1, overflow to NaN in the spline",
        |_| {
            let (d, _) = one_odd_pixel(f64::MAX, Order::NearestNeighbor, NanPolicy::Propagate);
            assert_eq!(d[[4, 4]], f64::MAX);
            let (d, _) = one_odd_pixel(f64::MAX, Order::Bilinear, NanPolicy::Propagate);
            assert!(d.iter().all(|v| v.is_finite()));
            // The prefilter's gain overflows: non-finite coefficients, NaN samples (scipy too).
            let (d, f) = one_odd_pixel(f64::MAX, Order::Bicubic, NanPolicy::Propagate);
            assert!(d.iter().all(|v| v.is_nan()) && f.iter().all(|v| *v == 0.0));
        },
    ),
    (
        "all-NaN input: all-NaN output and zero footprint, every order and policy",
        |_| {
            let image = Array2::from_elem((8, 8), f64::NAN);
            let w = wcs(&tan(150.0, 30.0, (4.0, 4.0), 0.01));
            for order in ORDERS {
                for policy in [NanPolicy::Propagate, NanPolicy::Renormalize] {
                    let (d, f) =
                        interp_array(&image, &w, &w, &[8, 8], &options(order, policy)).unwrap();
                    assert!(d.iter().all(|v| v.is_nan()) && f.iter().all(|v| *v == 0.0));
                }
            }
        },
    ),
    (
        "integer input of every width is read exactly (i8 to u64 extremes)",
        |_| {
            let w = wcs(&tan(150.0, 30.0, (2.0, 1.0), 0.01));
            let o = Options {
                precision: reproject::engine::Precision::Float64,
                ..options(Order::NearestNeighbor, NanPolicy::Propagate)
            };
            let check = |src: &dyn ImageSource, want: [f64; 3]| {
                let (d, _) = reproject_interp(src, &w, &w, &[1, 3], &o).unwrap();
                assert_eq!(d.as_slice().unwrap(), want);
            };
            let a = ndarray::arr2(&[[i8::MIN, 0, i8::MAX]]);
            check(
                &ArraySource::new(a.view().into_dyn()).unwrap(),
                [-128.0, 0.0, 127.0],
            );
            let a = ndarray::arr2(&[[0u64, 1, u64::MAX]]);
            check(
                &ArraySource::new(a.view().into_dyn()).unwrap(),
                [0.0, 1.0, u64::MAX as f64],
            );
            let a = ndarray::arr2(&[[i64::MIN, -1, i64::MAX]]);
            check(
                &ArraySource::new(a.view().into_dyn()).unwrap(),
                [i64::MIN as f64, -1.0, i64::MAX as f64],
            );
        },
    ),
];

#[test]
fn pixel_values() {
    run_table("pixel_values", VALUE_CASES);
}

// ------------------------------------------------------------------------------------------
// Shapes: 1 pixel, 1 x N, N x 1, zero, gigantic

const SHAPE_CASES: &[Case] = &[
    ("1 x 1 input, every order: the pixel, or NaN off it", |_| {
        let image = Array2::from_elem((1, 1), 42.0);
        let w = wcs(&tan(150.0, 30.0, (1.0, 1.0), 0.01));
        for order in ORDERS {
            let o = options(order, NanPolicy::Propagate);
            let (d, f) = interp_array(&image, &w, &w, &[1, 1], &o).unwrap();
            // Spline orders: the prefilter of a single sample rounds (scipy's too).
            assert!(
                (d[[0, 0]] - 42.0).abs() < 1e-12 && f[[0, 0]] == 1.0,
                "{order:?}: {d}"
            );
            // Half a pixel or more away from the only pixel: NaN.
            let (d, f) = interp_array(&image, &w, &w, &[2, 2], &o).unwrap();
            assert!((d[[0, 0]] - 42.0).abs() < 1e-12);
            assert!(d[[1, 1]].is_nan() && f[[1, 1]] == 0.0, "{order:?}");
        }
    }),
    (
        "1 x N and N x 1 inputs, every order: the row or column itself",
        |_| {
            for (ny, nx) in [(1usize, 9usize), (9, 1)] {
                let image = Array2::from_shape_fn((ny, nx), |(y, x)| (3 * y + 5 * x) as f64);
                let w = wcs(&tan(150.0, 30.0, (1.0, 1.0), 0.01));
                for order in ORDERS {
                    let (d, f) = interp_array(
                        &image,
                        &w,
                        &w,
                        &[ny, nx],
                        &options(order, NanPolicy::Propagate),
                    )
                    .unwrap();
                    for ((y, x), v) in image.indexed_iter() {
                        assert!((d[[y, x]] - v).abs() < 1e-9, "{ny}x{nx} {order:?}: {d:?}");
                        assert_eq!(f[[y, x]], 1.0);
                    }
                }
            }
        },
    ),
    (
        "1 x 1, 1 x N and N x 1 outputs equal the same pixels of a full output",
        |_| {
            let image = Array2::from_shape_fn((30, 30), |(y, x)| ((x * 7 + y * 3) % 11) as f64);
            let w_in = wcs(&tan(150.0, 30.0, (15.0, 15.0), 0.01));
            let out = |crpix: (f64, f64)| wcs(&tan(150.01, 29.99, crpix, 0.012));
            let o = options(Order::Bicubic, NanPolicy::Propagate);
            let (full, _) = interp_array(&image, &w_in, &out((10.0, 11.0)), &[20, 20], &o).unwrap();
            // An output window starting at (r, c) is the full output with CRPIX shifted by it.
            for (r, c, ny, nx) in [(5, 7, 1, 1), (9, 2, 1, 15), (3, 12, 14, 1)] {
                let w = out((10.0 - c as f64, 11.0 - r as f64));
                let (part, _) = interp_array(&image, &w_in, &w, &[ny, nx], &o).unwrap();
                for y in 0..ny {
                    for x in 0..nx {
                        let (a, b) = (part[[y, x]], full[[r + y, c + x]]);
                        assert!(
                            (a - b).abs() < 1e-9 || (a.is_nan() && b.is_nan()),
                            "{a} {b}"
                        );
                    }
                }
            }
        },
    ),
    ("zero-size output shape in the target header (CLI)", |d| {
        for (n1, n2) in [(0, 16), (18, 0), (-3, 16)] {
            let (input, target) = job_with_target(d, "zero.hdr", &target_of_size(n1, n2));
            let out = d.join("out.fits");
            refused_without_output(&reproject_cli(&input, &target, &out, &[]), "target", &out);
        }
    }),
    (
        "gigantic in-memory output (10^6 x 10^6) refused with the fix named",
        |_| {
            let image = Array2::from_elem((4, 4), 1.0);
            let source = Arc::new(ArraySource::new(image.view().into_dyn()).unwrap());
            let w = wcs(&tan(150.0, 30.0, (2.0, 2.0), 0.01));
            let n = 1_000_000;
            let refused = |e: Error| {
                assert_invalid_argument(&e, &["memory", "output file"]);
            };
            refused(reproject_interp(&*source, &w, &w, &[n, n], &Options::default()).unwrap_err());
            let lazy = LazyReprojection::new(
                Plan::with_shared_source(source.clone(), &w, &w, &[n, n], &Options::default())
                    .unwrap(),
            );
            refused(lazy.compute().unwrap_err());
            // One block as big as the whole plane: refused too, not allocated.
            let one_block = Options {
                block_size: Some((n, n)),
                ..Options::default()
            };
            let lazy = LazyReprojection::new(
                Plan::with_shared_source(source, &w, &w, &[n, n], &one_block).unwrap(),
            );
            let handles = lazy.blocks();
            assert_eq!(handles.len(), 1);
            refused(handles[0].compute().unwrap_err());
        },
    ),
    (
        "output shape whose size overflows usize: an error, not a panic",
        |_| {
            let image = Array2::from_elem((4, 4), 1.0);
            let w = wcs(&tan(150.0, 30.0, (2.0, 2.0), 0.01));
            for shape in [
                vec![usize::MAX / 2, 3],
                vec![1 << 40, 1 << 40],
                vec![usize::MAX, usize::MAX],
            ] {
                let e = interp_array(&image, &w, &w, &shape, &Options::default()).unwrap_err();
                assert_invalid_argument(&e, &["output file"]);
                let e = MappedOutput::create_npy(
                    std::env::temp_dir().join("never_created.npy"),
                    &shape,
                    OutputType::F64,
                    false,
                )
                .unwrap_err();
                assert!(
                    matches!(e, Error::InvalidArgument(_) | Error::Io(_)),
                    "{e:?}"
                );
            }
        },
    ),
    (
        "gigantic output file (10^6 x 10^6 f64) larger than the disk (CLI)",
        |d| {
            let header = target_of_size(1000000, 1000000);
            let (input, target) = job_with_target(d, "huge.hdr", &header);
            let out = d.join("out.fits");
            let o = reproject_cli(&input, &target, &out, &[]);
            // 16 TB: beyond the free space (or the file system's largest file).
            refused_without_output(&o, "cannot write", &out);
            no_leftovers(d);
        },
    ),
    (
        "block size larger than the output is clipped, values unchanged",
        |_| {
            let image = Array2::from_shape_fn((20, 20), |(y, x)| (x * y) as f64);
            let w_in = wcs(&tan(150.0, 30.0, (10.0, 10.0), 0.01));
            let w_out = wcs(&tan(150.003, 30.0, (9.0, 10.5), 0.01));
            let o = options(Order::Bicubic, NanPolicy::Propagate);
            let (a, _) = interp_array(&image, &w_in, &w_out, &[17, 19], &o).unwrap();
            let big = Options {
                block_size: Some((usize::MAX, 1 << 40)),
                ..o
            };
            let (b, _) = interp_array(&image, &w_in, &w_out, &[17, 19], &big).unwrap();
            assert!(a.iter().zip(&b).all(|(x, y)| same(*x, *y)));
        },
    ),
    (
        "blocks whose working memory exceeds the memory available: refused, not aborted",
        |_| {
            let available = reproject::io::available_memory().expect("Linux reports memory");
            let image = Array2::from_elem((4, 4), 1.0);
            let w = wcs(&tan(150.0, 30.0, (2.0, 2.0), 0.01));
            // One block of side² pixels, whose per-pixel working buffers (32 bytes a pixel)
            // need twice the memory available; then the list of 1 x 1 blocks of an output
            // with as many blocks as that.
            let big_block = ((available / 16) as f64).sqrt().ceil() as usize;
            let many_blocks = ((available / 64) as f64).sqrt().ceil() as usize;
            for (side, block, fix) in [
                (big_block, (big_block, big_block), "smaller block_size"),
                (many_blocks, (1, 1), "larger block_size"),
            ] {
                let bytes = side * side * 4;
                // The caller's output buffers: address space only (MAP_NORESERVE), never
                // touched since the call is refused first.
                let map = || {
                    // SAFETY: an anonymous private mapping; checked against MAP_FAILED.
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            bytes,
                            libc::PROT_READ | libc::PROT_WRITE,
                            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                            -1,
                            0,
                        )
                    };
                    assert_ne!(p, libc::MAP_FAILED);
                    p
                };
                let (pd, pf) = (map(), map());
                // SAFETY: two distinct mappings of side² f32 each, alive until munmap below.
                let (data, footprint) = unsafe {
                    (
                        ndarray::ArrayViewMutD::<f32>::from_shape_ptr(
                            IxDyn(&[side, side]),
                            pd as *mut f32,
                        ),
                        ndarray::ArrayViewMutD::<f32>::from_shape_ptr(
                            IxDyn(&[side, side]),
                            pf as *mut f32,
                        ),
                    )
                };
                let o = Options {
                    block_size: Some(block),
                    ..Options::default()
                };
                let r = reproject_interp_into(&array_source(&image), &w, &w, data, footprint, &o);
                // SAFETY: the mappings made above, no longer referenced.
                unsafe {
                    libc::munmap(pd, bytes);
                    libc::munmap(pf, bytes);
                }
                let e = r.unwrap_err();
                assert_invalid_argument(&e, &["working memory", fix]);
            }
        },
    ),
    (
        "--block-size 1 with more blocks than memory can list (CLI): refused",
        |d| {
            let available = reproject::io::available_memory().expect("Linux reports memory");
            // About 150 bytes of bookkeeping per block: twice the memory available.
            let side = ((available / 75) as f64).sqrt().ceil() as usize;
            let (input, target) = job_with_target(d, "huge.hdr", &target_of_size(side, side));
            let out = d.join("out.fits");
            let extra = ["--block-size", "1", "--dtype", "f32", "-q"];
            let o = reproject_cli(&input, &target, &out, &extra);
            // Where the sparse output does not even fit on the disk, that is the error.
            let expect = if text(&o.stderr).contains("do not fit") {
                "do not fit"
            } else {
                "use a larger --block-size"
            };
            refused_without_output(&o, expect, &out);
            no_leftovers(d);
        },
    ),
    (
        "non-contiguous caller output arrays: a shape error, nothing written",
        |_| {
            let image = Array2::from_elem((8, 8), 1.0);
            let w = wcs(&tan(150.0, 30.0, (4.0, 4.0), 0.01));
            let mut big = ArrayD::<f64>::from_elem(IxDyn(&[8, 16]), 7.0);
            let mut fp = ArrayD::<f64>::zeros(IxDyn(&[8, 8]));
            let strided = big.slice_each_axis_mut(|ax| {
                if ax.axis.index() == 1 {
                    ndarray::Slice::new(0, None, 2)
                } else {
                    ndarray::Slice::from(..)
                }
            });
            let e = reproject_interp_into(
                &array_source(&image),
                &w,
                &w,
                strided,
                fp.view_mut(),
                &Options::default(),
            )
            .unwrap_err();
            assert!(
                matches!(&e, Error::ShapeMismatch(m) if m.contains("contiguous")),
                "{e:?}"
            );
            assert!(big.iter().all(|v| *v == 7.0));
        },
    ),
];

#[test]
fn shapes() {
    run_table("shapes", SHAPE_CASES);
}

// ------------------------------------------------------------------------------------------
// Geometry: poles and the boundaries of projections

/// A smooth function of the sky, continuous at the poles.
fn sky(lon: f64, lat: f64) -> f64 {
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    lat.sin() + 0.1 * lat.cos() * lon.cos()
}

/// An all-sky CAR input (1 degree pixels) holding `sky`.
fn car_sky() -> (Wcs, Array2<f64>) {
    let w = wcs(
        "CTYPE1 = 'RA---CAR'\nCTYPE2 = 'DEC--CAR'\nCRPIX1 = 180.5\nCRPIX2 = 90.5\nCRVAL1 = 0\n\
         CRVAL2 = 0\nCDELT1 = -1\nCDELT2 = 1\nRADESYS = 'ICRS'\n",
    );
    let image = Array2::from_shape_fn((180, 360), |(y, x)| {
        let (lon, lat) = w.pixel_to_world(x as f64, y as f64).unwrap();
        sky(lon, lat)
    });
    (w, image)
}

/// The documented rule at projection boundaries, checked pixel by pixel: an output pixel with
/// no world coordinates, or whose world point has no input pixel (the far side of TAN/SIN,
/// beyond a ZPN/AZP limit, outside AIT/MOL/HPX), is NaN with footprint 0; every finite value
/// is the input's sky function at that point (bilinear accuracy), never a value folded in
/// from elsewhere. Returns the number of finite pixels.
fn check_boundaries(w_in: &Wcs, image: &Array2<f64>, w_out: &Wcs, shape: (usize, usize)) -> usize {
    let (d, f) =
        interp_array(image, w_in, w_out, &[shape.0, shape.1], &Options::default()).unwrap();
    footprint_consistent(&d, &f);
    let (ny, nx) = image.dim();
    let mut finite = 0;
    for y in 0..shape.0 {
        for x in 0..shape.1 {
            let v = d[[y, x]];
            let world = w_out.pixel_to_world(x as f64, y as f64);
            let inside = world
                .and_then(|(lon, lat)| w_in.world_to_pixel(lon, lat))
                .filter(|&(px, py)| {
                    px >= -0.5 && px < nx as f64 - 0.5 && py >= -0.5 && py < ny as f64 - 0.5
                });
            if inside.is_none() {
                assert!(v.is_nan(), "({y}, {x}): {v} where there is no input");
            }
            if v.is_finite() {
                finite += 1;
                let (lon, lat) = world.unwrap();
                assert!(
                    (v - sky(lon, lat)).abs() < 2e-2,
                    "({y}, {x}) at ({lon}, {lat}): {v} vs {}",
                    sky(lon, lat)
                );
            }
        }
    }
    finite
}

/// An all-sky output header of `code` (2 degree pixels, 100 x 200).
fn all_sky(code: &str) -> Wcs {
    wcs(&format!(
        "CTYPE1 = 'RA---{code}'\nCTYPE2 = 'DEC--{code}'\nCRPIX1 = 100.5\nCRPIX2 = 50.5\n\
         CRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -2\nCDELT2 = 2\nRADESYS = 'ICRS'\n"
    ))
}

/// `check_boundaries` from the all-sky CAR input onto the all-sky output of `code`, with a
/// number of finite pixels in `finite`.
fn all_sky_output(code: &str, finite: std::ops::Range<usize>) {
    let (car, image) = car_sky();
    let n = check_boundaries(&car, &image, &all_sky(code), (100, 200));
    assert!(finite.contains(&n), "{n}");
}

/// A 200 x 200 input of `code` (`cdelt` degree pixels) holding `sky` (NaN off the sky),
/// reprojected onto an all-sky CAR: far sides and limits must give NaN.
fn projection_as_input(code: &str, extra: &str, cdelt: f64) -> usize {
    let w_in = wcs(&format!(
        "CTYPE1 = 'RA---{code}'\nCTYPE2 = 'DEC--{code}'\nCRPIX1 = 100.5\nCRPIX2 = 100.5\n\
         CRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -{cdelt}\nCDELT2 = {cdelt}\nRADESYS = 'ICRS'\n{extra}"
    ));
    let image = Array2::from_shape_fn((200, 200), |(y, x)| {
        w_in.pixel_to_world(x as f64, y as f64)
            .map_or(f64::NAN, |(lon, lat)| sky(lon, lat))
    });
    let car = wcs(
        "CTYPE1 = 'RA---CAR'\nCTYPE2 = 'DEC--CAR'\nCRPIX1 = 90.5\nCRPIX2 = 45.5\nCRVAL1 = 0\n\
         CRVAL2 = 0\nCDELT1 = -2\nCDELT2 = 2\nRADESYS = 'ICRS'\n",
    );
    check_boundaries(&w_in, &image, &car, (90, 180))
}

const GEOMETRY_CASES: &[Case] = &[
    (
        "TAN centred on the north pole: finite, correct values all around it",
        |_| {
            let (car, image) = car_sky();
            let pole = wcs(&tan(0.0, 90.0, (20.0, 20.0), 0.5));
            assert_eq!(check_boundaries(&car, &image, &pole, (41, 41)), 41 * 41 - 1);
        },
    ),
    (
        "galactic TAN on the south galactic pole from an ICRS all-sky input",
        |_| {
            let (car, image) = car_sky();
            let w = wcs(
                "CTYPE1 = 'GLON-TAN'\nCTYPE2 = 'GLAT-TAN'\nCRPIX1 = 20\nCRPIX2 = 20\nCRVAL1 = 0\n\
             CRVAL2 = -90\nCDELT1 = -0.5\nCDELT2 = 0.5\n",
            );
            let (d, f) = interp_array(&image, &car, &w, &[41, 41], &Options::default()).unwrap();
            assert!(f.iter().all(|v| *v == 1.0));
            // Within 15 degrees of the SGP (ICRS dec -27.1): the sky function's range there.
            assert!(d.iter().all(|v| (-0.75..-0.15).contains(v)), "{d:?}");
        },
    ),
    (
        "AIT all-sky output: NaN outside the ellipse, correct inside",
        |_| all_sky_output("AIT", 9000..12000),
    ),
    (
        "MOL all-sky output: NaN outside the ellipse, correct inside",
        |_| all_sky_output("MOL", 9000..12000),
    ),
    (
        "HPX all-sky output: NaN in the empty corners of the layout",
        |_| all_sky_output("HPX", 11000..14000),
    ),
    ("SIN all-sky output: NaN beyond the unit circle", |_| {
        all_sky_output("SIN", 2000..3500)
    }),
    (
        "TAN input seen from the far side: NaN, not the mirror image",
        |_| {
            let n = projection_as_input("TAN", "", 1.0);
            assert!(n > 2000, "{n}");
        },
    ),
    ("SIN input seen from the far side: NaN", |_| {
        let n = projection_as_input("SIN", "", 0.5);
        assert!(n > 1000, "{n}");
    }),
    ("AZP input and output beyond the horizon: NaN", |_| {
        assert!(projection_as_input("AZP", "PV2_1 = 2\n", 1.0) > 5000);
        let (car, image) = car_sky();
        let azp = wcs(
            "CTYPE1 = 'RA---AZP'\nCTYPE2 = 'DEC--AZP'\nCRPIX1 = 50.5\nCRPIX2 = 50.5\nCRVAL1 = 0\n\
             CRVAL2 = 0\nCDELT1 = -3\nCDELT2 = 3\nPV2_1 = 2\nRADESYS = 'ICRS'\n",
        );
        let n = check_boundaries(&car, &image, &azp, (100, 100));
        assert!((1000..9000).contains(&n), "{n}");
    }),
    (
        "ZPN beyond the polynomial's limit, as input and output: NaN",
        |_| {
            let zpn = "PV2_1 = 1\nPV2_3 = -0.3\n";
            assert!(projection_as_input("ZPN", zpn, 1.0) > 1000);
            let (car, image) = car_sky();
            let w = wcs(&format!(
            "CTYPE1 = 'RA---ZPN'\nCTYPE2 = 'DEC--ZPN'\nCRPIX1 = 50.5\nCRPIX2 = 50.5\nCRVAL1 = 0\n\
             CRVAL2 = 0\nCDELT1 = -1.5\nCDELT2 = 1.5\nRADESYS = 'ICRS'\n{zpn}"
        ));
            let n = check_boundaries(&car, &image, &w, (100, 100));
            assert!((1000..9000).contains(&n), "{n}");
        },
    ),
    (
        "AIT, MOL and HPX inputs: NaN outside their valid regions",
        |_| {
            for code in ["AIT", "MOL", "HPX"] {
                let n = projection_as_input(code, "", 2.0);
                assert!(n > 10000, "{code}: {n}");
            }
        },
    ),
];

#[test]
fn geometry() {
    run_table("geometry", GEOMETRY_CASES);
}

// ------------------------------------------------------------------------------------------
// Axes and frames

fn reproject_headers(h_in: &str, h_out: &str, shape: &[usize]) -> reproject::Result<()> {
    let image = Array2::from_elem((6, 6), 1.0);
    let (w_in, w_out) = (Wcs::from_header_str(h_in)?, Wcs::from_header_str(h_out)?);
    interp_array(&image, &w_in, &w_out, shape, &Options::default()).map(|_| ())
}

const AXES_CASES: &[Case] = &[
    (
        "CPDIS/D2IM lookup-table distortion (CLI): refused as not evaluated, no output",
        |d| {
            let header = format!(
                "{}CPDIS1  = 'LOOKUP'\nDP1     = 'EXTVER: 1'\n",
                target_header()
            );
            let (input, target) = job_with_target(d, "t.hdr", &header);
            let out = d.join("out.fits");
            let o = reproject_cli(&input, &target, &out, &[]);
            fails(&o, "lookup tables");
            assert!(!out.exists());
        },
    ),
    (
        "non-celestial pairs: a celestial WCS against a pixel one, spectral against none, \
         different spectral types, units that do not convert: reproject's errors",
        |_| {
            let pix = "CTYPE1 = 'PIXX'\nCTYPE2 = 'PIXY'\n";
            let sky = tan(150.0, 30.0, (3.0, 3.0), 0.01);
            let e = reproject_headers(&sky, pix, &[6, 6]).unwrap_err();
            assert_invalid_argument(&e, &["celestial components"]);
            let freq = "CTYPE1 = 'PIXX'\nCTYPE2 = 'FREQ'\n";
            let e = reproject_headers(freq, pix, &[6, 6]).unwrap_err();
            assert_invalid_argument(&e, &["spectral component"]);
            let wave = "CTYPE1 = 'PIXX'\nCTYPE2 = 'WAVE'\n";
            let e = reproject_headers(freq, wave, &[6, 6]).unwrap_err();
            assert_invalid_argument(&e, &["not equivalent"]);
            let km = "CTYPE1 = 'X'\nCUNIT1 = 'km'\nCTYPE2 = 'Y'\n";
            let s = "CTYPE1 = 'X'\nCUNIT1 = 's'\nCTYPE2 = 'Y'\n";
            let e = reproject_headers(km, s, &[6, 6]).unwrap_err();
            assert_invalid_argument(&e, &["not convertible"]);
        },
    ),
    (
        "RADESYS = 'GAPPT' (date-dependent frame): an unsupported-frame error",
        |_| {
            let h = tan(150.0, 30.0, (3.0, 3.0), 0.01).replace("'ICRS'", "'GAPPT'");
            let e =
                reproject_headers(&h, &tan(150.0, 30.0, (3.0, 3.0), 0.01), &[6, 6]).unwrap_err();
            assert_invalid_argument(&e, &["GAPPT"]);
        },
    ),
    (
        "unknown frames (XLON/XLAT, RADESYS = 'BOGUS') against ICRS: an error",
        |_| {
            let icrs = tan(150.0, 30.0, (3.0, 3.0), 0.01);
            let xlon = icrs.replace("RA---", "XLON-").replace("DEC--", "XLAT-");
            for h in [xlon, icrs.replace("'ICRS'", "'BOGUS'")] {
                let e = reproject_headers(&h, &icrs, &[6, 6]).unwrap_err();
                assert_invalid_argument(&e, &["no known conversion"]);
            }
        },
    ),
    ("GLON paired with DEC in the target header (CLI)", |d| {
        let header = target_header().replace("'RA---TAN'", "'GLON-TAN'");
        let (input, target) = job_with_target(d, "t.hdr", &header);
        let o = reproject_cli(&input, &target, &d.join("out.fits"), &[]);
        fails(&o, "longitude/latitude pair");
    }),
    (
        "celestial axes not the first two WCS axes: an error naming the rule",
        |_| {
            let h = "CTYPE1 = 'FREQ'\nCTYPE2 = 'RA---TAN'\nCTYPE3 = 'DEC--TAN'\nCRVAL2 = 150\n\
                 CRVAL3 = 30\nCDELT2 = -0.01\nCDELT3 = 0.01\n";
            let e = reproject_headers(h, &tan(150.0, 30.0, (3.0, 3.0), 0.01), &[6, 6]).unwrap_err();
            assert_unsupported(&e, &["first two axes"]);
        },
    ),
    (
        "3-axis input WCS, 4-axis output WCS: mismatched axis counts",
        |_| {
            let base = tan(150.0, 30.0, (3.0, 3.0), 0.01);
            let h3 = format!("{base}CTYPE3 = 'FREQ'\nCRVAL3 = 1E9\nCDELT3 = 1E6\n");
            let h4 = format!("{h3}CTYPE4 = 'STOKES'\nCRVAL4 = 1\nCDELT4 = 1\n");
            let e = reproject_headers(&h3, &h4, &[6, 6]).unwrap_err();
            assert_invalid_argument(&e, &["dimensions"]);
        },
    ),
    (
        "3-axis input WCS with 2-D data: the extra axis is ignored (documented)",
        |_| {
            let base = tan(150.0, 30.0, (3.0, 3.0), 0.01);
            let image = Array2::from_shape_fn((6, 6), |(y, x)| (x + 10 * y) as f64);
            let out = wcs(&tan(150.002, 30.0, (3.0, 3.2), 0.01));
            let h3 = wcs(&format!(
                "{base}CTYPE3 = 'FREQ'\nCRVAL3 = 1E9\nCDELT3 = 1E6\n"
            ));
            let (a, _) = interp_array(&image, &h3, &out, &[6, 6], &Options::default()).unwrap();
            let (b, _) =
                interp_array(&image, &wcs(&base), &out, &[6, 6], &Options::default()).unwrap();
            assert!(a.iter().zip(&b).all(|(x, y)| same(*x, *y)));
        },
    ),
    (
        "cube whose third axis changes, with Renormalize: an error",
        |_| {
            let base = tan(150.0, 30.0, (3.0, 3.0), 0.01);
            let h_in = wcs(&format!(
                "{base}CTYPE3 = 'FREQ'\nCRVAL3 = 1E9\nCDELT3 = 1E6\nCRPIX3 = 1\n"
            ));
            let h_out = wcs(&format!(
                "{base}CTYPE3 = 'FREQ'\nCRVAL3 = 1E9\nCDELT3 = 1E6\nCRPIX3 = 1.5\n"
            ));
            let cube = Array3::from_elem((4, 6, 6), 1.0);
            let source = ArraySource::new(cube.view().into_dyn()).unwrap();
            let e = reproject_interp(
                &source,
                &h_in,
                &h_out,
                &[4, 6, 6],
                &options(Order::Bilinear, NanPolicy::Renormalize),
            )
            .unwrap_err();
            assert_unsupported(&e, &["Renormalize"]);
        },
    ),
    (
        "NaN approximation tolerance: an invalid-argument error",
        |_| {
            let image = Array2::from_elem((6, 6), 1.0);
            let w = wcs(&tan(150.0, 30.0, (3.0, 3.0), 0.01));
            for tolerance in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
                let o = Options {
                    approximate: Some(tolerance),
                    ..Options::default()
                };
                let e = interp_array(&image, &w, &w, &[6, 6], &o).unwrap_err();
                assert!(matches!(e, Error::InvalidArgument(_)), "{tolerance}: {e:?}");
            }
        },
    ),
];

#[test]
fn axes_and_frames() {
    run_table("axes_and_frames", AXES_CASES);
}

// ------------------------------------------------------------------------------------------
// Output files: existing files, failing reads, full and read-only disks, special files

/// An input whose reads fail for the window rows `fail_from..` (a disk error, a file that
/// vanished from a network mount...).
struct FailingSource {
    image: Array2<f64>,
    fail_from: usize,
}

impl ImageSource for FailingSource {
    fn shape(&self) -> &[usize] {
        self.image.shape()
    }
    fn stored_type(&self) -> StoredType {
        StoredType {
            sample: SampleType::F64,
            big_endian: false,
            scaled: false,
        }
    }
    fn read_window(
        &self,
        _plane: usize,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        out: &mut [f64],
    ) -> reproject::Result<()> {
        if rows.end > self.fail_from {
            return Err(Error::Io("input/output error (simulated)".into()));
        }
        let w = self.image.slice(ndarray::s![rows, cols]);
        for (o, v) in out.iter_mut().zip(w.iter()) {
            *o = *v;
        }
        Ok(())
    }
}

/// Runs the standard CLI job in a child process after `setup` (run between fork and exec:
/// only async-signal-safe calls).
fn cli_in_child(
    args: &[&OsStr],
    setup: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    // SAFETY: `setup` makes only async-signal-safe system calls.
    unsafe { cmd.pre_exec(setup) };
    cmd.output().unwrap()
}

/// Runs `sh -c script` in a private mount namespace after mounting `how` on `dir`; `None` if
/// this process may not create mount namespaces (not root, or no CAP_SYS_ADMIN).
fn in_mount_namespace(dir: &Path, how: Mount, script: &str) -> Option<Output> {
    let cdir = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).env("BIN", BIN);
    let setup = move || -> std::io::Result<()> {
        let check = |r: libc::c_int| {
            if r == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        // SAFETY: plain system calls with valid NUL-terminated strings (made before fork).
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            match how {
                Mount::SmallTmpfs => check(libc::mount(
                    c"tmpfs".as_ptr(),
                    cdir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    c"size=64k".as_ptr().cast(),
                )),
                Mount::ReadOnlyBind => {
                    check(libc::mount(
                        cdir.as_ptr(),
                        cdir.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ))?;
                    check(libc::mount(
                        std::ptr::null(),
                        cdir.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                        std::ptr::null(),
                    ))
                }
            }
        }
    };
    // SAFETY: `setup` makes only system calls.
    unsafe { cmd.pre_exec(setup) };
    // A refused unshare or mount makes the spawn fail (EPERM): no namespace here.
    cmd.output().ok()
}

#[derive(Clone, Copy)]
enum Mount {
    SmallTmpfs,
    ReadOnlyBind,
}

const OUTPUT_CASES: &[Case] = &[
    (
        "a read failing mid-run: error names the block; existing file kept (API)",
        |d| {
            let image = Array2::from_shape_fn((40, 40), |(y, x)| (x + y) as f64);
            let source = FailingSource {
                image,
                fail_from: 30,
            };
            let w = wcs(&tan(150.0, 30.0, (20.0, 20.0), 0.01));
            let path = d.join("out.npy");
            std::fs::write(&path, PRECIOUS).unwrap();
            let mut out =
                MappedOutput::create_npy(&path, &[40, 40], OutputType::F64, true).unwrap();
            let mut fp = ArrayD::<f64>::zeros(IxDyn(&[40, 40]));
            let o = Options {
                block_size: Some((10, 40)),
                ..Options::default()
            };
            let e = reproject_interp_into(
                &source,
                &w,
                &w,
                out.view_mut::<f64>().unwrap(),
                fp.view_mut(),
                &o,
            )
            .unwrap_err();
            assert_io_error(&e, &["block rows 20..30", "simulated"]);
            drop(out); // not finished: the partial file goes, the user's file stays
            assert_precious(&path);
            assert_eq!(listing(d), ["out.npy"]);
        },
    ),
    (
        "full disk simulated with RLIMIT_FSIZE: clean error, existing file kept (CLI)",
        |d| {
            let (input, big_target) = job_with_target(d, "big.hdr", &target_of_size(100, 100));
            let out = d.join("out.fits");
            std::fs::write(&out, PRECIOUS).unwrap();
            let o = cli_in_child(
                &job_args(&input, &big_target, &out, &["--overwrite"]),
                || {
                    let limit = libc::rlimit {
                        rlim_cur: 64 << 10,
                        rlim_max: 64 << 10,
                    };
                    // SAFETY: async-signal-safe system calls; writes past the limit then fail
                    // with EFBIG instead of raising SIGXFSZ.
                    unsafe {
                        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                        if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    }
                    Ok(())
                },
            );
            fails(&o, "File too large");
            assert_precious(&out);
            no_leftovers(d);
        },
    ),
    (
        "full disk (a 64 KiB tmpfs): clean error, not SIGBUS (CLI)",
        |d| {
            let (input, big_target) = job_with_target(d, "big.hdr", &target_of_size(100, 100));
            let disk = d.join("disk");
            std::fs::create_dir(&disk).unwrap();
            let script = format!(
                "printf precious > '{disk}/out.fits'; \"$BIN\" '{input}' --to '{t}' -o \
             '{disk}/out.fits' --overwrite -q; echo \"rc=$?\"; cat '{disk}/out.fits'; echo; \
             ls -a '{disk}'",
                disk = disk.display(),
                input = input.display(),
                t = big_target.display()
            );
            let Some(o) = in_mount_namespace(&disk, Mount::SmallTmpfs, &script) else {
                eprintln!(
                    "skipped the tmpfs variant: mount namespaces need root with CAP_SYS_ADMIN"
                );
                return;
            };
            let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
            assert!(stdout.contains("rc=1\n"), "{stdout} {stderr}");
            assert!(stderr.contains("do not fit on its disk"), "{stderr}");
            assert!(stdout.contains("precious\n"), "{stdout}");
            assert!(!stdout.contains(".partial"), "{stdout}");
        },
    ),
    (
        "read-only directory: clean error, existing file kept (CLI)",
        |d| {
            let (input, target) = standard_job(d);
            let ro = d.join("ro");
            std::fs::create_dir(&ro).unwrap();
            let out = ro.join("out.fits");
            std::fs::write(&out, PRECIOUS).unwrap();
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
                let o = reproject_cli(&input, &target, &out, &["--overwrite"]);
                fails(&o, "Permission denied");
            } else {
                // Permission bits do not stop root: a read-only bind mount does.
                let script = format!(
                    "\"$BIN\" '{input}' --to '{t}' -o '{out}' --overwrite -q; echo \"rc=$?\"",
                    input = input.display(),
                    t = target.display(),
                    out = out.display()
                );
                let Some(o) = in_mount_namespace(&ro, Mount::ReadOnlyBind, &script) else {
                    eprintln!("skipped the read-only variant: root without CAP_SYS_ADMIN");
                    return;
                };
                let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
                assert!(stdout.contains("rc=1"), "{stdout} {stderr}");
                assert!(stderr.contains("Read-only file system"), "{stderr}");
            }
            assert_precious(&out);
            assert_eq!(listing(&ro), ["out.fits"]);
        },
    ),
    (
        "output path is a FIFO (a special file like /dev/full): refused, kept (CLI, API)",
        |d| {
            let (input, target) = standard_job(d);
            let fifo = d.join("fifo");
            let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            let o = reproject_cli(&input, &target, &fifo, &["--overwrite"]);
            fails(&o, "not a regular file");
            let e =
                MappedOutput::create_fits(&fifo, &[2, 2], OutputType::F32, "", true).unwrap_err();
            assert_io_error(&e, &["not a regular file"]);
            use std::os::unix::fs::FileTypeExt;
            assert!(std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo());
            no_leftovers(d);
        },
    ),
    (
        "output path is a directory, or in a missing directory (CLI)",
        |d| {
            let (input, target) = standard_job(d);
            let sub = d.join("sub");
            std::fs::create_dir(&sub).unwrap();
            let o = reproject_cli(&input, &target, &sub, &["--overwrite"]);
            fails(&o, "is a directory");
            let missing = d.join("no/such/dir/out.fits");
            let o = reproject_cli(&input, &target, &missing, &[]);
            fails(&o, "No such file or directory");
            assert!(!d.join("no").exists());
        },
    ),
    (
        "output replaces its own input with --overwrite: complete, correct result",
        |d| {
            let (input, target) = standard_job(d);
            let copy = d.join("copy.fits");
            std::fs::copy(&input, &copy).unwrap();
            let reference = d.join("ref.fits");
            succeeds(&reproject_cli(&copy, &target, &reference, &["-q"]));
            // The input stays mapped (unlinked inode) while the new file is renamed over it.
            succeeds(&reproject_cli(
                &input,
                &target,
                &input,
                &["--overwrite", "-q"],
            ));
            let (a, b) = (read_plane(&input, 0), read_plane(&reference, 0));
            assert!(a.iter().zip(&b).all(|(x, y)| same(*x, *y)));
            no_leftovers(d);
        },
    ),
    (
        "stale .partial from a crashed run (CLI): refused, kept; --overwrite recovers",
        |d| {
            let (input, target) = standard_job(d);
            let out = d.join("out.fits");
            let partial = d.join("out.fits.partial");
            std::fs::write(&partial, b"crashed run").unwrap();
            let o = reproject_cli(&input, &target, &out, &["-q"]);
            fails(&o, ".partial");
            assert_eq!(std::fs::read(&partial).unwrap(), b"crashed run");
            assert!(!out.exists());
            succeeds(&reproject_cli(
                &input,
                &target,
                &out,
                &["-q", "--overwrite"],
            ));
            assert!(FitsSource::open(&out, 0).is_ok());
            no_leftovers(d);
        },
    ),
    ("footprint file given the output's own name (CLI)", |d| {
        let (input, target) = standard_job(d);
        let out = d.join("out.fits");
        let o = reproject_cli(
            &input,
            &target,
            &out,
            &["--footprint", out.to_str().unwrap()],
        );
        refused_without_output(&o, "two different outputs", &out);
    }),
];

#[test]
fn output_files() {
    run_table("output_files", OUTPUT_CASES);
}

// ------------------------------------------------------------------------------------------
// Processes: failed workers, vanished inputs, corrupt job files

/// A job over a 2 x 40 x 50 `.npy` input in `dir`, 4 x 3 = 12 blocks; its output `out.npy`.
fn job(dir: &Path) -> (ReprojectPlan, PathBuf) {
    let image = Array3::from_shape_fn((2, 40, 50), |(p, y, x)| (p + 2 * y + 3 * x) as f64);
    let input = dir.join("input.npy");
    ndarray_npy::write_npy(&input, &image).unwrap();
    let plan = ReprojectPlan {
        input: InputSpec::Npy { path: input },
        wcs_in: Some(wcs(&tan(150.0, 30.0, (25.0, 20.0), 0.01))),
        wcs_out: wcs(&tan(150.002, 30.001, (22.0, 19.0), 0.011)),
        shape_out: vec![40, 45],
        options: Options {
            block_size: Some((10, 15)),
            ..Options::default()
        },
    };
    (plan, dir.join("out.npy"))
}

/// The job's output: `path` as a `.npy` file, no footprint.
fn request(path: &Path) -> OutputRequest {
    OutputRequest {
        data: FileRequest::npy(path),
        dtype: OutputType::F64,
        footprint: FootprintRequest::None,
        overwrite: false,
    }
}

/// Runs the job into `out` with `workers` processes of `command`.
fn run_job(
    plan: &ReprojectPlan,
    out: &Path,
    workers: usize,
    command: &WorkerCommand,
) -> Result<PathBuf, Error> {
    run_processes(plan, &request(out), workers, command, &mut |_, _| {}).map(|run| run.output)
}

/// Prepares the job into `out` the way `--plan-only` does (the owner's locks let go).
fn prepare(plan: &ReprojectPlan, out: &Path) -> (PathBuf, ProcessJob) {
    let prepared = prepare_job(plan, &request(out)).unwrap();
    (prepared.job_file.clone(), prepared.job.clone())
}

/// Runs every block of the job in `job_file` as the only worker; the error it ends with.
fn sole_worker_error(job_file: &Path) -> Error {
    run_worker(job_file, &BlockSelection::Share { k: 0, n: 1 }).unwrap_err()
}

const PROCESS_CASES: &[Case] = &[
    (
        "a killed worker: error names it and the missing blocks; nothing published",
        |d| {
            let (plan, out) = job(d);
            // Workers that die of SIGKILL before computing anything.
            let killed = WorkerCommand {
                program: "sh".into(),
                args: vec!["-c".into(), "kill -9 $$".into(), "sh".into()],
            };
            let e = run_job(&plan, &out, 2, &killed).unwrap_err();
            let m = e.to_string();
            assert!(matches!(e, Error::Io(_)), "{m}");
            assert!(
                m.contains("worker 0 of 2") && m.contains("signal: 9"),
                "{m}"
            );
            assert!(m.contains("12 of 12 blocks missing"), "{m}");
            assert!(m.contains("block 0 (rows 0..10, columns 0..15)"), "{m}");
            assert!(m.contains("and 4 more"), "{m}");
            assert!(
                !out.exists(),
                "an incomplete output must not appear under its final name"
            );
            assert!(d.join("out.npy.partial").exists(), "kept for the rerun");
        },
    ),
    (
        "the job's input vanished before the worker ran: the worker's error names it",
        |d| {
            let (plan, out) = job(d);
            let (job_file, job) = prepare(&plan, &out);
            std::fs::remove_file(d.join("input.npy")).unwrap();
            let e = sole_worker_error(&job_file);
            assert_io_error(&e, &["input.npy"]);
            assert_eq!(missing_blocks(&job).unwrap().len(), 12);
            assert!(!out.exists());
        },
    ),
    (
        "a partly computed job: the rerun names the still-missing blocks, publishes nothing",
        |d| {
            let (plan, out) = job(d);
            let (job_file, job) = prepare(&plan, &out);
            assert_eq!(
                run_worker(&job_file, &BlockSelection::Range(0..3)).unwrap(),
                3
            );
            assert_eq!(missing_blocks(&job).unwrap().len(), 9);
            // Workers that exit with a failure status without computing anything.
            let failing = WorkerCommand {
                program: "false".into(),
                args: vec![],
            };
            let result = run_job(&plan, &out, 1, &failing);
            let m = result.unwrap_err().to_string();
            assert!(m.contains("worker 0 of 1 ended with exit status: 1"), "{m}");
            assert!(m.contains("9 of 12 blocks missing"), "{m}");
            assert!(m.contains("block 3 (rows 10..20, columns 0..15)"), "{m}");
            assert!(m.contains("and 1 more"), "{m}");
            assert!(!out.exists());
        },
    ),
    (
        "corrupt job file and corrupt progress file: errors, nothing published",
        |d| {
            let (plan, out) = job(d);
            let (job_file, job) = prepare(&plan, &out);
            std::fs::write(&job.progress, [0u8; 5]).unwrap();
            let e = sole_worker_error(&job_file);
            assert_io_error(&e, &["corrupt progress file"]);
            std::fs::write(&job_file, b"{ not json").unwrap();
            let e = sole_worker_error(&job_file);
            assert_io_error(&e, &["not a job file"]);
            assert!(!out.exists());
        },
    ),
    (
        "a job file of another reprojection into the same output: refused, naming the difference",
        |d| {
            let (plan, out) = job(d);
            prepare(&plan, &out);
            let mut other = plan.clone();
            other.shape_out = vec![40, 44];
            let e = prepare_job(&other, &request(&out)).unwrap_err();
            let m = e.to_string();
            assert!(matches!(e, Error::InvalidArgument(_)), "{m}");
            assert!(
                m.contains("differs from this one in the output shape"),
                "{m}"
            );
            let mut dtype = request(&out);
            dtype.dtype = OutputType::F32;
            let m = prepare_job(&plan, &dtype).unwrap_err().to_string();
            assert!(
                m.contains("differs from this one in the output dtype"),
                "{m}"
            );
        },
    ),
    (
        "input removed between --plan-only and the workers (CLI)",
        |d| {
            let (input, target) = standard_job(d);
            let out = d.join("out.fits");
            let extra = ["--processes", "2", "--block-size", "8", "-q", "--plan-only"];
            succeeds(&reproject_cli(&input, &target, &out, &extra));
            std::fs::remove_file(&input).unwrap();
            let job_file = d.join("out.fits.job.json");
            let o = cli(&[
                "worker".as_ref(),
                "--job".as_ref(),
                job_file.as_os_str(),
                "--share".as_ref(),
                "0/1".as_ref(),
            ]);
            fails(&o, "in.fits");
            fails(&o, "job.json");
            assert!(!out.exists());
        },
    ),
];

#[test]
fn processes() {
    run_table("processes", PROCESS_CASES);
}

// ------------------------------------------------------------------------------------------
// GPU: a device that is not there (hidden with CUDA_VISIBLE_DEVICES, as after it was lost)

/// The standard CLI job with `--device device`, with every CUDA device hidden.
fn without_gpu(d: &Path, device: &str, out: &Path) -> Output {
    let (input, target) = standard_job(d);
    Command::new(BIN)
        .args(job_args(
            &input,
            &target,
            out,
            &["--device", device, "--overwrite", "-q"],
        ))
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap()
}

const GPU_CASES: &[Case] = &[
    (
        "--device cuda with no usable GPU: 'GPU unavailable', no output (CLI)",
        |d| {
            let out = d.join("out.fits");
            std::fs::write(&out, PRECIOUS).unwrap();
            let o = without_gpu(d, "cuda", &out);
            fails(&o, "GPU unavailable");
            assert_precious(&out);
            no_leftovers(d);
        },
    ),
    (
        "--device auto with no usable GPU: the CPU result, bit for bit (CLI)",
        |d| {
            let (auto, cpu) = (d.join("auto.fits"), d.join("cpu.fits"));
            succeeds(&without_gpu(d, "auto", &auto));
            succeeds(&without_gpu(d, "cpu", &cpu));
            for hdu in [0, 1] {
                let (a, b) = (read_plane(&auto, hdu), read_plane(&cpu, hdu));
                assert!(a.iter().zip(&b).all(|(x, y)| same(*x, *y)));
            }
        },
    ),
];

#[test]
fn gpu() {
    run_table("gpu", GPU_CASES);
}

// ------------------------------------------------------------------------------------------

/// The catalogue has at least 40 distinct cases (the bar).
#[test]
fn catalogue_is_complete() {
    let tables = [
        FILE_CASES,
        VALUE_CASES,
        SHAPE_CASES,
        GEOMETRY_CASES,
        AXES_CASES,
        OUTPUT_CASES,
        PROCESS_CASES,
        GPU_CASES,
    ];
    let names: Vec<&str> = tables.iter().flat_map(|t| t.iter().map(|c| c.0)).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "duplicate case names");
    assert!(names.len() >= 40, "only {} cases", names.len());
    println!("{} cases", names.len());
}

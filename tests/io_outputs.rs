//! Memory-mapped outputs: `.npy` and FITS round trips (read back with NpySource/FitsSource,
//! ndarray-npy and fitsio), the footprint extension, header card filtering, refusal to
//! overwrite, partial files, and memory use of a 1 GiB output.

use std::fs;
use std::path::PathBuf;

use ndarray::ArrayD;
use reproject::io::{available_memory, ImageSource, MappedOutput, NpySource, OutputType};
use reproject::Error;

/// A fresh, empty directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("io_outputs")
        .join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Names of the files in a directory, sorted.
fn listing(d: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn pattern(i: usize) -> f64 {
    match i % 17 {
        0 => f64::NAN,
        1 => f64::INFINITY,
        _ => i as f64 * 0.125 - 3.0,
    }
}

fn read_all(src: &dyn ImageSource) -> Vec<f64> {
    let (ny, nx) = src.plane_shape();
    let mut all = vec![0.0; src.planes() * ny * nx];
    for (p, chunk) in all.chunks_mut((ny * nx).max(1)).enumerate() {
        src.read_window(p, 0..ny, 0..nx, chunk).unwrap();
    }
    all
}

fn assert_same(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.is_nan() && w.is_nan()) || g == w,
            "element {i}: got {g}, want {w}"
        );
    }
}

const WCS_CARDS: &str = "CTYPE1  = 'RA---TAN'\n\
CTYPE2  = 'DEC--TAN'\n\
CRPIX1  = 20.5\n\
CRPIX2  = 15.5\n\
CRVAL1  = 83.6\n\
CRVAL2  = 22.0\n\
CDELT1  = -0.002\n\
CDELT2  = 0.002\n";

// ---------------------------------------------------------------------------------------------
// .npy

#[test]
fn npy_round_trip_f32_and_f64() {
    let d = dir("npy_round_trip");
    for (dtype, shape) in [
        (OutputType::F32, vec![2usize, 30, 40]),
        (OutputType::F64, vec![30, 41]),
        (OutputType::F64, vec![2, 1, 3, 5]),
    ] {
        let path = d.join(format!("{dtype:?}_{}.npy", shape.len()));
        let n: usize = shape.iter().product();
        let mut out = MappedOutput::create_npy(&path, &shape, dtype, false).unwrap();
        assert!(out.partial_path().exists());
        assert!(!path.exists(), "nothing under the final name before finish");
        match dtype {
            OutputType::F32 => {
                let mut v = out.view_mut::<f32>().unwrap();
                assert_eq!(v.shape(), &shape[..]);
                for (i, x) in v.iter_mut().enumerate() {
                    *x = pattern(i) as f32;
                }
            }
            OutputType::F64 => {
                for (i, x) in out.data_mut::<f64>().unwrap().iter_mut().enumerate() {
                    *x = pattern(i);
                }
            }
        }
        assert_eq!(out.finish().unwrap(), path);
        assert_eq!(
            listing(&d)
                .iter()
                .filter(|f| f.ends_with(".partial"))
                .count(),
            0
        );

        let want: Vec<f64> = (0..n)
            .map(|i| match dtype {
                OutputType::F32 => pattern(i) as f32 as f64,
                OutputType::F64 => pattern(i),
            })
            .collect();
        let src = NpySource::open(&path).unwrap();
        assert_eq!(src.shape(), &shape[..]);
        assert_eq!(src.data_offset() % 64, 0);
        assert_eq!(
            fs::metadata(&path).unwrap().len() as usize,
            src.data_offset() + n * if dtype == OutputType::F32 { 4 } else { 8 }
        );
        assert_same(&read_all(&src), &want);
        // ndarray-npy reads it too.
        let back: Vec<f64> = match dtype {
            OutputType::F32 => ndarray_npy::read_npy::<_, ArrayD<f32>>(&path)
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect(),
            OutputType::F64 => {
                ndarray_npy::read_npy::<_, ArrayD<f64>>(&path)
                    .unwrap()
                    .into_raw_vec_and_offset()
                    .0
            }
        };
        assert_same(&back, &want);
    }
}

#[test]
fn type_checks_and_bad_arguments() {
    let d = dir("type_checks");
    let mut out =
        MappedOutput::create_npy(d.join("a.npy"), &[3, 4], OutputType::F32, false).unwrap();
    assert!(matches!(
        out.data_mut::<f64>(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        out.footprint_mut::<f32>(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(out.data_and_footprint_mut::<f32, f32>().is_err());
    assert_eq!(out.data_mut::<f32>().unwrap().len(), 12);
    assert!(
        out.data_mut::<f32>().unwrap().iter().all(|&v| v == 0.0),
        "zero-initialised"
    );
    drop(out);

    // A directory as the target, or a path without a file name.
    let sub = d.join("sub");
    fs::create_dir(&sub).unwrap();
    assert!(matches!(
        MappedOutput::create_npy(&sub, &[2, 2], OutputType::F32, true),
        Err(Error::Io(_))
    ));
    assert!(MappedOutput::create_npy("/", &[2, 2], OutputType::F32, true).is_err());
    // Too large.
    assert!(matches!(
        MappedOutput::create_npy(
            d.join("big.npy"),
            &[1 << 40, 1 << 40],
            OutputType::F64,
            true
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        MappedOutput::create_fits(d.join("z.fits"), &[], OutputType::F64, "", true),
        Err(Error::InvalidArgument(_))
    ));
    // Bad header cards: non-ASCII, longer than 80 characters.
    let long = format!("COMMENT {}", "x".repeat(80));
    for cards in ["OBJECT  = 'Ørsted'", long.as_str(), "TAB\tCARD"] {
        let e = MappedOutput::create_fits(d.join("c.fits"), &[2, 2], OutputType::F32, cards, true)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    }
    assert_eq!(listing(&d), vec!["sub".to_string()], "nothing left behind");
}

// ---------------------------------------------------------------------------------------------
// Overwrite safety and partial files

#[test]
fn refuses_to_overwrite_without_permission() {
    let d = dir("refuse");
    let npy = d.join("precious.npy");
    let fits = d.join("precious.fits");
    fs::write(&npy, b"precious npy").unwrap();
    fs::write(&fits, b"precious fits").unwrap();
    let e = MappedOutput::create_npy(&npy, &[2, 2], OutputType::F32, false).unwrap_err();
    assert!(
        matches!(&e, Error::OutputExists(m) if m.contains("already exists")),
        "{e}"
    );
    let e = MappedOutput::create_fits(&fits, &[2, 2], OutputType::F32, "", false).unwrap_err();
    assert!(
        matches!(&e, Error::OutputExists(m) if m.contains("already exists")),
        "{e}"
    );
    let e = MappedOutput::create_fits_with_footprint(
        &fits,
        &[2, 2],
        OutputType::F32,
        "",
        OutputType::F32,
        false,
    )
    .unwrap_err();
    assert!(matches!(e, Error::OutputExists(_)));
    assert_eq!(fs::read(&npy).unwrap(), b"precious npy");
    assert_eq!(fs::read(&fits).unwrap(), b"precious fits");
    assert_eq!(listing(&d), vec!["precious.fits", "precious.npy"]);
}

#[test]
fn overwrite_replaces_only_when_finished() {
    let d = dir("overwrite");
    let path = d.join("out.fits");
    fs::write(&path, b"old contents").unwrap();
    let mut out = MappedOutput::create_fits(&path, &[4, 4], OutputType::F32, "", true).unwrap();
    out.data_mut::<f32>().unwrap().fill(3.0);
    out.flush().unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        b"old contents",
        "untouched until finish"
    );
    out.finish().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 2 * 2880);
    assert_eq!(listing(&d), vec!["out.fits"]);

    // Dropping an unfinished overwrite leaves the previous file as it was.
    let before = fs::read(&path).unwrap();
    let mut out = MappedOutput::create_fits(&path, &[4, 4], OutputType::F64, "", true).unwrap();
    out.data_mut::<f64>().unwrap().fill(9.0);
    drop(out);
    assert_eq!(fs::read(&path).unwrap(), before);
    assert_eq!(listing(&d), vec!["out.fits"]);
}

#[test]
fn drop_without_finish_leaves_nothing() {
    let d = dir("drop");
    {
        let mut a =
            MappedOutput::create_npy(d.join("a.npy"), &[5, 5], OutputType::F32, false).unwrap();
        a.data_mut::<f32>().unwrap().fill(1.0);
        let b = MappedOutput::create_fits_with_footprint(
            d.join("b.fits"),
            &[5, 5],
            OutputType::F32,
            WCS_CARDS,
            OutputType::F32,
            false,
        )
        .unwrap();
        assert_eq!(
            listing(&d),
            vec![
                "a.npy.lock",
                "a.npy.partial",
                "b.fits.lock",
                "b.fits.partial"
            ]
        );
        drop(b);
        // A panic while writing also cleans up.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _keep = a;
            panic!("simulated failure while filling the output");
        }));
        assert!(r.is_err());
    }
    assert!(listing(&d).is_empty(), "{:?}", listing(&d));
}

#[test]
fn stale_partial_and_late_competitor() {
    let d = dir("stale");
    let path = d.join("img.npy");
    let partial = d.join("img.npy.partial");
    fs::write(&partial, b"left over by a crash").unwrap();
    let e = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, false).unwrap_err();
    assert!(
        matches!(&e, Error::OutputExists(m) if m.contains("img.npy.partial was left")),
        "{e}"
    );
    assert_eq!(fs::read(&partial).unwrap(), b"left over by a crash");
    // With overwrite, the stale partial file is replaced.
    let out = MappedOutput::create_npy(&path, &[2, 2], OutputType::F32, true).unwrap();
    out.finish().unwrap();
    assert_eq!(listing(&d), vec!["img.npy"]);

    // A file appearing under the final name while writing is not clobbered without overwrite.
    let path = d.join("race.fits");
    let mut out = MappedOutput::create_fits(&path, &[2, 2], OutputType::F32, "", false).unwrap();
    out.data_mut::<f32>().unwrap().fill(1.0);
    fs::write(&path, b"someone else's").unwrap();
    let e = out.finish().unwrap_err();
    assert!(
        matches!(&e, Error::OutputExists(m) if m.contains("appeared while")),
        "{e}"
    );
    assert_eq!(fs::read(&path).unwrap(), b"someone else's");
    assert!(!d.join("race.fits.partial").exists());
}

/// Not a test of its own: a second process that creates `$REPROJECT_HOLDER_OUTPUT`, writes it,
/// says so on stdout and then waits (until killed, or until stdin closes, then publishes).
#[test]
fn holder_entry() {
    let Ok(path) = std::env::var("REPROJECT_HOLDER_OUTPUT") else {
        return;
    };
    let mut out = MappedOutput::create_fits(&path, &[8, 8], OutputType::F32, "", true).unwrap();
    out.data_mut::<f32>().unwrap().fill(7.0);
    println!("holding");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    out.finish().unwrap();
}

/// Starts a holder process on `path`; returns once it holds the output.
fn start_holder(path: &std::path::Path) -> std::process::Child {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["holder_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("REPROJECT_HOLDER_OUTPUT", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.unwrap().contains("holding")),
        "the holder never held the output"
    );
    // Whatever the test harness prints later is read, so that it never writes into a closed
    // pipe.
    std::thread::spawn(move || lines.for_each(drop));
    child
}

/// Two processes on one output: the second is refused at once while the first lives (naming
/// it), whatever the overwrite flag, and nothing of the first's is touched; once the first is
/// killed, its partial file is stale and the lock is free.
#[test]
fn a_second_process_is_refused_while_the_first_lives() {
    let d = dir("two_processes");
    let path = d.join("shared.fits");
    let mut holder = start_holder(&path);
    let partial = d.join("shared.fits.partial");
    let before = fs::read(&partial).unwrap();
    for overwrite in [false, true] {
        let e =
            MappedOutput::create_fits(&path, &[8, 8], OutputType::F64, "", overwrite).unwrap_err();
        assert!(
            matches!(&e, Error::OutputBusy(m) if m.contains(&format!("process {}", holder.id()))),
            "{e}"
        );
    }
    assert_eq!(
        fs::read(&partial).unwrap(),
        before,
        "the owner's file untouched"
    );
    assert!(!path.exists());
    // The holder publishes when told to.
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    assert_eq!(listing(&d), vec!["shared.fits"]);

    // A holder killed mid-write leaves its partial file and no owner: refused without
    // overwrite (as stale), replaced with it; the published file is never the dead one's.
    let path = d.join("killed.fits");
    let mut holder = start_holder(&path);
    holder.kill().unwrap();
    holder.wait().unwrap();
    let e = MappedOutput::create_fits(&path, &[8, 8], OutputType::F32, "", false).unwrap_err();
    assert!(
        matches!(&e, Error::OutputExists(m) if m.contains("stopped")),
        "{e}"
    );
    let mut out = MappedOutput::create_fits(&path, &[8, 8], OutputType::F32, "", true).unwrap();
    out.data_mut::<f32>().unwrap().fill(1.0);
    out.finish().unwrap();
    let src = reproject::io::FitsSource::open(&path, 0).unwrap();
    let mut row = [0.0; 8];
    src.read_window(0, 3..4, 0..8, &mut row).unwrap();
    assert_eq!(row, [1.0; 8]);
    assert!(
        listing(&d).iter().all(|f| !f.starts_with("killed.fits.")),
        "{:?}",
        listing(&d)
    );
}

/// Not a test of its own: a writer process for the stress test below. Creates
/// `$REPROJECT_WRITER_OUTPUT` (overwrite from `$REPROJECT_WRITER_OVERWRITE`), fills it with
/// `$REPROJECT_WRITER_VALUE` a row at a time over `$REPROJECT_WRITER_MS` milliseconds and
/// publishes it; exits with status 3 if the output cannot be created.
#[test]
fn writer_entry() {
    let Ok(path) = std::env::var("REPROJECT_WRITER_OUTPUT") else {
        return;
    };
    let var = |k: &str| std::env::var(k).unwrap();
    let value: f32 = var("REPROJECT_WRITER_VALUE").parse().unwrap();
    let millis: u64 = var("REPROJECT_WRITER_MS").parse().unwrap();
    let overwrite = var("REPROJECT_WRITER_OVERWRITE") == "1";
    let mut out = match MappedOutput::create_fits(&path, &[64, 64], OutputType::F32, "", overwrite)
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(3);
        }
    };
    for row in out.data_mut::<f32>().unwrap().chunks_mut(64) {
        row.fill(value);
        std::thread::sleep(std::time::Duration::from_micros(millis * 1000 / 64));
    }
    if let Err(e) = out.finish() {
        eprintln!("error: {e}");
        std::process::exit(3);
    }
}

/// The values of a published 64 x 64 output, if it is there.
fn published_values(path: &std::path::Path) -> Option<Vec<f64>> {
    let src = reproject::io::FitsSource::open(path, 0).ok()?;
    let mut all = vec![0.0; 64 * 64];
    src.read_window(0, 0..64, 0..64, &mut all).ok()?;
    Some(all)
}

/// 30 interleavings of two or three writer processes on one `MappedOutput` path, at random
/// delays, with and without overwrite, some killed mid-write: whatever is ever under the
/// final name is one writer's complete image; a writer that exits 0 published its image
/// (unless a later writer replaced it); the others fail with a clear error (status 3).
#[test]
fn writers_in_several_processes_never_publish_a_wrong_file() {
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    let d = dir("writers");
    let mut state: u64 = 0x1234_5678_9abc;
    let mut rand = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let (mut published, mut refused, mut killed) = (0, 0, 0);
    for round in 0..30 {
        let path = d.join(format!("out{}.fits", round % 5));
        if rand(3) == 0 {
            let _ = fs::remove_file(&path);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let wrong = Arc::new(Mutex::new(None::<String>));
        let watcher = {
            let (stop, wrong, path) = (stop.clone(), wrong.clone(), path.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if path.exists() {
                        match published_values(&path) {
                            Some(v) if v.iter().all(|&x| x == v[0] && x >= 1.0) => {}
                            other => {
                                *wrong.lock().unwrap() = Some(format!("{:?}", other.map(|v| v[0])))
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let writers: Vec<_> = (0..2 + rand(2))
            .map(|k| {
                let value = (round * 10 + k as usize + 1) as f32;
                let (delay, millis) = (rand(60), 20 + rand(100));
                let overwrite = rand(2) == 0;
                let kill_after = (rand(3) == 0).then(|| rand(120));
                let path = path.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(delay));
                    let mut child = Command::new(std::env::current_exe().unwrap())
                        .args([
                            "writer_entry",
                            "--exact",
                            "--quiet",
                            "--nocapture",
                            "--test-threads=1",
                        ])
                        .env("REPROJECT_WRITER_OUTPUT", &path)
                        .env("REPROJECT_WRITER_VALUE", value.to_string())
                        .env("REPROJECT_WRITER_MS", millis.to_string())
                        .env(
                            "REPROJECT_WRITER_OVERWRITE",
                            if overwrite { "1" } else { "0" },
                        )
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap();
                    if let Some(after) = kill_after {
                        std::thread::sleep(Duration::from_millis(after));
                        let _ = child.kill();
                    }
                    let out = child.wait_with_output().unwrap();
                    (value, out)
                })
            })
            .collect();
        let results: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        stop.store(true, Ordering::Relaxed);
        watcher.join().unwrap();
        if let Some(w) = wrong.lock().unwrap().take() {
            panic!("round {round}: a wrong file was under the final name: {w}");
        }
        let finals = published_values(&path);
        for (value, out) in &results {
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                None => killed += 1,
                Some(0) => {
                    published += 1;
                    let v = finals
                        .as_ref()
                        .expect("a writer succeeded, so the file is there");
                    let by_successful = results
                        .iter()
                        .any(|(w, o)| o.status.success() && v[0] == f64::from(*w));
                    assert!(
                        by_successful,
                        "round {round}: {} is no successful writer's",
                        v[0]
                    );
                    let _ = value;
                }
                Some(3) => {
                    refused += 1;
                    assert!(
                        stderr.contains("output busy") || stderr.contains("overwriting is off"),
                        "round {round}: unclear error {stderr}"
                    );
                }
                other => panic!("round {round}: status {other:?}: {stderr}"),
            }
        }
    }
    println!("{published} published, {refused} refused, {killed} killed");
    assert!(published > 0 && refused > 0 && killed > 0);
}

#[test]
fn available_memory_reports_meminfo() {
    let m = available_memory();
    if cfg!(target_os = "linux") {
        let m = m.expect("MemAvailable on Linux");
        let total: u64 = fs::read_to_string("/proc/meminfo")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(m > 0 && m <= total * 1024, "{m} of {total} kB");
    } else {
        assert!(m.is_none());
    }
}

// ---------------------------------------------------------------------------------------------
// FITS

#[cfg(feature = "fits")]
mod fits {
    use super::*;
    use fitsio::FitsFile;
    use reproject::io::FitsSource;
    use reproject::wcs::Wcs;

    #[test]
    fn fits_round_trip_with_header_filtering() {
        let d = dir("fits_round_trip");
        // Structural and compression cards in the input must not reach the output header.
        let cards = format!(
            "SIMPLE  = T\nBITPIX  = 16\nNAXIS   = 5\nNAXIS1  = 999\nBSCALE  = 2.0\n\
             BZERO   = 5.0\nBLANK   = -1\nZIMAGE  = T\nZTILE1  = 40\nCHECKSUM= 'abc'\n\
             {WCS_CARDS}OBJECT  = 'M1'               / the Crab\n\
             COMMENT   a comment card\nHISTORY   a history card\n\n\
             END\nAFTER   = 'ignored after END'"
        );
        for dtype in [OutputType::F32, OutputType::F64] {
            let shape = [3usize, 30, 40];
            let path = d.join(format!("{dtype:?}.fits"));
            let mut out = MappedOutput::create_fits(&path, &shape, dtype, &cards, false).unwrap();
            let n = 3 * 30 * 40;
            match dtype {
                OutputType::F32 => out
                    .data_mut::<f32>()
                    .unwrap()
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, v)| *v = pattern(i) as f32),
                OutputType::F64 => out
                    .data_mut::<f64>()
                    .unwrap()
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, v)| *v = pattern(i)),
            }
            out.finish().unwrap();
            assert_eq!(fs::metadata(&path).unwrap().len() % 2880, 0);
            let want: Vec<f64> = (0..n)
                .map(|i| match dtype {
                    OutputType::F32 => pattern(i) as f32 as f64,
                    OutputType::F64 => pattern(i),
                })
                .collect();

            let src = FitsSource::open(&path, 0).unwrap();
            assert!(src.is_memory_mapped());
            assert_eq!(src.shape(), &shape);
            assert_eq!(src.bitpix(), dtype.bitpix());
            assert_eq!(src.scaling(), (1.0, 0.0));
            assert_eq!(src.blank(), None);
            assert_same(&read_all(&src), &want);
            let cards: Vec<&str> = src.header_cards().collect();
            assert!(cards[0].starts_with("SIMPLE  =                    T"));
            assert!(cards[1].starts_with(&format!("BITPIX  = {:>20}", dtype.bitpix())));
            assert!(cards
                .iter()
                .any(|c| c.starts_with("NAXIS3  =                    3")));
            assert!(cards
                .iter()
                .any(|c| c.starts_with("EXTEND  =                    T")));
            assert!(cards.iter().any(|c| c.starts_with("OBJECT  = 'M1'")));
            assert!(cards
                .iter()
                .any(|c| c.starts_with("HISTORY   a history card")));
            for gone in [
                "BSCALE", "BZERO", "BLANK", "ZIMAGE", "ZTILE1", "CHECKSUM", "AFTER",
            ] {
                assert!(!cards.iter().any(|c| c.starts_with(gone)), "{gone} leaked");
            }
            assert_eq!(cards.iter().filter(|c| c.starts_with("BITPIX")).count(), 1);
            assert_eq!(cards.iter().filter(|c| c.starts_with("NAXIS1")).count(), 1);
            let wcs = src.wcs().unwrap();
            let orig = Wcs::from_header_str(WCS_CARDS).unwrap();
            assert_eq!(wcs.pixel_to_world(3.0, 7.0), orig.pixel_to_world(3.0, 7.0));

            // fitsio / CFITSIO read the same values and keys.
            let mut f = FitsFile::open(&path).unwrap();
            let hdu = f.primary_hdu().unwrap();
            let got: Vec<f64> = hdu.read_image(&mut f).unwrap();
            assert_same(&got, &want);
            let ctype: String = hdu.read_key(&mut f, "CTYPE2").unwrap();
            assert_eq!(ctype, "DEC--TAN");
            let naxis: i64 = hdu.read_key(&mut f, "NAXIS").unwrap();
            assert_eq!(naxis, 3);
        }
    }

    #[test]
    fn fits_with_footprint_extension() {
        let d = dir("fits_footprint");
        let path = d.join("with_fp.fits");
        let shape = [25usize, 31];
        let mut out = MappedOutput::create_fits_with_footprint(
            &path,
            &shape,
            OutputType::F64,
            &format!("EXTNAME = 'SCI'\n{WCS_CARDS}"),
            OutputType::F32,
            false,
        )
        .unwrap();
        assert_eq!(out.footprint_dtype(), Some(OutputType::F32));
        {
            let (img, fp) = out.data_and_footprint_mut::<f64, f32>().unwrap();
            assert_eq!((img.len(), fp.len()), (25 * 31, 25 * 31));
            for i in 0..img.len() {
                img[i] = pattern(i);
                fp[i] = if pattern(i).is_nan() { 0.0 } else { 1.0 };
            }
        }
        out.footprint_mut::<f32>().unwrap()[1] = 0.5;
        out.finish().unwrap();

        let img = FitsSource::open(&path, 0).unwrap();
        let fp = FitsSource::open(&path, 1).unwrap();
        assert_eq!(fp.shape(), &shape);
        assert_eq!(fp.bitpix(), -32);
        let want: Vec<f64> = (0..25 * 31).map(pattern).collect();
        assert_same(&read_all(&img), &want);
        let mut want_fp: Vec<f64> = want
            .iter()
            .map(|v| if v.is_nan() { 0.0 } else { 1.0 })
            .collect();
        want_fp[1] = 0.5;
        assert_same(&read_all(&fp), &want_fp);
        assert!(fp.header_text().starts_with("XTENSION= 'IMAGE   '"));
        assert!(fp
            .header_cards()
            .any(|c| c.starts_with("EXTNAME = 'FOOTPRINT'")));
        assert!(!fp.header_cards().any(|c| c.contains("'SCI'")));
        assert_eq!(
            fp.wcs().unwrap().pixel_to_world(1.0, 2.0),
            img.wcs().unwrap().pixel_to_world(1.0, 2.0)
        );

        let mut f = FitsFile::open(&path).unwrap();
        assert_eq!(f.num_hdus().unwrap(), 2);
        let hdu = f.hdu("FOOTPRINT").unwrap();
        let got: Vec<f32> = hdu.read_image(&mut f).unwrap();
        assert_same(&got.iter().map(|&v| v as f64).collect::<Vec<_>>(), &want_fp);
    }

    #[test]
    fn header_text_of_a_source_feeds_an_output() {
        let d = dir("fits_header_copy");
        // Source: an image extension written by fitsio, header as concatenated 80-char cards.
        let src_path = d.join("src.fits");
        let mut out =
            MappedOutput::create_fits(&src_path, &[10, 12], OutputType::F32, WCS_CARDS, false)
                .unwrap();
        out.data_mut::<f32>().unwrap().fill(2.0);
        out.finish().unwrap();
        let src = FitsSource::open(&src_path, 0).unwrap();
        assert!(!src.header_text().contains('\n'));

        let dst = d.join("dst.fits");
        let out =
            MappedOutput::create_fits(&dst, &[2, 5, 7], OutputType::F64, src.header_text(), false)
                .unwrap();
        out.finish().unwrap();
        let back = FitsSource::open(&dst, 0).unwrap();
        assert_eq!(back.shape(), &[2, 5, 7]);
        assert_eq!(back.bitpix(), -64);
        assert_eq!(
            back.header_cards()
                .filter(|c| c.starts_with("SIMPLE"))
                .count(),
            1
        );
        assert_eq!(
            back.header_cards()
                .filter(|c| c.starts_with("EXTEND"))
                .count(),
            1
        );
        assert_eq!(
            back.wcs().unwrap().pixel_to_world(4.0, 4.0),
            src.wcs().unwrap().pixel_to_world(4.0, 4.0)
        );
        assert!(
            read_all(&back).iter().all(|&v| v == 0.0),
            "unwritten pixels are zero"
        );
    }

    fn rss_anon() -> u64 {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("RssAnon:"))
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            * 1024
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn one_gib_outputs_never_live_in_anonymous_memory() {
        use std::os::unix::fs::MetadataExt;
        let d = dir("big");
        let n = 16384usize;
        let before = rss_anon();
        for fits in [false, true] {
            let path = d.join(if fits { "big.fits" } else { "big.npy" });
            let mut out = if fits {
                MappedOutput::create_fits_with_footprint(
                    &path,
                    &[n, n],
                    OutputType::F32,
                    WCS_CARDS,
                    OutputType::F32,
                    false,
                )
                .unwrap()
            } else {
                MappedOutput::create_npy(&path, &[n, n], OutputType::F32, false).unwrap()
            };
            {
                let data = out.data_mut::<f32>().unwrap();
                assert_eq!(data.len(), n * n);
                for (y, x) in [(0usize, 0usize), (9000, 100), (n - 300, n - 300)] {
                    for r in y..y + 256 {
                        data[r * n + x..r * n + x + 256].fill((r % 7) as f32 + 0.5);
                    }
                }
            }
            if fits {
                out.footprint_mut::<f32>().unwrap()[..n].fill(1.0);
            }
            out.finish().unwrap();
            let meta = fs::metadata(&path).unwrap();
            assert!(meta.len() >= (n * n * 4) as u64);
            // Still sparse: only the written pages hold disk blocks.
            assert!(
                meta.blocks() * 512 < 64 << 20,
                "{} bytes allocated",
                meta.blocks() * 512
            );

            let src: Box<dyn ImageSource> = if fits {
                Box::new(FitsSource::open(&path, 0).unwrap())
            } else {
                Box::new(NpySource::open(&path).unwrap())
            };
            let mut win = vec![0.0; 256 * 256];
            src.read_window(0, 9000..9256, 100..356, &mut win).unwrap();
            assert!(win
                .iter()
                .enumerate()
                .all(|(i, &v)| v == ((9000 + i / 256) % 7) as f64 + 0.5));
            src.read_window(0, 5000..5256, 5000..5256, &mut win)
                .unwrap();
            assert!(win.iter().all(|&v| v == 0.0));
            if fits {
                let fp = FitsSource::open(&path, 1).unwrap();
                let mut row = vec![0.0; n];
                fp.read_window(0, 0..1, 0..n, &mut row).unwrap();
                assert!(row.iter().all(|&v| v == 1.0));
            }
            drop(src);
            fs::remove_file(&path).unwrap();
        }
        let grown = rss_anon().saturating_sub(before);
        assert!(grown < 64 << 20, "RssAnon grew by {} MiB", grown >> 20);
    }
}

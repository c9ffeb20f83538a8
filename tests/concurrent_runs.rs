//! Concurrent and interrupted command-line runs on one output: several `reproject-rs` runs
//! at once, with and without `--processes` and `--overwrite`, started at random delays, some
//! of them killed (the run itself or one of its workers) mid-way, then rerun at once.
//!
//! What must hold, in every interleaving:
//! - a watcher that reads the final path all along never sees a wrong file there: whatever
//!   appears under the final name is byte for byte a clean run's output;
//! - every run that exits 0 leaves the final file identical to a clean run's;
//! - every other run (not killed by the test) exits with status 1 and one clear `error:` line;
//! - no worker outlives its run (they die with their parent);
//! - a rerun right after the interleaving succeeds, and its file is a clean run's.
//!
//! The published files differ between runs only in the HISTORY card giving the time of the
//! run, which the comparison leaves out.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reproject::io::{MappedOutput, OutputType};

mod procs;
use procs::{children_of, live_processes_mentioning};

const BIN: &str = env!("CARGO_BIN_EXE_reproject-rs");

/// Interleavings run (the issue asks for at least 30).
const ROUNDS: usize = 32;

/// A TAN header of `n1 x n2` pixels centred on (150, 30), rotated by `rot` degrees.
fn tan_header(n1: usize, n2: usize, rot: f64, scale: f64) -> String {
    let (s, c) = rot.to_radians().sin_cos();
    format!(
        "NAXIS   = 2\nNAXIS1  = {n1}\nNAXIS2  = {n2}\nCTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\n\
         CRPIX1  = {}\nCRPIX2  = {}\nCRVAL1  = 150.0\nCRVAL2  = 30.0\nCDELT1  = {}\n\
         CDELT2  = {scale}\nPC1_1   = {c}\nPC1_2   = {}\nPC2_1   = {s}\nPC2_2   = {c}\n",
        n1 as f64 / 2.0 + 0.5,
        n2 as f64 / 2.0 + 0.5,
        -scale,
        -s
    )
}

/// Writes the input (a smooth 500 x 520 float32 image) and a target header of `n1 x n2`
/// pixels into `dir`.
fn write_job(dir: &Path, n1: usize, n2: usize) -> (PathBuf, PathBuf) {
    let input = dir.join("in.fits");
    let header = tan_header(520, 500, 0.0, 0.001);
    let header: String = header
        .lines()
        .filter(|l| !l.starts_with("NAXIS"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut out =
        MappedOutput::create_fits(&input, &[500, 520], OutputType::F32, &header, true).unwrap();
    for (i, v) in out.data_mut::<f32>().unwrap().iter_mut().enumerate() {
        let (y, x) = ((i / 520) as f32, (i % 520) as f32);
        *v = (x * 0.05).sin() * 4.0 + (y * 0.03).cos() * 2.0 + 10.0;
    }
    out.finish().unwrap();
    let target = dir.join("target.hdr");
    std::fs::write(
        &target,
        tan_header(n1, n2, 25.0, 0.0009 * 600.0 / n1 as f64),
    )
    .unwrap();
    (input, target)
}

/// The bytes of a published FITS file with the HISTORY card naming the time blanked.
fn comparable(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for card in out.chunks_mut(80) {
        if card.starts_with(b"HISTORY date:") {
            card.fill(b' ');
        }
    }
    out
}

/// One run of an interleaving.
#[derive(Debug, Clone)]
struct Run {
    processes: bool,
    overwrite: bool,
    delay: Duration,
    kill: Kill,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kill {
    None,
    /// SIGKILL the run itself after this long.
    Parent(Duration),
    /// SIGKILL one of its worker processes after this long.
    Worker(Duration),
}

/// What a run did.
#[derive(Debug)]
struct Ended {
    run: Run,
    output: Output,
    killed: bool,
}

/// A small deterministic random generator (xorshift), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn millis(&mut self, max: u64) -> Duration {
        Duration::from_millis(self.below(max + 1))
    }
}

fn command(input: &Path, target: &Path, out: &Path, processes: bool, overwrite: bool) -> Command {
    let mut c = Command::new(BIN);
    c.arg(input)
        .arg("--to")
        .arg(target)
        .arg("-o")
        .arg(out)
        .args(["--order", "bicubic", "--block-size", "32", "-q"]);
    if processes {
        c.args(["--processes", "2"]);
    } else {
        c.args(["--threads", "1"]);
    }
    if overwrite {
        c.arg("--overwrite");
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn sigkill(pid: u32) {
    // SAFETY: kill with a pid and a signal number has no memory effects.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

/// Starts `run`, kills what it says when it says, and waits for the end.
fn perform(run: Run, mut cmd: Command) -> Ended {
    std::thread::sleep(run.delay);
    let child: Child = cmd.spawn().unwrap();
    let pid = child.id();
    let killer = match run.kill {
        Kill::None => None,
        Kill::Parent(after) | Kill::Worker(after) => {
            let kill = run.kill;
            Some(std::thread::spawn(move || {
                std::thread::sleep(after);
                let victim = match kill {
                    Kill::Parent(_) => Some(pid),
                    _ => children_of(pid).first().copied(),
                };
                if let Some(v) = victim {
                    sigkill(v);
                }
                victim.is_some()
            }))
        }
    };
    let output = child.wait_with_output().unwrap();
    let killed_someone = killer.is_some_and(|k| k.join().unwrap());
    let killed = killed_someone && matches!(run.kill, Kill::Parent(_));
    Ended {
        run,
        output,
        killed,
    }
}

/// Whether `output` is a failure with one clear error line (not a crash).
fn clear_failure(output: &Output) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if output.status.code() != Some(1) {
        return Err(format!("exit status {:?}: {stderr}", output.status));
    }
    if lines.len() != 1 || !lines[0].starts_with("error: ") || lines[0].contains("internal") {
        return Err(format!("not one clear error line: {stderr}"));
    }
    Ok(())
}

#[test]
fn concurrent_and_killed_runs_never_publish_a_wrong_file() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("concurrent_runs");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (input, target) = write_job(&dir, 1100, 1000);

    // The clean run every published file must equal.
    let reference_path = dir.join("reference.fits");
    let o = command(&input, &target, &reference_path, false, false)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = Arc::new(comparable(&std::fs::read(&reference_path).unwrap()));

    let seed: u64 = std::env::var("REPROJECT_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_abcd);
    let mut rng = Rng(seed);
    let started = Instant::now();
    let (mut successes, mut failures, mut kills) = (0, 0, 0);
    for round in 0..ROUNDS {
        let round_dir = dir.join(format!("round{}", round % 8));
        if round < 8 || rng.below(3) == 0 {
            // A fresh folder; otherwise what earlier rounds left (published files, stale
            // jobs) stays for this one.
            let _ = std::fs::remove_dir_all(&round_dir);
        }
        std::fs::create_dir_all(&round_dir).unwrap();
        let out = round_dir.join("out.fits");

        // A watcher: whatever appears under the final name must be a clean run's file.
        let stop = Arc::new(AtomicBool::new(false));
        let wrong = Arc::new(Mutex::new(None::<String>));
        let watcher = {
            let (stop, wrong, out, reference) =
                (stop.clone(), wrong.clone(), out.clone(), reference.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(bytes) = std::fs::read(&out)
                        && comparable(&bytes) != *reference
                    {
                        *wrong.lock().unwrap() =
                            Some(format!("{} bytes differ from a clean run", bytes.len()));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };

        let n = 2 + rng.below(2) as usize;
        let runs: Vec<Run> = (0..n)
            .map(|_| {
                let processes = rng.below(2) == 0;
                let kill = match rng.below(6) {
                    0 | 1 => Kill::Parent(rng.millis(1200)),
                    2 if processes => Kill::Worker(rng.millis(1200)),
                    _ => Kill::None,
                };
                Run {
                    processes,
                    overwrite: rng.below(2) == 0,
                    delay: rng.millis(400),
                    kill,
                }
            })
            .collect();
        let handles: Vec<_> = runs
            .iter()
            .cloned()
            .map(|run| {
                let cmd = command(&input, &target, &out, run.processes, run.overwrite);
                std::thread::spawn(move || perform(run, cmd))
            })
            .collect();
        let ended: Vec<Ended> = handles.into_iter().map(|h| h.join().unwrap()).collect();

        // No worker outlives its run: the parent-death signal reaches them at once.
        let needle = round_dir.join("out.fits.job.json");
        let needle = needle.to_string_lossy();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !live_processes_mentioning(&needle).is_empty() {
            assert!(
                Instant::now() < deadline,
                "round {round}: workers outlived their runs: {:?} ({runs:?})",
                live_processes_mentioning(&needle)
            );
            std::thread::sleep(Duration::from_millis(20));
        }

        // An immediate rerun (retrying only while killed runs' workers are still dying).
        let rerun_processes = rng.below(2) == 0;
        let mut attempts = 0;
        let rerun = loop {
            let o = command(&input, &target, &out, rerun_processes, true)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            attempts += 1;
            if o.status.success() || !stderr.contains("busy") || attempts == 20 {
                break o;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        stop.store(true, Ordering::Relaxed);
        watcher.join().unwrap();

        let context = || format!("round {round} (seed {seed}): {runs:?}");
        if let Some(w) = wrong.lock().unwrap().take() {
            panic!("a wrong file was under the final name: {w}; {}", context());
        }
        for e in &ended {
            if e.killed || e.output.status.code().is_none() {
                kills += 1;
            } else if e.output.status.success() {
                successes += 1;
            } else {
                failures += 1;
                if let Err(why) = clear_failure(&e.output) {
                    panic!("{why}; run {:?}; {}", e.run, context());
                }
            }
        }
        assert!(
            rerun.status.success(),
            "the rerun failed: {}; {}",
            String::from_utf8_lossy(&rerun.stderr),
            context()
        );
        let published = comparable(&std::fs::read(&out).unwrap());
        assert!(
            published == *reference,
            "the rerun's file differs; {}",
            context()
        );
    }
    println!(
        "{ROUNDS} interleavings in {:.1} s: {successes} runs succeeded, {failures} failed with a \
         clear error, {kills} were killed",
        started.elapsed().as_secs_f64()
    );
    assert!(successes > 0 && failures > 0 && kills > 0);
}

/// The first report: two `--processes 2` runs on one output, a moment apart. The
/// second is refused at once, naming the first; the first publishes a correct file.
#[test]
fn a_second_run_on_a_live_output_is_refused_at_once() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("second_run_refused");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Large enough that the first run is still computing when the second starts.
    let (input, target) = write_job(&dir, 2400, 2200);
    let reference_path = dir.join("reference.fits");
    let o = command(&input, &target, &reference_path, false, false)
        .output()
        .unwrap();
    assert!(o.status.success());
    let reference = comparable(&std::fs::read(&reference_path).unwrap());

    let out = dir.join("out.fits");
    for overwrite in [false, true] {
        let _ = std::fs::remove_file(&out);
        let first = command(&input, &target, &out, true, overwrite)
            .spawn()
            .unwrap();
        // Wait until the first run holds the output.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !dir.join("out.fits.job.json").exists() {
            assert!(
                Instant::now() < deadline,
                "the first run never started its job"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let t = Instant::now();
        let second = command(&input, &target, &out, true, overwrite)
            .output()
            .unwrap();
        let quick = t.elapsed();
        let first = first.wait_with_output().unwrap();
        assert!(first.status.success(), "{first:?}");
        clear_failure(&second).unwrap();
        let message = String::from_utf8_lossy(&second.stderr);
        assert!(
            message.contains("being written by another run") && message.contains("process"),
            "{message}"
        );
        assert!(
            quick < Duration::from_secs(5),
            "refused only after {quick:?}"
        );
        assert!(comparable(&std::fs::read(&out).unwrap()) == reference);
        let left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("out.fits."))
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

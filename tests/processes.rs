//! Process-parallel runs: workers in separate processes write one memory-mapped output; a
//! failed worker leaves a resumable partial output, never a complete-looking file.
//!
//! The worker processes are this test binary itself, started through `sh` so that the test
//! `worker_entry` runs the worker side with the job and share from the environment.

use std::path::{Path, PathBuf};

use ndarray::Array3;
use reproject::engine::lazy::{InputSpec, ReprojectPlan};
use reproject::engine::{reproject_interp, Backend, Options};
use reproject::interp::Order;
use reproject::io::{ArraySource, ImageSource, NpySource, OutputType};
use reproject::mosaic::coadd::{Correction, MosaicOptions};
use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
use reproject::processes::{
    missing_blocks, prepare_job, run_processes, run_worker, BlockSelection, FileRequest,
    FootprintRequest, JobPlan, OpenedJob, OutputRequest, ProcessRun, WorkerCommand,
};
use reproject::wcs::Wcs;
use reproject::Result;

mod procs;
use procs::{alive, children_of};

/// Device and inode of a file.
fn file_id(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.dev(), meta.ino())
}

/// Not a test of its own: the worker side when started by `worker_command`.
#[test]
fn worker_entry() {
    let (Ok(job), Ok(share)) = (
        std::env::var("REPROJECT_WORKER_JOB"),
        std::env::var("REPROJECT_WORKER_SHARE"),
    ) else {
        return;
    };
    if std::env::var("REPROJECT_WORKER_FAIL").ok().as_deref() == Some(share.as_str()) {
        std::process::exit(3); // as if killed before writing anything
    }
    let selection: BlockSelection = share.parse().unwrap();
    run_worker(Path::new(&job), &selection).unwrap();
}

fn worker_command(fail_share: Option<&str>) -> WorkerCommand {
    let fail = fail_share
        .map(|s| format!("REPROJECT_WORKER_FAIL={s} "))
        .unwrap_or_default();
    worker_command_with(&fail)
}

/// Workers started with the environment assignments `env` (`NAME=value `, space-ended).
fn worker_command_with(env: &str) -> WorkerCommand {
    let exe = std::env::current_exe().unwrap();
    WorkerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            format!(
                "REPROJECT_WORKER_JOB=\"$2\" REPROJECT_WORKER_SHARE=\"$4\" {env}exec '{}' worker_entry --exact --quiet --test-threads=1 >/dev/null",
                exe.display()
            ),
            "sh".into(),
        ],
    }
}

fn wcs(lon: f64, rot: f64) -> Wcs {
    let (sn, cs) = rot.to_radians().sin_cos();
    Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 60.5\nCRPIX2 = 50.5\nCRVAL1 = {lon}\n\
         CRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\nPC1_1 = {cs}\nPC1_2 = {}\nPC2_1 = {sn}\nPC2_2 = {cs}\n",
        -sn
    ))
    .unwrap()
}

fn setup(name: &str) -> (PathBuf, ReprojectPlan, Array3<f64>) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let image = Array3::from_shape_fn((2, 100, 120), |(p, y, x)| (x * 3 + y * 7 + p) as f64 % 23.0);
    let input = dir.join("input.npy");
    ndarray_npy::write_npy(&input, &image).unwrap();
    let plan = ReprojectPlan {
        input: InputSpec::Npy { path: input },
        wcs_in: Some(wcs(150.0, 0.0)),
        wcs_out: wcs(150.01, 25.0),
        shape_out: vec![90, 110],
        options: Options {
            order: Order::Bicubic,
            block_size: Some((20, 25)),
            ..Options::default()
        },
    };
    (dir, plan, image)
}

fn request(path: &Path) -> OutputRequest {
    OutputRequest {
        data: FileRequest::npy(path),
        dtype: OutputType::F64,
        footprint: FootprintRequest::File(FileRequest::npy(path.with_extension("footprint.npy"))),
        overwrite: false,
    }
}

/// The `.npy` output `out` (and its footprint file) of the job `plan` of `image` is the eager
/// reprojection's on the CPU, bit for bit.
fn assert_eager_result(image: &Array3<f64>, plan: &ReprojectPlan, out: &Path) {
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let cpu = Options {
        backend: Backend::Cpu,
        ..plan.options.clone()
    };
    let (want, want_fp) = reproject_interp(
        &source,
        plan.wcs_in.as_ref().unwrap(),
        &plan.wcs_out,
        &plan.shape_out,
        &cpu,
    )
    .unwrap();
    let read = |p: &Path| -> Array3<f64> { ndarray_npy::read_npy(p).unwrap() };
    let same =
        |a: &Array3<f64>, b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    assert!(same(&read(out), want.as_slice().unwrap()));
    assert!(same(
        &read(&out.with_extension("footprint.npy")),
        want_fp.as_slice().unwrap()
    ));
}

/// Runs the job with `workers` processes of `command`, without progress reports.
fn run(
    plan: impl Into<JobPlan>,
    out: &Path,
    workers: usize,
    command: &WorkerCommand,
) -> Result<ProcessRun> {
    run_processes(plan, &request(out), workers, command, &mut |_, _| {})
}

fn read_all(path: &Path) -> Vec<f64> {
    let src = NpySource::open(path).unwrap();
    let mut out = Vec::new();
    for plane in 0..src.planes() {
        let mut buf = vec![0.0; 90 * 110];
        src.read_window(plane, 0..90, 0..110, &mut buf).unwrap();
        out.extend(buf);
    }
    out
}

#[test]
fn processes_match_the_eager_call() {
    let (dir, plan, image) = setup("processes_ok");
    let out = dir.join("out.npy");
    let published = run(&plan, &out, 3, &worker_command(None)).unwrap();
    assert_eq!(published.output, out);
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let (want, want_fp) = reproject_interp(
        &source,
        plan.wcs_in.as_ref().unwrap(),
        &plan.wcs_out,
        &[90, 110],
        &plan.options,
    )
    .unwrap();
    let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    assert!(same(&read_all(&out), want.as_slice().unwrap()));
    assert!(same(
        &read_all(&out.with_extension("footprint.npy")),
        want_fp.as_slice().unwrap()
    ));
    // Nothing of the run is left behind.
    let mut leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    leftovers.sort();
    assert_eq!(leftovers, ["input.npy", "out.footprint.npy", "out.npy"]);
}

#[test]
fn a_failed_worker_is_reported_and_the_rerun_completes() {
    let (dir, plan, image) = setup("processes_fail");
    let out = dir.join("out.npy");
    let err = run(&plan, &out, 3, &worker_command(Some("1/3"))).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("worker 1 of 3"), "{message}");
    assert!(
        !out.exists(),
        "an incomplete output must not appear under its final name"
    );
    // The rerun computes only what is missing and publishes: the published file is the
    // partial file of the first run.
    let partial = file_id(&dir.join("out.npy.partial"));
    run(&plan, &out, 2, &worker_command(None)).unwrap();
    assert_eq!(file_id(&out), partial, "the rerun must resume, not create");
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let (want, _) = reproject_interp(
        &source,
        plan.wcs_in.as_ref().unwrap(),
        &plan.wcs_out,
        &[90, 110],
        &plan.options,
    )
    .unwrap();
    let got = read_all(&out);
    assert!(got
        .iter()
        .zip(want.as_slice().unwrap())
        .all(|(x, y)| x.to_bits() == y.to_bits()));
}

/// A mosaic job whose bands a worker computed after it was prepared (as after an owner
/// killed between its workers' last band and the publication): the run starts no worker,
/// publishes, and says it computed no block; a fresh run of the same mosaic computes them all,
/// with the same bytes.
#[test]
fn a_mosaic_resumed_with_every_band_done_only_publishes() {
    let (dir, plan, _) = setup("processes_mosaic_resumed");
    let second = dir.join("second.npy");
    let shifted = Array3::from_shape_fn((2, 100, 120), |(p, y, x)| (x * 5 + y + p) as f64 % 19.0);
    ndarray_npy::write_npy(&second, &shifted).unwrap();
    let input = |path: PathBuf, lon| MosaicInputSpec {
        image: InputSpec::Npy { path },
        wcs: Some(wcs(lon, 0.0)),
        weights: None,
    };
    let mosaic = JobPlan::Mosaic(Box::new(MosaicPlan {
        inputs: vec![input(dir.join("input.npy"), 150.0), input(second, 150.02)],
        wcs_out: plan.wcs_out.clone(),
        shape_out: plan.shape_out.clone(),
        options: MosaicOptions {
            reprojection: plan.options.clone(),
            ..MosaicOptions::default()
        },
        corrections: vec![Correction::default(); 2],
    }));
    let out = dir.join("resumed.npy");
    let job_file = prepare_job(&mosaic, &request(&out)).unwrap().job_file;
    run_worker(&job_file, &"0/1".parse().unwrap()).unwrap();
    let resumed = run(&mosaic, &out, 2, &worker_command(None)).unwrap();
    assert_eq!(
        (resumed.output.as_path(), resumed.blocks_computed),
        (out.as_path(), 0)
    );
    let fresh_out = dir.join("fresh.npy");
    let fresh = run(&mosaic, &fresh_out, 2, &worker_command(None)).unwrap();
    assert!(fresh.blocks_computed > 0);
    assert_eq!(
        std::fs::read(&fresh_out).unwrap(),
        std::fs::read(&out).unwrap()
    );
}

/// Workers that cannot prefilter an input themselves (no room for spline coefficients, in
/// memory or in a scratch file): they succeed only with the coefficients their owner made
/// for them.
fn workers_that_cannot_prefilter() -> WorkerCommand {
    worker_command_with(&format!("{NO_ROOM_FOR_SPLINES} "))
}

const NO_ROOM_FOR_SPLINES: &str =
    "REPROJECT_RS_SPLINE_MEMORY=0 REPROJECT_RS_SCRATCH_DIR=/nonexistent/reproject-rs";

/// The owner of CPU workers prefilters a spline job's input once, and its workers map those
/// coefficients instead of each prefiltering again (they could not, here): the result is the
/// eager call's, with and without NaN masks. A worker an external scheduler starts (which
/// inherits nothing) prefilters by itself, and fails without room to.
#[test]
fn workers_map_the_spline_coefficients_their_owner_made() {
    use reproject::interp::NanPolicy;
    for nan_policy in [NanPolicy::Propagate, NanPolicy::Renormalize] {
        let (dir, mut plan, mut image) = setup(&format!("processes_shared_splines_{nan_policy:?}"));
        plan.options.nan_policy = nan_policy;
        if nan_policy == NanPolicy::Renormalize {
            image[[1, 40, 50]] = f64::NAN;
            ndarray_npy::write_npy(dir.join("input.npy"), &image).unwrap(); // setup's input
        }
        let out = dir.join("out.npy");
        run(&plan, &out, 2, &workers_that_cannot_prefilter()).unwrap();
        assert_eager_result(&image, &plan, &out);

        // The control: the same workers started by a scheduler.
        let other = dir.join("other.npy");
        let prepared = prepare_job(&plan, &request(&other)).unwrap();
        let job_file = prepared.job_file.clone();
        drop(prepared);
        let worker = std::process::Command::new("sh")
            .args(["-c", &format!("{NO_ROOM_FOR_SPLINES} exec \"$0\" \"$@\"")])
            .arg(std::env::current_exe().unwrap())
            .args(["worker_entry", "--exact", "--quiet", "--test-threads=1"])
            .env("REPROJECT_WORKER_JOB", &job_file)
            .env("REPROJECT_WORKER_SHARE", "0/1")
            .output()
            .unwrap();
        // The test harness reports the worker's failure on its standard output.
        let said = String::from_utf8_lossy(&worker.stdout);
        assert!(
            !worker.status.success(),
            "a worker without room prefiltered anyway"
        );
        assert!(said.contains("spline coefficients' scratch file"), "{said}");
    }
}

/// Not a test of its own: an owner without room for spline coefficients (started by
/// `an_input_the_owner_cannot_prefilter_leaves_nothing`) fails before it creates anything.
#[test]
fn owner_without_room_entry() {
    let Ok(name) = std::env::var("REPROJECT_OWNER_NO_ROOM") else {
        return;
    };
    let (dir, plan, _) = setup(&name);
    let err = run(&plan, &dir.join("out.npy"), 2, &worker_command(None)).unwrap_err();
    assert!(err.to_string().contains("scratch file"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, ["input.npy"]);
}

/// A run whose input cannot be prefiltered for its workers (no room for the coefficients)
/// fails as it did when the owner prefiltered to plan the job: before any output, job or
/// lock file exists.
#[test]
fn an_input_the_owner_cannot_prefilter_leaves_nothing() {
    let owner = std::process::Command::new("sh")
        .args(["-c", &format!("{NO_ROOM_FOR_SPLINES} exec \"$0\" \"$@\"")])
        .arg(std::env::current_exe().unwrap())
        .args(["owner_without_room_entry", "--exact", "--test-threads=1"])
        .env("REPROJECT_OWNER_NO_ROOM", "processes_owner_without_room")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&owner.stdout);
    assert!(owner.status.success(), "{said}");
    assert!(said.contains("1 passed"), "{said}");
}

/// Starts `run_worker` on `job_file` (all blocks) in a process of its own, as an external
/// scheduler would.
fn start_external_worker(job_file: &Path) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["worker_entry", "--exact", "--quiet", "--test-threads=1"])
        .env("REPROJECT_WORKER_JOB", job_file)
        .env("REPROJECT_WORKER_SHARE", "0/1")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// A real worker killed (SIGKILL) in the middle of its blocks keeps every block it marked
/// done before the kill; the rerun computes only the rest, and the result is the eager one.
#[test]
fn a_worker_killed_mid_run_keeps_its_finished_blocks() {
    let (dir, mut plan, image) = setup("processes_killed_worker");
    plan.shape_out = vec![300, 320];
    plan.options.block_size = Some((4, 4));
    let out = dir.join("out.npy");
    let prepared = prepare_job(&plan, &request(&out)).unwrap();
    let (job_file, job) = (prepared.job_file.clone(), prepared.job.clone());
    drop(prepared); // as --plan-only does: the workers run on their own
    let total = job.blocks;

    let mut worker = start_external_worker(&job_file);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let seen = loop {
        let done = total - missing_blocks(&job).unwrap().len();
        if done >= 40 {
            break done;
        }
        assert!(
            worker.try_wait().unwrap().is_none(),
            "the worker ended before 40 of its {total} blocks were marked done"
        );
        assert!(std::time::Instant::now() < deadline, "no progress");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    worker.kill().unwrap();
    assert!(!worker.wait().unwrap().success());
    let kept = total - missing_blocks(&job).unwrap().len();
    assert!(
        kept >= seen,
        "{kept} blocks kept, {seen} were marked before the kill"
    );
    assert!(
        kept < total,
        "the worker was not killed mid-run ({kept} of {total})"
    );

    // The rerun resumes the same files and publishes the eager result (its workers map the
    // spline coefficients the resumed job's owner makes).
    let partial = file_id(&dir.join("out.npy.partial"));
    let rerun = run(&plan, &out, 2, &workers_that_cannot_prefilter()).unwrap();
    assert_eq!(file_id(&out), partial, "the rerun must resume, not create");
    assert_eq!(
        rerun.blocks_computed,
        total - kept,
        "the blocks the rerun computed"
    );
    assert_eager_result(&image, &plan, &out);
    println!("killed after {seen} blocks marked; {kept} of {total} kept");
}

/// Not a test of its own: a job's owner (`run_processes`) in a process of its own, with
/// workers that only wait, for the test of what happens when the owner is killed.
#[test]
fn owner_entry() {
    let Ok(out) = std::env::var("REPROJECT_OWNER_OUTPUT") else {
        return;
    };
    let (_, plan, _) = setup("processes_owner_input");
    // Workers that wait a minute and exit (exec, so that the worker is the process started).
    let waiting = WorkerCommand {
        program: "sh".into(),
        args: vec!["-c".into(), "exec sleep 60".into(), "sh".into()],
    };
    let _ = run(&plan, Path::new(&out), 2, &waiting);
}

/// Killing the owner of a job kills its workers at once (parent-death signal), and with them
/// go the last holders of the output's lock (a rerun can take it) and of the spline
/// coefficients' memory file.
#[test]
fn workers_die_with_their_owner() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("processes_owner_killed");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.npy");
    let mut owner = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["owner_entry", "--exact", "--quiet", "--test-threads=1"])
        .env("REPROJECT_OWNER_OUTPUT", &out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wait_for = |what: &str, cond: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !cond() {
            assert!(std::time::Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    let owner_pid = owner.id();
    wait_for("two workers", &|| children_of(owner_pid).len() == 2);
    let workers = children_of(owner_pid);
    // Each holds the memory file of the (bicubic) job's spline coefficients, made once by
    // their owner: it goes with the last of them.
    let holds_coefficients = |pid: u32| {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
        fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|to| {
                to.to_string_lossy()
                    .starts_with("/memfd:reproject-rs-spline")
            })
        })
    };
    wait_for("the workers to start", &|| {
        workers.iter().all(|&w| {
            std::fs::read_link(format!("/proc/{w}/exe")).is_ok_and(|e| e.ends_with("sleep"))
        })
    });
    assert!(workers.iter().all(|&w| holds_coefficients(w)));
    // While they live, the output is owned.
    assert!(matches!(
        reproject::io::OutputLock::acquire(&out),
        Err(reproject::Error::OutputBusy(_))
    ));
    owner.kill().unwrap();
    owner.wait().unwrap();
    wait_for("the workers to die with their owner", &|| {
        workers.iter().all(|&w| !alive(w))
    });
    let lock = reproject::io::OutputLock::acquire(&out).unwrap();
    drop(lock);
}

/// A job whose owner's `Auto` plan and workers' plans may choose different executors:
/// `Auto`, the block size left open, large enough for a GPU (2 planes of 2048²).
fn mixed_devices_job(name: &str) -> (PathBuf, ReprojectPlan, Array3<f64>) {
    let (dir, mut plan, image) = setup(name);
    plan.shape_out = vec![2048, 2048];
    plan.options.block_size = None;
    plan.options.backend = Backend::Auto;
    (dir, plan, image)
}

/// Not a test of its own: the owner of a job on the CUDA simulator (one device), whose
/// workers see no GPU. `REPROJECT_OWNER_CASE=gpu`: a `mixed_devices_job`, which its plan sends
/// to the GPU (one worker, of the two asked, given GPU 0); `cpu`: the small job of `setup`,
/// which its plan keeps on the CPU (as many workers as asked). Either way the owner never
/// touches the device: it only learns the blocks and where they run.
#[test]
fn owner_on_a_gpu_entry() {
    let (Ok(out), Ok(case)) = (
        std::env::var("REPROJECT_OWNER_OUTPUT"),
        std::env::var("REPROJECT_OWNER_CASE"),
    ) else {
        return;
    };
    let cpu_workers = worker_command_with("REPROJECT_RS_CUDA_SIM=0 ");
    let (plan, want) = match case.as_str() {
        "gpu" => {
            let (_, plan, _) = mixed_devices_job("processes_mixed_devices_input");
            (plan, (1, Some(vec![0])))
        }
        _ => {
            let (_, mut plan, _) = setup("processes_cpu_owner_input");
            plan.options.block_size = None;
            (plan, (3, None))
        }
    };
    let workers = if want.1.is_some() { 2 } else { 3 };
    let run = run_processes(
        &plan,
        &request(Path::new(&out)),
        workers,
        &cpu_workers,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!((run.workers, run.gpus), want);
    let gpu = reproject::gpu::simulated_device(0).unwrap();
    assert_eq!(gpu.calls(), vec![], "the owner used the GPU");
    assert_eq!(gpu.stats().compilations, 0, "the owner loaded kernels");
}

/// Runs [`owner_on_a_gpu_entry`]'s `case` into `out` in a process of its own, on the CUDA
/// simulator.
fn run_owner_on_a_gpu(case: &str, out: &Path) {
    let owner = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "owner_on_a_gpu_entry",
            "--exact",
            "--quiet",
            "--test-threads=1",
        ])
        .env("REPROJECT_OWNER_OUTPUT", out)
        .env("REPROJECT_OWNER_CASE", case)
        .env("REPROJECT_RS_CUDA_SIM", "1")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(owner.success(), "the owner failed: {owner}");
}

/// An owner whose `Auto` plan takes a GPU and workers that have none cut the output alike:
/// the job keeps the blocks its owner's plan chose (1024 × 2048 for the GPU, where the
/// workers' CPU plans would cut 128²), and the result is the eager one, bit for bit. The
/// owner starts one worker per GPU and never opens the GPU itself.
#[test]
fn workers_cut_the_output_as_their_owner_planned_it() {
    let (dir, plan, image) = mixed_devices_job("processes_mixed_devices");
    let out = dir.join("out.npy");
    run_owner_on_a_gpu("gpu", &out);
    assert_eager_result(&image, &plan, &out);
}

/// On a machine with a GPU, an `Auto` job its plan keeps on the CPU (too small for the GPU)
/// runs as many CPU workers as asked, not one per GPU, and matches the eager result.
#[test]
fn an_auto_job_kept_on_the_cpu_runs_every_worker_asked() {
    let (dir, mut plan, image) = setup("processes_cpu_owner");
    plan.options.block_size = None;
    let out = dir.join("out.npy");
    run_owner_on_a_gpu("cpu", &out);
    assert_eager_result(&image, &plan, &out);
}

/// A job worth a GPU prepared where there is none (this test process sees no GPU), for a
/// scheduler to run on other machines, leaves the device to its workers: `Auto`, with the
/// blocks a GPU computes (not the 128² this machine would cut for its CPU). Workers without
/// a GPU compute them too, and the result is the eager one.
#[test]
fn a_job_worth_a_gpu_prepared_without_one_leaves_the_device_to_its_workers() {
    let (dir, plan, image) = mixed_devices_job("processes_prepared_without_gpu");
    let out = dir.join("out.npy");
    let prepared = prepare_job(&plan, &request(&out)).unwrap();
    let opened = JobPlan::from(&plan).open().unwrap();
    let OpenedJob::Reprojection(opened) = &opened else {
        unreachable!()
    };
    assert!(opened.worth_a_gpu() && !opened.runs_on_gpu());
    assert_eq!(opened.block_shape(), (128, 128));
    let options = prepared.job.plan.options();
    assert_eq!(options.backend, Backend::Auto);
    assert_eq!(options.block_size, Some((1024, 2048)));
    assert_eq!(prepared.job.blocks, 2);
    drop(prepared);
    run(&plan, &out, 2, &worker_command(None)).unwrap();
    assert_eager_result(&image, &plan, &out);
}

/// A job that leaves its block size (and device) open records the ones its plan chose, and a
/// rerun that leaves them open too resumes the job (one that names others is refused).
#[test]
fn a_job_keeps_the_blocks_it_chose_when_resumed() {
    let (dir, mut plan, _) = setup("processes_open_block_size");
    plan.options.block_size = None;
    let out = dir.join("out.npy");
    let prepared = prepare_job(&plan, &request(&out)).unwrap();
    let chosen = match &prepared.job.plan {
        JobPlan::Reprojection(p) => p.options.block_size,
        JobPlan::Mosaic(_) => None,
    };
    let opened = JobPlan::from(&plan).open().unwrap();
    let first = &opened.blocks()[0];
    assert_eq!(chosen, Some((first.rows.len(), first.cols.len())));
    // `Auto` kept this small job on the CPU: so do its workers, and a rerun.
    assert_eq!(plan.options.backend, Backend::Auto);
    assert_eq!(prepared.job.plan.options().backend, Backend::Cpu);
    drop(prepared);
    assert!(prepare_job(&plan, &request(&out)).unwrap().resumed);
    let mut on_gpu = plan.clone();
    on_gpu.options.backend = Backend::Cuda;
    let refused = prepare_job(&on_gpu, &request(&out))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("the device"), "{refused}");
    plan.options.block_size = Some((7, 9));
    let refused = prepare_job(&plan, &request(&out)).unwrap_err().to_string();
    assert!(refused.contains("the block size"), "{refused}");
}

/// A mosaic job (three `.npy` cubes with different backgrounds, offsets matched, bicubic: the
/// owner prepares the spline coefficients once for all its workers' bands): a failed
/// worker leaves a resumable partial output, a different mosaic into the same output is
/// refused naming what differs, and the rerun publishes the library's mosaic bit for bit.
#[test]
fn mosaic_jobs_fail_resume_and_match_the_library() {
    use reproject::mosaic::coadd::{
        background_corrections, reproject_and_coadd, Background, MosaicInput, MosaicOptions,
    };
    use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};

    let (dir, _, _) = setup("processes_mosaic");
    let mut images = Vec::new();
    let mut specs = Vec::new();
    for (k, (lon, rot, background)) in
        [(150.0, 0.0, 0.0), (150.02, 10.0, 3.5), (149.99, -7.0, -2.0)]
            .into_iter()
            .enumerate()
    {
        let image = Array3::from_shape_fn((2, 100, 120), |(p, y, x)| {
            ((x as f64 * 0.1 + lon * 50.0).sin() + (y as f64 * 0.07).cos()) * 5.0
                + p as f64
                + background
        });
        let path = dir.join(format!("in{k}.npy"));
        ndarray_npy::write_npy(&path, &image).unwrap();
        images.push((image, wcs(lon, rot)));
        specs.push(MosaicInputSpec {
            image: InputSpec::Npy { path },
            wcs: Some(wcs(lon, rot)),
            weights: None,
        });
    }
    let wcs_out = wcs(150.01, 25.0);
    let options = MosaicOptions {
        background: Background::Offset,
        reprojection: Options {
            block_size: Some((16, 16)),
            order: Order::Bicubic,
            ..Options::default()
        },
        ..MosaicOptions::default()
    };
    let sources: Vec<ArraySource<f64>> = images
        .iter()
        .map(|(a, _)| ArraySource::new(a.view().into_dyn()).unwrap())
        .collect();
    let inputs: Vec<MosaicInput> = sources
        .iter()
        .zip(&images)
        .map(|(s, (_, w))| MosaicInput::new(s, w))
        .collect();
    let want = reproject_and_coadd(&inputs, &wcs_out, &[90, 110], &options).unwrap();
    let corrections = background_corrections(&inputs, &wcs_out, &[90, 110], &options).unwrap();
    let plan = MosaicPlan {
        inputs: specs,
        wcs_out,
        shape_out: vec![2, 90, 110],
        options,
        corrections,
    };
    let out = dir.join("mosaic.npy");
    let request = request(&out);
    let err = run_processes(
        &plan,
        &request,
        3,
        &worker_command(Some("2/3")),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("worker 2 of 3"), "{err}");
    assert!(!out.exists(), "an incomplete mosaic must not be published");
    let job_file = reproject::processes::job_path(&out);
    let job = reproject::processes::ProcessJob::read(&job_file).unwrap();
    // Inputs of 100 × 120 pixels: not worth a GPU, whatever the machine (the default `Auto`
    // pinned to the CPU).
    assert_eq!(plan.options.reprojection.backend, Backend::Auto);
    assert_eq!(job.plan.options().backend, Backend::Cpu);
    let missing = missing_blocks(&job).unwrap().len();
    assert!(
        missing > 0 && missing < job.blocks,
        "{missing} of {} missing",
        job.blocks
    );
    // Other corrections are another mosaic: refused, naming them.
    let mut other = plan.clone();
    other.corrections[1].offset += 1.0;
    let refused = prepare_job(&other, &request).unwrap_err().to_string();
    assert!(refused.contains("the background corrections"), "{refused}");
    // The rerun computes the missing bands only, and publishes the library's mosaic.
    let partial = file_id(&dir.join("mosaic.npy.partial"));
    // Its workers map the inputs' spline coefficients, made once by the owner.
    let workers = workers_that_cannot_prefilter();
    run_processes(&plan, &request, 2, &workers, &mut |_, _| {}).unwrap();
    assert_eq!(file_id(&out), partial, "the rerun must resume, not create");
    let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    assert!(same(&read_all(&out), want.data.as_slice().unwrap()));
    assert!(same(
        &read_all(&out.with_extension("footprint.npy")),
        want.footprint.as_slice().unwrap()
    ));
}

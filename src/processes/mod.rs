//! Process-parallel runs: a reprojection or a mosaic ([`JobPlan`]) split over worker
//! processes that each write their share of the blocks into one memory-mapped output file.
//!
//! The run that owns the output (it holds the output's [`OutputLock`] for its whole life)
//! writes a job file (`<output>.job.json`: the plan, the outputs asked for and their layout)
//! and a progress file (`<output>.progress`: a state byte per block, set as each block is
//! written), starts the workers (`<program> <args…> --job <job file> --share k/N`), which
//! share its lock and die with it, and publishes the outputs under their final names only
//! when every block is done. Workers write their blocks in the file's final byte order, so
//! publishing is only a move: nothing is ever converted twice, whatever was interrupted.
//!
//! A job of spline order whose workers compute on the CPU has its input prefiltered once, by
//! the owner, into files its workers inherit and map ([`crate::engine::spline_share`]),
//! rather than once more by every worker.
//!
//! If a worker fails or is killed, the partial output, the job and the progress stay: running
//! the same command again computes only the missing blocks, and refuses (naming the
//! difference) if anything that changes the output's bytes differs. A second run on the same
//! output while one is alive fails at once. An external scheduler (a job array) can prepare a
//! job ([`prepare_job`]), run workers itself, one per share or per block range, with
//! [`run_worker`], and publish with [`run_processes`] once they are done.

mod job;
mod plan;
mod progress;
mod worker;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

pub use job::{FileRequest, FileStamp, FootprintRequest, JobState, OutputRequest, ProcessJob};
pub use plan::{JobPlan, OpenedJob};
pub use worker::run_worker;

use crate::engine::spline_share::{SplineExport, SplinePrep};
use crate::error::{Error, Result};
use crate::io::{OutputLayout, OutputLock};

/// Which blocks a worker computes.
///
/// ```
/// use reproject::processes::{job_path, missing_blocks, prepare_job, run_worker, BlockSelection};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("block_selection_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let input = dir.join("in.npy");
/// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
/// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// # )?;
/// # let options =
/// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
/// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
/// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
/// # let out = dir.join("out.npy");
/// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
/// #     footprint, overwrite: true };
/// let job = prepare_job(&plan, &request)?.job; // 6 blocks of 20 × 10; its locks let go
/// // Share 0 of 2 computes the even blocks; a range, what is left of blocks 1..4.
/// assert_eq!(run_worker(&job_path(&out), &BlockSelection::Share { k: 0, n: 2 })?, 3);
/// assert_eq!(missing_blocks(&job)?, [1, 3, 5]);
/// assert_eq!(run_worker(&job_path(&out), &BlockSelection::Range(1..4))?, 2);
/// assert_eq!(missing_blocks(&job)?, [5]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSelection {
    /// Blocks `k, k + n, k + 2n, …` (share `k` of `n`).
    Share {
        /// This worker's index, `0..n`.
        k: usize,
        /// Number of workers.
        n: usize,
    },
    /// A range of block indices.
    Range(Range<usize>),
}

impl std::str::FromStr for BlockSelection {
    type Err = Error;
    /// `k/n` for a share, `a..b` for a range.
    ///
    /// ```
    /// use reproject::processes::BlockSelection;
    /// assert_eq!("1/4".parse::<BlockSelection>()?, BlockSelection::Share { k: 1, n: 4 });
    /// assert_eq!("3..7".parse::<BlockSelection>()?, BlockSelection::Range(3..7));
    /// assert!("4/4".parse::<BlockSelection>().is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::InvalidArgument(format!("block selection '{s}': expected k/n or a..b"));
        if let Some((k, n)) = s.split_once('/') {
            let (k, n): (usize, usize) =
                (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
            if n == 0 || k >= n {
                return Err(bad());
            }
            return Ok(BlockSelection::Share { k, n });
        }
        if let Some((a, b)) = s.split_once("..") {
            return Ok(BlockSelection::Range(
                a.parse().map_err(|_| bad())?..b.parse().map_err(|_| bad())?,
            ));
        }
        Err(bad())
    }
}

impl BlockSelection {
    pub(crate) fn contains(&self, index: usize) -> bool {
        match self {
            BlockSelection::Share { k, n } => index % n == *k,
            BlockSelection::Range(r) => r.contains(&index),
        }
    }
}

/// How to start a worker: `program args… --job <file> --share k/n`.
///
/// ```
/// use reproject::processes::WorkerCommand;
/// // Workers started as `reproject-rs worker --job <job file> --share k/n`.
/// let command = WorkerCommand { program: "reproject-rs".into(), args: vec!["worker".into()] };
/// assert_eq!(command.program, std::path::Path::new("reproject-rs"));
/// assert_eq!(command.args, ["worker"]);
/// ```
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    /// The executable (e.g. the `reproject-rs` binary).
    pub program: PathBuf,
    /// Arguments before `--job` (e.g. `["worker"]`).
    pub args: Vec<String>,
}

/// The job file of an output: `<output>.job.json`.
///
/// ```
/// use reproject::processes::job_path;
/// use std::path::Path;
/// assert_eq!(job_path(Path::new("maps/sky.fits")), Path::new("maps/sky.fits.job.json"));
/// ```
pub fn job_path(output: &Path) -> PathBuf {
    job::sibling(output, "job.json")
}

fn progress_path(output: &Path) -> PathBuf {
    job::sibling(output, "progress")
}

/// A job ready to run, with the locks of its outputs held by this process.
///
/// ```
/// use reproject::processes::{job_path, prepare_job};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("prepared_job_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let input = dir.join("in.npy");
/// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
/// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// # )?;
/// # let options =
/// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
/// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
/// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
/// # let out = dir.join("out.npy");
/// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
/// #     footprint, overwrite: true };
/// let prepared = prepare_job(&plan, &request)?;
/// assert!(!prepared.resumed);
/// assert_eq!(prepared.job_file, job_path(&out));
/// drop(prepared); // as if interrupted: the job, its progress and partial output stay
/// let again = prepare_job(&plan, &request)?;
/// assert!(again.resumed);
/// assert_eq!(again.job.blocks, 6);
/// # drop(again);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug)]
pub struct PreparedJob {
    /// The job file.
    pub job_file: PathBuf,
    /// The job.
    pub job: ProcessJob,
    /// Whether the job was found (an earlier run's) rather than created.
    pub resumed: bool,
    locks: Vec<OutputLock>,
    /// The spline coefficients made for the workers of a job created by [`run_processes`]
    /// (before any output file, so that an input that cannot be prefiltered leaves nothing).
    splines: Option<SplineExport>,
}

impl PreparedJob {
    /// The owner's locks (of the image and of a separate footprint file).
    ///
    /// ```
    /// use reproject::processes::prepare_job;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # use reproject::io::OutputType;
    /// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
    /// # let dir = std::env::temp_dir().join(format!("prepared_locks_doc_{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let input = dir.join("in.npy");
    /// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    /// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// # )?;
    /// # let options =
    /// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
    /// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
    /// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
    /// # let out = dir.join("out.npy");
    /// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
    /// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
    /// #     footprint, overwrite: true };
    /// let prepared = prepare_job(&plan, &request)?;
    /// let locks = prepared.locks(); // the image's and the separate footprint file's
    /// assert_eq!(locks.len(), 2);
    /// assert!(locks.iter().all(|lock| lock.is_exclusive()));
    /// // While they are held, a second run on the same output is refused at once.
    /// let busy = prepare_job(&plan, &request).unwrap_err();
    /// assert!(matches!(busy, reproject::Error::OutputBusy(_)));
    /// # drop(prepared);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn locks(&self) -> Vec<&OutputLock> {
        self.locks.iter().collect()
    }
}

/// What [`run_processes`] did.
///
/// ```
/// use reproject::processes::ProcessRun;
/// // Two workers, on GPUs 0 and 1.
/// let run = ProcessRun {
///     output: "out.fits".into(),
///     workers: 2,
///     gpus: Some(vec![0, 1]),
///     blocks_computed: 16,
/// };
/// assert_eq!(run.gpus.as_ref().map(Vec::len), Some(run.workers));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRun {
    /// The published path of the image.
    pub output: PathBuf,
    /// How many worker processes the job runs on: as many as asked, at most one per GPU. A
    /// run that resumes a job whose blocks an earlier run had all computed starts none, and
    /// this is still the number it would have run on.
    pub workers: usize,
    /// The GPU of each worker, in order (`None`: they computed on the CPU).
    pub gpus: Option<Vec<usize>>,
    /// The blocks this run's workers computed: the job's blocks less those earlier runs of
    /// the same job had computed (0 when a run only publishes).
    pub blocks_computed: usize,
}

/// Runs `plan` (a [`JobPlan`], or a reprojection or mosaic plan) with `workers` processes
/// into the outputs of `request`, or resumes the previous, interrupted run of the very same
/// job. `on_progress(done, total)` is called as blocks finish. The workers compute where the
/// owner's plan chose ([`JobPlan::with_choices_of`], [`worker_gpus`]): at most one per GPU.
/// Workers on the CPU map the spline coefficients (orders ≥ 2) this call makes once for them.
///
/// Fails at once with [`Error::OutputBusy`] if another live run (or its workers) owns the
/// output, and before writing anything if a job left there differs from this one.
///
/// ```
/// use reproject::processes::{prepare_job, run_processes, run_worker, WorkerCommand};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("run_processes_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let input = dir.join("in.npy");
/// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
/// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// # )?;
/// # let options =
/// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
/// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
/// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
/// # let out = dir.join("out.npy");
/// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
/// #     footprint, overwrite: true };
/// let command = WorkerCommand { program: "reproject-rs".into(), args: vec!["worker".into()] };
/// // A job whose blocks were all computed since it was prepared (here by a worker in this
/// // process): the run starts no worker, and only publishes.
/// let job_file = prepare_job(&plan, &request)?.job_file;
/// run_worker(&job_file, &"0/1".parse()?)?;
/// let mut seen = Vec::new();
/// let run = run_processes(&plan, &request, 2, &command, &mut |done, total| {
///     seen.push((done, total))
/// })?;
/// assert_eq!((run.output.as_path(), seen), (out.as_path(), vec![(6, 6)]));
/// assert_eq!(run.blocks_computed, 0); // the worker in this process computed all 6
/// assert!(out.exists() && !job_file.exists());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn run_processes(
    plan: impl Into<JobPlan>,
    request: &OutputRequest,
    workers: usize,
    command: &WorkerCommand,
    on_progress: &mut dyn FnMut(usize, usize),
) -> Result<ProcessRun> {
    if workers == 0 {
        return Err(Error::InvalidArgument(
            "the number of processes must be positive".into(),
        ));
    }
    let mut prepared = prepare(&plan.into(), request, Some(workers))?;
    let made = prepared.splines.take();
    let job = &prepared.job;
    // The job's plan, with the owner's choices in it.
    let gpus = worker_gpus(&job.plan);
    let workers = worker_count(gpus.as_deref(), workers);
    let mut blocks_computed = 0;
    if job.state == JobState::Computing {
        let missing = missing_blocks(job)?;
        blocks_computed = missing.len();
        on_progress(job.blocks - missing.len(), job.blocks);
        let mut failures = Vec::new();
        if !missing.is_empty() {
            let splines = match made {
                Some(made) => made,
                // A job resumed: made now, its partial output already there.
                None => splines_for_workers(&job.plan, gpus.as_deref(), workers)?,
            };
            failures = run_workers(
                &prepared,
                workers,
                gpus.as_deref(),
                &splines,
                command,
                on_progress,
            )?;
        }
        let missing = missing_blocks(job)?;
        if !failures.is_empty() || !missing.is_empty() {
            return Err(Error::Io(format!(
                "{}; {} of {} blocks missing ({}). The output was not published; the partial \
                 output {} is kept: run the same command again to compute the missing blocks.",
                if failures.is_empty() {
                    "no worker failed".to_string()
                } else {
                    failures.join("; ")
                },
                missing.len(),
                job.blocks,
                describe_blocks(job, &missing),
                job.data.partial_path().display()
            )));
        }
        prepared.job.state = JobState::Publishing;
        prepared.job.write(&prepared.job_file)?;
    }
    let job = &prepared.job;
    OutputLayout::publish(&job.layouts(), &prepared.locks())?;
    let _ = std::fs::remove_file(&job.progress);
    let _ = std::fs::remove_file(&prepared.job_file);
    Ok(ProcessRun {
        output: job.data.path().to_path_buf(),
        workers,
        gpus: gpus.map(|g| g[..workers].to_vec()),
        blocks_computed,
    })
}

/// The environment variable that gives a worker process its GPU (an ordinal).
///
/// ```
/// use reproject::processes::{prepare_job, run_worker, WORKER_GPU_VAR};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("worker_gpu_var_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let input = dir.join("in.npy");
/// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
/// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// # )?;
/// # let options =
/// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
/// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
/// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
/// # let out = dir.join("out.npy");
/// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
/// #     footprint, overwrite: true };
/// let job_file = prepare_job(&plan, &request)?.job_file;
/// // A worker computes on the GPU it names, and refuses what is not a GPU number.
/// // SAFETY: no other thread reads the environment meanwhile.
/// unsafe { std::env::set_var(WORKER_GPU_VAR, "first") };
/// let refused = run_worker(&job_file, &"0/1".parse()?).unwrap_err();
/// assert!(refused.to_string().contains("REPROJECT_RS_WORKER_GPU=first is not a GPU number"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub const WORKER_GPU_VAR: &str = "REPROJECT_RS_WORKER_GPU";

/// The GPUs the workers of a GPU plan spread over, one process per GPU (`None` for a CPU
/// plan, or an `Auto` one without a GPU, whose workers all run on the CPU). A prepared job's
/// plan ([`PreparedJob::job`]) says `Cpu` for an `Auto` job too small for any GPU
/// ([`JobPlan::with_choices_of`]).
///
/// ```
/// use reproject::engine::lazy::{InputSpec, ReprojectPlan};
/// use reproject::engine::{Backend, Options};
/// use reproject::processes::{worker_gpus, JobPlan};
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
/// let cpu = ReprojectPlan { input: InputSpec::Npy { path: "in.npy".into() }, wcs_in: None,
///     wcs_out: wcs, shape_out: vec![64, 64],
///     options: Options { backend: Backend::Cpu, ..Options::default() } };
/// assert_eq!(worker_gpus(&JobPlan::from(&cpu)), None); // every worker on the CPU
/// // `Auto` on the first GPU (the default): GPU 0, if this machine has one.
/// let auto = JobPlan::from(ReprojectPlan { options: Options::default(), ..cpu });
/// assert!(worker_gpus(&auto).is_none_or(|gpus| gpus == [0]));
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn worker_gpus(plan: &JobPlan) -> Option<Vec<usize>> {
    let options = plan.options();
    match options.backend {
        crate::gpu::Backend::Cpu => None,
        _ => crate::gpu::visible_devices(options.devices).ok(),
    }
}

/// How many workers a run starts when `requested` are asked for: at most one per GPU of
/// `gpus` ([`worker_gpus`]).
///
/// ```
/// use reproject::processes::worker_count;
/// assert_eq!(worker_count(None, 4), 4);
/// assert_eq!(worker_count(Some(&[0, 1]), 4), 2);
/// ```
pub fn worker_count(gpus: Option<&[usize]>, requested: usize) -> usize {
    gpus.map_or(requested, |g| requested.min(g.len()))
}

/// The spline coefficients (orders ≥ 2) of a job whose `workers` compute on the CPU (`gpus`
/// is `None`), made once here for all of them ([`crate::engine::spline_share`]), on as many
/// threads as there will be workers (or as the job's options ask, if more); none for
/// workers on GPUs, which prefilter on their devices, or without processes that can
/// inherit files.
fn splines_for_workers(
    plan: &JobPlan,
    gpus: Option<&[usize]>,
    workers: usize,
) -> Result<SplineExport> {
    let mut export = SplineExport::new(workers.max(plan.options().parallel.threads()));
    if cfg!(unix) && gpus.is_none() && plan.options().order.needs_prefilter() {
        drop(plan.open_with(SplinePrep::Export(&mut export))?);
    }
    Ok(export)
}

/// Worker processes, killed and reaped if they are dropped while running (so that no worker
/// ever outlives the call that started it, and the owner's lock outlives them all).
struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// Starts the workers of a prepared job and waits for them, reporting progress; returns
/// their failures. With `gpus` (as many as `workers` at least: see [`worker_count`]), each
/// worker is given its own ([`WORKER_GPU_VAR`]); each inherits the spline coefficients
/// `splines`; workers are new processes (spawned, never forked from a process that may hold
/// a CUDA context).
fn run_workers(
    prepared: &PreparedJob,
    workers: usize,
    gpus: Option<&[usize]>,
    splines: &SplineExport,
    command: &WorkerCommand,
    on_progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<String>> {
    let job = &prepared.job;
    let mut children = Workers(Vec::with_capacity(workers));
    for k in 0..workers {
        let mut worker = Command::new(&command.program);
        worker
            .args(&command.args)
            .arg("--job")
            .arg(&prepared.job_file)
            .arg("--share")
            .arg(format!("{k}/{workers}"));
        if let Some(gpus) = gpus {
            worker.env(WORKER_GPU_VAR, gpus[k].to_string());
        }
        #[cfg(unix)]
        {
            OutputLock::share_with(&prepared.locks(), &mut worker);
            if !splines.is_empty() {
                splines.share_with(&mut worker);
            }
        }
        let child = worker.spawn().map_err(|e| {
            Error::Io(format!(
                "cannot start worker {k} ({}): {e}",
                command.program.display()
            ))
        })?;
        children.0.push(child);
    }
    let mut status = vec![None; workers];
    loop {
        for (k, child) in children.0.iter_mut().enumerate() {
            if status[k].is_none() {
                status[k] = child
                    .try_wait()
                    .map_err(|e| Error::Io(format!("worker {k} of {workers}: {e}")))?;
            }
        }
        if let Ok(states) = progress::read(&job.progress, job.blocks) {
            let done = states.iter().filter(|&&s| s != progress::MISSING).count();
            on_progress(done, job.blocks);
        }
        if status.iter().all(Option::is_some) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(status
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match s {
            Some(s) if !s.success() => Some(format!("worker {k} of {workers} ended with {s}")),
            _ => None,
        })
        .collect())
}

/// Takes the output's lock and writes the job and progress files and creates the
/// (unpublished) outputs for `plan`, or finds the job that an interrupted run of the same
/// plan into the same outputs left: the first step of [`run_processes`], and what an external
/// scheduler calls (then drops) before starting workers ([`run_worker`]) itself.
///
/// A job left there that differs in anything that changes the output's bytes is refused,
/// naming the difference, before anything is written; one whose partial output is gone or
/// was replaced (by a run without processes) is discarded and the job made anew.
///
/// ```
/// use reproject::processes::{missing_blocks, prepare_job};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("prepare_job_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let input = dir.join("in.npy");
/// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
/// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// # )?;
/// # let options =
/// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
/// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
/// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
/// # let out = dir.join("out.npy");
/// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
/// #     footprint, overwrite: true };
/// let prepared = prepare_job(&plan, &request)?;
/// assert_eq!(prepared.job.blocks, 6); // 40 × 30 in blocks of 20 × 10
/// assert_eq!(missing_blocks(&prepared.job)?.len(), 6);
/// assert!(prepared.job_file.exists() && prepared.job.data.partial_path().exists());
/// assert!(!out.exists()); // published only when every block is done
/// # drop(prepared);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn prepare_job(plan: impl Into<JobPlan>, request: &OutputRequest) -> Result<PreparedJob> {
    prepare(&plan.into(), request, None)
}

/// [`prepare_job`]; with `workers` (the count [`run_processes`] was asked for), a job it
/// creates gets the spline coefficients of its workers too, before its outputs are created.
fn prepare(plan: &JobPlan, request: &OutputRequest, workers: Option<usize>) -> Result<PreparedJob> {
    let output = &request.data.path;
    let job_file = job_path(output);
    let inputs = FileStamp::of_inputs(plan)?;
    let lock = OutputLock::acquire(output)?;
    if job_file.exists() {
        let job = ProcessJob::read(&job_file)?;
        let differences = job.differences(plan, request, &inputs);
        if !differences.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{} holds an unfinished job into {} that differs from this one in {}: run the \
                 command that started it to finish it, or remove {} (and its .partial and \
                 .progress files) to start again",
                job_file.display(),
                output.display(),
                differences.join(", "),
                job_file.display()
            )));
        }
        let intact = job.state == JobState::Publishing
            || job.layouts().iter().all(|l| l.check_partial().is_ok());
        if intact {
            let mut locks = vec![lock];
            if let Some(f) = &job.footprint {
                locks.push(OutputLock::acquire(f.path())?);
            }
            if job.state == JobState::Computing {
                progress::settle(&job.progress, job.blocks)?;
            }
            return Ok(PreparedJob {
                job_file,
                job,
                resumed: true,
                locks,
                splines: None,
            });
        }
        // The partial output is gone: nothing of the job is left to resume.
        let _ = std::fs::remove_file(&job.progress);
        std::fs::remove_file(&job_file)
            .map_err(|e| Error::Io(format!("{}: {e}", job_file.display())))?;
    }
    // Opened for its blocks and choices only: the spline coefficients are made later, once
    // for the workers (see `run_processes`) or by each worker of a scheduler.
    let opened = plan.open_with(SplinePrep::Deferred)?;
    let pinned = plan.with_choices_of(&opened);
    // The blocks the workers cut: those of the pinned block shape, which may not be the one
    // this machine chose (a job worth a GPU prepared without one).
    let blocks = if pinned.options().block_size == plan.options().block_size {
        opened.blocks().len()
    } else {
        pinned.open_with(SplinePrep::Deferred)?.blocks().len()
    };
    let splines = match workers {
        Some(workers) => Some(splines_for_workers(
            &pinned,
            worker_gpus(&pinned).as_deref(),
            workers,
        )?),
        None => None,
    };
    // Creating an output takes its lock: let ours go. A run that slips in between owns the
    // output from then on, and the creation below fails (busy, or its partial file exists).
    drop(lock);
    let (data, footprint) = request.create(opened.shape_out())?;
    let (data, data_lock) = data.suspend()?;
    let mut locks = vec![data_lock];
    let footprint = match footprint {
        Some(f) => {
            let (layout, lock) = f.suspend()?;
            locks.push(lock);
            Some(layout)
        }
        None => None,
    };
    let job = ProcessJob {
        plan: pinned,
        request: request.clone(),
        inputs,
        data,
        footprint,
        progress: progress_path(output),
        blocks,
        state: JobState::Computing,
    };
    progress::create(&job.progress, blocks)?;
    job.write(&job_file)?;
    Ok(PreparedJob {
        job_file,
        job,
        resumed: false,
        locks,
        splines,
    })
}

/// The first few of `indices` with their output windows, e.g. `block 3 (rows 20..40, columns
/// 0..25), ...`.
fn describe_blocks(job: &ProcessJob, indices: &[usize]) -> String {
    const SHOWN: usize = 8;
    let opened = job.plan.open_with(SplinePrep::Deferred);
    let windows = opened.map(|p| p.blocks()).unwrap_or_default();
    let mut parts: Vec<String> = indices
        .iter()
        .take(SHOWN)
        .map(|&i| match windows.get(i) {
            Some(b) => format!(
                "block {i} (rows {}..{}, columns {}..{})",
                b.rows.start, b.rows.end, b.cols.start, b.cols.end
            ),
            None => format!("block {i}"),
        })
        .collect();
    if indices.len() > SHOWN {
        parts.push(format!("and {} more", indices.len() - SHOWN));
    }
    parts.join(", ")
}

/// Block indices of `job` not yet written (or written before a restart of the machine and
/// not known to have reached the disk).
///
/// ```
/// use reproject::processes::{missing_blocks, prepare_job, run_worker};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("missing_blocks_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let input = dir.join("in.npy");
/// # ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
/// # let wcs = reproject::wcs::Wcs::from_header_str(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
/// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// # )?;
/// # let options =
/// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
/// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
/// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
/// # let out = dir.join("out.npy");
/// # let footprint = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// # let request = OutputRequest { data: FileRequest::npy(&out), dtype: OutputType::F64,
/// #     footprint, overwrite: true };
/// let prepared = prepare_job(&plan, &request)?;
/// let (job_file, job) = (prepared.job_file.clone(), prepared.job.clone());
/// drop(prepared); // the owner lets go: workers may take the lock
/// assert_eq!(missing_blocks(&job)?, [0, 1, 2, 3, 4, 5]);
/// assert_eq!(run_worker(&job_file, &"0..2".parse()?)?, 2);
/// assert_eq!(missing_blocks(&job)?, [2, 3, 4, 5]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn missing_blocks(job: &ProcessJob) -> Result<Vec<usize>> {
    Ok(progress::read(&job.progress, job.blocks)?
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s == progress::MISSING)
        .map(|(i, _)| i)
        .collect())
}

//! Process-parallel runs: a [`ReprojectPlan`] split over worker processes that each write
//! their share of the blocks into one memory-mapped output file.
//!
//! The parent writes a job file (`<output>.job.json`: the plan and the output's layout) and a
//! progress file (`<output>.progress`: one byte per block, set once the block is on disk),
//! starts the workers (`<program> <args…> --job <job file> --share k/N`), and publishes the
//! output under its final name only when every block is done. If a worker fails or is
//! killed, the partial output, the job and the progress stay: running the same job again
//! computes only the missing blocks. An external scheduler (a job array) can run workers
//! itself, one per share or per block range, with [`run_worker`].

use std::fs::OpenOptions;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use memmap2::MmapMut;
use ndarray::{s, Array3, ArrayViewMut3};
use serde::{Deserialize, Serialize};

use super::lazy::ReprojectPlan;
use super::{OutputSample, Plan};
use crate::error::{Error, Result};
use crate::io::{MappedOutput, OutputLayout, OutputType, SharedOutputMap};

/// Which blocks a worker computes.
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
    /// use reproject::engine::processes::BlockSelection;
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
    fn contains(&self, index: usize) -> bool {
        match self {
            BlockSelection::Share { k, n } => index % n == *k,
            BlockSelection::Range(r) => r.contains(&index),
        }
    }
}

/// What the workers share: the plan, where the output and footprint are, the progress file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessJob {
    /// The reprojection.
    pub plan: ReprojectPlan,
    /// The output image (and its footprint extension, for FITS).
    pub data: OutputLayout,
    /// A separate footprint file, if any.
    pub footprint: Option<OutputLayout>,
    /// One byte per block: 1 once the block is written.
    pub progress: PathBuf,
    /// Number of blocks.
    pub blocks: usize,
}

/// How to start a worker: `program args… --job <file> --share k/n`.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    /// The executable (e.g. the `reproject-rs` binary).
    pub program: PathBuf,
    /// Arguments before `--job` (e.g. `["worker"]`).
    pub args: Vec<String>,
}

fn job_path(output: &Path) -> PathBuf {
    sibling(output, "job.json")
}

fn progress_path(output: &Path) -> PathBuf {
    sibling(output, "progress")
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

/// Runs `plan` with `workers` processes into `output_path`, creating the output with `create`
/// (a [`MappedOutput`] and an optional separate footprint output), or resuming the previous
/// run of the same plan into the same path. Returns the published path.
pub fn run_processes(
    plan: &ReprojectPlan,
    output_path: &Path,
    create: impl FnOnce() -> Result<(MappedOutput, Option<MappedOutput>)>,
    workers: usize,
    command: &WorkerCommand,
) -> Result<PathBuf> {
    if workers == 0 {
        return Err(Error::InvalidArgument(
            "the number of processes must be positive".into(),
        ));
    }
    let (job_file, job) = prepare_job(plan, output_path, create)?;

    let mut children = Vec::with_capacity(workers);
    for k in 0..workers {
        let child = Command::new(&command.program)
            .args(&command.args)
            .arg("--job")
            .arg(&job_file)
            .arg("--share")
            .arg(format!("{k}/{workers}"))
            .spawn()
            .map_err(|e| {
                Error::Io(format!(
                    "cannot start worker {k} ({}): {e}",
                    command.program.display()
                ))
            })?;
        children.push(child);
    }
    let mut failures = Vec::new();
    for (k, mut child) in children.into_iter().enumerate() {
        match child.wait() {
            Ok(status) if status.success() => {}
            Ok(status) => failures.push(format!("worker {k} of {workers} ended with {status}")),
            Err(e) => failures.push(format!("worker {k} of {workers}: {e}")),
        }
    }
    let missing = missing_blocks(&job)?;
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
            describe_blocks(&job, &missing),
            job.data.partial_path().display()
        )));
    }
    // Every block is on disk: publish.
    let path = MappedOutput::resume(&job.data)?.finish()?;
    if let Some(f) = &job.footprint {
        MappedOutput::resume(f)?.finish()?;
    }
    let _ = std::fs::remove_file(&job.progress);
    let _ = std::fs::remove_file(&job_file);
    Ok(path)
}

/// Writes the job and progress files and creates the (suspended) output for `plan`, or
/// reads them back if a previous run of the same plan into `output_path` left them: the first
/// step of [`run_processes`], and what an external scheduler calls before starting workers
/// ([`run_worker`]) itself. Returns the job file and the job.
pub fn prepare_job(
    plan: &ReprojectPlan,
    output_path: &Path,
    create: impl FnOnce() -> Result<(MappedOutput, Option<MappedOutput>)>,
) -> Result<(PathBuf, ProcessJob)> {
    let job_file = job_path(output_path);
    let job = match std::fs::read_to_string(&job_file) {
        Ok(text) => {
            let job: ProcessJob = serde_json::from_str(&text)
                .map_err(|e| Error::Io(format!("{}: not a job file: {e}", job_file.display())))?;
            if job.plan != *plan {
                return Err(Error::Io(format!(
                    "{} belongs to another reprojection into the same output: remove it (and \
                     its .partial and .progress files) to start again",
                    job_file.display()
                )));
            }
            job
        }
        Err(_) => {
            let blocks = plan.open()?.blocks().len();
            let (data, footprint) = create()?;
            let job = ProcessJob {
                plan: plan.clone(),
                data: data.suspend()?,
                footprint: footprint.map(|f| f.suspend()).transpose()?,
                progress: progress_path(output_path),
                blocks,
            };
            std::fs::write(&job.progress, vec![0u8; blocks])
                .map_err(|e| Error::Io(format!("{}: {e}", job.progress.display())))?;
            let text = serde_json::to_string(&job)
                .map_err(|e| Error::InvalidArgument(format!("cannot serialise the job: {e}")))?;
            std::fs::write(&job_file, text)
                .map_err(|e| Error::Io(format!("{}: {e}", job_file.display())))?;
            job
        }
    };

    Ok((job_file, job))
}

/// The first few of `indices` with their output windows, e.g. `block 3 (rows 20..40, columns
/// 0..25), ...`.
fn describe_blocks(job: &ProcessJob, indices: &[usize]) -> String {
    const SHOWN: usize = 8;
    let windows = job.plan.open().map(|p| p.blocks()).unwrap_or_default();
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

/// Block indices of `job` not yet written.
pub fn missing_blocks(job: &ProcessJob) -> Result<Vec<usize>> {
    let done = std::fs::read(&job.progress)
        .map_err(|e| Error::Io(format!("{}: {e}", job.progress.display())))?;
    if done.len() != job.blocks {
        return Err(Error::Io(format!(
            "{}: corrupt progress file",
            job.progress.display()
        )));
    }
    Ok(done
        .iter()
        .enumerate()
        .filter(|(_, &d)| d == 0)
        .map(|(i, _)| i)
        .collect())
}

/// The worker side: computes the blocks of the job in `job_file` that `selection` picks and
/// are not done yet, writing them into the shared output and marking them done. Returns the
/// number of blocks computed.
pub fn run_worker(job_file: &Path, selection: &BlockSelection) -> Result<usize> {
    let text = std::fs::read_to_string(job_file)
        .map_err(|e| Error::Io(format!("{}: {e}", job_file.display())))?;
    let job: ProcessJob = serde_json::from_str(&text)
        .map_err(|e| Error::Io(format!("{}: not a job file: {e}", job_file.display())))?;
    let plan = job.plan.open()?;
    if plan.blocks().len() != job.blocks {
        return Err(Error::InvalidArgument(
            "the job's block count does not match its plan".into(),
        ));
    }
    let progress_file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&job.progress)
        .map_err(|e| Error::Io(format!("{}: {e}", job.progress.display())))?;
    // SAFETY: each worker writes only the bytes of its own blocks.
    let mut progress = unsafe { MmapMut::map_mut(&progress_file) }
        .map_err(|e| Error::Io(format!("{}: {e}", job.progress.display())))?;
    if progress.len() != job.blocks {
        return Err(Error::Io(format!(
            "{}: corrupt progress file",
            job.progress.display()
        )));
    }
    let mut data = SharedOutputMap::open(&job.data)?;
    let mut separate = job
        .footprint
        .as_ref()
        .map(SharedOutputMap::open)
        .transpose()?;
    let mut done = Vec::new();
    // A failed block still lets the blocks computed before it be marked done below.
    let result = match job.data.dtype() {
        OutputType::F32 => write_blocks::<f32>(
            &plan,
            selection,
            &progress,
            &mut data,
            separate.as_mut(),
            &mut done,
        ),
        OutputType::F64 => write_blocks::<f64>(
            &plan,
            selection,
            &progress,
            &mut data,
            separate.as_mut(),
            &mut done,
        ),
    };
    // The blocks must be on disk before they are marked done.
    data.flush()?;
    if let Some(map) = &separate {
        map.flush()?;
    }
    for &index in &done {
        progress[index] = 1;
    }
    progress
        .flush()
        .map_err(|e| Error::Io(format!("{}: {e}", job.progress.display())))?;
    result?;
    Ok(done.len())
}

/// Computes the selected blocks that are not done into the mapped output, pushing the index
/// of each onto `done`; stops at the first block that fails, with an error naming it.
fn write_blocks<T: OutputSample + crate::io::OutputElement>(
    plan: &Plan<'_>,
    selection: &BlockSelection,
    progress: &[u8],
    data: &mut SharedOutputMap,
    separate: Option<&mut SharedOutputMap>,
    done: &mut Vec<usize>,
) -> Result<()> {
    let (planes, (ny, nx)) = (plan.planes(), plan.plane_shape_out());
    let shape = (planes, ny, nx);
    let (image, inline_fp) = data.data_and_footprint_mut::<T>()?;
    let footprint: Option<&mut [T]> = match (inline_fp, separate) {
        (Some(fp), _) => Some(fp),
        (None, Some(map)) => Some(map.data_and_footprint_mut::<T>()?.0),
        // No footprint output: each block's footprint goes to a block-sized scratch buffer.
        (None, None) => None,
    };
    let wrong = |e: ndarray::ShapeError| Error::ShapeMismatch(format!("output file layout: {e}"));
    let mut image = ArrayViewMut3::from_shape(shape, image).map_err(wrong)?;
    let mut footprint = footprint
        .map(|f| ArrayViewMut3::from_shape(shape, f))
        .transpose()
        .map_err(wrong)?;
    for (index, block) in plan.blocks().into_iter().enumerate() {
        if !selection.contains(index) || progress[index] != 0 {
            continue;
        }
        let window = s![.., block.rows.clone(), block.cols.clone()];
        let result = match footprint.as_mut() {
            Some(fp) => plan.compute_block(&block, image.slice_mut(window), fp.slice_mut(window)),
            None => {
                let mut scratch = Array3::from_elem(
                    (planes, block.rows.len(), block.cols.len()),
                    T::from_f64(0.0),
                );
                plan.compute_block(&block, image.slice_mut(window), scratch.view_mut())
            }
        };
        result.map_err(|e| {
            let e = super::in_block(e, &block);
            match e {
                Error::Io(m) => Error::Io(format!("block {index}, {m}")),
                Error::Fits(m) => Error::Fits(format!("block {index}, {m}")),
                other => other,
            }
        })?;
        done.push(index);
    }
    Ok(())
}

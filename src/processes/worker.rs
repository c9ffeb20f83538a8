//! The worker side of a process-parallel run: computes blocks of a job into the shared
//! output files, in the files' byte order, marking each block as it is written.

use std::path::Path;
use std::time::{Duration, Instant};

use ndarray::{s, Array3, ArrayViewMut3, Axis};

use super::progress::ProgressMap;
use super::{BlockSelection, JobState, OpenedJob, ProcessJob};
use crate::engine::spline_share::{SplineImport, SplinePrep};
use crate::engine::{in_block, OutputSample};
use crate::error::{Error, Result};
use crate::io::{OutputElement, OutputLock, OutputType, SharedOutputMap};

/// How often a worker flushes its blocks to disk and makes their marks durable.
const DURABLE_EVERY: Duration = Duration::from_secs(5);

/// The worker side: computes the blocks of the job in `job_file` that `selection` picks and
/// are not done yet, writing them into the shared output and marking each done as soon as it
/// is written (a worker killed mid-run loses only the blocks it was computing). Returns the
/// number of blocks computed.
///
/// A worker started by the job's owner shares the owner's lock (inherited, see
/// [`OutputLock::share_with`]); one started by an external scheduler takes the lock shared,
/// and fails with [`Error::OutputBusy`] while a run owns the output.
///
/// ```
/// use reproject::processes::{missing_blocks, prepare_job, run_worker, ProcessJob};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("run_worker_doc_{}", std::process::id()));
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
/// let job_file = prepare_job(&plan, &request)?.job_file; // the owner's locks let go
/// assert_eq!(run_worker(&job_file, &"0/1".parse()?)?, 6); // every block, in this process
/// assert!(missing_blocks(&ProcessJob::read(&job_file)?)?.is_empty());
/// assert_eq!(run_worker(&job_file, &"0/1".parse()?)?, 0); // nothing left to compute
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn run_worker(job_file: &Path, selection: &BlockSelection) -> Result<usize> {
    let job = ProcessJob::read(job_file)?;
    let output = job.data.path();
    let lock = match OutputLock::inherited(output)? {
        Some(lock) => lock,
        None => OutputLock::acquire_shared(output)?,
    };
    // Read again under the lock: the owner may have changed it meanwhile.
    let job = ProcessJob::read(job_file)?;
    if job.state == JobState::Publishing {
        return Ok(0);
    }
    let mut description = job.plan.clone();
    if let Ok(gpu) = std::env::var(super::WORKER_GPU_VAR) {
        let ordinal = gpu.trim().parse().map_err(|_| {
            Error::InvalidArgument(format!(
                "{}={gpu} is not a GPU number",
                super::WORKER_GPU_VAR
            ))
        })?;
        description = description.on_device(ordinal);
    }
    // Spline coefficients the owner made for its workers, if any.
    let plan = match SplineImport::from_env()? {
        Some(mut inherited) => {
            let plan = description.open_with(SplinePrep::Import(&mut inherited))?;
            inherited.finish()?;
            plan
        }
        None => description.open()?,
    };
    if plan.blocks().len() != job.blocks {
        return Err(Error::InvalidArgument(
            "the job's block count does not match its plan".into(),
        ));
    }
    let mut progress = ProgressMap::open(&job.progress, job.blocks)?;
    let mut data = SharedOutputMap::open(&job.data, &lock)?;
    let footprint_lock = match &job.footprint {
        Some(f) => Some(match OutputLock::inherited(f.path())? {
            Some(lock) => lock,
            None => OutputLock::acquire_shared(f.path())?,
        }),
        None => None,
    };
    let mut separate = match (&job.footprint, &footprint_lock) {
        (Some(f), Some(lock)) => Some(SharedOutputMap::open(f, lock)?),
        _ => None,
    };
    let mut outputs = Outputs {
        data: &mut data,
        separate: separate.as_mut(),
    };
    let result = match job.data.dtype() {
        OutputType::F32 => write_blocks::<f32>(&plan, selection, &mut progress, &mut outputs),
        OutputType::F64 => write_blocks::<f64>(&plan, selection, &mut progress, &mut outputs),
    };
    // The blocks written before a failure count too.
    progress.make_durable(|| outputs.flush())?;
    result
}

/// The shared output files of a worker.
struct Outputs<'a> {
    data: &'a mut SharedOutputMap,
    separate: Option<&'a mut SharedOutputMap>,
}

impl Outputs<'_> {
    fn flush(&self) -> Result<()> {
        self.data.flush()?;
        if let Some(map) = &self.separate {
            map.flush()?;
        }
        Ok(())
    }
}

/// Applies `convert` (to the file's byte order) to the samples of `window` (all planes).
fn to_file_order<T>(convert: fn(&mut [T]), mut window: ArrayViewMut3<T>) {
    for mut lane in window.lanes_mut(Axis(2)) {
        match lane.as_slice_mut() {
            Some(row) => convert(row),
            None => lane
                .iter_mut()
                .for_each(|v| convert(std::slice::from_mut(v))),
        }
    }
}

/// Computes the selected blocks that are not done into the mapped outputs, marking each;
/// stops at the first block that fails, with an error naming it. Returns how many blocks it
/// computed.
fn write_blocks<T: OutputSample + OutputElement>(
    plan: &OpenedJob,
    selection: &BlockSelection,
    progress: &mut ProgressMap,
    outputs: &mut Outputs<'_>,
) -> Result<usize> {
    let (planes, (ny, nx)) = (plan.planes(), plan.plane_shape_out());
    let shape = (planes, ny, nx);
    let wrong = |e: ndarray::ShapeError| Error::ShapeMismatch(format!("output file layout: {e}"));
    let mut durable_at = Instant::now() + DURABLE_EVERY;
    let mut computed = 0;
    for (index, block) in plan.blocks().into_iter().enumerate() {
        if !selection.contains(index) || !progress.is_missing(index) {
            continue;
        }
        let window = s![.., block.rows.clone(), block.cols.clone()];
        {
            let convert = outputs.data.file_order::<T>();
            let (image, inline_fp) = outputs.data.data_and_footprint_mut::<T>()?;
            let mut image = ArrayViewMut3::from_shape(shape, image).map_err(wrong)?;
            let result = match (inline_fp, outputs.separate.as_deref_mut()) {
                (Some(fp), _) => {
                    let mut fp = ArrayViewMut3::from_shape(shape, fp).map_err(wrong)?;
                    plan.compute_block(&block, image.slice_mut(window), fp.slice_mut(window))
                        .map(|()| to_file_order(convert, fp.slice_mut(window)))
                }
                (None, Some(map)) => {
                    let convert_fp = map.file_order::<T>();
                    let fp = map.data_and_footprint_mut::<T>()?.0;
                    let mut fp = ArrayViewMut3::from_shape(shape, fp).map_err(wrong)?;
                    plan.compute_block(&block, image.slice_mut(window), fp.slice_mut(window))
                        .map(|()| to_file_order(convert_fp, fp.slice_mut(window)))
                }
                // No footprint output: each block's footprint goes to a scratch buffer.
                (None, None) => {
                    let mut scratch = Array3::from_elem(
                        (planes, block.rows.len(), block.cols.len()),
                        T::from_f64(0.0),
                    );
                    plan.compute_block(&block, image.slice_mut(window), scratch.view_mut())
                }
            };
            result.map_err(|e| match in_block(e, &block) {
                Error::Io(m) => Error::Io(format!("block {index}, {m}")),
                Error::Fits(m) => Error::Fits(format!("block {index}, {m}")),
                other => other,
            })?;
            to_file_order(convert, image.slice_mut(window));
        }
        progress.mark_written(index, || outputs.flush())?;
        computed += 1;
        if Instant::now() >= durable_at {
            progress.make_durable(|| outputs.flush())?;
            durable_at = Instant::now() + DURABLE_EVERY;
        }
    }
    Ok(computed)
}

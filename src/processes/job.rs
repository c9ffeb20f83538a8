//! The job of a process-parallel run: what it computes into which files ([`ProcessJob`]),
//! written beside the output as `<output>.job.json`, and what identifies it, so that a rerun
//! resumes only the very same job.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::JobPlan;
use crate::engine::lazy::InputSpec;
use crate::engine::Backend;
use crate::error::{Error, Result};
use crate::io::{MappedOutput, OutputFormat, OutputLayout, OutputType};

/// One output file as the caller asks for it.
///
/// ```
/// use reproject::processes::FileRequest;
/// use reproject::io::OutputFormat;
/// let file = FileRequest::fits("out.fits", "BUNIT   = 'K'");
/// assert_eq!(file.format, OutputFormat::Fits);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRequest {
    /// Where the file is published.
    pub path: PathBuf,
    /// `.npy` or FITS.
    pub format: OutputFormat,
    /// FITS header cards beyond the structural ones (ignored for `.npy`).
    pub header: String,
}

impl FileRequest {
    /// A FITS file with these header cards.
    ///
    /// ```
    /// use reproject::io::OutputFormat;
    /// use reproject::processes::FileRequest;
    /// let file = FileRequest::fits("sky.fits", "BUNIT   = 'K'");
    /// assert_eq!(file.format, OutputFormat::Fits);
    /// assert_eq!(file.header, "BUNIT   = 'K'");
    /// ```
    pub fn fits(path: impl Into<PathBuf>, header: &str) -> FileRequest {
        FileRequest {
            path: path.into(),
            format: OutputFormat::Fits,
            header: header.to_string(),
        }
    }

    /// A `.npy` file.
    ///
    /// ```
    /// use reproject::io::OutputFormat;
    /// use reproject::processes::FileRequest;
    /// let file = FileRequest::npy("sky.npy");
    /// assert_eq!(file.format, OutputFormat::Npy);
    /// assert!(file.header.is_empty()); // a .npy file has no header cards
    /// ```
    pub fn npy(path: impl Into<PathBuf>) -> FileRequest {
        FileRequest {
            path: path.into(),
            format: OutputFormat::Npy,
            header: String::new(),
        }
    }
}

/// Where the footprint of a job goes.
///
/// ```
/// use reproject::io::OutputType;
/// use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// let dir = std::env::temp_dir().join(format!("footprint_request_doc_{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let request = |footprint| OutputRequest {
///     data: FileRequest::npy(dir.join("sky.npy")),
///     dtype: OutputType::F32,
///     footprint,
///     overwrite: true,
/// };
/// // A .npy image has no room for an extension; a file of its own is created beside it.
/// assert!(request(FootprintRequest::Extension).create(&[4, 5]).is_err());
/// let own_file = FootprintRequest::File(FileRequest::npy(dir.join("footprint.npy")));
/// let (image, separate) = request(own_file).create(&[4, 5])?;
/// assert_eq!(separate.expect("a footprint file").shape(), &[4, 5]);
/// # drop(image);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FootprintRequest {
    /// Nowhere.
    None,
    /// An image extension of the (FITS) output, after the data.
    Extension,
    /// A file of its own.
    File(FileRequest),
}

/// The output files of a job: everything about them that changes their bytes, and whether
/// they may replace existing files.
///
/// ```
/// use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// use reproject::io::OutputType;
/// let request = OutputRequest {
///     data: FileRequest::fits("out.fits", ""),
///     dtype: OutputType::F32,
///     footprint: FootprintRequest::Extension,
///     overwrite: false,
/// };
/// assert_eq!(request.data.path, std::path::Path::new("out.fits"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputRequest {
    /// The image file.
    pub data: FileRequest,
    /// The sample type of the image (and of the footprint).
    pub dtype: OutputType,
    /// The footprint.
    pub footprint: FootprintRequest,
    /// Whether the published files may replace existing ones (it changes no byte of them).
    pub overwrite: bool,
}

impl OutputRequest {
    /// Creates the (unpublished) output files for an output of `shape`: the image, and the
    /// separate footprint file if one is asked for.
    ///
    /// ```
    /// use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
    /// use reproject::io::{MappedOutput, OutputType};
    /// let path = std::env::temp_dir().join(format!("request_doc_{}.fits", std::process::id()));
    /// let request = OutputRequest {
    ///     data: FileRequest::fits(&path, "BUNIT   = 'K'"),
    ///     dtype: OutputType::F32,
    ///     footprint: FootprintRequest::Extension,
    ///     overwrite: true,
    /// };
    /// let (image, separate) = request.create(&[4, 5])?;
    /// assert!(separate.is_none());
    /// assert_eq!(image.footprint_dtype(), Some(OutputType::F32));
    /// # drop(image);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn create(&self, shape: &[usize]) -> Result<(MappedOutput, Option<MappedOutput>)> {
        let dtype = self.dtype;
        let file = |f: &FileRequest, extension: bool| match (f.format, extension) {
            (OutputFormat::Npy, false) => {
                MappedOutput::create_npy(&f.path, shape, dtype, self.overwrite)
            }
            (OutputFormat::Npy, true) => Err(Error::InvalidArgument(format!(
                "{}: a .npy output has no room for a footprint extension",
                f.path.display()
            ))),
            (OutputFormat::Fits, false) => {
                MappedOutput::create_fits(&f.path, shape, dtype, &f.header, self.overwrite)
            }
            (OutputFormat::Fits, true) => MappedOutput::create_fits_with_footprint(
                &f.path,
                shape,
                dtype,
                &f.header,
                dtype,
                self.overwrite,
            ),
        };
        let extension = self.footprint == FootprintRequest::Extension;
        let data = file(&self.data, extension)?;
        let footprint = match &self.footprint {
            FootprintRequest::File(f) => Some(file(f, false)?),
            _ => None,
        };
        Ok((data, footprint))
    }
}

/// Where a job is: computing blocks, or publishing its finished files (from then on no block
/// is written again, and an interrupted publication is completed by the next run).
///
/// ```
/// use reproject::processes::{prepare_job, JobState, ProcessJob};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("job_state_doc_{}", std::process::id()));
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
/// assert_eq!(prepared.job.state, JobState::Computing);
/// // The job file says so too, for its workers and for a rerun.
/// assert_eq!(ProcessJob::read(&prepared.job_file)?.state, JobState::Computing);
/// # drop(prepared);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobState {
    /// Blocks are being computed.
    Computing,
    /// Every block is done; the files are being moved onto their final names.
    Publishing,
}

/// The size and modification time of an input file, so that a job is not resumed over an
/// input that changed since it started.
///
/// ```
/// use reproject::processes::FileStamp;
/// let path = std::env::temp_dir().join(format!("file_stamp_doc_{}.npy", std::process::id()));
/// std::fs::write(&path, [0u8; 16]).unwrap();
/// let stamp = FileStamp::of(&path)?;
/// assert_eq!(stamp.len, 16);
/// assert!(stamp.modified_ns > 0);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Size in bytes.
    pub len: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub modified_ns: u128,
}

impl FileStamp {
    /// The stamp of the file at `path`.
    ///
    /// ```
    /// use reproject::processes::FileStamp;
    /// let path = std::env::temp_dir().join(format!("stamp_of_doc_{}.npy", std::process::id()));
    /// std::fs::write(&path, b"first").unwrap();
    /// let before = FileStamp::of(&path)?;
    /// std::fs::write(&path, b"rewritten").unwrap(); // another size (and time)
    /// assert_ne!(FileStamp::of(&path)?, before);
    /// std::fs::remove_file(&path).unwrap();
    /// assert!(FileStamp::of(&path).is_err()); // no file, no stamp
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn of(path: &Path) -> Result<FileStamp> {
        let meta =
            std::fs::metadata(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(FileStamp {
            len: meta.len(),
            modified_ns,
        })
    }

    /// The stamp of a plan's input file.
    ///
    /// ```
    /// use reproject::engine::lazy::InputSpec;
    /// use reproject::processes::FileStamp;
    /// let path = std::env::temp_dir().join(format!("stamp_input_doc_{}.npy", std::process::id()));
    /// ndarray_npy::write_npy(&path, &ndarray::Array2::<f32>::zeros((8, 8))).unwrap();
    /// let stamp = FileStamp::of_input(&InputSpec::Npy { path: path.clone() })?;
    /// assert_eq!(stamp, FileStamp::of(&path)?);
    /// assert!(stamp.len > 8 * 8 * 4); // the samples and the .npy header
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn of_input(input: &InputSpec) -> Result<FileStamp> {
        match input {
            InputSpec::Npy { path } => FileStamp::of(path),
            #[cfg(feature = "fits")]
            InputSpec::Fits { path, .. } => FileStamp::of(path),
        }
    }

    /// The stamps of every input file of a job, in order.
    ///
    /// ```
    /// use reproject::processes::{FileStamp, JobPlan};
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("stamp_inputs_doc_{}", std::process::id()));
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
    /// let stamps = FileStamp::of_inputs(&JobPlan::from(&plan))?;
    /// assert_eq!(stamps, [FileStamp::of(&input)?]); // a reprojection reads one file
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn of_inputs(plan: &JobPlan) -> Result<Vec<FileStamp>> {
        plan.files().into_iter().map(FileStamp::of_input).collect()
    }
}

/// What the workers of a process-parallel run share: the plan, the outputs asked for, where
/// the output files are, the progress file and the job's state.
///
/// ```
/// use reproject::processes::prepare_job;
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # use reproject::io::OutputType;
/// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
/// # let dir = std::env::temp_dir().join(format!("process_job_doc_{}", std::process::id()));
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
/// let job = prepare_job(&plan, &request)?.job;
/// assert_eq!(job.data.shape(), &[40, 30]);
/// assert_eq!(job.blocks, 6); // blocks of 20 × 10
/// assert_eq!(job.progress, dir.join("out.npy.progress"));
/// assert_eq!(job.inputs.len(), 1);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessJob {
    /// The reprojection or mosaic.
    pub plan: JobPlan,
    /// The outputs as asked for.
    pub request: OutputRequest,
    /// The input files when the job started.
    pub inputs: Vec<FileStamp>,
    /// The output image (and its footprint extension, for FITS).
    pub data: OutputLayout,
    /// A separate footprint file, if any.
    pub footprint: Option<OutputLayout>,
    /// The progress file: one state byte per block.
    pub progress: PathBuf,
    /// Number of blocks.
    pub blocks: usize,
    /// Computing or publishing.
    pub state: JobState,
}

impl ProcessJob {
    /// Reads a job file.
    ///
    /// ```
    /// use reproject::processes::{prepare_job, ProcessJob};
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # use reproject::io::OutputType;
    /// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
    /// # let dir = std::env::temp_dir().join(format!("job_read_doc_{}", std::process::id()));
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
    /// assert_eq!(ProcessJob::read(&prepared.job_file)?, prepared.job);
    /// assert!(ProcessJob::read(&input).is_err()); // not a job file
    /// # drop(prepared);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn read(job_file: &Path) -> Result<ProcessJob> {
        let text = std::fs::read_to_string(job_file)
            .map_err(|e| Error::Io(format!("{}: {e}", job_file.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Io(format!("{}: not a job file: {e}", job_file.display())))
    }

    /// Writes the job file so that it is either the old or the new one, whatever happens.
    pub(super) fn write(&self, job_file: &Path) -> Result<()> {
        let text = serde_json::to_string(self)
            .map_err(|e| Error::InvalidArgument(format!("cannot serialise the job: {e}")))?;
        let temporary = sibling(job_file, "tmp");
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", job_file.display()));
        let file = std::fs::File::create(&temporary).map_err(io)?;
        std::io::Write::write_all(&mut &file, text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&temporary, job_file).map_err(io)
    }

    /// The layouts of the job's files.
    ///
    /// ```
    /// use reproject::processes::prepare_job;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # use reproject::io::OutputType;
    /// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
    /// # let dir = std::env::temp_dir().join(format!("job_layouts_doc_{}", std::process::id()));
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
    /// let job = prepare_job(&plan, &request)?.job;
    /// let layouts = job.layouts(); // the image, then the separate footprint file
    /// assert_eq!(layouts.len(), 2);
    /// assert_eq!(layouts[1].path(), dir.join("footprint.npy").as_path());
    /// assert!(layouts.iter().all(|layout| layout.shape() == [40, 30]));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn layouts(&self) -> Vec<&OutputLayout> {
        std::iter::once(&self.data)
            .chain(self.footprint.as_ref())
            .collect()
    }

    /// How a rerun asking for `plan` into `request` over inputs stamped `inputs` differs
    /// from this job, in words; empty if it is the same job.
    ///
    /// ```
    /// use reproject::processes::{prepare_job, JobPlan};
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # use reproject::io::OutputType;
    /// # use reproject::processes::{FileRequest, FootprintRequest, OutputRequest};
    /// # let dir = std::env::temp_dir().join(format!("job_diff_doc_{}", std::process::id()));
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
    /// let job = prepare_job(&plan, &request)?.job;
    /// assert!(job.differences(&JobPlan::from(&plan), &request, &job.inputs).is_empty());
    /// let taller = JobPlan::from(ReprojectPlan { shape_out: vec![50, 30], ..plan.clone() });
    /// assert_eq!(job.differences(&taller, &request, &job.inputs), ["the output shape"]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn differences(
        &self,
        plan: &JobPlan,
        request: &OutputRequest,
        inputs: &[FileStamp],
    ) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |same: bool, what: &str| {
            if !same {
                out.push(what.to_string());
            }
        };
        differ(self.plan.files() == plan.files(), "the input files or HDUs");
        differ(
            self.inputs == inputs,
            "the input files' contents (size or time)",
        );
        match (&self.plan, plan) {
            (JobPlan::Reprojection(a), JobPlan::Reprojection(b)) => {
                differ(a.wcs_in == b.wcs_in, "the input WCS");
                differ(a.wcs_out == b.wcs_out, "the target WCS");
                differ(a.shape_out == b.shape_out, "the output shape");
            }
            (JobPlan::Mosaic(a), JobPlan::Mosaic(b)) => {
                let wcs = |m: &crate::mosaic::plan::MosaicPlan| {
                    m.inputs.iter().map(|i| i.wcs.clone()).collect::<Vec<_>>()
                };
                differ(wcs(a) == wcs(b), "the input WCS");
                differ(a.wcs_out == b.wcs_out, "the target WCS");
                differ(a.shape_out == b.shape_out, "the output shape");
                let combining = |m: &crate::mosaic::plan::MosaicPlan| {
                    let o = &m.options;
                    (
                        o.combine,
                        o.background,
                        o.background_reference,
                        o.blank_pixel_value.to_bits(),
                    )
                };
                differ(
                    combining(a) == combining(b),
                    "the combine and background options",
                );
                differ(a.corrections == b.corrections, "the background corrections");
            }
            _ => differ(false, "the kind of job (a reprojection or a mosaic)"),
        }
        let (a, b) = (self.plan.options(), plan.options());
        differ(a.order == b.order, "the interpolation order");
        // A block size left open takes the one the job started with (see
        // JobPlan::with_choices_of).
        differ(
            b.block_size.is_none() || a.block_size == b.block_size,
            "the block size",
        );
        // A device left to `Auto` takes the one the job started with (its owner's CPU).
        differ(
            b.backend == Backend::Auto || a.backend == b.backend,
            "the device",
        );
        let other_options = |o: &crate::engine::Options| {
            let mut o = o.clone();
            o.order = crate::engine::Options::default().order;
            o.block_size = None;
            o.backend = Backend::Auto;
            o
        };
        differ(other_options(a) == other_options(b), "the other options");
        let (r, s) = (&self.request, request);
        differ(r.dtype == s.dtype, "the output dtype");
        differ(r.data.path == s.data.path, "the output path");
        differ(r.data.format == s.data.format, "the output format");
        differ(
            identity_cards(&r.data.header) == identity_cards(&s.data.header),
            "the output header",
        );
        let footprint = |f: &FootprintRequest| match f {
            FootprintRequest::File(f) => FootprintRequest::File(FileRequest {
                header: identity_cards(&f.header),
                ..f.clone()
            }),
            other => other.clone(),
        };
        differ(
            footprint(&r.footprint) == footprint(&s.footprint),
            "where the footprint goes",
        );
        out
    }
}

/// The header cards that identify a job: all but HISTORY and COMMENT cards (provenance,
/// which names the time of the run).
fn identity_cards(header: &str) -> String {
    header
        .lines()
        .filter(|c| !(c.starts_with("HISTORY") || c.starts_with("COMMENT")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `<path>.<suffix>`.
pub(super) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

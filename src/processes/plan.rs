//! What a process-parallel job computes: a reprojection or a mosaic ([`JobPlan`]), reopened by
//! each worker as an [`OpenedJob`] that lists the blocks and computes any of them.

use ndarray::ArrayViewMut3;
use serde::{Deserialize, Serialize};

use crate::engine::blocks::Block;
use crate::engine::lazy::{InputSpec, ReprojectPlan};
use crate::engine::spline_share::SplinePrep;
use crate::engine::{OutputSample, Plan};
use crate::error::Result;
use crate::gpu::{Backend, Devices};
use crate::mosaic::plan::{MosaicPlan, OpenedMosaic};

/// What a process-parallel job computes.
///
/// ```
/// use reproject::engine::lazy::{InputSpec, ReprojectPlan};
/// use reproject::processes::JobPlan;
/// use reproject::engine::Options;
/// use reproject::wcs::Wcs;
/// let wcs =
///     Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
/// let plan = ReprojectPlan {
///     input: InputSpec::Npy {
///         path: "in.npy".into(),
///     },
///     wcs_in: Some(wcs.clone()),
///     wcs_out: wcs,
///     shape_out: vec![64, 64],
///     options: Options::default(),
/// };
/// let job = JobPlan::from(plan);
/// assert_eq!(job.files().len(), 1);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum JobPlan {
    /// One input reprojected.
    Reprojection(Box<ReprojectPlan>),
    /// Many inputs reprojected and combined, with the background corrections computed once.
    Mosaic(Box<MosaicPlan>),
}

impl From<ReprojectPlan> for JobPlan {
    fn from(plan: ReprojectPlan) -> JobPlan {
        JobPlan::Reprojection(Box::new(plan))
    }
}

impl From<MosaicPlan> for JobPlan {
    fn from(plan: MosaicPlan) -> JobPlan {
        JobPlan::Mosaic(Box::new(plan))
    }
}

impl From<&ReprojectPlan> for JobPlan {
    fn from(plan: &ReprojectPlan) -> JobPlan {
        JobPlan::Reprojection(Box::new(plan.clone()))
    }
}

impl From<&MosaicPlan> for JobPlan {
    fn from(plan: &MosaicPlan) -> JobPlan {
        JobPlan::Mosaic(Box::new(plan.clone()))
    }
}

impl From<&JobPlan> for JobPlan {
    fn from(plan: &JobPlan) -> JobPlan {
        plan.clone()
    }
}

impl JobPlan {
    /// The input files the job reads.
    ///
    /// ```
    /// use reproject::engine::lazy::{InputSpec, ReprojectPlan};
    /// use reproject::engine::Options;
    /// use reproject::processes::JobPlan;
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// let input = InputSpec::Npy { path: "in.npy".into() };
    /// let plan = JobPlan::from(ReprojectPlan { input: input.clone(), wcs_in: Some(wcs.clone()),
    ///     wcs_out: wcs, shape_out: vec![64, 64], options: Options::default() });
    /// assert_eq!(plan.files(), [&input]); // listed, not opened
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn files(&self) -> Vec<&InputSpec> {
        match self {
            JobPlan::Reprojection(p) => vec![&p.input],
            JobPlan::Mosaic(m) => m.files(),
        }
    }

    /// The reprojection options (backend, devices, order, ...).
    ///
    /// ```
    /// use reproject::engine::Options;
    /// use reproject::interp::Order;
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::lazy::{InputSpec, ReprojectPlan};
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// # let plan = |options| JobPlan::from(ReprojectPlan {
    /// #     input: InputSpec::Npy { path: "in.npy".into() },
    /// #     wcs_in: Some(wcs.clone()), wcs_out: wcs.clone(), shape_out: vec![64, 64], options });
    /// // `plan(options)`: a reprojection of "in.npy" with these options.
    /// let bicubic = plan(Options { order: Order::Bicubic, ..Options::default() });
    /// assert_eq!(bicubic.options().order, Order::Bicubic);
    /// assert_eq!(bicubic.options().block_size, None); // left to the plan
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn options(&self) -> &crate::engine::Options {
        match self {
            JobPlan::Reprojection(p) => &p.options,
            JobPlan::Mosaic(m) => &m.options.reprojection,
        }
    }

    /// The reprojection options, to change.
    fn options_mut(&mut self) -> &mut crate::engine::Options {
        match self {
            JobPlan::Reprojection(p) => &mut p.options,
            JobPlan::Mosaic(m) => &mut m.options.reprojection,
        }
    }

    /// The same job computed on GPU `ordinal` (a worker given its own GPU).
    ///
    /// ```
    /// use reproject::engine::Options;
    /// use reproject::gpu::Devices;
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::lazy::{InputSpec, ReprojectPlan};
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n")?;
    /// # let plan = |options| JobPlan::from(ReprojectPlan {
    /// #     input: InputSpec::Npy { path: "in.npy".into() },
    /// #     wcs_in: Some(wcs.clone()), wcs_out: wcs.clone(), shape_out: vec![64, 64], options });
    /// let job = plan(Options::default()); // a reprojection of "in.npy"
    /// assert_eq!(job.options().devices, Devices::First);
    /// let worker = job.on_device(1); // no GPU needed to say so
    /// assert_eq!(worker.options().devices, Devices::Ordinal(1));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn on_device(mut self, ordinal: usize) -> JobPlan {
        self.options_mut().devices = Devices::Ordinal(ordinal);
        self
    }

    /// This job with what its open plan (`opened`) chose written into its options, where they
    /// leave it open, so that the owner and every worker cut and compute the output alike:
    /// - the block shape: a reprojection's blocks are those of the device its plan chooses
    ///   ([`Plan::block_shape`]), and a worker's plan (on a GPU of its own, or without one)
    ///   may choose another. An `Auto` job worth a GPU gets the GPU's blocks
    ///   ([`Plan::gpu_block_shape`]) even where this machine would compute it on the CPU (it
    ///   has no GPU, or its kernels are still compiling): its workers may run where there
    ///   are GPUs, which lose much time on the CPU's small blocks (one launch and two copies
    ///   each), while a CPU worker computes its blocks one at a time, whatever their shape
    ///   (6144² bilinear and bicubic, 2 worker processes on the development machine: the
    ///   same times with 128² and 1024 × 2048 blocks);
    /// - the device of an `Auto` job too small to be worth any GPU ([`OpenedJob::worth_a_gpu`]:
    ///   a reprojection, or every input of a mosaic): `Cpu`, so that its workers are as many
    ///   as asked, all on the CPU, on whatever machine they run ([`super::worker_gpus`]). Any
    ///   other stays `Auto`, and each worker decides for itself where it computes (a worker per
    ///   GPU where the owner sees GPUs; the workers of a job prepared where there is none, for
    ///   a scheduler to run elsewhere, may use the GPUs they find).
    ///
    /// A mosaic's blocks never depend on the device: its block size is left as it is.
    ///
    /// ```
    /// use reproject::engine::lazy::{InputSpec, ReprojectPlan};
    /// use reproject::engine::{Backend, Options};
    /// use reproject::processes::JobPlan;
    /// use reproject::wcs::Wcs;
    /// let input = std::env::temp_dir().join(format!("choices_of_{}.npy", std::process::id()));
    /// ndarray_npy::write_npy(&input, &ndarray::Array2::<f64>::ones((32, 32))).unwrap();
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let job = JobPlan::from(ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
    ///     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![300, 200],
    ///     options: Options { backend: Backend::Auto, ..Options::default() } });
    /// let pinned = job.with_choices_of(&job.open()?);
    /// assert!(pinned.options().block_size.is_some());
    /// assert_eq!(pinned.options().backend, Backend::Cpu); // too small for a GPU
    /// assert_eq!(pinned.open()?.blocks(), job.open()?.blocks());
    /// # std::fs::remove_file(input).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn with_choices_of(&self, opened: &OpenedJob) -> JobPlan {
        let mut pinned = self.clone();
        if let (JobPlan::Reprojection(p), OpenedJob::Reprojection(open)) = (&mut pinned, opened)
            && p.options.block_size.is_none()
        {
            let for_a_gpu = p.options.backend == Backend::Auto && open.worth_a_gpu();
            p.options.block_size = Some(if for_a_gpu {
                open.gpu_block_shape()
            } else {
                open.block_shape()
            });
        }
        let options = pinned.options_mut();
        if options.backend == Backend::Auto && !opened.worth_a_gpu() {
            options.backend = Backend::Cpu;
        }
        pinned
    }

    /// Opens the inputs and prepares the job.
    ///
    /// ```
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("job_open_doc_{}", std::process::id()));
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
    /// let job = JobPlan::from(&plan);
    /// let opened = job.open()?;
    /// assert_eq!(opened.blocks().len(), 6); // 40 × 30 in blocks of 20 × 10
    /// std::fs::remove_file(&input).unwrap();
    /// assert!(job.open().is_err()); // the input is read when the job is opened
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn open(&self) -> Result<OpenedJob> {
        self.open_with(SplinePrep::Usual)
    }

    /// Opens the inputs and prepares the job, the spline coefficients as `splines` says.
    pub(crate) fn open_with(&self, splines: SplinePrep<'_>) -> Result<OpenedJob> {
        Ok(match self {
            JobPlan::Reprojection(p) => OpenedJob::Reprojection(Box::new(p.open_with(splines)?)),
            JobPlan::Mosaic(m) => OpenedJob::Mosaic(Box::new(m.open_with(splines)?)),
        })
    }
}

/// A [`JobPlan`] with its inputs open.
///
/// ```
/// use reproject::processes::{JobPlan, OpenedJob};
/// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
/// # let dir = std::env::temp_dir().join(format!("opened_job_doc_{}", std::process::id()));
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
/// let opened = JobPlan::from(&plan).open()?;
/// let OpenedJob::Reprojection(engine_plan) = &opened else { panic!("a reprojection") };
/// assert_eq!(engine_plan.options().block_size, Some((20, 10)));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
pub enum OpenedJob {
    /// A reprojection's plan.
    Reprojection(Box<Plan<'static>>),
    /// A mosaic's inputs.
    Mosaic(Box<OpenedMosaic>),
}

impl OpenedJob {
    /// The blocks the workers share, in order.
    ///
    /// ```
    /// use reproject::engine::blocks::Block;
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("opened_blocks_doc_{}", std::process::id()));
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
    /// let blocks = JobPlan::from(&plan).open()?.blocks(); // 40 × 30 in blocks of 20 × 10
    /// assert_eq!(blocks.len(), 6);
    /// assert_eq!(blocks[1], Block { rows: 0..20, cols: 10..20 }); // in row-major order
    /// assert_eq!(blocks[5], Block { rows: 20..40, cols: 20..30 });
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn blocks(&self) -> Vec<Block> {
        match self {
            OpenedJob::Reprojection(p) => p.blocks(),
            OpenedJob::Mosaic(m) => m.blocks(),
        }
    }

    /// Whether the job is worth a GPU at all, whatever this machine has: a reprojection's
    /// plan ([`Plan::worth_a_gpu`]), or the plan of any input (or weights) of a mosaic.
    ///
    /// ```
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("opened_worth_doc_{}", std::process::id()));
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
    /// let opened = JobPlan::from(&plan).open()?;
    /// assert!(!opened.worth_a_gpu()); // 40 × 30 pixels: quicker on the CPU, on any machine
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn worth_a_gpu(&self) -> bool {
        match self {
            OpenedJob::Reprojection(p) => p.worth_a_gpu(),
            OpenedJob::Mosaic(m) => m.worth_a_gpu(),
        }
    }

    /// The full output shape.
    ///
    /// ```
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("opened_shape_doc_{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let input = dir.join("in.npy");
    /// # ndarray_npy::write_npy(&input, &ndarray::Array3::<f64>::ones((2, 32, 32))).unwrap();
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    /// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// # )?;
    /// # let options =
    /// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
    /// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
    /// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
    /// // An input of two 32 × 32 planes, reprojected to the plan's `shape_out` of 40 × 30.
    /// let opened = JobPlan::from(&plan).open()?;
    /// assert_eq!(opened.shape_out(), &[2, 40, 30]); // the input's planes lead
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn shape_out(&self) -> &[usize] {
        match self {
            OpenedJob::Reprojection(p) => p.shape_out(),
            OpenedJob::Mosaic(m) => m.shape_out(),
        }
    }

    /// Number of output planes.
    ///
    /// ```
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("opened_planes_doc_{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let input = dir.join("in.npy");
    /// # ndarray_npy::write_npy(&input, &ndarray::Array3::<f64>::ones((2, 32, 32))).unwrap();
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    /// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// # )?;
    /// # let options =
    /// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
    /// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
    /// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
    /// // An input of two 32 × 32 planes, reprojected to 40 × 30.
    /// let opened = JobPlan::from(&plan).open()?;
    /// assert_eq!(opened.planes(), 2);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn planes(&self) -> usize {
        match self {
            OpenedJob::Reprojection(p) => p.planes(),
            OpenedJob::Mosaic(m) => m.planes(),
        }
    }

    /// (rows, columns) of an output plane.
    ///
    /// ```
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("plane_shape_doc_{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let input = dir.join("in.npy");
    /// # ndarray_npy::write_npy(&input, &ndarray::Array3::<f64>::ones((2, 32, 32))).unwrap();
    /// # let wcs = reproject::wcs::Wcs::from_header_str(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    /// #      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// # )?;
    /// # let options =
    /// #     Options { block_size: Some((20, 10)), backend: Backend::Cpu, ..Options::default() };
    /// # let plan = ReprojectPlan { input: InputSpec::Npy { path: input.clone() },
    /// #     wcs_in: Some(wcs.clone()), wcs_out: wcs, shape_out: vec![40, 30], options };
    /// // An input of two 32 × 32 planes, reprojected to 40 × 30.
    /// let opened = JobPlan::from(&plan).open()?;
    /// assert_eq!(opened.plane_shape_out(), (40, 30));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn plane_shape_out(&self) -> (usize, usize) {
        match self {
            OpenedJob::Reprojection(p) => p.plane_shape_out(),
            OpenedJob::Mosaic(m) => m.plane_shape_out(),
        }
    }

    /// Computes `block` of every plane into `data` and `footprint` (planes × block rows ×
    /// block columns). A mosaic computes in float64 and rounds once into `T`.
    ///
    /// ```
    /// use ndarray::Array3;
    /// use reproject::processes::JobPlan;
    /// # use reproject::engine::{lazy::{InputSpec, ReprojectPlan}, Backend, Options};
    /// # let dir = std::env::temp_dir().join(format!("opened_compute_doc_{}", std::process::id()));
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
    /// let opened = JobPlan::from(&plan).open()?;
    /// let block = &opened.blocks()[0]; // rows 0..20, columns 0..10
    /// let mut data = Array3::<f32>::zeros((1, 20, 10));
    /// let mut footprint = Array3::<f32>::zeros((1, 20, 10));
    /// opened.compute_block(block, data.view_mut(), footprint.view_mut())?;
    /// // The same WCS in and out: the input (all ones) again, every pixel inside it.
    /// assert!(data.iter().all(|&v| (v - 1.0).abs() < 1e-6));
    /// assert!(footprint.iter().all(|&f| f == 1.0));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn compute_block<T: OutputSample>(
        &self,
        block: &Block,
        data: ArrayViewMut3<T>,
        footprint: ArrayViewMut3<T>,
    ) -> Result<()> {
        match self {
            OpenedJob::Reprojection(p) => p.compute_block(block, data, footprint),
            OpenedJob::Mosaic(m) => m.compute_block(block, data, footprint),
        }
    }
}

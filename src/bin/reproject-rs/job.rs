//! The `reproject` command: input image + target header → memory-mapped FITS output (image,
//! footprint) with the target's header and provenance HISTORY cards, and an optional PNG
//! preview.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ndarray::ArrayViewMut3;
use rayon::prelude::*;
use reproject::engine::lazy::{InputSpec, ReprojectPlan};
use reproject::engine::schedule::{self, Schedule};
use reproject::engine::{Options, OutputSample, Parallel, Plan};
use reproject::interp::Order;
use reproject::io::{
    FitsSource, ImageSource, MappedOutput, NpySource, OutputElement, OutputType, PendingFile,
};
use reproject::processes::{
    missing_blocks, prepare_job, run_processes, FileRequest, FootprintRequest, JobPlan,
    OutputRequest, WorkerCommand,
};
use reproject::wcs::header::Header;
use reproject::wcs::Wcs;

use crate::header::{self, card_str, history};
use crate::preview::{self, PreviewInfo};
use crate::progress::Progress;
use crate::CliResult;

/// One reprojection, as the command line describes it.
#[derive(Debug, Clone)]
pub struct Job {
    pub input: PathBuf,
    pub hdu: usize,
    pub wcs: Option<PathBuf>,
    pub target: PathBuf,
    pub target_hdu: usize,
    pub output: PathBuf,
    pub footprint: Option<PathBuf>,
    pub png: Option<PathBuf>,
    pub order: Order,
    pub block_size: Option<(usize, usize)>,
    pub parallel: Parallel,
    /// CPU or GPU, and which GPUs (`--device`).
    pub device: (reproject::gpu::Backend, reproject::gpu::Devices),
    pub dtype: OutputType,
    pub overwrite: bool,
    pub quiet: bool,
    /// Worker processes (`--processes`), if any.
    pub processes: Option<usize>,
    /// Only prepare the multi-process job (`--plan-only`).
    pub plan_only: bool,
}

/// What a reprojection did.
#[derive(Debug, Clone)]
pub struct Report {
    /// Output shape (leading dimensions, rows, columns).
    pub shape: Vec<usize>,
    /// Blocks computed and threads used.
    pub blocks: usize,
    pub threads: usize,
    /// Where the blocks were computed (`cpu`, `cuda:0`, ...).
    pub device: String,
    /// Fraction of output pixels inside the footprint.
    pub coverage: f64,
    /// Opening the inputs and preparing the plan (spline coefficients included).
    pub t_prepare: Duration,
    /// Computing the blocks.
    pub t_compute: Duration,
    /// Rendering the PNG preview.
    pub t_png: Duration,
    /// Publishing the files (byte swap, flush, rename).
    pub t_write: Duration,
    /// The preview, if one was written.
    pub png: Option<PreviewInfo>,
    /// Whether the outputs were published (not for `--plan-only`).
    pub published: bool,
}

impl Report {
    /// Total wall time.
    pub fn total(&self) -> Duration {
        self.t_prepare + self.t_compute + self.t_png + self.t_write
    }

    /// One line describing the output.
    pub fn summary(&self, job: &Job) -> String {
        let n = self.shape.len();
        let mut shape = format!("{} x {}", self.shape[n - 1], self.shape[n - 2]);
        for d in self.shape[..n - 2].iter().rev() {
            shape.push_str(&format!(" x {d}"));
        }
        let dtype = match job.dtype {
            OutputType::F32 => "f32",
            OutputType::F64 => "f64",
        };
        let footprint = match &job.footprint {
            Some(p) => format!("footprint in {}", p.display()),
            None => "footprint in HDU 1".to_string(),
        };
        let png = match &job.png {
            Some(p) => format!(", preview {}", p.display()),
            None => String::new(),
        };
        let coverage = if self.coverage.is_nan() {
            "coverage unknown".to_string()
        } else {
            format!("coverage {:.1}%", 100.0 * self.coverage)
        };
        let workers = match job.processes {
            Some(_) => format!("{} worker process(es)", self.threads),
            None => format!("{} thread(s)", self.threads),
        };
        let workers = match self.device.as_str() {
            "" | "cpu" => workers,
            device => format!("{workers} ({device})"),
        };
        // A run that resumes a job whose blocks earlier workers computed starts none.
        let computed = if job.processes.is_some() && self.blocks == 0 {
            "no block left to compute (earlier workers computed them all)".to_string()
        } else {
            format!("{} block(s) computed on {workers}", self.blocks)
        };
        format!(
            "wrote {} ({shape} {dtype}, {footprint}{png}): {coverage}, {computed}, {:.2} s \
             (prepare {:.2} s, reproject {:.2} s, write {:.2} s)",
            job.output.display(),
            self.total().as_secs_f64(),
            self.t_prepare.as_secs_f64(),
            self.t_compute.as_secs_f64(),
            (self.t_write + self.t_png).as_secs_f64(),
        )
    }
}

/// Whether a file starts like a FITS file (or a gzipped one, which CFITSIO reads).
pub fn is_fits(path: &Path) -> bool {
    let mut magic = [0u8; 9];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"SIMPLE  =" || magic[..2] == [0x1f, 0x8b])
}

/// Whether a file starts like a `.npy` file.
fn is_npy(path: &Path) -> bool {
    let mut magic = [0u8; 6];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"\x93NUMPY")
}

/// An error unless `path` is an existing file.
pub fn must_exist(path: &Path, what: &str) -> CliResult<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(format!("{what} {} is a directory", path.display())),
        Ok(_) => Ok(()),
        Err(_) => Err(format!("{what} {} does not exist", path.display())),
    }
}

/// An error if `path` exists and `overwrite` is off.
pub fn may_write(path: &Path, overwrite: bool) -> CliResult<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Err(format!("output {} is a directory", path.display())),
        Ok(_) if !overwrite => Err(format!(
            "output {} already exists; pass --overwrite to replace it",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// The message for a failure to write `path`, in the command line's words (`--overwrite`,
/// not the library's `overwrite` argument).
pub fn output_error(path: &Path, e: reproject::Error) -> String {
    match e {
        reproject::Error::OutputExists(m) => format!("{m}; pass --overwrite to replace it"),
        reproject::Error::OutputBusy(m) => m,
        e => format!("cannot write {}: {e}", path.display()),
    }
}

/// The header text of a FITS HDU or a header text file.
pub fn read_header(path: &Path, hdu: usize, what: &str) -> CliResult<String> {
    must_exist(path, what)?;
    if is_fits(path) {
        return match FitsSource::open(path, hdu) {
            Ok(src) => Ok(src.header_text().to_string()),
            // Not a FITS file after all, though it starts like one: a header saved as text
            // (astropy's `Header.tostring` or `totextfile` of a primary HDU), or an image's
            // header without its data. Its text is all a header needs.
            Err(e) => match (hdu, header_text_file(path, what)) {
                (0, Ok(text)) => Ok(text),
                _ => Err(format!("{what}: {e}")),
            },
        };
    }
    header_text_file(path, what)
}

/// The text of a header text file: cards on lines of their own, or 80-character cards back
/// to back.
fn header_text_file(path: &Path, what: &str) -> CliResult<String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{what} {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        format!(
            "{what} {} is neither a FITS file nor a header text file",
            path.display()
        )
    })?;
    if !header::cards(&text)
        .iter()
        .any(|c| c.starts_with("CTYPE") || c.starts_with("NAXIS"))
    {
        return Err(format!(
            "{what} {} is not a FITS header: no CTYPE or NAXIS card",
            path.display()
        ));
    }
    Ok(text)
}

/// NAXIS1 and NAXIS2 of header text, as (rows, columns).
pub fn plane_shape(text: &str, path: &Path) -> CliResult<(usize, usize)> {
    let what = || format!("target header {}", path.display());
    let header = Header::parse(text).map_err(|e| format!("{}: {e}", what()))?;
    let axis = |i: usize| -> CliResult<usize> {
        match header.int(&format!("NAXIS{i}")) {
            Ok(Some(n)) if n > 0 => Ok(n as usize),
            Ok(Some(n)) => Err(format!("{}: NAXIS{i} = {n} is not a positive size", what())),
            Ok(None) => Err(format!(
                "{}: no NAXIS{i} card, so the output shape is unknown",
                what()
            )),
            Err(e) => Err(format!("{}: {e}", what())),
        }
    };
    Ok((axis(2)?, axis(1)?))
}

/// Keywords of the target that describe its data rather than its WCS, left out of the output.
const TARGET_DATA_KEYS: [&str; 7] = [
    "BUNIT", "DATAMIN", "DATAMAX", "EXTNAME", "EXTVER", "EXTLEVEL", "INHERIT",
];

/// Whether `key` is a WCS keyword of axis 3 or above (CTYPE3, CRVAL3, PC3_3, ...).
fn leading_axis_key(key: &str) -> bool {
    for prefix in [
        "CTYPE", "CUNIT", "CRVAL", "CDELT", "CRPIX", "CNAME", "CROTA",
    ] {
        if let Some(n) = key.strip_prefix(prefix) {
            return n.parse::<usize>().is_ok_and(|n| n >= 3);
        }
    }
    for prefix in ["PC", "CD", "PV"] {
        if let Some((i, j)) = key.strip_prefix(prefix).and_then(|r| r.split_once('_')) {
            let (i, j) = (i.parse::<usize>(), j.parse::<usize>());
            return match (prefix, i, j) {
                ("PV", Ok(i), Ok(_)) => i >= 3,
                (_, Ok(i), Ok(j)) => i >= 3 && j >= 3,
                _ => false,
            };
        }
    }
    false
}

/// The output header: the target's cards (less its data keywords), the input's BUNIT, the
/// input's WCS of the axes beyond the celestial pair for cubes, and `provenance`.
pub fn output_header(
    target: &str,
    input: Option<&str>,
    ndim: usize,
    provenance: &[String],
) -> Vec<String> {
    let target_cards = header::cards(target);
    let mut out: Vec<String> = target_cards
        .iter()
        .filter(|c| !TARGET_DATA_KEYS.contains(&header::keyword(c)))
        .cloned()
        .collect();
    let input_cards = input.map(header::cards).unwrap_or_default();
    if let Some(bunit) = input_cards.iter().find(|c| header::keyword(c) == "BUNIT") {
        out.push(bunit.clone());
    }
    let target_has_leading = target_cards
        .iter()
        .any(|c| leading_axis_key(header::keyword(c)));
    if ndim > 2 && !target_has_leading {
        let extra: Vec<String> = input_cards
            .iter()
            .filter(|c| leading_axis_key(header::keyword(c)))
            .cloned()
            .collect();
        if !extra.is_empty() {
            for c in out.iter_mut() {
                if header::keyword(c) == "WCSAXES" {
                    *c = header::card("WCSAXES", ndim, "");
                }
            }
            // A CD matrix for the celestial axes excludes CDELT for the others.
            let uses_cd = out.iter().any(|c| header::keyword(c).starts_with("CD1_"));
            out.extend(extra.iter().cloned());
            if uses_cd {
                for c in &extra {
                    if let Some(n) = header::keyword(c).strip_prefix("CDELT") {
                        let value = c.get(10..).unwrap_or("").split('/').next().unwrap_or("");
                        out.push(header::card(&format!("CD{n}_{n}"), value.trim(), ""));
                    }
                }
            }
        }
    }
    out.extend(provenance.iter().cloned());
    out
}

/// The provenance HISTORY cards of a job.
fn provenance(job: &Job) -> Vec<String> {
    let dtype = match job.dtype {
        OutputType::F32 => "float32",
        OutputType::F64 => "float64",
    };
    let mut lines = vec![
        format!(
            "reproject-rs {} reproject_interp: order={}, roundtrip_coords=True, dtype={dtype}",
            env!("CARGO_PKG_VERSION"),
            job.order
        ),
        format!("input: {} (HDU {})", job.input.display(), job.hdu),
    ];
    if let Some(w) = &job.wcs {
        lines.push(format!("input WCS: {}", w.display()));
    }
    if is_fits(&job.target) {
        lines.push(format!(
            "target: {} (HDU {})",
            job.target.display(),
            job.target_hdu
        ));
    } else {
        lines.push(format!("target: {}", job.target.display()));
    }
    lines.push(format!("date: {} UTC", header::utc_now()));
    lines.iter().flat_map(|l| history(l)).collect()
}

/// Runs a job.
pub fn run(job: &Job) -> CliResult<Report> {
    let start = Instant::now();
    must_exist(&job.input, "input")?;
    must_exist(&job.target, "target")?;
    if let Some(w) = &job.wcs {
        must_exist(w, "WCS header")?;
    }
    let mut outputs = vec![&job.output];
    outputs.extend(job.footprint.iter());
    outputs.extend(job.png.iter());
    for (i, p) in outputs.iter().enumerate() {
        may_write(p, job.overwrite)?;
        if outputs[..i].contains(p) {
            return Err(format!("{} is given as two different outputs", p.display()));
        }
    }

    // The input and its WCS.
    // A FITS input's header, and its WCS (with the lookup tables it names, from the file).
    type FitsWcs = (String, reproject::Result<Wcs>);
    let (source, input_header): (Box<dyn ImageSource>, Option<FitsWcs>) = if is_npy(&job.input) {
        let src = NpySource::open(&job.input).map_err(|e| format!("input: {e}"))?;
        (Box::new(src), None)
    } else if is_fits(&job.input) {
        let src = FitsSource::open(&job.input, job.hdu).map_err(|e| format!("input: {e}"))?;
        let text = src.header_text().to_string();
        let wcs = src.wcs();
        (Box::new(src), Some((text, wcs)))
    } else {
        return Err(format!(
            "input {} is neither a FITS file nor a .npy file",
            job.input.display()
        ));
    };
    let (wcs_in, wcs_text) = match (&job.wcs, &input_header) {
        (Some(path), _) => {
            let text = read_header(path, 0, "input WCS header")?;
            let wcs = Wcs::from_header_str(&text)
                .map_err(|e| format!("input WCS header {}: {e}", path.display()))?;
            (wcs, Some(text))
        }
        (None, Some((_, wcs))) => {
            let wcs = wcs
                .clone()
                .map_err(|e| format!("input {}: bad WCS: {e}", job.input.display()))?;
            (wcs, None)
        }
        (None, None) => {
            return Err(format!(
                "input {} is a .npy array without a WCS: pass --wcs HEADER (a header text \
                 file or a FITS file)",
                job.input.display()
            ))
        }
    };

    // The target.
    let target_text = read_header(&job.target, job.target_hdu, "target")?;
    let wcs_out = Wcs::from_header_str(&target_text)
        .map_err(|e| format!("target header {}: {e}", job.target.display()))?;
    let (ny, nx) = plane_shape(&target_text, &job.target)?;

    let options = Options {
        order: job.order,
        block_size: job.block_size,
        parallel: job.parallel,
        backend: job.device.0,
        devices: job.device.1,
        ..Options::default()
    };
    let plan = Plan::new(&*source, &wcs_in, &wcs_out, &[ny, nx], &options)
        .map_err(|e| format!("cannot reproject {}: {e}", job.input.display()))?;
    let shape = plan.shape_out().to_vec();

    let input_cards = wcs_text
        .as_deref()
        .or(input_header.as_ref().map(|(text, _)| text.as_str()));
    let cards = output_header(&target_text, input_cards, shape.len(), &provenance(job));
    let header_text = cards.join("\n");
    let t_prepare = start.elapsed();
    if let Some(workers) = job.processes {
        return with_processes(
            job,
            workers,
            &plan,
            &wcs_in,
            &wcs_out,
            &header_text,
            t_prepare,
        );
    }
    // `write` computes into output files it creates (sparse until written): fresh memory,
    // whose first writes fault its pages in (`Plan::with_fresh_outputs`).
    let elem = match job.dtype {
        OutputType::F32 => 4,
        OutputType::F64 => 8,
    };
    let plan = plan.with_fresh_outputs((2 * shape.iter().product::<usize>() * elem) as u64);
    match job.dtype {
        OutputType::F32 => write::<f32>(job, &plan, &shape, &header_text, t_prepare),
        OutputType::F64 => write::<f64>(job, &plan, &shape, &header_text, t_prepare),
    }
}

/// The output files of `job`: the image with its footprint in HDU 1, or the image and a
/// separate footprint file.
fn output_request(job: &Job, header_text: &str) -> OutputRequest {
    OutputRequest {
        data: FileRequest::fits(&job.output, header_text),
        dtype: job.dtype,
        footprint: match &job.footprint {
            None => FootprintRequest::Extension,
            Some(fp) => {
                FootprintRequest::File(FileRequest::fits(fp, &footprint_header(job, header_text)))
            }
        },
        overwrite: job.overwrite,
    }
}

/// The header of a separate footprint file: the output's, without a unit.
fn footprint_header(job: &Job, header_text: &str) -> String {
    let mut fp_header: String = header_text
        .lines()
        .filter(|c| header::keyword(c) != "BUNIT")
        .collect::<Vec<_>>()
        .join("\n");
    fp_header.push('\n');
    fp_header.push_str(&card_str("EXTNAME", "FOOTPRINT", ""));
    for c in history(&format!("footprint of {}", job.output.display())) {
        fp_header.push('\n');
        fp_header.push_str(&c);
    }
    fp_header
}

/// `--processes N`: the blocks are computed by N worker processes of this program
/// (`reproject-rs worker`), each with one thread, into one memory-mapped output.
fn with_processes(
    job: &Job,
    workers: usize,
    plan: &Plan,
    wcs_in: &Wcs,
    wcs_out: &Wcs,
    header_text: &str,
    t_prepare: Duration,
) -> CliResult<Report> {
    let input = std::fs::canonicalize(&job.input).map_err(|e| format!("input: {e}"))?;
    let input = if is_npy(&input) {
        InputSpec::Npy { path: input }
    } else {
        InputSpec::Fits {
            path: input,
            hdu: job.hdu,
        }
    };
    let shape = plan.shape_out().to_vec();
    let spec = JobPlan::from(ReprojectPlan {
        input,
        wcs_in: Some(wcs_in.clone()),
        wcs_out: wcs_out.clone(),
        shape_out: shape.clone(),
        options: Options {
            parallel: Parallel::Serial,
            ..plan.options().clone()
        },
    });
    let request = output_request(job, header_text);
    let out_err = |e: reproject::Error| output_error(&job.output, e);
    if job.plan_only {
        let prepared = prepare_job(&spec, &request).map_err(out_err)?;
        let missing = missing_blocks(&prepared.job).map_err(out_err)?.len();
        // The job's blocks, which need not be this machine's: a job worth a GPU prepared
        // where none is keeps the GPU's blocks for its workers.
        let blocks = prepared.job.blocks;
        let job_file = prepared.job_file.display();
        if !job.quiet {
            println!(
                "{} {job_file}: {missing} of {blocks} blocks to compute. Run `reproject-rs \
                 worker --job {job_file} --blocks A..B` (or --share K/N) for every part, then \
                 this command again without --plan-only to publish {}.",
                if prepared.resumed {
                    "found the job"
                } else {
                    "prepared the job"
                },
                job.output.display()
            );
        }
        return Ok(Report {
            shape,
            blocks: 0,
            threads: 0,
            device: String::new(),
            coverage: f64::NAN,
            t_prepare,
            t_compute: Duration::ZERO,
            t_png: Duration::ZERO,
            t_write: Duration::ZERO,
            png: None,
            published: false,
        });
    }
    let program = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let command = WorkerCommand {
        program,
        args: vec!["worker".into()],
    };
    let t = Instant::now();
    // Counted in the job's blocks (see above), which the first report gives.
    let bar = Progress::new(0, "reprojecting", job.quiet);
    let mut on_progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set(done as u64);
    };
    let run =
        run_processes(&spec, &request, workers, &command, &mut on_progress).map_err(out_err)?;
    bar.finish();
    let t_compute = t.elapsed();
    Ok(Report {
        shape: shape.clone(),
        blocks: run.blocks_computed,
        threads: run.workers,
        device: match &run.gpus {
            Some(gpus) => format!(
                "cuda:{}",
                gpus.iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => "cpu".into(),
        },
        coverage: published_coverage(job, plan).unwrap_or(f64::NAN),
        t_prepare,
        t_compute,
        t_png: Duration::ZERO,
        t_write: Duration::ZERO,
        png: None,
        published: true,
    })
}

/// The fraction of output pixels inside the published footprint, if it can be read (it is
/// only reported: the outputs are published already).
fn published_coverage(job: &Job, plan: &Plan) -> Option<f64> {
    let (fp_path, fp_hdu) = match &job.footprint {
        Some(p) => (p.clone(), 0),
        None => (job.output.clone(), 1),
    };
    let fp = FitsSource::open(&fp_path, fp_hdu).ok()?;
    let (ny, nx) = plan.plane_shape_out();
    let mut row = vec![0.0; nx];
    let mut covered = 0.0;
    for plane in 0..plan.planes() {
        for r in 0..ny {
            fp.read_window(plane, r..r + 1, 0..nx, &mut row).ok()?;
            covered += row.iter().sum::<f64>();
        }
    }
    Some(covered / (plan.shape_out().iter().product::<usize>().max(1)) as f64)
}

/// Creates the output file(s), computes every block into them and publishes them (with the
/// preview) together.
fn write<T>(
    job: &Job,
    plan: &Plan,
    shape: &[usize],
    header_text: &str,
    t_prepare: Duration,
) -> CliResult<Report>
where
    T: OutputSample + OutputElement + Into<f64>,
{
    let out_err = |e: reproject::Error| output_error(&job.output, e);
    let (mut main, mut foot) = output_request(job, header_text)
        .create(shape)
        .map_err(out_err)?;

    let t = Instant::now();
    let (data, footprint): (&mut [T], &mut [T]) = match foot.as_mut() {
        None => main.data_and_footprint_mut::<T, T>().map_err(out_err)?,
        Some(f) => (
            main.data_mut::<T>().map_err(out_err)?,
            f.data_mut::<T>().map_err(out_err)?,
        ),
    };
    let blocks = compute(plan, data, footprint, job.quiet)?;
    let t_compute = t.elapsed();
    let covered: f64 = footprint.par_iter().map(|&v| v.into()).sum();
    let coverage = covered / footprint.len().max(1) as f64;

    let t = Instant::now();
    let (png, preview) = match &job.png {
        None => (None, None),
        Some(path) => {
            let (ny, nx) = plan.plane_shape_out();
            let n = ny * nx;
            let (bytes, info) = preview::encode_png(&data[..n], Some(&footprint[..n]), ny, nx)?;
            let file = PendingFile::write(path, &bytes, job.overwrite)
                .map_err(|e| output_error(path, e))?;
            (Some(info), Some(file))
        }
    };
    let t_png = t.elapsed();

    let t = Instant::now();
    let outputs: Vec<MappedOutput> = std::iter::once(main).chain(foot).collect();
    MappedOutput::finish_together(outputs, preview.into_iter().collect()).map_err(out_err)?;
    let t_write = t.elapsed();
    Ok(Report {
        shape: shape.to_vec(),
        blocks,
        threads: plan.options().parallel.threads(),
        device: plan.executor().map(|e| e.name()).unwrap_or_default(),
        coverage,
        t_prepare,
        t_compute,
        t_png,
        t_write,
        png,
        published: true,
    })
}

/// Computes every block of `plan` into `data` and `footprint` (full output shape, C order)
/// with the library's scheduler (the plan's executor and threads), with a progress bar;
/// returns the number of blocks.
pub fn compute<T: OutputSample>(
    plan: &Plan,
    data: &mut [T],
    footprint: &mut [T],
    quiet: bool,
) -> CliResult<usize> {
    let (ny, nx) = plan.plane_shape_out();
    let shape = (plan.planes(), ny, nx);
    let data = ArrayViewMut3::from_shape(shape, data).map_err(|e| e.to_string())?;
    let footprint = ArrayViewMut3::from_shape(shape, footprint).map_err(|e| e.to_string())?;
    let (by, bx) = plan.block_shape();
    let count = ny.div_ceil(by) * nx.div_ceil(bx);
    let progress = Progress::new(count as u64, "reprojecting", quiet);
    let tick = |_: usize| progress.inc(1);
    let schedule = Schedule {
        progress: Some(&tick),
        ..Schedule::default()
    };
    let result = schedule::run(plan, data, footprint, &schedule);
    progress.finish();
    result.map_err(|e| match e {
        reproject::Error::InvalidArgument(m) if m.contains("block_size") => {
            format!(
                "reprojection failed: {}",
                m.replace("block_size", "--block-size")
            )
        }
        e => format!("reprojection failed: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_axis_keys() {
        for k in ["CTYPE3", "CRVAL4", "PC3_3", "CD4_3", "PV3_1", "CDELT3"] {
            assert!(leading_axis_key(k), "{k}");
        }
        for k in [
            "CTYPE1", "CRVAL2", "PC1_3", "CD2_2", "PV2_1", "CTYPE", "PC3",
        ] {
            assert!(!leading_axis_key(k), "{k}");
        }
    }

    #[test]
    fn output_header_cards() {
        let target = "NAXIS   = 2\nCTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\n\
                      CD1_1   = -0.1\nBUNIT   = 'Jy/beam'\nEXTNAME = 'SCI'\nEND";
        let input = "CTYPE1  = 'GLON-CAR'\nCTYPE3  = 'FREQ'\nCDELT3  = 1.0E6 / Hz\n\
                     BUNIT   = 'K'";
        let out = output_header(target, Some(input), 3, &history("made"));
        let keys: Vec<&str> = out.iter().map(|c| header::keyword(c)).collect();
        assert_eq!(
            keys,
            [
                "NAXIS", "CTYPE1", "CTYPE2", "CD1_1", "BUNIT", "CTYPE3", "CDELT3", "CD3_3",
                "HISTORY"
            ]
        );
        assert!(out[4].contains("'K'"));
        assert!(out[7].ends_with("1.0E6"));
        let flat = output_header(target, Some(input), 2, &[]);
        assert_eq!(flat.len(), 5);
    }
}

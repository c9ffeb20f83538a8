//! `reproject-rs mosaic`: several FITS images reprojected onto one grid and combined (the
//! library's `mosaic::coadd`), written to a memory-mapped FITS file with its footprint, with a
//! progress bar and an optional PNG preview.

use std::path::PathBuf;
use std::time::Instant;

use reproject::engine::lazy::InputSpec;
use reproject::engine::{Options, Parallel};
use reproject::io::{FitsSource, ImageSource, MappedOutput, OutputType, PendingFile};
use reproject::mosaic::coadd::{
    background_corrections, reproject_and_coadd_with_progress, Background, Combine, Correction,
    MosaicInput, MosaicOptions,
};
use reproject::mosaic::optimal_wcs::{frame_from_name, optimal_celestial_wcs, OptimalWcsOptions};
use reproject::mosaic::plan::{MosaicInputSpec, MosaicPlan};
use reproject::processes::{
    run_processes, FileRequest, FootprintRequest, JobPlan, OutputRequest, WorkerCommand,
};
use reproject::wcs::Wcs;

use crate::header::{self, card_str, history};
use crate::job::{
    is_fits, may_write, must_exist, output_error, output_header, plane_shape, read_header,
};
use crate::preview;
use crate::progress::Progress;
use crate::CliResult;

/// The mosaic's grid.
#[derive(Debug)]
pub enum Target {
    /// A FITS image or header file.
    File(PathBuf),
    /// reproject's find_optimal_celestial_wcs of the inputs.
    Optimal {
        projection: String,
        frame: Option<String>,
        resolution: Option<f64>,
        auto_rotate: bool,
    },
}

/// What `reproject-rs mosaic` was asked to do.
#[derive(Debug)]
pub struct MosaicJob {
    pub inputs: Vec<PathBuf>,
    pub weights: Vec<PathBuf>,
    pub hdu: usize,
    pub target: Target,
    pub target_hdu: usize,
    pub output: PathBuf,
    pub footprint: Option<PathBuf>,
    pub png: Option<PathBuf>,
    pub combine: Combine,
    pub background: Background,
    pub background_reference: Option<usize>,
    pub blank: f64,
    pub options: Options,
    pub overwrite: bool,
    pub quiet: bool,
    /// Worker processes (`--processes`).
    pub processes: Option<usize>,
}

/// Runs a mosaic job; returns the summary line.
pub fn run(job: &MosaicJob) -> CliResult<String> {
    let start = Instant::now();
    if job.inputs.is_empty() {
        return Err("mosaic: give at least one input image".into());
    }
    if !job.weights.is_empty() && job.weights.len() != job.inputs.len() {
        return Err(format!(
            "--weights: {} weight images for {} inputs (give one per input, in order)",
            job.weights.len(),
            job.inputs.len()
        ));
    }
    for p in job.inputs.iter().chain(&job.weights) {
        must_exist(p, "input")?;
        if !is_fits(p) {
            return Err(format!("input {} is not a FITS file", p.display()));
        }
    }
    if let Target::File(path) = &job.target {
        must_exist(path, "target")?;
    }
    let header_file = job.output.with_extension("fits.hdr");
    let mut outputs = vec![&job.output];
    if matches!(job.target, Target::Optimal { .. }) {
        outputs.push(&header_file);
    }
    outputs.extend(job.footprint.iter());
    outputs.extend(job.png.iter());
    for (i, p) in outputs.iter().enumerate() {
        may_write(p, job.overwrite)?;
        if outputs[..i].contains(p) {
            return Err(format!("{} is given as two different outputs", p.display()));
        }
    }
    let open = |p: &PathBuf| -> CliResult<(FitsSource, Wcs)> {
        let src = FitsSource::open(p, job.hdu).map_err(|e| format!("{}: {e}", p.display()))?;
        let wcs = src
            .wcs()
            .map_err(|e| format!("{}: bad WCS: {e}", p.display()))?;
        Ok((src, wcs))
    };
    let images = job.inputs.iter().map(open).collect::<CliResult<Vec<_>>>()?;
    let weights = job
        .weights
        .iter()
        .map(open)
        .collect::<CliResult<Vec<_>>>()?;
    let inputs: Vec<MosaicInput> = images
        .iter()
        .enumerate()
        .map(|(k, (src, wcs))| MosaicInput {
            source: src,
            wcs,
            weights: weights
                .get(k)
                .map(|(w, w_wcs)| (w as &dyn ImageSource, Some(w_wcs))),
        })
        .collect();

    // The chosen header, published with the mosaic.
    let mut pending_header = None;
    let (target_text, wcs_out, (ny, nx)) = match &job.target {
        Target::File(path) => {
            let text = read_header(path, job.target_hdu, "target")?;
            let wcs = Wcs::from_header_str(&text)
                .map_err(|e| format!("target header {}: {e}", path.display()))?;
            let shape = plane_shape(&text, path)?;
            (text, wcs, shape)
        }
        Target::Optimal {
            projection,
            frame,
            resolution,
            auto_rotate,
        } => {
            let options = OptimalWcsOptions {
                frame: frame
                    .as_deref()
                    .map(frame_from_name)
                    .transpose()
                    .map_err(|e| format!("--frame: {e}"))?,
                projection: projection.clone(),
                resolution: *resolution,
                auto_rotate: *auto_rotate,
                ..OptimalWcsOptions::default()
            };
            let shapes: Vec<((usize, usize), &Wcs)> = images
                .iter()
                .map(|(src, wcs)| (src.plane_shape(), wcs))
                .collect();
            let optimal =
                optimal_celestial_wcs(&shapes, &options).map_err(|e| format!("--auto-wcs: {e}"))?;
            let file = PendingFile::write(&header_file, optimal.header.as_bytes(), job.overwrite)
                .map_err(|e| output_error(&header_file, e))?;
            pending_header = Some(file);
            (optimal.header, optimal.wcs, optimal.shape)
        }
    };
    let lead = images[0].0.shape();
    let mut shape: Vec<usize> = lead[..lead.len() - 2].to_vec();
    shape.extend([ny, nx]);

    let provenance = history(&format!(
        "reproject-rs {} mosaic of {} image(s): combine {:?}, background {:?}",
        env!("CARGO_PKG_VERSION"),
        job.inputs.len(),
        job.combine,
        job.background
    ));
    let inputs_cards = shared_input_cards(&images);
    let header_text =
        output_header(&target_text, Some(&inputs_cards), shape.len(), &provenance).join("\n");
    let footprint = match &job.footprint {
        None => FootprintRequest::Extension,
        Some(fp) => {
            let text = format!("{header_text}\n{}", card_str("EXTNAME", "FOOTPRINT", ""));
            FootprintRequest::File(FileRequest::fits(fp, &text))
        }
    };
    let request = OutputRequest {
        data: FileRequest::fits(&job.output, &header_text),
        dtype: OutputType::F64,
        footprint,
        overwrite: job.overwrite,
    };
    let out_err = |e: reproject::Error| output_error(&job.output, e);
    let options = MosaicOptions {
        reprojection: job.options.clone(),
        combine: job.combine,
        background: job.background,
        background_reference: job.background_reference,
        blank_pixel_value: job.blank,
    };
    if let Some(workers) = job.processes {
        let target = OutputGrid {
            wcs: &wcs_out,
            shape: &shape,
        };
        return with_processes(
            job, workers, &inputs, &images, target, &options, &request, start,
        );
    }
    let (mut main, mut foot) = request.create(&shape).map_err(out_err)?;
    let (data, fp): (&mut [f64], &mut [f64]) = match foot.as_mut() {
        None => main.data_and_footprint_mut::<f64, f64>().map_err(out_err)?,
        Some(f) => (
            main.data_mut::<f64>().map_err(out_err)?,
            f.data_mut::<f64>().map_err(out_err)?,
        ),
    };
    let t_prepare = start.elapsed();
    let t = Instant::now();
    let bar = Progress::new(0, "mosaicking", job.quiet);
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set(done as u64);
    };
    let dim = ndarray::IxDyn(&shape);
    let data_view =
        ndarray::ArrayViewMutD::from_shape(dim.clone(), data).map_err(|e| e.to_string())?;
    let fp_view = ndarray::ArrayViewMutD::from_shape(dim, fp).map_err(|e| e.to_string())?;
    let corrections = reproject_and_coadd_with_progress(
        &inputs, &wcs_out, data_view, fp_view, &options, &progress,
    )
    .map_err(|e| format!("mosaic failed: {e}"))?;
    bar.finish();
    let t_compute = t.elapsed();

    let (data, fp): (&[f64], &[f64]) = match foot.as_mut() {
        None => {
            let (d, f) = main.data_and_footprint_mut::<f64, f64>().map_err(out_err)?;
            (d, f)
        }
        Some(f) => (
            main.data_mut::<f64>().map_err(out_err)?,
            f.data_mut::<f64>().map_err(out_err)?,
        ),
    };
    let covered = fp.iter().filter(|&&v| v > 0.0).count() as f64 / fp.len().max(1) as f64;
    let preview = match &job.png {
        None => None,
        Some(path) => {
            let n = ny * nx;
            let mask: Vec<f64> = fp[..n]
                .iter()
                .map(|&v| f64::from(u8::from(v > 0.0)))
                .collect();
            let (bytes, _) = preview::encode_png(&data[..n], Some(&mask[..]), ny, nx)?;
            Some(
                PendingFile::write(path, &bytes, job.overwrite)
                    .map_err(|e| output_error(path, e))?,
            )
        }
    };
    let outputs: Vec<MappedOutput> = std::iter::once(main).chain(foot).collect();
    let extra: Vec<PendingFile> = preview.into_iter().chain(pending_header).collect();
    MappedOutput::finish_together(outputs, extra).map_err(out_err)?;
    Ok(format!(
        "wrote {} ({nx} x {ny}{}, f64, footprint {}): {} input(s), coverage {:.1}%{}, {:.2} s \
         (prepare {:.2} s, mosaic {:.2} s)",
        job.output.display(),
        shape[..shape.len() - 2]
            .iter()
            .rev()
            .map(|d| format!(" x {d}"))
            .collect::<String>(),
        job.footprint
            .as_ref()
            .map_or("in HDU 1".to_string(), |p| format!("in {}", p.display())),
        job.inputs.len(),
        100.0 * covered,
        offsets(job.background, &corrections),
        start.elapsed().as_secs_f64(),
        t_prepare.as_secs_f64(),
        t_compute.as_secs_f64(),
    ))
}

/// The mosaic's output grid.
struct OutputGrid<'a> {
    wcs: &'a Wcs,
    /// The full output shape.
    shape: &'a [usize],
}

/// `--processes N`: the background corrections computed here (every overlap, once), then
/// bands of output rows combined by N worker processes of this program (`reproject-rs
/// worker`, one thread each) into one memory-mapped output, published when every band is
/// done; a failed run keeps its partial output, and the same command resumes it.
#[allow(clippy::too_many_arguments)]
fn with_processes(
    job: &MosaicJob,
    workers: usize,
    inputs: &[MosaicInput],
    images: &[(FitsSource, Wcs)],
    grid: OutputGrid,
    options: &MosaicOptions,
    request: &OutputRequest,
    start: Instant,
) -> CliResult<String> {
    let out_err = |e: reproject::Error| output_error(&job.output, e);
    let t = Instant::now();
    let corrections = background_corrections(inputs, grid.wcs, grid.shape, options)
        .map_err(|e| format!("mosaic failed: {e}"))?;
    let t_match = t.elapsed();
    let spec = |path: &PathBuf| -> CliResult<InputSpec> {
        let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(InputSpec::Fits { path, hdu: job.hdu })
    };
    let mut specs = Vec::with_capacity(images.len());
    for (k, (path, (_, wcs))) in job.inputs.iter().zip(images).enumerate() {
        specs.push(MosaicInputSpec {
            image: spec(path)?,
            wcs: Some(wcs.clone()),
            weights: job.weights.get(k).map(spec).transpose()?,
        });
    }
    let plan = JobPlan::from(MosaicPlan {
        inputs: specs,
        wcs_out: grid.wcs.clone(),
        shape_out: grid.shape.to_vec(),
        options: MosaicOptions {
            reprojection: Options {
                parallel: Parallel::Serial,
                ..options.reprojection.clone()
            },
            ..options.clone()
        },
        corrections: corrections.clone(),
    });
    let program = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let command = WorkerCommand {
        program,
        args: vec!["worker".into()],
    };
    let t = Instant::now();
    let bar = Progress::new(0, "mosaicking", job.quiet);
    let mut on_progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set(done as u64);
    };
    let run =
        run_processes(&plan, request, workers, &command, &mut on_progress).map_err(out_err)?;
    bar.finish();
    // A run that resumes a job whose bands earlier workers combined starts none.
    let workers = match run.blocks_computed {
        0 => "no band left to combine (earlier workers combined them all)".to_string(),
        _ => format!("{} worker process(es)", run.workers),
    };
    Ok(format!(
        "wrote {} ({} x {}, f64): {} input(s), {workers}{}, {:.2} s \
         (background {:.2} s, mosaic {:.2} s)",
        job.output.display(),
        grid.shape[grid.shape.len() - 1],
        grid.shape[grid.shape.len() - 2],
        job.inputs.len(),
        offsets(job.background, &corrections),
        start.elapsed().as_secs_f64(),
        t_match.as_secs_f64(),
        t.elapsed().as_secs_f64(),
    ))
}

/// ", background offsets [..]" when backgrounds are matched, else nothing.
fn offsets(background: Background, corrections: &[Correction]) -> String {
    if background == Background::None {
        return String::new();
    }
    let shifts: Vec<String> = corrections
        .iter()
        .map(|c| format!("{:.4}", c.offset))
        .collect();
    format!(", background offsets [{}]", shifts.join(", "))
}

/// The cards of the first input's header that the mosaic's header takes, as the reproject
/// command takes its input's ([`output_header`]): the WCS of the axes beyond the celestial
/// pair (cubes), and BUNIT when every input has the same.
fn shared_input_cards(images: &[(FitsSource, Wcs)]) -> String {
    let unit = |src: &FitsSource| {
        header::cards(src.header_text())
            .into_iter()
            .find(|c| header::keyword(c) == "BUNIT")
    };
    let Some((first, _)) = images.first() else {
        return String::new();
    };
    let one_unit = images.iter().all(|(src, _)| unit(src) == unit(first));
    header::cards(first.header_text())
        .into_iter()
        .filter(|c| one_unit || header::keyword(c) != "BUNIT")
        .collect::<Vec<_>>()
        .join("\n")
}

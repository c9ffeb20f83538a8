//! `reproject-rs`: reproject FITS images between World Coordinate Systems from the command
//! line, print WCS summaries, and run a self-contained demo.
//!
//! ```text
//! reproject-rs INPUT.fits --to TARGET -o OUT.fits [options]
//!     (same as `reproject-rs reproject ...`)
//! reproject-rs demo [--out-dir DIR] [--size WIDTH]
//! reproject-rs info FILE [--hdu N]
//! reproject-rs warmup [--device cuda:all | --arch sm_90]
//! ```
//!
//! Every error is reported as one `error: ...` line on stderr with a non-zero exit status.

mod demo;
mod header;
mod info;
mod job;
mod mosaic;
mod preview;
mod progress;
mod warmup;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use reproject::engine::Parallel;
use reproject::interp::Order;
use reproject::io::OutputType;

/// The result of a command: errors are one line of text.
pub type CliResult<T> = Result<T, String>;

#[derive(Parser, Debug)]
#[command(
    name = "reproject-rs",
    version,
    about = "Reproject astronomical images between FITS World Coordinate Systems \
             (astropy reproject_interp compatible)",
    long_about = None,
    arg_required_else_help = true,
    after_help = "The reproject command is the default: `reproject-rs IN.fits --to TARGET -o \
                  OUT.fits` is `reproject-rs reproject IN.fits --to TARGET -o OUT.fits`.\n\
                  Try `reproject-rs demo` first: it needs no data and no network.\n\
                  Exit status: 0 success, 1 error (one `error:` line on stderr), 2 a command \
                  line that cannot be parsed."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Reproject an image onto a target WCS and shape (the default command)
    Reproject(ReprojectArgs),
    /// Build a synthetic all-sky galactic survey and reproject it to an equatorial TAN tile
    /// and an all-sky AIT map, with PNG previews (no data or network needed)
    Demo(DemoArgs),
    /// Reproject several FITS images onto one target grid and combine them (reproject's
    /// reproject_and_coadd): mean, sum, first, last, min, max, median or clipped mean, with
    /// optional weights and background matching
    Mosaic(MosaicArgs),
    /// Print the WCS summary of a FITS image or header file
    Info(InfoArgs),
    /// Compute blocks of a prepared multi-process job (started by `--processes`, or by an
    /// external scheduler after `--plan-only`)
    Worker(WorkerArgs),
    /// Open the GPUs and compile their kernels into the disk cache (once per machine: about
    /// 20 s), so that the first job uses them; with --arch, compile the kernels of a GPU
    /// architecture without a GPU (e.g. while building a container image)
    Warmup(WarmupArgs),
}

/// Background matching of `mosaic`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum MatchBackground {
    /// None
    None,
    /// One offset per image (reproject's match_background=True)
    Offset,
    /// One plane (offset and slopes) per image, as Montage fits
    Plane,
}

#[derive(Args, Debug)]
struct MosaicArgs {
    /// Input images (FITS; the HDU given by --hdu)
    #[arg(required = true, value_name = "IN.fits")]
    inputs: Vec<PathBuf>,
    /// Target WCS and shape: a FITS image (its header) or a header text file; NAXIS1/NAXIS2
    /// give the output shape
    #[arg(long, value_name = "TARGET", required_unless_present = "auto_wcs")]
    to: Option<PathBuf>,
    /// Choose the target as reproject's find_optimal_celestial_wcs does: every input covered,
    /// at the finest input resolution (see --projection, --frame, --resolution,
    /// --auto-rotate); the header is written beside the output as OUT.fits.hdr
    #[arg(long, conflicts_with = "to")]
    auto_wcs: bool,
    /// With --auto-wcs: the projection code of the target
    #[arg(
        long,
        default_value = "TAN",
        value_name = "CODE",
        requires = "auto_wcs"
    )]
    projection: String,
    /// With --auto-wcs: the celestial frame of the target (icrs, fk5, fk4, galactic, ...)
    /// [default: the first input's]
    #[arg(long, value_name = "FRAME", requires = "auto_wcs")]
    frame: Option<String>,
    /// With --auto-wcs: the pixel size in degrees [default: the finest input's]
    #[arg(long, value_name = "DEG", requires = "auto_wcs")]
    resolution: Option<f64>,
    /// With --auto-wcs: rotate the target to minimise its area
    #[arg(long, requires = "auto_wcs")]
    auto_rotate: bool,
    /// Output FITS file (mosaic in the primary HDU, footprint (summed weights) in a FOOTPRINT
    /// extension unless --footprint is given)
    #[arg(short, long, value_name = "OUT.fits")]
    output: PathBuf,
    /// Weight images, one per input in the same order (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "W1.fits,W2.fits,...")]
    weights: Vec<PathBuf>,
    /// HDU of the input FITS files (0 = primary)
    #[arg(long, default_value_t = 0, value_name = "N")]
    hdu: usize,
    /// HDU of the target FITS file (0 = primary)
    #[arg(long, default_value_t = 0, value_name = "N")]
    to_hdu: usize,
    /// How overlapping values combine: mean, sum, first, last, min, max, median, clipped
    #[arg(long, default_value = "mean", value_parser = parse_combine, value_name = "MODE")]
    combine: reproject::mosaic::coadd::Combine,
    /// With --combine clipped: the rejection threshold in standard deviations (SWarp's
    /// CLIP_SIGMA)
    #[arg(long, default_value_t = 4.0, value_parser = parse_clip, value_name = "SIGMA")]
    clip_sigma: f64,
    /// With --combine clipped: the extra tolerance as a fraction of the absolute median
    /// (SWarp's CLIP_AMPFRAC)
    #[arg(long, default_value_t = 0.3, value_parser = parse_clip, value_name = "FRACTION")]
    clip_ampfrac: f64,
    /// Background matching between overlapping images
    #[arg(long, value_enum, default_value_t = MatchBackground::None)]
    match_background: MatchBackground,
    /// The input (0-based) whose background is kept [default: corrections average to zero]
    #[arg(long, value_name = "K")]
    background_reference: Option<usize>,
    /// Value of output pixels no input covers
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "VALUE",
        allow_negative_numbers = true
    )]
    blank: f64,
    /// Interpolation order: nearest-neighbor, bilinear, biquadratic, bicubic, quartic,
    /// quintic, or 0-5
    #[arg(long, default_value = "bilinear", value_parser = parse_order, value_name = "ORDER")]
    order: Order,
    /// Output block size in pixels: N (N x N blocks) or ROWSxCOLS [default: 256]
    #[arg(long, value_parser = parse_block_size, value_name = "N")]
    block_size: Option<(usize, usize)>,
    /// Worker threads [default: all cores]
    #[arg(long, value_parser = parse_threads, value_name = "N")]
    threads: Option<u32>,
    /// Where the inputs are reprojected: cpu, cuda, cuda:N, cuda:all, or auto
    #[arg(long, default_value = "auto", value_parser = parse_device, value_name = "DEVICE")]
    device: (reproject::gpu::Backend, reproject::gpu::Devices),
    /// Write the footprint to this FITS file instead of a second HDU of the output
    #[arg(long, value_name = "FOOT.fits")]
    footprint: Option<PathBuf>,
    /// Also write a PNG preview of the mosaic
    #[arg(long, value_name = "PREVIEW.png")]
    png: Option<PathBuf>,
    /// Replace existing output files
    #[arg(long)]
    overwrite: bool,
    /// Print nothing but errors, and no progress bar
    #[arg(short, long)]
    quiet: bool,
    /// Combine bands of output rows in N worker processes of this program (the background
    /// corrections computed once, here), writing one memory-mapped output; a failed run keeps
    /// its partial output and the same command resumes it
    #[arg(long, value_name = "N", value_parser = parse_threads, conflicts_with_all = ["png", "auto_wcs"])]
    processes: Option<u32>,
}

fn parse_clip(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err("expected a finite, non-negative number".into()),
    }
}

fn parse_combine(s: &str) -> Result<reproject::mosaic::coadd::Combine, String> {
    s.parse()
        .map_err(|_| "expected mean, sum, first, last, min, max, median or clipped".to_string())
}

#[derive(Args, Debug)]
struct WorkerArgs {
    /// The job file (`OUT.fits.job.json`)
    #[arg(long, value_name = "JOB")]
    job: PathBuf,
    /// Compute share K of N: blocks K, K+N, K+2N, ...
    #[arg(long, value_name = "K/N", conflicts_with = "blocks")]
    share: Option<String>,
    /// Compute the blocks with indices A..B (end excluded)
    #[arg(long, value_name = "A..B")]
    blocks: Option<String>,
}

#[derive(Args, Debug)]
struct WarmupArgs {
    /// The GPUs: cuda (the first), cuda:N, cuda:all, auto (the first if one is usable, else
    /// nothing) or cpu (nothing)
    #[arg(long, default_value = "cuda:all", value_name = "DEVICE")]
    device: String,
    /// Compile the kernels for GPUs of this architecture (sm_80, sm_90, ...) into the disk
    /// cache, without opening any (only libnvrtc is needed)
    #[arg(long, value_name = "sm_XY", conflicts_with = "device")]
    arch: Option<String>,
    /// With --arch: compile this specialised build of the kernels (its NVRTC defines, e.g.
    /// "RP_V_HOMOGRAPHY RP_V_ORDER=1 RP_V_INPUT=0") instead of the general one. Jobs start
    /// this themselves, in a process of its own, for the variants they have not got yet
    #[arg(long, value_name = "DEFINES", requires = "arch")]
    variant: Option<String>,
}

/// Sample type of the output file.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Dtype {
    /// 32-bit float (BITPIX -32)
    F32,
    /// 64-bit float (BITPIX -64), as reproject returns
    F64,
}

impl From<Dtype> for OutputType {
    fn from(d: Dtype) -> OutputType {
        match d {
            Dtype::F32 => OutputType::F32,
            Dtype::F64 => OutputType::F64,
        }
    }
}

#[derive(Args, Debug)]
struct ReprojectArgs {
    /// Input image: FITS (any image HDU, see --hdu) or .npy (then --wcs is required)
    input: PathBuf,
    /// Target WCS and shape: a FITS image (its header), or a header text file (.hdr, one card
    /// per line, as astropy's Header.totextfile or Montage write); NAXIS1/NAXIS2 give the
    /// output shape
    #[arg(long, value_name = "TARGET")]
    to: PathBuf,
    /// Output FITS file (image in the primary HDU, footprint in a FOOTPRINT extension unless
    /// --footprint is given)
    #[arg(short, long, value_name = "OUT.fits")]
    output: PathBuf,
    /// HDU of the input FITS file (0 = primary)
    #[arg(long, default_value_t = 0, value_name = "N")]
    hdu: usize,
    /// HDU of the target FITS file (0 = primary)
    #[arg(long, default_value_t = 0, value_name = "N")]
    to_hdu: usize,
    /// WCS of the input: a header text file or a FITS file (required for .npy inputs;
    /// overrides a FITS input's own header)
    #[arg(long, value_name = "HEADER")]
    wcs: Option<PathBuf>,
    /// Interpolation order: nearest-neighbor, bilinear, biquadratic, bicubic, quartic,
    /// quintic, or 0-5
    #[arg(long, default_value = "bilinear", value_parser = parse_order, value_name = "ORDER")]
    order: Order,
    /// Output block size in pixels: N (N x N blocks) or ROWSxCOLS [default: automatic]
    #[arg(long, value_parser = parse_block_size, value_name = "N")]
    block_size: Option<(usize, usize)>,
    /// Worker threads [default: all cores]
    #[arg(long, value_parser = parse_threads, value_name = "N")]
    threads: Option<u32>,
    /// Where blocks are computed: cpu, cuda (an error without a usable GPU), cuda:N (GPU N),
    /// cuda:all (blocks spread over every GPU; with --processes, one process per GPU), or auto
    /// (the GPU when the job is large enough for it to pay and there is one that can do it,
    /// else the CPU)
    #[arg(long, default_value = "auto", value_parser = parse_device, value_name = "DEVICE")]
    device: (reproject::gpu::Backend, reproject::gpu::Devices),
    /// Output sample type
    #[arg(long, value_enum, default_value_t = Dtype::F64)]
    dtype: Dtype,
    /// Write the footprint to this FITS file instead of a second HDU of the output
    #[arg(long, value_name = "FOOT.fits")]
    footprint: Option<PathBuf>,
    /// Replace existing output files
    #[arg(long)]
    overwrite: bool,
    /// Also write a PNG preview (asinh stretch between percentiles; pixels outside the
    /// footprint in grey)
    #[arg(long, value_name = "PREVIEW.png")]
    png: Option<PathBuf>,
    /// Print nothing but errors, and no progress bar
    #[arg(short, long)]
    quiet: bool,
    /// Compute the blocks in N worker processes of this program, writing one memory-mapped
    /// output; a failed run keeps its partial output and the same command resumes it
    #[arg(long, value_name = "N", value_parser = parse_threads, conflicts_with = "png")]
    processes: Option<u32>,
    /// With --processes: only prepare the job (job file, progress file, partial output) and
    /// print how to run its blocks with `reproject-rs worker`; running the same command
    /// without --plan-only afterwards publishes the output
    #[arg(long, requires = "processes")]
    plan_only: bool,
}

#[derive(Args, Debug)]
struct DemoArgs {
    /// Directory for the demo's files (created if needed; only the demo's own files in it are
    /// replaced)
    #[arg(long, default_value = "demo-output", value_name = "DIR")]
    out_dir: PathBuf,
    /// Width in pixels of the synthetic all-sky input (height is half); the outputs scale with
    /// it
    #[arg(long, default_value_t = 3600, value_parser = parse_width, value_name = "WIDTH")]
    size: u32,
    /// Interpolation order of the reprojections
    #[arg(long, default_value = "bilinear", value_parser = parse_order, value_name = "ORDER")]
    order: Order,
    /// Worker threads [default: all cores]
    #[arg(long, value_parser = parse_threads, value_name = "N")]
    threads: Option<u32>,
    /// Print nothing but errors, and no progress bar
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct InfoArgs {
    /// A FITS file or a header text file (.hdr)
    file: PathBuf,
    /// HDU of a FITS file (0 = primary)
    #[arg(long, default_value_t = 0, value_name = "N")]
    hdu: usize,
}

/// Parses an interpolation order: a name or a degree 0-5.
fn parse_device(s: &str) -> Result<(reproject::gpu::Backend, reproject::gpu::Devices), String> {
    reproject::gpu::parse_device(s).map_err(|e| match e {
        reproject::Error::InvalidArgument(m) => m,
        e => e.to_string(),
    })
}

fn parse_order(s: &str) -> Result<Order, String> {
    let order = match s.parse::<i64>() {
        Ok(n) => Order::try_from(n).ok(),
        Err(_) => s.parse::<Order>().ok(),
    };
    order.ok_or_else(|| {
        "expected nearest-neighbor, bilinear, biquadratic, bicubic, quartic, quintic or a \
         degree 0-5"
            .to_string()
    })
}

/// Parses a positive number of threads.
fn parse_threads(s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| "expected a positive number of threads".to_string())
}

/// Parses the demo's input width.
fn parse_width(s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .ok()
        .filter(|n| (64..=20000).contains(n))
        .ok_or_else(|| "expected a width in pixels from 64 to 20000".to_string())
}

/// Parses `N` or `ROWSxCOLS` (positive).
fn parse_block_size(s: &str) -> Result<(usize, usize), String> {
    let parse = |t: &str| {
        t.trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("expected a positive integer N or ROWSxCOLS, got '{s}'"))
    };
    match s.split_once(['x', 'X']) {
        Some((r, c)) => Ok((parse(r)?, parse(c)?)),
        None => {
            let n = parse(s)?;
            Ok((n, n))
        }
    }
}

/// Threads setting of `--threads`.
fn parallel(threads: Option<u32>) -> Parallel {
    match threads {
        None => Parallel::AllCores,
        Some(n) => Parallel::from_threads(n as usize),
    }
}

/// Inserts the default `reproject` subcommand when the first argument is not a subcommand or
/// a top-level flag, so that `reproject-rs IN.fits --to T -o OUT.fits` works.
fn with_default_command(mut args: Vec<OsString>) -> Vec<OsString> {
    const TOP: [&str; 11] = [
        "reproject",
        "demo",
        "mosaic",
        "info",
        "worker",
        "warmup",
        "help",
        "-h",
        "--help",
        "-V",
        "--version",
    ];
    if let Some(first) = args.get(1)
        && !TOP.iter().any(|t| first == t)
    {
        args.insert(1, OsString::from("reproject"));
    }
    args
}

fn run(cli: Cli) -> CliResult<()> {
    match cli.command {
        Command::Reproject(a) => {
            let job = job::Job {
                input: a.input,
                hdu: a.hdu,
                wcs: a.wcs,
                target: a.to,
                target_hdu: a.to_hdu,
                output: a.output,
                footprint: a.footprint,
                png: a.png,
                order: a.order,
                block_size: a.block_size,
                parallel: parallel(a.threads),
                device: a.device,
                dtype: a.dtype.into(),
                overwrite: a.overwrite,
                quiet: a.quiet,
                processes: a.processes.map(|n| n as usize),
                plan_only: a.plan_only,
            };
            let report = job::run(&job)?;
            if !a.quiet && report.published {
                println!("{}", report.summary(&job));
            }
            Ok(())
        }
        Command::Demo(a) => demo::run(&demo::DemoOptions {
            out_dir: a.out_dir,
            width: a.size as usize,
            order: a.order,
            parallel: parallel(a.threads),
            quiet: a.quiet,
        }),
        Command::Mosaic(a) => {
            use reproject::mosaic::coadd::{Background, Combine};
            let job = mosaic::MosaicJob {
                inputs: a.inputs,
                weights: a.weights,
                hdu: a.hdu,
                target: match a.to {
                    Some(path) => mosaic::Target::File(path),
                    None => mosaic::Target::Optimal {
                        projection: a.projection,
                        frame: a.frame,
                        resolution: a.resolution,
                        auto_rotate: a.auto_rotate,
                    },
                },
                target_hdu: a.to_hdu,
                output: a.output,
                footprint: a.footprint,
                png: a.png,
                combine: match a.combine {
                    Combine::Clipped { .. } => Combine::Clipped {
                        sigma: a.clip_sigma,
                        ampfrac: a.clip_ampfrac,
                    },
                    other => other,
                },
                background: match a.match_background {
                    MatchBackground::None => Background::None,
                    MatchBackground::Offset => Background::Offset,
                    MatchBackground::Plane => Background::Plane,
                },
                background_reference: a.background_reference,
                blank: a.blank,
                options: reproject::engine::Options {
                    order: a.order,
                    block_size: a.block_size,
                    parallel: parallel(a.threads),
                    backend: a.device.0,
                    devices: a.device.1,
                    ..reproject::engine::Options::default()
                },
                overwrite: a.overwrite,
                quiet: a.quiet,
                processes: a.processes.map(|n| n as usize),
            };
            let summary = mosaic::run(&job)?;
            if !a.quiet {
                println!("{summary}");
            }
            Ok(())
        }
        Command::Info(a) => info::run(&a.file, a.hdu),
        Command::Worker(a) => {
            let selection = match (&a.share, &a.blocks) {
                (Some(s), None) | (None, Some(s)) => s
                    .parse::<reproject::processes::BlockSelection>()
                    .map_err(|e| e.to_string())?,
                _ => return Err("worker: give --share K/N or --blocks A..B".into()),
            };
            reproject::processes::run_worker(&a.job, &selection)
                .map(|_| ())
                .map_err(|e| format!("worker ({}): {e}", a.job.display()))
        }
        Command::Warmup(a) => warmup::run(&a.device, a.arch.as_deref(), a.variant.as_deref()),
    }
}

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error{at}: {} (please report it)",
            one_line(&msg)
        );
    }));
    let args = with_default_command(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        ExitCode::from(2)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                _ => {
                    // clap's first paragraph is the error (with, e.g., the missing
                    // arguments on lines of their own); the usage after it is left out to
                    // keep to one line.
                    let text = e.render().to_string();
                    let first: Vec<&str> = text
                        .lines()
                        .skip_while(|l| l.trim().is_empty())
                        .take_while(|l| !l.trim().is_empty())
                        .map(str::trim)
                        .collect();
                    let mut line = first.join(" ");
                    if line.is_empty() {
                        line = "error: invalid arguments".into();
                    }
                    eprintln!("{line} (see --help)");
                    ExitCode::from(2)
                }
            };
        }
    };
    // Kernel variants (and kernels `auto` prepares) are compiled by this program in a
    // process of its own, which finishes them into the disk cache after this one exits: no
    // command waits at its end for a compilation its job no longer needs.
    if let Ok(me) = std::env::current_exe() {
        reproject::gpu::set_compile_helper(Some(
            reproject::gpu::CompileHelper::new(me).arg("warmup"),
        ));
    }
    let ran = std::panic::catch_unwind(|| run(cli));
    // Before the exit handlers: a compilation still running here (where the helper failed)
    // must end before NVRTC's own handlers tear it down (see gpu_helper_exit.rs).
    reproject::gpu::stop_background_compilations();
    match ran {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(msg)) => {
            progress::clear_line();
            eprintln!("error: {}", in_cli_words(&one_line(&msg)));
            ExitCode::FAILURE
        }
        // The hook has printed the message.
        Err(_) => ExitCode::FAILURE,
    }
}

/// A library message in the command line's words: the library's `block_size` option is the
/// command's `--block-size`.
fn in_cli_words(msg: &str) -> String {
    msg.replace("block_size", "--block-size")
}

/// Joins a possibly multi-line message into one line.
pub fn one_line(msg: &str) -> String {
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn bare_form_gets_the_reproject_command() {
        let a = with_default_command(os(&["x", "in.fits", "--to", "t.hdr", "-o", "o.fits"]));
        assert_eq!(a[1], "reproject");
        let a = with_default_command(os(&["x", "demo"]));
        assert_eq!(a[1], "demo");
        let a = with_default_command(os(&["x", "--help"]));
        assert_eq!(a[1], "--help");
        let cli = Cli::try_parse_from(with_default_command(os(&[
            "x", "in.fits", "--to", "t.hdr", "-o", "o.fits", "--order", "3",
        ])))
        .unwrap();
        match cli.command {
            Command::Reproject(a) => assert_eq!(a.order, Order::Bicubic),
            _ => panic!("wrong command"),
        }
    }

    #[test]
    fn option_parsers() {
        assert_eq!(parse_block_size("512").unwrap(), (512, 512));
        assert_eq!(parse_block_size("64x128").unwrap(), (64, 128));
        assert!(parse_block_size("0").is_err());
        assert!(parse_block_size("abc").is_err());
        assert_eq!(parse_order("bicubic").unwrap(), Order::Bicubic);
        assert_eq!(parse_order("0").unwrap(), Order::NearestNeighbor);
        assert!(parse_order("7").is_err());
        assert!(parse_order("cubic").is_err());
    }
}

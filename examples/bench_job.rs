//! Runs one reprojection job (or the memory floor of one) and prints its wall times.
//!
//! ```text
//! cargo run --release --example bench_job -- \
//!     --input target/bench-data/A.npy --wcs-out target/bench-data/A_out.hdr \
//!     [--wcs-in A_in.hdr] [--order bilinear] [--parallel serial|all|N] [--repeat 5] \
//!     [--no-roundtrip] [--floor] [--save out.npy]
//! ```
//!
//! * `--input`: a `.npy` file (read through `NpySource`) or a FITS file (`FitsSource`), both
//!   memory-mapped. The input WCS comes from `--wcs-in` (FITS header text) or, for FITS
//!   input, from the file's own header.
//! * `--wcs-out`: FITS header text of the output; `NAXIS1`/`NAXIS2` give the output shape.
//! * Each timed run opens the input, parses nothing else, and calls
//!   `reproject::engine::reproject_interp`, producing the float64 data and footprint in
//!   memory, like astropy reproject's numpy path (`reproject_interp((array, wcs), ...)`).
//! * `--floor`: instead of reprojecting, time the least work the job must do on the same
//!   bytes: map the input, allocate the float64 data and footprint the same way, and make one
//!   pass that reads every input sample and writes every output and footprint sample
//!   (`--parallel` threads). The input and output shapes must match (they do for the jobs
//!   of `scripts/bench_peers.sh`).
//!
//! Output: one `run <i> <seconds>` line per run, an `info` line, and a final
//! `RESULT median=<s> min=<s> runs=<n>` line that `scripts/bench_peers.sh` parses.

use std::fs::File;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ndarray::ArrayD;
use rayon::prelude::*;
use reproject::engine::{reproject_interp, Options, Parallel, Plan};
#[cfg(feature = "fits")]
use reproject::io::FitsSource;
use reproject::io::{ImageSource, NpySource};
use reproject::wcs::Wcs;

struct Args {
    input: PathBuf,
    wcs_in: Option<PathBuf>,
    wcs_out: PathBuf,
    order: String,
    parallel: Parallel,
    repeat: usize,
    roundtrip: bool,
    floor: bool,
    save: Option<PathBuf>,
    block: Option<usize>,
}

const USAGE: &str = "usage: bench_job --input FILE(.npy|.fits) --wcs-out HDR [--wcs-in HDR] \
[--order bilinear] [--parallel serial|all|N] [--repeat N] [--no-roundtrip] [--floor] [--save OUT.npy] [--block N]";

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut input = None;
    let mut wcs_in = None;
    let mut wcs_out = None;
    let mut order = "bilinear".to_string();
    let mut parallel = Parallel::AllCores;
    let mut repeat = 3;
    let mut roundtrip = true;
    let mut floor = false;
    let mut save = None;
    let mut block = None;
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--input" => input = Some(PathBuf::from(value()?)),
            "--wcs-in" => wcs_in = Some(PathBuf::from(value()?)),
            "--wcs-out" => wcs_out = Some(PathBuf::from(value()?)),
            "--order" => order = value()?,
            "--parallel" => {
                parallel = match value()?.as_str() {
                    "serial" => Parallel::Serial,
                    "all" => Parallel::AllCores,
                    n => Parallel::from_threads(
                        n.parse().map_err(|_| format!("bad --parallel {n}"))?,
                    ),
                }
            }
            "--repeat" => repeat = value()?.parse().map_err(|_| "bad --repeat".to_string())?,
            "--no-roundtrip" => roundtrip = false,
            "--floor" => floor = true,
            "--save" => save = Some(PathBuf::from(value()?)),
            "--block" => block = Some(value()?.parse().map_err(|_| "bad --block".to_string())?),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(Args {
        input: input.ok_or_else(|| format!("--input is required\n{USAGE}"))?,
        wcs_in,
        wcs_out: wcs_out.ok_or_else(|| format!("--wcs-out is required\n{USAGE}"))?,
        order,
        parallel,
        repeat: repeat.max(1),
        roundtrip,
        floor,
        save,
        block,
    })
}

/// The integer value of `key` in FITS header text (cards of 80 characters or lines).
fn header_int(text: &str, key: &str) -> Option<usize> {
    let cards: Vec<&str> = if text.contains('\n') {
        text.lines().collect()
    } else {
        text.as_bytes()
            .chunks(80)
            .filter_map(|c| std::str::from_utf8(c).ok())
            .collect()
    };
    cards.iter().find_map(|card| {
        let (k, v) = card.split_once('=')?;
        if k.trim() != key {
            return None;
        }
        v.split('/').next()?.trim().parse().ok()
    })
}

fn is_fits(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("fits" | "fit" | "fts")
    )
}

fn open_source(path: &Path) -> Result<Box<dyn ImageSource>, Box<dyn std::error::Error>> {
    if is_fits(path) {
        #[cfg(feature = "fits")]
        {
            return Ok(Box::new(FitsSource::open(path, 0)?));
        }
        #[cfg(not(feature = "fits"))]
        return Err("FITS input needs the `fits` feature".into());
    }
    Ok(Box::new(NpySource::open(path)?))
}

fn input_wcs(args: &Args) -> Result<Wcs, Box<dyn std::error::Error>> {
    if let Some(h) = &args.wcs_in {
        return Ok(Wcs::from_header_str(&std::fs::read_to_string(h)?)?);
    }
    if is_fits(&args.input) {
        #[cfg(feature = "fits")]
        return Ok(FitsSource::open(&args.input, 0)?.wcs()?);
    }
    Err("--wcs-in is required for .npy input".into())
}

/// One read + write pass: every float32 input sample read once, every float64 output and
/// footprint sample written once, into freshly allocated (zeroed) arrays as the engine does.
fn floor_pass(path: &Path, parallel: Parallel) -> Result<(ArrayD<f64>, ArrayD<f64>), String> {
    let src = NpySource::open(path).map_err(|e| e.to_string())?;
    if src.header().descr != "<f4" {
        return Err(format!(
            "--floor needs a little-endian float32 .npy, got {}",
            src.header().descr
        ));
    }
    let shape = src.shape().to_vec();
    let offset = src.data_offset();
    let file = File::open(path).map_err(|e| e.to_string())?;
    // SAFETY: read-only map of a file nobody truncates while the benchmark runs.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?;
    let n: usize = shape.iter().product();
    let input = &map[offset..offset + 4 * n];
    let mut data = reproject::engine::zeroed_output::<f64>(&shape);
    let mut footprint = reproject::engine::zeroed_output::<f64>(&shape);
    {
        let d = data.as_slice_mut().expect("contiguous");
        let f = footprint.as_slice_mut().expect("contiguous");
        const CHUNK: usize = 1 << 16;
        let work = |((d, f), i): ((&mut [f64], &mut [f64]), &[u8])| {
            for ((o, p), b) in d.iter_mut().zip(f.iter_mut()).zip(i.chunks_exact(4)) {
                let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64;
                *o = v;
                *p = if v.is_nan() { 0.0 } else { 1.0 };
            }
        };
        match parallel {
            Parallel::Serial => d
                .chunks_mut(CHUNK)
                .zip(f.chunks_mut(CHUNK))
                .zip(input.chunks(4 * CHUNK))
                .for_each(work),
            Parallel::AllCores => d
                .par_chunks_mut(CHUNK)
                .zip(f.par_chunks_mut(CHUNK))
                .zip(input.par_chunks(4 * CHUNK))
                .for_each(work),
            Parallel::Threads(t) => rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| e.to_string())?
                .install(|| {
                    d.par_chunks_mut(CHUNK)
                        .zip(f.par_chunks_mut(CHUNK))
                        .zip(input.par_chunks(4 * CHUNK))
                        .for_each(work)
                }),
        }
    }
    Ok((data, footprint))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let out_text = std::fs::read_to_string(&args.wcs_out)?;
    let shape_out = [
        header_int(&out_text, "NAXIS2").ok_or("NAXIS2 missing from --wcs-out")?,
        header_int(&out_text, "NAXIS1").ok_or("NAXIS1 missing from --wcs-out")?,
    ];
    let wcs_out = Wcs::from_header_str(&out_text)?;
    let wcs_in = input_wcs(&args)?;
    let options = Options {
        order: args.order.parse()?,
        roundtrip_coords: args.roundtrip,
        block_size: args.block.map(|b| (b, b)),
        parallel: args.parallel,
        ..Options::default()
    };

    let mut times = Vec::with_capacity(args.repeat);
    let mut coverage = f64::NAN;
    for i in 0..args.repeat {
        let t = Instant::now();
        let (data, footprint) = if args.floor {
            floor_pass(&args.input, args.parallel)?
        } else {
            let source = open_source(&args.input)?;
            reproject_interp(source.as_ref(), &wcs_in, &wcs_out, &shape_out, &options)?
        };
        let (data, footprint) = black_box((data, footprint));
        let dt = t.elapsed().as_secs_f64();
        println!("run {i} {dt:.6}");
        times.push(dt);
        if i + 1 == args.repeat {
            coverage = footprint.sum() / footprint.len() as f64;
            if let Some(path) = &args.save {
                ndarray_npy::write_npy(path, &data)?;
            }
        }
        drop((data, footprint));
    }

    if args.floor {
        println!(
            "info mode=floor parallel={:?} threads={} shape={:?}",
            args.parallel,
            args.parallel.threads(),
            shape_out
        );
    } else {
        let source = open_source(&args.input)?;
        let plan = Plan::new(source.as_ref(), &wcs_in, &wcs_out, &shape_out, &options)?;
        println!(
            "info mode=reproject order={} parallel={:?} threads={} shape_out={:?} \
             coverage={coverage:.4} homography={} block={:?}",
            args.order,
            args.parallel,
            args.parallel.threads(),
            shape_out,
            plan.uses_homography(),
            plan.block_shape()
        );
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2]
    } else {
        0.5 * (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2])
    };
    println!(
        "RESULT median={median:.6} min={:.6} runs={}",
        sorted[0],
        sorted.len()
    );
    Ok(())
}

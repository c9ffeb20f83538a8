//! The scheduler: runs a set of a plan's blocks through the plan's executor, on the threads the
//! options (and the executor) ask for, with a progress callback and cancellation. Everything
//! that computes a whole output ([`Plan::compute_into`], lazy handles' `compute`, the CLI)
//! goes through [`run`].
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use ndarray::Array3;
//! use reproject::engine::schedule::{run, Schedule};
//! use reproject::engine::{Options, Plan};
//! use reproject::io::ArraySource;
//! use reproject::wcs::Wcs;
//! let wcs = Wcs::from_header_str(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
//!      CDELT1 = -0.1\nCDELT2 = 0.1\n",
//! )?;
//! let image = ndarray::Array2::<f64>::ones((64, 64));
//! let source = ArraySource::new(image.view().into_dyn())?;
//! let options = Options { block_size: Some((16, 64)), ..Options::default() };
//! let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &options)?;
//! let (mut data, mut footprint) = (
//!     Array3::<f64>::zeros((1, 64, 64)),
//!     Array3::<f64>::zeros((1, 64, 64)),
//! );
//! let done = AtomicUsize::new(0);
//! let progress = |_: usize| { done.fetch_add(1, Ordering::Relaxed); };
//! let schedule = Schedule { progress: Some(&progress), ..Schedule::default() };
//! assert_eq!(run(&plan, data.view_mut(), footprint.view_mut(), &schedule)?, 4);
//! assert_eq!(done.load(Ordering::Relaxed), 4);
//! # Ok::<(), reproject::Error>(())
//! ```

use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{ArrayViewMut3, Axis};
use rayon::prelude::*;

use super::blocks::Block;
use super::{check_working_memory, in_block, OutputSample, Parallel, Plan};
use crate::error::{Error, Result};

/// How to run the blocks: threads, progress, cancellation.
///
/// ```
/// use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
/// use ndarray::Array3;
/// use reproject::engine::schedule::{run, Schedule};
/// # use ndarray::Array2;
/// # use reproject::engine::{Options, Plan};
/// # use reproject::io::ArraySource;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
/// # let source = ArraySource::new(image.view().into_dyn())?;
/// # let options = Options { block_size: Some((16, 16)), ..Options::default() };
/// # let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
/// let (mut data, mut footprint) = (Array3::<f64>::zeros((1, 32, 32)), Array3::zeros((1, 32, 32)));
/// // Cancelled before it starts: no block computed, the run says so.
/// let cancel = AtomicBool::new(true);
/// let schedule = Schedule { cancel: Some(&cancel), ..Schedule::default() };
/// let err = run(&plan, data.view_mut(), footprint.view_mut(), &schedule).unwrap_err();
/// assert!(matches!(err, reproject::Error::Cancelled(_)));
/// // With progress: every block reported once.
/// let done = AtomicUsize::new(0);
/// let progress = |_block: usize| {
///     done.fetch_add(1, Ordering::Relaxed);
/// };
/// let schedule = Schedule { progress: Some(&progress), ..Schedule::default() };
/// assert_eq!(run(&plan, data.view_mut(), footprint.view_mut(), &schedule)?, 4);
/// assert_eq!(done.load(Ordering::Relaxed), 4);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Default, Clone, Copy)]
pub struct Schedule<'a> {
    /// Threads; `None` takes the plan's options (as its executor adjusts them).
    pub parallel: Option<Parallel>,
    /// Called after each finished block with its index (from any thread).
    pub progress: Option<&'a (dyn Fn(usize) + Sync)>,
    /// When set, blocks not yet started are skipped and the run ends with
    /// [`Error::Cancelled`]; blocks already written stay written.
    pub cancel: Option<&'a AtomicBool>,
}

/// Computes every block of `plan` into `data` and `footprint` (planes, rows, columns of the
/// output plane, C order); returns the number of blocks. The executor hears that the outputs
/// are fresh when the plan says so ([`Plan::with_fresh_outputs`],
/// [`Plan::with_untouched_outputs`]), as the plan's blocks and estimate do.
///
/// ```
/// use ndarray::Array3;
/// use reproject::engine::{schedule::{run, Schedule}, Parallel};
/// # use ndarray::Array2;
/// # use reproject::engine::{Options, Plan};
/// # use reproject::io::ArraySource;
/// # use reproject::wcs::Wcs;
/// # let header = |crpix: f64| format!(
/// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
/// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
/// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
/// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
/// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
/// # let source = ArraySource::new(image.view().into_dyn())?;
/// # let options = Options { block_size: Some((16, 16)), ..Options::default() };
/// # let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
/// let (mut data, mut footprint) = (Array3::<f32>::zeros((1, 32, 32)), Array3::zeros((1, 32, 32)));
/// let schedule = Schedule { parallel: Some(Parallel::Threads(2)), ..Schedule::default() };
/// assert_eq!(run(&plan, data.view_mut(), footprint.view_mut(), &schedule)?, 4);
/// assert_eq!(data[[0, 9, 9]], image[[9, 10]] as f32);
/// let mut wrong = Array3::<f32>::zeros((1, 32, 31));
/// assert!(run(&plan, wrong.view_mut(), footprint.view_mut(), &schedule).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub fn run<T: OutputSample>(
    plan: &Plan,
    mut data: ArrayViewMut3<T>,
    mut footprint: ArrayViewMut3<T>,
    schedule: &Schedule,
) -> Result<usize> {
    let (ny, nx) = plan.plane_shape_out();
    let expected = [plan.planes(), ny, nx];
    if data.shape() != expected || footprint.shape() != expected {
        return Err(Error::ShapeMismatch(format!(
            "output arrays of shapes {:?} and {:?}, expected {expected:?}",
            data.shape(),
            footprint.shape()
        )));
    }
    let executor = plan.executor()?;
    let (by, bx) = plan.block_shape();
    let count = ny.div_ceil(by).saturating_mul(nx.div_ceil(bx));
    let per_block = std::mem::size_of::<(Block, ArrayViewMut3<T>, ArrayViewMut3<T>)>();
    check_working_memory(count.saturating_mul(per_block), || {
        (
            format!("the list of {count} blocks of {by}x{bx} pixels"),
            "use a larger block_size",
        )
    })?;
    let work = cut(data.view_mut(), footprint.view_mut(), (by, bx));
    let count = work.len();
    type Work<'a, T> = (usize, (Block, ArrayViewMut3<'a, T>, ArrayViewMut3<'a, T>));
    let run_one = |(index, (block, d, f)): Work<T>| {
        if schedule.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled(format!(
                "cancelled with {count} blocks scheduled"
            )));
        }
        plan.compute_block(&block, d, f)
            .map_err(|e| in_block(e, &block))?;
        if let Some(progress) = schedule.progress {
            progress(index);
        }
        Ok(())
    };
    let parallel = executor.parallel(
        schedule.parallel.unwrap_or(plan.options().parallel),
        plan.outputs_fresh(),
    );
    if let Some(cuda) = executor.as_cuda() {
        // The GPU's blocks in the order their input arrives on the device.
        let blocks: Vec<Block> = work.iter().map(|(b, _, _)| b.clone()).collect();
        let order = cuda.block_order(plan, &blocks);
        in_order(work, &order, parallel, run_one)?;
        return Ok(count);
    }
    match parallel {
        Parallel::Serial => work.into_iter().enumerate().try_for_each(run_one)?,
        parallel => {
            parallel.install(|| work.into_par_iter().enumerate().try_for_each(run_one))??
        }
    }
    Ok(count)
}

/// Runs `f` on every item of `work` (with its index) in the order `order` gives (indices of
/// `work`), on `parallel`'s threads, each thread taking the next item when it is free.
fn in_order<W: Send>(
    work: Vec<W>,
    order: &[usize],
    parallel: Parallel,
    f: impl Fn((usize, W)) -> Result<()> + Sync,
) -> Result<()> {
    let mut items: Vec<Option<W>> = work.into_iter().map(Some).collect();
    let queue: Vec<(usize, W)> = order
        .iter()
        .filter_map(|&i| items.get_mut(i).and_then(Option::take).map(|w| (i, w)))
        .collect();
    let threads = parallel.threads();
    let queue = std::sync::Mutex::new(queue.into_iter());
    let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).next();
    // The first error stops every thread before its next item.
    let stop = AtomicBool::new(false);
    let drain = || -> Result<()> {
        while let Some(item) = next().filter(|_| !stop.load(Ordering::Relaxed)) {
            f(item).inspect_err(|_| stop.store(true, Ordering::Relaxed))?;
        }
        Ok(())
    };
    match parallel {
        Parallel::Serial => drain(),
        parallel => parallel.install(|| (0..threads).into_par_iter().try_for_each(|_| drain()))?,
    }
}

/// Disjoint views, one per block in row-major order: bands of rows, then columns within each
/// band.
pub(crate) fn cut<'a, T>(
    data: ArrayViewMut3<'a, T>,
    footprint: ArrayViewMut3<'a, T>,
    (by, bx): (usize, usize),
) -> Vec<(Block, ArrayViewMut3<'a, T>, ArrayViewMut3<'a, T>)> {
    let mut work = Vec::new();
    let bands = split_chunks(data, Axis(1), by)
        .into_iter()
        .zip(split_chunks(footprint, Axis(1), by));
    for (band, (d, f)) in bands.enumerate() {
        let tiles = split_chunks(d, Axis(2), bx)
            .into_iter()
            .zip(split_chunks(f, Axis(2), bx));
        for (tile, (d, f)) in tiles.enumerate() {
            let block = Block {
                rows: band * by..(band * by + d.shape()[1]),
                cols: tile * bx..(tile * bx + d.shape()[2]),
            };
            work.push((block, d, f));
        }
    }
    work
}

/// Cuts a view into consecutive chunks of `size` along `axis` (the last one shorter), each
/// keeping the lifetime of the whole.
fn split_chunks<T>(
    mut view: ArrayViewMut3<'_, T>,
    axis: Axis,
    size: usize,
) -> Vec<ArrayViewMut3<'_, T>> {
    let mut chunks = Vec::with_capacity(view.len_of(axis).div_ceil(size.max(1)));
    while view.len_of(axis) > size {
        let (head, tail) = view.split_at(axis, size);
        chunks.push(head);
        view = tail;
    }
    chunks.push(view);
    chunks
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::engine::executor::{BlockExecutor, BlockOut, CpuExecutor};
    use crate::engine::{zeroed_output, Options};
    use crate::io::ArraySource;
    use crate::wcs::Wcs;

    /// The CPU engine, recording what the scheduler says of the outputs.
    #[derive(Default)]
    struct Recording(Mutex<Vec<bool>>);

    impl BlockExecutor for Recording {
        fn name(&self) -> String {
            "recording".into()
        }
        fn compute(&self, plan: &Plan, block: &Block, out: BlockOut<'_>) -> Result<()> {
            CpuExecutor.compute(plan, block, out)
        }
        fn parallel(&self, requested: Parallel, fresh_outputs: bool) -> Parallel {
            self.0.lock().unwrap().push(fresh_outputs);
            requested
        }
    }

    /// How a plan hears of its outputs.
    #[derive(Clone, Copy)]
    enum Told {
        Nothing,
        Fresh,
        AskedOfTheOutputs,
    }

    /// What the scheduler tells the executor of outputs of `n`² float64 pixels each, given
    /// fresh (`written` false) or written before, for a plan told `told`.
    fn told_fresh(n: usize, written: bool, told: Told) -> bool {
        let wcs = Wcs::from_header_str(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -0.001\nCDELT2 = 0.001\n",
        )
        .unwrap();
        let image = ndarray::Array2::<f32>::ones((8, 8));
        let source = ArraySource::new(image.view().into_dyn()).unwrap();
        let options = Options {
            block_size: Some((n, n)),
            ..Options::default()
        };
        let mut data = zeroed_output::<f64>(&[1, n, n]);
        let mut footprint = zeroed_output::<f64>(&[1, n, n]);
        if written {
            data.fill(-1.0);
            footprint.fill(-1.0);
        }
        let recording = Arc::new(Recording::default());
        let plan = Plan::new(&source, &wcs, &wcs, &[n, n], &options).unwrap();
        let plan = match told {
            Told::Nothing => plan,
            Told::Fresh => plan.with_fresh_outputs(16 * (n * n) as u64),
            Told::AskedOfTheOutputs => plan
                .with_untouched_outputs(&[data.as_slice().unwrap(), footprint.as_slice().unwrap()]),
        }
        .with_executor(recording.clone());
        let data = data.view_mut().into_dimensionality().unwrap();
        let footprint = footprint.view_mut().into_dimensionality().unwrap();
        run(&plan, data, footprint, &Schedule::default()).unwrap();
        let told = recording.0.lock().unwrap();
        assert_eq!(told.len(), 1);
        told[0]
    }

    #[test]
    fn the_executor_hears_what_the_plan_was_told_of_its_outputs() {
        // 32 MiB each: the allocator maps fresh pages
        let n = 2048;
        // The scheduler does not guess: the plan says.
        assert!(!told_fresh(n, false, Told::Nothing));
        assert!(told_fresh(n, false, Told::Fresh));
        assert!(told_fresh(n, true, Told::Fresh));
        // Asked of the outputs: fresh only where they were never written.
        assert!(told_fresh(n, false, Told::AskedOfTheOutputs));
        assert!(!told_fresh(n, true, Told::AskedOfTheOutputs));
    }
}

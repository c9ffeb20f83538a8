//! The thread pools [`Parallel::install`](crate::engine::Parallel::install) runs work on.
//!
//! * `Serial` and `Threads(n)`: a pool of the calling thread's own, made on its first use and
//!   kept for its next calls (pools of [`POOLS_PER_THREAD`] sizes at most per thread). Making a
//!   pool and its threads was a third of a small spline job's time on an idle machine (a 64²
//!   bicubic job, serial: 0.48 ms with a new pool for each of its steps, 0.32 ms with kept
//!   ones; `cargo bench --bench reproject -- small_64`), and most of it on a busy one, where
//!   the new threads spin against the work. Pools are never shared between calling threads, so
//!   concurrent callers do not wait for each other's threads, as with a new pool per call, and
//!   a thread computing a plan's spline coefficients for blocks that wait for them
//!   (`Plan::coefficients`) is a new thread, with pools of its own.
//! * `AllCores`: rayon's global pool.
//!
//! A process forked from one that has pools (Python's `multiprocessing` on Linux forks) gets
//! copies of them without their threads, and a job given to one waits for ever. So a forked
//! process leaves the pools it inherited (they cannot be taken apart without their threads),
//! makes its own, and runs `AllCores` work on a pool of every core of its own instead of
//! rayon's global pool, which the parent may have started.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use rayon::ThreadPool;

use crate::error::{Error, Result};

/// How many pools (of different sizes) a calling thread keeps; the one used least recently
/// goes when another size is needed.
const POOLS_PER_THREAD: usize = 4;

/// A calling thread's pools, the most recently used last, and the process that made them.
struct ThreadPools {
    pid: u32,
    pools: Vec<Arc<ThreadPool>>,
}

thread_local! {
    static POOLS: RefCell<ThreadPools> = RefCell::new(ThreadPools {
        pid: std::process::id(),
        pools: Vec::new(),
    });
}

/// The calling thread's pool of `n` threads, made if it has none.
pub(crate) fn this_threads(n: usize) -> Result<Arc<ThreadPool>> {
    POOLS.with(|cell| {
        let mut this = cell.borrow_mut();
        let pid = std::process::id();
        if this.pid != pid {
            std::mem::forget(std::mem::take(&mut this.pools));
            this.pid = pid;
        }
        let pools = &mut this.pools;
        let pool = match pools.iter().position(|p| p.current_num_threads() == n) {
            Some(i) => pools.remove(i),
            None => Arc::new(new_pool(n)?),
        };
        if pools.len() == POOLS_PER_THREAD {
            pools.remove(0);
        }
        pools.push(pool.clone());
        Ok(pool)
    })
}

/// Runs `f` on every core: on rayon's global pool (or the pool the caller runs on already),
/// in a forked process on a pool of its own ([`all_cores`]).
pub(crate) fn on_all_cores<R: Send>(f: impl FnOnce() -> R + Send) -> Result<R> {
    Ok(match all_cores()? {
        Some(pool) => pool.install(f),
        None => f(),
    })
}

/// Where `AllCores` work runs: `None` for rayon's global pool (or the pool the caller already
/// runs on), a pool of every core of this process's own in a forked process.
fn all_cores() -> Result<Option<Arc<ThreadPool>>> {
    if !forked() || rayon::current_thread_index().is_some() {
        return Ok(None);
    }
    static OWN: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut own = OWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((made_by, pool)) = own.as_ref()
        && *made_by == pid
    {
        return Ok(Some(pool.clone()));
    }
    std::mem::forget(own.take()); // inherited from the process this one was forked from
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = Arc::new(new_pool(cores)?);
    *own = Some((pid, pool.clone()));
    Ok(Some(pool))
}

fn new_pool(n: usize) -> Result<ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start {n} threads: {e}")))
}

/// The process that loaded this library, recorded as it is loaded (before `main`, or when
/// Python imports the extension); 0 where the platform runs no ELF initialisers.
static LOAD_PID: AtomicU32 = AtomicU32::new(0);

#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_LOAD_PID: extern "C" fn() = {
    extern "C" fn record() {
        LOAD_PID.store(std::process::id(), Ordering::Relaxed);
    }
    record
};

/// Whether this process was forked from the one that loaded this library.
fn forked() -> bool {
    let loaded_by = LOAD_PID.load(Ordering::Relaxed);
    loaded_by != 0 && loaded_by != std::process::id()
}

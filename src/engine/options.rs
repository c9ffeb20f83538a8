//! How a job runs: the threads that compute its blocks ([`Parallel`]) and every option of a
//! plan ([`Options`]).

use serde::{Deserialize, Serialize};

use super::{Backend, Devices, Precision};
use crate::error::Result;
use crate::interp::{NanPolicy, Order};
use crate::pools;

/// How many threads compute blocks.
///
/// ```
/// use reproject::engine::Parallel;
/// assert_eq!(Parallel::from_threads(1), Parallel::Serial);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Parallel {
    /// One thread (reproject's `parallel=False`).
    #[default]
    Serial,
    /// Every core (rayon's global pool; reproject's `parallel=True`).
    AllCores,
    /// This many threads.
    Threads(usize),
}

impl Parallel {
    /// `Serial` for 0 or 1 thread, otherwise `Threads(n)`.
    ///
    /// ```
    /// use reproject::engine::Parallel;
    /// assert_eq!(Parallel::from_threads(0), Parallel::Serial);
    /// assert_eq!(Parallel::from_threads(4), Parallel::Threads(4));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn from_threads(n: usize) -> Parallel {
        if n <= 1 {
            Parallel::Serial
        } else {
            Parallel::Threads(n)
        }
    }

    /// The number of threads this setting uses.
    ///
    /// ```
    /// use reproject::engine::Parallel;
    /// assert_eq!(Parallel::Serial.threads(), 1);
    /// assert_eq!(Parallel::Threads(3).threads(), 3);
    /// assert_eq!(Parallel::AllCores.threads(), rayon::current_num_threads());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn threads(self) -> usize {
        match self {
            Parallel::Serial => 1,
            Parallel::AllCores => rayon::current_num_threads(),
            Parallel::Threads(n) => n.max(1),
        }
    }

    /// Runs `f` so that the rayon work inside it uses this many threads: rayon's global pool
    /// for `AllCores`, otherwise a pool of this calling thread's own (one thread for
    /// `Serial`), made on its first use and kept for its next calls (see
    /// `src/pools.rs`: also what a forked process does instead).
    ///
    /// ```
    /// use reproject::engine::Parallel;
    /// assert_eq!(Parallel::Serial.install(rayon::current_num_threads)?, 1);
    /// assert_eq!(Parallel::Threads(3).install(rayon::current_num_threads)?, 3);
    /// // The same threads the next time.
    /// let first = Parallel::Serial.install(|| std::thread::current().id())?;
    /// assert_eq!(Parallel::Serial.install(|| std::thread::current().id())?, first);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn install<R: Send>(self, f: impl FnOnce() -> R + Send) -> Result<R> {
        match self {
            Parallel::AllCores => pools::on_all_cores(f),
            _ => Ok(pools::this_threads(self.threads())?.install(f)),
        }
    }
}

/// Options of [`reproject_interp`](super::reproject_interp), with astropy reproject's defaults.
///
/// ```
/// use reproject::engine::Options;
/// use reproject::interp::Order;
/// let o = Options { order: "bicubic".parse()?, ..Options::default() };
/// assert_eq!(o.order, Order::Bicubic);
/// assert!(o.roundtrip_coords);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Interpolation order (reproject's `order`, default bilinear).
    pub order: Order,
    /// What NaN input pixels do (reproject's behaviour by default).
    pub nan_policy: NanPolicy,
    /// Drop output pixels whose input position does not map back within one output pixel
    /// (reproject's `roundtrip_coords`, default true).
    pub roundtrip_coords: bool,
    /// Output block shape (rows, columns); `None` chooses one from the shape and thread count.
    pub block_size: Option<(usize, usize)>,
    /// Threads.
    pub parallel: Parallel,
    /// Whether to follow reproject's float32 rounding of results for float32 and integer
    /// inputs and its SIP inversion tolerance (default), or keep everything in float64 with
    /// SIP inverted to 1e-12 px.
    pub precision: Precision,
    /// Opt-in approximate transform: positions interpolated over 16-pixel cells wherever that
    /// stays within this many input pixels of the exact transform at the checked points (see
    /// [`CoordinateMap::with_approximation`](super::coords::CoordinateMap::with_approximation));
    /// `None` (default) computes every pixel exactly.
    pub approximate: Option<f64>,
    /// CPU or GPU ([`Backend`]; default `Auto`: the GPU for jobs large enough for it to pay,
    /// else the CPU). `Auto` and `Cuda` run the blocks on the GPU when it can do the job;
    /// `Auto` falls back to the CPU. Options serialised before there was a backend (a job
    /// file left to resume) read as the CPU they were computed on.
    #[serde(default = "Backend::before_backends")]
    pub backend: Backend,
    /// Which GPUs a GPU backend uses ([`Devices`]; default the first).
    #[serde(default)]
    pub devices: Devices,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            order: Order::Bilinear,
            nan_policy: NanPolicy::Propagate,
            roundtrip_coords: true,
            block_size: None,
            parallel: Parallel::Serial,
            precision: Precision::Reproject,
            approximate: None,
            backend: Backend::Auto,
            devices: Devices::First,
        }
    }
}

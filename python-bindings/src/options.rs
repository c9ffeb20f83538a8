//! Conversion of Python arguments into core [`Options`].
//!
//! ```text
//! order, nan_policy, precision ─core FromStr─▶ Order, NanPolicy, Precision
//! device 'cpu' | 'auto' | 'cuda' | 'cuda:N' | 'cuda:all' ─parse_device─▶ Backend + Devices
//! block_size, threads ─checked─▶ block_size, Parallel
//! ```

use pyo3::prelude::*;
use reproject::engine::{Backend, Devices, Options, Parallel, Precision};
use reproject::interp::{NanPolicy, Order};

use crate::errors::{new_err, to_pyerr, Kind};

/// The device names `device=` takes, for messages.
pub const DEVICE_NAMES: &str = "'cpu', 'auto', 'cuda', 'cuda:N' or 'cuda:all'";

/// Parses `device=` with the core's [`reproject::gpu::parse_device`]: `'cpu'`, `'auto'`,
/// `'cuda'` (also `'gpu'`, any case), `'cuda:N'`, `'cuda:all'`. A bad value is an
/// `InvalidArgumentError` (a `ValueError`) in the package's words.
pub fn parse_device(py: Python<'_>, device: &str) -> PyResult<(Backend, Devices)> {
    reproject::gpu::parse_device(device).map_err(|e| {
        new_err(
            py,
            Kind::InvalidArgument,
            format!("device should be one of {DEVICE_NAMES}, got '{device}' ({e})"),
        )
    })
}

/// The canonical name of a parsed device: `cpu`, `auto`, `cuda`, `cuda:N`, `cuda:all`
/// (`auto:N` for a GPU that `auto` prefers).
pub fn device_name(backend: Backend, devices: Devices) -> String {
    match (backend, devices) {
        (Backend::Cpu, _) | (_, Devices::First) => backend.to_string(),
        (backend, devices) => format!("{backend}:{devices}"),
    }
}

/// `order`: a name (`'bilinear'`, ...) or a spline degree 0-5.
#[derive(FromPyObject)]
pub enum OrderArg {
    /// A spline degree (0-5).
    Degree(i64),
    /// A name: `'nearest-neighbor'`, `'bilinear'`, `'biquadratic'`, `'bicubic'`, ...
    Name(String),
}

impl OrderArg {
    fn order(&self, py: Python<'_>) -> PyResult<Order> {
        match self {
            OrderArg::Degree(k) => Order::try_from(*k),
            OrderArg::Name(name) => name.parse(),
        }
        .map_err(|e| to_pyerr(py, e))
    }
}

/// Everything the engine needs besides the data and the WCS.
pub struct OptionArgs<'a> {
    /// Interpolation order (`None`: bilinear).
    pub order: Option<OrderArg>,
    /// reproject's `roundtrip_coords`.
    pub roundtrip_coords: bool,
    /// Output block shape (rows, columns); `None`: the engine's (or executor's) choice.
    pub block_size: Option<(usize, usize)>,
    /// 0: every core, 1: serial, n: n threads.
    pub threads: usize,
    /// `'propagate'` or `'renormalize'`.
    pub nan_policy: &'a str,
    /// `'reproject'` or `'float64'`.
    pub precision: &'a str,
    /// `'cpu'`, `'auto'`, `'cuda'`, `'cuda:N'` or `'cuda:all'` ([`parse_device`]).
    pub device: &'a str,
}

impl<'a> OptionArgs<'a> {
    /// Serial options with the engine's own block shape (`block_size: None`, `threads: 1`,
    /// `device: "auto"`, the default device); set those fields with struct update syntax
    /// where the caller gives them.
    pub fn serial(
        order: Option<OrderArg>,
        roundtrip_coords: bool,
        nan_policy: &'a str,
        precision: &'a str,
    ) -> Self {
        OptionArgs {
            order,
            roundtrip_coords,
            block_size: None,
            threads: 1,
            nan_policy,
            precision,
            device: "auto",
        }
    }

    /// The core options these arguments describe, or the Python exception for the first bad
    /// one.
    pub fn options(&self, py: Python<'_>) -> PyResult<Options> {
        let order = match &self.order {
            None => Order::Bilinear,
            Some(o) => o.order(py)?,
        };
        // The core's own parsers (FromStr): the same names and errors as the core's users.
        let nan_policy: NanPolicy = self.nan_policy.parse().map_err(|e| to_pyerr(py, e))?;
        let precision: Precision = self.precision.parse().map_err(|e| to_pyerr(py, e))?;
        if let Some((by, bx)) = self.block_size
            && (by == 0 || bx == 0)
        {
            return Err(new_err(
                py,
                Kind::InvalidArgument,
                format!("block_size must be positive, got ({by}, {bx})"),
            ));
        }
        let (backend, devices) = parse_device(py, self.device)?;
        let parallel = match self.threads {
            0 => Parallel::AllCores,
            n => Parallel::from_threads(n),
        };
        Ok(Options {
            order,
            nan_policy,
            roundtrip_coords: self.roundtrip_coords,
            block_size: self.block_size,
            parallel,
            precision,
            backend,
            devices,
            ..Options::default()
        })
    }
}

//! Conversion of Python arguments into core [`Options`].

use pyo3::prelude::*;
use reproject::engine::{Options, Parallel, Precision};
use reproject::interp::{NanPolicy, Order};

use crate::errors::{new_err, to_pyerr, Kind};

/// `order`: a name (`'bilinear'`, ...) or a spline degree 0-5.
#[derive(FromPyObject)]
pub enum OrderArg {
    Degree(i64),
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
    pub order: Option<OrderArg>,
    pub roundtrip_coords: bool,
    pub block_size: Option<(usize, usize)>,
    /// 0: every core, 1: serial, n: n threads.
    pub threads: usize,
    pub nan_policy: &'a str,
    pub precision: &'a str,
}

impl<'a> OptionArgs<'a> {
    /// Serial options with the engine's own block shape (`block_size: None`, `threads: 1`);
    /// set those two fields with struct update syntax where the caller gives them.
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
        }
    }

    pub fn options(&self, py: Python<'_>) -> PyResult<Options> {
        let order = match &self.order {
            None => Order::Bilinear,
            Some(o) => o.order(py)?,
        };
        // The core's own parsers (FromStr): the same names and errors as the core's users.
        let nan_policy: NanPolicy = self.nan_policy.parse().map_err(|e| to_pyerr(py, e))?;
        let precision: Precision = self.precision.parse().map_err(|e| to_pyerr(py, e))?;
        if let Some((by, bx)) = self.block_size {
            if by == 0 || bx == 0 {
                return Err(new_err(
                    py,
                    Kind::InvalidArgument,
                    format!("block_size must be positive, got ({by}, {bx})"),
                ));
            }
        }
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
            ..Options::default()
        })
    }
}

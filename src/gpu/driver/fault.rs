//! How a driver call fails: the kind of failure, the fault a call reports, and the result
//! type of every driver call.

use std::fmt;

/// How a driver call failed.
///
/// ```
/// use reproject::gpu::driver::{Driver, FaultKind};
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// sim.inject(Some((0, FaultKind::Other)));
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Other);
/// assert!(sim.alloc(8).is_ok()); // one call failed: the next succeeds
/// sim.inject(Some((sim.calls().len(), FaultKind::Sticky)));
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Sticky);
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Sticky); // poisoned for good
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Out of device (or page-locked host) memory; the context stays usable.
    OutOfMemory,
    /// A sticky error (an illegal address, say): the context is poisoned and every later call
    /// on it fails.
    Sticky,
    /// Any other failure of one call (a launch that did not start, an invalid value).
    Other,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultKind::OutOfMemory => "out of memory",
            FaultKind::Sticky => "sticky error (context poisoned)",
            FaultKind::Other => "error",
        })
    }
}

/// A failed driver call: which call, what kind of failure, the driver's message.
///
/// ```
/// use reproject::gpu::driver::{DriverFault, FaultKind};
/// let f = DriverFault::new("cuMemAlloc", FaultKind::OutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY");
/// assert_eq!(f.to_string(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverFault {
    /// The driver call, e.g. `cuLaunchKernel`.
    pub call: &'static str,
    /// What kind of failure.
    pub kind: FaultKind,
    /// The driver's words.
    pub message: String,
}

impl DriverFault {
    /// A fault of `call`.
    ///
    /// ```
    /// use reproject::gpu::driver::{DriverFault, FaultKind};
    /// let why = format!("grid of {} blocks", 0);
    /// let f = DriverFault::new("cuLaunchKernel", FaultKind::Other, why);
    /// assert_eq!((f.call, f.kind), ("cuLaunchKernel", FaultKind::Other));
    /// assert_eq!(f.message, "grid of 0 blocks");
    /// ```
    pub fn new(call: &'static str, kind: FaultKind, message: impl Into<String>) -> DriverFault {
        DriverFault {
            call,
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for DriverFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.message)
    }
}

/// The result of a driver call.
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, Driver, DriverResult, FaultKind};
/// use reproject::gpu::sim::SimDriver;
/// fn staged(d: &dyn Driver, bytes: &[u8]) -> DriverResult<DevicePtr> {
///     let ptr = d.alloc(bytes.len())?;
///     d.upload_now(bytes, ptr)?;
///     Ok(ptr)
/// }
/// let sim = SimDriver::new(Default::default());
/// assert!(staged(&sim, &[1, 2, 3]).is_ok());
/// sim.inject(Some((sim.calls().len(), FaultKind::OutOfMemory)));
/// assert_eq!(staged(&sim, &[1, 2, 3]).unwrap_err().call, "cuMemAlloc");
/// ```
pub type DriverResult<T> = std::result::Result<T, DriverFault>;

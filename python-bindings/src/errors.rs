//! Python exceptions and the mapping of the core's [`reproject::Error`] onto them.
//!
//! ```text
//! Exception
//! └── ReprojectError                       (create_exception!)
//!     ├── ShapeError        (+ ValueError)  shapes that do not fit together
//!     ├── InvalidArgumentError (+ ValueError) an argument outside its range
//!     ├── WcsError          (+ ValueError)  a header the WCS engine cannot use
//!     ├── UnsupportedError  (+ NotImplementedError) valid but not implemented
//!     ├── ReprojectIOError  (+ OSError)     reading failed
//!     └── DeviceUnavailableError (+ RuntimeError) the requested device (CUDA) cannot be used
//! ```
//!
//! The subclasses have two bases, which `create_exception!` cannot express, so they are
//! created with `type(name, (ReprojectError, ValueError), {...})` when the module loads and
//! stored as module attributes (pickle finds them as `reproject_rs._core.<name>`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::exceptions::{
    PyException, PyNotImplementedError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::PyTypeInfo;
use reproject::Error;

pyo3::create_exception!(
    reproject_rs._core,
    ReprojectError,
    PyException,
    "Base class of every error raised by reproject_rs.

>>> import numpy as np
>>> import reproject_rs
>>> try:
...     reproject_rs.warmup(\"tpu\")
... except reproject_rs.ReprojectError as e:
...     print(type(e).__name__)
InvalidArgumentError
"
);

/// Which Python subclass an error maps to.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Shape,
    InvalidArgument,
    Wcs,
    Unsupported,
    Io,
    DeviceUnavailable,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Shape,
        Kind::InvalidArgument,
        Kind::Wcs,
        Kind::Unsupported,
        Kind::Io,
        Kind::DeviceUnavailable,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Shape => "ShapeError",
            Kind::InvalidArgument => "InvalidArgumentError",
            Kind::Wcs => "WcsError",
            Kind::Unsupported => "UnsupportedError",
            Kind::Io => "ReprojectIOError",
            Kind::DeviceUnavailable => "DeviceUnavailableError",
        }
    }

    /// The class's docstring, with an example (run by tests/test_docstring_examples.py).
    fn doc(self) -> &'static str {
        match self {
            Kind::Shape => {
                "Array shapes that do not fit together (also a ValueError).

>>> import numpy as np
>>> from astropy.wcs import WCS
>>> from reproject_rs import reproject_block
>>> header = WCS(naxis=2).to_header_string()
>>> reproject_block(np.ones((8, 8)), header, header, (8,), (0, 1), (0, 1))
Traceback (most recent call last):
...
reproject_rs._core.ShapeError: too few dimensions in shape_out: [8]
"
            }
            Kind::InvalidArgument => {
                "An argument outside its documented range (also a ValueError).

>>> import reproject_rs
>>> try:
...     reproject_rs.warmup(\"tpu\")
... except ValueError as e:
...     print(type(e).__name__)
InvalidArgumentError
"
            }
            Kind::Wcs => {
                "A WCS header the engine cannot use (also a ValueError).

>>> import numpy as np
>>> from astropy.wcs import WCS
>>> from reproject_rs import reproject_block
>>> wcs = WCS(naxis=2)
>>> wcs.wcs.ctype = [\"RA---TAN\", \"DEC--TAN\"]
>>> header = wcs.to_header_string()
>>> reproject_block(np.ones((8, 8)), header.replace(\"TAN\", \"XYZ\"), header, (8, 8),
...                 (0, 8), (0, 8))
Traceback (most recent call last):
...
reproject_rs._core.WcsError: input WCS: unknown projection code 'XYZ'
"
            }
            Kind::Unsupported => {
                "A valid request that reproject_rs does not implement (also a NotImplementedError).

>>> from reproject_rs import _core
>>> cube = (\"NAXIS = 3\\nCTYPE1 = 'RA---TAN'\\nCTYPE2 = 'DEC--TAN'\\n\"
...         \"CTYPE3 = 'WAVE-TAB'\\nCRVAL1 = 0\\nCRVAL2 = 0\\n\")
>>> _core.check_plan(cube, cube, (2, 8, 8), (2, 8, 8))
Traceback (most recent call last):
...
reproject_rs._core.UnsupportedError: unsupported axis type 'WAVE-TAB'
"
            }
            Kind::Io => {
                "Reading the input failed (also an OSError).

>>> import reproject_rs
>>> issubclass(reproject_rs.ReprojectIOError, (reproject_rs.ReprojectError, OSError))
True
"
            }
            Kind::DeviceUnavailable => {
                "The requested device (device='cuda') cannot be used: no NVIDIA driver, GPU or \
                 libnvrtc, or a GPU failure (also a RuntimeError).

>>> import numpy as np
>>> from astropy.wcs import WCS
>>> from reproject_rs import reproject_interp
>>> wcs = WCS(naxis=2)
>>> try:
...     reproject_interp((np.ones((8, 8)), wcs), wcs, shape_out=(8, 8), device=\"cuda:99\")
... except RuntimeError as e:
...     print(type(e).__name__)
DeviceUnavailableError
"
            }
        }
    }

    fn second_base(self, py: Python<'_>) -> Bound<'_, PyType> {
        match self {
            Kind::Shape | Kind::InvalidArgument | Kind::Wcs => PyValueError::type_object(py),
            Kind::Unsupported => PyNotImplementedError::type_object(py),
            Kind::Io => PyOSError::type_object(py),
            Kind::DeviceUnavailable => PyRuntimeError::type_object(py),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static SUBCLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// The subclasses, created on first use.
fn subclasses(py: Python<'_>) -> PyResult<&Vec<Py<PyType>>> {
    SUBCLASSES.get_or_try_init(py, || {
        let base = ReprojectError::type_object(py);
        Kind::ALL
            .iter()
            .map(|&kind| {
                let dict = PyDict::new(py);
                dict.set_item("__module__", "reproject_rs._core")?;
                dict.set_item("__doc__", kind.doc())?;
                let bases = PyTuple::new(py, [base.clone(), kind.second_base(py)])?;
                let ty = PyType::type_object(py).call1((kind.name(), bases, dict))?;
                Ok(ty.cast_into::<PyType>()?.unbind())
            })
            .collect()
    })
}

/// The exception class of `kind`.
pub fn exception_type(py: Python<'_>, kind: Kind) -> PyResult<Bound<'_, PyType>> {
    Ok(subclasses(py)?[kind.index()].bind(py).clone())
}

/// Adds `ReprojectError` and its subclasses to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ReprojectError", ReprojectError::type_object(py))?;
    for kind in Kind::ALL {
        m.add(kind.name(), exception_type(py, kind)?)?;
    }
    Ok(())
}

/// A Python exception of `kind` with `message`.
pub fn new_err(py: Python<'_>, kind: Kind, message: impl Into<String>) -> PyErr {
    match exception_type(py, kind) {
        Ok(ty) => PyErr::from_type(ty, message.into()),
        Err(e) => e,
    }
}

/// The Python class a core error belongs to.
pub fn kind_of(err: &Error) -> Kind {
    match err {
        Error::ShapeMismatch(_) => Kind::Shape,
        Error::InvalidArgument(_) => Kind::InvalidArgument,
        // Valid requests the engine does not implement: non-celestial axis changes beyond a
        // separable third axis of the same type and unit (Unsupported), and non-celestial
        // (e.g. linear pixel) WCS pairs, valid reproject input.
        Error::Unsupported(_) | Error::UnsupportedAxis(_) | Error::NoCelestialAxes => {
            Kind::Unsupported
        }
        Error::Fits(_) | Error::Io(_) | Error::OutputBusy(_) | Error::OutputExists(_) => Kind::Io,
        Error::GpuUnavailable(_) | Error::Gpu { .. } => Kind::DeviceUnavailable,
        // Header parsing and WCS set-up: MalformedCard, MissingKeyword, InvalidValue,
        // DuplicateKeyword, MalformedCtype, UnknownProjection, InconsistentAxes, PvOutOfRange,
        // InvalidProjectionParameters, SingularMatrix, InvalidCelestial, and anything added to
        // the (non-exhaustive) enum later.
        _ => Kind::Wcs,
    }
}

/// Converts a core error into the matching Python exception.
pub fn to_pyerr(py: Python<'_>, err: Error) -> PyErr {
    match err {
        // Nothing the caller passed was wrong: the base class.
        Error::Cancelled(_) => ReprojectError::new_err(err.to_string()),
        err => new_err(py, kind_of(&err), err.to_string()),
    }
}

/// Runs `f` with the GIL released, turning core errors into Python exceptions and a panic
/// into a `ReprojectError` (no panic ever crosses into Python).
pub fn run_detached<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: Send + FnOnce() -> reproject::Result<T>,
    T: Send,
{
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(to_pyerr(py, err)),
        Err(payload) => Err(panic_error(payload)),
    }
}

/// Like [`run_detached`], for a job that may run long enough for a user to stop it with
/// Ctrl-C (a KeyboardInterrupt; Jupyter's "interrupt kernel"): `f` runs on a thread of its own
/// while this one, every [`SIGNAL_POLL`], takes the GIL and lets Python handle its signals.
/// When a handler raises, `f`'s `cancel` is set (the blocks not yet started are skipped, the
/// ones running finish) and that exception is raised once `f` has returned, whatever `f`
/// gave. Only Python's main thread handles signals; elsewhere this waits as `run_detached`.
pub fn run_interruptible<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: Send + FnOnce(&AtomicBool) -> reproject::Result<T>,
    T: Send,
{
    let cancel = AtomicBool::new(false);
    let mut interrupted: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let waiter = std::thread::current();
        std::thread::scope(|scope| {
            let job = scope.spawn(|| {
                let outcome = catch_unwind(AssertUnwindSafe(|| f(&cancel)));
                waiter.unpark();
                outcome
            });
            while !job.is_finished() {
                std::thread::park_timeout(SIGNAL_POLL);
                if interrupted.is_none()
                    && let Err(err) = Python::attach(|py| py.check_signals())
                {
                    cancel.store(true, Ordering::Relaxed);
                    interrupted = Some(err);
                }
            }
            job.join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
        })
    });
    if let Some(err) = interrupted {
        return Err(err);
    }
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(to_pyerr(py, err)),
        Err(payload) => Err(panic_error(payload)),
    }
}

/// Runs a job of `pixels` output pixels (every plane) with the GIL released: from
/// [`INTERRUPTIBLE_PIXELS`] on, through [`run_interruptible`], so that Ctrl-C stops it
/// (`f` gets the cancel flag); below, through [`run_detached`] (`f` gets `None`), since a
/// small job is over before a user could press Ctrl-C and is spared the thread it takes.
pub fn run_for_size<T, F>(py: Python<'_>, pixels: usize, f: F) -> PyResult<T>
where
    F: Send + FnOnce(Option<&AtomicBool>) -> reproject::Result<T>,
    T: Send,
{
    if pixels >= INTERRUPTIBLE_PIXELS {
        run_interruptible(py, |cancel| f(Some(cancel)))
    } else {
        run_detached(py, || f(None))
    }
}

/// Output pixels (every plane) from which [`run_for_size`] lets Ctrl-C stop a job: 4M
/// pixels take tens of milliseconds at least.
pub const INTERRUPTIBLE_PIXELS: usize = 1 << 22;

/// How often [`run_interruptible`] lets Python handle signals.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Runs `f` with the GIL held, turning a panic into a `ReprojectError`.
pub fn guard_panics<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panic_error(payload)))
}

fn panic_error(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    ReprojectError::new_err(format!("internal error in reproject_rs (a bug): {message}"))
}

"""reproject_rs: astropy reproject's ``reproject_interp``, computed by the reproject-rs Rust
engine.

>>> import numpy as np
>>> from astropy.wcs import WCS
>>> from reproject_rs import reproject_interp
>>> wcs = WCS(naxis=2)
>>> wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
>>> array, footprint = reproject_interp((np.ones((4, 4)), wcs), wcs, shape_out=(4, 4))
>>> float(array.sum()), float(footprint.sum())
(16.0, 16.0)

(``input_data`` as reproject takes it: an HDU, a FITS file name, ``(array, wcs)``, ...)

``reproject_interp`` takes reproject 0.21's arguments and returns the same values; the
engine reads numpy arrays of any real dtype, byte order and strides in place and releases
the GIL while it computes. Lower level:

* ``reproject_rs._core.reproject_interp(array, header_in, header_out, shape_out, ...)``:
  one call on header text;
* ``reproject_rs.reproject_block(array, header_in, header_out, shape_out, rows, cols, ...)``:
  one output block, self-contained;
* ``reproject_interp(..., return_type='lazy')``: a :class:`LazyReprojection`, whose
  ``.blocks()`` handles compute on demand from one prepared engine plan (``_core.LazyPlan``).

``device=`` ('auto', the default: the GPU for jobs large enough for it to pay, else the CPU;
'cpu', 'cuda', 'cuda:N', 'cuda:all') picks where every block computes, for numpy, dask and
lazy results alike; :func:`warmup` opens the GPUs and compiles their
kernels ahead of the first job (e.g. on each dask worker), :func:`release_gpu_memory` frees
what they keep for the next jobs. Setting the environment variable
``REPROJECT_RS_CUDA_SIM=1`` before the first GPU use runs the GPU pipeline on a simulated
GPU (for tests on machines without one).

Errors derive from :class:`ReprojectError`; bad arguments and shapes are also
:class:`ValueError`.
"""

import atexit as _atexit

from ._core import (
    DeviceUnavailableError,
    InvalidArgumentError,
    ReprojectError,
    ReprojectIOError,
    ShapeError,
    UnsupportedError,
    WcsError,
    __version__,
    reproject_block,
)
from ._high_level import reproject_interp
from ._lazy import BlockHandle, LazyReprojection
from ._warmup import register_compile_helper as _register_compile_helper
from ._warmup import release_gpu_memory, warmup
from ._core import stop_background_compilations as _stop_background_compilations

# GPU kernel variants are compiled into the disk cache by a process of their own (this
# interpreter running reproject_rs._compile_helper), which the exit does not wait for. At
# exit, compilations still queued give up, and a thread inside NVRTC or the CUDA driver (a
# compilation here, where the helper failed, or a load) is waited for before any library it
# uses is torn down.
_register_compile_helper()
_atexit.register(_stop_background_compilations)

__all__ = [
    "reproject_interp",
    "reproject_block",
    "warmup",
    "release_gpu_memory",
    "LazyReprojection",
    "BlockHandle",
    "ReprojectError",
    "ShapeError",
    "InvalidArgumentError",
    "WcsError",
    "UnsupportedError",
    "ReprojectIOError",
    "DeviceUnavailableError",
    "__version__",
]

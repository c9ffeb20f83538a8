"""reproject_rs: astropy reproject's ``reproject_interp``, computed by the reproject-rs Rust
engine.

>>> from reproject_rs import reproject_interp          # doctest: +SKIP
>>> array, footprint = reproject_interp(hdu, header_out)  # doctest: +SKIP

``reproject_interp`` takes reproject 0.21's arguments and returns the same values; the
engine reads numpy arrays of any real dtype, byte order and strides in place and releases
the GIL while it computes. Lower level:

* ``reproject_rs._core.reproject_interp(array, header_in, header_out, shape_out, ...)``:
  one call on header text;
* ``reproject_rs.reproject_block(array, header_in, header_out, shape_out, rows, cols, ...)``:
  one output block, self-contained;
* ``reproject_interp(..., return_type='lazy')``: a :class:`LazyReprojection`, whose
  ``.blocks()`` handles compute on demand from one prepared engine plan (``_core.LazyPlan``).

Errors derive from :class:`ReprojectError`; bad arguments and shapes are also
:class:`ValueError`.
"""

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

__all__ = [
    "reproject_interp",
    "reproject_block",
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

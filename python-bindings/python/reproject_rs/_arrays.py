"""The kinds of array ``reproject_interp`` meets (numpy, dask, GPU) and the dtypes the engine
reads."""

from __future__ import annotations

import numpy as np

__all__ = ["gpu_of", "is_dask", "is_cuda_array", "normalise_dtype"]


def is_dask(obj) -> bool:
    """Whether ``obj`` is a dask array (False when dask is not installed)."""
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(obj, da.Array)


def is_cuda_array(obj) -> bool:
    """Whether ``obj`` lives in GPU memory (CuPy, or anything with
    ``__cuda_array_interface__``)."""
    return hasattr(obj, "__cuda_array_interface__") and not isinstance(obj, np.ndarray)


def gpu_of(array) -> int:
    """The number of the GPU a GPU array lives on (CuPy's ``array.device.id``; 0 for arrays
    that do not say)."""
    return getattr(getattr(array, "device", None), "id", 0)


def normalise_dtype(array):
    """The array as the engine reads it: real dtypes as they are (any byte order), float16
    and long double widened as reproject's float32 cast / float64 would."""
    kind, size = array.dtype.kind, array.dtype.itemsize
    if kind in "biu" or (kind == "f" and size in (4, 8)):
        return array
    if kind == "f" and size == 2:
        return array.astype(np.float32)
    if kind == "f":
        return array.astype(np.float64)
    raise TypeError(f"input data of dtype {array.dtype} cannot be reprojected")

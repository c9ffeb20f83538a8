"""GPU arrays (CuPy, or anything with ``__cuda_array_interface__``): reprojected in GPU
memory by the GPU backend, or copied to the host and back. ``cupy`` is passed in by the
caller, who imports it. The GPU paths are untested on hardware in this build's CI."""

from __future__ import annotations

import numpy as np

from . import _core
from ._arrays import is_cuda_array
from ._engine import reproject_device

__all__ = ["reproject_on_device", "results_to_device", "to_host"]


def reproject_on_device(cupy, job, output_array, output_footprint, return_footprint):
    """``job`` (a C-contiguous CuPy input) reprojected into CuPy arrays by the GPU backend,
    without host copies (the spline coefficients of orders >= 2 are computed on the host).
    DeviceUnavailableError when the GPU cannot do the job."""
    if job.in_axes is not None or job.out_axes is not None:
        raise _core.DeviceUnavailableError("WCS axes in another order than the array's")
    if job.positions is not None:
        raise _core.DeviceUnavailableError("input positions computed by astropy")
    shape = tuple(job.engine_shape)
    out_dtype = cupy.float32 if output_array is not None and output_array.dtype == np.float32 else cupy.float64

    def target(given):
        ok = (
            is_cuda_array(given) and given.dtype == out_dtype and given.shape == shape
            and given.flags.c_contiguous
        )
        return given if ok else cupy.empty(shape, dtype=out_dtype)

    data, footprint = target(output_array), target(output_footprint)
    host = cupy.asnumpy(job.array_in) if job.engine_options["order"] >= 2 else None
    cupy.cuda.runtime.deviceSynchronize()  # the input is complete before the kernels read it
    reproject_device(job, data, footprint, out_dtype == cupy.float64, host)
    for given, got in ((output_array, data), (output_footprint, footprint)):
        if given is not None and given is not got:
            given[...] = got if is_cuda_array(given) else cupy.asnumpy(got)
    data = output_array if output_array is not None else data
    footprint = output_footprint if output_footprint is not None else footprint
    return (data, footprint) if return_footprint else data


def to_host(cupy, array):
    """A host (numpy) copy of a GPU array; anything else as it is."""
    return cupy.asnumpy(array) if is_cuda_array(array) else array


def results_to_device(cupy, result, input_on_gpu, output_array, output_footprint, return_footprint):
    """Host results (``(data, footprint)`` or ``data``) of a reprojection with GPU arrays:
    copied into the caller's GPU output arrays, and returned as GPU arrays where the input
    was on the GPU and no output array was given."""
    data, footprint = result if return_footprint else (result, None)
    if is_cuda_array(output_array):
        output_array[...] = cupy.asarray(data)
        data = output_array
    elif input_on_gpu and output_array is None:
        data = cupy.asarray(data)
    if footprint is not None:
        if is_cuda_array(output_footprint):
            output_footprint[...] = cupy.asarray(footprint)
            footprint = output_footprint
        elif input_on_gpu and output_footprint is None:
            footprint = cupy.asarray(footprint)
    return (data, footprint) if return_footprint else data

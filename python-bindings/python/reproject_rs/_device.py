"""GPU arrays (CuPy, or anything with ``__cuda_array_interface__``): reprojected in GPU
memory by the GPU backend (numpy results as GPU arrays, and dask arrays of GPU chunks), or
copied to the host and back. ``cupy`` is passed in by the caller, who imports it; the dask
blocks import it where they run.

In CI these paths run on the CUDA simulator (``REPROJECT_RS_CUDA_SIM=1``) with a stand-in
for CuPy whose arrays live in the simulator's memory (``tests/test_gpu_arrays.py``)."""

from __future__ import annotations

import numpy as np

from . import _core
from ._arrays import gpu_of, is_cuda_array
from ._dask_blocks import chunk_template, map_engine_blocks
from ._engine import compute_on_device, device_plan
from ._lazy import SharedPlan

__all__ = [
    "DeviceSharedPlan",
    "device_dask_arrays",
    "reproject_on_device",
    "results_to_device",
    "to_host",
]


def _check_resident(job):
    """DeviceUnavailableError for a job the device-resident path does not take."""
    if job.in_axes is not None or job.out_axes is not None:
        raise _core.DeviceUnavailableError("WCS axes in another order than the array's")
    if job.positions is not None:
        raise _core.DeviceUnavailableError("input positions computed by astropy")


def reproject_on_device(cupy, job, output_array, output_footprint, return_footprint):
    """``job`` (a C-contiguous CuPy input) reprojected into CuPy arrays by the GPU backend,
    without host copies (orders >= 2 prefilter the input into their spline coefficients on
    the device).
    DeviceUnavailableError when the GPU cannot do the job."""
    _check_resident(job)
    shape = tuple(job.engine_shape)
    out_dtype = cupy.float32 if output_array is not None and output_array.dtype == np.float32 else cupy.float64

    def target(given):
        # The kernels write the caller's array in place only where it is one they can write:
        # on GPU 0 (a kernel writing another GPU's memory faults), of their layout and type.
        ok = (
            is_cuda_array(given) and gpu_of(given) == 0 and given.dtype == out_dtype
            and given.shape == shape and given.flags.c_contiguous
        )
        return given if ok else cupy.empty(shape, dtype=out_dtype)

    kwargs = dict(job.engine_options, device=job.device)
    array = job.array_in
    plan = device_plan(array, (job.header_in, job.header_out, list(shape)), kwargs)
    data, footprint = target(output_array), target(output_footprint)
    cupy.cuda.runtime.deviceSynchronize()  # the input is complete before the kernels read it
    compute_on_device(plan, array, data.data.ptr, footprint.data.ptr, out_dtype == cupy.float64)
    for given, got in ((output_array, data), (output_footprint, footprint)):
        if given is not None and given is not got:
            _copy_into(cupy, given, got)
    data = output_array if output_array is not None else data
    footprint = output_footprint if output_footprint is not None else footprint
    return (data, footprint) if return_footprint else data


def _copy_into(cupy, given, got):
    """Results ``got`` (on the host or a GPU) copied into the caller's output array
    ``given`` (on the host or any GPU). On a GPU, the values first go to ``given``'s GPU,
    where the assignment (with any change of dtype) runs: CuPy's kernels take the arrays of
    one GPU only."""
    if not is_cuda_array(given):
        given[...] = cupy.asnumpy(got)
        return
    with cupy.cuda.Device(gpu_of(given)):
        if not is_cuda_array(got):
            got = cupy.asarray(got)
        elif gpu_of(got) != gpu_of(given):
            got = cupy.copy(got)
        given[...] = got


class DeviceSharedPlan(SharedPlan):
    """The description of a device-resident plan (``_core.DevicePlan``) shared by the dask
    blocks of one reprojection of a GPU input: pickled as its description and rebuilt once
    per process (the plan cache), from the GPU input the block receives."""

    __slots__ = ()

    def _new_plan(self, array):
        return device_plan(array, self.args, self.kwargs)


def device_dask_arrays(cupy, job, block_size, return_footprint):
    """Lazy ``(data, footprint)`` dask arrays of float64 GPU (CuPy) chunks of ``job``'s
    output (a C-contiguous CuPy input), chunked as ``return_type='dask'`` chunks numpy
    results: each chunk computed on the GPU from the GPU input, by a plan made once per
    process. DeviceUnavailableError (now, not at compute time) when the GPU cannot do it."""
    import dask

    _check_resident(job)
    shape = job.engine_shape
    template = chunk_template(job, block_size)
    kwargs = dict(job.engine_options, device=job.device)
    array = job.array_in
    lead_chunks = template.chunks[: len(shape) - 2]
    if all(len(c) == 1 for c in lead_chunks):
        plan = DeviceSharedPlan.new((job.header_in, job.header_out, list(shape)), kwargs)
        planes = False
    else:
        plan = DeviceSharedPlan.new((job.header_in, job.header_out, list(shape[-2:])), kwargs)
        planes = True
    # The plan made here (for blocks of planes, the first block's): a GPU that cannot do the
    # job fails now, and the blocks computed in this process use it. The input is complete
    # before any block reads it.
    cupy.cuda.runtime.deviceSynchronize()
    if planes:
        first = tuple((0, c[0]) for c in lead_chunks)
        lead = tuple(slice(a, b) for a, b in first)
        plan.get(cupy.ascontiguousarray(array[lead]), planes=first)
    else:
        plan.get(array)
    source = dask.delayed(array, pure=False)
    meta = cupy.empty((0,) * (template.ndim + 1), dtype=cupy.float64)
    result = map_engine_blocks(
        device_dask_block, template, source, meta=meta, plan=plan, planes=planes
    )
    data, footprint = result[0], result[1]
    return (data, footprint) if return_footprint else data


def device_dask_block(template, array, block_info=None, *, plan, planes):
    """One dask block of a GPU input's reprojection: ``(2, *leading, rows, columns)``
    float64 on the GPU (``[0]`` the data, ``[1]`` the footprint). With ``planes``, the block
    covers a range of the leading planes and has a plan of its own (the input's planes made
    contiguous). Module-level, so it pickles; ``plan`` pickles as its description."""
    import cupy

    if block_info is None or not block_info or 0 not in block_info:
        return cupy.empty((2,) + (0,) * template.ndim, dtype=cupy.float64)
    location = block_info[0]["array-location"]
    window = (tuple(location[-2]), tuple(location[-1]))
    # On GPU 0, where the kernels run, whatever GPU the computing thread has made current.
    with cupy.cuda.Device(0):
        if planes:
            ranges = tuple(tuple(r) for r in location[:-2])
            array = cupy.ascontiguousarray(array[tuple(slice(a, b) for a, b in ranges)])
            engine_plan = plan.get(array, planes=ranges)
        else:
            engine_plan = plan.get(array)
        shape = (2,) + tuple(b - a for a, b in location)
        stacked = cupy.empty(shape, dtype=cupy.float64)
        # The outputs' memory may come from CuPy's pool, last used by work on its stream.
        cupy.cuda.get_current_stream().synchronize()
        data = stacked.data.ptr
        compute_on_device(engine_plan, array, data, data + stacked.nbytes // 2, True, window)
    return stacked


def to_host(cupy, array):
    """A host (numpy) copy of a GPU array; anything else as it is."""
    return cupy.asnumpy(array) if is_cuda_array(array) else array


def results_to_device(cupy, result, input_on_gpu, output_array, output_footprint, return_footprint):
    """Host results (``(data, footprint)`` or ``data``) of a reprojection with GPU arrays:
    copied into the caller's GPU output arrays, and returned as GPU arrays where the input
    was on the GPU and no output array was given."""
    data, footprint = result if return_footprint else (result, None)
    if is_cuda_array(output_array):
        _copy_into(cupy, output_array, data)
        data = output_array
    elif input_on_gpu and output_array is None:
        data = cupy.asarray(data)
    if footprint is not None:
        if is_cuda_array(output_footprint):
            _copy_into(cupy, output_footprint, footprint)
            footprint = output_footprint
        elif input_on_gpu and output_footprint is None:
            footprint = cupy.asarray(footprint)
    return (data, footprint) if return_footprint else data

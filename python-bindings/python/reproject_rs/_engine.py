"""The Rust engine's entry points (``reproject_rs._core``) called for a
:class:`~reproject_rs._job.Job`: the whole output, one dask block of planes, a shared plan
(lazy results and dask blocks, cached per process: :func:`plan_cache_info`), device-resident
plans of GPU arrays, the GPUs warmed up. Thin wrappers: the engine does the work.

Every call passes the job's ``device`` ('cpu', 'auto', 'cuda', 'cuda:N', 'cuda:all'): the
engine plan picks its block executor from it once, so whole outputs, lazy blocks and dask
blocks (in this process or a worker's) compute on the same executor, with the same bits.
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._lazy import LazyReprojection, SharedPlan
from ._plan_cache import plan_cache_clear, plan_cache_info

__all__ = [
    "dask_planes_block",
    "lazy_reprojection",
    "plan_cache_clear",
    "plan_cache_info",
    "reproject",
    "compute_on_device",
    "device_plan",
    "shared_plan",
    "warmup_devices",
]


def reproject(job, array, *, block_size, threads, output_array, output_footprint):
    """The whole output of ``job`` from ``array`` (the job's input as numpy) in one
    ``_core.reproject_interp`` call on the job's device: ``(data, footprint)`` in the
    engine's axis order, written into ``output_array``/``output_footprint`` when given (at
    the input positions computed before the job, for a pair a plan does not describe: CPU
    only, so 'cuda' raises DeviceUnavailableError there)."""
    if job.positions is not None:
        options = {k: v for k, v in job.engine_options.items() if k != "roundtrip_coords"}
        try:
            return _core.reproject_positions(
                array,
                *job.positions,
                list(job.engine_shape),
                block_size=None if block_size is None else tuple(block_size),
                threads=threads,
                output_array=output_array,
                output_footprint=output_footprint,
                device=job.device,
                **options,
            )
        except _core.DeviceUnavailableError as e:
            raise _core.DeviceUnavailableError(
                f"device={job.device!r}: the input positions of this WCS pair are computed "
                "before the job (by astropy, or with distortion lookup tables), and the GPU "
                f"kernels do not read positions ({e}); use device='auto' "
                "or 'cpu'"
            ) from None
    return _core.reproject_interp(
        array,
        job.header_in,
        job.header_out,
        list(job.engine_shape),
        block_size=None if block_size is None else tuple(block_size),
        threads=threads,
        output_array=output_array,
        output_footprint=output_footprint,
        device=job.device,
        **job.engine_options,
    )


def shared_plan(job, shape_out=None, **options) -> SharedPlan:
    """A new per-process engine plan (``_core.LazyPlan``) for ``job`` on its device;
    ``shape_out`` (default the job's engine shape; the plane's shape for blocks along the
    leading dimensions) and ``options`` (block_size, threads) add to the job's engine
    options."""
    shape_out = job.engine_shape if shape_out is None else shape_out
    return SharedPlan.new(
        (job.header_in, job.header_out, list(shape_out)),
        dict(options, device=job.device, **job.engine_options),
    )


def lazy_reprojection(job, block_size, threads, return_footprint) -> LazyReprojection:
    """``job`` as a :class:`~reproject_rs.LazyReprojection`: the input copied once and the
    engine plan prepared now (engine errors surface here, not in the first block)."""
    # A private, read-only copy: the result must not change if the caller's array does.
    array = np.array(job.numpy_input(), order="C", copy=True)
    array.flags.writeable = False
    plan = shared_plan(job, block_size=block_size, threads=threads)
    plan.get(array)
    return LazyReprojection(plan, array, job.shape_out, job.out_axes, return_footprint)


def dask_planes_block(template, array, block_info=None, *, plan: SharedPlan):
    """One dask block along the leading dimensions: the engine plan of the block's planes
    (the input sliced: planes are independent; ``plan`` describes it with the plane's
    shape), from the process's plan cache, computes the block's rows and columns. Every
    block of the same planes shares that plan. Module-level, so it pickles; ``plan``
    pickles as its description."""
    if block_info is None or not block_info or 0 not in block_info:
        return np.empty((2,) + (0,) * template.ndim)
    location = block_info[0]["array-location"]
    planes = tuple(tuple(r) for r in location[:-2])
    lead = tuple(slice(a, b) for a, b in planes)
    (r0, r1), (c0, c1) = location[-2], location[-1]
    return plan.get(array[lead], planes=planes).compute_window((r0, r1), (c0, c1))


def warmup_devices(device) -> list:
    """Opens the GPUs ``device`` (a canonical device name) names and compiles their
    kernels now (``_core.warmup``): one line per device, ``[]`` for 'cpu'."""
    return list(_core.warmup(device))


def device_plan(array, args, kwargs) -> "_core.DevicePlan":
    """A device-resident engine plan (``_core.DevicePlan``) for the C-contiguous GPU input
    ``array``: ``args`` are (header_in, header_out, shape_out), ``kwargs`` the engine options
    and the device. No pixel is read on the host (orders >= 2 make their spline coefficients
    on the device). Raises DeviceUnavailableError when the GPU cannot do it."""
    return _core.DevicePlan(array.dtype.str, list(array.shape), *args, **kwargs)


def compute_on_device(plan, array, data_ptr, footprint_ptr, out_f64, window=None):
    """Computes ``plan`` from the GPU input ``array`` into the GPU outputs at ``data_ptr``
    and ``footprint_ptr`` (C order, float64 when ``out_f64``, else float32): the whole
    output, or the output ``window`` ``((row_start, row_stop), (col_start, col_stop))``
    (every leading plane)."""
    if window is None:
        plan.compute(array.data.ptr, data_ptr, footprint_ptr, out_f64)
    else:
        rows, cols = window
        plan.compute_window(array.data.ptr, rows, cols, data_ptr, footprint_ptr, out_f64)

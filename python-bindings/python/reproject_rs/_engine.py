"""The Rust engine's entry points (``reproject_rs._core``) called for a
:class:`~reproject_rs._job.Job`: the whole output, one dask block of planes, a shared plan
(lazy results and dask blocks), GPU arrays. Thin wrappers: the engine does the work."""

from __future__ import annotations

import numpy as np

from . import _core
from ._lazy import LazyReprojection, SharedPlan

__all__ = ["dask_planes_block", "lazy_reprojection", "reproject", "reproject_device", "shared_plan"]


def reproject(job, array, *, block_size, threads, output_array, output_footprint):
    """The whole output of ``job`` from ``array`` (the job's input as numpy) in one
    ``_core.reproject_interp`` call: ``(data, footprint)`` in the engine's axis order,
    written into ``output_array``/``output_footprint`` when given (at the input positions
    astropy computed, for a pair the engine does not evaluate)."""
    if job.positions is not None:
        options = {k: v for k, v in job.engine_options.items() if k != "roundtrip_coords"}
        return _core.reproject_positions(
            array,
            *job.positions,
            list(job.engine_shape),
            block_size=None if block_size is None else tuple(block_size),
            threads=threads,
            output_array=output_array,
            output_footprint=output_footprint,
            **options,
        )
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


def shared_plan(job, **options) -> SharedPlan:
    """A new per-process engine plan (``_core.LazyPlan``) for ``job``; ``options`` add to
    the job's engine options (block_size, threads)."""
    return SharedPlan.new(
        (job.header_in, job.header_out, list(job.engine_shape)),
        dict(options, **job.engine_options),
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


def dask_planes_block(
    template, array, block_info=None, *, header_in, header_out, plane_shape, **options
):
    """One dask block: slices the leading dimensions of the input (planes are independent)
    and has the engine compute the block's rows and columns (``_core.reproject_block``).
    Module-level, so it pickles."""
    if block_info is None or not block_info or 0 not in block_info:
        return np.empty((2,) + (0,) * template.ndim)
    location = block_info[0]["array-location"]
    lead = tuple(slice(a, b) for a, b in location[:-2])
    (r0, r1), (c0, c1) = location[-2], location[-1]
    return _core.reproject_block(
        array[lead],
        header_in,
        header_out,
        list(plane_shape),
        (r0, r1),
        (c0, c1),
        **options,
    )


def reproject_device(job, data, footprint, out_f64, host_array):
    """``job``'s GPU input (C-contiguous, engine axis order) reprojected by the GPU backend
    into the GPU arrays ``data`` and ``footprint`` (``_core.reproject_device``; float64 when
    ``out_f64``, else float32). ``host_array``: the same pixels on the host, for the spline
    coefficients of orders >= 2, else None."""
    array = job.array_in
    _core.reproject_device(
        array.data.ptr,
        array.dtype.str,
        list(array.shape),
        job.header_in,
        job.header_out,
        list(job.engine_shape),
        data.data.ptr,
        footprint.data.ptr,
        out_f64,
        host_array=host_array,
        **job.engine_options,
    )

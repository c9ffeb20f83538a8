"""``return_type='dask'`` (and ``parallel='current-scheduler'``): lazy dask arrays of the
output, one Rust engine call per output block.

Each block carries the description of its engine plan (a
:class:`~reproject_rs._lazy.SharedPlan`, device included), never the plan: a process builds
the plan on the first block of the job it computes and its later blocks reuse it (the plan
cache, :mod:`reproject_rs._plan_cache`), so they share the spline coefficients and, with a
GPU ``device``, one block executor and its device state."""

from __future__ import annotations

import numpy as np

from ._arrays import normalise_dtype
from ._blocks import checked_blocks
from ._engine import dask_planes_block, shared_plan
from ._lazy import dask_block

__all__ = ["chunk_template", "dask_arrays", "map_engine_blocks"]


def dask_arrays(job, block_size):
    """Lazy ``(data, footprint)`` float64 dask arrays of ``job``'s output (caller's axis
    order), chunked by ``block_size`` (reproject's rules; None or 'auto': dask's automatic
    chunks of at most 64 MiB, leading dimensions whole)."""
    import dask

    shape = job.engine_shape
    template = chunk_template(job, block_size)
    if job.is_dask:
        source = job.array_in.rechunk(job.array_in.shape).to_delayed().ravel()[0]
        source = dask.delayed(normalise_dtype)(source)
    else:
        source = dask.delayed(normalise_dtype(job.array_in), pure=True)
    lead_chunks = template.chunks[: len(shape) - 2]
    if all(len(c) == 1 for c in lead_chunks):
        # Blocks of the celestial plane, each covering every leading plane: one engine plan
        # per process (spline coefficients computed once), shared by its blocks.
        result = map_engine_blocks(dask_block, template, source, plan=shared_plan(job))
    else:
        # Blocks along the leading dimensions: a plan per set of planes, shared by the
        # blocks of those planes.
        planes_plan = shared_plan(job, shape_out=tuple(shape[-2:]))
        result = map_engine_blocks(dask_planes_block, template, source, plan=planes_plan)
    data, footprint = result[0], result[1]
    if job.out_axes is not None:
        inverse = tuple(np.argsort(job.out_axes))
        data, footprint = data.transpose(inverse), footprint.transpose(inverse)
    return data, footprint


def chunk_template(job, block_size):
    """An empty dask array of ``job``'s output shape (engine axis order) chunked by
    ``block_size`` (reproject's rules; None or 'auto': dask's automatic chunks of at most 64
    MiB, leading dimensions whole)."""
    import dask.array as da

    shape = job.engine_shape
    blocks, _ = checked_blocks(job, block_size)
    if blocks is not None:
        if job.out_axes is not None:
            blocks = tuple(blocks[a] for a in job.out_axes)
        return da.empty(shape, chunks=blocks)
    lead = len(shape) - job.n_wcs
    chunks = (-1,) * lead + ("auto",) * job.n_wcs
    return da.empty(shape).rechunk(block_size_limit=64 * 1024**2, chunks=chunks)


def map_engine_blocks(block_function, template, source, meta=None, **kwargs):
    """``dask.array.map_blocks`` of an engine block function over the chunks of ``template``
    (engine axis order): each block a float64 array of shape ``(2, *chunk)``, ``[0]`` the data
    and ``[1]`` the footprint (numpy, or of ``meta``'s type); ``kwargs`` go to every call of
    ``block_function``."""
    import dask.array as da

    return da.map_blocks(
        block_function,
        template,
        source,
        dtype=np.float64,
        new_axis=0,
        chunks=((2,),) + template.chunks,
        meta=np.empty((0,) * (template.ndim + 1), dtype=np.float64) if meta is None else meta,
        **kwargs,
    )

"""The dispatcher: from a parsed ``reproject_interp`` call to the engine calls that compute
it, as reproject's ``_reproject_dispatcher``. One place for the return types (numpy, dask,
lazy), ``block_size``/``parallel`` and GPU (CuPy) arrays."""

from __future__ import annotations

import logging

import numpy as np

from . import _core
from ._arrays import gpu_of, is_cuda_array
from ._blocks import checked_blocks, engine_block, parallel_threads
from ._dask_blocks import dask_arrays
from ._device import device_dask_arrays, reproject_on_device, results_to_device, to_host
from ._engine import lazy_reprojection, reproject
from ._job import Job
from ._options import Options
from ._outputs import check_output_arrays, deliver, engine_targets

__all__ = ["reproject_dispatcher"]

logger = logging.getLogger("reproject._common")


def reproject_dispatcher(
    *,
    array_in,
    wcs_in,
    wcs_out,
    shape_out,
    options: Options,
    output_array=None,
    output_footprint=None,
    return_footprint=True,
    block_size=None,
    parallel=False,
):
    """Reprojects ``array_in`` (numpy, dask or GPU array; ``wcs_in``, ``wcs_out`` and
    ``shape_out`` from :mod:`reproject_rs._parse`) with the checked ``options``, and returns
    what ``reproject_interp`` returns for them: ``(data, footprint)`` or ``data`` as numpy,
    dask or GPU arrays, or a :class:`~reproject_rs.LazyReprojection`."""
    if any(is_cuda_array(a) for a in (array_in, output_array, output_footprint)):
        return _reproject_gpu_arrays(
            array_in, wcs_in, wcs_out, shape_out, options, output_array, output_footprint,
            return_footprint, block_size, parallel,
        )
    job = Job(array_in, wcs_in, wcs_out, shape_out, options.engine, options.device)
    return _reproject_job(
        job, options.return_type, output_array, output_footprint, return_footprint, block_size,
        parallel,
    )


def _reproject_gpu_arrays(
    array_in, wcs_in, wcs_out, shape_out, options, output_array, output_footprint,
    return_footprint, block_size, parallel,
):
    """GPU (CuPy) input or output arrays: in GPU memory when the GPU can do it (the input on
    the GPU the device names; numpy return type: GPU arrays, 'dask': dask arrays of GPU
    chunks), else through host copies computed on the requested device, the numpy results
    copied back (dask and lazy results then stay host results)."""
    import cupy  # a CUDA array without CuPy: ImportError says what is missing

    input_on_gpu = is_cuda_array(array_in)
    resident = input_on_gpu and _device_resident(options.device, array_in)
    to_dask = options.return_type == "dask" and output_array is None and output_footprint is None
    if resident and (options.return_type == "numpy" or to_dask):
        if to_dask and block_size is None and parallel is False:
            raise ValueError(
                "Output cannot be returned as dask arrays "
                "when parallel=False and no block size has "
                "been specified"
            )
        try:
            # On GPU 0, where the kernels run, whatever GPU the caller has made current: the
            # input's contiguous copy, the outputs, the synchronisation.
            with cupy.cuda.Device(0):
                job = Job(
                    cupy.ascontiguousarray(array_in), wcs_in, wcs_out, shape_out,
                    options.engine, options.device,
                )
                if to_dask:
                    return device_dask_arrays(cupy, job, block_size, return_footprint)
                return reproject_on_device(
                    cupy, job, output_array, output_footprint, return_footprint
                )
        except _core.DeviceUnavailableError as e:
            if options.device != "auto":
                raise
            logger.info("reproject_rs: CuPy input computed on the CPU: %s", e)
    # Through the host: the same reprojection of numpy copies, the results copied back.
    job = Job(to_host(cupy, array_in), wcs_in, wcs_out, shape_out, options.engine, options.device)
    result = _reproject_job(
        job, options.return_type, to_host(cupy, output_array), to_host(cupy, output_footprint),
        return_footprint, block_size, parallel,
    )
    if options.return_type != "numpy":
        return result
    return results_to_device(
        cupy, result, input_on_gpu, output_array, output_footprint, return_footprint
    )


def _device_resident(device, array) -> bool:
    """Whether a GPU input is reprojected where it lies: the device-resident path runs on
    GPU 0 (the core's ``compute_on_device``), so for 'auto', 'cuda' and 'cuda:0' with the
    array on GPU 0; other devices go through the host."""
    return device in ("auto", "cuda", "cuda:0") and gpu_of(array) == 0


def _reproject_job(
    job, return_type, output_array, output_footprint, return_footprint, block_size, parallel
):
    """A job on the host: numpy, dask or lazy results."""
    check_output_arrays(job, output_array, output_footprint)
    if return_type == "lazy":
        return _lazy_result(
            job, output_array, output_footprint, return_footprint, block_size, parallel
        )
    if return_type == "dask" or parallel == "current-scheduler":
        return _dask_result(
            job, return_type, output_array, output_footprint, return_footprint, block_size, parallel
        )
    return _numpy_result(
        job, output_array, output_footprint, return_footprint, block_size, parallel
    )


def _numpy_result(job, output_array, output_footprint, return_footprint, block_size, parallel):
    """numpy results of one engine call (blocks and threads as asked; never a change of
    value)."""
    threads = parallel_threads(parallel)
    block = engine_block(job, block_size, parallel)
    if job.empty_plane():
        return _empty_result(job, "numpy", output_array, output_footprint, return_footprint)
    array = job.numpy_input()
    target, fp_target = engine_targets(job, array, output_array, output_footprint)
    data, footprint = reproject(
        job, array, block_size=block, threads=threads, output_array=target,
        output_footprint=fp_target,
    )
    return deliver(job, data, footprint, output_array, output_footprint, return_footprint)


def _dask_result(
    job, return_type, output_array, output_footprint, return_footprint, block_size, parallel
):
    """Dask arrays, one engine call per block: returned lazily (``return_type='dask'``) or
    computed on the current dask scheduler (``parallel='current-scheduler'``)."""
    if block_size is None and parallel is False:
        raise ValueError(
            "Output cannot be returned as dask arrays "
            "when parallel=False and no block size has "
            "been specified"
        )
    if job.empty_plane():
        return _empty_result(job, return_type, output_array, output_footprint, return_footprint)
    if job.positions is not None:
        return _dask_from_positions(
            job, return_type, output_array, output_footprint, return_footprint, block_size,
            parallel,
        )
    data, footprint = dask_arrays(job, block_size)
    if return_type == "dask":
        return (data, footprint) if return_footprint else data
    import dask

    data, footprint = dask.compute(data, footprint)
    return deliver(job, data, footprint, output_array, output_footprint, return_footprint)


def _dask_from_positions(
    job, return_type, output_array, output_footprint, return_footprint, block_size, parallel
):
    """Dask results of a pair whose positions were computed before the job (by astropy, or
    with distortion lookup tables): the output computed now
    (the positions already cost a pass over every output pixel) and wrapped in dask arrays
    chunked as asked."""
    import dask.array as da

    parallel = True if isinstance(parallel, str) else parallel  # 'current-scheduler'
    result = _numpy_result(job, output_array, output_footprint, True, block_size, parallel)
    if return_type != "dask":
        return result if return_footprint else result[0]
    blocks, _ = checked_blocks(job, block_size)
    chunks = blocks if blocks is not None else "auto"
    data, footprint = (da.from_array(a, chunks=chunks) for a in result)
    return (data, footprint) if return_footprint else data


def _lazy_result(job, output_array, output_footprint, return_footprint, block_size, parallel):
    """A :class:`~reproject_rs.LazyReprojection` (``return_type='lazy'``)."""
    if job.positions is not None:
        raise _core.UnsupportedError(
            "return_type='lazy' needs WCS a plan describes; this pair's positions are "
            "computed before the job, by astropy or with distortion lookup tables (use "
            "return_type='numpy' or 'dask')"
        )
    if output_array is not None or output_footprint is not None:
        raise ValueError(
            "output_array and output_footprint cannot be used with return_type='lazy' "
            "(compute the blocks into your arrays: array[h.window] = h.compute()[0])"
        )
    if isinstance(parallel, str):
        raise ValueError(
            "parallel='current-scheduler' needs return_type='dask' or 'numpy'; "
            "with return_type='lazy', parallel is the number of threads of .compute()"
        )
    return lazy_reprojection(
        job, engine_block(job, block_size, parallel), parallel_threads(parallel), return_footprint
    )


def _empty_result(job, return_type, output_array, output_footprint, return_footprint):
    """reproject's result for an input with no pixel: NaN data, zero footprint."""
    if return_type == "dask":
        import dask.array as da

        data = da.full(job.shape_out, np.nan)
        footprint = da.zeros(job.shape_out)
        return (data, footprint) if return_footprint else data
    data = np.full(job.engine_shape, np.nan)
    footprint = np.zeros(job.engine_shape)
    return deliver(job, data, footprint, output_array, output_footprint, return_footprint)

"""The caller's ``output_array`` and ``output_footprint``: checked before anything is
computed (reproject's messages), written in place by the engine where it can, filled from
the engine's results otherwise."""

from __future__ import annotations

import numpy as np

from . import _core

__all__ = ["check_output_arrays", "deliver", "engine_targets"]


def check_output_arrays(job, output_array, output_footprint):
    """reproject's checks of the output arrays against ``job`` (shape, dtype, writeable)."""
    if output_array is not None:
        if output_array.shape != job.shape_out:
            raise _core.ShapeError(
                f"Output array shape {output_array.shape} should match shape_out={job.shape_out}"
            )
        if (output_array.dtype.kind, output_array.dtype.itemsize) != (
            job.dtype_in.kind,
            job.dtype_in.itemsize,
        ):
            raise _core.InvalidArgumentError(
                f"Output array dtype {output_array.dtype} should match "
                f"input array dtype ({job.dtype_in})"
            )
        if output_array.dtype.kind != "f":
            # reproject writes NaN into the output before anything else.
            raise _core.InvalidArgumentError("cannot convert float NaN to integer")
        if not output_array.flags.writeable:
            # reproject's check and message; refused before anything is computed.
            raise ValueError("output array is read-only.")
    if output_footprint is not None and output_footprint.shape != job.shape_out:
        raise _core.ShapeError(
            f"Output footprint shape {output_footprint.shape} should match "
            f"shape_out={job.shape_out}"
        )
    if output_footprint is not None and not output_footprint.flags.writeable:
        raise ValueError("output footprint is read-only.")


def engine_targets(job, array, output_array, output_footprint):
    """The (data, footprint) arrays the engine writes for ``job`` reading ``array``: the
    caller's own where the engine can write them in place (native, C-contiguous, aligned,
    writeable floats of the engine's layout, not sharing memory with the input, the data and
    footprint of the same dtype), a fresh array of the output dtype for an ``output_array``
    it cannot, None where the engine allocates."""
    out_direct = (
        output_array is not None
        and job.out_axes is None
        and _writable_native(output_array)
        and not np.may_share_memory(array, output_array)
    )
    out_dtype = output_array.dtype.newbyteorder("=") if output_array is not None else np.dtype(float)
    if out_dtype.itemsize == 2:
        out_dtype = np.dtype(np.float32)
    fp_direct = (
        output_footprint is not None
        and job.out_axes is None
        and _writable_native(output_footprint)
        and output_footprint.dtype == out_dtype
        and not np.may_share_memory(array, output_footprint)
        and (output_array is None or out_direct)
    )
    if output_array is not None and not out_direct:
        target = np.empty(job.engine_shape, dtype=out_dtype)
    else:
        target = output_array
    fp_target = output_footprint if fp_direct else None
    if fp_target is not None and target is None and out_dtype != np.float64:
        fp_target = None
    return target, fp_target


def deliver(job, data, footprint, output_array, output_footprint, return_footprint):
    """Puts engine results (engine axis order) into the caller's arrays, if any, and returns
    what ``reproject_interp`` returns: ``(data, footprint)`` or ``data``."""
    if data is not output_array:
        data = job.to_user_axes(data)
        if output_array is not None:
            output_array[...] = data
            data = output_array
    if return_footprint:
        if footprint is not output_footprint:
            footprint = job.to_user_axes(footprint)
            if output_footprint is not None:
                output_footprint[...] = footprint
                footprint = output_footprint
            elif footprint.dtype != np.float64:
                footprint = footprint.astype(np.float64)
        return data, footprint
    return data


def _writable_native(a) -> bool:
    return (
        isinstance(a, np.ndarray)
        and a.dtype.kind == "f"
        and a.dtype.itemsize in (4, 8)
        and a.dtype.isnative
        and a.flags.c_contiguous
        and a.flags.aligned
        and a.flags.writeable
    )

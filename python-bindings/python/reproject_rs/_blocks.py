"""reproject's ``block_size`` and ``parallel`` arguments: checked with its rules, log
messages and errors, and turned into the engine's block shape and thread count."""

from __future__ import annotations

import logging
import numbers

from . import _core

__all__ = ["checked_blocks", "engine_block", "normalise_block_size", "parallel_threads"]

# reproject's dispatcher logs its blocking decisions to this logger; the same messages go
# to the same logger here, so logging configured for reproject keeps working.
logger = logging.getLogger("reproject._common")


def parallel_threads(parallel):
    """Engine threads for reproject's ``parallel``: 1 serial, 0 every core."""
    if parallel is False or parallel is None:
        return 1
    if parallel is True:
        return 0
    if isinstance(parallel, numbers.Integral):
        if parallel < 0:
            raise ValueError("The number of processors to use must be strictly positive")
        return max(int(parallel), 1)  # parallel=0 is reproject's synchronous blocked path
    raise ValueError(f"parallel should be a bool, an integer or 'current-scheduler', got {parallel!r}")


def normalise_block_size(block_size, shape_out, n_wcs):
    """reproject's block_size rules: a tuple of len(shape_out) entries (-1: whole axis), or
    None for automatic. Also returns whether the blocks run along broadcast dimensions."""
    if block_size is None or (isinstance(block_size, str) and block_size == "auto"):
        return None, False
    if isinstance(block_size, str):
        raise ValueError(f"block_size should be a tuple or 'auto', got {block_size!r}")
    block_size = tuple(int(b) for b in block_size)
    broadcasting = n_wcs < len(shape_out)
    along_broadcast = False
    if len(block_size) > len(shape_out):
        raise ValueError(
            f"block_size {len(block_size)} cannot have more elements "
            f"than the dimensionality of the output ({len(shape_out)})"
        )
    if len(block_size) < len(shape_out):
        block_size = (-1,) * (len(shape_out) - len(block_size)) + block_size
    elif broadcasting:
        if block_size[-n_wcs:] == tuple(shape_out[-n_wcs:]):
            along_broadcast = True
            block_size = block_size[:-n_wcs] + (-1,) * n_wcs
        else:
            for i in range(len(shape_out) - n_wcs):
                if block_size[i] != -1 and block_size[i] != shape_out[i]:
                    raise ValueError(
                        "block shape should either match output data shape along "
                        "broadcasted dimension or non-broadcasted dimensions"
                    )
    full = tuple(n if b == -1 else b for b, n in zip(block_size, shape_out))
    if any(b <= 0 for b in full):
        raise _core.InvalidArgumentError(f"block_size must be positive, got {block_size}")
    return full, along_broadcast


def checked_blocks(job, block_size):
    """The full block shape of ``job``'s output (caller's axis order; None: automatic) and
    whether the blocks run along broadcast dimensions, logged as reproject does."""
    blocks, along_broadcast = normalise_block_size(block_size, job.shape_out, job.n_wcs)
    broadcasting = job.n_wcs < len(job.shape_out)
    logger.info(f"Broadcasting is {'' if broadcasting else 'not '}being used")
    logger.info(
        f"{'P' if along_broadcast else 'Not p'}arallelizing along "
        f"broadcasted dimension ({block_size=}, shape_out={job.shape_out})"
    )
    return blocks, along_broadcast


def engine_block(job, block_size, parallel):
    """The engine's (rows, columns) block shape for ``job``, or None for its automatic
    choice."""
    if block_size is None and parallel is False:
        return None
    blocks, _ = checked_blocks(job, block_size)
    if blocks is None:
        return None
    if job.out_axes is not None:
        return tuple(blocks[a] for a in job.out_axes[-2:])
    return tuple(blocks[-2:])

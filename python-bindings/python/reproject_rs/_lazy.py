"""Lazy results (``return_type='lazy'``) and the per-process shared plans behind them and
behind the dask blocks.

A :class:`SharedPlan` is the small description of one ``_core.LazyPlan`` (WCS set up, the
block executor of its device and, for spline orders >= 2, the prefiltered coefficients of
the whole input, computed once): a token unique to the ``reproject_interp`` call plus the
plan's arguments (header texts, shape, options, device), never the data. It pickles as that
description. Unpickling in a process that already holds the token returns the same object;
otherwise the plan is looked up in the process's plan cache
(:mod:`reproject_rs._plan_cache`, keyed by the description), so every block a process
computes for one reprojection shares one plan, built on first use from the input array the
block receives.
"""

from __future__ import annotations

import os
import threading
import uuid
import weakref

import numpy as np

from . import _core
from ._plan_cache import new_plan, plan_cache

__all__ = ["LazyReprojection", "BlockHandle", "SharedPlan", "plans_built"]

_registry: "weakref.WeakValueDictionary[str, SharedPlan]" = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()
#: Plans built in this process, by originals and through the cache.
_built = 0


def plans_built() -> int:
    """How many engine plans this process has built (each one runs the spline prefilter of
    its input once, for orders >= 2, and opens its executor's device state)."""
    return _built


def _counted(build):
    """``build()``, counted in :func:`plans_built`."""
    global _built
    plan = build()
    with _registry_lock:
        _built += 1
    return plan


def _hashable(value):
    """Lists (shapes) as tuples, so that a description can key the plan cache."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


class SharedPlan:
    """One engine plan per process for one reprojection: its description (a random token
    and ``_core.LazyPlan``'s arguments after the array: ``args`` and ``kwargs``, the device
    included).

    The original (made by :meth:`new` where ``reproject_interp`` runs) builds and keeps its
    plan, which lives as long as the results referring to it. A copy unpickled in a process
    without the original (a dask worker, a process pool) finds its plan in the process's
    plan cache, built by the first block of the job that process computes and kept while it
    is among the most recently used.
    """

    __slots__ = ("token", "args", "kwargs", "key", "_plan", "_lock", "_cached", "__weakref__")

    def __init__(self, token, args, kwargs, cached=True):
        self.token = token
        self.args = tuple(args)
        self.kwargs = dict(kwargs)
        #: The description as a hashable key of the plan cache.
        self.key = (
            self.token,
            _hashable(list(self.args)),
            tuple(sorted((k, _hashable(v)) for k, v in self.kwargs.items())),
        )
        self._plan = None
        self._lock = threading.Lock()
        self._cached = bool(cached)

    @classmethod
    def new(cls, args, kwargs) -> "SharedPlan":
        """A new description (fresh token), registered in this process."""
        plan = cls(uuid.uuid4().hex, args, kwargs, cached=False)
        with _registry_lock:
            _registry[plan.token] = plan
        return plan

    def get(self, array, planes=None) -> "_core.LazyPlan":
        """The engine plan over ``array``, built on the first call in this process (every
        call of one plan must pass the same data).

        ``planes``: for a dask block along the leading dimensions, the ``(start, stop)``
        ranges of the planes ``array`` holds (a slice of the input), which key a plan of
        their own. Copies (unpickled) and plans of planes are looked up in the plan cache on
        every call (so that the plans in use stay the most recently used); the original
        keeps its own plan."""
        def build():
            return _counted(lambda: self._build(array))

        if planes is not None:
            return plan_cache.get((self.key, tuple(planes)), build)
        if self._cached:
            return plan_cache.get(self.key, build)
        plan = self._plan
        if plan is None:
            with self._lock:
                plan = self._plan
                if plan is None:
                    plan = self._plan = build()
        return plan

    def _build(self, array):
        try:
            return self._new_plan(array)
        except _core.DeviceUnavailableError as e:
            device = self.kwargs.get("device", "auto")
            raise _core.DeviceUnavailableError(
                f"device={device!r} cannot compute this job in this process "
                f"(pid {os.getpid()}): {e}"
            ) from None

    def _new_plan(self, array):
        """A new engine plan over ``array`` (a subclass builds another kind of plan)."""
        return new_plan(array, self.args, self.kwargs)

    def __eq__(self, other):
        return isinstance(other, SharedPlan) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __reduce__(self):
        return (_shared_plan, (self.token, self.args, self.kwargs, type(self)))

    def __dask_tokenize__(self):
        return ("reproject_rs.SharedPlan", self.token)

    def __repr__(self):
        device = self.kwargs.get("device", "auto")
        if self._cached:
            return f"<SharedPlan {self.token[:8]} on {device} (cached copy)>"
        state = "built" if self._plan is not None else "not built"
        return f"<SharedPlan {self.token[:8]} on {device} ({state})>"


def _shared_plan(token, args, kwargs, cls=SharedPlan) -> SharedPlan:
    """Unpickles a :class:`SharedPlan` (or a subclass ``cls``): this process's one for
    ``token`` when it has one, else a copy whose plan comes from the plan cache."""
    with _registry_lock:
        plan = _registry.get(token)
        if plan is None:
            plan = cls(token, args, kwargs, cached=True)
            _registry[token] = plan
    return plan


def _user_axes(array, out_axes):
    """An engine-order result in the caller's axis order."""
    if out_axes is None:
        return array
    return np.ascontiguousarray(array.transpose(np.argsort(out_axes)))


class LazyReprojection:
    """A reprojection computed on demand, block by block (``return_type='lazy'``).

    The input is copied once when the object is made, and the engine plan is prepared then
    (WCS set-up and, for spline orders >= 2, the prefiltered coefficients, shared by every
    block); nothing else is computed until asked for.

    * :meth:`compute`: the whole ``(array, footprint)`` (or just the array when the call had
      ``return_footprint=False``), bit-identical to the eager call;
    * :meth:`blocks`: one :class:`BlockHandle` per output block, computable in any order, on
      any thread (the GIL is released), any number of times, with the same result;
    * :attr:`shape`: the output shape.

    The object and its handles pickle (the input data and header texts travel with them)
    and compute in another process; a process builds the engine plan once per lazy result
    however many of its handles it receives.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np, reproject_rs
    >>> from astropy.wcs import WCS
    >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
    >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
    ...                                      return_type="lazy", block_size=(32, 32))
    >>> lazy
    <LazyReprojection shape=(64, 48) blocks=4 of 32x32>
    >>> handle = pickle.loads(pickle.dumps(lazy.blocks()[3]))  # e.g. sent to a worker
    >>> data, footprint = handle.compute()
    >>> bool(np.array_equal(data, lazy.compute()[0][handle.window]))
    True
    """

    __slots__ = ("_shared", "_array", "shape", "_out_axes", "_return_footprint", "__weakref__")

    def __init__(self, shared: SharedPlan, array, shape, out_axes, return_footprint):
        self._shared = shared
        self._array = array
        self.shape = tuple(shape)
        self._out_axes = None if out_axes is None else tuple(out_axes)
        self._return_footprint = bool(return_footprint)

    @property
    def _plan(self):
        return self._shared.get(self._array)

    @property
    def dtype(self):
        """The output's dtype: float64, as reproject's.

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> lazy.dtype
        dtype('float64')
        """
        return np.dtype(np.float64)

    @property
    def ndim(self):
        """The output's number of dimensions: a cube's leading axis is kept.

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> cube = np.zeros((3, 64, 48))
        >>> lazy = reproject_rs.reproject_interp((cube, WCS(naxis=2)), WCS(naxis=2),
        ...                                      shape_out=(64, 48), return_type="lazy")
        >>> lazy.ndim, lazy.shape
        (3, (3, 64, 48))
        """
        return len(self.shape)

    @property
    def block_shape(self):
        """(rows, columns) of the blocks (edge blocks are clipped).

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> lazy.block_shape, len(lazy)
        ((32, 32), 4)
        """
        return tuple(self._plan.block_shape)

    def __len__(self):
        """Number of blocks."""
        return len(self._plan)

    def blocks(self) -> list["BlockHandle"]:
        """One handle per output block, row-major over the output plane; each covers every
        leading (broadcast) plane.

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> [(h.index, h.rows, h.cols) for h in lazy.blocks()]
        [(0, (0, 32), (0, 32)), (1, (0, 32), (32, 48)), (2, (32, 64), (0, 32)), (3, (32, 64), (32, 48))]
        """
        return [
            BlockHandle(self, i, rows, cols) for i, (rows, cols) in enumerate(self._plan.windows())
        ]

    def compute(self):
        """The whole output: ``(array, footprint)``, or the array alone when the call had
        ``return_footprint=False``; float64, computed on the call's ``parallel`` threads.

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> data, footprint = lazy.compute()
        >>> eager, _ = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48))
        >>> bool(np.array_equal(data, eager)), float(footprint.min())
        (True, 1.0)
        """
        data, footprint = self._plan.compute()
        data = _user_axes(data, self._out_axes)
        if not self._return_footprint:
            return data
        return data, _user_axes(footprint, self._out_axes)

    def __reduce__(self):
        return (
            _lazy_from_pickle,
            (self._shared, self._array, self.shape, self._out_axes, self._return_footprint),
        )

    def __repr__(self):
        plan = self._plan
        return (
            f"<LazyReprojection shape={self.shape} blocks={len(plan)} of "
            f"{plan.block_shape[0]}x{plan.block_shape[1]}>"
        )


def _lazy_from_pickle(shared, array, shape, out_axes, return_footprint):
    if isinstance(array, np.ndarray) and array.flags.writeable:
        array.flags.writeable = False  # private to the object, as when it was made
    return LazyReprojection(shared, array, shape, out_axes, return_footprint)


class BlockHandle:
    """One output block of a :class:`LazyReprojection`.

    * ``index``: its position in :meth:`LazyReprojection.blocks`;
    * ``rows``, ``cols``: its ``(start, stop)`` output rows and columns (of the celestial
      plane);
    * ``window``: a tuple of slices of the full output (caller's axis order), so that
      ``array[handle.window] = handle.compute()[0]`` fills it in;
    * :meth:`compute`: ``(data, footprint)`` of the block.

    Examples
    --------
    Filling an output block by block, in any order:

    >>> import numpy as np, reproject_rs
    >>> from astropy.wcs import WCS
    >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
    >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
    ...                                      return_type="lazy", block_size=(32, 32))
    >>> out = np.full(lazy.shape, np.nan)
    >>> for handle in reversed(lazy.blocks()):
    ...     out[handle.window] = handle.compute()[0]
    >>> bool(np.array_equal(out, lazy.compute()[0]))
    True
    """

    __slots__ = ("lazy", "index", "rows", "cols")

    def __init__(self, lazy: LazyReprojection, index: int, rows, cols):
        self.lazy = lazy
        self.index = int(index)
        self.rows = tuple(rows)
        self.cols = tuple(cols)

    @property
    def window(self):
        """The block's slices of the full output (caller's axis order).

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> lazy.blocks()[1].window
        (slice(0, 32, None), slice(32, 48, None))
        """
        lead = len(self.lazy.shape) - 2
        engine = (slice(None),) * lead + (slice(*self.rows), slice(*self.cols))
        axes = self.lazy._out_axes
        if axes is None:
            return engine
        window = [slice(None)] * len(engine)
        for position, axis in enumerate(axes):
            window[axis] = engine[position]
        return tuple(window)

    @property
    def shape(self):
        """The shape of the block's data (caller's axis order).

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> [h.shape for h in lazy.blocks()]
        [(32, 32), (32, 16), (32, 32), (32, 16)]
        """
        return tuple(
            len(range(*s.indices(n))) for s, n in zip(self.window, self.lazy.shape)
        )

    def compute(self):
        """``(data, footprint)`` of the block: float64 arrays of :attr:`shape`, bit-identical
        to ``full[handle.window]`` of the eager result.

        >>> import numpy as np, reproject_rs
        >>> from astropy.wcs import WCS
        >>> image, wcs = np.arange(64 * 48.0).reshape(64, 48), WCS(naxis=2)
        >>> lazy = reproject_rs.reproject_interp((image, wcs), wcs, shape_out=(64, 48),
        ...                                      return_type="lazy", block_size=(32, 32))
        >>> data, footprint = lazy.blocks()[2].compute()
        >>> data.shape, round(float(data[0, 0]), 6), float(footprint[0, 0])
        ((32, 32), 1536.0, 1.0)
        """
        data, footprint = self.lazy._plan.compute_block(self.index)
        axes = self.lazy._out_axes
        return _user_axes(data, axes), _user_axes(footprint, axes)

    def __reduce__(self):
        return (BlockHandle, (self.lazy, self.index, self.rows, self.cols))

    def __repr__(self):
        return f"<BlockHandle {self.index}: rows {self.rows[0]}:{self.rows[1]}, cols {self.cols[0]}:{self.cols[1]}>"


def dask_block(template, array, block_info=None, *, plan: SharedPlan):
    """One dask block computed from the process's shared plan (built on the first block this
    process computes). Module-level, so it pickles; ``plan`` pickles as its token."""
    if block_info is None or not block_info or 0 not in block_info:
        return np.empty((2,) + (0,) * template.ndim)
    location = block_info[0]["array-location"]
    (r0, r1), (c0, c1) = location[-2], location[-1]
    return plan.get(array).compute_window((r0, r1), (c0, c1))

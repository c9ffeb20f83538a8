"""Lazy results (``return_type='lazy'``) and the per-process shared plans behind them and
behind the dask blocks.

A :class:`SharedPlan` stands for one ``_core.LazyPlan`` (WCS set up and, for spline orders
>= 2, the prefiltered coefficients of the whole input, computed once). It pickles as a
token plus the plan's small arguments (header texts, shape, options), never the data;
unpickling in a process that already holds the token returns the same object, so every
block a process computes for one reprojection shares one plan, built on first use from the
input array the block receives.
"""

from __future__ import annotations

import collections
import threading
import uuid
import weakref

import numpy as np

from . import _core

__all__ = ["LazyReprojection", "BlockHandle", "SharedPlan"]

#: Plans built in this process (a counter, for tests and diagnostics).
_built = 0

_registry: "weakref.WeakValueDictionary[str, SharedPlan]" = weakref.WeakValueDictionary()
# Plans unpickled in this process (dask workers, process pools) are also kept alive here, the
# most recently used few, since a worker typically drops each task's copy before the next
# task of the same reprojection arrives. Plans made by reproject_interp in this process live
# exactly as long as the lazy or dask results referring to them.
_recent: "collections.OrderedDict[str, SharedPlan]" = collections.OrderedDict()
RECENT_PLANS = 4
_registry_lock = threading.Lock()


def plans_built() -> int:
    """How many engine plans this process has built (each one runs the spline prefilter of
    its input once, for orders >= 2)."""
    return _built


class SharedPlan:
    """One engine plan per process for one reprojection, identified by a random token.

    ``args``/``kwargs`` are ``_core.LazyPlan``'s arguments after the array.
    """

    __slots__ = ("token", "args", "kwargs", "_plan", "_lock", "__weakref__")

    def __init__(self, token, args, kwargs):
        self.token = token
        self.args = tuple(args)
        self.kwargs = dict(kwargs)
        self._plan = None
        self._lock = threading.Lock()

    @classmethod
    def new(cls, args, kwargs) -> "SharedPlan":
        plan = cls(uuid.uuid4().hex, args, kwargs)
        with _registry_lock:
            _registry[plan.token] = plan
        return plan

    def get(self, array) -> "_core.LazyPlan":
        """The engine plan over ``array``, built on the first call in this process (every
        call of one plan must pass the same data)."""
        plan = self._plan
        if plan is None:
            with self._lock:
                plan = self._plan
                if plan is None:
                    plan = _core.LazyPlan(array, *self.args, **self.kwargs)
                    global _built
                    with _registry_lock:
                        _built += 1
                    self._plan = plan
        return plan

    def __reduce__(self):
        return (_shared_plan, (self.token, self.args, self.kwargs))

    def __dask_tokenize__(self):
        return ("reproject_rs.SharedPlan", self.token)

    def __repr__(self):
        state = "built" if self._plan is not None else "not built"
        return f"<SharedPlan {self.token[:8]} ({state})>"


def _shared_plan(token, args, kwargs) -> SharedPlan:
    """Unpickles a :class:`SharedPlan`: this process's one for ``token``."""
    with _registry_lock:
        plan = _registry.get(token)
        if plan is None:
            plan = SharedPlan(token, args, kwargs)
            _registry[token] = plan
        _recent[token] = plan
        _recent.move_to_end(token)
        while len(_recent) > RECENT_PLANS:
            _recent.popitem(last=False)
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
        return np.dtype(np.float64)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def block_shape(self):
        """(rows, columns) of the blocks (edge blocks are clipped)."""
        return tuple(self._plan.block_shape)

    def __len__(self):
        """Number of blocks."""
        return len(self._plan)

    def blocks(self) -> list["BlockHandle"]:
        """One handle per output block, row-major over the output plane; each covers every
        leading (broadcast) plane."""
        return [
            BlockHandle(self, i, rows, cols) for i, (rows, cols) in enumerate(self._plan.windows())
        ]

    def compute(self):
        """The whole output: ``(array, footprint)``, or the array alone when the call had
        ``return_footprint=False``; float64, computed on the call's ``parallel`` threads."""
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
    """

    __slots__ = ("lazy", "index", "rows", "cols")

    def __init__(self, lazy: LazyReprojection, index: int, rows, cols):
        self.lazy = lazy
        self.index = int(index)
        self.rows = tuple(rows)
        self.cols = tuple(cols)

    @property
    def window(self):
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
        """The shape of the block's data (caller's axis order)."""
        return tuple(
            len(range(*s.indices(n))) for s, n in zip(self.window, self.lazy.shape)
        )

    def compute(self):
        """``(data, footprint)`` of the block: float64 arrays of :attr:`shape`, bit-identical
        to ``full[handle.window]`` of the eager result."""
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

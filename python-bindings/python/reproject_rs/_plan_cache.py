"""The per-process cache of engine plans (``_core.LazyPlan``) behind dask blocks and lazy
results that arrive pickled.

A dask block (or a pickled :class:`~reproject_rs.BlockHandle`) carries the small
description of its plan, a :class:`~reproject_rs._lazy.SharedPlan` (a per-call token,
the header texts, the output shape and the engine options, device included), never the
plan's arrays. The first block a process computes builds the plan from the input array it
receives (WCS set-up, spline coefficients for orders >= 2, the block executor and, on a
GPU, its device state); the later blocks of the same reprojection find it here. The cache
is a small LRU (:data:`PLAN_CACHE_SIZE` plans; the environment variable
``REPROJECT_RS_PLAN_CACHE_SIZE`` sets another size, read when the package is imported:
dask worker processes inherit it), so a long-lived worker keeps only the plans of its most
recent jobs.

The key is the description plus, for dask blocks along the leading dimensions, which planes
the block covers. The token makes a description unique to one ``reproject_interp`` call, so
a plan is never reused for other data, even when the headers and options are the same.
"""

from __future__ import annotations

import collections
import os
import threading
from typing import NamedTuple

from . import _core

__all__ = ["PLAN_CACHE_SIZE", "CacheInfo", "PlanCache", "new_plan", "plan_cache",
           "plan_cache_clear", "plan_cache_info"]



def _size_from_env(default=4) -> int:
    """``REPROJECT_RS_PLAN_CACHE_SIZE`` (at least 1), else ``default``."""
    value = os.environ.get("REPROJECT_RS_PLAN_CACHE_SIZE", "").strip()
    try:
        return max(int(value), 1) if value else default
    except ValueError:
        return default


#: How many plans a process keeps (the least recently used goes first).
PLAN_CACHE_SIZE = _size_from_env()


class CacheInfo(NamedTuple):
    """Statistics of the plan cache, as ``functools.lru_cache``'s ``cache_info()``."""

    #: Lookups that found the plan built.
    hits: int
    #: Lookups that built it (each one a plan built in this process).
    misses: int
    #: The most plans kept.
    maxsize: int
    #: Plans kept now.
    currsize: int


class _Entry:
    """One cached plan, built once under its own lock (other plans build meanwhile)."""

    __slots__ = ("lock", "plan")

    def __init__(self):
        self.lock = threading.Lock()
        self.plan = None


class PlanCache:
    """A thread-safe LRU of engine plans keyed by their descriptions."""

    def __init__(self, maxsize: int = PLAN_CACHE_SIZE):
        self.maxsize = int(maxsize)
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    def get(self, key, build):
        """The plan of ``key`` (hashable), made by ``build()`` when this process has none
        (an exception from ``build`` propagates, and the next lookup builds again)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        with entry.lock:
            if entry.plan is not None:
                with self._lock:
                    self._hits += 1
                return entry.plan
            plan = build()
            with self._lock:
                self._misses += 1
            entry.plan = plan
            return plan

    def info(self) -> CacheInfo:
        """Hits, misses (plans built), the capacity and the plans kept now."""
        with self._lock:
            size = sum(1 for e in self._entries.values() if e.plan is not None)
            return CacheInfo(self._hits, self._misses, self.maxsize, size)

    def plans(self) -> list:
        """The plans kept now, least recently used first (e.g. to see their ``executor``)."""
        with self._lock:
            return [e.plan for e in self._entries.values() if e.plan is not None]

    def clear(self):
        """Forgets every plan (they are freed once nothing else refers to them) and resets
        the statistics."""
        with self._lock:
            self._entries.clear()
            self._hits = self._misses = 0


#: This process's cache.
plan_cache = PlanCache()


def plan_cache_info() -> CacheInfo:
    """This process's plan cache statistics: ``CacheInfo(hits, misses, maxsize,
    currsize)``, ``misses`` being the plans built. On a dask.distributed cluster:
    ``client.run(reproject_rs._engine.plan_cache_info)``."""
    return plan_cache.info()


def plan_cache_clear():
    """Empties this process's plan cache (e.g. to free the memory of finished jobs on a
    long-lived worker: ``client.run(reproject_rs._engine.plan_cache_clear)``)."""
    plan_cache.clear()


def new_plan(array, args, kwargs) -> "_core.LazyPlan":
    """A new engine plan over ``array`` (``_core.LazyPlan``'s arguments after the array)."""
    return _core.LazyPlan(array, *args, **kwargs)

"""A stand-in for CuPy whose arrays live in the GPU memory of reproject-rs's backend (the CUDA
simulator under ``REPROJECT_RS_CUDA_SIM``; ``_core.DeviceMemory``), so that the
device-resident paths (CuPy in, CuPy out, dask arrays of CuPy chunks) run end to end on a
machine without a GPU: the kernels read and write these arrays through their device
addresses, as they read and write CuPy's.

Only what reproject_rs and dask use is provided. Indexing copies (CuPy returns views);
every array is C-contiguous. Only the copies a caller asks for (``get``, ``asnumpy``) count
as bytes sent to the host: the fake's own indexing and copies stand for CuPy's device-side
ones. ``module()`` makes the module, with counters
(``calls``) of the bytes it copied to the host and of its synchronisations, so tests can see
what crossed to the host."""

from __future__ import annotations

import collections
import types

import numpy as np

from reproject_rs import _core

#: Fill of new arrays (CuPy leaves them uninitialised): a pixel nobody writes shows.
UNWRITTEN = -7777.0


class FakeCupyArray:
    """A C-contiguous array in the backend's GPU memory."""

    __array_priority__ = 100  # dask concatenates chunks with this type's function

    def __init__(self, host, calls=None):
        host = np.ascontiguousarray(host)
        self.dtype, self.shape = host.dtype, host.shape
        self._calls = calls if calls is not None else collections.Counter()
        self._store(host)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        # The GPU current when it was made (``cuda.Device``); all share the one memory.
        self.device = FakeDevice(self._calls["current_device"], self._calls)

    def _store(self, host):
        self._memory = _core.DeviceMemory(host.tobytes())
        self.data = types.SimpleNamespace(ptr=self._memory.ptr)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data.ptr, False),
                "version": 3}

    def get(self):
        """A host copy (CuPy's ``get``): counted in ``bytes_to_host``."""
        self._calls["bytes_to_host"] += self.nbytes
        return self._host()

    def _host(self):
        """The values on the host, for the operations CuPy does on the device (indexing,
        copies, concatenation): not counted."""
        raw = np.frombuffer(self._memory.to_bytes(), dtype=self.dtype, count=self.size)
        return raw.reshape(self.shape).copy()

    def __getitem__(self, index):
        return FakeCupyArray(self._host()[index], self._calls)

    def __setitem__(self, index, value):
        # CuPy's kernels take the arrays of the current GPU only.
        on = {a.device.id for a in (self, value) if isinstance(a, FakeCupyArray)}
        if on != {self._calls["current_device"]}:
            raise ValueError(f"arrays on GPUs {sorted(on)}, the current GPU is "
                             f"{self._calls['current_device']}")
        host = self._host()
        host[index] = value._host() if isinstance(value, FakeCupyArray) else value
        self._store(host)

    def reshape(self, shape):
        return FakeCupyArray(self._host().reshape(shape), self._calls)

    def astype(self, dtype):
        return FakeCupyArray(self._host().astype(dtype), self._calls)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"FakeCupyArray(shape={self.shape}, dtype={self.dtype})"


class FakeDevice:
    """``cupy.cuda.Device``: its number, and the current GPU while in a ``with`` block (kept
    in the module's ``calls["current_device"]``)."""

    def __init__(self, id, calls):
        self.id, self._calls, self._before = id, calls, []

    def __enter__(self):
        self._before.append(self._calls["current_device"])
        self._calls["current_device"] = self.id
        return self

    def __exit__(self, *exc):
        self._calls["current_device"] = self._before.pop()


def _concatenate(arrays, axis=0):
    arrays = list(arrays)
    calls = arrays[0]._calls
    return FakeCupyArray(np.concatenate([a._host() for a in arrays], axis=axis), calls)


def module():
    """A new ``cupy`` module; ``module().calls`` counts the bytes copied to the host and the
    synchronisations, and holds the number of the current GPU (``current_device``)."""
    from dask.array.dispatch import concatenate_lookup

    concatenate_lookup.register(FakeCupyArray)(_concatenate)
    calls = collections.Counter()
    cupy = types.ModuleType("cupy")
    cupy.calls = calls
    cupy.ndarray = FakeCupyArray
    cupy.float32, cupy.float64 = np.float32, np.float64

    def asnumpy(a):
        return a.get() if isinstance(a, FakeCupyArray) else np.asarray(a)

    def asarray(a):
        return a if isinstance(a, FakeCupyArray) else FakeCupyArray(np.asarray(a), calls)

    def empty(shape, dtype=np.float64):
        return FakeCupyArray(np.full(shape, UNWRITTEN, dtype=dtype), calls)

    def synchronize(what):
        def sync():
            calls[what] += 1
        return sync

    stream = types.SimpleNamespace(synchronize=synchronize("stream_synchronize"))
    def copy(a):
        """A copy on the current GPU (from any GPU, as CuPy's)."""
        return FakeCupyArray(a._host(), calls)

    cupy.asnumpy, cupy.asarray, cupy.empty, cupy.copy = asnumpy, asarray, empty, copy
    cupy.ascontiguousarray = asarray
    cupy.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(deviceSynchronize=synchronize("device_synchronize")),
        get_current_stream=lambda: stream,
        Device=lambda id=0: FakeDevice(id, calls),
    )
    return cupy

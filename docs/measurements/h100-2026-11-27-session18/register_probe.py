"""Session 18: can the GPU path download its results straight into fresh numpy outputs?
Fresh float64 outputs of a 16384² job (two arrays of 2.15 GB) must be faulted in and zeroed
by someone. Today the block threads do it as they store (the job's largest cost). Locked in
place (cuMemHostRegister) by 16 threads, a band each, the copy engine could write them
instead. Times, on fresh np.empty arrays each: 16 threads writing a band each (today's
floor); 16 threads locking a band each, then unlocking; one thread locking a whole array;
madvise(MADV_POPULATE_WRITE) by 16 threads; and a 2.15 GB download into locked memory."""
import ctypes
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

THREADS = 16
size = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
shape = (size, size)
cu = ctypes.CDLL("libcuda.so.1")
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
for name, args in {
    "cuInit": [ctypes.c_uint],
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int],
    "cuCtxSetCurrent": [ctypes.c_void_p],
    "cuMemHostRegister_v2": [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint],
    "cuMemHostUnregister": [ctypes.c_void_p],
    "cuMemAlloc_v2": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t],
    "cuMemsetD8_v2": [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t],
    "cuMemcpyDtoH_v2": [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t],
    "cuCtxSynchronize": [],
}.items():
    getattr(cu, name).argtypes = args


def check(r, what):
    if r != 0:
        raise RuntimeError(f"{what}: CUDA error {r}")


check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
check(cu.cuCtxSetCurrent(ctx), "set current")


def bands(arrays):
    """(pointer, bytes) of THREADS row bands of each array, whole pages inside each (so that
    no two share a page)."""
    out = []
    for a in arrays:
        rows = np.array_split(np.arange(a.shape[0]), THREADS)
        for r in rows:
            start = (a[r[0]:].ctypes.data + 4095) & ~4095
            end = (a.ctypes.data + (r[-1] + 1) * a.strides[0]) & ~4095
            out.append((start, end - start))
    return out


def on_threads(f, parts):
    def run(p):
        check(cu.cuCtxSetCurrent(ctx), "set current")
        return f(p)
    t = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(run, parts))
    return time.perf_counter() - t


def fresh():
    return [np.empty(shape) for _ in range(2)]


for round in range(2):
    arrays = fresh()
    parts = [(a, r) for a in arrays for r in np.array_split(np.arange(size), THREADS)]
    t = on_threads(lambda p: p[0][p[1][0]:p[1][-1] + 1].fill(1.0), parts)
    print(f"round {round}: 16 threads write fresh 2 x {arrays[0].nbytes / 1e9:.2f} GB: {t * 1e3:.1f} ms")
    del arrays, parts

    arrays = fresh()
    parts = bands(arrays)
    t_lock = on_threads(lambda p: check(cu.cuMemHostRegister_v2(p[0], p[1], 0), "register"), parts)
    t_unlock = on_threads(lambda p: check(cu.cuMemHostUnregister(p[0]), "unregister"), parts)
    print(f"round {round}: 16 threads lock fresh bands: {t_lock * 1e3:.1f} ms, unlock {t_unlock * 1e3:.1f} ms")
    del arrays, parts

    arrays = fresh()
    parts = bands(arrays)
    t_pop = on_threads(lambda p: libc.madvise(p[0], p[1], 23), parts)  # MADV_POPULATE_WRITE
    t_lock = on_threads(lambda p: check(cu.cuMemHostRegister_v2(p[0], p[1], 0), "register"), parts)
    t_unlock = on_threads(lambda p: check(cu.cuMemHostUnregister(p[0]), "unregister"), parts)
    print(f"round {round}: MADV_POPULATE_WRITE by 16 threads {t_pop * 1e3:.1f} ms; then lock {t_lock * 1e3:.1f}, unlock {t_unlock * 1e3:.1f} ms")
    del arrays, parts

a = np.empty(shape)
t = time.perf_counter()
check(cu.cuMemHostRegister_v2(a.ctypes.data, a.nbytes, 0), "register whole")
t_lock = time.perf_counter() - t
d = ctypes.c_uint64()
check(cu.cuMemAlloc_v2(ctypes.byref(d), a.nbytes), "alloc")
check(cu.cuMemsetD8_v2(d.value, 0, a.nbytes), "memset")
check(cu.cuCtxSynchronize(), "sync")
times = []
for _ in range(3):
    t = time.perf_counter()
    check(cu.cuMemcpyDtoH_v2(a.ctypes.data, d.value, a.nbytes), "download")
    times.append(time.perf_counter() - t)
t = time.perf_counter()
check(cu.cuMemHostUnregister(a.ctypes.data), "unregister whole")
t_unlock = time.perf_counter() - t
print(f"one thread locks a fresh {a.nbytes / 1e9:.2f} GB array: {t_lock * 1e3:.1f} ms; download into it "
      f"{min(times) * 1e3:.1f} ms ({a.nbytes / min(times) / 1e9:.1f} GB/s); unlock {t_unlock * 1e3:.1f} ms")
b = np.empty(shape)
t = time.perf_counter()
check(cu.cuMemcpyDtoH_v2(b.ctypes.data, d.value, b.nbytes), "download pageable")
print(f"download into a fresh pageable array (the driver stages it): {(time.perf_counter() - t) * 1e3:.1f} ms")

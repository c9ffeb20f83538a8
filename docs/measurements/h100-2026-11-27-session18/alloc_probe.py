"""Session 18: why did np.empty outputs given to the 16384² float64 GPU call take 110.7 ms
in run 1's pybench, against 334.3 ms into outputs reproject_rs allocates? Prints the
allocator the process runs on, the share of np.empty's pages already in memory (mincore)
after earlier calls freed their results, and times the calls as pybench orders them
(allocation and freeing inside the timing) and with allocation outside it."""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python-tests"))
import numpy as np
from gpu_bench import tan

import reproject_rs

print("numpy", np.__version__, "python", sys.version.split()[0])
print("LD_PRELOAD", os.environ.get("LD_PRELOAD"), "MALLOC env",
      {k: v for k, v in os.environ.items() if "MALLOC" in k})
with open("/proc/self/maps") as f:
    libs = sorted({line.split()[-1] for line in f if ".so" in line})
print("allocator-like libraries:", [l for l in libs if any(k in l for k in ("malloc", "jemalloc", "tcmalloc", "mimalloc"))])
libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]


def resident(a):
    start = a.ctypes.data & ~4095
    length = a.ctypes.data + a.nbytes - start
    pages = (length + 4095) // 4096
    vec = ctypes.create_string_buffer(pages)
    if libc.mincore(start, length, vec) != 0:
        return -1.0
    return float((np.frombuffer(vec.raw, np.uint8) & 1).mean())


size = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
shape = (size, size)
a = np.empty(shape)
print(f"np.empty at start: {resident(a):.3f} of its pages in memory")
a[:] = 1.0
del a
b = np.empty(shape)
print(f"np.empty after a written one was freed: {resident(b):.3f}")
del b
y, x = np.mgrid[:size, :size].astype(np.float32)
image = (np.sin(x * 0.001) * 100 + y * 0.01).astype(np.float64)
del x, y
h_in = tan((150.0, 2.0), size / 2 + 0.5, 1e-4, 0.0, shape)
h_out = tan((150.01, 2.01), size / 2 + 0.5, 1.05e-4, 12.0, shape)


def job(device, **kw):
    return reproject_rs.reproject_interp((image, h_in), h_out, shape_out=shape, order="bilinear",
                                         device=device, parallel=True, **kw)


for device in os.environ.get("PROBE_DEVICES", "cuda,cpu").split(","):
    job(device)
    for round in range(2):
        t = time.perf_counter()
        r = job(device)
        t_call = time.perf_counter() - t
        print(f"{device} own, round {round}: result pages in memory {resident(r[0]):.3f}; call {t_call * 1e3:.1f} ms", end="")
        t = time.perf_counter()
        del r
        print(f", free {(time.perf_counter() - t) * 1e3:.1f} ms")
        d, f = np.empty(shape), np.empty(shape)
        share = (resident(d) + resident(f)) / 2
        t = time.perf_counter()
        job(device, output_array=d, output_footprint=f)
        t_call = time.perf_counter() - t
        t = time.perf_counter()
        del d, f
        print(f"{device} np.empty given, round {round}: {share:.3f} in memory before; call {t_call * 1e3:.1f} ms, free {(time.perf_counter() - t) * 1e3:.1f} ms")
t = time.perf_counter()
z = np.zeros(shape)
t_z = time.perf_counter() - t
print(f"np.zeros {t_z * 1e3:.1f} ms, {resident(z):.3f} in memory")

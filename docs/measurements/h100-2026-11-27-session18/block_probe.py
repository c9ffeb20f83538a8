"""Session 18: does a smaller GPU block make the host side of a 16384² bilinear call cheaper?
Each block thread's page-locked slot receives a block's values from the copy engine and is
read back right away by the thread that stores them; a slot small enough may still be in the
host's last-level cache when it is read (the copy engine may write into it), so the values
would cross host memory once instead of twice. Times the call from numpy (float32 in) into
fresh float64 outputs reproject_rs allocates, and into reused float32 outputs, for several
block shapes (best of 3, alternating)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python-tests"))
import numpy as np
from gpu_bench import tan

import reproject_rs

size = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
shape = (size, size)
y, x = np.mgrid[:size, :size].astype(np.float32)
image = (np.sin(x * 0.001) * 100 + y * 0.01).astype(np.float32)
del x, y
h_in = tan((150.0, 2.0), size / 2 + 0.5, 1e-4, 0.0, shape)
h_out = tan((150.01, 2.01), size / 2 + 0.5, 1.05e-4, 12.0, shape)
reused = np.empty(shape, np.float32), np.empty(shape, np.float32)


def call(block, into_reused, device="cuda"):
    kw = dict(block_size=block) if block else {}
    if into_reused:
        kw.update(output_array=reused[0], output_footprint=reused[1])
    return reproject_rs.reproject_interp((image, h_in), h_out, shape_out=shape, order="bilinear",
                                         device=device, parallel=True, **kw)


# BLOCKS="1024x2048,128x2048": these shapes after the default (run 5 compared the new default
# with the old one).
blocks = [None] + [tuple(int(v) for v in b.split("x")) for b in os.environ.get(
    "BLOCKS", "512x2048,256x2048,128x2048,64x2048,128x4096,64x16384").split(",")]
reference = call(None, False)
for b in blocks:
    r = call(b, False)
    same = np.array_equal(r[0], reference[0], equal_nan=True) and np.array_equal(r[1], reference[1])
    print(f"block {b}: values and footprint as the default's: {same}")
    del r
del reference
times = {}
for _ in range(3):
    for into_reused in (False, True):
        for b in blocks:
            t = time.perf_counter()
            r = call(b, into_reused)
            times.setdefault((into_reused, b), []).append(time.perf_counter() - t)
            del r
for (into_reused, b), ts in times.items():
    what = "reused float32" if into_reused else "fresh float64"
    print(f"GPU into {what} outputs, block {b}: " + ", ".join(f"{t * 1e3:.1f}" for t in ts)
          + f" ms (best {min(ts) * 1e3:.1f})")
ts = []
for _ in range(2):
    t = time.perf_counter()
    r = call(None, False, "cpu")
    ts.append(time.perf_counter() - t)
    del r
print(f"CPU into fresh float64 outputs: best {min(ts) * 1e3:.1f} ms")

"""Session 17: the 16384² bilinear call from numpy, float64 in (reproject requires outputs
of the input's dtype), into fresh float64 outputs allocated by reproject_rs (the plan is told
they are fresh: a block thread per core) or by the caller (np.empty, untouched; the plan is
not told: at most 8), GPU and CPU, alternating, 4 rounds."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python-tests"))
import numpy as np
from gpu_bench import tan

import reproject_rs

size = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
y, x = np.mgrid[:size, :size].astype(np.float32)
image = (np.sin(x * 0.001) * 100 + y * 0.01).astype(np.float64)
del x, y
h_in = tan((150.0, 2.0), size / 2 + 0.5, 1e-4, 0.0, (size, size))
h_out = tan((150.01, 2.01), size / 2 + 0.5, 1.05e-4, 12.0, (size, size))


def call(device, given):
    kw = {}
    if given:
        kw = dict(output_array=np.empty((size, size)), output_footprint=np.empty((size, size)))
    t = time.perf_counter()
    reproject_rs.reproject_interp((image, h_in), h_out, shape_out=(size, size), order="bilinear",
                                  device=device, parallel=device == "cpu", **kw)
    return time.perf_counter() - t


call("cuda", False)
times = {}
for _ in range(4):
    for key in [("cuda", False), ("cuda", True), ("cpu", False)]:
        times.setdefault(key, []).append(call(*key))
for (device, given), ts in times.items():
    who = "the caller's np.empty" if given else "reproject_rs's"
    print(f"{device} into {who} fresh float64 outputs: "
          + ", ".join(f"{t * 1e3:.1f}" for t in ts) + f" ms (best {min(ts) * 1e3:.1f})")

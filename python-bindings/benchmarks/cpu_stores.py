"""How the CPU engine stores its results (session 18): past the caches for whole outputs
(streaming stores), through them for mosaics, which read each block right back. Times, on
this machine's cores (``parallel=True``), best of 4 alternating runs:

* an N x N float32 bilinear TAN -> TAN call (N=8192 by default) into the fresh float64
  outputs reproject_rs allocates, and into reused float32 outputs;
* a mosaic of four 3000 x 3000 inputs into a 5000 x 5000 output (mean combine).

    python python-bindings/benchmarks/cpu_stores.py [N]

To compare with stores through the caches for whole outputs, build a wheel of the tree
before the change (``git log src/engine/cpu.rs``), unpack both wheels into two folders and
alternate ``PYTHONPATH=FOLDER python cpu_stores.py``. On the development machine (2 cores,
three rounds): 8192² into fresh float64 outputs 313-353 -> 275-296 ms, into reused float32
ones 206-229 -> 186-191 ms; the mosaic 427-485 -> 452-470 ms, the same within the noise (a
build storing the mosaic's blocks past the caches too took 569-593 ms against 413-425).
"""
import sys
import time

import numpy as np
from astropy.io import fits

import reproject_rs
from reproject_rs.mosaicking import reproject_and_coadd


def tan(crval, crpix, cdelt, rot=0.0):
    h = fits.Header()
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    h["CRVAL1"], h["CRVAL2"] = crval
    h["CRPIX1"] = h["CRPIX2"] = crpix
    h["CDELT1"], h["CDELT2"] = -cdelt, cdelt
    h["CROTA2"] = rot
    return h


def best(f, runs=4):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    h_in, h_out = tan((10.0, 20.0), n / 2, 1e-4), tan((10.0, 20.0), n / 2, 1.01e-4, 5.0)
    data = np.random.default_rng(0).random((n, n)).astype(np.float32)
    reused = np.empty((n, n), np.float32), np.empty((n, n), np.float32)

    def call(into_reused):
        kw = dict(output_array=reused[0], output_footprint=reused[1]) if into_reused else {}
        return lambda: reproject_rs.reproject_interp((data, h_in), h_out, shape_out=(n, n),
                                                     order="bilinear", device="cpu",
                                                     parallel=True, **kw)

    call(True)()
    print(f"{n}x{n} bilinear into fresh float64 outputs: {best(call(False)):.0f} ms")
    print(f"{n}x{n} bilinear into reused float32 outputs: {best(call(True)):.0f} ms")
    m = 3000
    rng = np.random.default_rng(1)
    inputs = [(rng.random((m, m)).astype(np.float32), tan((10 + dx * 0.1, 20 + dy * 0.1), m / 2, 1e-4))
              for dx, dy in [(0, 0), (1, 0), (0, 1), (1, 1)]]
    out = tan((10.05, 20.05), 2500, 1e-4)

    def mosaic():
        reproject_and_coadd(inputs, out, shape_out=(5000, 5000),
                            reproject_function=reproject_rs.reproject_interp,
                            combine_function="mean")

    mosaic()
    print(f"mosaic of four {m}x{m} inputs into 5000x5000: {best(mosaic):.0f} ms")


if __name__ == "__main__":
    main()

"""How far the GPU's CLI outputs are from the CPU's, in float32 units in the last place.

A FITS float32 input's results are rounded to float32, as reproject rounds them, so an f64
difference far below one float32 ulp (the frame conversion's trigonometry differs by an ulp
or two between CUDA and the host's libm) can still move a result to the next float32, and
near zero by a few float32 ulps (a one-ulp move of the output's CRPIX1 does that on the CPU
alone: 80 of 67M values of the 8192^2 probe, one float32 ulp each, up to 9 at -2.7e-8). The
check: footprints identical, and every value within one float32 ulp of the CPU's plus 1e-10
of the image's largest value.
    python3 cli_ulps.py DIR CPU.fits GPU.fits [GPU.fits ...]
"""
import sys

import numpy as np


def hdus(path):
    """Every image HDU of a FITS file, as float64 arrays (no astropy on GPU machines)."""
    buf, start, out = open(path, "rb").read(), 0, []
    while start < len(buf):
        cards, i = {}, start
        while not buf[i:i + 3] == b"END":
            card = buf[i:i + 80].decode("ascii")
            if card[8:10] == "= ":
                cards[card[:8].strip()] = card[10:].split("/")[0].strip()
            i += 80
        data = -(-(i + 80) // 2880) * 2880
        dtype = np.dtype({"-64": ">f8", "-32": ">f4"}[cards["BITPIX"]])
        n = int(cards["NAXIS1"]) * int(cards["NAXIS2"])
        out.append(np.frombuffer(buf, dtype, n, data).reshape(int(cards["NAXIS2"]), -1).astype(float))
        start = data + -(-(n * dtype.itemsize) // 2880) * 2880
    return out


d = sys.argv[1]
cpu, fp = hdus(f"{d}/{sys.argv[2]}")[:2]
ok = True
for name in sys.argv[3:]:
    v, f = hdus(f"{d}/{name}")[:2]
    same_fp = np.array_equal(f, fp)
    both = np.isfinite(v) & np.isfinite(cpu)
    same_nan = np.array_equal(np.isnan(v), np.isnan(cpu))
    ulp = np.spacing(np.abs(cpu[both]).astype(np.float32)).astype(float)
    dist = np.abs(v[both] - cpu[both]) / ulp
    rel = np.abs(v[both] - cpu[both]) / np.maximum(np.abs(cpu[both]), 1e-300)
    scale = np.abs(cpu[both]).max(initial=0)
    beyond = (np.abs(v[both] - cpu[both]) - ulp).max(initial=0) / max(scale, 1e-300)
    good = same_fp and same_nan and beyond <= 1e-10
    print(f"  {name:14s} footprints identical {same_fp}, NaNs at the same pixels {same_nan}; "
          f"{np.count_nonzero(dist)} of {dist.size} values differ, at most {dist.max(initial=0):.3g} "
          f"float32 ulp ({rel.max(initial=0):.2e} relative), beyond one ulp by at most "
          f"{max(beyond, 0):.1e} of the largest value: {'ok' if good else 'FAIL'}")
    ok &= good
sys.exit(0 if ok else 1)

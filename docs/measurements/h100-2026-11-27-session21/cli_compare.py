"""Compares cli_probe.sh's outputs with the CPU's (no astropy on GPU machines)."""
import sys

import numpy as np


def fits(path, hdu=0):
    """Image HDU `hdu` of a FITS file, as float64."""
    buf = open(path, "rb").read()
    start = 0
    for _ in range(hdu + 1):
        cards, i = {}, start
        while True:
            card = buf[i:i + 80].decode("ascii")
            i += 80
            if card.startswith("END"):
                break
            if card[8:10] == "= ":
                cards[card[:8].strip()] = card[10:].split("/")[0].strip()
        data = -(-i // 2880) * 2880
        dtype = {"-64": ">f8", "-32": ">f4"}[cards["BITPIX"]]
        shape = (int(cards["NAXIS2"]), int(cards["NAXIS1"]))
        start = data + -(-(shape[0] * shape[1] * np.dtype(dtype).itemsize) // 2880) * 2880
    return np.frombuffer(buf, dtype, shape[0] * shape[1], data).reshape(shape).astype(float)


d = sys.argv[1]
cpu, fp = fits(f"{d}/out-cpu.fits"), fits(f"{d}/out-cpu.fits", 1)
ok = True
for name in ("out-cuda", "job-gpu", "job-cpu", "job-owner"):
    v, f = fits(f"{d}/{name}.fits"), fits(f"{d}/{name}.fits", 1)
    same_fp = np.array_equal(f, fp)
    rel = np.nanmax(np.abs(v - cpu) / np.maximum(np.abs(cpu), 1e-300))
    good = same_fp and np.allclose(v, cpu, rtol=1e-9, atol=0, equal_nan=True)
    print(f"  {name:9s} against the CPU: footprints identical {same_fp}, max rel {rel:.2e}: "
          f"{'ok' if good else 'FAIL'}")
    ok &= good
sys.exit(0 if ok else 1)

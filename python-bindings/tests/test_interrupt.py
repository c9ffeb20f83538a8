"""Ctrl-C stops a long reprojection: a real SIGINT to a real Python process whose call
(64M output pixels, quintic: several seconds on any machine) then raises KeyboardInterrupt
within moments, instead of after the whole job."""

import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("astropy.wcs")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")

CHILD = """
import time, numpy as np
from astropy.wcs import WCS
import reproject_rs

def sky(ctype, crval, crpix, cdelt):
    w = WCS(naxis=2)
    w.wcs.ctype, w.wcs.crval = ctype, crval
    w.wcs.crpix, w.wcs.cdelt = [crpix, crpix], [-cdelt, cdelt]
    return w

data = np.random.default_rng(0).random((1024, 1024)).astype(np.float32)
w_in = sky(["GLON-CAR", "GLAT-CAR"], [0.0, 0.0], 512.5, 0.01)
w_out = sky(["RA---ZEA", "DEC--ZEA"], [266.4, -28.9], 4000.5, 0.0026)
print("start", flush=True)
t = time.perf_counter()
try:
    reproject_rs.reproject_interp((data, w_in), w_out, shape_out=(8000, 8000), order=5)
    print(f"finished {time.perf_counter() - t:.2f}", flush=True)
except KeyboardInterrupt:
    print(f"interrupted {time.perf_counter() - t:.2f}", flush=True)
"""


def test_ctrl_c_stops_a_long_job():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "start"
        time.sleep(1.0)  # well into the job
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        waited = time.perf_counter() - sent
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    assert line.startswith("interrupted"), line
    assert waited < 5.0, f"KeyboardInterrupt {waited:.1f} s after Ctrl-C"

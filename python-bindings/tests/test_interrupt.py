"""Ctrl-C stops a long reprojection, lazy result or mosaic: a real SIGINT to a real Python process whose
call (64M output pixels, quintic: many seconds on any machine) then raises KeyboardInterrupt
within moments, instead of after the whole job."""

import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("astropy.wcs")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")

# The child handles SIGINT as an interactive Python does (a KeyboardInterrupt): a process
# started in the background by a non-interactive shell, as CI may start this suite, inherits
# SIGINT ignored, and Python then leaves it ignored.
SETUP = """
import signal, time, numpy as np
signal.signal(signal.SIGINT, signal.default_int_handler)
from astropy.wcs import WCS
import reproject_rs
from reproject_rs.mosaicking import reproject_and_coadd

def sky(ctype, crval, crpix, cdelt):
    w = WCS(naxis=2)
    w.wcs.ctype, w.wcs.crval = ctype, crval
    w.wcs.crpix, w.wcs.cdelt = [crpix, crpix], [-cdelt, cdelt]
    return w

rng = np.random.default_rng(0)
tan = ["RA---TAN", "DEC--TAN"]
"""

JOBS = {
    # About 18 s on this project's 2-core machine.
    "reproject": """
data = rng.random((1024, 1024)).astype(np.float32)
w_in = sky(["GLON-CAR", "GLAT-CAR"], [0.0, 0.0], 512.5, 0.01)
w_out = sky(["RA---ZEA", "DEC--ZEA"], [266.4, -28.9], 4000.5, 0.0026)
job = lambda: reproject_rs.reproject_interp((data, w_in), w_out, shape_out=(8000, 8000), order=5)
""",
    # The same job as a lazy result computed whole (return_type='lazy', then compute()).
    "lazy": """
data = rng.random((1024, 1024)).astype(np.float32)
w_in = sky(["GLON-CAR", "GLAT-CAR"], [0.0, 0.0], 512.5, 0.01)
w_out = sky(["RA---ZEA", "DEC--ZEA"], [266.4, -28.9], 4000.5, 0.0026)
lazy = reproject_rs.reproject_interp((data, w_in), w_out, shape_out=(8000, 8000), order=5,
                                     return_type="lazy")
job = lazy.compute
""",
    # About 32 s there.
    "mosaic": """
inputs = [(rng.random((1024, 1024)),
           sky(tan, [150.0 + 0.5 * (k % 2), 30.0 + 0.5 * (k // 2)], 512.5, 0.001))
          for k in range(4)]
out = sky(["RA---SIN", "DEC--SIN"], [150.25, 30.25], 4000.5, 0.00018)
job = lambda: reproject_and_coadd(inputs, out, shape_out=(8000, 8000),
                                  reproject_function=reproject_rs.reproject_interp, order=5)
""",
}

RUN = """
print("start", flush=True)
t = time.perf_counter()
try:
    job()
    print(f"finished {time.perf_counter() - t:.2f}", flush=True)
except KeyboardInterrupt:
    print(f"interrupted {time.perf_counter() - t:.2f}", flush=True)
"""


@pytest.mark.parametrize("kind", sorted(JOBS))
def test_ctrl_c_stops_a_long_job(kind):
    script = SETUP + JOBS[kind] + RUN
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
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

"""reproject_rs in processes forked by ``multiprocessing`` (its default on Linux before Python
3.14) after the parent has reprojected: the children compute the parent's values instead of
waiting for ever on thread pools whose threads stayed in the parent."""

import multiprocessing
import sys

import numpy as np
import pytest

import reproject_rs

WCS = pytest.importorskip("astropy.wcs").WCS

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork is Linux's default")

JOBS = [
    dict(order="bicubic"),  # reproject's default parallel=False: one thread
    dict(order="bicubic", parallel=True),  # every core
    dict(order="bilinear", parallel=2),
    dict(order="bicubic", parallel=2, block_size=(16, 16)),
]


def sky(crpix, cdelt):
    w = WCS(naxis=2)
    w.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    w.wcs.crval, w.wcs.crpix, w.wcs.cdelt = [150.0, 30.0], [crpix, 32.0], [-cdelt, cdelt]
    return w


def job(k):
    data = np.random.default_rng(0).normal(size=(64, 64))
    out, _ = reproject_rs.reproject_interp(
        (data, sky(32.0, 0.001)), sky(30.5, 0.0011), shape_out=(60, 60), **JOBS[k]
    )
    return out


def test_forked_workers_compute_after_the_parent():
    expected = [job(k) for k in range(len(JOBS))]  # the parent's thread pools now exist
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = [pool.apply_async(job, (k,)) for k in range(len(JOBS))]
        for k, result in enumerate(results):
            try:
                got = result.get(timeout=60)
            except multiprocessing.TimeoutError:
                pool.terminate()
                pytest.fail(f"a forked worker did not finish {JOBS[k]} in 60 s")
            np.testing.assert_array_equal(got, expected[k], err_msg=str(JOBS[k]))

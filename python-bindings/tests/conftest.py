"""Shared fixtures: reproject's test data and synthetic WCS pairs."""

import os
import sys

import numpy as np
import pytest

from astropy.io import fits

#: Relative tolerance on values against astropy reproject (the issue's bar).
RTOL = 1e-6
#: At most this fraction of footprint pixels may differ (half-pixel ties decided by round-off).
FOOTPRINT_FRACTION = 1e-4


def gpu_simulated() -> bool:
    """Whether the GPU tests run on the CUDA simulator (``REPROJECT_RS_CUDA_SIM``, which the
    GPU test modules set to 1 unless it is set: ``REPROJECT_RS_CUDA_SIM=0`` runs them on the
    machine's GPU, as the GPU bundle does)."""
    value = os.environ.get("REPROJECT_RS_CUDA_SIM", "").strip().lower()
    return value not in ("", "0", "false", "no", "off")


def cupy_for_tests(monkeypatch):
    """The CuPy the GPU-array tests use: on the simulator, the stand-in whose arrays live in
    the simulator's memory (:mod:`fake_cupy`), installed as ``cupy``; on a GPU, CuPy itself
    (the test skips without it)."""
    if not gpu_simulated():
        return pytest.importorskip("cupy")
    import fake_cupy

    module = fake_cupy.module()
    monkeypatch.setitem(sys.modules, "cupy", module)
    return module


def reproject_data_dir():
    reproject = pytest.importorskip("reproject")
    return os.path.join(os.path.dirname(reproject.__file__), "tests", "data")


@pytest.fixture(scope="session")
def data_dir():
    return reproject_data_dir()


@pytest.fixture(scope="session")
def galactic_2d_path(data_dir):
    return os.path.join(data_dir, "galactic_2d.fits")


@pytest.fixture
def galactic_hdu(galactic_2d_path):
    with fits.open(galactic_2d_path) as hdul:
        hdu = hdul[0]
        hdu.data  # load while the file is open
        yield hdu


def tan_header(crval=(266.4, -28.9), crpix=(25.0, 22.0), cdelt=0.002, shape=(50, 45), rot=0.0,
               ctype=("RA---TAN", "DEC--TAN"), naxis=True):
    """A FITS header of a (possibly rotated) celestial WCS; shape is numpy order."""
    h = fits.Header()
    if naxis:
        h["NAXIS"] = 2
        h["NAXIS1"] = shape[1]
        h["NAXIS2"] = shape[0]
    h["CTYPE1"], h["CTYPE2"] = ctype
    h["CRVAL1"], h["CRVAL2"] = crval
    h["CRPIX1"], h["CRPIX2"] = crpix
    c, s = np.cos(np.radians(rot)), np.sin(np.radians(rot))
    h["CD1_1"], h["CD1_2"] = -cdelt * c, cdelt * s
    h["CD2_1"], h["CD2_2"] = cdelt * s, cdelt * c
    return h


def assert_matches(ours, theirs, rtol=RTOL, footprint_fraction=FOOTPRINT_FRACTION):
    """Values within rtol (relative to the image's scale) where both are finite; NaN masks and
    footprints equal but for a tiny fraction of pixels."""
    (a, fa), (b, fb) = ours, theirs
    assert a.shape == b.shape and fa.shape == fb.shape
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    finite = np.isfinite(a) & np.isfinite(b)
    scale = max(np.nanmax(np.abs(b)) if np.isfinite(b).any() else 0.0, 1e-300)
    if finite.any():
        err = np.max(np.abs(a[finite] - b[finite]) / np.maximum(np.abs(b[finite]), scale * 1e-3))
        assert err <= rtol, f"max relative difference {err}"
    allowed = int(footprint_fraction * fa.size)
    assert (np.isnan(a) != np.isnan(b)).sum() <= allowed
    assert (fa != fb).sum() <= allowed


def both(*args, **kwargs):
    """``(reproject_rs's result, reproject's result)`` of the same ``reproject_interp`` call
    (reproject's warnings silenced)."""
    import warnings

    import reproject

    import reproject_rs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = reproject.reproject_interp(*args, **kwargs)
    ours = reproject_rs.reproject_interp(*args, **kwargs)
    return ours, theirs

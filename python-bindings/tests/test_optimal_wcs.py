"""find_optimal_celestial_wcs on the Rust core against reproject 0.21's: the same WCS numbers
and shape for every keyword, input form and frame."""

import warnings

import numpy as np
import pytest

reproject = pytest.importorskip("reproject")
from astropy import units as u
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.wcs import WCS

from reproject_rs.mosaicking import find_optimal_celestial_wcs as ours
from reproject.mosaicking import find_optimal_celestial_wcs as theirs


def tan(crval, crpix, cdelt=0.002, rot=0.0, ctype=("RA---TAN", "DEC--TAN")):
    w = WCS(naxis=2)
    w.wcs.ctype = list(ctype)
    w.wcs.crval = crval
    w.wcs.crpix = crpix
    w.wcs.cdelt = [-cdelt, cdelt]
    c, s = np.cos(np.radians(rot)), np.sin(np.radians(rot))
    w.wcs.pc = [[c, -s], [s, c]]
    return w


INPUTS = [
    ((40, 50), tan((150.0, 30.0), (25, 20))),
    ((60, 30), tan((150.05, 30.02), (15, 30), rot=10.0)),
    ((35, 45), tan((149.97, 30.04), (20, 18), cdelt=0.0015, rot=-20.0)),
]
GALACTIC = [((40, 50), tan((120.0, 10.0), (25, 20), ctype=("GLON-TAN", "GLAT-TAN")))]


def same(a, b):
    (wa, sa), (wb, sb) = a, b
    assert sa == sb
    assert list(wa.wcs.ctype) == list(wb.wcs.ctype)
    for key in ("crval", "crpix", "cdelt"):
        np.testing.assert_allclose(getattr(wa.wcs, key), getattr(wb.wcs, key), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(wa.wcs.get_pc(), wb.wcs.get_pc(), rtol=1e-9, atol=1e-12)


def both(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ours(*args, **kwargs), theirs(*args, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"projection": "CAR"},
        {"projection": "AIT"},
        {"frame": "galactic"},
        {"resolution": 5 * u.arcsec},
        {"reference": SkyCoord(150.01, 30.01, unit="deg", frame="icrs")},
        {"auto_rotate": True},
        {"negative_lon_cdelt": False},
        {"negative_lon_cdelt": "auto"},
    ],
)
def test_keywords(kwargs):
    same(*both(INPUTS, **kwargs))


def test_galactic_inputs_into_icrs_and_single_inputs():
    same(*both(GALACTIC, frame="icrs"))
    same(*both(INPUTS[0]))


def test_hdus_and_files(tmp_path):
    hdus = [fits.ImageHDU(np.zeros(s), w.to_header()) for s, w in INPUTS]
    same(*both(hdus))
    path = tmp_path / "in.fits"
    fits.PrimaryHDU(np.zeros(INPUTS[0][0]), INPUTS[0][1].to_header()).writeto(path)
    same(*both([str(path), hdus[1]]))
    # Two HDUs and no hdu_in: reproject's error.
    two = tmp_path / "two.fits"
    fits.HDUList([fits.PrimaryHDU(), hdus[2]]).writeto(two)
    with pytest.raises(ValueError):
        theirs([str(two)])
    with pytest.raises(ValueError):
        ours([str(two)])
    same(*both([str(two)], hdu_in=1))


def test_errors_as_reproject():
    cube = WCS(naxis=3)
    cube.wcs.ctype = ["RA---TAN", "DEC--TAN", "FREQ"]
    with pytest.raises(ValueError):
        theirs([((3, 40, 50), cube)])
    with pytest.raises(ValueError):
        ours([((3, 40, 50), cube)])

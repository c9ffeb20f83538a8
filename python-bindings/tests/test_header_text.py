"""The header text reproject_rs hands the engine for an astropy WCS object (``wcs_to_header``):
without SIP it is WCSLIB's own text, which must hold the cards of ``WCS.to_header(relax=True)``
and make the engine compute the same bits."""

import glob
import os
import warnings

import numpy as np
import pytest

from reproject_rs import _core
from reproject_rs._parse import wcs_to_header

fits = pytest.importorskip("astropy.io.fits")
WCS = pytest.importorskip("astropy.wcs").WCS

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "wcs-vectors")


def built_wcs():
    """WCS objects as a Python user builds them: every projection code, frames with an
    equinox and a date, CD matrices, LONPOLE/LATPOLE, PV parameters, a spectral cube."""
    out = {}
    for code in ["TAN", "SIN", "ARC", "ZEA", "STG", "AIT", "MOL", "CAR", "MER", "CEA", "COE",
                 "BON", "PCO", "TSC", "HPX", "XPH", "AZP", "SZP", "ZPN", "AIR", "CYP", "PAR",
                 "SFL", "COP", "COD", "COO", "CSC", "QSC"]:
        w = WCS(naxis=2)
        w.wcs.ctype = [f"RA---{code}", f"DEC--{code}"]
        w.wcs.crval, w.wcs.crpix, w.wcs.cdelt = [150.0, 30.0], [20.5, 15.5], [-0.05, 0.05]
        if code in ("COE", "COP", "COD", "COO"):
            w.wcs.set_pv([(2, 1, 45.0), (2, 2, 10.0)])
        elif code == "BON":
            w.wcs.set_pv([(2, 1, 40.0)])
        elif code == "AZP":
            w.wcs.set_pv([(2, 1, 2.0), (2, 2, 30.0)])
        elif code == "ZPN":
            w.wcs.set_pv([(2, 0, 0.0), (2, 1, 1.0), (2, 3, -0.1)])
        out[code] = w
    fk4 = WCS(naxis=2)
    fk4.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    fk4.wcs.crval, fk4.wcs.crpix = [10.0, -20.0], [8.0, 9.0]
    fk4.wcs.cd = [[-1e-3, 2e-4], [3e-4, 1e-3]]
    fk4.wcs.radesys, fk4.wcs.equinox, fk4.wcs.dateobs = "FK4", 1950.0, "1990-05-06T07:08:09"
    fk4.wcs.lonpole, fk4.wcs.latpole = 170.0, -20.0
    out["fk4_cd_poles"] = fk4
    gal = WCS(naxis=2)
    gal.wcs.ctype = ["GLON-CAR", "GLAT-CAR"]
    gal.wcs.crval, gal.wcs.crpix, gal.wcs.cdelt = [0.0, 0.0], [30.5, 20.5], [-0.1, 0.1]
    gal.wcs.pc = [[0.9, -0.1], [0.1, 0.9]]
    out["galactic_pc"] = gal
    cube = WCS(naxis=3)
    cube.wcs.ctype = ["RA---SIN", "DEC--SIN", "VRAD"]
    cube.wcs.cunit = ["deg", "deg", "km/s"]
    cube.wcs.crval, cube.wcs.crpix = [150.0, 2.0, 10.0], [10.5, 9.5, 1.0]
    cube.wcs.cdelt = [-0.01, 0.01, 2.5]
    cube.wcs.restfrq, cube.wcs.specsys = 1.420405752e9, "LSRK"
    out["spectral_cube"] = cube
    return out


def vector_wcs():
    """The WCS of ../shared/wcs-vectors' headers (astropy's own test headers)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(VECTORS, "*.hdr"))):
        text = open(path).read()
        header = fits.Header.fromstring(text, sep="\n" if "\n" in text else "")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[os.path.basename(path)] = WCS(header)
    return out


def cards(text):
    header = fits.Header.fromstring(text)
    for key in ["", "COMMENT"]:
        while key in header:
            del header[key]
    return list(header.items())


@pytest.mark.parametrize("source", [built_wcs, vector_wcs])
def test_wcslib_text_is_astropys_header(source):
    wcs_list = source()
    assert len(wcs_list) >= 30, "no WCS found (../shared/wcs-vectors missing?)"
    checked = 0
    for name, w in wcs_list.items():
        if w.sip is not None:
            assert wcs_to_header(w) == w.to_header(relax=True).tostring(), name
            continue
        text, astropy_text = wcs_to_header(w), w.to_header(relax=True).tostring()
        assert cards(text) == cards(astropy_text), name
        # The engine reads both the same: one as the input, the other as the output of a
        # reprojection onto itself gives the bits of the input onto itself.
        shape = [min(n, 24) for n in (w.pixel_shape[::-1] if w.pixel_shape else [20] * w.naxis)]
        data = np.random.default_rng(1).normal(size=shape)
        same = _core.reproject_interp(data, astropy_text, astropy_text, shape)
        mixed = _core.reproject_interp(data, astropy_text, text, shape)
        for a, b in zip(same, mixed):
            np.testing.assert_array_equal(a, b, err_msg=name)
        checked += 1
    assert checked >= 30

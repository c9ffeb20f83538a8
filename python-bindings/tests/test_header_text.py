"""The header text reproject_rs hands the engine for an astropy WCS object (``wcs_to_header``):
WCSLIB's own text with 17 digits, plus SIP cards of its own. It must hold the cards of
``WCS.to_header(relax=True)`` (whose values have 14 digits), hold the object's values exactly
(reproject computes with the object), and so make the engine compute, for a WCS read from a
header, the bits of that header's own text."""

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
    digits = WCS(naxis=2)
    digits.wcs.ctype = ["RA---ZEA", "DEC--ZEA"]
    digits.wcs.crval, digits.wcs.crpix = [150.12345678901234, -2.1234567890123457], [20.5, 15.5]
    digits.wcs.cd = np.array([[-1.2345678901234567e-3, 2e-5], [3e-5, 1.1111111111111112e-3]])
    out["all_digits"] = digits
    out["sip_all_digits"] = sip_wcs()
    out["sip_12_digits"] = sip_wcs(digits=12)
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


def sip_wcs(digits=None, ctype_suffix="-SIP"):
    """A TAN-SIP WCS as a Python user builds one: order-3 A/B and AP/BP coefficients, with
    all of a double's digits (``digits=None``) or rounded to ``digits`` significant ones."""
    from astropy.wcs import Sip

    rng = np.random.default_rng(7)

    def coefficients(scale):
        a = np.zeros((4, 4))
        for i in range(4):
            for j in range(4 - i):
                if i + j >= 2:
                    a[i, j] = rng.normal() * scale ** (i + j)
        if digits is not None:
            a = np.array([float(f"{v:.{digits}g}") for v in a.flat]).reshape(4, 4)
        return a

    w = WCS(naxis=2)
    w.wcs.ctype = [f"RA---TAN{ctype_suffix}", f"DEC--TAN{ctype_suffix}"]
    w.wcs.crval, w.wcs.crpix = [150.1, 2.2], [40.5, 35.5]
    w.wcs.cd = [[-8e-4, 1e-5], [2e-5, 8e-4]]
    w.sip = Sip(coefficients(3e-3), coefficients(3e-3), coefficients(-3e-3), coefficients(-3e-3),
                w.wcs.crpix)
    w.pixel_shape = (80, 70)
    return w


def sky_wcs(ctype, crval, crpix, cdelt=1e-3):
    """A celestial WCS object of square pixels of ``cdelt`` degrees."""
    w = WCS(naxis=2)
    w.wcs.ctype, w.wcs.crval, w.wcs.crpix, w.wcs.cdelt = ctype, crval, crpix, [-cdelt, cdelt]
    return w


def cards(text):
    header = fits.Header.fromstring(text)
    for key in ["", "COMMENT"]:
        while key in header:
            del header[key]
    return list(header.items())


@pytest.mark.parametrize("source", [built_wcs, vector_wcs])
def test_wcslib_text_has_astropys_cards(source):
    """The cards of ``WCS.to_header(relax=True)`` in its order; its values to its 14 digits."""
    wcs_list = source()
    assert len(wcs_list) >= 30, "no WCS found (../shared/wcs-vectors missing?)"
    for name, w in wcs_list.items():
        ours, theirs = cards(wcs_to_header(w)), cards(w.to_header(relax=True).tostring())
        assert [k for k, _ in ours] == [k for k, _ in theirs], name
        for (key, value), (_, astropy_value) in zip(ours, theirs):
            if isinstance(value, float):
                assert value == pytest.approx(astropy_value, rel=1e-13, abs=1e-300), (name, key)
            else:
                assert value == astropy_value, (name, key)


@pytest.mark.parametrize("source", [built_wcs, vector_wcs])
def test_wcslib_text_holds_the_objects_values(source):
    """Read back by astropy, the text gives the object's world coordinates to the last bit
    (from astropy's 14 digits, some differ)."""
    lossy = 0
    for name, w in source().items():
        pixels = np.random.default_rng(5).uniform(-5, 40, size=(50, w.naxis))
        world = w.all_pix2world(pixels, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            back = WCS(fits.Header.fromstring(wcs_to_header(w)))
            astropys = WCS(w.to_header(relax=True))
        np.testing.assert_array_equal(back.all_pix2world(pixels, 0), world, err_msg=name)
        lossy += not np.array_equal(astropys.all_pix2world(pixels, 0), world, equal_nan=True)
    assert lossy > 0, "no WCS astropy's text changes: the test shows nothing"


def test_vectors_compute_as_their_files():
    """A WCS read from a header, given as an object, computes the bits of the header's own
    text. With astropy's 14 digits, 7 of the 43 differ (by up to 4e-8 of the values)."""
    checked = 0
    for path in sorted(glob.glob(os.path.join(VECTORS, "*.hdr"))):
        text = open(path).read()
        header = fits.Header.fromstring(text, sep="\n" if "\n" in text else "")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = WCS(header)
        if w.cpdis1 is not None or w.det2im1 is not None:
            continue  # lookup tables: astropy computes the positions
        file_text = header.tostring()
        shape = [min(n, 24) for n in (w.pixel_shape[::-1] if w.pixel_shape else [20] * w.naxis)]
        data = np.random.default_rng(1).normal(size=shape)
        same = _core.reproject_interp(data, file_text, file_text, shape)
        mixed = _core.reproject_interp(data, file_text, wcs_to_header(w), shape)
        for a, b in zip(same, mixed):
            np.testing.assert_array_equal(a, b, err_msg=os.path.basename(path))
        checked += 1
    assert checked >= 40


@pytest.mark.parametrize("order", [0, 1, 3])
def test_sip_wcs_objects_match_reproject(order):
    """A SIP WCS object as input and as output, against reproject itself."""
    from conftest import assert_matches, both

    w = sip_wcs()
    out = sky_wcs(["RA---TAN", "DEC--TAN"], [150.11, 2.21], [30.5, 30.5])
    image = np.random.default_rng(3).normal(size=(70, 80))
    for args, shape_out in [((image, w), (60, 60)), ((image[:60, :60], out), (70, 80))]:
        target = out if args[1] is w else w
        ours, theirs = both(args, target, shape_out=shape_out, order=order)
        assert np.isfinite(theirs[0]).sum() > 1000
        assert_matches(ours, theirs)


def test_sip_without_the_ctype_suffix_takes_astropys_path():
    """astropy appends "-SIP" to such a CTYPE (and logs why): its text, unchanged."""
    w = sip_wcs(ctype_suffix="")
    assert wcs_to_header(w) == w.to_header(relax=True).tostring()
    assert "RA---TAN-SIP" in wcs_to_header(w)


def test_alternate_wcs_objects():
    """``WCS(header, key="A")`` writes its keywords with the letter (``CTYPE1A``), which the
    engine, reading the primary keywords, took for no WCS at all (before: an error where
    reproject computes). Its text is written as primary; the user's object keeps its key."""
    from conftest import assert_matches, both

    header = fits.Header()
    for key, value in dict(NAXIS=2, NAXIS1=40, NAXIS2=30, CTYPE1="RA---TAN", CTYPE2="DEC--TAN",
                           CRPIX1=20.0, CRPIX2=15.0, CRVAL1=150.0, CRVAL2=2.0, CDELT1=-1e-3,
                           CDELT2=1e-3, CTYPE1A="GLON-CAR", CTYPE2A="GLAT-CAR", CRPIX1A=18.5,
                           CRPIX2A=16.0, CRVAL1A=236.0, CRVAL2A=42.0, CDELT1A=-1e-3,
                           CDELT2A=1e-3).items():
        header[key] = value
    w = WCS(header, key="A")
    text = wcs_to_header(w)
    assert "CTYPE1A" not in text and w.wcs.alt == "A"
    pixels = np.random.default_rng(5).uniform(-5, 40, size=(50, 2))
    np.testing.assert_array_equal(
        WCS(fits.Header.fromstring(text)).all_pix2world(pixels, 0), w.all_pix2world(pixels, 0)
    )
    out = sky_wcs(["GLON-TAN", "GLAT-TAN"], [236.0, 42.0], [20, 15])
    image = np.random.default_rng(3).normal(size=(30, 40))
    ours, theirs = both((image, w), out, shape_out=(30, 40))
    assert np.isfinite(theirs[0]).sum() > 1000
    assert_matches(ours, theirs)


def test_sip_origin_other_than_crpix():
    """A SIP polynomial about another origin than CRPIX (``Sip(..., crpix)``; or CRPIX moved
    by hand after reading a header) has no FITS keyword: header text would move the
    distortion (before: values off by 1.5 on data of unit scale). astropy computes its
    positions, as reproject does."""
    from astropy.wcs import Sip
    from conftest import assert_matches, both

    from reproject_rs._parse import _parsed_from_wcs

    w = sip_wcs()
    a, b = np.zeros((3, 3)), np.zeros((3, 3))
    a[2, 0], b[0, 2] = 2e-4, 1e-4
    w.sip = Sip(a, b, None, None, [10.0, 10.0])
    assert _parsed_from_wcs(w).header is None
    with pytest.raises(_core.UnsupportedError, match="SIP origin"):
        wcs_to_header(w)
    out = sky_wcs(["RA---TAN", "DEC--TAN"], [150.11, 2.21], [30.5, 30.5])
    image = np.random.default_rng(3).normal(size=(70, 80))
    ours, theirs = both((image, w), out, shape_out=(60, 60))
    assert np.isfinite(theirs[0]).sum() > 1000
    assert_matches(ours, theirs)
    assert _parsed_from_wcs(sip_wcs()).header is not None  # the same origin: the engine's

"""Headers (a ``Header``, an HDU, header text) of celestial images skip astropy's
``WCS(header)``, which was most of a small call's time: the engine's reading of the text
answers reproject's WCS checks, and astropy's WCS is built only when something needs it (a
cube, an error astropy words, positions astropy computes)."""

import glob
import os
import warnings

import numpy as np
import pytest

import reproject_rs
from reproject_rs import _core, _parse

fits = pytest.importorskip("astropy.io.fits")
astropy_wcs = pytest.importorskip("astropy.wcs")

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "wcs-vectors")


def headers():
    """Every wcs-vectors header (astropy's own test headers), and headers of WCS a Python
    user builds (every projection, frames, a cube, a SIP image)."""
    from test_header_text import built_wcs

    out = {}
    for path in sorted(glob.glob(os.path.join(VECTORS, "*.hdr"))):
        text = open(path).read()
        out[os.path.basename(path)] = fits.Header.fromstring(
            text, sep="\n" if "\n" in text else ""
        )
    for name, w in built_wcs().items():
        out[name] = w.to_header(relax=True)
    return out


def test_engine_reads_the_axes_astropy_reads():
    """Where the engine takes a header for a celestial image, astropy's WCS has the same two
    axes, celestial, with no spectral axis: reproject's checks would pass the same."""
    images = 0
    for name, header in headers().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = astropy_wcs.WCS(header)
        try:
            naxis, celestial = _core.header_axes(header.tostring())
        except _core.ReprojectError:
            continue  # the engine's error, as before: astropy's WCS is built
        assert naxis == w.naxis, name
        expected = (w.wcs.lng, w.wcs.lat) if w.has_celestial else None
        assert celestial == expected, name
        if naxis == 2 and celestial is not None:
            assert w.wcs.spec < 0 and w.pixel_n_dim == 2, name
            images += 1
    assert images >= 40


@pytest.fixture
def wcs_built(monkeypatch):
    """Counts the astropy WCS the package builds from headers."""
    built = []
    real = _parse._astropy

    class AnyWcs(type(astropy_wcs.WCS)):
        def __instancecheck__(cls, obj):  # a user's WCS is still a WCS to the package
            return isinstance(obj, astropy_wcs.WCS)

    class CountingWCS(astropy_wcs.WCS, metaclass=AnyWcs):
        def __init__(self, *args, **kwargs):
            built.append(args[0] if args else None)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(_parse, "_astropy", lambda: (real()[0], CountingWCS))
    return built


def tan(crval1=150.0):
    """A 30 × 40 TAN image's header."""
    h = fits.Header()
    h["NAXIS"] = 2
    h["NAXIS1"], h["NAXIS2"] = 40, 30
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    h["CRVAL1"], h["CRVAL2"] = crval1, 2.0
    h["CRPIX1"], h["CRPIX2"] = 20.5, 15.5
    h["CDELT1"], h["CDELT2"] = -1e-3, 1e-3
    return h


def test_celestial_headers_build_no_astropy_wcs(wcs_built):
    data = np.random.default_rng(0).normal(size=(30, 40))
    out = tan(150.005)
    reference = reproject_rs.reproject_interp((data, tan()), out.tostring(), shape_out=(30, 40))
    for input_data in [(data, tan()), fits.PrimaryHDU(data, tan()), (data, tan().tostring())]:
        for output in [out, out.tostring()]:
            result = reproject_rs.reproject_interp(input_data, output, shape_out=(30, 40))
            for a, b in zip(result, reference):
                np.testing.assert_array_equal(a, b)
    assert wcs_built == []
    from reproject_rs.mosaicking import reproject_and_coadd

    reproject_and_coadd([(data, tan()), (data, tan(150.01))], out, shape_out=(30, 40),
                        reproject_function=reproject_rs.reproject_interp)
    assert wcs_built == []


def test_a_cube_header_builds_astropys_wcs(wcs_built):
    cube = tan()
    cube["NAXIS"], cube["NAXIS3"] = 3, 2
    cube["CTYPE3"], cube["CRVAL3"], cube["CDELT3"], cube["CRPIX3"] = "FREQ", 1.4e9, 1e6, 1.0
    data = np.random.default_rng(0).normal(size=(2, 30, 40))
    reproject_rs.reproject_interp((data, cube), cube, shape_out=(2, 30, 40))
    assert len(wcs_built) == 2


def test_reprojects_checks_keep_their_errors(wcs_built):
    """A celestial image onto a linear one, and onto a cube: reproject's errors and
    messages, whichever side builds astropy's WCS."""
    linear = fits.Header()
    linear["CTYPE1"], linear["CTYPE2"] = "X", "Y"
    data = np.zeros((30, 40))
    with pytest.raises(_core.WcsError, match="Input WCS has celestial components but output"):
        reproject_rs.reproject_interp((data, tan()), linear, shape_out=(30, 40))
    with pytest.raises(_core.WcsError, match="Output WCS has celestial components but input"):
        reproject_rs.reproject_interp((data, linear), tan(), shape_out=(30, 40))
    assert len(wcs_built) == 2  # the linear header's, each time
    cube = tan()
    cube["CTYPE3"] = "FREQ"
    with pytest.raises(_core.ShapeError, match="Number of dimensions in input and output WCS"):
        reproject_rs.reproject_interp((data, tan()), cube, shape_out=(30, 40))


def test_the_lazy_wcs_is_astropys_built_once(wcs_built):
    """What needs astropy's WCS (positions astropy computes, such as solar frames the engine
    does not convert; reproject's upstream tests run them) gets ``WCS(header)``, built once."""
    parsed = _parse._parsed_from_header(tan())
    assert parsed.celestial_image and parsed.pixel_n_dim == 2
    assert wcs_built == []
    w = parsed.wcs
    assert parsed.wcs is w and len(wcs_built) == 1
    assert w.to_header() == astropy_wcs.WCS(tan()).to_header()
    assert parsed.celestial_image and parsed.pixel_n_dim == 2


def _outcome(call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data, footprint = call()
        return "result", data.tobytes(), footprint.tobytes()
    except Exception as e:  # noqa: BLE001 - the outcome compared, whatever it is
        return type(e), str(e)


MALFORMED = {
    "CDELT1 = 0": dict(CDELT1=0.0),
    "singular PC": dict(PC1_1=1.0, PC1_2=1.0, PC2_1=1.0, PC2_2=1.0),
    "CRVAL2 = 100": dict(CRVAL2=100.0),
    "unknown projection": dict(CTYPE1="RA---XYZ", CTYPE2="DEC--XYZ"),
    "mixed projections": dict(CTYPE2="DEC--SIN"),
    "two longitudes": dict(CTYPE2="RA---TAN"),
    "ZPN without a root": dict(CTYPE1="RA---ZPN", CTYPE2="DEC--ZPN", PV2_0=0.0, PV2_1=0.0),
    "AZP mu = -1": dict(CTYPE1="RA---AZP", CTYPE2="DEC--AZP", PV2_1=-1.0),
    "LATPOLE 200": dict(LATPOLE=200.0),
    "RADESYS BOGUS": dict(RADESYS="BOGUS"),
    "EQUINOX text": dict(EQUINOX="J2000"),
    "CUNIT furlong": dict(CUNIT1="furlong", CUNIT2="deg"),
    "DATE-OBS yesterday": {"DATE-OBS": "yesterday"},
    "NAXIS 3, two CTYPE": dict(NAXIS=3, NAXIS3=2),
    "WCSAXES 3": dict(WCSAXES=3),
    "PV1_3 on TAN": dict(PV1_3=5.0),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_headers_end_as_through_astropys_wcs(case, monkeypatch):
    """Skipping astropy's WCS changes no outcome: each malformed header, as input and as
    output, ends with the same exception (type and message: astropy's where it raised) or
    the same bits as when astropy's WCS is always built."""
    bad = tan()
    for key, value in MALFORMED[case].items():
        bad[key] = value
    good = tan(150.005)
    data = np.random.default_rng(0).normal(size=(30, 40))
    calls = [
        lambda: reproject_rs.reproject_interp((data, bad), good, shape_out=(30, 40)),
        lambda: reproject_rs.reproject_interp((data, good), bad, shape_out=(30, 40)),
    ]
    fast = [_outcome(call) for call in calls]
    monkeypatch.setattr(_parse, "_celestial_image", lambda text: False)
    assert fast == [_outcome(call) for call in calls]


def test_optimal_wcs_of_headers_builds_no_astropy_wcs(wcs_built):
    """``find_optimal_celestial_wcs`` of HDUs and (array, Header) inputs reads their headers
    with the engine alone, and finds what it finds with astropy's WCS built."""
    from reproject_rs.mosaicking import find_optimal_celestial_wcs

    data = np.zeros((30, 40))
    inputs = [fits.PrimaryHDU(data, tan()), (data, tan(150.03))]
    wcs, shape = find_optimal_celestial_wcs(inputs)
    assert wcs_built == []
    built = [(data, astropy_wcs.WCS(tan())), (data, astropy_wcs.WCS(tan(150.03)))]
    wcs_objects, shape_objects = find_optimal_celestial_wcs(built)
    assert shape == shape_objects and shape[1] > 40
    assert wcs.to_header() == wcs_objects.to_header()


def test_a_lazy_parsed_wcs_pickles():
    """The lazy WCS is the Header it comes from, not a closure: it pickles, before and
    after astropy's WCS is built."""
    import pickle

    parsed = _parse._parsed_from_header(tan())
    copy = pickle.loads(pickle.dumps(parsed))
    assert copy.celestial_image and copy.header == parsed.header
    assert copy.wcs.to_header() == parsed.wcs.to_header()
    assert pickle.loads(pickle.dumps(parsed)).wcs.to_header() == parsed.wcs.to_header()

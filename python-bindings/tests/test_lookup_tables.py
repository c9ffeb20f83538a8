"""Distortion lookup tables (CPDIS, D2IM; HST images carry them beside SIP): the engine
computes the input positions from the header text and astropy's tables, as astropy does."""

import os
import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS, DistortionLookupTable
from astropy.wcs.utils import pixel_to_pixel

import reproject_rs
from conftest import assert_matches, both
from reproject_rs import _core, _positions
from reproject_rs._parse import ParsedWCS, engine_lookup_tables

#: astropy's own HST-like test file: SIP of order 4, CPDIS tables of 65 x 33 samples and a
#: one-row D2IM table, for a 4096 x 2048 detector (its data are a 100 x 100 stand-in).
DIST_LOOKUP = os.path.join(os.path.dirname(__import__("astropy.wcs").wcs.__file__), "tests",
                           "data", "dist_lookup.fits.gz")

#: How far astropy's and the engine's positions may differ (pixels): the engine computes each
#: point as one point of astropy's whole-grid ``all_world2pix`` call (its schedule found from
#: the grid, ``GridSchedule``), so what remains is the last bits of the world coordinates
#: (4e-9 px on this file, as much as without any distortion).
POSITION_TOLERANCE = 2e-8


def _no_astropy_positions(monkeypatch):
    """Makes astropy's positions fail: the engine must compute them."""
    def refuse(*args, **kwargs):
        raise AssertionError("astropy computed the positions")
    monkeypatch.setattr(_positions, "_pixel_positions", refuse)


@pytest.fixture(scope="module")
def hst():
    """astropy's dist_lookup WCS, an image the size of its detector, and a TAN grid of 0.4"
    pixels over part of it (with a corner off the detector)."""
    if not os.path.exists(DIST_LOOKUP):
        pytest.skip("astropy's test data are not installed")
    with fits.open(DIST_LOOKUP) as hdul:
        wcs = WCS(hdul[1].header, hdul)
    assert wcs.sip is not None and wcs.cpdis1 is not None and wcs.det2im1 is not None
    target = WCS(naxis=2)
    target.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    target.wcs.crval = wcs.all_pix2world([[3900.0, 1900.0]], 0)[0]
    target.wcs.crpix = [60.0, 50.0]
    target.wcs.cdelt = [-0.4 / 3600, 0.4 / 3600]
    target.wcs.pc = [[0.8, -0.6], [0.6, 0.8]]
    rng = np.random.default_rng(7)
    data = rng.random((2048, 4096), dtype=np.float32)
    return wcs, target, data


def _synthetic(seed=0, sip=True, d2im=True):
    """A TAN(-SIP) WCS with smooth CPDIS tables of its own grid (non-trivial CRPIX, CRVAL and
    CDELT) and a one-row D2IM table."""
    rng = np.random.default_rng(seed)
    w = WCS(naxis=2)
    w.wcs.ctype = ["RA---TAN-SIP", "DEC--TAN-SIP"] if sip else ["RA---TAN", "DEC--TAN"]
    w.wcs.crval = [202.5, 47.2]
    w.wcs.crpix = [64.5, 40.2]
    w.wcs.cd = [[-2.1e-4, 3e-5], [2.5e-5, 2.0e-4]]
    if sip:
        from astropy.wcs import Sip

        a, b = np.zeros((3, 3)), np.zeros((3, 3))
        a[2, 0], a[1, 1], b[0, 2], b[1, 1] = 3e-6, -2e-6, 2.5e-6, 1e-6
        w.sip = Sip(a, b, None, None, w.wcs.crpix)

    def table(shape, scale):
        yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]]
        phase = rng.random(2) * 6
        values = scale * np.sin(0.7 * xx + phase[0]) * np.cos(0.5 * yy + phase[1])
        return values.astype(np.float32)

    w.cpdis1 = DistortionLookupTable(table((7, 9), 0.6), (1.5, 2.0), (3.0, -5.0), (16.0, 16.0))
    w.cpdis2 = DistortionLookupTable(table((7, 9), 0.4), (1.0, 1.0), (0.0, 0.0), (17.0, 15.0))
    if d2im:
        w.det2im2 = DistortionLookupTable(table((1, 130), 0.2), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0))
    return w


def _grid(w, shape, shift=(3.3, -2.1), scale=1.07, frame=None):
    """A TAN grid near ``w``'s center: shifted, rescaled and rotated."""
    t = WCS(naxis=2)
    t.wcs.ctype = ["RA---TAN", "DEC--TAN"] if frame is None else list(frame[0])
    t.wcs.crval = w.wcs.crval if frame is None else frame[1]
    t.wcs.crpix = [w.wcs.crpix[0] + shift[0], w.wcs.crpix[1] + shift[1]]
    c = scale * np.sqrt(abs(np.linalg.det(w.wcs.cd)))
    t.wcs.cdelt = [-c, c]
    t.wcs.pc = [[0.96, -0.28], [0.28, 0.96]]
    return t


def test_positions_are_astropys(hst):
    """The engine's positions against astropy's ``pixel_to_pixel`` over the whole grid: the
    same pixels land off the detector, the rest within POSITION_TOLERANCE."""
    wcs, target, _ = hst
    text_in, tables_in = engine_lookup_tables(ParsedWCS(None, wcs))
    assert [t is not None for t in tables_in] == [True, False, True, True]
    shape = (120, 130)
    xs, ys = _core.input_positions(text_in, target.wcs.to_header(), (2048, 4096), shape,
                                   tables_in=tables_in, roundtrip_coords=False)
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ax, ay = pixel_to_pixel(target, wcs, cols.ravel(), rows.ravel())
    ax, ay = ax.reshape(shape), ay.reshape(shape)
    inside = (ax >= -0.5) & (ax < 4095.5) & (ay >= -0.5) & (ay < 2047.5)
    assert 0.3 < inside.mean() < 0.95  # part of the grid is off the detector
    np.testing.assert_array_equal(np.isfinite(xs), inside)
    assert np.max(np.abs(xs - ax)[inside]) < POSITION_TOLERANCE
    assert np.max(np.abs(ys - ay)[inside]) < POSITION_TOLERANCE
    # Each point inverted alone to 1e-12 px (precision='float64') is not astropy's: its
    # call stops at 1e-4 px for the slowest point of the grid.
    x64, _ = _core.input_positions(text_in, target.wcs.to_header(), (2048, 4096), shape,
                                   tables_in=tables_in, roundtrip_coords=False,
                                   precision="float64")
    assert np.max(np.abs(x64 - ax)[inside]) > 20 * POSITION_TOLERANCE
    # Without its tables the WCS would put the pixels elsewhere (by up to a few pixels).
    bare, _ = engine_lookup_tables(ParsedWCS(None, wcs))
    xb, _ = _core.input_positions(bare, target.wcs.to_header(), (2048, 4096), shape,
                                  roundtrip_coords=False)
    assert np.nanmax(np.abs(xb - xs)) > 0.05


@pytest.mark.parametrize("order", ["nearest-neighbor", "bilinear", "bicubic"])
def test_hst_file_matches_reproject(hst, tmp_path, monkeypatch, order):
    """A FITS file with the tables in WCSDVARR/D2IMARR extensions (the file path and the HDU
    list), as reproject reads it."""
    wcs, target, data = hst
    path = tmp_path / "flt.fits"
    with fits.open(DIST_LOOKUP) as hdul:
        hdul[1].data = data
        hdul.writeto(path)
    _no_astropy_positions(monkeypatch)
    ours, theirs = both(str(path), target, shape_out=(120, 130), hdu_in=1, order=order)
    assert_matches(ours, theirs)
    assert np.isfinite(theirs[0]).sum() > 5000
    with fits.open(path) as hdul:
        assert_matches(reproject_rs.reproject_interp(hdul, target, shape_out=(120, 130),
                                                     hdu_in=1, order=order), theirs)


@pytest.mark.parametrize("seed", range(4))
def test_synthetic_tables_as_input(seed, monkeypatch):
    """SIP with CPDIS and D2IM, and tables alone, each against reproject; with and without the
    round-trip check; galactic output (a frame change)."""
    _no_astropy_positions(monkeypatch)
    w_in = _synthetic(seed, sip=seed % 2 == 0, d2im=seed < 2)
    data = np.random.default_rng(seed).random((80, 130))
    target = _grid(w_in, (70, 75))
    for roundtrip in (True, False):
        ours, theirs = both((data, w_in), target, shape_out=(70, 75), roundtrip_coords=roundtrip)
        assert_matches(ours, theirs)
    galactic = _grid(w_in, (70, 75), frame=(("GLON-TAN", "GLAT-TAN"), (104.9, 68.6)))
    from astropy.coordinates import SkyCoord

    center = SkyCoord(*w_in.wcs.crval, unit="deg").galactic
    galactic.wcs.crval = [center.l.deg, center.b.deg]
    ours, theirs = both((data, w_in), galactic, shape_out=(70, 75), order="bicubic")
    assert_matches(ours, theirs)
    assert np.isfinite(theirs[0]).sum() > 1000


def test_tables_on_the_output_side(monkeypatch):
    """The output WCS has the tables: pixel -> world goes through them."""
    _no_astropy_positions(monkeypatch)
    w_out = _synthetic(5)
    w_in = _grid(w_out, (90, 140), shift=(-1.7, 2.9), scale=0.93)
    data = np.random.default_rng(5).random((90, 140)).astype(np.float32)
    assert_matches(*both((data, w_in), w_out, shape_out=(80, 130)))
    # Both sides with tables.
    w_in2 = _synthetic(6)
    assert_matches(*both((data, w_in2), w_out, shape_out=(80, 130)))


def test_dask_blocks_and_output_arrays(monkeypatch):
    """Dask results and the caller's output arrays take the same positions."""
    _no_astropy_positions(monkeypatch)
    w_in = _synthetic(1)
    target = _grid(w_in, (60, 64))
    data = np.random.default_rng(1).random((80, 130))
    expected = reproject_rs.reproject_interp((data, w_in), target, shape_out=(60, 64))
    lazy = reproject_rs.reproject_interp((data, w_in), target, shape_out=(60, 64),
                                         return_type="dask", block_size=(30, 32))
    np.testing.assert_array_equal(np.asarray(lazy[0]), expected[0])
    np.testing.assert_array_equal(np.asarray(lazy[1]), expected[1])
    out, foot = np.zeros((60, 64)), np.zeros((60, 64))
    reproject_rs.reproject_interp((data, w_in), target, shape_out=(60, 64), output_array=out,
                                  output_footprint=foot)
    np.testing.assert_array_equal(out, expected[0])
    with pytest.raises(reproject_rs.UnsupportedError, match="lookup tables"):
        reproject_rs.reproject_interp((data, w_in), target, shape_out=(60, 64),
                                      return_type="lazy")


def test_mosaic_of_inputs_with_tables(monkeypatch):
    """reproject_and_coadd of two such inputs against reproject's."""
    from reproject.mosaicking import reproject_and_coadd as theirs_coadd

    from reproject_rs.mosaicking import reproject_and_coadd

    _no_astropy_positions(monkeypatch)
    inputs = []
    for seed in (2, 3):
        w = _synthetic(seed)
        w.wcs.crval = [w.wcs.crval[0] + 0.004 * seed, w.wcs.crval[1]]
        inputs.append((np.random.default_rng(seed).random((80, 130)), w))
    target = _grid(inputs[0][1], (70, 120), scale=1.2)
    ours = reproject_and_coadd(inputs, target, shape_out=(70, 120),
                               reproject_function=reproject_rs.reproject_interp)
    import reproject

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = theirs_coadd(inputs, target, shape_out=(70, 120),
                              reproject_function=reproject.reproject_interp)
    assert_matches(ours, theirs)


def test_pixel_axes_with_tables_stay_with_astropy(data_dir):
    """A WCS the engine cannot give tables to (pixel axes, not celestial) keeps astropy's
    positions: the engine refuses it, and the result is reproject's."""
    path = os.path.join(data_dir, "image_with_distortion_map.fits")
    with fits.open(path) as hdul:
        w_in = WCS(hdul[0].header, hdul)
    text, tables = engine_lookup_tables(ParsedWCS(None, w_in))
    with pytest.raises(reproject_rs.ReprojectError, match="celestial"):
        _core.input_positions(text, text, (10, 10), (5, 5), tables_in=tables)


def test_bad_tables_are_errors():
    """Tables that do not describe a table: a clear error, never a crash."""
    w = _synthetic(0)
    text, tables = engine_lookup_tables(ParsedWCS(None, w))
    samples, crpix, crval, cdelt = tables[2]
    for bad in [(samples, crpix, crval, (0.0, 16.0)), (samples[:0], crpix, crval, cdelt),
                (samples, (np.nan, 1.0), crval, cdelt)]:
        with pytest.raises(ValueError, match="lookup table"):
            _core.input_positions(text, text, (10, 10), (5, 5),
                                  tables_in=[None, None, bad, None])
    with pytest.raises(ValueError, match="det2im1, det2im2, cpdis1, cpdis2"):
        _core.input_positions(text, text, (10, 10), (5, 5), tables_in=[None])
    with pytest.raises(TypeError):
        _core.input_positions(text, text, (10, 10), (5, 5),
                              tables_in=[None, None, (samples.astype(np.float64), crpix, crval,
                                                      cdelt), None])


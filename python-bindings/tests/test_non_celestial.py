"""Non-celestial WCS (pixel, blank, LINEAR, spectral, logarithmic axes) against astropy
reproject itself, through every way of calling: numpy in and out, blocks, threads, dask arrays
in, ``return_type='dask'``, and the errors reproject raises for WCS it refuses."""

import warnings

import numpy as np
import pytest

import reproject_rs
from conftest import both

reproject = pytest.importorskip("reproject")
WCS = pytest.importorskip("astropy.wcs").WCS
da = pytest.importorskip("dask.array")


def linear_wcs(crpix, crval, cdelt, ctype=("PIXX", "PIXY"), cunit=None, pc=None):
    w = WCS(naxis=len(crpix))
    if ctype is not None:
        w.wcs.ctype = list(ctype)
    if cunit is not None:
        w.wcs.cunit = list(cunit)
    w.wcs.crpix, w.wcs.crval, w.wcs.cdelt = list(crpix), list(crval), list(cdelt)
    if pc is not None:
        w.wcs.pc = pc
    return w


def image(shape, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0 : shape[-2], 0 : shape[-1]]
    base = 100 + 10 * np.sin(x / 3.0) * np.cos(y / 4.0) + rng.standard_normal(shape[-2:])
    return np.broadcast_to(base, shape).copy()


ROT = 0.3
PAIRS = {
    "blank": (
        linear_wcs((0, 0), (0, 0), (1, 1), ctype=None),
        linear_wcs((2.7, -1.4), (0, 0), (1.3, 1.3), ctype=None),
    ),
    "pixel_shift_edge": (
        linear_wcs((8, 8), (0, 0), (1, 1)),
        linear_wcs((7.5, 8.5), (0, 0), (1, 1)),
    ),
    "units_rotated": (
        linear_wcs((10, 10), (2, 300), (0.1, 5), ctype=("LINEAR", "LINEAR"), cunit=("km", "m")),
        linear_wcs(
            (9, 11),
            (2050, 30500),
            (120, 600),
            ctype=("LINEAR", "LINEAR"),
            cunit=("m", "cm"),
            pc=[[np.cos(ROT), -np.sin(ROT)], [np.sin(ROT), np.cos(ROT)]],
        ),
    ),
    "spectral_units": (
        linear_wcs((10, 6), (0, 1.42), (1, 0.002), ctype=("PIXX", "FREQ"), cunit=("", "GHz")),
        linear_wcs((9, 7), (0.5, 1420.7), (0.9, 1.7), ctype=("PIXX", "FREQ"), cunit=("", "MHz")),
    ),
    "log": (
        linear_wcs((10, 6), (5e-7, 0), (1e-9, 1), ctype=("WAVE-LOG", "PIXY")),
        linear_wcs((12, 7), (5.02e-7, 1), (1.3e-9, 0.8), ctype=("WAVE-LOG", "PIXY")),
    ),
}


def assert_same(ours, theirs):
    (a, fa), (b, fb) = (np.asarray(ours[0]), np.asarray(ours[1])), theirs
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(fa, fb)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=0, equal_nan=True)
    assert np.isfinite(b).sum() > 0


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_numpy(name, order):
    w_in, w_out = PAIRS[name]
    data = image((20, 22), seed=order)
    assert_same(*both((data, w_in), w_out, shape_out=(18, 19), order=order))


@pytest.mark.parametrize(
    "dtype",
    ["|u1", "|i1", "|b1"]
    + [o + k for k in ["u2", "i2", "u4", "i4", "u8", "i8", "f4", "f8"] for o in "<>"],
)
def test_dtypes_and_byte_orders(dtype):
    w_in, w_out = PAIRS["units_rotated"]
    data = image((20, 22)) - 90
    if np.dtype(dtype).kind in "ub":
        data = np.abs(data)
    data = data.astype(dtype)
    for order in [0, 1, 3]:
        assert_same(*both((data, w_in), w_out, shape_out=(18, 19), order=order))


def test_blocks_threads_and_dask():
    w_in, w_out = PAIRS["spectral_units"]
    data = image((20, 22))
    theirs = both((data, w_in), w_out, shape_out=(18, 19))[1]
    for kwargs in [
        {"block_size": (5, 7), "parallel": False},
        {"block_size": (5, 7), "parallel": 2},
        {"parallel": 2},
    ]:
        assert_same(reproject_rs.reproject_interp((data, w_in), w_out, shape_out=(18, 19), **kwargs), theirs)
    dask_in = da.from_array(data, chunks=(7, 9))
    assert_same(reproject_rs.reproject_interp((dask_in, w_in), w_out, shape_out=(18, 19)), theirs)
    lazy = reproject_rs.reproject_interp(
        (data, w_in), w_out, shape_out=(18, 19), return_type="dask", block_size=(6, 8)
    )
    assert_same(tuple(x.compute() for x in lazy), theirs)


def test_broadcast_planes():
    """reproject's test_reproject_block_size_broadcasting: a 2-D blank WCS over a cube."""
    w_in, w_out = PAIRS["blank"]
    data = np.stack([image((20, 22), seed=k) for k in range(3)])
    assert_same(*both((data, w_in), w_out, shape_out=(3, 18, 19)))


def test_cube_with_spectral_third_axis():
    w_in = linear_wcs((8, 8, 1), (0, 0, 5e-7), (1, 1, 1e-9), ctype=("PIXX", "PIXY", "WAVE"))
    w_out = linear_wcs(
        (7, 7.5, 1), (0.2, -0.1, 5001.2), (1.1, 1.1, 0.8), ctype=("PIXX", "PIXY", "WAVE"),
        cunit=("", "", "Angstrom"),
    )
    data = np.stack([image((16, 18), seed=k) * (1 + k / 10) for k in range(6)])
    for order in [0, 1, 3]:
        assert_same(*both((data, w_in), w_out, shape_out=(5, 14, 15), order=order))


def test_cube_with_identical_spectral_axis_and_nan_holes():
    """A celestial cube whose third axis is the same in both WCS: reproject interpolates in 3-D
    (scipy), so a NaN pixel reaches the next plane through its weight-0 tap, and spline orders
    prefilter along the third axis."""
    def cube_wcs(crpix, crval):
        w = WCS(naxis=3)
        w.wcs.ctype = ["RA---TAN", "DEC--TAN", "FREQ"]
        w.wcs.crpix = [crpix[0], crpix[1], 1]
        w.wcs.crval = [crval[0], crval[1], 1.4e9]
        w.wcs.cdelt = [-0.002, 0.002, 1e6]
        return w

    clean = np.stack([image((20, 24), seed=k) for k in range(4)])
    holes = clean.copy()
    holes.reshape(-1)[::37] = np.nan
    w_in, w_out = cube_wcs((12, 10), (150, 30)), cube_wcs((10.3, 11.6), (150.001, 30.002))
    # Spline orders prefilter along the third axis too: a NaN anywhere on a line makes it all
    # NaN in reproject, so they are compared on a cube without holes.
    for data, order in [(holes, 0), (holes, 1), (clean, 2), (clean, 3)]:
        assert_same(*both((data, w_in), w_out, shape_out=(4, 18, 21), order=order))


@pytest.mark.parametrize(
    "w_in, w_out",
    [
        # A celestial WCS against a non-celestial one.
        (linear_wcs((1, 1), (10, 20), (-0.01, 0.01), ctype=("RA---TAN", "DEC--TAN")), PAIRS["blank"][0]),
        (PAIRS["blank"][0], linear_wcs((1, 1), (10, 20), (-0.01, 0.01), ctype=("RA---TAN", "DEC--TAN"))),
        # Spectral against non-spectral, and two spectral types that differ.
        (PAIRS["spectral_units"][0], PAIRS["units_rotated"][0]),
        (PAIRS["spectral_units"][0], linear_wcs((1, 1), (0, 1e-6), (1, 1e-9), ctype=("PIXX", "WAVE"))),
        # Units that do not convert.
        (PAIRS["units_rotated"][0], linear_wcs((1, 1), (0, 0), (1, 1), ctype=("X", "Y"), cunit=("s", "m"))),
    ],
)
def test_refused_where_reproject_refuses(w_in, w_out):
    data = image((10, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as theirs:
            reproject.reproject_interp((data, w_in), w_out, shape_out=(8, 9))
    with pytest.raises(ValueError) as ours:
        reproject_rs.reproject_interp((data, w_in), w_out, shape_out=(8, 9))
    assert isinstance(ours.value, reproject_rs.ReprojectError), ours.value
    print(f"reproject: {theirs.value!r}\nreproject_rs: {ours.value!r}")


def test_time_axes_with_one_reference():
    # No output pixel lands on an exact half-pixel tie along the time axis: astropy converts
    # the offsets through Time objects, which moves them by ~1e-11 s, and decides such ties
    # by that round-off (the positions agree within 1e-9 px).
    w_in = linear_wcs((8, 5), (0, 10.0), (1, 2.0), ctype=("PIXX", "TIME"))
    w_out = linear_wcs((7, 6.3), (0.4, 13.0), (1.1, 1.5), ctype=("PIXX", "TIME"))
    for w in (w_in, w_out):
        w.wcs.mjdref = [59000.0, 0.0]
        w.wcs.timesys = "TT"
    data = image((14, 16))
    for order in [0, 1, 3]:
        assert_same(*both((data, w_in), w_out, shape_out=(12, 13), order=order))


@pytest.mark.parametrize("order", [0, 1, 3])
def test_four_axes_spectral_and_stokes(order):
    """A RA/DEC/FREQ/STOKES cube: the spectral axis resampled in another unit, the Stokes
    axis shifted by one plane."""
    def cube_wcs(crval3, cdelt3, unit, crpix4):
        w = WCS(naxis=4)
        w.wcs.ctype = ["RA---TAN", "DEC--TAN", "FREQ", "STOKES"]
        w.wcs.cunit = ["deg", "deg", unit, ""]
        w.wcs.crpix = [8.5, 8.0, 1.0, crpix4]
        w.wcs.crval = [150.0, 2.0, crval3, 1.0]
        w.wcs.cdelt = [-0.001, 0.001, cdelt3, 1.0]
        return w

    w_in = cube_wcs(1.4, 0.001, "GHz", 1.0)
    w_out = cube_wcs(1400.6, 0.7, "MHz", 0.0)
    data = np.stack([np.stack([image((16, 18), seed=k) * (1 + s) for k in range(6)]) for s in range(3)])
    assert_same(*both((data, w_in), w_out, shape_out=(2, 5, 14, 15), order=order))


# ---------------------------------------------------------------------------------------
# Pairs the engine does not evaluate itself: astropy computes the input positions (as
# reproject does) and the engine interpolates at them.


def sky_wcs(crval=(150.0, 2.0), crpix=(10.5, 9.5), cdelt=0.01, ctype=("RA---TAN", "DEC--TAN")):
    w = WCS(naxis=2)
    w.wcs.ctype = list(ctype)
    w.wcs.crval, w.wcs.crpix = list(crval), list(crpix)
    w.wcs.cdelt = [-cdelt, cdelt]
    return w


def cube_wcs(coupling=0.0):
    """A RA/DEC/FREQ cube's WCS; ``coupling`` is PC1_3, by which RA's intermediate coordinate
    depends on the spectral pixel (so a plane of the cube has no FITS WCS of its own)."""
    cube = WCS(naxis=3)
    cube.wcs.ctype = ["RA---TAN", "DEC--TAN", "FREQ"]
    cube.wcs.crval, cube.wcs.crpix = [150.0, 2.0, 1.4e9], [10.5, 9.5, 1.0]
    cube.wcs.cdelt = [-0.01, 0.01, 1e6]
    if coupling:
        cube.wcs.pc = [[1.0, 0.0, coupling], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    return cube


def test_generalized_ape14_wcs():
    """A 2-D slice of a cube's WCS that drops a spectral axis coupled to RA is an APE-14 WCS
    with no FITS header of its own: astropy computes its positions."""
    from astropy.wcs.wcsapi import SlicedLowLevelWCS

    from reproject_rs._parse import _unwrap_fits_wcs

    sliced = SlicedLowLevelWCS(cube_wcs(coupling=0.3), (2, slice(None), slice(None)))
    assert _unwrap_fits_wcs(sliced) is None
    data = image((20, 22))
    target = sky_wcs(crval=(150.02, 2.01), crpix=(9.0, 8.7), cdelt=0.012)
    for order in [0, 1, 3]:
        assert_same(*both((data, sliced), target, shape_out=(18, 19), order=order))
        assert_same(*both((data, sky_wcs()), sliced, shape_out=(18, 19), order=order))


def four_axis_wcs():
    """FREQ, RA, STOKES, DEC (FITS order), the sky rotated by its PC block."""
    w = WCS(naxis=4)
    w.wcs.ctype = ["FREQ", "RA---SIN", "STOKES", "DEC--SIN"]
    w.wcs.crval, w.wcs.crpix = [1.4e9, 150.0, 1.0, 2.0], [1.0, 10.5, 1.0, 9.5]
    w.wcs.cdelt = [1e6, -0.01, 1.0, 0.01]
    c, s = np.cos(0.2), np.sin(0.2)
    w.wcs.pc = [[1, 0, 0, 0], [0, c, 0, -s], [0, 0, 1, 0], [0, s, 0, c]]
    return w


@pytest.mark.parametrize(
    "make, slices",
    [
        (cube_wcs, (2, slice(None), slice(None))),
        (cube_wcs, (0, slice(3, None), slice(2, None))),
        (four_axis_wcs, (slice(None), 1, slice(None), 3)),
        (four_axis_wcs, (slice(2, None), 0, slice(1, None), 0)),
    ],
)
def test_cube_planes_are_computed_by_the_engine(make, slices):
    """A plane of a cube whose dropped axes are independent of its sky axes (a spectral or
    Stokes axis cut away by an integer index, as NDData slicing does) is the FITS WCS of the
    kept axes: the engine computes its positions, reproject's values come out, and the forms
    that need an engine plan (``return_type='lazy'``) take it."""
    from astropy.wcs.wcsapi import HighLevelWCSWrapper, SlicedLowLevelWCS

    from reproject_rs._parse import _unwrap_fits_wcs

    sliced = SlicedLowLevelWCS(make(), slices)
    assert _unwrap_fits_wcs(sliced).pixel_n_dim == 2
    data = image((20, 22))
    target = sky_wcs(crval=(150.02, 2.01), crpix=(9.0, 8.7), cdelt=0.012)
    for order in [0, 1, 3]:
        assert_same(*both((data, sliced), target, shape_out=(18, 19), order=order))
        assert_same(*both((data, sky_wcs()), HighLevelWCSWrapper(sliced), shape_out=(18, 19),
                          order=order))
    lazy = reproject_rs.reproject_interp((data, sliced), target, shape_out=(18, 19),
                                         return_type="lazy")
    assert_same(lazy.compute(), both((data, sliced), target, shape_out=(18, 19))[1])


def test_cube_planes_keep_their_spectral_axis():
    """Dropping only the Stokes axis of a four-axis WCS leaves a FREQ/RA/DEC cube (FITS
    order): the engine reprojects it plane by plane onto a cube of the same spectral axis."""
    from astropy.wcs.wcsapi import SlicedLowLevelWCS

    from reproject_rs._parse import _unwrap_fits_wcs

    sliced = SlicedLowLevelWCS(four_axis_wcs(), (slice(None), 0, slice(None), slice(None)))
    fits = _unwrap_fits_wcs(sliced)
    assert list(fits.wcs.ctype) == ["FREQ", "RA---SIN", "DEC--SIN"]
    target = fits.deepcopy()
    target.wcs.crpix = [1.0, 9.13, 8.71]  # no output pixel lands on an input edge
    target.wcs.cdelt = [1e6, -0.012, 0.012]
    data = np.stack([image((20, 22), seed=k) for k in range(3)], axis=-1)  # DEC, RA, FREQ
    for order in [0, 1]:
        assert_same(*both((data, sliced), target, shape_out=(18, 19, 3), order=order))


def test_lookup_table_distortion():
    from astropy.wcs import DistortionLookupTable

    w_in = sky_wcs()
    table = (np.arange(16.0).reshape(4, 4) - 8) / 20
    w_in.cpdis1 = DistortionLookupTable(table.astype(np.float32), (1, 1), (1, 1), (8, 8))
    data = image((20, 22))
    target = sky_wcs(crval=(150.01, 2.005), crpix=(9.0, 8.7), cdelt=0.011)
    for order in [0, 1, 2]:
        assert_same(*both((data, w_in), target, shape_out=(18, 19), order=order))


@pytest.mark.parametrize(
    "ctype_in, ctype_out",
    [(("PIXX", "WAVE-F2W"), ("PIXX", "WAVE-F2W")), (("PIXX", "WAVE-F2W"), ("PIXX", "WAVE"))],
)
def test_non_linear_spectral_algorithms(ctype_in, ctype_out):
    w_in = linear_wcs((8, 5), (0, 5e-7), (1, 1e-9), ctype=ctype_in)
    w_out = linear_wcs((7, 6.3), (0.4, 5.003e-7), (1.1, 1.3e-9), ctype=ctype_out)
    for w in (w_in, w_out):
        w.wcs.restwav = 5e-7
    data = image((14, 16))
    for order in [0, 1, 3]:
        assert_same(*both((data, w_in), w_out, shape_out=(12, 13), order=order))


def test_time_axes_from_different_references():
    w_in = linear_wcs((8, 5), (0, 10.0), (1, 2.0), ctype=("PIXX", "TIME"))
    w_out = linear_wcs((7, 6.3), (0.4, 13.0), (1.1, 1.5), ctype=("PIXX", "TIME"))
    w_in.wcs.mjdref = [59000.0, 0.0]
    w_out.wcs.mjdref = [59000.0, 0.5 / 86400]  # half a second later
    data = image((14, 16))
    for order in [0, 1, 3]:
        assert_same(*both((data, w_in), w_out, shape_out=(12, 13), order=order))


def test_astropy_positions_through_blocks_and_dask():
    from astropy.wcs.wcsapi import SlicedLowLevelWCS

    sliced = SlicedLowLevelWCS(cube_wcs(coupling=0.3), (0, slice(None), slice(None)))
    data = np.stack([image((20, 22), seed=k) for k in range(2)])
    target = sky_wcs(crval=(150.02, 2.01), crpix=(9.0, 8.7), cdelt=0.012)
    theirs = both((data, sliced), target, shape_out=(2, 18, 19))[1]
    for kwargs in [{"block_size": (2, 5, 7), "parallel": 2}, {"parallel": True}]:
        assert_same(
            reproject_rs.reproject_interp((data, sliced), target, shape_out=(2, 18, 19), **kwargs),
            theirs,
        )
    lazy = reproject_rs.reproject_interp(
        (da.from_array(data), sliced), target, shape_out=(2, 18, 19), return_type="dask",
        block_size=(2, 6, 8),
    )
    assert lazy[0].chunksize == (2, 6, 8)
    assert_same(tuple(x.compute() for x in lazy), theirs)
    with pytest.raises(reproject_rs.UnsupportedError, match="lazy"):
        reproject_rs.reproject_interp((data, sliced), target, shape_out=(2, 18, 19), return_type="lazy")

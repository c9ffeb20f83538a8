"""The bad-input catalogue (reliability issue), Python side: every case goes through
``reproject_rs.reproject_interp`` and ends in the documented exception or the documented NaN
output (docs/reliability.md), never a crash; where astropy reproject defines the behaviour
(it is the reference: same exception class family, same values and NaN masks), the case
compares with it.

Run: ``.venv/bin/python -m pytest python-bindings/tests/test_bad_input_catalogue.py``.
"""

import os
import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

import reproject_rs
from reproject_rs import _core
from conftest import assert_matches, tan_header

reproject = pytest.importorskip("reproject")
from reproject import reproject_interp as theirs  # noqa: E402

da = pytest.importorskip("dask.array")

HEADER_IN = tan_header(crval=(30.0, 40.0), crpix=(15.0, 12.0), cdelt=0.01, shape=(24, 30))
HEADER_OUT = tan_header(crval=(30.01, 40.005), crpix=(13.3, 11.6), cdelt=0.011, shape=(22, 26), rot=17)
SHAPE_OUT = (22, 26)


def image(shape=(24, 30), dtype=np.float64, seed=3):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) * 10 + 100).astype(dtype)


def both(input_data, output_projection=HEADER_OUT, **kwargs):
    """(ours, theirs) of the same call."""
    return (
        reproject_rs.reproject_interp(input_data, output_projection, **kwargs),
        theirs(input_data, output_projection, **kwargs),
    )


def raises_like_reproject(call):
    """Runs ``call(reproject_rs.reproject_interp)`` and ``call(reproject.reproject_interp)``:
    both must raise, ours an exception of the same standard family as reproject's (our
    classes derive from ValueError/OSError/... as theirs). Returns our exception."""
    with pytest.raises(Exception) as theirs_info:
        call(theirs)
    with pytest.raises(Exception) as ours_info:
        call(reproject_rs.reproject_interp)
    family = next(
        c for c in type(theirs_info.value).__mro__ if c.__module__ == "builtins"
    )
    assert isinstance(ours_info.value, family), (ours_info.value, theirs_info.value)
    return ours_info.value


def fits_file(tmp_path, name="in.fits", data=None, header=HEADER_IN):
    path = tmp_path / name
    fits.PrimaryHDU(image() if data is None else data, header=header).writeto(path)
    return path


# ------------------------------------------------------------------------------------------
# Files and HDUs


@pytest.mark.parametrize("cut", [0, 100, 2879, 2880 + 10, -1500])
def test_truncated_fits_path(tmp_path, cut):
    good = fits_file(tmp_path).read_bytes()
    path = tmp_path / "cut.fits"
    path.write_bytes(good[:cut])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_reproject(lambda f: f(str(path), HEADER_OUT))


def test_truncated_fits_hdu_data(tmp_path):
    """An HDU opened lazily from a file whose data were cut: astropy raises on access."""
    good = fits_file(tmp_path).read_bytes()
    path = tmp_path / "cut.fits"
    path.write_bytes(good[: 2880 + 1000])

    def call(f):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with fits.open(path) as hdul:
                return f(hdul[0], HEADER_OUT)

    raises_like_reproject(call)


def test_not_a_fits_file(tmp_path):
    path = tmp_path / "notes.fits"
    path.write_text("this is not FITS\n" * 300)
    raises_like_reproject(lambda f: f(str(path), HEADER_OUT))


def test_missing_file(tmp_path):
    err = raises_like_reproject(lambda f: f(str(tmp_path / "nope.fits"), HEADER_OUT))
    assert isinstance(err, FileNotFoundError)


@pytest.mark.parametrize("bitpix", [24, -16])
def test_unsupported_bitpix_file(tmp_path, bitpix):
    path = fits_file(tmp_path)
    raw = bytearray(path.read_bytes())
    at = raw.index(b"BITPIX  =")
    raw[at : at + 80] = f"BITPIX  = {bitpix:>20}".ljust(80).encode()
    path.write_bytes(bytes(raw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_reproject(lambda f: f(str(path), HEADER_OUT))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float32", "float64"])
def test_bitpix_with_bscale_bzero_blank(tmp_path, dtype):
    """Every BITPIX, scaled (BSCALE/BZERO) and with BLANK pixels for integers, read by
    astropy from a file: values and NaN masks as reproject."""
    stored = (np.arange(24 * 30).reshape(24, 30) % 97).astype(dtype)
    header = HEADER_IN.copy()
    if np.dtype(dtype).kind in "iu":
        blank = 95
        header["BLANK"] = blank
        stored[5, 7] = blank
        stored[12, 20] = blank
    else:
        stored[5, 7] = np.nan
    hdu = fits.PrimaryHDU(stored, header=header)
    hdu.scale(type=dtype, bscale=2.5, bzero=-7) if np.dtype(dtype).kind in "iu" else None
    hdu.header["BSCALE"], hdu.header["BZERO"] = 2.5, -7.0
    path = tmp_path / "scaled.fits"
    hdu.writeto(path)
    for order in (0, 1, 3):
        ours, ref = both(str(path), order=order)
        assert_matches(ours, ref)
        assert np.isnan(ours[0]).any()


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64"])
def test_unscaled_integers_with_blank_are_read_as_astropy_scales_them(tmp_path, dtype):
    """An integer HDU with BLANK and no BSCALE/BZERO, from the HDU and from its path: astropy's
    data (floats, NaN at the BLANK pixels) reprojected. reproject 0.21 differs here, wrongly: it
    memory-maps the stored integers as floats (its hdu_to_numpy_memmap checks BSCALE and
    BZERO, not BLANK), which gives garbage values or 'mmap length is greater than file size'.
    The reference is therefore reproject given astropy's array."""
    stored = (np.arange(24 * 30).reshape(24, 30) % 97).astype(dtype)
    header = HEADER_IN.copy()
    header["BLANK"] = 95
    stored[5, 7] = stored[12, 20] = 95
    path = tmp_path / "blank.fits"
    fits.PrimaryHDU(stored, header=header).writeto(path)
    with fits.open(path) as hdul:
        data = np.array(hdul[0].data)
        # astropy's reading, which the reference reprojects.
        assert data.dtype.kind == "f"
        assert np.array_equal(np.isnan(data), stored == 95)
        for order in (0, 1, 3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = theirs((data, header), HEADER_OUT, order=order)
            for given in (hdul[0], str(path)):
                ours = reproject_rs.reproject_interp(given, HEADER_OUT, order=order)
                assert_matches(ours, expected)
                assert np.isnan(ours[0]).any()
                # A NaN poisons the whole spline of orders >= 2 (scipy's prefilter, as in
                # reproject).
                assert np.isfinite(ours[0]).any() == (order < 2)


# ------------------------------------------------------------------------------------------
# Pixel values


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e-310, 1e300])
@pytest.mark.parametrize("order", [0, 1, 3])
def test_special_values_as_reproject(value, order):
    data = image()
    data[10, 12] = value
    data[3, 25] = value
    ours, ref = both((data, HEADER_IN), order=order)
    a, b = ours[0], ref[0]
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.array_equal(np.isinf(a), np.isinf(b))
    assert np.array_equal(ours[1], ref[1])
    finite = np.isfinite(a)
    # Relative to the image's scale: a spline rings far from a 1e300 pixel with values
    # ~1e278 whose round-off differs.
    scale = np.max(np.abs(b[finite]), initial=0.0)
    np.testing.assert_allclose(a[finite], b[finite], rtol=1e-6, atol=1e-12 * scale)


def test_denormals_survive():
    tiny = np.full((24, 30), 5e-324) * np.arange(1, 31)
    ours, ref = both((tiny, HEADER_IN), order=0)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert (ours[0][np.isfinite(ours[0])] > 0).all()


@pytest.mark.parametrize("nan_policy", ["propagate", "renormalize"])
def test_all_nan_input(nan_policy):
    data = np.full((24, 30), np.nan)
    for order in (0, 1, 3):
        a, fa = reproject_rs.reproject_interp((data, HEADER_IN), HEADER_OUT, order=order,
                                              nan_policy=nan_policy)
        assert np.isnan(a).all() and (fa == 0).all()


# ------------------------------------------------------------------------------------------
# Shapes


@pytest.mark.parametrize("shape", [(1, 1), (1, 30), (24, 1)])
def test_thin_inputs_as_reproject(shape):
    header = tan_header(crval=(30.0, 40.0), crpix=(1.0, 1.0), cdelt=0.01, shape=shape)
    out = tan_header(crval=(30.0, 40.0), crpix=(1.3, 1.2), cdelt=0.01, shape=(6, 8))
    for order in (0, 1):
        ours, ref = both((image(shape), header), out, order=order)
        assert_matches(ours, ref)


@pytest.mark.parametrize("shape_out", [(1, 1), (1, 26), (22, 1)])
def test_thin_outputs_as_reproject(shape_out):
    out = HEADER_OUT.copy()
    out["NAXIS2"], out["NAXIS1"] = shape_out
    ours, ref = both((image(), HEADER_IN), out, order=1)
    assert_matches(ours, ref)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
@pytest.mark.parametrize("return_type", ["numpy", "dask"])
def test_zero_size_input_is_all_nan_as_reproject(shape, return_type):
    kwargs = dict(return_type=return_type, block_size=(7, 9)) if return_type == "dask" else {}
    ours = reproject_rs.reproject_interp((np.ones(shape), HEADER_IN), HEADER_OUT, **kwargs)
    ref = theirs((np.ones(shape), HEADER_IN), HEADER_OUT, **kwargs)
    if return_type == "dask":
        ours, ref = [x.compute() for x in ours], [x.compute() for x in ref]
    np.testing.assert_array_equal(ours[0], ref[0])
    np.testing.assert_array_equal(ours[1], ref[1])
    assert np.isnan(ours[0]).all() and ours[0].dtype == np.float64


def test_zero_size_output_shape():
    header = HEADER_OUT.copy()
    del header["NAXIS1"], header["NAXIS2"]
    err = raises_like_reproject(lambda f: f((image(), HEADER_IN), WCS(header), shape_out=(0, 5)))
    assert isinstance(err, ValueError)


def test_gigantic_output_refused_with_the_fix():
    """10^6 x 10^6 float64 (16 TB with the footprint): refused before any allocation, with a
    message naming output_array / return_type='dask'."""
    with pytest.raises(reproject_rs.InvalidArgumentError, match="output_array") as info:
        reproject_rs.reproject_interp((image(), HEADER_IN), WCS(HEADER_OUT),
                                      shape_out=(10**6, 10**6))
    assert "memory" in str(info.value) and "return_type='dask'" in str(info.value)
    with pytest.raises(reproject_rs.InvalidArgumentError, match="output_array"):
        _core.reproject_interp(image(), HEADER_IN.tostring(), HEADER_OUT.tostring(),
                               [10**6, 10**6])


def test_gigantic_output_as_dask_and_lazy():
    """The same request as a dask array is fine (nothing is allocated); computing a lazy
    result whole is refused; a single block of it computes."""
    data, footprint = reproject_rs.reproject_interp(
        (image(), HEADER_IN), WCS(HEADER_OUT), shape_out=(200_000, 200_000),
        return_type="dask", block_size=(20_000, 20_000))
    assert data.shape == (200_000, 200_000)
    lazy = reproject_rs.reproject_interp(
        (image(), HEADER_IN), WCS(HEADER_OUT), shape_out=(200_000, 200_000),
        return_type="lazy", block_size=(1000, 1000))
    with pytest.raises(reproject_rs.InvalidArgumentError, match="output file|output_array"):
        lazy.compute()
    first = lazy.blocks()[0].compute()
    assert first[0].shape == (1000, 1000) and np.isfinite(first[0]).any()


def test_too_many_lazy_blocks_refused():
    with pytest.raises(reproject_rs.InvalidArgumentError, match="block_size"):
        reproject_rs.reproject_interp(
            (image(), HEADER_IN), WCS(HEADER_OUT), shape_out=(10**9, 10**9),
            return_type="lazy", block_size=(1, 1))


@pytest.mark.parametrize("shape_out", [(2, 22, 26), (22,)])
def test_wrong_shape_out_dimensions(shape_out):
    raises_like_reproject(lambda f: f((image(), HEADER_IN), WCS(HEADER_OUT), shape_out=shape_out))


# ------------------------------------------------------------------------------------------
# Input layouts and dtypes (read in place, never copied)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[::2, ::3],  # non-contiguous
        lambda a: np.asfortranarray(a),
        lambda a: a.astype(">f8"),  # big-endian
        lambda a: a.astype(">i2"),
        lambda a: a.astype(np.uint8),
        lambda a: a.astype(np.int64),
        lambda a: a.astype(np.float16),
        lambda a: a[::-1, ::-1],  # negative strides
    ],
    ids=["strided", "fortran", "big-endian-f8", "big-endian-i2", "uint8", "int64", "float16",
         "reversed"],
)
def test_input_layouts_as_reproject(make):
    data = make(image((48, 90)))
    header = tan_header(crval=(30.0, 40.0), crpix=(15.0, 12.0), cdelt=0.01, shape=data.shape)
    for order in (0, 1, 3):
        ours, ref = both((data, header), order=order)
        assert_matches(ours, ref)


def test_read_only_input_is_fine():
    data = image()
    data.flags.writeable = False
    ours, ref = both((data, HEADER_IN))
    assert_matches(ours, ref)


# ------------------------------------------------------------------------------------------
# Output arrays


def test_read_only_output_array_refused_before_computing():
    out = np.zeros(SHAPE_OUT)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="output array is read-only") as ours:
        reproject_rs.reproject_interp((image(), HEADER_IN), HEADER_OUT, output_array=out)
    with pytest.raises(ValueError, match="output array is read-only") as ref:
        theirs((image(), HEADER_IN), HEADER_OUT, output_array=out)
    assert str(ours.value) == str(ref.value)
    assert (out == 0).all()


def test_read_only_output_footprint_refused():
    fp = np.zeros(SHAPE_OUT)
    fp.flags.writeable = False
    out = np.zeros(SHAPE_OUT)
    with pytest.raises(ValueError, match="read-only"):
        reproject_rs.reproject_interp((image(), HEADER_IN), HEADER_OUT, output_array=out,
                                      output_footprint=fp)
    assert (out == 0).all(), "nothing written when the call is refused"


def test_read_only_output_array_low_level():
    out = np.zeros(SHAPE_OUT)
    out.flags.writeable = False
    with pytest.raises(reproject_rs.InvalidArgumentError, match="cannot write"):
        _core.reproject_interp(image(), HEADER_IN.tostring(), HEADER_OUT.tostring(),
                               list(SHAPE_OUT), output_array=out)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.zeros((22, 52))[:, ::2],  # non-contiguous
        lambda: np.zeros(SHAPE_OUT, dtype=">f8"),  # big-endian
        lambda: np.asfortranarray(np.zeros(SHAPE_OUT)),
    ],
    ids=["strided", "big-endian", "fortran"],
)
def test_unusual_output_arrays_are_filled(make):
    out, fp = make(), make()
    got = reproject_rs.reproject_interp((image(), HEADER_IN), HEADER_OUT, output_array=out,
                                        output_footprint=fp)
    assert got[0] is out and got[1] is fp
    ref = theirs((image(), HEADER_IN), HEADER_OUT)
    assert_matches((np.asarray(out, float), np.asarray(fp, float)), ref)


def test_output_array_aliasing_the_input():
    """The input used as output_array (same shape): the result is computed from the input as
    it was, as if they were distinct."""
    data = image(SHAPE_OUT)
    header = tan_header(crval=(30.0, 40.0), crpix=(13.0, 11.0), cdelt=0.01, shape=SHAPE_OUT)
    want = reproject_rs.reproject_interp((data.copy(), header), HEADER_OUT)
    got = reproject_rs.reproject_interp((data, header), HEADER_OUT, output_array=data)
    assert got[0] is data
    np.testing.assert_array_equal(data, want[0])


# ------------------------------------------------------------------------------------------
# Headers: NaN/Inf, singular matrices, frames, axes


@pytest.mark.parametrize("card", ["CRVAL1  = NaN", "CRPIX2  = 1.0E999", "CD1_1   = inf"])
def test_nan_and_inf_in_header_text(card):
    key = card.split()[0]
    lines = [
        c for c in HEADER_IN.tostring(sep="\n").splitlines()
        if not c.startswith(key) and c.strip() != "END"
    ]
    text = "\n".join(lines + [card])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            reproject_rs.reproject_interp((image(), text), HEADER_OUT)
        with pytest.raises(reproject_rs.WcsError, match=key):
            _core.reproject_interp(image(), text, HEADER_OUT.tostring(), list(SHAPE_OUT))


def test_singular_matrix():
    """A singular CD matrix: a WcsError (a ValueError) naming it. reproject does not check:
    astropy maps pixels to the sky but never back, so it returns an all-NaN image."""
    header = HEADER_IN.copy()
    header["CD1_1"], header["CD1_2"] = 0.01, 0.02
    header["CD2_1"], header["CD2_2"] = 0.005, 0.01
    with pytest.raises(reproject_rs.WcsError, match="singular"):
        reproject_rs.reproject_interp((image(), header), HEADER_OUT)
    with pytest.raises(reproject_rs.WcsError, match="singular"):
        reproject_rs.reproject_interp((image(), HEADER_IN), header, shape_out=(5, 5))
    data, footprint = theirs((image(), header), HEADER_OUT)
    assert np.isnan(data).all() and (footprint == 0).all()


@pytest.mark.parametrize("radesys", ["GAPPT", "BOGUS"])
def test_unsupported_frames(radesys):
    header = HEADER_IN.copy()
    header["RADESYS"] = radesys
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = raises_like_reproject(lambda f: f((image(), header), HEADER_OUT))
    assert isinstance(err, reproject_rs.ReprojectError)


def test_unknown_celestial_pair():
    header = HEADER_IN.copy()
    header["CTYPE1"], header["CTYPE2"] = "XLON-TAN", "XLAT-TAN"
    with pytest.raises(ValueError):
        reproject_rs.reproject_interp((image(), header), HEADER_OUT)


# astropy's WCS reports its 'cdfix' of the added third axis; both sides parse the header.
@pytest.mark.filterwarnings("ignore:'cdfix' made the change:astropy.wcs.FITSFixedWarning")
def test_mismatched_axes_counts():
    header = HEADER_IN.copy()
    header["NAXIS"], header["CTYPE3"], header["CRVAL3"], header["CDELT3"] = 3, "FREQ", 1e9, 1e6
    err = raises_like_reproject(lambda f: f((image(), header), HEADER_OUT))
    assert "Number of dimensions" in str(err)


def test_hdu_without_data():
    with pytest.raises(ValueError, match="no data"):
        reproject_rs.reproject_interp(fits.PrimaryHDU(header=HEADER_IN), HEADER_OUT)


# ------------------------------------------------------------------------------------------
# Poles and projection boundaries, against reproject


def _car_sky():
    h = fits.Header({"CTYPE1": "RA---CAR", "CTYPE2": "DEC--CAR", "CRPIX1": 180.5,
                     "CRPIX2": 90.5, "CRVAL1": 0.0, "CRVAL2": 0.0, "CDELT1": -1.0,
                     "CDELT2": 1.0, "RADESYS": "ICRS"})
    y, x = np.mgrid[0:180, 0:360]
    lon, lat = WCS(h).wcs_pix2world(x, y, 0)
    return np.sin(np.radians(lat)) + 0.1 * np.cos(np.radians(lat)) * np.cos(np.radians(lon)), h


@pytest.mark.parametrize("code", ["AIT", "MOL", "HPX", "SIN"])
def test_all_sky_boundaries_as_reproject(code):
    data, h = _car_sky()
    out = fits.Header({"NAXIS": 2, "NAXIS1": 100, "NAXIS2": 50, "CTYPE1": f"RA---{code}",
                       "CTYPE2": f"DEC--{code}", "CRPIX1": 50.5, "CRPIX2": 25.5, "CRVAL1": 0.0,
                       "CRVAL2": 0.0, "CDELT1": -4.0, "CDELT2": 4.0, "RADESYS": "ICRS"})
    ours, ref = both((data, h), out)
    assert_matches(ours, ref, footprint_fraction=2e-3)
    assert np.isnan(ours[0]).any() and np.isfinite(ours[0]).any()


def test_pole_as_reproject():
    data, h = _car_sky()
    out = tan_header(crval=(0.0, 90.0), crpix=(20.0, 20.0), cdelt=0.5, shape=(41, 41))
    ours, ref = both((data, h), out)
    assert_matches(ours, ref)


def test_tan_far_side_as_reproject():
    h = tan_header(crval=(0.0, 0.0), crpix=(50.5, 50.5), cdelt=1.0, shape=(100, 100))
    data = image((100, 100))
    out = fits.Header({"NAXIS": 2, "NAXIS1": 90, "NAXIS2": 45, "CTYPE1": "RA---CAR",
                       "CTYPE2": "DEC--CAR", "CRPIX1": 45.5, "CRPIX2": 23.0, "CRVAL1": 0.0,
                       "CRVAL2": 0.0, "CDELT1": -4.0, "CDELT2": 4.0})
    ours, ref = both((data, h), out)
    assert_matches(ours, ref, footprint_fraction=2e-3)
    # Longitudes beyond 90 degrees from the tangent point are the far side: NaN.
    assert np.isnan(ours[0][:, :20]).all() and np.isnan(ours[0][:, -20:]).all()


# ------------------------------------------------------------------------------------------
# dask inputs and outputs with odd chunks


def test_dask_input_with_odd_chunks():
    data = image((48, 60))
    header = tan_header(crval=(30.0, 40.0), crpix=(25.0, 22.0), cdelt=0.01, shape=(48, 60))
    want = reproject_rs.reproject_interp((data, header), HEADER_OUT, order=3)
    got = reproject_rs.reproject_interp((da.from_array(data, chunks=(7, 13)), header),
                                        HEADER_OUT, order=3)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("block_size", [(7, 11), (1, 26), (22, 5), (3, 3)])
def test_dask_output_with_odd_blocks(block_size):
    data = image().astype(">f4")
    data[4, 9] = np.nan
    want = reproject_rs.reproject_interp((data, HEADER_IN), HEADER_OUT, order=1)
    got = reproject_rs.reproject_interp((da.from_array(data, chunks=(5, 17)), HEADER_IN),
                                        HEADER_OUT, order=1, return_type="dask",
                                        block_size=block_size)
    assert got[0].chunksize == tuple(min(b, n) for b, n in zip(block_size, SHAPE_OUT))
    np.testing.assert_array_equal(got[0].compute(), want[0])
    np.testing.assert_array_equal(got[1].compute(scheduler="threads"), want[1])


def test_dask_engine_error_surfaces_at_compute():
    """A header the engine refuses but astropy accepts (RADESYS = 'GAPPT'): with
    return_type='dask' the error is raised when the blocks are computed."""
    header = HEADER_IN.copy()
    header["RADESYS"] = "GAPPT"
    data, _ = reproject_rs.reproject_interp((image(), header), HEADER_OUT, return_type="dask",
                                            block_size=(7, 7))
    with pytest.raises(reproject_rs.InvalidArgumentError, match="GAPPT"):
        data.compute()


# ------------------------------------------------------------------------------------------
# Devices


def test_cuda_without_a_gpu_build_or_device():
    """device='cuda' where no usable GPU backend exists: DeviceUnavailableError (also a
    RuntimeError), raised before anything is read or allocated."""
    try:
        reproject_rs.reproject_interp((image(), HEADER_IN), HEADER_OUT, device="cuda")
    except reproject_rs.DeviceUnavailableError as e:
        assert isinstance(e, RuntimeError) and "cuda" in str(e).lower()
    else:
        pytest.skip("a usable CUDA device is present")


def test_unknown_device():
    with pytest.raises(ValueError, match="device"):
        reproject_rs.reproject_interp((image(), HEADER_IN), HEADER_OUT, device="tpu")

"""Input and output forms, dtypes, byte orders, strides, broadcasting, output arrays."""

import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.nddata import NDData
from astropy.wcs import WCS
from astropy.wcs.wcsapi import HighLevelWCSWrapper, SlicedLowLevelWCS

import reproject_rs
from conftest import assert_matches, tan_header

reproject = pytest.importorskip("reproject")

HEADER_OUT = tan_header(crval=(266.40, -28.94), crpix=(22.3, 20.8), cdelt=0.0017, shape=(40, 44), rot=20)
SHAPE_OUT = (40, 44)


def theirs(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reproject.reproject_interp(*args, **kwargs)


@pytest.fixture(scope="module")
def expected(galactic_2d_path):
    return theirs(galactic_2d_path, HEADER_OUT)


def _input_forms(path):
    hdul = fits.open(path)
    hdu = hdul[0]
    data, header = hdu.data, hdu.header
    wcs = WCS(header)
    return {
        "filename": path,
        "pathlib": __import__("pathlib").Path(path),
        "hdulist": hdul,
        "primary_hdu": hdu,
        "image_hdu": fits.ImageHDU(data, header),
        "comp_image_hdu": fits.CompImageHDU(data.astype(np.float32), header),
        "array_wcs": (data, wcs),
        "array_header": (data, header),
        "array_header_text": (data, header.tostring()),
        "array_header_text_newlines": (data, header.tostring(sep="\n")),
        "array_high_level_wrapper": (data, HighLevelWCSWrapper(wcs)),
        "array_sliced_ellipsis": (data, SlicedLowLevelWCS(wcs, Ellipsis)),
        "nddata": NDData(data, wcs=wcs),
    }


FORMS = [
    "filename", "pathlib", "hdulist", "primary_hdu", "image_hdu", "comp_image_hdu", "array_wcs",
    "array_header", "array_header_text", "array_header_text_newlines",
    "array_high_level_wrapper", "array_sliced_ellipsis", "nddata",
]


@pytest.mark.parametrize("form", FORMS)
def test_input_forms(galactic_2d_path, expected, form):
    value = _input_forms(galactic_2d_path)[form]
    ours = reproject_rs.reproject_interp(value, HEADER_OUT)
    assert_matches(ours, expected)


def test_input_dask_array(galactic_2d_path, expected):
    da = pytest.importorskip("dask.array")
    data, header = fits.getdata(galactic_2d_path, header=True)
    ours = reproject_rs.reproject_interp((da.from_array(data, chunks=(20, 20)), header), HEADER_OUT)
    assert isinstance(ours[0], np.ndarray)
    assert_matches(ours, expected)


def test_hdu_in_selects_hdu(galactic_2d_path, expected):
    with fits.open(galactic_2d_path) as hdul:
        data, header = hdul[0].data, hdul[0].header
        two = fits.HDUList([fits.PrimaryHDU(np.zeros((5, 5)), tan_header(shape=(5, 5))),
                            fits.ImageHDU(data, header, name="SCI")])
        assert_matches(reproject_rs.reproject_interp(two, HEADER_OUT, hdu_in=1), expected)
        assert_matches(reproject_rs.reproject_interp(two, HEADER_OUT, hdu_in="SCI"), expected)


def test_output_forms(galactic_2d_path, expected, tmp_path):
    wcs_out = WCS(HEADER_OUT)
    header_no_naxis = HEADER_OUT.copy()
    for k in ("NAXIS", "NAXIS1", "NAXIS2"):
        del header_no_naxis[k]
    out_file = tmp_path / "out.fits"
    fits.PrimaryHDU(np.zeros(SHAPE_OUT), HEADER_OUT).writeto(out_file)
    forms = [
        (HEADER_OUT, None),
        (header_no_naxis, SHAPE_OUT),
        (wcs_out, SHAPE_OUT),
        (HighLevelWCSWrapper(wcs_out), SHAPE_OUT),
        (str(out_file), None),
        (HEADER_OUT.tostring(sep="\n"), None),
    ]
    for projection, shape in forms:
        ours = reproject_rs.reproject_interp(galactic_2d_path, projection, shape_out=shape)
        assert_matches(ours, expected)
    # A WCS carrying its own shape.
    wcs_shaped = WCS(HEADER_OUT)
    wcs_shaped.array_shape = SHAPE_OUT
    assert_matches(reproject_rs.reproject_interp(galactic_2d_path, wcs_shaped), expected)
    # Header NAXIS wins over shape_out, as in reproject.
    assert reproject_rs.reproject_interp(galactic_2d_path, HEADER_OUT, shape_out=(3, 3))[0].shape == SHAPE_OUT


def test_sliced_output_wcs(galactic_2d_path, expected):
    """reproject_and_coadd hands a sliced APE-14 WCS of the output: the sub-block must equal the
    same pixels of the whole output."""
    sliced = HighLevelWCSWrapper(SlicedLowLevelWCS(WCS(HEADER_OUT), (slice(10, 30), slice(5, 40))))
    array, footprint = reproject_rs.reproject_interp(galactic_2d_path, sliced, shape_out=(20, 35))
    assert_matches((array, footprint), (expected[0][10:30, 5:40], expected[1][10:30, 5:40]))


def test_return_footprint_false(galactic_2d_path, expected):
    array = reproject_rs.reproject_interp(galactic_2d_path, HEADER_OUT, return_footprint=False)
    assert isinstance(array, np.ndarray)
    np.testing.assert_array_equal(array, expected[0])


# ---- dtypes, byte orders, strides ---------------------------------------------------------

DTYPES = ["<f4", ">f4", "<f8", ">f8", "|u1", "|i1", "<u2", ">u2", "<i2", ">i2", "<u4", ">u4",
          "<i4", ">i4", "<u8", ">u8", "<i8", ">i8", "<f2", ">f2", "|b1"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", [0, 1, 3])
def test_dtype_matrix(dtype, order):
    header_in = tan_header(crval=(30.0, 40.0), crpix=(16.0, 15.0), cdelt=0.01, shape=(30, 32))
    header_out = tan_header(crval=(30.01, 40.01), crpix=(14.3, 13.9), cdelt=0.011, shape=(28, 30), rot=17)
    rng = np.random.default_rng(3)
    values = rng.integers(0, 2 if dtype == "|b1" else 100, size=(30, 32))
    image = values.astype(dtype)
    ours = reproject_rs.reproject_interp((image, header_in), header_out, order=order)
    assert ours[0].dtype == np.float64
    assert_matches(ours, theirs((image, header_in), header_out, order=order))


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a[::2, ::3],
        lambda a: a[::-1, :],
        lambda a: a[:, ::-1],
        lambda a: a.T,
        lambda a: np.asfortranarray(a),
        lambda a: a[5:45, 3:50],
    ],
    ids=["step", "flip_rows", "flip_cols", "transpose", "fortran", "offset"],
)
def test_strided_inputs_read_in_place(view):
    header_in = tan_header(crval=(30.0, 40.0), crpix=(20.0, 20.0), cdelt=0.01, shape=(50, 60))
    header_out = tan_header(crval=(30.0, 40.0), crpix=(18.0, 17.0), cdelt=0.012, shape=(36, 40), rot=8)
    base = np.random.default_rng(1).normal(size=(50, 60)).astype(">f4")
    image = view(base)
    ours = reproject_rs.reproject_interp((image, header_in), header_out)
    assert_matches(ours, theirs((np.ascontiguousarray(image), header_in), header_out))


def test_leading_dimensions_broadcast(galactic_2d_path):
    data, header = fits.getdata(galactic_2d_path, header=True)
    stack = np.stack([data * (i + 1) for i in range(6)]).reshape(2, 3, *data.shape)
    for shape_out in (SHAPE_OUT, (2, 3) + SHAPE_OUT):
        ours = reproject_rs.reproject_interp((stack, header), WCS(HEADER_OUT), shape_out=shape_out)
        assert ours[0].shape == (2, 3) + SHAPE_OUT
        assert_matches(ours, theirs((stack, header), WCS(HEADER_OUT), shape_out=shape_out))


# ---- output arrays ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["<f8", ">f8", "<f4", ">f4"])
@pytest.mark.parametrize("layout", ["c", "fortran"])
def test_output_array_in_place(galactic_2d_path, dtype, layout):
    data, header = fits.getdata(galactic_2d_path, header=True)
    image = data.astype(dtype)
    output = np.zeros(SHAPE_OUT, dtype=dtype, order="C" if layout == "c" else "F")
    footprint = np.zeros(SHAPE_OUT, dtype=np.float64)
    result = reproject_rs.reproject_interp(
        (image, header), HEADER_OUT, output_array=output, output_footprint=footprint
    )
    assert result[0] is output and result[1] is footprint
    # Exactly what a call without output arrays computes, cast to the output dtype ...
    plain = reproject_rs.reproject_interp((image, header), HEADER_OUT)
    np.testing.assert_array_equal(output, plain[0].astype(dtype))
    np.testing.assert_array_equal(footprint, plain[1])
    # ... and what reproject writes into the same kind of array.
    ref = theirs((image, header), HEADER_OUT)
    ref_out = np.zeros(SHAPE_OUT, dtype=dtype)
    ref_out, _ = theirs((image, header), HEADER_OUT, output_array=ref_out)
    assert_matches((output.astype(np.float64), footprint), (ref_out.astype(np.float64), ref[1]))


def test_output_footprint_only_and_other_dtype(galactic_2d_path, expected):
    footprint = np.zeros(SHAPE_OUT, dtype=np.float32)
    array, fp = reproject_rs.reproject_interp(galactic_2d_path, HEADER_OUT, output_footprint=footprint)
    assert fp is footprint
    np.testing.assert_array_equal(fp, expected[1])
    np.testing.assert_array_equal(array, expected[0])
    footprint = np.zeros(SHAPE_OUT, dtype=np.float64)
    array, fp = reproject_rs.reproject_interp(galactic_2d_path, HEADER_OUT, output_footprint=footprint)
    assert fp is footprint and array.dtype == np.float64
    np.testing.assert_array_equal(fp, expected[1])


def test_output_array_return_footprint_false(galactic_2d_path, expected):
    output = np.zeros(SHAPE_OUT, dtype=">f4")
    result = reproject_rs.reproject_interp(
        galactic_2d_path, HEADER_OUT, output_array=output, return_footprint=False
    )
    assert result is output
    np.testing.assert_allclose(output, expected[0], rtol=1e-6)


def test_output_array_same_as_input_is_safe():
    header = tan_header(crval=(30.0, 40.0), crpix=(10.0, 10.0), cdelt=0.01, shape=(20, 20))
    shifted = tan_header(crval=(30.0, 40.0), crpix=(11.0, 10.0), cdelt=0.01, shape=(20, 20))
    image = np.arange(400, dtype=np.float64).reshape(20, 20)
    expected = theirs((image.copy(), header), shifted)
    result, _ = reproject_rs.reproject_interp((image, header), shifted, output_array=image)
    assert result is image
    assert_matches((image, np.isfinite(image) * 1.0), expected)


def test_returned_arrays_are_fresh_float64_c_arrays(galactic_2d_path):
    array, footprint = reproject_rs.reproject_interp(galactic_2d_path, HEADER_OUT)
    for a in (array, footprint):
        assert a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
    assert not np.shares_memory(array, footprint)


def test_extensions_nan_policy_and_precision():
    header_in = tan_header(crval=(30.0, 40.0), crpix=(16.0, 15.0), cdelt=0.01, shape=(30, 32))
    header_out = tan_header(crval=(30.0, 40.0), crpix=(15.5, 15.0), cdelt=0.01, shape=(30, 32))
    image = np.ones((30, 32), dtype=np.float32)
    image[10, 10] = np.nan
    prop, _ = reproject_rs.reproject_interp((image, header_in), header_out)
    renorm, _ = reproject_rs.reproject_interp((image, header_in), header_out, nan_policy="renormalize")
    assert np.isnan(prop).sum() > np.isnan(renorm).sum()
    np.testing.assert_allclose(renorm[np.isfinite(renorm)], 1.0)
    f64, _ = reproject_rs.reproject_interp((image, header_in), header_out, precision="float64")
    np.testing.assert_allclose(f64, prop, rtol=1e-6)

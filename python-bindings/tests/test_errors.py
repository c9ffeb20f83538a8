"""Errors: reproject's exception types and messages, and the ReprojectError hierarchy."""

import os

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

import reproject_rs
from reproject_rs import _core
from conftest import tan_header

HEADER_IN = tan_header(crval=(30.0, 40.0), crpix=(10.0, 10.0), cdelt=0.01, shape=(20, 20))
HEADER_OUT = tan_header(crval=(30.0, 40.0), crpix=(9.0, 9.0), cdelt=0.01, shape=(18, 18))
IMAGE = np.ones((20, 20))


def test_hierarchy():
    for cls in (reproject_rs.ShapeError, reproject_rs.InvalidArgumentError, reproject_rs.WcsError):
        assert issubclass(cls, reproject_rs.ReprojectError) and issubclass(cls, ValueError)
    assert issubclass(reproject_rs.UnsupportedError, NotImplementedError)
    assert issubclass(reproject_rs.ReprojectIOError, OSError)
    assert issubclass(reproject_rs.ReprojectError, Exception)
    assert not issubclass(reproject_rs.ReprojectError, ValueError)
    for cls in (reproject_rs.ReprojectError, reproject_rs.ShapeError, reproject_rs.WcsError):
        assert cls.__module__ == "reproject_rs._core"


def test_order_errors_as_reproject():
    with pytest.raises(KeyError):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), HEADER_OUT, order="linear")
    with pytest.raises(RuntimeError, match="spline order not supported"):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), HEADER_OUT, order=6)
    with pytest.raises(reproject_rs.InvalidArgumentError):
        _core.reproject_interp(IMAGE, HEADER_IN.tostring(), HEADER_OUT.tostring(), [18, 18], order=9)


def test_argument_errors():
    args = ((IMAGE, HEADER_IN), HEADER_OUT)
    with pytest.raises(ValueError, match="return_type should be set to 'numpy' or 'dask'"):
        reproject_rs.reproject_interp(*args, return_type="list")
    with pytest.raises(ValueError, match="dask_method should be set to 'memmap' or 'none'"):
        reproject_rs.reproject_interp(*args, dask_method="zarr")
    with pytest.raises(ValueError, match="Output cannot be returned as dask arrays"):
        reproject_rs.reproject_interp(*args, return_type="dask")
    with pytest.raises(ValueError, match="strictly positive"):
        reproject_rs.reproject_interp(*args, parallel=-2)
    with pytest.raises(reproject_rs.InvalidArgumentError):
        reproject_rs.reproject_interp(*args, nan_policy="ignore")
    with pytest.raises(reproject_rs.InvalidArgumentError):
        reproject_rs.reproject_interp(*args, precision="half")
    with pytest.raises(ValueError, match="cannot have more elements"):
        reproject_rs.reproject_interp(*args, block_size=(2, 2, 2))
    with pytest.raises(TypeError, match="input_data should either be an HDU object"):
        reproject_rs.reproject_interp([IMAGE, HEADER_IN], HEADER_OUT)
    with pytest.raises(TypeError, match="output_projection should either be"):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), 42)
    with pytest.raises(TypeError):
        reproject_rs.reproject_interp((IMAGE.astype(complex), HEADER_IN), HEADER_OUT)


def test_missing_shape_messages():
    header = HEADER_OUT.copy()
    del header["NAXIS2"]
    with pytest.raises(ValueError, match="Need to specify shape since output header"):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), header)
    with pytest.raises(ValueError, match="Need to specify shape_out when specifying output_projection as WCS object"):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), WCS(tan_header(naxis=False)))
    with pytest.raises(ValueError, match="should not be an empty tuple"):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), WCS(header), shape_out=())


def test_output_array_errors():
    args = ((IMAGE, HEADER_IN), HEADER_OUT)
    with pytest.raises(ValueError, match="shape_out does not match shape of output_array"):
        reproject_rs.reproject_interp(*args, shape_out=(18, 18), output_array=np.zeros((5, 5)))
    with pytest.raises(ValueError, match="should match shape_out"):
        # the header's NAXIS overrides shape_out, as in reproject
        reproject_rs.reproject_interp(*args, output_array=np.zeros((5, 5)))
    with pytest.raises(ValueError, match=r"Output array dtype float32 should match input array dtype \(float64\)"):
        reproject_rs.reproject_interp(*args, output_array=np.zeros((18, 18), np.float32))
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        reproject_rs.reproject_interp(
            (IMAGE.astype(np.int32), HEADER_IN), HEADER_OUT, output_array=np.zeros((18, 18), np.int32)
        )
    with pytest.raises(reproject_rs.ShapeError):
        reproject_rs.reproject_interp(*args, output_footprint=np.zeros((3, 3)))


def test_dimension_messages(data_dir):
    cube, cube_header = fits.getdata(os.path.join(data_dir, "equatorial_3d.fits"), header=True)
    with pytest.raises(ValueError, match="Number of dimensions in input and output WCS should match"):
        reproject_rs.reproject_interp((cube, cube_header), HEADER_OUT)
    with pytest.raises(ValueError, match="Too few dimensions in input data"):
        reproject_rs.reproject_interp((np.ones(20), HEADER_IN), HEADER_OUT)
    with pytest.raises(ValueError, match="Dimensions to be looped over must match exactly"):
        reproject_rs.reproject_interp((np.ones((3, 20, 20)), HEADER_IN), WCS(HEADER_OUT), shape_out=(4, 18, 18))
    with pytest.raises(ValueError, match="Number of dimensions in input and output data should match"):
        reproject_rs.reproject_interp((np.ones((3, 20, 20)), HEADER_IN), WCS(HEADER_OUT), shape_out=(2, 3, 18, 18))


def test_celestial_and_spectral_messages(data_dir):
    linear = fits.Header({"CTYPE1": "X", "CTYPE2": "Y", "CRPIX1": 1, "CRPIX2": 1,
                          "CRVAL1": 0, "CRVAL2": 0, "CDELT1": 1, "CDELT2": 1})
    with pytest.raises(ValueError, match="Input WCS has celestial components but output WCS does not"):
        reproject_rs.reproject_interp((IMAGE, HEADER_IN), WCS(linear), shape_out=(5, 5))
    with pytest.raises(ValueError, match="Output WCS has celestial components but input WCS does not"):
        reproject_rs.reproject_interp((IMAGE, linear), WCS(HEADER_OUT), shape_out=(5, 5))
    cube, header = fits.getdata(os.path.join(data_dir, "equatorial_3d.fits"), header=True)
    freq = header.copy()
    freq["CTYPE3"], freq["CUNIT3"] = "FREQ", "Hz"
    with pytest.raises(ValueError, match=r"The input \(VOPT\) and output \(FREQ\) spectral coordinate types"):
        reproject_rs.reproject_interp((cube, header), freq)


def test_spectral_resampling_matches_reproject(data_dir):
    """A changed spectral axis is interpolated too, as reproject does (half-channel shift:
    the mean of adjacent planes; a shorter output axis)."""
    import numpy as np
    from reproject import reproject_interp as theirs

    cube, header = fits.getdata(os.path.join(data_dir, "equatorial_3d.fits"), header=True)
    shifted = header.copy()
    shifted["CRPIX3"] += 0.5
    shorter = shifted.copy()
    shorter["NAXIS3"] = 3
    for target in (shifted, shorter):
        for order in (0, 1, 3):
            a, fa = reproject_rs.reproject_interp((cube, header), target, order=order)
            b, fb = theirs((cube, header), target, order=order)
            assert a.shape == b.shape
            np.testing.assert_array_equal(fa, fb)
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


def test_wcs_errors_from_the_engine():
    bad = HEADER_IN.tostring().replace("RA---TAN", "RA---XYZ").replace("DEC--TAN", "DEC--XYZ")
    with pytest.raises(reproject_rs.WcsError, match="unknown projection"):
        _core.reproject_interp(IMAGE, bad, HEADER_OUT.tostring(), [18, 18])
    with pytest.raises(ValueError):
        _core.check_header("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCD1_1 = 0\nCD1_2 = 0\nCD2_1 = 0\nCD2_2 = 0\n")
    with pytest.raises(reproject_rs.WcsError):
        _core.check_header("CTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCD1_1 = 0\nCD1_2 = 0\nCD2_1 = 0\nCD2_2 = 0\n")


def test_distortion_lookup_tables_through_astropy_positions(data_dir):
    """CPDIS/D2IM lookup tables: astropy computes the input positions, as in reproject."""
    import warnings

    reproject = pytest.importorskip("reproject")
    from astropy.wcs import WCS

    path = os.path.join(data_dir, "image_with_distortion_map.fits")
    with fits.open(path) as hdul:
        w_in = WCS(hdul[0].header, hdul)
    # The image's WCS has pixel (blank-CTYPE) axes: a shifted, rescaled grid of the same kind.
    target = WCS(naxis=2)
    target.wcs.crpix = [w_in.wcs.crpix[0] + 3.3, w_in.wcs.crpix[1] - 2.1]
    target.wcs.crval = list(w_in.wcs.crval)
    target.wcs.cdelt = [1.1 * c for c in w_in.wcs.cdelt]
    ours = reproject_rs.reproject_interp(path, target, shape_out=(90, 95))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = reproject.reproject_interp(path, target, shape_out=(90, 95))
    assert np.isfinite(theirs[0]).sum() > 5000
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-7, atol=0, equal_nan=True)


def test_low_level_errors():
    h_in, h_out = HEADER_IN.tostring(), HEADER_OUT.tostring()
    with pytest.raises(reproject_rs.ShapeError):
        _core.reproject_interp(np.ones(5), h_in, h_out, [18, 18])
    with pytest.raises(reproject_rs.ShapeError):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], output_array=np.zeros((4, 4)))
    with pytest.raises(reproject_rs.InvalidArgumentError):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], output_array=np.zeros((18, 18), np.int64))
    with pytest.raises(reproject_rs.InvalidArgumentError):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], output_array=np.zeros((18, 18), order="F"))
    with pytest.raises(reproject_rs.InvalidArgumentError, match="block_size must be positive"):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], block_size=(0, 4))
    same = np.zeros((18, 18))
    with pytest.raises(reproject_rs.InvalidArgumentError, match="cannot write"):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], output_array=same, output_footprint=same)
    # The mosaic writes its outputs through the same checks.
    mosaic = ([IMAGE, IMAGE], [h_in, h_in], h_out, [18, 18])
    with pytest.raises(reproject_rs.InvalidArgumentError, match="cannot write"):
        _core.reproject_and_coadd(*mosaic, output_array=same, output_footprint=same)
    with pytest.raises(reproject_rs.InvalidArgumentError, match="native float64"):
        _core.reproject_and_coadd(*mosaic, output_footprint=np.zeros((18, 18), np.float32))
    with pytest.raises(reproject_rs.ShapeError, match="expected"):
        _core.reproject_and_coadd(*mosaic, output_array=np.zeros((18, 17)))
    with pytest.raises(reproject_rs.InvalidArgumentError, match="C-contiguous"):
        _core.reproject_and_coadd(*mosaic, output_array=np.zeros((18, 18), order="F"))
    with pytest.raises(reproject_rs.InvalidArgumentError, match="output_footprint must be a native float32"):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], output_array=np.zeros((18, 18), np.float32),
                               output_footprint=np.zeros((18, 18)))
    with pytest.raises(reproject_rs.ShapeError, match="do not lie within"):
        _core.reproject_block(IMAGE, h_in, h_out, [18, 18], (0, 19), (0, 5))
    with pytest.raises(reproject_rs.ShapeError):
        _core.reproject_block(IMAGE, h_in, h_out, [18, 18], (3, 3), (0, 5))
    with pytest.raises(reproject_rs.InvalidArgumentError):
        _core.reproject_interp(IMAGE, h_in, h_out, [18, 18], nan_policy="nope")
    with pytest.raises(TypeError):
        _core.reproject_interp([[1.0, 2.0]], h_in, h_out, [18, 18])
    with pytest.raises(reproject_rs.WcsError):
        _core.reproject_interp(IMAGE.astype(np.complex64), h_in, h_out, [18, 18])

"""return_type='dask', block_size/parallel bit-identity, and dask.distributed with processes."""

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

import reproject_rs
from conftest import assert_matches, tan_header

da = pytest.importorskip("dask.array")

HEADER_IN = tan_header(crval=(30.0, 40.0), crpix=(30.0, 28.0), cdelt=0.01, shape=(56, 60))
HEADER_OUT = tan_header(crval=(30.02, 40.01), crpix=(31.3, 27.6), cdelt=0.011, shape=(50, 62), rot=21)
SHAPE_OUT = (50, 62)


def _image(shape=(56, 60), dtype=">f4"):
    rng = np.random.default_rng(7)
    return (rng.normal(size=shape) * 10 + 100).astype(dtype)


@pytest.mark.parametrize("order", [0, 1, 3])
@pytest.mark.parametrize("block_size", [(16, 20), (7, 62), (50, 9), "auto"])
def test_dask_return_equals_numpy(order, block_size):
    image = _image()
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=order)
    data, footprint = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, order=order, block_size=block_size, return_type="dask"
    )
    assert isinstance(data, da.Array) and isinstance(footprint, da.Array)
    assert data.dtype == np.float64 and data.shape == SHAPE_OUT
    if block_size != "auto":
        assert data.chunksize == tuple(min(b, n) for b, n in zip(block_size, SHAPE_OUT))
    np.testing.assert_array_equal(data.compute(scheduler="threads"), expected[0])
    np.testing.assert_array_equal(footprint.compute(scheduler="sync"), expected[1])


def test_dask_return_footprint_false_and_parallel():
    image = _image()
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT)
    data = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, parallel=True, return_type="dask", return_footprint=False
    )
    assert isinstance(data, da.Array)
    np.testing.assert_array_equal(data.compute(), expected[0])


@pytest.mark.parametrize(
    "kwargs",
    [dict(block_size=(8, 8)), dict(parallel=True), dict(parallel=2, block_size=(10, 30)),
     dict(parallel=0), dict(block_size="auto"), dict(parallel=True, block_size=(-1, 5))],
)
def test_blocks_and_threads_are_bit_identical(kwargs):
    image = _image(dtype="<f8")
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=2)
    got = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=2, **kwargs)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_dask_broadcast_blocks_along_leading_dimensions():
    stack = np.stack([_image() * k for k in range(1, 6)])
    wcs_out = WCS(HEADER_OUT)
    expected = reproject_rs.reproject_interp((stack, HEADER_IN), wcs_out, shape_out=SHAPE_OUT, order=3)
    for block_size in [(1,) + SHAPE_OUT, (2,) + SHAPE_OUT, (-1, 25, 31), (5, 25, 31), (25, 31), "auto"]:
        data, footprint = reproject_rs.reproject_interp(
            (stack, HEADER_IN), wcs_out, shape_out=SHAPE_OUT, order=3, block_size=block_size,
            return_type="dask",
        )
        np.testing.assert_array_equal(data.compute(), expected[0])
        np.testing.assert_array_equal(footprint.compute(), expected[1])


def test_dask_input_lazy_output():
    image = _image()
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT)
    lazy_in = da.from_array(image, chunks=(20, 20))
    data, footprint = reproject_rs.reproject_interp(
        (lazy_in, HEADER_IN), HEADER_OUT, block_size=(25, 31), return_type="dask"
    )
    np.testing.assert_array_equal(data.compute(), expected[0])


def test_dask_matches_reproject():
    reproject = pytest.importorskip("reproject")
    image = _image()
    ours = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, block_size=(20, 20), return_type="dask")
    theirs = reproject.reproject_interp((image, HEADER_IN), HEADER_OUT, block_size=(20, 20), return_type="dask")
    assert ours[0].chunks == theirs[0].chunks
    assert_matches((ours[0].compute(), ours[1].compute()), (theirs[0].compute(), theirs[1].compute()))


def test_output_arrays_with_blocks():
    image = _image(dtype="<f4")
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT)
    out = np.zeros(SHAPE_OUT, np.float32)
    fp = np.zeros(SHAPE_OUT)
    got = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, output_array=out,
                                        output_footprint=fp, parallel=2, block_size=(10, 10))
    assert got[0] is out and got[1] is fp
    np.testing.assert_array_equal(out, expected[0].astype(np.float32))
    np.testing.assert_array_equal(fp, expected[1])


def test_distributed_process_workers():
    distributed = pytest.importorskip("distributed")
    image = _image()
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=3)
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None,
        silence_logs=40,
    ) as cluster, distributed.Client(cluster) as client:
        data, footprint = reproject_rs.reproject_interp(
            (image, HEADER_IN), HEADER_OUT, order=3, block_size=(20, 31), return_type="dask"
        )
        data_np, footprint_np = client.compute([data, footprint], sync=True)
        np.testing.assert_array_equal(data_np, expected[0])
        np.testing.assert_array_equal(footprint_np, expected[1])
        # Each worker process prepared the engine plan (the spline prefilter) at most once.
        built = client.run(reproject_rs._lazy.plans_built)
        assert 1 <= sum(built.values()) and max(built.values()) == 1
        # parallel='current-scheduler' computes on the active (distributed) scheduler.
        got = reproject_rs.reproject_interp(
            (image, HEADER_IN), HEADER_OUT, order=3, block_size=(25, 62), parallel="current-scheduler"
        )
        np.testing.assert_array_equal(got[0], expected[0])
        workers = client.run(lambda: __import__("os").getpid())
        assert len(set(workers.values())) == 2


def test_dask_return_from_a_file_stays_valid(galactic_2d_path):
    header_out = tan_header(crval=(266.40, -28.94), crpix=(22.3, 20.8), cdelt=0.0017, shape=(40, 44))
    expected = reproject_rs.reproject_interp(galactic_2d_path, header_out)
    data, _ = reproject_rs.reproject_interp(galactic_2d_path, header_out, block_size=(10, 10), return_type="dask")
    # The file is closed once reproject_interp returns; the lazy result still computes.
    np.testing.assert_array_equal(data.compute(), expected[0])

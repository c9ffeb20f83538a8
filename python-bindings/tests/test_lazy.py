"""return_type='lazy' (block handles, bit-identity, threads, pickling into other processes),
the shared engine plan behind lazy and dask blocks, and the device keyword."""

import concurrent.futures
import multiprocessing
import pickle
import random

import numpy as np
import pytest
from astropy.io import fits

import reproject_rs
from reproject_rs import _core, _lazy
from conftest import tan_header

HEADER_IN = tan_header(crval=(30.0, 40.0), crpix=(30.0, 28.0), cdelt=0.01, shape=(56, 60))
HEADER_OUT = tan_header(crval=(30.02, 40.01), crpix=(31.3, 27.6), cdelt=0.011, shape=(50, 62), rot=21)
SHAPE_OUT = (50, 62)


def _image(shape=(56, 60), dtype=">f4", seed=7):
    rng = np.random.default_rng(seed)
    image = (rng.normal(size=shape) * 10 + 100).astype(dtype)
    image[..., 5, 7] = np.nan if image.dtype.kind == "f" else 0
    return image


def _assemble(lazy, handles):
    data = np.full(lazy.shape, -1.0)
    footprint = np.full(lazy.shape, -1.0)
    for h in handles:
        d, f = h.compute()
        assert d.shape == f.shape == h.shape == data[h.window].shape
        data[h.window], footprint[h.window] = d, f
    return data, footprint


def _equal(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("order", [0, 1, 3, 5])
@pytest.mark.parametrize("dtype", [">f4", "<f8", "i2"])
def test_lazy_blocks_in_random_order_equal_eager(order, dtype):
    image = _image(dtype=dtype)
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=order)
    lazy = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, order=order, block_size=(16, 20), return_type="lazy"
    )
    assert isinstance(lazy, reproject_rs.LazyReprojection)
    assert lazy.shape == SHAPE_OUT and lazy.dtype == np.float64
    handles = lazy.blocks()
    assert len(handles) == len(lazy) == 4 * 4 and lazy.block_shape == (16, 20)
    assert [h.index for h in handles] == list(range(16))
    assert handles[0].window == (slice(0, 16), slice(0, 20))
    assert handles[-1].rows == (48, 50) and handles[-1].cols == (60, 62)
    random.Random(order).shuffle(handles)
    _equal(_assemble(lazy, handles), expected)
    _equal(lazy.compute(), expected)


def test_lazy_default_blocks_threads_and_repeats():
    image = _image(dtype="<f8")
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=3)
    lazy = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, order=3, parallel=2, return_type="lazy"
    )
    handles = lazy.blocks() * 3  # every block three times, concurrently
    random.Random(1).shuffle(handles)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda h: (h, h.compute()), handles))
    first = {}
    for h, (d, f) in results:
        if h.index in first:
            _equal((d, f), first[h.index])
        first[h.index] = (d, f)
    assert len(first) == len(lazy) > 1
    _equal(_assemble(lazy, lazy.blocks()), expected)
    _equal(lazy.compute(), expected)  # on 2 threads


def test_lazy_builds_one_plan_and_is_independent_of_the_input():
    image = _image(dtype="<f8")
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=3)
    before = _lazy.plans_built()
    lazy = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, order=3, block_size=(10, 10), return_type="lazy"
    )
    image[:] = 0.0  # the lazy result holds its own copy
    _equal(_assemble(lazy, lazy.blocks()), expected)
    _equal(lazy.compute(), expected)
    # One engine plan (one spline prefilter) for the object and all its 35 blocks.
    assert _lazy.plans_built() - before == 1


def test_lazy_return_footprint_false_and_dask_input():
    da = pytest.importorskip("dask.array")
    image = _image()
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, return_footprint=False)
    lazy = reproject_rs.reproject_interp(
        (da.from_array(image, chunks=(20, 20)), HEADER_IN), HEADER_OUT, return_footprint=False,
        return_type="lazy",
    )
    np.testing.assert_array_equal(lazy.compute(), expected)
    d, f = lazy.blocks()[0].compute()  # blocks always give both
    assert d.shape == f.shape


def _cube_header(crval, crpix, cdelt, rot, shape):
    """A cube whose celestial axes are WCS axes 2 and 3 (numpy axes 0 and 1)."""
    h = fits.Header()
    h["NAXIS"] = 3
    h["NAXIS1"], h["NAXIS2"], h["NAXIS3"] = shape[2], shape[1], shape[0]
    h["CTYPE1"], h["CRVAL1"], h["CDELT1"], h["CRPIX1"], h["CUNIT1"] = "FREQ", 1.4e9, 1e6, 1.0, "Hz"
    h["CTYPE2"], h["CTYPE3"] = "RA---TAN", "DEC--TAN"
    h["CRVAL2"], h["CRVAL3"] = crval
    h["CRPIX2"], h["CRPIX3"] = crpix
    c, s = np.cos(np.radians(rot)), np.sin(np.radians(rot))
    h["PC2_2"], h["PC2_3"], h["PC3_2"], h["PC3_3"] = c, -s, s, c
    h["CDELT2"], h["CDELT3"] = -cdelt, cdelt
    return h


def test_lazy_cube_windows_in_the_callers_axis_order():
    shape_out = (26, 28, 3)
    h_in = _cube_header((30, 40), (15, 12), 0.01, 0, (24, 30, 3))
    h_out = _cube_header((30.01, 40.0), (14, 13), 0.011, 15, shape_out)
    cube = np.random.default_rng(0).normal(size=(24, 30, 3))
    expected = reproject_rs.reproject_interp((cube, h_in), h_out, shape_out=shape_out, order=3)
    lazy = reproject_rs.reproject_interp(
        (cube, h_in), h_out, shape_out=shape_out, order=3, block_size=(10, 10, 3),
        return_type="lazy",
    )
    assert lazy.shape == shape_out
    handles = lazy.blocks()
    # The celestial plane is (numpy axes 1, 0) = (RA, DEC) columns/rows of the engine.
    assert handles[0].window[2] == slice(None)
    _equal(_assemble(lazy, handles[::-1]), expected)
    _equal(lazy.compute(), expected)


def test_lazy_leading_dimensions():
    stack = np.stack([_image() * k for k in range(1, 4)])
    expected = reproject_rs.reproject_interp((stack, HEADER_IN), HEADER_OUT, shape_out=SHAPE_OUT, order=2)
    lazy = reproject_rs.reproject_interp(
        (stack, HEADER_IN), HEADER_OUT, shape_out=SHAPE_OUT, order=2, block_size=(25, 31),
        return_type="lazy",
    )
    handles = lazy.blocks()
    assert len(handles) == 4 and handles[1].window == (slice(None), slice(0, 25), slice(31, 62))
    _equal(_assemble(lazy, handles), expected)


def test_lazy_pickles_and_computes_in_other_processes():
    image = _image()
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=3)
    lazy = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, order=3, block_size=(13, 31), return_type="lazy"
    )
    handles = lazy.blocks()
    # In this process: the copies share the original's plan (same token).
    lazy2, handles2 = pickle.loads(pickle.dumps((lazy, handles)))
    assert lazy2._shared is lazy._shared and handles2[0].lazy is lazy2
    _equal(lazy2.compute(), expected)
    # In fresh processes (spawned: nothing inherited), one handle per task, random order.
    order = list(range(len(handles)))
    random.Random(3).shuffle(order)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        futures = {i: pool.submit(handles[i].compute) for i in order}
        whole = pool.submit(lazy.compute).result()
        blocks = {i: f.result() for i, f in futures.items()}
        built = [pool.submit(_lazy.plans_built).result() for _ in range(4)]
    _equal(whole, expected)
    data, footprint = np.full(SHAPE_OUT, -1.0), np.full(SHAPE_OUT, -1.0)
    for i, (d, f) in blocks.items():
        data[handles[i].window], footprint[handles[i].window] = d, f
    _equal((data, footprint), expected)
    # Each worker prepared the plan at most once, whatever number of handles it received.
    assert max(built) <= 1
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        for h in handles[:5]:
            _equal(pool.submit(h.compute).result(), (expected[0][h.window], expected[1][h.window]))
        assert pool.submit(_lazy.plans_built).result() == 1


def test_lazy_argument_errors():
    args = ((_image(), HEADER_IN), HEADER_OUT)
    with pytest.raises(ValueError, match="cannot be used with return_type='lazy'"):
        reproject_rs.reproject_interp(*args, output_array=np.empty(SHAPE_OUT, np.float32),
                                      return_type="lazy")
    with pytest.raises(ValueError, match="current-scheduler"):
        reproject_rs.reproject_interp(*args, parallel="current-scheduler", return_type="lazy")
    with pytest.raises(ValueError, match="return_type should be set to 'numpy' or 'dask'"):
        reproject_rs.reproject_interp(*args, return_type="Lazy")
    # Engine errors surface when the plan is made, not in its first block.
    h_in, h_out = HEADER_IN.tostring(), HEADER_OUT.tostring()
    with pytest.raises(reproject_rs.WcsError):
        _core.LazyPlan(_image(), h_in, h_out.replace("RA---TAN", "RA---XYZ"), [50, 62])
    with pytest.raises(reproject_rs.InvalidArgumentError):
        _core.LazyPlan(_image(), h_in, h_out, [50, 62], order=9)
    with pytest.raises(reproject_rs.ShapeError):
        _core.LazyPlan(np.ones(5), h_in, h_out, [50, 62])
    lazy = reproject_rs.reproject_interp(*args, return_type="lazy")
    with pytest.raises(IndexError):
        lazy._plan.compute_block(len(lazy))
    with pytest.raises(reproject_rs.ShapeError):
        lazy._plan.compute_window((0, 51), (0, 10))


def test_dask_blocks_share_one_plan():
    pytest.importorskip("dask.array")
    image = _image(dtype="<f8")
    expected = reproject_rs.reproject_interp((image, HEADER_IN), HEADER_OUT, order=3)
    before = _lazy.plans_built()
    data, footprint = reproject_rs.reproject_interp(
        (image, HEADER_IN), HEADER_OUT, order=3, block_size=(8, 8), return_type="dask"
    )
    assert data.npartitions == 7 * 8
    np.testing.assert_array_equal(data.compute(scheduler="threads"), expected[0])
    np.testing.assert_array_equal(footprint.compute(scheduler="sync"), expected[1])
    # 56 blocks, data and footprint computed separately: one spline prefilter.
    assert _lazy.plans_built() - before == 1


@pytest.mark.parametrize("return_type", ["numpy", "dask", "lazy"])
def test_device(return_type):
    image = _image()
    args = ((image, HEADER_IN), HEADER_OUT)
    kwargs = dict(block_size=(25, 31), return_type=return_type)
    expected = reproject_rs.reproject_interp(*args)
    for device in ("auto", "cpu", "CPU"):
        got = reproject_rs.reproject_interp(*args, device=device, **kwargs)
        if return_type == "dask":
            got = (got[0].compute(), got[1].compute())
        elif return_type == "lazy":
            got = got.compute()
        if device == "auto":
            # A GPU (or the simulator, REPROJECT_RS_CUDA_SIM) may compute: within 1e-9.
            np.testing.assert_allclose(got[0], expected[0], rtol=1e-9)
            np.testing.assert_array_equal(got[1], expected[1])
        else:
            _equal(got, expected)
    try:
        reproject_rs._core.gpu_info()
        gpu = True
    except reproject_rs.DeviceUnavailableError:
        gpu = False
    if not gpu:
        # No usable GPU here: every GPU name says so, with the reason.
        for device in ("cuda", "cuda:0", "cuda:all", "GPU"):
            with pytest.raises(reproject_rs.DeviceUnavailableError, match="device='cuda") as info:
                got = reproject_rs.reproject_interp(*args, device=device, **kwargs)
                if return_type == "dask":
                    got[0].compute()  # dask blocks check the device where they run
            assert isinstance(info.value, reproject_rs.ReprojectError)
            assert isinstance(info.value, RuntimeError)
    for device in ("gpus", None, 0, "cpu:0", "cuda:x", "cuda:-1", ""):
        with pytest.raises(ValueError, match="device should be one of"):
            reproject_rs.reproject_interp(*args, device=device, **kwargs)


def test_core_plan_and_shared_plan_pickles():
    h_in, h_out = HEADER_IN.tostring(), HEADER_OUT.tostring()
    image = _image()
    plan = _core.LazyPlan(image, h_in, h_out, [50, 62], order="bicubic", block_size=(20, 20),
                          threads=2, nan_policy="renormalize", precision="float64")
    assert plan.shape == [50, 62] and plan.block_shape == (20, 20) and len(plan) == 12
    assert plan.array is image  # read in place, kept alive
    back = pickle.loads(pickle.dumps(plan))
    assert back.windows() == plan.windows() and back.block_shape == (20, 20)
    expected = _core.reproject_interp(image, h_in, h_out, [50, 62], order=3,
                                      nan_policy="renormalize", precision="float64")
    for p in (plan, back):
        _equal(p.compute(), expected)
        w = p.compute_window((3, 41), (7, 55))
        _equal((w[0], w[1]), (expected[0][3:41, 7:55], expected[1][3:41, 7:55]))
    # A shared plan pickles as its token and arguments, never the data.
    shared = _lazy.SharedPlan.new((h_in, h_out, [50, 62]), dict(order=3))
    assert len(pickle.dumps(shared)) < len(h_in) + len(h_out) + 500
    assert pickle.loads(pickle.dumps(shared)) is shared
    assert pickle.loads(pickle.dumps(_lazy.dask_block)) is _lazy.dask_block

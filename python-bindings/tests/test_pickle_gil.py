"""Pickling of everything reproject_rs exposes, and the GIL released during computation."""

import pickle
import threading
import time

import numpy as np
import pytest

import reproject_rs
from reproject_rs import _core, _engine
from conftest import tan_header

EXCEPTIONS = [
    reproject_rs.ReprojectError,
    reproject_rs.ShapeError,
    reproject_rs.InvalidArgumentError,
    reproject_rs.WcsError,
    reproject_rs.UnsupportedError,
    reproject_rs.ReprojectIOError,
    reproject_rs.DeviceUnavailableError,
]


@pytest.mark.parametrize("cls", EXCEPTIONS)
def test_exceptions_pickle(cls):
    err = cls("something went wrong")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and back.args == err.args
    assert pickle.loads(pickle.dumps(cls)) is cls


def test_raised_engine_error_pickles():
    with pytest.raises(reproject_rs.WcsError) as info:
        _core.check_header("CTYPE1  = 'RA---XYZ'\nCTYPE2  = 'DEC--XYZ'\n")
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is reproject_rs.WcsError and str(back) == str(info.value)


def test_functions_and_block_arguments_pickle():
    for f in (reproject_rs.reproject_interp, reproject_rs.reproject_block, _core.reproject_interp,
              _core.check_header, _engine.dask_planes_block):
        assert pickle.loads(pickle.dumps(f)) is f
    h_in = tan_header(crval=(30.0, 40.0), crpix=(10.0, 10.0), cdelt=0.01, shape=(20, 20)).tostring()
    h_out = tan_header(crval=(30.0, 40.0), crpix=(9.5, 9.0), cdelt=0.01, shape=(18, 18)).tostring()
    image = np.arange(400, dtype=">f4").reshape(20, 20)
    args = (image, h_in, h_out, [18, 18], (2, 10), (3, 17))
    kwargs = dict(order="bicubic", roundtrip_coords=True, nan_policy="propagate", precision="reproject")
    args2, kwargs2 = pickle.loads(pickle.dumps((args, kwargs)))
    a = reproject_rs.reproject_block(*args, **kwargs)
    b = reproject_rs.reproject_block(*args2, **kwargs2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)), a)


def test_gil_released_during_computation():
    """Another Python thread keeps running at full speed while the engine computes."""
    h_in = tan_header(crval=(30.0, 40.0), crpix=(600.0, 600.0), cdelt=0.0005, shape=(1200, 1200))
    h_out = tan_header(crval=(30.01, 40.01), crpix=(1000.0, 1000.0), cdelt=0.0003, shape=(2000, 2000), rot=12)
    image = np.random.default_rng(0).normal(size=(1200, 1200))
    args = (image, h_in.tostring(), h_out.tostring(), [2000, 2000])

    counter = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        # The spinner's rate on its own (the main thread sleeps, releasing the GIL).
        time.sleep(0.02)
        before, t0 = counter[0], time.perf_counter()
        time.sleep(0.15)
        baseline = (counter[0] - before) / (time.perf_counter() - t0)
        # Calls repeated for at least 0.3 s, however fast the machine (one call can take less
        # than a few switch intervals, too short to tell).
        before, t0 = counter[0], time.perf_counter()
        calls = 0
        while time.perf_counter() - t0 < 0.3:
            _core.reproject_interp(*args, order=3)
            calls += 1
        elapsed = time.perf_counter() - t0
        rate = (counter[0] - before) / elapsed
    finally:
        stop.set()
        thread.join()
    # With the GIL held the spinner would get one switch interval (5 ms) per call.
    assert rate > 0.25 * baseline, f"spinner at {rate:.0f}/s during the call, {baseline:.0f}/s alone"

"""GPU (CuPy) inputs computed where they lie, on the CUDA simulator with a stand-in for CuPy
whose arrays live in the simulator's memory (:mod:`fake_cupy`): numpy return type gives GPU
arrays, ``return_type='dask'`` gives dask arrays of GPU chunks, each chunk computed on the
device from the device input. Both give the bits of the GPU executor on host arrays, for
every case of ``test_gpu_paths`` (TAN, CAR, SIP, a frame change, a cube) and orders 0-5;
no order copies the input to the host (orders 2-5 prefilter it on the device). With
``REPROJECT_RS_CUDA_SIM=0`` the same tests run on the machine's GPU with CuPy itself (the GPU
bundle)."""

import os

os.environ.setdefault("REPROJECT_RS_CUDA_SIM", "1")

import pickle  # noqa: E402
import types  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import reproject_rs  # noqa: E402
from conftest import cupy_for_tests  # noqa: E402
from reproject_rs import _device, _lazy  # noqa: E402
from test_gpu_paths import (  # noqa: E402
    BLOCK, CASES, _case, _close_to_cpu, _same_bits, _same_result,
)


@pytest.fixture(scope="module", autouse=True)
def simulated_gpu():
    """The simulated GPU; every test here skips without it."""
    try:
        return reproject_rs.warmup("cuda")
    except reproject_rs.DeviceUnavailableError as e:
        pytest.skip(f"no simulated GPU: {e}")


@pytest.fixture
def cupy(monkeypatch):
    """The stand-in CuPy on the simulator (as ``import cupy`` finds it), else CuPy."""
    return cupy_for_tests(monkeypatch)


def _bytes_to_host(cupy):
    """The bytes the stand-in copied to the host so far (None with CuPy itself)."""
    calls = getattr(cupy, "calls", None)
    return None if calls is None else calls["bytes_to_host"]


def _on_gpu(cupy, args):
    """``((image, header_in), header_out)`` with the image on the (simulated) GPU."""
    (image, header_in), header_out = args
    return (cupy.asarray(image), header_in), header_out


def _host(pair):
    return tuple(a.get() for a in pair)


@pytest.mark.parametrize("order", [0, 1, 2, "bicubic", 4, 5])
@pytest.mark.parametrize("name", list(CASES))
def test_dask_chunks_on_the_gpu(cupy, name, order):
    """return_type='dask' of a GPU input: GPU chunks, computed from the device input, with the
    bits of the GPU executor on the host array (and the CPU's values within 1e-9)."""
    args, kwargs = _case(name, order)
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    cpu = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
    block = BLOCK if len(expected[0].shape) == 2 else (1,) + BLOCK  # cubes: along planes too
    copies = _bytes_to_host(cupy)
    data, footprint = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="cuda", return_type="dask", block_size=block, **kwargs
    )
    assert _bytes_to_host(cupy) == copies, "the input went to the host"
    assert data.chunksize == block and footprint.chunksize == block
    assert isinstance(data._meta, cupy.ndarray)
    chunk = data.blocks[(0,) * data.ndim].compute()
    assert isinstance(chunk, cupy.ndarray) and chunk.shape == block
    got = (data.compute(), footprint.compute())
    assert all(isinstance(a, cupy.ndarray) for a in got)
    got = _host(got)
    _same_result(got, expected)
    _close_to_cpu(got, cpu)


def test_dask_chunks_in_any_order_and_auto_chunks(cupy):
    """Chunks computed one by one in reverse order, and dask's automatic chunks, give the same
    bits; every chunk of one call shares one plan."""
    args, kwargs = _case("sip-tan", 1)
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    data, footprint = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="cuda", return_type="dask", block_size=BLOCK, **kwargs
    )
    built = _lazy.plans_built()
    out = np.full(data.shape, np.nan), np.full(data.shape, np.nan)
    for index in reversed(list(np.ndindex(data.numblocks))):
        window = tuple(slice(sum(c[:i]), sum(c[: i + 1])) for c, i in zip(data.chunks, index))
        out[0][window] = data.blocks[index].compute().get()
        out[1][window] = footprint.blocks[index].compute().get()
    assert _lazy.plans_built() == built, "a block built a plan of its own"
    _same_result(out, expected)
    auto = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="cuda", return_type="dask", block_size="auto", **kwargs
    )
    _same_result(_host((auto[0].compute(), auto[1].compute())), expected)


def test_device_plans_pickle_as_their_description(cupy, monkeypatch):
    """The plan the chunks carry pickles as its small description (never the pixels) and is
    rebuilt once per process, through the plan cache, from the GPU input a chunk receives."""
    made = []
    new = _device.DeviceSharedPlan.new.__func__
    monkeypatch.setattr(_device.DeviceSharedPlan, "new",
                        classmethod(lambda cls, *a: made.append(new(cls, *a)) or made[-1]))
    args, kwargs = _case("tan-tan", 2)
    (image, _), _ = args
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    data = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="cuda", return_type="dask", block_size=BLOCK,
        return_footprint=False, **kwargs
    )
    (shared,) = made
    payload = pickle.dumps(shared)
    assert pickle.loads(payload) is shared  # this process holds the original
    assert len(payload) < 20_000 and image.tobytes()[:64] not in payload
    # As a worker without the original sees it: a cached copy of the same class.
    copy = _lazy._shared_plan(shared.token + "-worker", shared.args, shared.kwargs, type(shared))
    assert type(copy) is _device.DeviceSharedPlan
    gpu = cupy.asarray(image)
    built = _lazy.plans_built()
    plan = copy.get(gpu)
    assert copy.get(gpu) is plan and _lazy.plans_built() == built + 1
    (r0, r1), (c0, c1) = (16, 32), (20, 40)
    out = cupy.empty((2, r1 - r0, c1 - c0))
    _device.compute_on_device(plan, gpu, out.data.ptr, out.data.ptr + out.nbytes // 2, True,
                              ((r0, r1), (c0, c1)))
    window = (slice(r0, r1), slice(c0, c1))
    _same_result(out.get(), (expected[0][window], expected[1][window]))
    _same_bits(data.compute().get(), expected[0])


def test_numpy_return_type_gives_gpu_arrays(cupy):
    """The eager path: GPU arrays out, the GPU executor's bits; the caller's GPU output
    arrays (float32 too) are filled."""
    args, kwargs = _case("galactic-icrs", 1)
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    copies = _bytes_to_host(cupy)
    got = reproject_rs.reproject_interp(*_on_gpu(cupy, args), device="cuda", **kwargs)
    assert _bytes_to_host(cupy) == copies
    assert all(isinstance(a, cupy.ndarray) for a in got)
    _same_result(_host(got), expected)
    out = cupy.empty(expected[0].shape, dtype=np.float32)
    fp = cupy.empty(expected[0].shape, dtype=np.float32)
    data, footprint = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="cuda", output_array=out, output_footprint=fp, **kwargs
    )
    assert data is out and footprint is fp
    np.testing.assert_array_equal(fp.get(), expected[1].astype(np.float32))
    np.testing.assert_array_equal(out.get(), expected[0].astype(np.float32))


def test_inputs_the_kernels_do_not_read(cupy):
    """A GPU input of a type the kernels do not read (uint32): device='cuda' raises
    DeviceUnavailableError when the call is made; device='auto' computes through the host
    (dask arrays of host chunks)."""
    args, kwargs = _case("tan-tan", 1, dtype="<u4")
    expected = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="dtype <u4"):
        reproject_rs.reproject_interp(*_on_gpu(cupy, args), device="cuda",
                                      return_type="dask", block_size=BLOCK, **kwargs)
    # A cube in blocks of planes: refused when the call is made too.
    cube_args, cube_kwargs = _case("cube", 1, dtype="<u4")
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="dtype <u4"):
        reproject_rs.reproject_interp(*_on_gpu(cupy, cube_args), device="cuda",
                                      return_type="dask", block_size=(1,) + BLOCK,
                                      **cube_kwargs)
    data, footprint = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="auto", return_type="dask", block_size=BLOCK, **kwargs
    )
    assert isinstance(data._meta, np.ndarray)
    _close_to_cpu((data.compute(), footprint.compute()), expected)


def test_arrays_of_other_gpus_are_never_handed_to_the_kernels(cupy, monkeypatch):
    """The kernels run on GPU 0 and fault on another GPU's memory: output arrays on another
    GPU get the results through a copy made there, and a caller whose current GPU is another
    one still gets outputs made on GPU 0, with the same values."""
    if hasattr(cupy, "calls"):  # the stand-in for CuPy plays two GPUs
        def current_gpu():
            return cupy.calls["current_device"]
    elif cupy.cuda.runtime.getDeviceCount() >= 2:
        current_gpu = cupy.cuda.runtime.getDevice
    else:
        pytest.skip("needs two GPUs")
    args, kwargs = _case("galactic-icrs", 1)
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    handed = []
    compute = _device.compute_on_device

    def recorded(plan, array, data_ptr, footprint_ptr, *rest):
        handed.append((current_gpu(), array.data.ptr, data_ptr, footprint_ptr))
        return compute(plan, array, data_ptr, footprint_ptr, *rest)

    monkeypatch.setattr(_device, "compute_on_device", recorded)
    shape = expected[0].shape
    with cupy.cuda.Device(1):
        out, fp = cupy.empty(shape, dtype=np.float64), cupy.empty(shape, dtype=np.float32)
    data, footprint = reproject_rs.reproject_interp(
        *_on_gpu(cupy, args), device="cuda", output_array=out, output_footprint=fp, **kwargs
    )
    assert data is out and footprint is fp and out.device.id == fp.device.id == 1
    _same_bits(out.get(), expected[0])
    np.testing.assert_array_equal(fp.get(), expected[1].astype(np.float32))
    ((current, _, data_ptr, footprint_ptr),) = handed
    assert current == 0 and not {data_ptr, footprint_ptr} & {out.data.ptr, fp.data.ptr}
    # Called with GPU 1 current: the outputs are made on GPU 0, where the kernels ran.
    handed.clear()
    on_gpu0 = _on_gpu(cupy, args)
    with cupy.cuda.Device(1):
        got = reproject_rs.reproject_interp(*on_gpu0, device="cuda", **kwargs)
    assert [a.device.id for a in got] == [0, 0] and handed[0][0] == 0
    _same_result(_host(got), expected)
    # The same for dask chunks computed with GPU 1 current (the synchronous scheduler: in
    # this thread).
    handed.clear()
    lazy = reproject_rs.reproject_interp(*on_gpu0, device="cuda", return_type="dask",
                                         block_size=BLOCK, **kwargs)
    with cupy.cuda.Device(1):
        chunks = [c.compute(scheduler="synchronous") for c in lazy]
    assert handed and all(current == 0 for current, *_ in handed)
    _same_result(_host(chunks), expected)


def test_device_addresses_the_gpu_would_fault_on(cupy):
    """A GPU input or output array whose address is not a multiple of its elements' size
    raises InvalidArgumentError before any kernel runs: the GPU would fault on it, and the
    fault would end the process's CUDA context, the caller's own GPU work with it."""
    args, kwargs = _case("tan-tan", 1)
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)

    def off_by(array, nbytes):
        """An array of ``array``'s shape and dtype ``nbytes`` past an aligned address (its
        contents are never read)."""
        if hasattr(cupy, "calls"):  # the stand-in
            array.data = types.SimpleNamespace(ptr=array.data.ptr + nbytes)
            return array
        memory = cupy.cuda.alloc(array.nbytes + nbytes)
        return cupy.ndarray(array.shape, array.dtype, memptr=memory + nbytes)

    (image, header_in), header_out = _on_gpu(cupy, args)
    with pytest.raises(reproject_rs.InvalidArgumentError, match="input address .* 8-byte"):
        reproject_rs.reproject_interp((off_by(image, 4), header_in), header_out, device="cuda",
                                      **kwargs)
    for name in ["output_array", "output_footprint"]:
        given = {name: off_by(cupy.empty(expected[0].shape, dtype=np.float64), 2)}
        with pytest.raises(reproject_rs.InvalidArgumentError, match="output address"):
            reproject_rs.reproject_interp(*_on_gpu(cupy, args), device="cuda", **given,
                                          **kwargs)
    # The same calls with aligned arrays compute, in the same process.
    _same_result(_host(reproject_rs.reproject_interp(*_on_gpu(cupy, args), device="cuda",
                                                     **kwargs)), expected)


def test_memory_the_kernels_cannot_reach(cupy):
    """A GPU input or output array in memory the driver says the kernels cannot reach raises
    InvalidArgumentError before any kernel runs: host memory handed over as a GPU array, and
    (on the stand-in, whose allocations are the arrays' own) an array that runs past the end
    of its allocation. The GPU would fault, or write past the caller's array."""
    args, kwargs = _case("tan-tan", 1)
    expected = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    (image, header_in), header_out = _on_gpu(cupy, args)
    host = np.zeros(max(image.nbytes, expected[0].nbytes) // 8 + 1)

    def in_host_memory(array):
        """``array``'s shape and dtype over ``host``'s memory (never written by the GPU)."""
        if hasattr(cupy, "calls"):  # the stand-in
            array.data = types.SimpleNamespace(ptr=host.ctypes.data)
            return array
        memory = cupy.cuda.UnownedMemory(host.ctypes.data, host.nbytes, host)
        return cupy.ndarray(array.shape, array.dtype, memptr=cupy.cuda.MemoryPointer(memory, 0))

    with pytest.raises(reproject_rs.InvalidArgumentError, match="input address .* not in GPU"):
        reproject_rs.reproject_interp((in_host_memory(image), header_in), header_out,
                                      device="cuda", **kwargs)
    for name in ["output_array", "output_footprint"]:
        given = {name: in_host_memory(cupy.empty(expected[0].shape, dtype=np.float64))}
        with pytest.raises(reproject_rs.InvalidArgumentError, match="output address"):
            reproject_rs.reproject_interp(*_on_gpu(cupy, args), device="cuda", **given,
                                          **kwargs)
    assert not host.any()
    if hasattr(cupy, "calls"):
        # A row into its allocation: the array's last row lies past the end.
        (image, header_in), header_out = _on_gpu(cupy, args)
        image.data = types.SimpleNamespace(ptr=image.data.ptr + image.shape[-1] * 8)
        with pytest.raises(reproject_rs.InvalidArgumentError, match="end of its allocation"):
            reproject_rs.reproject_interp((image, header_in), header_out, device="cuda",
                                          **kwargs)


def test_dask_needs_a_block_size(cupy):
    """reproject's rule: no dask output without a block size or parallel."""
    args, kwargs = _case("tan-tan", 1)
    with pytest.raises(ValueError, match="no block size"):
        reproject_rs.reproject_interp(*_on_gpu(cupy, args), device="cuda",
                                      return_type="dask", **kwargs)

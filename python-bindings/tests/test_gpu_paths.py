"""The GPU paths (``device='cuda'``, ``'auto'``, ``'cuda:N'``, ``'cuda:all'``) on the CUDA
simulator, which runs the real kernels compiled as host C++: numpy, lazy and dask results
(default scheduler and a dask.distributed cluster of worker processes) computed on the GPU
executor give the same bits, and match the CPU engine within 1e-9 relative with identical
footprints; ``warmup``, the per-process plan cache and pickled plans.

``REPROJECT_RS_CUDA_SIM`` is set to 1 when this module is imported, unless it is set, before
anything uses the GPU (the core reads it at the first GPU use; dask's worker processes
inherit it). pytest imports every test module before running any test, so in a whole-suite
run every test sees the simulator as the machine's GPU (``device='auto'`` then computes on
it). ``REPROJECT_RS_CUDA_SIM=0`` runs the same tests on the machine's GPU (the GPU bundle
does); the few that need the simulator (fault injection, two simulated devices) skip there.
"""

import os

os.environ.setdefault("REPROJECT_RS_CUDA_SIM", "1")

import functools  # noqa: E402
import pickle  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from astropy.coordinates import SkyCoord  # noqa: E402
from astropy.io import fits  # noqa: E402

import reproject_rs  # noqa: E402
from reproject_rs import _core, _engine, _lazy, _plan_cache  # noqa: E402
from conftest import cupy_for_tests, gpu_simulated, tan_header  # noqa: E402

OUT = tan_header(crval=(30.02, 40.01), crpix=(31.3, 27.6), cdelt=0.011, shape=(50, 62), rot=21)
BLOCK = (16, 20)
#: For the tests that need the simulator (its fault injection, its device count).
sim_only = pytest.mark.skipif(not gpu_simulated(), reason="needs the CUDA simulator")


@pytest.fixture(scope="module", autouse=True)
def simulated_gpu():
    """The simulated GPU, warmed up once; every test here skips without it (a build whose
    simulator has no kernels: no C++ compiler when it was built)."""
    try:
        return reproject_rs.warmup("cuda")
    except reproject_rs.DeviceUnavailableError as e:
        pytest.skip(f"no simulated GPU: {e}")


def _image(shape=(56, 60), dtype="<f8", nan=True, seed=3):
    """A smooth image with noise; a NaN pixel when ``nan`` (orders 0 and 1: a NaN spreads
    over the whole output of a spline order with nan_policy='propagate')."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[: shape[-2], : shape[-1]]
    image = np.sin(x / 5.0) * np.cos(y / 7.0) * 50 + 100 + rng.normal(size=shape) * 5
    image = image.astype(dtype)
    if nan and image.dtype.kind == "f":
        image[..., 4, 6] = np.nan
    return image


def _header_in(ctype=("RA---TAN", "DEC--TAN"), crval=(30.0, 40.0), rot=0.0):
    return tan_header(crval=crval, crpix=(30.0, 28.0), cdelt=0.01, shape=(56, 60), rot=rot,
                      ctype=ctype)


def _sip_header():
    h = _header_in(ctype=("RA---TAN-SIP", "DEC--TAN-SIP"))
    h["A_ORDER"] = h["B_ORDER"] = 2
    h["A_0_2"], h["A_1_1"], h["A_2_0"] = 2e-5, -1e-5, 3e-5
    h["B_0_2"], h["B_1_1"], h["B_2_0"] = -1e-5, 2e-5, 1e-5
    return h


def _galactic_header():
    c = SkyCoord(30.0, 40.0, unit="deg").galactic
    return _header_in(ctype=("GLON-TAN", "GLAT-TAN"), crval=(c.l.deg, c.b.deg), rot=10.0)


def _with_freq(header):
    """``header`` with a third (frequency) axis of 3 channels, the same in and out."""
    h = header.copy()
    h["NAXIS"], h["NAXIS3"] = 3, 3
    h["CTYPE3"], h["CRVAL3"], h["CRPIX3"], h["CDELT3"], h["CUNIT3"] = "FREQ", 1.4e9, 1.0, 1e6, "Hz"
    return h


#: name -> (input header, output header, shape_out, input shape).
CASES = {
    "tan-tan": (_header_in(), OUT, None, (56, 60)),
    "car-tan": (_header_in(ctype=("RA---CAR", "DEC--CAR")), OUT, None, (56, 60)),
    "sip-tan": (_sip_header(), OUT, None, (56, 60)),
    "galactic-icrs": (_galactic_header(), OUT, None, (56, 60)),
    "cube": (_with_freq(_header_in()), _with_freq(OUT), (3, 50, 62), (3, 56, 60)),
}


def _case(name, order, dtype="<f8"):
    header_in, header_out, shape_out, shape_in = CASES[name]
    image = _image(shape_in, dtype=dtype, nan=order in (0, 1, "bilinear"))
    kwargs = dict(order=order)
    if shape_out is not None:
        kwargs["shape_out"] = shape_out
    return ((image, header_in), header_out), kwargs


def _same_bits(a, b):
    """The same float64 bits (any NaN payload counts as the same NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype == np.float64
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    np.testing.assert_array_equal(nan_a, nan_b)
    same = np.where(nan_a, 0.0, a).view(np.uint64) == np.where(nan_b, 0.0, b).view(np.uint64)
    assert same.all(), f"{(~same).sum()} pixels differ"


def _same_result(got, expected):
    _same_bits(got[0], expected[0])
    _same_bits(got[1], expected[1])


def _close_to_cpu(gpu, cpu):
    """The GPU's values within 1e-9 relative of the CPU's, identical footprints and NaNs."""
    np.testing.assert_array_equal(gpu[1], cpu[1])
    np.testing.assert_array_equal(np.isnan(gpu[0]), np.isnan(cpu[0]))
    finite = np.isfinite(cpu[0])
    assert finite.any()
    np.testing.assert_allclose(gpu[0][finite], cpu[0][finite], rtol=1e-9, atol=0)


def _assemble(lazy):
    """A lazy result's blocks computed in a random order into whole arrays."""
    data, footprint = np.full(lazy.shape, -1.0), np.full(lazy.shape, -1.0)
    handles = lazy.blocks()
    random.Random(len(handles)).shuffle(handles)
    for h in handles:
        data[h.window], footprint[h.window] = h.compute()
    return data, footprint


def _no_fallback(capfd):
    """Nothing went to the CPU behind the GPU executor's back (it warns when it does)."""
    err = capfd.readouterr().err
    assert "computing the remaining blocks on the CPU" not in err, err


@pytest.mark.parametrize("order", [0, 1, 2, "bicubic"])
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_paths_give_the_same_bits(name, order, capfd):
    import dask

    args, kwargs = _case(name, order)
    cpu = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
    gpu = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    _close_to_cpu(gpu, cpu)
    lazy = reproject_rs.reproject_interp(
        *args, device="cuda", return_type="lazy", block_size=BLOCK, **kwargs
    )
    assert lazy._plan.executor == "cuda:0" and lazy._plan.device == "cuda"
    _same_result(_assemble(lazy), gpu)
    _same_result(lazy.compute(), gpu)
    data, footprint = reproject_rs.reproject_interp(
        *args, device="cuda", return_type="dask", block_size=BLOCK, **kwargs
    )
    _same_result(dask.compute(data, footprint), gpu)
    if name == "cube":
        # Blocks along the leading dimension (one engine plan per set of planes).
        data, footprint = reproject_rs.reproject_interp(
            *args, device="cuda", return_type="dask", block_size=(1, 50, 62), **kwargs
        )
        assert data.numblocks == (3, 1, 1)
        _same_result(dask.compute(data, footprint), gpu)
    _no_fallback(capfd)


@pytest.mark.parametrize("dtype", [">f4", "<i2", "|u1", ">f8"])
@pytest.mark.parametrize("order", [0, 1, 3])
def test_cuda_input_types(dtype, order, capfd):
    import dask

    args, kwargs = _case("car-tan", order, dtype=dtype)
    cpu = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
    gpu = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    _close_to_cpu(gpu, cpu)
    lazy = reproject_rs.reproject_interp(*args, device="cuda", return_type="lazy",
                                         block_size=BLOCK, **kwargs)
    _same_result(_assemble(lazy), gpu)
    dask_result = reproject_rs.reproject_interp(*args, device="cuda", return_type="dask",
                                                block_size=BLOCK, **kwargs)
    _same_result(dask.compute(*dask_result), gpu)
    _no_fallback(capfd)


def test_auto_and_device_numbers_use_the_gpu():
    args, kwargs = _case("tan-tan", 1)
    gpu = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    for device in ("cuda:0", "cuda:all", "GPU", "Cuda:All"):
        _same_result(reproject_rs.reproject_interp(*args, device=device, **kwargs), gpu)
        lazy = reproject_rs.reproject_interp(*args, device=device, return_type="lazy", **kwargs)
        assert lazy._plan.executor == "cuda:0", device
        _same_result(lazy.compute(), gpu)
    # 'auto' asks the cost model: this small job stays on the CPU (the same bits), a large
    # one goes to the GPU (planned only: its executor is chosen without computing it).
    lazy = reproject_rs.reproject_interp(*args, device="auto", return_type="lazy", **kwargs)
    assert lazy._plan.executor == "cpu"
    _same_result(lazy.compute(), gpu)
    large = args[1].copy()
    large["NAXIS1"] = large["NAXIS2"] = 8192
    lazy = reproject_rs.reproject_interp(args[0], large, device="auto", return_type="lazy",
                                         **kwargs)
    assert lazy._plan.executor == "cuda:0"
    # 'auto' is the default: the same choices without device=.
    lazy = reproject_rs.reproject_interp(*args, return_type="lazy", **kwargs)
    assert (lazy._plan.device, lazy._plan.executor) == ("auto", "cpu")
    _same_result(reproject_rs.reproject_interp(*args, **kwargs), gpu)
    lazy = reproject_rs.reproject_interp(args[0], large, return_type="lazy", **kwargs)
    assert (lazy._plan.device, lazy._plan.executor) == ("auto", "cuda:0")
    assert _core.parse_device("GPU") == "cuda" and _core.parse_device("Cuda:All") == "cuda:all"
    # The same job through the self-contained block function.
    header_in, header_out = args[0][1].tostring(), args[1].tostring()
    block = reproject_rs.reproject_block(args[0][0], header_in, header_out, [50, 62], (3, 40),
                                         (5, 61), order=1, device="cuda")
    _same_bits(block[0], gpu[0][3:40, 5:61])
    _same_bits(block[1], gpu[1][3:40, 5:61])


def test_missing_device_raises_device_unavailable():
    args, kwargs = _case("tan-tan", 1)
    for return_type in ("numpy", "lazy"):
        with pytest.raises(reproject_rs.DeviceUnavailableError, match="no GPU 1") as info:
            reproject_rs.reproject_interp(*args, device="cuda:1", return_type=return_type,
                                          block_size=BLOCK, **kwargs)
        assert isinstance(info.value, reproject_rs.ReprojectError)
        assert isinstance(info.value, RuntimeError)
        assert "device='cuda:1'" in str(info.value)
    # Dask blocks check the device where they run (a worker may have the GPU this process
    # lacks): when they are computed.
    data, _ = reproject_rs.reproject_interp(*args, device="cuda:1", return_type="dask",
                                            block_size=BLOCK, **kwargs)
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="no GPU 1") as info:
        data.compute()
    assert "device='cuda:1' cannot compute this job in this process" in str(info.value)
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="no GPU 1"):
        reproject_rs.reproject_interp(*args, device="cuda:1", parallel="current-scheduler",
                                      block_size=BLOCK, **kwargs)
    image, header_in = args[0]
    h_in, h_out = header_in.tostring(), args[1].tostring()
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="no GPU 1"):
        _core.LazyPlan(image, h_in, h_out, [50, 62], device="cuda:1")
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="no GPU 1"):
        _core.reproject_interp(image, h_in, h_out, [50, 62], device="cuda:1")
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="no GPU 1"):
        reproject_rs.warmup("cuda:1")
    # A job the kernels do not cover: 'cuda' says why (when the plan is made), 'auto' falls
    # back to the CPU with the same values.
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="CPU-only"):
        reproject_rs.reproject_interp(*args, device="cuda", order=3, nan_policy="renormalize",
                                      return_type="lazy")
    auto = reproject_rs.reproject_interp(*args, device="auto", order=3, nan_policy="renormalize",
                                         return_type="lazy")
    assert auto._plan.executor == "cpu"
    cpu = reproject_rs.reproject_interp(*args, device="cpu", order=3, nan_policy="renormalize")
    _same_result(auto.compute(), cpu)
    for bad in ("cuda:x", "cpu:0", "tpu", None):
        with pytest.raises(ValueError, match="device should be one of"):
            reproject_rs.reproject_interp(*args, device=bad, **kwargs)


def test_positions_from_astropy_stay_on_the_cpu(data_dir):
    """A pair whose input positions astropy computes (CPDIS/D2IM lookup tables): the GPU
    kernels do not read positions, so 'cuda' says so and 'auto' computes on the CPU."""
    from astropy.wcs import WCS

    path = os.path.join(data_dir, "image_with_distortion_map.fits")
    target = WCS(naxis=2)
    with fits.open(path) as hdul:
        w_in = WCS(hdul[0].header, hdul)
    target.wcs.crpix = [w_in.wcs.crpix[0] + 3.3, w_in.wcs.crpix[1] - 2.1]
    target.wcs.crval = list(w_in.wcs.crval)
    target.wcs.cdelt = [1.1 * c for c in w_in.wcs.cdelt]
    cpu = reproject_rs.reproject_interp(path, target, shape_out=(90, 95), device="cpu")
    _same_result(reproject_rs.reproject_interp(path, target, shape_out=(90, 95), device="auto"),
                 cpu)
    for return_type in ("numpy", "dask"):
        with pytest.raises(reproject_rs.DeviceUnavailableError, match="computed before the job"):
            reproject_rs.reproject_interp(path, target, shape_out=(90, 95), device="cuda",
                                          return_type=return_type, block_size=(45, 95))


def test_positions_with_lookup_tables_stay_on_the_cpu(simulated_gpu):
    """A celestial image with CPDIS/D2IM tables, whose positions the engine computes before
    the job: 'cuda' says why it cannot, 'auto' gives the CPU's bits."""
    from astropy.wcs import WCS, DistortionLookupTable

    w_in = WCS(naxis=2)
    w_in.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    w_in.wcs.crval, w_in.wcs.crpix, w_in.wcs.cdelt = [202.5, 47.2], [64.5, 40.2], [-2e-4, 2e-4]
    table = np.sin(np.arange(63, dtype=np.float32).reshape(7, 9)) * 0.5
    w_in.cpdis1 = DistortionLookupTable(table, (1.0, 1.0), (0.0, 0.0), (16.0, 16.0))
    target = WCS(naxis=2)
    target.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    target.wcs.crval, target.wcs.crpix, target.wcs.cdelt = [202.5, 47.2], [20.0, 22.0], [-2.1e-4, 2.1e-4]
    data = np.random.default_rng(2).random((80, 130))
    args = ((data, w_in), target)
    assert np.isfinite(reproject_rs.reproject_interp(*args, shape_out=(40, 44))[0]).sum() > 1000
    cpu = reproject_rs.reproject_interp(*args, shape_out=(40, 44), device="cpu")
    _same_result(reproject_rs.reproject_interp(*args, shape_out=(40, 44), device="auto"), cpu)
    with pytest.raises(reproject_rs.DeviceUnavailableError, match="computed before the job"):
        reproject_rs.reproject_interp(*args, shape_out=(40, 44), device="cuda")


def test_warmup(simulated_gpu, capsys):
    assert "warmup" in reproject_rs.__all__ and reproject_rs.warmup.__doc__
    assert simulated_gpu[0].startswith("GPU 0: ")
    if gpu_simulated():
        assert len(simulated_gpu) == 1 and simulated_gpu[0].startswith("GPU 0: CUDA simulator")
    assert reproject_rs.warmup("cuda:all") == simulated_gpu
    assert reproject_rs.warmup("cuda:0", verbose=True) == simulated_gpu
    assert capsys.readouterr().out.strip() == simulated_gpu[0]
    assert reproject_rs.warmup("auto") == simulated_gpu
    assert reproject_rs.warmup("cpu") == ["cpu: nothing to prepare"]
    with pytest.raises(ValueError, match="device should be one of"):
        reproject_rs.warmup("cuda:-1")


def test_warmup_compiles_an_architecture_without_a_gpu(tmp_path):
    """``warmup(arch=...)`` compiles the kernels of a GPU architecture into the on-disk cache
    with libnvrtc alone (the ``nvidia-cuda-nvrtc-cu12`` wheel's, in a process of its own with
    a fresh cache folder), then finds them there."""
    for arch in ("9.0", "sm9", "sm_"):
        with pytest.raises(ValueError, match="not a GPU architecture"):
            reproject_rs.warmup(arch=arch)
    nvrtc = pytest.importorskip("nvidia.cuda_nvrtc")
    lib = os.path.join(list(nvrtc.__path__)[0], "lib")
    script = (
        "import reproject_rs\n"
        "print(reproject_rs.warmup(arch='sm_90')[0])\n"
        "print(reproject_rs.warmup(arch='sm_90')[0])\n"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), REPROJECT_RS_NVRTC=lib)
    env.pop("REPROJECT_RS_CUDA_SIM", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    first, again = done.stdout.strip().splitlines()
    assert first.startswith("kernels for sm_90: compiled in "), first
    assert f" s, in {tmp_path}" in first, first
    assert again.startswith("kernels for sm_90: already compiled, in "), again
    cached = [p.name for p in (tmp_path / "reproject-rs").iterdir()]
    assert len(cached) == 1 and cached[0].startswith("kernels-sm_90-"), cached


def test_the_compile_helper_compiles_a_variant_into_the_cache(tmp_path):
    """The package makes its interpreter the process that compiles kernel variants in the
    background (``python -m reproject_rs._compile_helper``): run as registered, from another
    folder with nothing else of this environment but libnvrtc and a fresh cache folder, it
    compiles the build it is asked for into the on-disk cache (a process of its own, so an
    interpreter that exits never waits for it); exit status 1 with the reason for a build
    that is not one."""
    from reproject_rs._warmup import compile_helper_command

    program, args, env = compile_helper_command()
    assert program == sys.executable and args == ["-m", "reproject_rs._compile_helper"]
    assert dict(env)["PYTHONPATH"].split(os.pathsep)[0] == os.path.dirname(
        os.path.dirname(reproject_rs.__file__))
    nvrtc = pytest.importorskip("nvidia.cuda_nvrtc")
    lib = os.path.join(list(nvrtc.__path__)[0], "lib")
    clean = dict(env, PATH=os.environ.get("PATH", ""), XDG_CACHE_HOME=str(tmp_path),
                 REPROJECT_RS_NVRTC=lib)
    variant = "RP_V_HOMOGRAPHY RP_V_ORDER=1 RP_V_INPUT=0 RP_V_OUT=0 RP_V_NAN=0"

    def helper(*extra):
        return subprocess.run([program, *args, *extra], env=clean, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)

    done = helper("--arch", "sm_90", "--variant", variant)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"kernels for sm_90 [{variant}]: compiled in "), done.stdout
    cached = [p.name for p in (tmp_path / "reproject-rs").iterdir()]
    assert len(cached) == 1 and cached[0].startswith("kernels-sm_90-"), cached
    again = helper("--arch", "sm_90", "--variant", variant)
    assert again.returncode == 0 and "already compiled" in again.stdout, again.stdout
    bad = helper("--arch", "sm_90", "--variant", "RP_V_ORDER=")
    assert bad.returncode == 1 and "not a kernel define" in bad.stderr, bad.stderr
    assert helper("--variant", variant).returncode == 2


def test_release_gpu_memory_leaves_the_next_job_its_bits():
    """What a GPU job keeps for the next ones is freed on request; the next job allocates
    again and gives the same bits (without a GPU nothing happens)."""
    assert "release_gpu_memory" in reproject_rs.__all__ and reproject_rs.release_gpu_memory.__doc__
    args, kwargs = _case("sip-tan", 1, dtype="<f4")
    first = reproject_rs.reproject_interp(*args, **kwargs, device="cuda")
    assert reproject_rs.release_gpu_memory() is None
    again = reproject_rs.reproject_interp(*args, **kwargs, device="cuda")
    _same_result(again, first)
    reproject_rs.release_gpu_memory()
    reproject_rs.release_gpu_memory()


def test_pickled_plans_round_trip_bit_for_bit():
    args, _ = _case("sip-tan", 3, dtype="<f4")
    (image, header_in), header_out = args
    h_in, h_out = header_in.tostring(), header_out.tostring()
    plan = _core.LazyPlan(image, h_in, h_out, [50, 62], order=3, block_size=BLOCK, device="cuda")
    assert plan.device == "cuda" and plan.executor == "cuda:0" and "device=cuda" in repr(plan)
    pickled = pickle.dumps(plan)
    # Its description (the float32 input, headers, options), not the float64 coefficients.
    assert len(pickled) < image.nbytes + len(h_in) + len(h_out) + 1000 < 2 * image.nbytes
    back = pickle.loads(pickled)
    assert back.device == "cuda" and back.executor == "cuda:0"
    assert back.windows() == plan.windows()
    for i in range(len(plan)):
        _same_result(back.compute_block(i), plan.compute_block(i))
    _same_result(back.compute(), plan.compute())
    expected = _core.reproject_interp(image, h_in, h_out, [50, 62], order=3, device="cuda")
    _same_result(back.compute(), expected)
    w = back.compute_window((7, 45), (2, 60))
    _same_result((w[0], w[1]), (expected[0][7:45, 2:60], expected[1][7:45, 2:60]))
    # A dask block's plan description: small, the device in it, the same object in-process.
    shared = _lazy.SharedPlan.new((h_in, h_out, [50, 62]), dict(order=3, device="cuda"))
    assert len(pickle.dumps(shared)) < len(h_in) + len(h_out) + 500
    assert pickle.loads(pickle.dumps(shared)) is shared


def test_plan_cache():
    import dask

    args, _ = _case("tan-tan", 3)
    (image, header_in), header_out = args
    h_in, h_out = header_in.tostring(), header_out.tostring()
    expected = _core.reproject_interp(image, h_in, h_out, [50, 62], order=3, device="cuda")
    _engine.plan_cache_clear()
    assert _engine.plan_cache_info() == (0, 0, _plan_cache.PLAN_CACHE_SIZE, 0)
    # Two copies of one description, as a worker unpickles them for two blocks.
    original = _lazy.SharedPlan.new((h_in, h_out, [50, 62]), dict(order=3, device="cuda"))
    first = _lazy.SharedPlan(original.token, original.args, original.kwargs)
    second = _lazy.SharedPlan(original.token, original.args, original.kwargs)
    assert first == second == original and hash(first) == hash(original)
    built = _lazy.plans_built()
    plan = first.get(image)
    assert second.get(image) is plan and first.get(image) is plan
    assert _lazy.plans_built() - built == 1
    info = _engine.plan_cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 1, 1)
    assert plan.executor == "cuda:0"
    w = plan.compute_window((0, 50), (0, 62))
    _same_result((w[0], w[1]), expected)
    # The original builds its own plan, which lives as long as it does, outside the cache.
    assert original.get(image) is not plan and _engine.plan_cache_info().currsize == 1
    # Bounded: the least recently used plans go.
    for _ in range(_plan_cache.PLAN_CACHE_SIZE + 2):
        copy = _lazy.SharedPlan(_lazy.SharedPlan.new(original.args, original.kwargs).token,
                                original.args, original.kwargs)
        copy.get(image)
    assert _engine.plan_cache_info().currsize == _plan_cache.PLAN_CACHE_SIZE
    # Dask blocks along the leading dimension: one plan per set of planes, found again when
    # the data and the footprint are computed separately.
    (cube, cube_header), cube_out = _case("cube", 1)[0]
    cube_kwargs = dict(order=1, shape_out=(3, 50, 62), device="cuda")
    gpu = reproject_rs.reproject_interp((cube, cube_header), cube_out, **cube_kwargs)
    _engine.plan_cache_clear()
    data, footprint = reproject_rs.reproject_interp(
        (cube, cube_header), cube_out, return_type="dask", block_size=(1, 50, 62), **cube_kwargs
    )
    _same_bits(data.compute(), gpu[0])
    _same_bits(footprint.compute(scheduler="sync"), gpu[1])
    info = _engine.plan_cache_info()
    assert (info.misses, info.hits, info.currsize) == (3, 3, 3)


def test_distributed_workers_compute_on_the_gpu():
    distributed = pytest.importorskip("distributed")
    jobs = [_case("galactic-icrs", 3), _case("cube", 1)]
    expected = [reproject_rs.reproject_interp(*a, device="cuda", **k) for a, k in jobs]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        silence_logs=40,
    ) as cluster, distributed.Client(cluster) as client:
        client.register_worker_callbacks(setup=functools.partial(reproject_rs.warmup, device="cuda"))
        lines = client.run(reproject_rs.warmup, device="cuda")
        assert len(lines) == 2
        assert all(v[0].startswith("GPU 0: ") for v in lines.values())
        client.run(_engine.plan_cache_clear)
        results = []
        for (args, kwargs), block_size in zip(jobs, [BLOCK, (1, 25, 31)]):
            results.append(reproject_rs.reproject_interp(
                *args, device="cuda", return_type="dask", block_size=block_size, **kwargs
            ))
        # parallel='current-scheduler': the same blocks, on the cluster.
        args, kwargs = jobs[0]
        current = reproject_rs.reproject_interp(
            *args, device="cuda", parallel="current-scheduler", block_size=(25, 31), **kwargs
        )
        computed = client.compute(results, sync=True)
        for got, want in zip(computed, expected):
            _same_result(got, want)
        _same_result(current, expected[0])
        # Each worker built each job's plan at most once (for the cube: once per plane) and
        # reused it for its other blocks; every cached plan computes on the GPU.
        infos = client.run(_engine.plan_cache_info)
        executors = client.run(
            lambda: [p.executor for p in __import__("reproject_rs")._plan_cache.plan_cache.plans()]
        )
        pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
    # 16 + 4 blocks of the galactic job, 3 x 4 of the cube: one cache lookup each.
    assert sum(info.hits + info.misses for info in infos.values()) == 16 + 4 + 12, infos
    assert all(info.misses <= 1 + 1 + 3 for info in infos.values()), infos
    assert all(e == "cuda:0" for v in executors.values() for e in v), executors


@sim_only
def test_two_simulated_devices():
    """``cuda:1`` and ``cuda:all`` on two simulated devices (a fresh process: the number of
    simulated devices is read at the first GPU use)."""
    script = textwrap.dedent("""
        import os, sys
        sys.path.insert(0, sys.argv[1])
        import dask
        import reproject_rs
        import test_gpu_paths as t  # sets REPROJECT_RS_CUDA_SIM=1: overridden before any GPU use

        os.environ["REPROJECT_RS_CUDA_SIM"] = "2"

        print(reproject_rs.warmup("cuda:all"))
        args, kwargs = t._case("car-tan", 1)
        cpu = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
        gpu = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
        t._close_to_cpu(gpu, cpu)
        for device, executor in (("cuda:1", "cuda:1"), ("cuda:all", "cuda:0,1")):
            t._same_result(reproject_rs.reproject_interp(*args, device=device, **kwargs), gpu)
            lazy = reproject_rs.reproject_interp(*args, device=device, return_type="lazy",
                                                 block_size=t.BLOCK, **kwargs)
            assert lazy._plan.executor == executor, lazy._plan.executor
            t._same_result(t._assemble(lazy), gpu)
            d = reproject_rs.reproject_interp(*args, device=device, return_type="dask",
                                              block_size=t.BLOCK, **kwargs)
            t._same_result(dask.compute(*d), gpu)
        try:
            reproject_rs.warmup("cuda:2")
        except reproject_rs.DeviceUnavailableError as e:
            print("refused:", e)
        print("OK")
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "GPU 0: CUDA simulator" in out and "GPU 1: CUDA simulator" in out
    assert "refused:" in out and "no GPU 2" in out and out.strip().endswith("OK")


@sim_only
def test_dask_blocks_reach_the_gpu_driver():
    """A fault injected into the simulated driver's first call (a fresh process:
    REPROJECT_RS_CUDA_SIM_FAIL is read at the first GPU use) shows that the dask blocks of
    device='cuda' go through the GPU: the executor warns and computes the rest on the CPU,
    with the CPU's values."""
    script = textwrap.dedent("""
        import os, sys
        sys.path.insert(0, sys.argv[1])
        import dask
        import reproject_rs
        import test_gpu_paths as t

        os.environ["REPROJECT_RS_CUDA_SIM_FAIL"] = "0:other"
        args, kwargs = t._case("car-tan", 1)
        cpu = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
        d = reproject_rs.reproject_interp(*args, device="cuda", return_type="dask",
                                          block_size=t.BLOCK, **kwargs)
        t._same_result(dask.compute(*d), cpu)
        print("OK")
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "OK"
    assert "GPU 0 failed on block" in run.stderr and "injected error at call 0" in run.stderr
    assert "computing the remaining blocks on the CPU" in run.stderr


def test_without_a_gpu():
    """Without the simulator (a fresh process without REPROJECT_RS_CUDA_SIM) on a machine
    without a GPU: 'cuda' raises DeviceUnavailableError for every return type and in
    warmup, 'auto' computes on the CPU."""
    script = textwrap.dedent("""
        import os, sys
        sys.path.insert(0, sys.argv[1])
        import reproject_rs
        import test_gpu_paths as t

        del os.environ["REPROJECT_RS_CUDA_SIM"]  # set by the import, before any GPU use
        try:
            reproject_rs.warmup("cuda")
        except reproject_rs.DeviceUnavailableError as e:
            print("refused:", e)
        else:
            print("GPU present")
            sys.exit(0)
        args, kwargs = t._case("tan-tan", 1)
        for return_type in ("numpy", "lazy", "dask"):
            for device in ("cuda", "cuda:0", "cuda:all"):
                try:
                    got = reproject_rs.reproject_interp(
                        *args, device=device, return_type=return_type, block_size=t.BLOCK,
                        **kwargs
                    )
                    if return_type == "dask":
                        got[0].compute()  # dask blocks check the device where they run
                except reproject_rs.DeviceUnavailableError as e:
                    assert isinstance(e, RuntimeError) and f"device={device!r}" in str(e), e
                else:
                    raise AssertionError(f"{device} {return_type} did not raise")
        assert reproject_rs.warmup("auto")[0].startswith("cpu: no GPU can be used")
        lazy = reproject_rs.reproject_interp(*args, device="auto", return_type="lazy", **kwargs)
        assert lazy._plan.executor == "cpu"
        cpu = reproject_rs.reproject_interp(*args, device="cpu", **kwargs)
        t._same_result(lazy.compute(), cpu)
        t._same_result(reproject_rs.reproject_interp(*args, device="auto", **kwargs), cpu)
        print("OK")
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    if "GPU present" in run.stdout:
        pytest.skip("a usable CUDA device is present")
    assert "refused:" in run.stdout and run.stdout.strip().endswith("OK"), run.stdout


def test_a_process_exits_cleanly_after_gpu_jobs():
    """GPU kernel variants compile on background threads, which must not be inside NVRTC or
    the CUDA driver while those libraries are torn down at exit (on an H100 that corrupted the
    heap: "free(): invalid pointer" after the last test). The package stops them from Python's
    ``atexit``; stopping them earlier is harmless: jobs go on (the general kernel, the same
    values) and the process exits with status 0 and nothing on stderr from the C library."""
    script = textwrap.dedent("""
        import atexit, sys
        sys.path.insert(0, sys.argv[1])
        import reproject_rs
        from reproject_rs import _core
        import test_gpu_paths as t

        args, kwargs = t._case("car-tan", 1)
        first = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
        _core.stop_background_compilations()
        again = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
        t._same_result(again, first)
        # The package's exit hook: unregistering it finds it (and registering it back keeps it).
        atexit.unregister(reproject_rs._stop_background_compilations)
        atexit.register(reproject_rs._stop_background_compilations)
        print("OK")
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("OK"), run.stdout
    for sign in ("free()", "malloc", "Aborted", "double free"):
        assert sign not in run.stderr, run.stderr


@pytest.mark.parametrize("return_type,device", [("lazy", "cuda"), ("dask", "cuda:all")])
def test_gpu_array_input_with_host_results(return_type, device, monkeypatch):
    """A GPU (CuPy) input the device-resident path does not take (return_type='lazy'; dask
    arrays on devices other than the first) is copied to the host once and its blocks
    computed on the requested device (GPU inputs computed where they lie:
    ``test_gpu_arrays``)."""
    cupy = cupy_for_tests(monkeypatch)
    args, kwargs = _case("tan-tan", 1)
    (image, header_in), header_out = args
    gpu = reproject_rs.reproject_interp(*args, device="cuda", **kwargs)
    got = reproject_rs.reproject_interp((cupy.asarray(image), header_in), header_out,
                                        device=device, return_type=return_type,
                                        block_size=BLOCK, **kwargs)
    if return_type == "lazy":
        assert got._plan.executor == "cuda:0"
        got = got.compute()
    else:
        assert isinstance(got[0]._meta, np.ndarray)
        got = (got[0].compute(), got[1].compute())
    _same_result(got, gpu)


def _mosaic_inputs():
    """Three overlapping exposures with different backgrounds, and the mosaic's grid."""
    inputs = []
    for k, (crval, rot) in enumerate([((30.0, 40.0), 0), ((30.2, 40.1), 14), ((30.1, 39.9), -9)]):
        header = tan_header(crval=crval, crpix=(28.5, 30.5), cdelt=0.011, shape=(56, 60), rot=rot)
        inputs.append((_image(seed=k) + 10.0 * k, header))
    out = tan_header(crval=(30.1, 40.0), crpix=(40.5, 36.5), cdelt=0.011, shape=(72, 80))
    return inputs, out


@pytest.mark.parametrize("combine, match", [("mean", False), ("max", False), ("sum", True),
                                            ("median", False)])
@pytest.mark.parametrize("return_type", ["numpy", "dask"])
def test_mosaics_on_the_gpu(combine, match, return_type):
    """Mosaics with device='cuda': inputs sampled on the GPU and, for the combine modes that
    allow it without background matching, combined there (only the block sums come back):
    within 1e-9 of the CPU's, identical footprints; dask blocks give the numpy bits."""
    from reproject_rs.mosaicking import reproject_and_coadd
    inputs, out = _mosaic_inputs()

    def run(device, return_type="numpy"):
        result = reproject_and_coadd(inputs, out, shape_out=(72, 80),
                                     reproject_function=reproject_rs.reproject_interp,
                                     combine_function=combine, match_background=match,
                                     block_sizes=(24, 32), device=device,
                                     return_type=return_type)
        return tuple(np.asarray(r) for r in result)

    gpu = run("cuda", return_type)
    _close_to_cpu(gpu, run("cpu"))
    _same_result(gpu, run("cuda"))
    overlaps = 1 if combine in ("mean", "sum", "median") else 0
    assert gpu[1].max() > overlaps and (gpu[1] == 0).any()


@sim_only
def test_mosaic_blocks_combine_on_the_gpu():
    """A fault injected into the simulated driver's first call (a fresh process) shows that a
    mosaic's blocks combine on the GPU: the combiner warns and combines the rest on the host,
    with the same values."""
    script = textwrap.dedent("""
        import os, sys
        sys.path.insert(0, sys.argv[1])
        import numpy as np
        import reproject_rs
        from reproject_rs.mosaicking import reproject_and_coadd
        import test_gpu_paths as t

        inputs, out = t._mosaic_inputs()
        def run(device):
            return reproject_and_coadd(inputs, out, shape_out=(72, 80),
                                       reproject_function=reproject_rs.reproject_interp,
                                       block_sizes=(24, 32), device=device)
        cpu = run("cpu")
        os.environ["REPROJECT_RS_CUDA_SIM_FAIL"] = "0:other"
        t._close_to_cpu(run("cuda"), cpu)
        print("OK")
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "OK"
    assert "failed combining the mosaic block" in run.stderr, run.stderr
    assert "combining the remaining blocks on the host" in run.stderr

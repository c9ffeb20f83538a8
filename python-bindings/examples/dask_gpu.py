"""Reprojecting on GPUs with dask.distributed.

Every dask block of ``reproject_interp(..., return_type='dask', device='cuda')`` is computed
by the GPU block executor of the worker process that runs it. Each worker:

* warms up once, when it joins: ``reproject_rs.warmup`` opens its GPU and compiles the
  kernels, so that no block pays for it (and a worker without a usable GPU fails loudly);
* builds the engine plan of a job once, on the first block of that job it receives (the WCS
  set-up, the spline coefficients for orders >= 2, the input uploaded to its GPU), and
  reuses it for the job's other blocks (a small per-process plan cache; see
  ``reproject_rs._engine.plan_cache_info``).

With CuPy installed, a CuPy input goes the same way and stays on the GPU: a dask array of
CuPy chunks, computed on the workers' GPUs from the device input.

The cluster is dask_cuda's ``LocalCUDACluster`` when dask_cuda is installed: one worker per
GPU, each seeing its own GPU as device 0, hence ``device='cuda'``. Otherwise a plain
``LocalCluster`` of two single-threaded worker processes; with several GPUs and no dask_cuda,
give each job a ``device='cuda:N'`` or run the workers with their own
``CUDA_VISIBLE_DEVICES``.

On a machine without a GPU, run it on the CUDA simulator (the real kernels compiled as host
C++; a few seconds)::

    REPROJECT_RS_CUDA_SIM=1 python python-bindings/examples/dask_gpu.py

Without a GPU or the simulator it uses ``device='auto'``, which computes on the CPU with the
same values. Needs numpy, astropy and ``dask[array,distributed]``.
"""

import functools
import time

import numpy as np
from astropy.wcs import WCS

import reproject_rs


def make_cluster():
    """A dask_cuda ``LocalCUDACluster`` when dask_cuda is installed, else a ``LocalCluster``
    of two worker processes (which inherit this process's environment, the simulator's
    ``REPROJECT_RS_CUDA_SIM`` included)."""
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        from distributed import LocalCluster

        return LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
    return LocalCUDACluster(dashboard_address=None)


def choose_device():
    """'cuda' when this machine has a usable GPU (or the simulator), else 'auto' (the CPU)."""
    try:
        reproject_rs.warmup("cuda")
        return "cuda"
    except reproject_rs.DeviceUnavailableError as e:
        print(f"no GPU ({e}); computing with device='auto' (the CPU)")
        return "auto"


def synthetic_image(ny=600, nx=640):
    """A TAN image around (RA, Dec) = (150, 2.2) deg: a gradient, sources and noise."""
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.crval = [150.0, 2.2]
    wcs.wcs.crpix = [nx / 2 + 0.5, ny / 2 + 0.5]
    wcs.wcs.cdelt = [-0.0004, 0.0004]
    rng = np.random.default_rng(42)
    y, x = np.mgrid[0:ny, 0:nx]
    image = 10 + 0.002 * x + 0.001 * y + rng.normal(scale=0.5, size=(ny, nx))
    for sy, sx, flux in zip(rng.uniform(0, ny, 80), rng.uniform(0, nx, 80), rng.uniform(5, 500, 80)):
        image += flux * np.exp(-((y - sy) ** 2 + (x - sx) ** 2) / 4.5)
    return image.astype(np.float32), wcs


def target_wcs():
    """Galactic coordinates, another projection, rotated pixels: 500 x 520."""
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["GLON-SIN", "GLAT-SIN"]
    wcs.wcs.crval = [236.8, 42.1]
    wcs.wcs.crpix = [260.5, 250.5]
    wcs.wcs.cdelt = [-0.0005, 0.0005]
    wcs.wcs.pc = [[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]]
    return wcs, (500, 520)


def main():
    from distributed import Client

    device = choose_device()
    image, wcs_in = synthetic_image()
    wcs_out, shape_out = target_wcs()
    with make_cluster() as cluster, Client(cluster) as client:
        # Warm up every worker now and every worker that joins later.
        client.register_worker_callbacks(setup=functools.partial(reproject_rs.warmup, device=device))
        for worker, lines in client.run(reproject_rs.warmup, device=device).items():
            print(f"{worker}: {'; '.join(lines)}")

        start = time.perf_counter()
        data, footprint = reproject_rs.reproject_interp(
            (image, wcs_in), wcs_out, shape_out=shape_out, order="bicubic",
            return_type="dask", block_size=(128, 128), device=device,
        )
        blocks = data.npartitions
        data, footprint = client.compute([data, footprint], sync=True)
        print(f"{blocks} blocks of up to 128x128 computed in "
              f"{time.perf_counter() - start:.2f} s on the workers")

        # The same job computed here, in this process, without dask: the same values.
        whole = reproject_rs.reproject_interp(
            (image, wcs_in), wcs_out, shape_out=shape_out, order="bicubic", device=device
        )
        np.testing.assert_array_equal(data, whole[0])
        np.testing.assert_array_equal(footprint, whole[1])
        print(f"valid pixels: {int(footprint.sum())} of {footprint.size}; same bits as the "
              "whole-image call")

        # A CuPy input stays on the GPU: a dask array of CuPy chunks, each computed on its
        # worker's GPU from the device input, with the same bits.
        try:
            import cupy
        except ImportError:
            cupy = None
        if cupy is not None and device == "cuda":
            chunks = reproject_rs.reproject_interp(
                (cupy.asarray(image), wcs_in), wcs_out, shape_out=shape_out, order="bicubic",
                return_type="dask", block_size=(128, 128), device="cuda",
                return_footprint=False,
            )
            on_gpu = client.compute(chunks, sync=True)
            np.testing.assert_array_equal(cupy.asnumpy(on_gpu), whole[0])
            print(f"CuPy input: {type(on_gpu).__name__} chunks, the same bits")

        # Each worker built the plan once and reused it for its other blocks.
        for worker, info in client.run(reproject_rs._engine.plan_cache_info).items():
            print(f"{worker}: plans built {info.misses}, reused from the cache {info.hits}")
        print("plans built per worker:", client.run(reproject_rs._lazy.plans_built))


if __name__ == "__main__":
    main()

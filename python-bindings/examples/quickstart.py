# %% [markdown]
# # reproject_rs quickstart
#
# `reproject_rs.reproject_interp` is a drop-in for astropy reproject's `reproject_interp`,
# computed by the reproject-rs Rust engine. This notebook-style script (run it as
# `python quickstart.py`, or cell by cell in an editor that understands `# %%`) needs numpy
# and astropy; astropy reproject and dask are used when installed. Nothing is downloaded.

# %%
import time

import numpy as np
from astropy.wcs import WCS

import reproject_rs

print("reproject_rs", reproject_rs.__version__)

# %% [markdown]
# ## A synthetic image with a WCS
#
# A 1024 x 1024 gnomonic (TAN) image around (RA, Dec) = (150, 2.2) deg: a smooth background,
# a few hundred point-like sources and some noise.

# %%
ny, nx = 1024, 1024
wcs_in = WCS(naxis=2)
wcs_in.wcs.ctype = ["RA---TAN", "DEC--TAN"]
wcs_in.wcs.crval = [150.0, 2.2]
wcs_in.wcs.crpix = [nx / 2 + 0.5, ny / 2 + 0.5]
wcs_in.wcs.cdelt = [-0.0004, 0.0004]  # 1.44 arcsec pixels

rng = np.random.default_rng(42)
y, x = np.mgrid[0:ny, 0:nx]
image = 10 + 0.002 * x + 0.001 * y
for sy, sx, flux in zip(rng.uniform(0, ny, 300), rng.uniform(0, nx, 300), rng.uniform(5, 500, 300)):
    r0, r1, c0, c1 = int(max(sy - 8, 0)), int(min(sy + 9, ny)), int(max(sx - 8, 0)), int(min(sx + 9, nx))
    image[r0:r1, c0:c1] += flux * np.exp(-((y[r0:r1, c0:c1] - sy) ** 2 + (x[r0:r1, c0:c1] - sx) ** 2) / 4.5)
image += rng.normal(scale=0.5, size=image.shape)
image = image.astype(np.float32)

# %% [markdown]
# ## The target: galactic coordinates, another projection, rotated pixels

# %%
wcs_out = WCS(naxis=2)
wcs_out.wcs.ctype = ["GLON-SIN", "GLAT-SIN"]
wcs_out.wcs.crval = [236.8, 42.1]  # roughly the same field
wcs_out.wcs.crpix = [450.5, 450.5]
wcs_out.wcs.cdelt = [-0.0005, 0.0005]
angle = np.radians(30)
wcs_out.wcs.pc = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
shape_out = (900, 900)

# %% [markdown]
# ## Reproject
#
# The same call as astropy reproject's: `(array, wcs)` in, `(array, footprint)` out.


# %%
def timed(f, repeat=3):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = f()
        best = min(best, time.perf_counter() - t0)
    return best, result


for order in ("bilinear", "bicubic"):
    t_rs, (array, footprint) = timed(
        lambda: reproject_rs.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out, order=order)
    )
    print(f"{order:9s} reproject_rs: {t_rs * 1e3:7.1f} ms, {footprint.mean():.1%} of the output covered")

# parallel=True uses every core (bit-identical results).
t_par, (array_par, _) = timed(
    lambda: reproject_rs.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out, parallel=True)
)
array_serial, _ = reproject_rs.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out)
assert np.array_equal(array_par, array_serial, equal_nan=True)
print(f"bilinear  parallel=True: {t_par * 1e3:7.1f} ms (identical to the serial result)")

# %% [markdown]
# ## Compare with astropy reproject (if installed)

# %%
try:
    import reproject
except ImportError:
    reproject = None
    print("astropy reproject is not installed: skipping the comparison")

if reproject is not None:
    for order in ("bilinear", "bicubic"):
        t_rs, ours = timed(
            lambda: reproject_rs.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out, order=order)
        )
        t_ap, theirs = timed(
            lambda: reproject.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out, order=order),
            repeat=1,
        )
        both = np.isfinite(ours[0]) & np.isfinite(theirs[0])
        diff = np.max(np.abs(ours[0][both] - theirs[0][both]))
        scale = np.max(np.abs(theirs[0][both]))
        print(
            f"{order:9s} reproject {reproject.__version__}: {t_ap * 1e3:7.1f} ms; "
            f"reproject_rs is {t_ap / t_rs:5.1f}x faster; max |difference| {diff:.3g} "
            f"(relative {diff / scale:.2g}); footprints differ at {(ours[1] != theirs[1]).sum()} pixels"
        )

# %% [markdown]
# ## Lazy results: compute blocks on demand
#
# `return_type='lazy'` prepares the engine plan once (for bicubic, the spline coefficients of
# the whole input) and hands out block handles. Each block computes on its own, in any order,
# on any thread, or in another process (handles pickle), always giving the same values as the
# eager call.

# %%
from concurrent.futures import ThreadPoolExecutor

lazy = reproject_rs.reproject_interp(
    (image, wcs_in), wcs_out, shape_out=shape_out, order="bicubic", block_size=(256, 256),
    return_type="lazy",
)
print(lazy)
handles = lazy.blocks()
print(handles[0], "->", handles[0].window)

# Fill an output array block by block, blocks computed on 4 threads (the GIL is released).
mosaic = np.full(lazy.shape, np.nan)
with ThreadPoolExecutor(4) as pool:
    for handle, (data, footprint) in zip(handles, pool.map(lambda h: h.compute(), handles)):
        mosaic[handle.window] = data

eager, _ = reproject_rs.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out, order="bicubic")
assert np.array_equal(mosaic, eager, equal_nan=True)
print(f"{len(handles)} blocks assembled: identical to the eager result")

# Or everything at once:
whole, whole_footprint = lazy.compute()
assert np.array_equal(whole, eager, equal_nan=True)

# %% [markdown]
# ## dask
#
# `return_type='dask'` gives dask arrays, one engine call per chunk; they run on any dask
# scheduler, dask.distributed with process workers included (each worker prepares the plan
# once).

# %%
try:
    import dask.array as da
except ImportError:
    da = None
    print("dask is not installed: skipping the dask example")

if da is not None:
    data, footprint = reproject_rs.reproject_interp(
        (image, wcs_in), wcs_out, shape_out=shape_out, order="bicubic", block_size=(300, 300),
        return_type="dask",
    )
    print(data)
    # Chain with other dask operations; compute on the threaded scheduler.
    mean = da.nanmean(da.where(footprint > 0, data, np.nan))
    t_dask, (data_np, mean_value) = timed(lambda: da.compute(data, mean, scheduler="threads"), repeat=1)
    assert np.array_equal(data_np, eager, equal_nan=True)
    print(f"dask (threads): {t_dask * 1e3:.1f} ms, mean over the footprint {mean_value:.3f}")

    # Dask arrays are also accepted as input (computed to memory first).
    lazy_input = da.from_array(image, chunks=(256, 256))
    array_from_dask, _ = reproject_rs.reproject_interp((lazy_input, wcs_in), wcs_out, shape_out=shape_out)
    assert np.array_equal(array_from_dask, array_serial, equal_nan=True)

# %% [markdown]
# ## Devices
#
# `device='auto'` (default) and `'cpu'` run the CPU engine. This build has no CUDA backend:
# `device='cuda'` raises `reproject_rs.DeviceUnavailableError`.

# %%
try:
    reproject_rs.reproject_interp((image, wcs_in), wcs_out, shape_out=shape_out, device="cuda")
except reproject_rs.DeviceUnavailableError as error:
    print("device='cuda':", error)

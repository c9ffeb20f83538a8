#!/usr/bin/env python
"""Golden fixtures for the interpolation kernels (src/interp/), from the real reproject/scipy.

Run from the repository root with the reference venv:

    /work/venv/bin/python scripts/make_interp_fixtures.py

Writes tests/fixtures/interp/:

* ``sample.npz``: for every case ``<shape>_<variant>``:
  - ``<case>_image``  (ny, nx) float64 input image;
  - ``<case>_coords`` (2, N) float64 coordinates, numpy order (row, column), exactly as
    reproject passes them to ``map_coordinates``;
  - ``<case>_o<k>``   (N,) float64 output of
    ``reproject._array_utils.map_coordinates(image, coords, order=k, cval=nan,
    mode='constant')`` for k = 0..5 (this includes reproject's ``_clip_coords`` and reset).
* ``prefilter.npz``: ``<shape>_<variant>_image`` and ``<shape>_<variant>_o<k>`` =
  ``scipy.ndimage.spline_filter(image, order=k, output=float64, mode='constant')`` for
  k = 2..5.
* ``versions.json``: the library versions used.

Deterministic: fixed seed, no dependence on time or environment.
"""

import json
import os
import sys

import numpy as np
import reproject
import scipy
from reproject._array_utils import map_coordinates
from scipy.ndimage import spline_filter

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "interp")

SAMPLE_SHAPES = [(1, 1), (1, 5), (5, 1), (3, 4), (30, 40), (3, 40), (17, 9)]
PREFILTER_SHAPES = [(1, 1), (1, 5), (5, 1), (2, 2), (3, 4), (30, 40), (17, 9), (600, 3), (2, 700)]


def special_values(n):
    """Exact edge and tie coordinates along an axis of length n."""
    vals = [
        -2.0, -1.0, -0.5 - 1e-12, -0.5, -0.5 + 1e-12, -0.25, -0.0, 0.0, 1e-300,
        0.5, 1.0, 1.5, 2.5,
        n - 1.5, n - 1.0 - 1e-12, n - 1.0, n - 1.0 + 1e-12, n - 0.75,
        n - 0.5 - 1e-12, n - 0.5, n - 0.5 + 1e-12, float(n), n + 1.0,
        np.nan, np.inf, -np.inf,
    ]
    return np.array(vals, dtype=np.float64)


def make_coords(rng, shape, n_random):
    ny, nx = shape
    # random points over [-2, n + 1] on each axis
    ry = rng.uniform(-2.0, ny + 1.0, n_random)
    rx = rng.uniform(-2.0, nx + 1.0, n_random)
    # random points inside the image, where interpolation is exercised the most
    iy = rng.uniform(-0.5, ny - 0.5, n_random)
    ix = rng.uniform(-0.5, nx - 0.5, n_random)
    # the cartesian product of the special values
    sy, sx = special_values(ny), special_values(nx)
    gy, gx = np.meshgrid(sy, sx, indexing="ij")
    # special values on one axis, random valid values on the other
    my = np.concatenate([sy, rng.uniform(-0.5, ny - 0.5, sx.size)])
    mx = np.concatenate([rng.uniform(-0.5, nx - 0.5, sy.size), sx])
    # integer and half-integer coordinates inside the image (ties, zero-weight taps)
    hy = np.arange(-1, 2 * ny) / 2.0
    hx = np.arange(-1, 2 * nx) / 2.0
    if hy.size * hx.size > 400:
        hy = rng.choice(hy, 20)
        hx = rng.choice(hx, 20)
    qy, qx = np.meshgrid(hy, hx, indexing="ij")
    y = np.concatenate([ry, iy, gy.ravel(), my, qy.ravel()])
    x = np.concatenate([rx, ix, gx.ravel(), mx, qx.ravel()])
    return np.array([y, x], dtype=np.float64)


def make_image(rng, shape, variant):
    ny, nx = shape
    img = rng.normal(0.0, 10.0, shape) + np.arange(nx)[None, :] * 0.7 + np.arange(ny)[:, None] * 1.3
    if variant == "zeros":
        img[:] = 0.0
        img[::2, ::2] = -0.0
    elif variant == "nan":
        img[ny // 2, nx // 2] = np.nan
        if ny > 2 and nx > 3:
            img[ny - 1, nx - 2] = np.nan
    elif variant == "inf":
        img[ny // 2, nx // 2] = np.inf
        if ny > 2 and nx > 3:
            img[0, nx - 1] = -np.inf
    return img.astype(np.float64)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240611)
    sample = {}
    n_points = 0
    for shape in SAMPLE_SHAPES:
        variants = ["clean"]
        if shape in [(1, 5), (3, 4), (30, 40), (17, 9), (1, 1)]:
            variants += ["nan", "inf"]
        if shape in [(3, 4)]:
            variants += ["zeros"]
        for variant in variants:
            case = f"{shape[0]}x{shape[1]}_{variant}"
            n_random = 200 if shape[0] * shape[1] > 50 else 60
            if variant != "clean":
                n_random //= 2
            img = make_image(rng, shape, variant)
            coords = make_coords(rng, shape, n_random)
            sample[f"{case}_image"] = img
            sample[f"{case}_coords"] = coords
            for order in range(6):
                out = map_coordinates(img, coords, order=order, cval=np.nan, mode="constant")
                assert out.dtype == np.float64 and out.shape == (coords.shape[1],)
                sample[f"{case}_o{order}"] = out
                n_points += out.size
    np.savez_compressed(os.path.join(OUT, "sample.npz"), **sample)

    pre = {}
    n_pre = 0
    for shape in PREFILTER_SHAPES:
        variants = ["clean"]
        if shape in [(3, 4), (17, 9)]:
            variants += ["inf", "zeros"]
        for variant in variants:
            case = f"{shape[0]}x{shape[1]}_{variant}"
            img = make_image(rng, shape, variant)
            if shape == (2, 700):
                # large dynamic range along the long lines
                img *= np.exp(rng.uniform(-30, 30, shape))
            pre[f"{case}_image"] = img
            for order in range(2, 6):
                out = spline_filter(img, order=order, output=np.float64, mode="constant")
                pre[f"{case}_o{order}"] = out
                n_pre += out.size
    np.savez_compressed(os.path.join(OUT, "prefilter.npz"), **pre)

    with open(os.path.join(OUT, "versions.json"), "w") as f:
        json.dump(
            {
                "python": sys.version.split()[0],
                "numpy": np.__version__,
                "scipy": scipy.__version__,
                "reproject": reproject.__version__,
                "sample_values": n_points,
                "prefilter_values": n_pre,
            },
            f,
            indent=1,
        )
        f.write("\n")
    print(f"sample values: {n_points}, prefilter values: {n_pre}")


if __name__ == "__main__":
    main()

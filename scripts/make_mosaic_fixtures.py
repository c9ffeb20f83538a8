#!/usr/bin/env python
"""Golden fixtures for mosaics, from astropy reproject 0.21's ``reproject_and_coadd``.

Run from the repository root with the reference venv (numpy, astropy, reproject 0.21):

    /work/oracle/bin/python scripts/make_mosaic_fixtures.py

Writes tests/fixtures/mosaic/:

* ``cases.json``: the library versions and, for every case, the input headers as text, the
  output header and shape, and the runs (combine function, background matching, weights,
  blank value);
* ``arrays.npz`` (compressed): ``<case>_input<k>`` (and ``<case>_weights<k>``) the inputs,
  and ``<case>_<run>_data`` / ``_footprint`` reproject's outputs.

Deterministic: fixed seeds (numpy's global generator too: reproject's background solver
shuffles with it).
"""

import io
import json
import os
import warnings
import zipfile

import astropy
import numpy as np
import reproject
from astropy.io import fits
from astropy.wcs import WCS
from reproject import reproject_interp
from reproject.mosaicking import reproject_and_coadd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "mosaic")


def header(cards):
    h = fits.Header()
    for key, value in cards:
        h[key] = value
    return h.tostring(sep="\n")


def wcs_of(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WCS(fits.Header.fromstring(text, sep="\n"))


def celestial(ctype, crval, crpix, cdelt, rotation=0.0, naxis=2, extra=()):
    c, s = np.cos(np.radians(rotation)), np.sin(np.radians(rotation))
    cards = [
        ("NAXIS", naxis),
        ("CTYPE1", ctype[0]),
        ("CTYPE2", ctype[1]),
        ("CRVAL1", crval[0]),
        ("CRVAL2", crval[1]),
        ("CRPIX1", crpix[0]),
        ("CRPIX2", crpix[1]),
        ("CDELT1", -cdelt),
        ("CDELT2", cdelt),
        ("PC1_1", c),
        ("PC1_2", -s),
        ("PC2_1", s),
        ("PC2_2", c),
    ]
    if naxis == 3:
        cards += [("CTYPE3", "FREQ"), ("CRVAL3", 1.4e9), ("CRPIX3", 1.0), ("CDELT3", 1e6),
                  ("CUNIT3", "Hz")]
    return header(cards + list(extra))


def image(rng, shape, background, holes=True):
    ny, nx = shape[-2:]
    y, x = np.mgrid[0:ny, 0:nx]
    sky = 10 + 3 * np.sin(x / 7.0) * np.cos(y / 5.0) + 0.02 * x
    data = np.broadcast_to(sky, shape).copy()
    data += rng.normal(0, 0.05, shape) + background
    if holes:
        data.reshape(-1)[rng.choice(data.size, data.size // 50, replace=False)] = np.nan
    return data


RUNS = [
    ("mean", False, False, 0.0),
    ("sum", False, False, 0.0),
    ("first", False, False, 0.0),
    ("last", False, False, 0.0),
    ("min", False, False, 0.0),
    ("max", False, False, 0.0),
    ("mean", True, False, 0.0),
    ("sum", True, False, 0.0),
    ("max", True, False, 0.0),
    ("mean", False, True, 0.0),
    ("mean", True, True, 0.0),
    ("first", False, True, 0.0),
    ("mean", False, False, "nan"),
]


def cases():
    rng = np.random.default_rng(20261125)
    out = []
    # Four overlapping TAN exposures with small rotations and offsets, different backgrounds.
    inputs = []
    for k, (dx, dy, rot, bg) in enumerate(
        [(0, 0, 0.0, 0.0), (18, 5, 3.0, 1.5), (6, 22, -4.0, -0.7), (25, 20, 8.0, 2.2)]
    ):
        h = celestial(("RA---TAN", "DEC--TAN"), (150.0, 30.0), (24.5 - dx, 20.5 - dy), 0.002,
                      rotation=rot)
        inputs.append((h, image(rng, (40, 48), bg)))
    out.append(("tan", "TAN exposures into TAN", inputs,
                celestial(("RA---TAN", "DEC--TAN"), (150.02, 30.01), (36.5, 32.5), 0.002),
                (64, 72)))
    # Galactic plate carree inputs into an ICRS zenithal equal-area grid (a frame change, not
    # a homography).
    inputs = []
    for k, (l0, b0, bg) in enumerate([(120.0, 10.0, 0.0), (123.0, 11.0, 1.0), (121.0, 13.0, -0.5)]):
        h = celestial(("GLON-CAR", "GLAT-CAR"), (l0, b0), (20.5, 15.5), 0.1)
        inputs.append((h, image(rng, (30, 40), bg)))
    out.append(("car_frame", "galactic CAR into ICRS ZEA", inputs,
                celestial(("RA---ZEA", "DEC--ZEA"), (0.0, 73.0), (40.5, 35.5), 0.1), (70, 80)))
    # Cubes (3 planes along frequency).
    inputs = []
    for k, (dx, bg) in enumerate([(0, 0.0), (15, 1.0)]):
        h = celestial(("RA---TAN", "DEC--TAN"), (150.0, 30.0), (16.5 - dx, 12.5), 0.002, naxis=3)
        inputs.append((h, image(rng, (3, 24, 32), bg)))
    out.append(("cube", "cubes along frequency", inputs,
                celestial(("RA---TAN", "DEC--TAN"), (150.01, 30.0), (24.5, 14.5), 0.002, naxis=3),
                (3, 28, 50)))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {
        "versions": {"numpy": np.__version__, "astropy": astropy.__version__,
                     "reproject": reproject.__version__},
        "cases": [],
    }
    arrays = {}
    rng = np.random.default_rng(7)
    for name, description, inputs, out_header, shape_out in cases():
        weights = [rng.uniform(0.5, 2.0, data.shape) for _, data in inputs]
        for w in weights:
            w.reshape(-1)[::97] = np.nan
        for k, ((h, data), w) in enumerate(zip(inputs, weights)):
            arrays[f"{name}_input{k}"] = data
            arrays[f"{name}_weights{k}"] = w
        runs = []
        for combine, background, use_weights, blank in RUNS:
            run = f"{combine}{'_bg' if background else ''}{'_w' if use_weights else ''}" \
                  f"{'_blanknan' if blank == 'nan' else ''}"
            np.random.seed(12345)  # reproject's background solver shuffles with numpy's global RNG
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                data, footprint = reproject_and_coadd(
                    [(d, wcs_of(h)) for h, d in inputs],
                    wcs_of(out_header),
                    shape_out=shape_out,
                    input_weights=weights if use_weights else None,
                    reproject_function=reproject_interp,
                    combine_function=combine,
                    match_background=background,
                    blank_pixel_value=np.nan if blank == "nan" else blank,
                )
            arrays[f"{name}_{run}_data"] = data
            arrays[f"{name}_{run}_footprint"] = footprint
            runs.append({"name": run, "combine": combine, "match_background": background,
                         "weights": use_weights, "blank": blank})
        meta["cases"].append({
            "name": name,
            "description": description,
            "inputs": [h for h, _ in inputs],
            "output_header": out_header,
            "shape_out": list(shape_out),
            "runs": runs,
        })
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    with open(os.path.join(OUT, "arrays.npz"), "wb") as f:
        f.write(buf.getvalue())
    print(f"wrote {len(meta['cases'])} cases, {len(arrays)} arrays to {OUT}")


if __name__ == "__main__":
    main()

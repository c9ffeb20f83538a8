#!/usr/bin/env python
"""Golden fixtures for the whole `reproject_interp` engine, from astropy reproject 0.21.

Run from the repository root with the reference venv:

    /work/venv/bin/python scripts/make_reproject_fixtures.py

Writes tests/fixtures/reproject/:

* ``cases.json``: the library versions and, for every case, its group (the Rust test that
  checks it), its description, the input and output headers as text
  (``Header.tostring(sep='\\n')``), the input dtype (numpy ``str``, e.g. ``>f4``), the input
  and output shapes and the runs (order, ``roundtrip_coords``);
* ``arrays.npz`` (compressed): ``<case>_image`` the input image as float64 (every value is
  exactly representable in the case's dtype), and for every run ``<case>_<run>_data`` and
  ``<case>_<run>_footprint``, reproject's float64 outputs.

Both sides use exactly the same headers: reproject gets ``WCS(Header.fromstring(text))``, so
the 20-character value formatting of astropy's header writer is part of the fixture.

Deterministic: fixed seeds, no dependence on time or environment.
"""

import io
import json
import os
import warnings
import zipfile

import astropy
import astropy.units as u
import numpy as np
import reproject
import scipy
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.wcs import WCS
from reproject import reproject_interp

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "reproject")
SIP_HEADER = os.path.join(HERE, "..", "..", "shared", "wcs-vectors", "extra_siponly.hdr")

ORDERS = [0, 1, 2, 3]


def header(cards):
    """A header from (key, value) pairs, as the text both sides read."""
    h = fits.Header()
    for key, value in cards:
        h[key] = value
    return h.tostring(sep="\n")


def wcs_of(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WCS(fits.Header.fromstring(text, sep="\n"))


def tan(crval, crpix, cdelt, rot_deg=0.0, ctype=("RA---TAN", "DEC--TAN"), extra=()):
    """A celestial header with a PC rotation matrix."""
    c, s = np.cos(np.radians(rot_deg)), np.sin(np.radians(rot_deg))
    cards = [
        ("CTYPE1", ctype[0]),
        ("CTYPE2", ctype[1]),
        ("CRPIX1", crpix[0]),
        ("CRPIX2", crpix[1]),
        ("CRVAL1", crval[0]),
        ("CRVAL2", crval[1]),
        ("CDELT1", cdelt[0]),
        ("CDELT2", cdelt[1]),
        ("CUNIT1", "deg"),
        ("CUNIT2", "deg"),
    ]
    if rot_deg:
        cards += [("PC1_1", c), ("PC1_2", -s), ("PC2_1", s), ("PC2_2", c)]
    return header(cards + list(extra))


def smooth_image(rng, shape, scale=100.0):
    """A smooth field with some structure plus noise, values O(scale)."""
    ny, nx = shape[-2:]
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    img = np.zeros(shape[-2:])
    for _ in range(6):
        cy, cx = rng.uniform(0, ny), rng.uniform(0, nx)
        w = rng.uniform(2.0, max(ny, nx) / 3.0)
        img += rng.uniform(0.2, 1.0) * np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * w * w))
    img += 0.3 * np.sin(x / 7.0) * np.cos(y / 5.0)
    img += 0.05 * rng.standard_normal(shape[-2:])
    img = img * scale + scale / 10.0
    if len(shape) > 2:
        planes = [img * (1 + 0.1 * i) + i for i in range(int(np.prod(shape[:-2])))]
        img = np.stack(planes).reshape(shape)
    return img


CASES = []
ARRAYS = {}


def add_case(group, name, description, image, dtype, text_in, text_out, shape_out, runs):
    """Runs reproject for every (key, order, roundtrip) of `runs` and records the results.

    `group` names the Rust test that checks the case."""
    typed = np.asarray(image).astype(dtype)
    as_f64 = typed.astype(np.float64)
    # Float images are rounded to the dtype (the fixture stores the rounded values); integer
    # images must fit.
    if typed.dtype.kind in "iu":
        assert np.array_equal(as_f64, np.asarray(image, dtype=np.float64)), name
    w_in, w_out = wcs_of(text_in), wcs_of(text_out)
    ARRAYS[f"{name}_image"] = as_f64
    run_meta = []
    for key, order, roundtrip in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data, footprint = reproject_interp(
                (typed, w_in),
                w_out,
                shape_out=tuple(shape_out),
                order=order,
                roundtrip_coords=roundtrip,
            )
        assert data.dtype == np.float64 and footprint.dtype == np.float64
        ARRAYS[f"{name}_{key}_data"] = data
        ARRAYS[f"{name}_{key}_footprint"] = footprint
        run_meta.append({"key": key, "order": order, "roundtrip_coords": roundtrip})
        nan = int(np.isnan(data).sum())
        print(f"  {name:24s} {key:10s} shape {data.shape} NaN {nan}/{data.size}")
    CASES.append(
        {
            "name": name,
            "group": group,
            "description": description,
            "dtype": np.dtype(dtype).str,
            "shape_in": list(typed.shape),
            "shape_out": list(shape_out),
            "header_in": text_in,
            "header_out": text_out,
            "runs": run_meta,
        }
    )


def all_orders(extra_no_roundtrip=()):
    runs = [(f"o{k}", k, True) for k in ORDERS]
    runs += [(f"o{k}_nort", k, False) for k in extra_no_roundtrip]
    return runs


def case_tan_rotated():
    """1. TAN -> TAN rotated by 30 degrees, 1" pixels, CRPIX offset, small CRVAL shift."""
    rng = np.random.default_rng(1)
    image = smooth_image(rng, (80, 90))
    text_in = tan((150.0, 2.0), (45.3, 40.7), (-1 / 3600, 1 / 3600))
    text_out = tan(
        (150.0 + 3.0 / 3600, 2.0 - 2.0 / 3600), (38.1, 36.4), (-1 / 3600, 1 / 3600), rot_deg=30.0
    )
    for dtype, suffix, extra in [("<f4", "f4", (1,)), ("<f8", "f8", (0, 1, 2, 3))]:
        add_case(
            "tan_rotated",
            f"tan_rot30_{suffix}",
            f"TAN -> TAN rotated 30 deg, 80x90 {dtype} input -> 70x76",
            image,
            dtype,
            text_in,
            text_out,
            (70, 76),
            all_orders(extra),
        )


def case_car_galactic_to_tan():
    """2. CAR galactic -> TAN equatorial (frame change)."""
    rng = np.random.default_rng(2)
    image = smooth_image(rng, (60, 80))
    text_in = tan(
        (30.0, 0.0), (40.5, 20.5), (-0.05, 0.05), ctype=("GLON-CAR", "GLAT-CAR")
    )
    # The output centre: galactic (30, 0.8) in ICRS.
    centre = SkyCoord(30.0 * u.deg, 0.8 * u.deg, frame="galactic").icrs
    text_out = tan(
        (round(centre.ra.deg, 6), round(centre.dec.deg, 6)),
        (25.5, 26.0),
        (-0.06, 0.06),
        rot_deg=-5.0,
        extra=[("RADESYS", "ICRS")],
    )
    add_case(
        "frame_change",
        "car_gal_to_tan_icrs",
        "GLON/GLAT CAR -> RA/DEC TAN (ICRS), 60x80 -> 50x52",
        image,
        "<f8",
        text_in,
        text_out,
        (50, 52),
        all_orders(),
    )


def case_sin_to_tan():
    """3. SIN -> TAN."""
    rng = np.random.default_rng(3)
    image = smooth_image(rng, (64, 64))
    text_in = tan((83.0, -5.0), (32.5, 32.5), (-0.1, 0.1), ctype=("RA---SIN", "DEC--SIN"))
    text_out = tan((83.4, -4.7), (25.0, 24.0), (-0.12, 0.12), rot_deg=12.0)
    add_case(
        "sin_to_tan",
        "sin_to_tan",
        "SIN -> TAN, 0.1 deg pixels, 64x64 -> 50x50",
        image,
        "<f8",
        text_in,
        text_out,
        (50, 50),
        all_orders(),
    )


def case_ait_to_car():
    """4. AIT all-sky -> CAR all-sky, with the CAR grid running past the poles and +-180."""
    rng = np.random.default_rng(4)
    image = smooth_image(rng, (46, 92))
    text_in = tan((0.0, 0.0), (46.5, 23.5), (-4.0, 4.0), ctype=("RA---AIT", "DEC--AIT"))
    # 100 x 4 deg = 400 deg of longitude, 50 x 4 = 200 deg of latitude: invalid world
    # coordinates beyond the poles and beyond +-180 deg from CRVAL1.
    text_out = tan((180.0, 0.0), (50.5, 25.5), (-4.0, 4.0), ctype=("RA---CAR", "DEC--CAR"))
    add_case(
        "allsky",
        "ait_to_car_allsky",
        "AIT all-sky (46x92, 4 deg) -> CAR centred on 180 deg (50x100, beyond the poles)",
        image,
        "<f8",
        text_in,
        text_out,
        (50, 100),
        all_orders((0, 1, 2, 3)),
    )


def case_sip():
    """5. A SIP input: a 100x100 cut-out of the PTF header (CRPIX moved) -> TAN."""
    rng = np.random.default_rng(5)
    with open(SIP_HEADER) as f:
        full = fits.Header.fromstring(f.read(), sep="\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = WCS(full)
    # A cut-out starting at 0-based pixel (x0, y0): CRPIX moves by the same amount.
    x0, y0 = 1500, 3300
    h = fits.Header()
    for key in ["CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2", "CUNIT1", "CUNIT2"]:
        h[key] = full[key]
    h["CRPIX1"] = full["CRPIX1"] - x0
    h["CRPIX2"] = full["CRPIX2"] - y0
    for key in ["CD1_1", "CD1_2", "CD2_1", "CD2_2", "RADESYS", "EQUINOX"]:
        h[key] = full["RADECSYS"] if key == "RADESYS" else full[key]
    for key in full:
        if key.split("_")[0] in ("A", "B", "AP", "BP") and "_" in key:
            h[key] = full[key]
    text_in = h.tostring(sep="\n")
    w_in = wcs_of(text_in)
    assert w_in.sip is not None
    # Check against the full WCS: the cut-out's pixel (x, y) is the full image's (x0+x, y0+y).
    probe = np.array([[0.0, 0.0], [99.0, 99.0], [50.0, 20.0]])
    a = w_in.all_pix2world(probe, 0)
    b = w.all_pix2world(probe + [x0, y0], 0)
    assert np.allclose(a, b, rtol=0, atol=1e-9), (a, b)
    ra, dec = w_in.all_pix2world([[49.5, 49.5]], 0)[0]
    text_out = tan(
        (round(float(ra), 5), round(float(dec), 5)),
        (54.5, 55.0),
        (-1.0 / 3600, 1.0 / 3600),
        rot_deg=3.0,
        extra=[("RADESYS", "ICRS"), ("EQUINOX", 2000.0)],
    )
    image = smooth_image(rng, (100, 100))
    add_case(
        "sip",
        "sip_to_tan",
        "TAN-SIP (100x100 cut-out of extra_siponly.hdr) -> TAN 1\" pixels, 110x110",
        image,
        "<f8",
        text_in,
        text_out,
        (110, 110),
        all_orders((1,)),
    )


EDGE_SHIFTS = [
    (0.3, 0.0),
    (0.5, 0.0),
    (0.7, 0.0),
    (-0.3, 0.0),
    (-0.5, 0.0),
    (-0.7, 0.0),
    (0.0, 0.5),
    (0.0, -0.5),
    (0.5, 0.5),
    (-0.5, -0.5),
    (0.0, 0.0),
]


def shift_name(v):
    return ("p" if v >= 0 else "m") + f"{abs(v):.1f}".replace(".", "")


def case_edges():
    """6. Edge and tie rules: 5x5 image 10*row+col, TAN WCS, output = input shifted."""
    image = np.add.outer(10.0 * np.arange(5), np.arange(5.0))
    crval, cdelt = (120.0, 40.0), (-0.001, 0.001)
    text_in = tan(crval, (3.0, 3.0), cdelt)
    for dx, dy in EDGE_SHIFTS:
        # Output pixel p shows input pixel p + s: CRPIX_out = CRPIX_in - s.
        text_out = tan(crval, (3.0 - dx, 3.0 - dy), cdelt)
        add_case(
            "edge_ties" if 0.5 in (abs(dx), abs(dy)) else "edges",
            f"edge_x{shift_name(dx)}_y{shift_name(dy)}",
            f"5x5 image 10*row+col, TAN, output shifted by ({dx}, {dy}) input pixels",
            image,
            "<f8",
            text_in,
            text_out,
            (5, 5),
            all_orders(),
        )


def case_nan():
    """7. One NaN pixel in the interior, on an edge and in a corner."""
    rng = np.random.default_rng(7)
    base = smooth_image(rng, (12, 10))
    crval, cdelt = (210.0, -30.0), (-0.002, 0.002)
    text_in = tan(crval, (5.5, 6.5), cdelt)
    for where, (r, c) in [("interior", (5, 4)), ("edge", (7, 9)), ("corner", (0, 0))]:
        image = base.copy()
        image[r, c] = np.nan
        for shift in [(0.3, 0.2), (-0.3, -0.2)]:
            text_out = tan(crval, (5.5 - shift[0], 6.5 - shift[1]), cdelt)
            sign = "p" if shift[0] > 0 else "m"
            add_case(
                "nan",
                f"nan_{where}_{sign}",
                f"12x10 image, NaN at ({r}, {c}), output shifted by {shift} px",
                image,
                "<f8",
                text_in,
                text_out,
                (12, 10),
                all_orders(),
            )


DTYPES = ["<f4", ">f4", "<f8", ">f8", "<i2", ">i2", "|u1"]


def case_dtypes():
    """8. The same small reprojection for every input dtype."""
    rng = np.random.default_rng(8)
    floats = smooth_image(rng, (18, 20))
    ints = {
        "i2": rng.integers(-30000, 30000, (18, 20)).astype(np.float64),
        "u1": rng.integers(0, 256, (18, 20)).astype(np.float64),
    }
    text_in = tan((45.0, 60.0), (10.2, 9.4), (-0.01, 0.01))
    text_out = tan((45.02, 60.01), (9.0, 8.5), (-0.011, 0.011), rot_deg=10.0)
    for dtype in DTYPES:
        kind = np.dtype(dtype)
        image = ints[kind.str[1:]] if kind.kind in "iu" else floats
        name = {"<": "le", ">": "be", "|": "na"}[dtype[0]] + dtype[1:]
        add_case(
            "dtypes",
            f"dtype_{name}",
            f"18x20 {dtype} input -> 16x16, TAN rotated 10 deg",
            image,
            dtype,
            text_in,
            text_out,
            (16, 16),
            all_orders(),
        )


def case_cube():
    """9. A (3, ny, nx) cube with a 2-D WCS (broadcasting); plane 1 holds one NaN."""
    rng = np.random.default_rng(9)
    image = smooth_image(rng, (3, 24, 28))
    image[1, 10, 12] = np.nan
    text_in = tan((300.0, 20.0), (14.5, 12.5), (-0.003, 0.003))
    text_out = tan((300.005, 20.002), (11.0, 10.0), (-0.0035, 0.0035), rot_deg=-20.0)
    add_case(
        "cube",
        "cube_3planes",
        "(3, 24, 28) cube with a 2-D TAN WCS -> (20, 22) per plane; NaN in plane 1",
        image,
        "<f8",
        text_in,
        text_out,
        (20, 22),
        all_orders(),
    )


def linear(crpix, crval, cdelt, ctype=("PIXX", "PIXY"), cunit=None, pc=None, extra=()):
    """A header of non-celestial axes (blank CTYPEs when `ctype` is None)."""
    n = len(crpix)
    cards = [("WCSAXES", n)]
    for i in range(n):
        if ctype is not None:
            cards.append((f"CTYPE{i + 1}", ctype[i]))
        if cunit is not None:
            cards.append((f"CUNIT{i + 1}", cunit[i]))
        cards += [
            (f"CRPIX{i + 1}", crpix[i]),
            (f"CRVAL{i + 1}", crval[i]),
            (f"CDELT{i + 1}", cdelt[i]),
        ]
    if pc is not None:
        for i in range(n):
            for j in range(n):
                cards.append((f"PC{i + 1}_{j + 1}", pc[i][j]))
    return header(cards + list(extra))


def case_linear():
    """10. Non-celestial planes: blank, pixel, LINEAR, spectral and logarithmic axes, unit
    conversions, a rotated plane, single-row and single-column images."""
    rng = np.random.default_rng(10)
    image = smooth_image(rng, (30, 34))
    cases = [
        (
            "linear_blank",
            "blank CTYPEs (WCS(naxis=2)), scaled 1.3x and shifted",
            linear((0.0, 0.0), (0.0, 0.0), (1.0, 1.0), ctype=None),
            linear((2.7, -1.4), (0.0, 0.0), (1.3, 1.3), ctype=None),
        ),
        (
            "linear_pixxy",
            "PIXX/PIXY, different scales per axis, CRVAL offsets",
            linear((15.5, 12.0), (100.0, -20.0), (0.5, 0.25)),
            linear((10.25, 9.75), (101.2, -19.1), (0.61, 0.33)),
        ),
        (
            "linear_units",
            "LINEAR axes in km and m -> m and cm (unit conversion)",
            linear((15.0, 15.0), (2.0, 300.0), (0.1, 5.0), ctype=("LINEAR", "LINEAR"),
                   cunit=("km", "m")),
            linear((12.0, 14.0), (2050.0, 30500.0), (120.0, 600.0),
                   ctype=("LINEAR", "LINEAR"), cunit=("m", "cm")),
        ),
        (
            "linear_rotated",
            "PIXX/PIXY plane rotated by 25 deg on output (coupled PC)",
            linear((15.5, 15.5), (0.0, 0.0), (1.0, 1.0)),
            linear((14.0, 13.0), (0.4, -0.3), (1.1, 1.1),
                   pc=[[np.cos(0.436), -np.sin(0.436)], [np.sin(0.436), np.cos(0.436)]]),
        ),
        (
            "linear_freq_units",
            "(PIXX, FREQ) with FREQ in GHz on input and MHz on output",
            linear((15.0, 10.0), (0.0, 1.42), (1.0, 0.002), ctype=("PIXX", "FREQ"),
                   cunit=("", "GHz")),
            linear((13.0, 12.0), (0.5, 1420.7), (0.9, 1.7), ctype=("PIXX", "FREQ"),
                   cunit=("", "MHz")),
        ),
        (
            "linear_log",
            "(WAVE-LOG, PIXY) logarithmic axis, different sampling",
            linear((10.0, 15.0), (5e-7, 0.0), (1e-9, 1.0), ctype=("WAVE-LOG", "PIXY")),
            linear((12.0, 13.0), (5.02e-7, 1.0), (1.3e-9, 0.8), ctype=("WAVE-LOG", "PIXY")),
        ),
    ]
    for name, description, text_in, text_out in cases:
        add_case("linear", name, f"30x34 -> 26x28: {description}", image, "<f8", text_in,
                 text_out, (26, 28), all_orders((1,)))
    # Spectral algorithm codes (WCSLIB's spc): axes linear in another spectral variable.
    rest = [("RESTFRQ", 1.420405751e9)]
    algorithm_cases = [
        ("linear_wave_f2w", "(PIXX, WAVE-F2W) -> (PIXX, WAVE)",
         linear((15.0, 10.0), (0.0, 0.211), (1.0, 1e-5), ctype=("PIXX", "WAVE-F2W")),
         linear((13.0, 12.0), (0.5, 0.21105), (0.9, 1.3e-5), ctype=("PIXX", "WAVE"))),
        ("linear_vopt_f2w", "(PIXX, VOPT-F2W) km/s with RESTFRQ, resampled",
         linear((15.0, 10.0), (0.0, 1200.0), (1.0, 5.0), ctype=("PIXX", "VOPT-F2W"),
                cunit=("", "km/s"), extra=rest),
         linear((13.0, 12.0), (0.5, 1210.0), (0.9, 6.1), ctype=("PIXX", "VOPT-F2W"),
                cunit=("", "km/s"), extra=rest)),
        ("linear_freq_v2f", "(PIXX, FREQ-V2F) -> (PIXX, FREQ-W2F) with RESTFRQ",
         linear((15.0, 10.0), (0.0, 1.4199e9), (1.0, 2e4), ctype=("PIXX", "FREQ-V2F"), extra=rest),
         linear((13.0, 12.0), (0.5, 1.41991e9), (0.9, 2.6e4), ctype=("PIXX", "FREQ-W2F"),
                extra=rest)),
        ("linear_awav_w2a", "(AWAV-W2A, PIXY) nm -> (AWAV, PIXY) Angstrom",
         linear((10.0, 15.0), (656.0, 0.0), (0.05, 1.0), ctype=("AWAV-W2A", "PIXY"),
                cunit=("nm", "")),
         linear((12.0, 13.0), (6562.0, 1.0), (0.6, 0.8), ctype=("AWAV", "PIXY"),
                cunit=("Angstrom", ""))),
    ]
    for name, description, text_in, text_out in algorithm_cases:
        add_case("linear", name, f"30x34 -> 26x28: {description}", image, "<f8", text_in,
                 text_out, (26, 28), all_orders())
    # Single-row and single-column images (and outputs).
    row = smooth_image(rng, (1, 40))
    add_case("linear", "linear_single_row", "1x40 -> 1x36, PIXX/PIXY shifted 0.3 px", row,
             "<f8", linear((20.0, 1.0), (0.0, 0.0), (1.0, 1.0)),
             linear((18.3, 1.0), (0.0, 0.0), (1.0, 1.0)), (1, 36), all_orders())
    column = smooth_image(rng, (40, 1))
    add_case("linear", "linear_single_column", "40x1 -> 36x1, PIXX/PIXY shifted 0.7 px",
             column, "<f8", linear((1.0, 20.0), (0.0, 0.0), (1.0, 1.0)),
             linear((1.0, 18.7), (0.0, 0.0), (1.0, 1.0)), (36, 1), all_orders())


def case_linear_edges():
    """11. Edge and tie rules on PIXX/PIXY planes (5x5 image 10*row+col, output = input
    shifted), NaN and inf placements."""
    image = np.add.outer(10.0 * np.arange(5), np.arange(5.0))
    text_in = linear((3.0, 3.0), (0.0, 0.0), (1.0, 1.0))
    for dx, dy in EDGE_SHIFTS:
        text_out = linear((3.0 - dx, 3.0 - dy), (0.0, 0.0), (1.0, 1.0))
        add_case(
            "linear_edge_ties" if 0.5 in (abs(dx), abs(dy)) else "linear_edges",
            f"linear_edge_x{shift_name(dx)}_y{shift_name(dy)}",
            f"5x5 image 10*row+col, PIXX/PIXY, output shifted by ({dx}, {dy}) input pixels",
            image, "<f8", text_in, text_out, (5, 5), all_orders(),
        )
    rng = np.random.default_rng(11)
    base = smooth_image(rng, (12, 10))
    text_in = linear((5.5, 6.5), (0.0, 0.0), (0.2, 0.2))
    for bad in ["nan", "inf"]:
        for where, (r, c) in [("interior", (5, 4)), ("edge", (7, 9)), ("corner", (0, 0))]:
            image = base.copy()
            image[r, c] = np.nan if bad == "nan" else np.inf
            for shift in [(0.3, 0.2), (-0.3, -0.2)]:
                text_out = linear((5.5 - shift[0], 6.5 - shift[1]), (0.0, 0.0), (0.2, 0.2))
                sign = "p" if shift[0] > 0 else "m"
                add_case(
                    "linear_nan",
                    f"linear_{bad}_{where}_{sign}",
                    f"12x10 image, {bad} at ({r}, {c}), PIXX/PIXY shifted by {shift} px",
                    image, "<f8", text_in, text_out, (12, 10), all_orders(),
                )


LINEAR_DTYPES = ["|u1", "|i1"] + [
    f"{order}{kind}" for kind in ["u2", "i2", "u4", "i4", "u8", "i8", "f4", "f8"] for order in "<>"
]


def case_linear_dtypes():
    """12. Every input dtype the engine reads, in both byte orders, on a PIXX/PIXY plane."""
    rng = np.random.default_rng(12)
    floats = smooth_image(rng, (18, 20))
    ints = {
        "u1": rng.integers(0, 256, (18, 20)),
        "i1": rng.integers(-128, 128, (18, 20)),
        "u2": rng.integers(0, 65536, (18, 20)),
        "i2": rng.integers(-30000, 30000, (18, 20)),
        "u4": rng.integers(0, 2**32, (18, 20)),
        "i4": rng.integers(-(2**31), 2**31, (18, 20)),
        "u8": rng.integers(0, 2**53, (18, 20)),
        "i8": rng.integers(-(2**53), 2**53, (18, 20)),
    }
    text_in = linear((10.2, 9.4), (0.0, 0.0), (1.0, 1.0))
    text_out = linear((9.0, 8.5), (0.3, -0.2), (1.1, 0.9))
    for dtype in LINEAR_DTYPES:
        kind = np.dtype(dtype)
        image = ints[kind.str[1:]].astype(np.float64) if kind.kind in "iu" else floats
        name = {"<": "le", ">": "be", "|": "na"}[dtype[0]] + dtype[1:]
        add_case("linear_dtypes", f"linear_dtype_{name}",
                 f"18x20 {dtype} input -> 16x16, PIXX/PIXY scaled", image, dtype, text_in,
                 text_out, (16, 16), all_orders())


def case_linear_cubes():
    """13. Cubes: a non-celestial plane with a spectral third axis, and a celestial cube whose
    spectral axis changes unit (GHz -> MHz)."""
    rng = np.random.default_rng(13)
    image = smooth_image(rng, (6, 16, 18))
    text_in = linear((8.0, 8.0, 1.0), (0.0, 0.0, 5e-7), (1.0, 1.0, 1e-9),
                     ctype=("PIXX", "PIXY", "WAVE"))
    text_out = linear((7.0, 7.5, 1.0), (0.2, -0.1, 5.0012e3), (1.1, 1.1, 0.8),
                      ctype=("PIXX", "PIXY", "WAVE"), cunit=("", "", "Angstrom"))
    add_case("linear_cube", "linear_cube_wave", "(6,16,18) PIXX/PIXY/WAVE m -> Angstrom",
             image, "<f8", text_in, text_out, (5, 14, 15), all_orders())
    sky_in = tan((150.0, 2.0), (8.5, 8.0), (-0.001, 0.001),
                 extra=[("CTYPE3", "FREQ"), ("CUNIT3", "GHz"), ("CRPIX3", 1.0),
                        ("CRVAL3", 1.4), ("CDELT3", 0.001)])
    sky_out = tan((150.0002, 2.0001), (7.5, 7.0), (-0.0011, 0.0011),
                  extra=[("CTYPE3", "FREQ"), ("CUNIT3", "MHz"), ("CRPIX3", 1.0),
                         ("CRVAL3", 1400.6), ("CDELT3", 0.7)])
    add_case("linear_cube", "sky_cube_freq_units", "(6,16,18) RA/DEC/FREQ GHz -> MHz",
             image, "<f8", sky_in.replace("WCSAXES = 2", "WCSAXES = 3"), sky_out, (5, 14, 15),
             all_orders())
    # Four axes: RA/DEC/FREQ/STOKES, the spectral axis resampled and the Stokes axis shifted
    # by one plane (output Stokes 2..3 of input 1..3).
    hypercube = np.stack([image * (1.0 + 0.2 * s) for s in range(3)])
    stokes = lambda crpix: [("CTYPE4", "STOKES"), ("CRPIX4", crpix), ("CRVAL4", 1.0),
                            ("CDELT4", 1.0)]
    add_case("linear_cube", "sky_4d_freq_stokes",
             "(3,6,16,18) RA/DEC/FREQ/STOKES: FREQ GHz -> MHz resampled, Stokes 2..3",
             hypercube, "<f8",
             header(list(fits.Header.fromstring(sky_in, sep="\n").items()) + stokes(1.0))
             .replace("WCSAXES = 2", "WCSAXES = 4"),
             header(list(fits.Header.fromstring(sky_out, sep="\n").items()) + stokes(0.0)),
             (2, 5, 14, 15), all_orders())


def write_npz(path, arrays):
    """Like ``np.savez_compressed``, with fixed zip timestamps so that the bytes are
    reproducible."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())


def main():
    os.makedirs(OUT, exist_ok=True)
    case_tan_rotated()
    case_car_galactic_to_tan()
    case_sin_to_tan()
    case_ait_to_car()
    case_sip()
    case_edges()
    case_nan()
    case_dtypes()
    case_cube()
    case_linear()
    case_linear_edges()
    case_linear_dtypes()
    case_linear_cubes()
    meta = {
        "versions": {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "astropy": astropy.__version__,
            "reproject": reproject.__version__,
        },
        "cases": CASES,
    }
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    write_npz(os.path.join(OUT, "arrays.npz"), ARRAYS)
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"{len(CASES)} cases, {len(ARRAYS)} arrays, {total} bytes in {OUT}")


if __name__ == "__main__":
    main()

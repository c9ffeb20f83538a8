#!/usr/bin/env python
"""Golden fixtures for the optimal mosaic WCS, from reproject 0.21's
``find_optimal_celestial_wcs``.

Run from the repository root with the reference venv (numpy, astropy, reproject 0.21 and
shapely, which ``auto_rotate=True`` needs):

    /work/oracle/bin/python scripts/make_optimal_wcs_fixtures.py

Writes ``tests/fixtures/optimal_wcs/cases.json``: the library versions, the input lists
(header text as ``Header.tostring(sep='\\n')`` with trailing blanks removed, and the numpy
shape; each list stored once, under the name of the first case using it) and, for every case,
its description, the name of its input list, the options (``frame``: null, an astropy frame
name or ``{"name", "equinox"}``; ``projection``; ``resolution`` in degrees or null;
``reference``: null or ``{"lon", "lat", "frame"}``; ``auto_rotate``; ``negative_lon_cdelt``:
true, false, "auto" or null for reproject's default) and either

* ``expected``: reproject's output shape and the exact values of its WCS (``crpix``,
  ``cdelt``, ``crval``, ``pc``, ``lonpole``, ``latpole``, ``ctype``, ``cunit``, ``radesys``,
  ``equinox`` (null when unset), ``dateobs``) with the keywords ``WCS.to_header()`` writes, or
* ``error``: the Python exception (type and message) and the ``reproject::Error`` variant the
  Rust function returns for it.

Both sides read the same header text: reproject gets ``WCS(Header.fromstring(text))``.
Deterministic: no random numbers, no dependence on time or environment.
"""

import json
import os
import warnings

import astropy
import astropy.units as u
import numpy as np
import reproject
import shapely
from astropy.coordinates import FK4, FK5, FK4NoETerms, SkyCoord
from astropy.io import fits
from astropy.time import Time
from astropy.wcs import WCS
from reproject.mosaicking import find_optimal_celestial_wcs

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "optimal_wcs")


def text_of(h):
    """Header text, one card per line, trailing blanks removed."""
    return "\n".join(line.rstrip() for line in h.tostring(sep="\n").split("\n"))


def header(cards):
    """Header text from (key, value) pairs, as both sides read it."""
    h = fits.Header()
    for key, value in cards:
        h[key] = value
    return text_of(h)


def wcs_of(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WCS(fits.Header.fromstring(text, sep="\n"))


def celestial(ctype=("RA---TAN", "DEC--TAN"), crval=(150.0, 30.0), crpix=(20.5, 15.5),
              cdelt=(-0.002, 0.002), rotation=0.0, extra=()):
    """A 2-axis celestial header with a PC rotation (degrees) when `rotation` is not 0."""
    cards = [
        ("CTYPE1", ctype[0]),
        ("CTYPE2", ctype[1]),
        ("CRVAL1", crval[0]),
        ("CRVAL2", crval[1]),
        ("CRPIX1", crpix[0]),
        ("CRPIX2", crpix[1]),
        ("CDELT1", cdelt[0]),
        ("CDELT2", cdelt[1]),
    ]
    if rotation:
        c, s = np.cos(np.radians(rotation)), np.sin(np.radians(rotation))
        cards += [("PC1_1", c), ("PC1_2", -s), ("PC2_1", s), ("PC2_2", c)]
    return header(cards + list(extra))


def cube():
    """A 3-axis header (RA, Dec, frequency)."""
    return celestial(extra=[("CTYPE3", "FREQ"), ("CRVAL3", 1.4e9), ("CRPIX3", 1.0),
                            ("CDELT3", 1e6), ("CUNIT3", "Hz")])


def tan_mosaic():
    """Four overlapping TAN exposures with small rotations and offsets."""
    return [
        (celestial(crpix=(24.5 - dx, 20.5 - dy), rotation=rot), (40, 48))
        for dx, dy, rot in [(0, 0, 0.0), (18, 5, 3.0), (6, 22, -4.0), (25, 20, 8.0)]
    ]


def tile_grid():
    """Twelve TAN tiles on a 4 x 3 grid with small rotations (more than 8 references, so
    numpy's pairwise summation differs from a sequential one)."""
    out = []
    for j in range(3):
        for i in range(4):
            rot = ((i * 5 + j * 3) % 7 - 3) * 0.7
            out.append((celestial(crval=(83.6 + 0.05 * i, -5.4 + 0.04 * j), crpix=(30.5, 25.5),
                                  cdelt=(-0.0011, 0.0011), rotation=rot), (50, 60)))
    return out


def galactic_tiles():
    return [
        (celestial(("GLON-CAR", "GLAT-CAR"), (l0, b0), (20.5, 15.5), (-0.1, 0.1)), (30, 40))
        for l0, b0 in [(120.0, 10.0), (123.0, 11.0), (121.0, 13.0)]
    ]


def allsky():
    return [(celestial(("GLON-CAR", "GLAT-CAR"), (0.0, 0.0), (170.5, 80.5), (-1.0, 1.0)),
             (160, 340))]


def sip():
    c, s = np.cos(np.radians(25.0)), np.sin(np.radians(25.0))
    scale = 2.8e-4
    cards = [
        ("CTYPE1", "RA---TAN-SIP"), ("CTYPE2", "DEC--TAN-SIP"),
        ("CRVAL1", 210.8), ("CRVAL2", 54.35),
        ("CRPIX1", 90.5), ("CRPIX2", 70.0),
        ("CD1_1", -scale * c), ("CD1_2", scale * s), ("CD2_1", scale * s), ("CD2_2", scale * c),
        ("A_ORDER", 3), ("A_2_0", 1.2e-4), ("A_1_1", -6e-5), ("A_0_2", 4e-5), ("A_3_0", 2e-7),
        ("A_1_2", -1e-7),
        ("B_ORDER", 3), ("B_2_0", -3e-5), ("B_1_1", 9e-5), ("B_0_2", -1.1e-4), ("B_0_3", 1.5e-7),
        ("B_2_1", 1e-7),
    ]
    return header(cards)


def tpv():
    cards = [
        ("CTYPE1", "RA---TPV"), ("CTYPE2", "DEC--TPV"),
        ("CRVAL1", 52.1), ("CRVAL2", -27.8),
        ("CRPIX1", 64.5), ("CRPIX2", 40.5),
        ("CD1_1", -7.3e-5), ("CD1_2", 0.0), ("CD2_1", 0.0), ("CD2_2", 7.3e-5),
        ("PV1_0", 0.0), ("PV1_1", 1.0), ("PV1_2", 0.0), ("PV1_4", 0.02), ("PV1_5", -0.015),
        ("PV1_7", 0.3),
        ("PV2_0", 0.0), ("PV2_1", 1.0), ("PV2_2", 0.0), ("PV2_4", -0.01), ("PV2_6", 0.025),
        ("PV2_7", -0.2),
    ]
    return header(cards)


def options(frame=None, projection="TAN", resolution=None, reference=None, auto_rotate=False,
            negative_lon_cdelt=None):
    return {"frame": frame, "projection": projection, "resolution": resolution,
            "reference": reference, "auto_rotate": auto_rotate,
            "negative_lon_cdelt": negative_lon_cdelt}


def galactic_of(ra, dec):
    g = SkyCoord(ra * u.deg, dec * u.deg, frame="icrs").galactic
    return {"lon": round(float(g.l.deg), 4), "lat": round(float(g.b.deg), 4), "frame": "galactic"}


def cases():
    """(name, description, inputs [(header text, numpy shape)], options, Rust error or None)."""
    one = [(celestial(), (30, 40))]
    return [
        ("tan_single", "one TAN input", one, options(), None),
        ("tan_cd_offcentre", "CD matrix, non-square rotated pixels, CRPIX off the centre",
         [(header([("CTYPE1", "RA---TAN"), ("CTYPE2", "DEC--TAN"), ("CRVAL1", 10.7),
                   ("CRVAL2", 41.2), ("CRPIX1", 5.3), ("CRPIX2", 40.2),
                   ("CD1_1", -0.002 * np.cos(0.35)), ("CD1_2", 0.003 * np.sin(0.35)),
                   ("CD2_1", 0.002 * np.sin(0.35)), ("CD2_2", 0.003 * np.cos(0.35))]),
           (35, 48))], options(), None),
        ("tan_mosaic", "four overlapping TAN inputs with small rotations", tan_mosaic(),
         options(), None),
        ("tan_mosaic_rotate", "the mosaic, auto_rotate", tan_mosaic(),
         options(auto_rotate=True), None),
        ("tan_mosaic_fk5_j2010", "the mosaic into FK5 J2010, auto_rotate", tan_mosaic(),
         options(frame={"name": "fk5", "equinox": 2010.0}, auto_rotate=True), None),
        ("tan_mosaic_resolution", "the mosaic at a given resolution", tan_mosaic(),
         options(resolution=0.0015), None),
        ("tan_mosaic_reference", "the mosaic with a given ICRS reference", tan_mosaic(),
         options(reference={"lon": 150.1, "lat": 30.05, "frame": "icrs"}), None),
        ("tan_mosaic_reference_galactic", "the mosaic with a reference given in galactic",
         tan_mosaic(), options(reference=galactic_of(150.05, 30.02)), None),
        ("tan_mosaic_sin", "the mosaic in SIN", tan_mosaic(), options(projection="SIN"), None),
        ("tile_grid", "twelve tiles (pairwise sums of the references)", tile_grid(), options(),
         None),
        ("tile_grid_rotate", "twelve tiles, auto_rotate, galactic", tile_grid(),
         options(frame="galactic", auto_rotate=True), None),
        ("galactic_to_icrs", "galactic CAR inputs, frame='icrs'", galactic_tiles(),
         options(frame="icrs"), None),
        ("galactic_to_icrs_rotate", "galactic CAR inputs, frame='icrs', auto_rotate",
         galactic_tiles(), options(frame="icrs", auto_rotate=True), None),
        ("galactic_to_fk4_zea", "galactic CAR inputs into FK4 ZEA", galactic_tiles(),
         options(frame="fk4", projection="ZEA"), None),
        ("galactic_to_fk4noeterms", "galactic CAR inputs into FK4 without E-terms",
         galactic_tiles(), options(frame="fk4noeterms", auto_rotate=True), None),
        ("allsky_car", "an all-sky-ish galactic CAR input, projection CAR", allsky(),
         options(projection="CAR"), None),
        ("allsky_ait", "an all-sky-ish galactic CAR input, projection AIT", allsky(),
         options(projection="AIT"), None),
        ("allsky_icrs_ait", "an all-sky-ish galactic CAR input into ICRS AIT", allsky(),
         options(frame="icrs", projection="AIT"), None),
        ("negative_false", "galactic, negative_lon_cdelt=False", galactic_tiles(),
         options(negative_lon_cdelt=False), None),
        ("negative_auto_galactic", "galactic, negative_lon_cdelt='auto' (negative)",
         galactic_tiles(), options(negative_lon_cdelt="auto"), None),
        ("itrs_auto", "TLON/TLAT (ITRS) input, negative_lon_cdelt='auto' (positive)",
         [(celestial(("TLON-TAN", "TLAT-TAN"), (12.3, 45.6),
                     extra=[("DATE-OBS", "2021-03-04T05:06:07.5")]), (30, 40))],
         options(negative_lon_cdelt="auto"), None),
        ("itrs_default", "TLON/TLAT (ITRS) input without a date, the default sign",
         [(celestial(("TLON-TAN", "TLAT-TAN"), (12.3, 45.6)), (30, 40))], options(), None),
        ("sip", "a SIP input (corners through the distortion)", [(sip(), (140, 180))],
         options(), None),
        ("sip_rotate", "a SIP input and a TAN one, auto_rotate",
         [(sip(), (140, 180)), (celestial(crval=(210.9, 54.4), crpix=(30.5, 30.5),
                                          cdelt=(-0.0003, 0.0003), rotation=-12.0), (60, 60))],
         options(auto_rotate=True), None),
        ("tpv", "a TPV input", [(tpv(), (80, 128))], options(), None),
        ("fk4_input", "an FK4 B1950 input (EQUINOX = 1950)",
         [(celestial(crval=(83.0, -5.5), extra=[("EQUINOX", 1950.0)]), (30, 40))],
         options(auto_rotate=True), None),
        ("fk4_input_to_icrs", "an FK4 B1950 input into ICRS",
         [(celestial(crval=(83.0, -5.5), extra=[("EQUINOX", 1950.0)]), (30, 40))],
         options(frame="icrs"), None),
        ("fk5_radesys", "an FK5 J1990 input (RADESYS and EQUINOX)",
         [(celestial(extra=[("RADESYS", "FK5"), ("EQUINOX", 1990.0)]), (30, 40))],
         options(), None),
        ("ecliptic_input", "ecliptic axes, taken as ICRS as astropy does",
         [(celestial(("ELON-TAN", "ELAT-TAN")), (30, 40))], options(), None),
        ("latitude_first", "DEC--TAN as the first axis",
         [(celestial(("DEC--TAN", "RA---TAN"), (30.0, 150.0), (15.5, 20.5)), (40, 30)),
          (celestial(crval=(150.03, 30.01)), (30, 40))], options(), None),
        ("cube_shape", "a 3-D shape with a 2-axis WCS (reproject keeps the last two)",
         [(celestial(), (3, 30, 40))], options(), None),
        ("ra_wrap", "inputs on both sides of RA = 0",
         [(celestial(crval=(359.97, 10.0)), (30, 40)),
          (celestial(crval=(0.02, 10.01), rotation=5.0), (30, 40))], options(), None),
        ("near_pole", "rotated inputs near the north pole",
         [(celestial(crval=(30.0, 89.95), rotation=20.0), (30, 40)),
          (celestial(crval=(200.0, 89.96), rotation=-10.0), (30, 40))],
         options(auto_rotate=True), None),
        ("rotated_30", "one input rotated by 30 degrees, auto_rotate",
         [(celestial(rotation=30.0), (30, 40))], options(auto_rotate=True), None),
        ("rotated_60", "one input rotated by 60 degrees, auto_rotate (-30 modulo 90)",
         [(celestial(rotation=60.0), (30, 40))], options(auto_rotate=True), None),
        ("arcsec_units", "CDELT in arcsec (CUNIT)",
         [(celestial(cdelt=(-7.2, 7.2), extra=[("CUNIT1", "arcsec"), ("CUNIT2", "arcsec")]),
           (30, 40))], options(), None),
        ("crota", "CROTA2 rotation, different pixel sizes",
         [(celestial(cdelt=(-0.002, 0.0025), extra=[("CROTA2", 17.0)]), (30, 40)),
          (celestial(crval=(150.02, 30.0)), (30, 40))], options(), None),
        # Errors.
        ("err_shape_1d", "a 1-D shape", [(celestial(), (40,))], options(), "ShapeMismatch"),
        ("err_shape_3d", "a cube shape with a 3-axis WCS", [(cube(), (3, 30, 40))], options(),
         "ShapeMismatch"),
        ("err_wcs_3d", "a 2-D shape with a 3-axis WCS", [(cube(), (30, 40))], options(),
         "ShapeMismatch"),
        ("err_not_celestial", "a linear 2-axis WCS",
         [(header([("CTYPE1", "X"), ("CTYPE2", "Y")]), (30, 40))], options(), "NoCelestialAxes"),
        ("err_second_not_celestial", "a celestial input, then a linear one",
         [(celestial(), (30, 40)), (header([("CTYPE1", "X"), ("CTYPE2", "Y")]), (30, 40))],
         options(), "NoCelestialAxes"),
        ("err_empty", "no inputs", [], options(frame="icrs"), "InvalidArgument"),
        ("err_gappt", "an apparent-place (GAPPT) input",
         [(celestial(extra=[("RADESYS", "GAPPT")]), (30, 40))], options(), "Unsupported"),
        ("err_supergalactic_input", "a supergalactic input, no frame given",
         [(celestial(("SLON-TAN", "SLAT-TAN")), (30, 40))], options(), "Unsupported"),
        ("err_helioprojective", "a helioprojective input (no sunpy)",
         [(celestial(("HPLN-TAN", "HPLT-TAN")), (30, 40))], options(), "Unsupported"),
        ("err_frame_supergalactic", "frame='supergalactic'", one,
         options(frame="supergalactic"), "Unsupported"),
        ("err_projection_unknown", "projection='XYZ'", one, options(projection="XYZ"),
         "UnknownProjection"),
        ("err_projection_parameters", "projection='COD' (needs PV2_1)", one,
         options(projection="COD"), "InvalidProjectionParameters"),
        ("err_far_side", "an all-sky input into TAN (corners on the far side)", allsky(),
         options(), "InvalidArgument"),
    ]


def frame_of(spec):
    if spec is None or isinstance(spec, str):
        return spec
    name, equinox = spec["name"], spec["equinox"]
    if name == "fk5":
        return FK5(equinox=Time(equinox, format="jyear"))
    if name == "fk4":
        return FK4(equinox=Time(equinox, format="byear"))
    if name == "fk4noeterms":
        return FK4NoETerms(equinox=Time(equinox, format="byear"))
    raise ValueError(spec)


def run(inputs, opts):
    kwargs = dict(opts)
    kwargs["frame"] = frame_of(opts["frame"])
    if opts["resolution"] is not None:
        kwargs["resolution"] = opts["resolution"] * u.deg
    if opts["reference"] is not None:
        r = opts["reference"]
        kwargs["reference"] = SkyCoord(r["lon"] * u.deg, r["lat"] * u.deg,
                                       frame=frame_of(r["frame"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return find_optimal_celestial_wcs([(shape, wcs_of(h)) for h, shape in inputs],
                                          **kwargs)


def expected(wcs, shape):
    w = wcs.wcs
    return {
        "shape": [int(n) for n in shape],
        "crpix": [float(v) for v in w.crpix],
        "cdelt": [float(v) for v in w.cdelt],
        "crval": [float(v) for v in w.crval],
        "pc": [[float(v) for v in row] for row in w.get_pc()],
        "lonpole": float(w.lonpole),
        "latpole": float(w.latpole),
        "ctype": list(w.ctype),
        "cunit": [str(c) for c in w.cunit],
        "radesys": w.radesys,
        "equinox": None if np.isnan(w.equinox) else float(w.equinox),
        "dateobs": w.dateobs,
        "keywords": list(wcs.to_header().keys()),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {
        "versions": {"numpy": np.__version__, "astropy": astropy.__version__,
                     "reproject": reproject.__version__, "shapely": shapely.__version__},
        "inputs": {},
        "cases": [],
    }
    for name, description, inputs, opts, rust_error in cases():
        # Input lists are stored once, under the name of the first case that uses them.
        listed = [{"header": h, "shape": list(shape)} for h, shape in inputs]
        key = next((k for k, v in meta["inputs"].items() if v == listed), name)
        meta["inputs"][key] = listed
        case = {
            "name": name,
            "description": description,
            "inputs": key,
            "options": opts,
        }
        try:
            wcs, shape = run(inputs, opts)
        except Exception as e:  # noqa: BLE001 - the fixture records what reproject raises
            if rust_error is None:
                raise RuntimeError(f"{name}: reproject raised {e!r}") from e
            case["error"] = {"python": type(e).__name__, "message": str(e).strip(),
                             "rust": rust_error}
        else:
            if rust_error is not None:
                raise RuntimeError(f"{name}: reproject did not raise")
            case["expected"] = expected(wcs, shape)
        meta["cases"].append(case)
    path = os.path.join(OUT, "cases.json")
    with open(path, "w") as f:
        # One case a line: small, and diffs show which cases changed.
        f.write('{"versions": ' + json.dumps(meta["versions"]) + ',\n "inputs": {\n')
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in meta["inputs"].items()))
        f.write('},\n "cases": [\n')
        f.write(",\n".join(json.dumps(case) for case in meta["cases"]))
        f.write("\n]}\n")
    print(f"wrote {len(meta['cases'])} cases to {path}")


if __name__ == "__main__":
    main()

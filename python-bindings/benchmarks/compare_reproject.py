"""Speed of ``reproject_rs.reproject_interp`` against ``reproject.reproject_interp`` on the
jobs of the CPU-engine benchmarks, from Python (numpy in, numpy out), printing the ratios.

    python python-bindings/benchmarks/compare_reproject.py [--size-a 4096] [--size-b 2048]

Job A: float32 bilinear TAN -> TAN, 1" pixels, output rotated 30 deg, CRPIX offset (3.7, -2.2),
CRVAL shift (2e-3, -1e-3) deg, output shape = input shape. Job B: galactic CAR (0.001 deg) ->
ICRS TAN (0.001 deg) at the Galactic centre. Job C: job A, bicubic. Default options (round-trip
check on), serial and parallel, float64 output + footprint.
Job D: non-celestial PIXX/PIXY planes, output pixels 1.09x larger (the separable path).
Job E: PIXX/PIXY, output rotated 30 deg (the per-pixel linear path). Job F: job A's input
through a plane of a cube's WCS (SlicedLowLevelWCS, the spectral axis dropped), which is the
FITS WCS of its sky axes: the engine computes everything. Job G: the same with the spectral
axis coupled to RA (PC1_3), an APE-14 WCS that is no FITS WCS: astropy computes the
positions, the engine interpolates. F and G at --size-b. Job H: an HST-like 4096 x 2048
float32 image with SIP, CPDIS and D2IM lookup tables (astropy's dist_lookup test WCS) onto a
--size-b TAN grid of 0.05" pixels: the engine computes the positions with the tables.
"""
import argparse
import time

import numpy as np
from astropy.io import fits

import reproject_rs

try:
    import reproject
except ImportError:  # pragma: no cover
    reproject = None


def tan_header(n, crpix, crval, rot_deg):
    h = fits.Header()
    h["NAXIS"], h["NAXIS1"], h["NAXIS2"] = 2, n, n
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    h["CRPIX1"], h["CRPIX2"] = crpix
    h["CRVAL1"], h["CRVAL2"] = crval
    h["CDELT1"], h["CDELT2"] = -1 / 3600, 1 / 3600
    c, s = np.cos(np.radians(rot_deg)), np.sin(np.radians(rot_deg))
    h["PC1_1"], h["PC1_2"], h["PC2_1"], h["PC2_2"] = c, -s, s, c
    h["RADESYS"] = "ICRS"
    return h


def job_a(n):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(n, n)).astype(np.float32)
    h_in = tan_header(n, (n / 2, n / 2), (150.0, 30.0), 0.0)
    h_out = tan_header(n, (n / 2 + 3.7, n / 2 - 2.2), (150.002, 29.999), 30.0)
    return (data, h_in), h_out


def job_b(n):
    rng = np.random.default_rng(2)
    data = rng.normal(size=(n, n)).astype(np.float32)
    h_in = fits.Header()
    h_in["NAXIS"], h_in["NAXIS1"], h_in["NAXIS2"] = 2, n, n
    h_in["CTYPE1"], h_in["CTYPE2"] = "GLON-CAR", "GLAT-CAR"
    h_in["CRPIX1"], h_in["CRPIX2"] = n / 2 + 0.5, n / 2 + 0.5
    h_in["CRVAL1"], h_in["CRVAL2"] = 0.0, 0.0
    h_in["CDELT1"], h_in["CDELT2"] = -0.001, 0.001
    h_out = tan_header(n, (n / 2 + 0.5, n / 2 + 0.5), (266.40499, -28.93617), 0.0)
    h_out["CDELT1"], h_out["CDELT2"] = -0.001, 0.001
    return (data, h_in), h_out


def pixel_header(n, scale, rot_deg):
    h = fits.Header()
    h["NAXIS"], h["NAXIS1"], h["NAXIS2"] = 2, n, n
    h["CTYPE1"], h["CTYPE2"] = "PIXX", "PIXY"
    h["CRPIX1"] = h["CRPIX2"] = (n + 1) / 2
    h["CRVAL1"] = h["CRVAL2"] = 0.0
    h["CDELT1"] = h["CDELT2"] = scale
    c, s = np.cos(np.radians(rot_deg)), np.sin(np.radians(rot_deg))
    h["PC1_1"], h["PC1_2"], h["PC2_1"], h["PC2_2"] = c, -s, s, c
    return h


def job_pixels(n, scale, rot_deg):
    rng = np.random.default_rng(3)
    data = rng.normal(size=(n, n)).astype(np.float32)
    return (data, pixel_header(n, 1.0, 0.0)), pixel_header(n, scale, rot_deg)


def job_cube_plane(n, coupling=0.0):
    """Job A's geometry with the input WCS as a 2-D plane of a 3-D WCS (an integer slice
    dropping the spectral axis, as NDData slicing makes). With ``coupling`` (PC1_3) RA depends
    on the spectral pixel, so the plane has no FITS WCS of its own."""
    from astropy.wcs import WCS
    from astropy.wcs.wcsapi import SlicedLowLevelWCS

    (data, h_in), h_out = job_a(n)
    cube = WCS(naxis=3)
    w2 = WCS(h_in)
    cube.wcs.ctype = [*w2.wcs.ctype, "FREQ"]
    cube.wcs.crpix = [*w2.wcs.crpix, 1.0]
    cube.wcs.crval = [*w2.wcs.crval, 1.4e9]
    cube.wcs.cdelt = [*w2.wcs.cdelt, 1e6]
    cube.wcs.radesys = "ICRS"
    if coupling:
        cube.wcs.pc = [[1.0, 0.0, coupling], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    return (data, SlicedLowLevelWCS(cube, (0, slice(None), slice(None)))), h_out


def job_lookup_tables(n):
    """An HST-like input: astropy's own test WCS with SIP (order 4), CPDIS tables (65 x 33)
    and a D2IM table, on a 4096 x 2048 float32 image (a file's HDU list, as ``WCS(header,
    hdulist)`` reads the tables), onto an n x n TAN grid of 0.05" pixels at its centre."""
    import os

    import astropy.wcs
    from astropy.wcs import WCS

    path = os.path.join(os.path.dirname(astropy.wcs.__file__), "tests", "data",
                        "dist_lookup.fits.gz")
    with fits.open(path) as hdul:
        w_in = WCS(hdul[1].header, hdul)
    data = np.random.default_rng(3).random((2048, 4096), dtype=np.float32)
    out = WCS(naxis=2)
    out.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    out.wcs.crval = w_in.wcs.crval
    out.wcs.radesys, out.wcs.equinox = w_in.wcs.radesys, w_in.wcs.equinox
    out.wcs.crpix = [n / 2, n / 2]
    out.wcs.cdelt = [-0.05 / 3600, 0.05 / 3600]
    h_out = out.to_header()
    h_out["NAXIS"], h_out["NAXIS1"], h_out["NAXIS2"] = 2, n, n
    return (data, w_in), h_out


def timed(fn, repeat):
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best.append(time.perf_counter() - t)
    return float(np.median(best))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-a", type=int, default=4096)
    p.add_argument("--size-b", type=int, default=2048)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--reproject-repeat", type=int, default=1)
    p.add_argument("--jobs", default="ABCDEFGH", help="the jobs to run, e.g. H")
    args = p.parse_args()
    jobs = [
        ("A", job_a(args.size_a), "bilinear"),
        ("B", job_b(args.size_b), "bilinear"),
        ("C", job_a(args.size_a), "bicubic"),
        ("D", job_pixels(args.size_a, 1.09, 0.0), "bilinear"),
        ("E", job_pixels(args.size_a, 1.0, 30.0), "bilinear"),
        ("F", job_cube_plane(args.size_b), "bilinear"),
        ("G", job_cube_plane(args.size_b, coupling=1e-3), "bilinear"),
        ("H", job_lookup_tables(args.size_b), "bilinear"),
    ]
    print(f"{'job':<4} {'reproject_rs serial':>20} {'reproject_rs parallel':>22} {'reproject':>10} {'ratio':>8}")
    for name, (inp, out), order in jobs:
        if name not in args.jobs:
            continue
        ours_serial = timed(lambda: reproject_rs.reproject_interp(inp, out, order=order), args.repeat)
        ours_par = timed(lambda: reproject_rs.reproject_interp(inp, out, order=order, parallel=True), args.repeat)
        if reproject is None:
            print(f"{name:<4} {ours_serial:>19.3f}s {ours_par:>21.3f}s {'n/a':>10}")
            continue
        theirs = timed(lambda: reproject.reproject_interp(inp, out, order=order), args.reproject_repeat)
        a, _ = reproject_rs.reproject_interp(inp, out, order=order)
        b, _ = reproject.reproject_interp(inp, out, order=order)
        assert np.array_equal(np.isnan(a), np.isnan(b)), "NaN masks differ"
        print(
            f"{name:<4} {ours_serial:>19.3f}s {ours_par:>21.3f}s {theirs:>9.2f}s "
            f"{theirs / ours_par:>7.1f}x"
        )


if __name__ == "__main__":
    main()

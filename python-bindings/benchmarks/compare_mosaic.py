#!/usr/bin/env python
"""Mosaic benchmark (issue 18): 16 overlapping 2048x2048 float32 exposures (random small
rotations and offsets, different backgrounds) into one mosaic, mean combine with background
matching, on this machine's cores, side by side in one run:

* astropy reproject 0.21's ``reproject_and_coadd`` (reproject_interp, match_background=True);
* reproject-rs: the CLI ``reproject-rs mosaic --match-background offset`` (release binary),
  and the Python drop-in ``reproject_rs.mosaicking.reproject_and_coadd`` when it is installed;
* SWarp (``COMBINE_TYPE AVERAGE``, ``RESAMPLING_TYPE BILINEAR``, its own background
  subtraction), when ``SWarp`` or ``swarp`` is on the PATH (Debian: ``apt install swarp``).

Prints each tool's wall time (best of REPEAT runs, REPEAT=1 for reproject by default) and the
ratios, and checks that reproject-rs's mosaic equals reproject's (1e-6 relative, identical
footprints). Run with a Python that has numpy, astropy and reproject 0.21:

    cargo build --release --bin reproject-rs
    python python-bindings/benchmarks/compare_mosaic.py            # N=16 SIZE=2048
    N=4 SIZE=512 python python-bindings/benchmarks/compare_mosaic.py   # a quick run
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
N = int(os.environ.get("N", 16))
SIZE = int(os.environ.get("SIZE", 2048))
REPEAT = int(os.environ.get("REPEAT", 3))
THREADS = int(os.environ.get("THREADS", os.cpu_count() or 1))


def exposures(directory):
    """N overlapping exposures as FITS files: the same smooth sky, each with its own offset,
    rotation and background level."""
    rng = np.random.default_rng(2026)
    scale = 1.0 / 3600
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    paths = []
    for k in range(N):
        dx, dy = rng.uniform(-0.25, 0.25, 2) * SIZE
        rot = np.radians(rng.uniform(-5, 5))
        h = fits.Header()
        h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
        h["CRVAL1"], h["CRVAL2"] = 150.0, 30.0
        h["CRPIX1"], h["CRPIX2"] = SIZE / 2 + dx, SIZE / 2 + dy
        h["CDELT1"], h["CDELT2"] = -scale, scale
        h["PC1_1"], h["PC1_2"] = np.cos(rot), -np.sin(rot)
        h["PC2_1"], h["PC2_2"] = np.sin(rot), np.cos(rot)
        # Sky coordinates of each pixel (in arcsec from the reference), for a sky that is the
        # same in every exposure.
        u = (x + 1 - h["CRPIX1"]) * np.cos(rot) - (y + 1 - h["CRPIX2"]) * np.sin(rot)
        v = (x + 1 - h["CRPIX1"]) * np.sin(rot) + (y + 1 - h["CRPIX2"]) * np.cos(rot)
        sky = 100 + 20 * np.sin(u / 150.0) * np.cos(v / 110.0) + rng.normal(0, 1, x.shape)
        data = (sky + rng.uniform(-10, 10)).astype(np.float32)
        path = os.path.join(directory, f"exposure{k:02d}.fits")
        fits.PrimaryHDU(data, h).writeto(path, overwrite=True)
        paths.append(path)
    return paths


def target(paths, directory):
    """The mosaic grid: reproject's find_optimal_celestial_wcs of the exposures."""
    from reproject.mosaicking import find_optimal_celestial_wcs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wcs, shape = find_optimal_celestial_wcs(paths)
    header = wcs.to_header()
    header["NAXIS"], header["NAXIS1"], header["NAXIS2"] = 2, shape[1], shape[0]
    path = os.path.join(directory, "target.hdr")
    header.totextfile(path, overwrite=True)
    return path, wcs, shape


def best(runs, f):
    times = []
    result = None
    for _ in range(runs):
        t = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    directory = tempfile.mkdtemp(prefix="mosaic-bench-")
    try:
        print(f"== {N} exposures of {SIZE}x{SIZE} float32, {THREADS} thread(s), in {directory}")
        paths = exposures(directory)
        header_path, wcs_out, shape_out = target(paths, directory)
        print(f"   mosaic grid {shape_out[1]} x {shape_out[0]}")
        results = {}

        # astropy reproject
        from reproject import reproject_interp
        from reproject.mosaicking import reproject_and_coadd

        def run_reproject():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return reproject_and_coadd(
                    paths, wcs_out, shape_out=shape_out, reproject_function=reproject_interp,
                    combine_function="mean", match_background=True,
                    parallel=THREADS if THREADS > 1 else False,
                )

        t, ref = best(int(os.environ.get("REPEAT_REPROJECT", 1)), run_reproject)
        results["reproject 0.21"] = t

        # reproject-rs CLI
        binary = os.path.join(ROOT, "target", "release", "reproject-rs")
        out = os.path.join(directory, "rs.fits")
        cli = [binary, "mosaic", *paths, "--to", header_path, "-o", out, "--overwrite", "-q",
               "--match-background", "offset", "--threads", str(THREADS)]
        t, _ = best(REPEAT, lambda: subprocess.run(cli, check=True))
        results["reproject-rs CLI"] = t
        with fits.open(out) as hdul:
            ours, ours_fp = hdul[0].data.astype(float), hdul[1].data.astype(float)
        scale = np.nanmax(np.abs(ref[0]))
        rel = np.nanmax(np.abs(ours - ref[0]) / np.maximum(np.abs(ref[0]), 1e-3 * scale))
        fp_same = np.array_equal(ours_fp, ref[1])
        print(f"   reproject-rs vs reproject: max relative difference {rel:.2e}, "
              f"footprints identical: {fp_same}")

        # reproject-rs Python drop-in
        try:
            from reproject_rs.mosaicking import reproject_and_coadd as rs_coadd
            import reproject_rs

            def run_python():
                return rs_coadd(paths, wcs_out, shape_out=shape_out,
                                reproject_function=reproject_rs.reproject_interp,
                                combine_function="mean", match_background=True,
                                parallel=THREADS if THREADS > 1 else False)

            t, _ = best(REPEAT, run_python)
            results["reproject-rs Python"] = t
        except ImportError as e:
            print(f"   (reproject_rs.mosaicking not importable here: {e})")

        # SWarp
        swarp = shutil.which("SWarp") or shutil.which("swarp")
        if swarp:
            swarp_out = os.path.join(directory, "swarp.fits")
            shutil.copy(header_path, os.path.join(directory, "swarp.head"))
            cmd = [swarp, *paths, "-IMAGEOUT_NAME", swarp_out,
                   "-WEIGHTOUT_NAME", os.path.join(directory, "swarp.weight.fits"),
                   "-COMBINE_TYPE", "AVERAGE", "-RESAMPLING_TYPE", "BILINEAR",
                   "-SUBTRACT_BACK", "Y", "-NTHREADS", str(THREADS),
                   "-RESAMPLE_DIR", directory, "-WRITE_XML", "N", "-VERBOSE_TYPE", "QUIET",
                   "-FSCALASTRO_TYPE", "NONE", "-GAIN_DEFAULT", "1.0"]
            t, _ = best(REPEAT, lambda: subprocess.run(cmd, check=True, cwd=directory))
            results["SWarp 2.41"] = t
        else:
            print("   (SWarp not found: apt install swarp)")

        print(f"{'tool':<22}{'seconds':>10}")
        for name, t in results.items():
            print(f"{name:<22}{t:>10.3f}")
        ours_t = results["reproject-rs CLI"]
        print(f"reproject / reproject-rs CLI: {results['reproject 0.21'] / ours_t:.1f}x (goal >= 50x)")
        if "reproject-rs Python" in results:
            print(f"reproject / reproject-rs Python: "
                  f"{results['reproject 0.21'] / results['reproject-rs Python']:.1f}x")
        if "SWarp 2.41" in results:
            print(f"SWarp / reproject-rs CLI: {results['SWarp 2.41'] / ours_t:.1f}x (goal >= 3x)")
        return 0 if rel <= 1e-6 and fp_same else 1
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

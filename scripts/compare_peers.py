#!/usr/bin/env python3
"""Python side of scripts/bench_peers.sh: input generation and astropy reproject timings.

Subcommands
-----------
generate --data DIR [--size-a 4096] [--size-b 2048] [--force]
    Writes the benchmark inputs once (skipped when they already exist):
      A_<n>.npy / A_<n>.fits   float32 input of jobs A and C (TAN, 1" pixels, ICRS)
      A_<n>_in.hdr / A_<n>_out.hdr   input and output headers, one card per line, END
                                     (the output header is also SWarp's .head and
                                     Montage's template)
      B_<n>.npy / B_<n>.fits, B_<n>_in.hdr / B_<n>_out.hdr   job B (Galactic CAR -> ICRS TAN)
    The .npy files are native little-endian float32; the FITS files are BITPIX = -32
    (big-endian, as FITS requires).

time --data DIR --job A|B|C [--size N] [--repeat R] [--parallel N --block-size BY BX]
    Times astropy reproject's reproject_interp on the .npy input (opened with
    np.load(mmap_mode='r') inside the timed region, so reading the input file is included,
    as it is for bench_job), default options unless --parallel is given. Prints one
    "run <i> <seconds>" line per run and "RESULT median=<s> min=<s> runs=<n>".

check --data DIR --job A|B|C [--size N] --ours OURS.npy [--peer FILE.fits ...]
    Compares saved outputs with reproject's (development aid, not timed).

Job definitions (reproject-behaviour.md section 6 and docs/performance):
  A: n x n float32, TAN -> TAN, 1" pixels; the output is rotated 30 deg with a CRPIX offset
     of (3.7, -2.2) px and a CRVAL shift of (2e-3, -1e-3) deg; output shape = input shape;
     bilinear.
  B: n x n Galactic CAR (0.001 deg) -> ICRS TAN (0.001 deg) centred on the Galactic centre,
     bilinear.
  C: job A, bicubic.
"""

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

ORDERS = {"A": "bilinear", "B": "bilinear", "C": "bicubic"}
# The Galactic centre (l, b) = (0, 0) in ICRS.
GC_RA, GC_DEC = 266.404988, -28.936175


def card(key, value):
    return f"{key:<8}= {value}"


def tan_headers(n):
    """Job A's input and output header cards."""
    s = 1.0 / 3600.0
    c = n / 2.0 + 0.5

    def common(crpix1, crpix2, ra, dec):
        return [
            card("NAXIS", 2),
            card("NAXIS1", n),
            card("NAXIS2", n),
            card("CTYPE1", "'RA---TAN'"),
            card("CTYPE2", "'DEC--TAN'"),
            card("CRPIX1", f"{crpix1:.6f}"),
            card("CRPIX2", f"{crpix2:.6f}"),
            card("CRVAL1", f"{ra:.9f}"),
            card("CRVAL2", f"{dec:.9f}"),
            card("RADESYS", "'ICRS'"),
        ]

    cin = common(c, c, 150.0, 30.0) + [
        card("CDELT1", f"{-s:.15E}"),
        card("CDELT2", f"{s:.15E}"),
    ]
    sn, cs = math.sin(math.radians(30.0)), math.cos(math.radians(30.0))
    cout = common(c + 3.7, c - 2.2, 150.002, 29.999) + [
        card("CD1_1", f"{-s * cs:.15E}"),
        card("CD1_2", f"{s * sn:.15E}"),
        card("CD2_1", f"{s * sn:.15E}"),
        card("CD2_2", f"{s * cs:.15E}"),
    ]
    return cin, cout


def car_headers(n):
    """Job B's input (Galactic CAR) and output (ICRS TAN) header cards."""
    c = f"{n / 2.0 + 0.5:.1f}"

    def base(t1, t2, lon, lat):
        return [
            card("NAXIS", 2),
            card("NAXIS1", n),
            card("NAXIS2", n),
            card("CTYPE1", f"'{t1}'"),
            card("CTYPE2", f"'{t2}'"),
            card("CRPIX1", c),
            card("CRPIX2", c),
            card("CRVAL1", lon),
            card("CRVAL2", lat),
            card("CDELT1", "-0.001"),
            card("CDELT2", "0.001"),
        ]

    cin = base("GLON-CAR", "GLAT-CAR", "0.0", "0.0")
    cout = base("RA---TAN", "DEC--TAN", f"{GC_RA:.6f}", f"{GC_DEC:.6f}") + [
        card("RADESYS", "'ICRS'"),
        card("EQUINOX", "2000.0"),
    ]
    return cin, cout


def sky_image(n, seed):
    """A float32 sky-like image: a gradient background, ~n Gaussian sources, noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:n, 0:n].astype(np.float32)
    img = 100.0 + 0.01 * x - 0.005 * y
    img += rng.normal(0.0, 1.0, (n, n)).astype(np.float32)
    r = 6
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    for _ in range(n):
        cy, cx = rng.integers(r, n - r, 2)
        amp = rng.uniform(10.0, 1000.0)
        sigma = rng.uniform(1.0, 2.5)
        img[cy - r : cy + r + 1, cx - r : cx + r + 1] += amp * np.exp(
            -(xx**2 + yy**2) / (2 * sigma**2)
        )
    return img.astype(np.float32)


def paths(data, job, n):
    stem = os.path.join(data, f"{'A' if job in 'AC' else 'B'}_{n}")
    return {
        "npy": stem + ".npy",
        "fits": stem + ".fits",
        "in": stem + "_in.hdr",
        "out": stem + "_out.hdr",
    }


def write_header(path, cards):
    with open(path, "w") as f:
        for c in cards + ["END"]:
            f.write(f"{c:<80}\n")


def generate(args):
    from astropy.io import fits

    os.makedirs(args.data, exist_ok=True)
    for job, n, make, seed in (
        ("A", args.size_a, tan_headers, 1),
        ("B", args.size_b, car_headers, 2),
    ):
        p = paths(args.data, job, n)
        if not args.force and all(os.path.exists(v) for v in p.values()):
            print(f"generate: {job} {n}x{n} already in {args.data}")
            continue
        t = time.perf_counter()
        cin, cout = make(n)
        img = sky_image(n, seed)
        np.save(p["npy"], img)
        hdr = fits.Header.fromstring("\n".join(cin), sep="\n")
        fits.PrimaryHDU(data=img, header=hdr).writeto(p["fits"], overwrite=True)
        write_header(p["in"], cin)
        write_header(p["out"], cout)
        print(f"generate: {job} {n}x{n} written in {time.perf_counter() - t:.1f} s")


def read_header(path):
    from astropy.io import fits

    with open(path) as f:
        return fits.Header.fromstring(f.read(), sep="\n")


def time_reproject(args):
    import reproject
    from reproject import reproject_interp

    p = paths(args.data, args.job, args.size)
    hin, hout = read_header(p["in"]), read_header(p["out"])
    shape_out = (hout["NAXIS2"], hout["NAXIS1"])
    kwargs = {"order": ORDERS[args.job]}
    if args.parallel:
        kwargs["parallel"] = args.parallel
        kwargs["block_size"] = tuple(args.block_size) if args.block_size else "auto"
    print(f"info reproject {reproject.__version__} numpy {np.__version__} kwargs={kwargs}")
    times = []
    for i in range(args.repeat):
        t = time.perf_counter()
        arr = np.load(p["npy"], mmap_mode="r")
        data, footprint = reproject_interp((arr, hin), hout, shape_out=shape_out, **kwargs)
        dt = time.perf_counter() - t
        print(f"run {i} {dt:.6f}", flush=True)
        times.append(dt)
        coverage = float(footprint.mean())
        del data, footprint, arr
    print(f"info dtype=float64 coverage={coverage:.4f}")
    print(
        f"RESULT median={statistics.median(times):.6f} min={min(times):.6f} runs={len(times)}"
    )


def check(args):
    from astropy.io import fits
    from reproject import reproject_interp

    p = paths(args.data, args.job, args.size)
    hin, hout = read_header(p["in"]), read_header(p["out"])
    shape_out = (hout["NAXIS2"], hout["NAXIS1"])
    ref, fp = reproject_interp(
        (np.load(p["npy"]), hin), hout, shape_out=shape_out, order=ORDERS[args.job]
    )
    ours = np.load(args.ours)
    both = np.isfinite(ref) & np.isfinite(ours)
    diff = np.abs(ours[both] - ref[both])
    print(
        f"ours: NaN agree {np.mean(np.isnan(ref) == np.isnan(ours)):.6f}, "
        f"max |diff| {diff.max():.3e}, median |ref| {np.median(np.abs(ref[both])):.3e}"
    )
    for peer in args.peer or []:
        img = fits.getdata(peer).astype(np.float64)
        if img.shape != ref.shape:
            print(f"{peer}: shape {img.shape} != {ref.shape} (cropped output), skipped")
            continue
        m = both & (img != 0) & np.isfinite(img)
        d = np.abs(img[m] - ref[m]) / np.maximum(np.abs(ref[m]), 1e-30)
        print(
            f"{peer}: compared {m.mean():.3f} of pixels, median rel diff {np.median(d):.3e}, "
            f"99th pct {np.percentile(d, 99):.3e}"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--data", required=True)
    g.add_argument("--size-a", type=int, default=4096)
    g.add_argument("--size-b", type=int, default=2048)
    g.add_argument("--force", action="store_true")
    for name in ("time", "check"):
        t = sub.add_parser(name)
        t.add_argument("--data", required=True)
        t.add_argument("--job", choices=["A", "B", "C"], required=True)
        t.add_argument("--size", type=int, default=None)
        if name == "time":
            t.add_argument("--repeat", type=int, default=2)
            t.add_argument("--parallel", type=int, default=0)
            t.add_argument("--block-size", type=int, nargs=2, default=None)
        else:
            t.add_argument("--ours", required=True)
            t.add_argument("--peer", action="append")
    args = ap.parse_args()
    if args.cmd in ("time", "check") and args.size is None:
        args.size = 2048 if args.job == "B" else 4096
    {"generate": generate, "time": time_reproject, "check": check}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())

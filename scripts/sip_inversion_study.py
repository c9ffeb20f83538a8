"""How close three ways of inverting SIP distortion come to the input positions reproject gets.

reproject calls astropy's ``all_world2pix`` once on the whole output grid. astropy corrects every
point of the call until the slowest one is within 1e-4 px (``tolerance``), unless some point
diverges first, after which it goes on point by point (``WCS._all_world2pix``). This script
models, with astropy's own ``wcs_world2pix`` and ``pix2foc``, the per-point iterations
``Sip::invert`` can do, and prints how far each lands from astropy's whole-grid answer over
the output pixels that fall on the input image:

* ``point by point 1e-4``: each point stops at 1e-4 px (reproject-rs's ``precision='reproject'``);
* ``point by point 1e-8``: each point stops at 1e-8 px;
* ``one count for the grid``: each point is iterated at least as many times as astropy's
  whole-grid loop ran (found by a first pass over the grid), then by astropy's per-point rules.

Cases: seeded synthetic SIP inputs (CRPIX near the image centre, distortion growing outwards,
three strengths) and the PTF header of ``tests/reproject_golden.rs`` (``extra_siponly.hdr``,
CRPIX far off the chip), as the golden test's 100x100 cut-out and as the whole chip.

    .venv/bin/python scripts/sip_inversion_study.py   (about a minute; needs ../shared)
"""

import os
import warnings

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

HERE = os.path.dirname(os.path.abspath(__file__))
PTF_HEADER = os.path.join(HERE, "..", "..", "shared", "wcs-vectors", "extra_siponly.hdr")
TOLERANCE, MAXITER = 1e-4, 20


def tan(crval, crpix, cdelt, shape, rot):
    h = fits.Header()
    h["NAXIS"], h["NAXIS1"], h["NAXIS2"] = 2, shape[1], shape[0]
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    h["CRVAL1"], h["CRVAL2"] = crval
    h["CRPIX1"], h["CRPIX2"] = crpix
    h["CDELT1"], h["CDELT2"] = -cdelt, cdelt
    h["CROTA2"] = rot
    return h


def synthetic(seed, strength):
    """A TAN-SIP input whose distortion reaches about `strength` x the image size at its
    edges, and a TAN output over it (rotated, rescaled, shifted)."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(40, 90)), int(rng.integers(40, 90))
    cdelt = 10 ** rng.uniform(-4, -2)
    crval = (rng.uniform(0, 360), rng.uniform(-70, 70))
    crpix = (rng.uniform(0.3, 0.7) * m, rng.uniform(0.3, 0.7) * n)
    h_in = tan(crval, crpix, cdelt, (n, m), rng.uniform(-180, 180))
    h_in["CTYPE1"], h_in["CTYPE2"] = "RA---TAN-SIP", "DEC--TAN-SIP"
    order = int(rng.integers(2, 5))
    h_in["A_ORDER"] = h_in["B_ORDER"] = order
    for p in range(order + 1):
        for q in range(2 - p if p < 2 else 0, order + 1 - p):
            h_in[f"A_{p}_{q}"] = float(rng.normal() * strength / max(n, m) ** (p + q - 1))
            h_in[f"B_{p}_{q}"] = float(rng.normal() * strength / max(n, m) ** (p + q - 1))
    crval_out = (crval[0] + rng.normal() * cdelt * 3, crval[1] + rng.normal() * cdelt * 3)
    crpix_out = (rng.uniform(0.3, 0.7) * m, rng.uniform(0.3, 0.7) * n)
    h_out = tan(crval_out, crpix_out, cdelt * rng.uniform(0.7, 1.4), (n, m),
                rng.uniform(-180, 180))
    return WCS(h_in), WCS(h_out), (n, m), (n, m)


def per_point(w_in, world, tolerance, at_least=0):
    """Sip::invert's loop: each point corrected while its correction is at least `tolerance`
    (or fewer than `at_least` corrections were made) and fewer than MAXITER were made; a point
    whose correction grows while still above the tolerance keeps its last position."""
    tol2 = tolerance * tolerance
    pix0 = w_in.wcs_world2pix(world, 0)
    pix = pix0.copy()
    d = w_in.pix2foc(pix, 0) - pix0
    pix -= d
    dn = (d ** 2).sum(1)
    dn_prev = dn.copy()
    active = np.isfinite(dn)
    k = 1
    while True:
        active &= ((dn >= tol2) | (k < at_least)) & (k < MAXITER)
        if not active.any():
            return pix
        idx = np.flatnonzero(active)
        d = w_in.pix2foc(pix[idx], 0) - pix0[idx]
        dni = (d ** 2).sum(1)
        diverged = (dni >= dn_prev[idx]) & (dni >= tol2)
        ok = idx[~diverged]
        pix[ok] -= d[~diverged]
        dn_prev[ok] = dn[ok] = dni[~diverged]
        active[idx[diverged]] = False
        k += 1


def grid_count(w_in, world):
    """How many corrections astropy's whole-grid loop makes before it stops or, on the first
    divergence, goes point by point."""
    tol2 = TOLERANCE * TOLERANCE
    pix0 = w_in.wcs_world2pix(world, 0)
    pix = pix0.copy()
    d = w_in.pix2foc(pix, 0) - pix0
    pix -= d
    dn = (d ** 2).sum(1)
    dn_prev = dn.copy()
    k = 1
    while np.nanmax(dn) >= tol2 and k < MAXITER:
        d = w_in.pix2foc(pix, 0) - pix0
        dn = (d ** 2).sum(1)
        if ((dn >= dn_prev) & (dn >= tol2)).any():
            return k + 1
        dn_prev = dn
        pix -= d
        k += 1
    return k


def distances(w_in, w_out, shape_out, shape_in):
    yy, xx = np.mgrid[: shape_out[0], : shape_out[1]]
    lon, lat = w_out.all_pix2world(xx, yy, 0)
    world = np.stack([lon.ravel(), lat.ravel()], 1)
    try:
        astropy = w_in.all_world2pix(world, 0)
    except Exception as e:  # NoConvergence: reproject takes its best solution
        astropy = e.best_solution
    on_input = ((astropy[:, 0] > -1) & (astropy[:, 0] < shape_in[1])
                & (astropy[:, 1] > -1) & (astropy[:, 1] < shape_in[0]))
    ways = {
        "point by point 1e-4": per_point(w_in, world, TOLERANCE),
        "point by point 1e-8": per_point(w_in, world, 1e-8),
        "one count for the grid": per_point(w_in, world, TOLERANCE, grid_count(w_in, world)),
    }
    return {name: np.abs(p - astropy).max(1)[on_input] for name, p in ways.items()}


def report(label, cases):
    print(label)
    pooled = {}
    for case in cases:
        for name, d in distances(*case).items():
            pooled.setdefault(name, []).append(d)
    for name, ds in pooled.items():
        d = np.concatenate(ds)
        print(f"  {name:24s} over 1e-12 px: {np.mean(d > 1e-12):6.1%}   over 1e-8 px: "
              f"{np.mean(d > 1e-8):6.1%}   largest: {d.max():.1e} px")


def main():
    warnings.simplefilter("ignore")
    for strength in (0.005, 0.05, 0.1):
        report(f"synthetic SIP, strength {strength} (20 seeds)",
               [synthetic(seed, strength) for seed in range(20)])
    with open(PTF_HEADER) as f:
        full = fits.Header.fromstring(f.read(), sep="\n")
    w_full = WCS(full)
    cut = full.copy()
    cut["CRPIX1"] -= 1500
    cut["CRPIX2"] -= 3300
    w_cut = WCS(cut)
    lon, lat = w_cut.all_pix2world([[49.5, 49.5]], 0)[0]
    out = WCS(tan((lon, lat), (54.5, 55.0), 1 / 3600, (110, 110), 3.0))
    report("PTF header, the golden test's 100x100 cut-out", [(w_cut, out, (110, 110), (100, 100))])
    ny, nx = full["NAXIS2"], full["NAXIS1"]
    lon, lat = w_full.all_pix2world([[nx / 2, ny / 2]], 0)[0]
    scale = float(np.sqrt(abs(np.linalg.det(w_full.pixel_scale_matrix))))
    out = WCS(tan((lon, lat), (nx / 8, ny / 8), 4 * scale, (ny // 4, nx // 4), 20.0))
    report("PTF header, the whole chip (output at 1/4 scale)",
           [(w_full, out, (ny // 4, nx // 4), (ny, nx))])


if __name__ == "__main__":
    main()

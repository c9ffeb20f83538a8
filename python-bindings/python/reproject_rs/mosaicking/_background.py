"""Background matching of the generic path of
:func:`~reproject_rs.mosaicking.reproject_and_coadd`: reproject 0.21's offset matrix and
stochastic-gradient solver (``reproject.mosaicking._background``, BSD-3-Clause, ported), and
the per-input planes of ``match_background='plane'``.

(The fast path computes all of this in the Rust core, which solves the same system exactly
by least squares.)
"""

from __future__ import annotations

from math import exp

import numpy as np

__all__ = ["determine_offset_matrix", "determine_plane_matrices", "solve_corrections_sgd"]


def determine_offset_matrix(arrays):
    """The NxN matrix of the median differences ``arrays[i] - arrays[j]`` over the pixels
    where both have data (NaN where they do not overlap), for a list of
    :class:`~reproject_rs.mosaicking._subset_array.ReprojectedArraySubset`."""
    n = len(arrays)
    offset_matrix = np.ones((n, n)) * np.nan
    for i1, array1 in enumerate(arrays):
        for i2, array2 in enumerate(arrays):
            if i2 <= i1:
                continue
            if array1.overlaps(array2):
                difference = array1 - array2
                if np.any(difference.footprint):
                    values = difference.array[difference.footprint]
                    offset_matrix[i1, i2] = np.median(values)
                    offset_matrix[i2, i1] = -offset_matrix[i1, i2]
    return offset_matrix


def determine_plane_matrices(arrays):
    """Three NxN matrices (offset, slope along columns, slope along rows): the least-squares
    plane ``a + b·x + c·y`` (x, y output pixel coordinates) through the differences
    ``arrays[i] - arrays[j]`` where both have data, antisymmetric, NaN where a pair does not
    determine a plane (fewer than three points, or all on a line)."""
    n = len(arrays)
    matrices = np.full((3, n, n), np.nan)
    for i1, array1 in enumerate(arrays):
        for i2 in range(i1 + 1, n):
            array2 = arrays[i2]
            if not array1.overlaps(array2):
                continue
            difference = array1 - array2
            mask = np.asarray(difference.footprint, dtype=bool)
            if mask.sum() < 3:
                continue
            (r0, _), (c0, _) = difference.bounds[-2], difference.bounds[-1]
            index = np.nonzero(mask)
            y = (index[-2] + r0).astype(float)
            x = (index[-1] + c0).astype(float)
            fit = _fit_plane(x, y, np.asarray(difference.array)[mask])
            if fit is not None:
                matrices[:, i1, i2] = fit
                matrices[:, i2, i1] = [-v for v in fit]
    return matrices


def _fit_plane(x, y, v):
    """(a, b, c) of the least-squares plane a + b·x + c·y, or None when degenerate (the
    core's ``fit_plane``)."""
    mx, my = x.mean(), y.mean()
    x, y = x - mx, y - my
    sxx, sxy, syy = (x * x).sum(), (x * y).sum(), (y * y).sum()
    sv, sxv, syv = v.sum(), (x * v).sum(), (y * v).sum()
    det = sxx * syy - sxy * sxy
    if not np.isfinite(det) or abs(det) <= 1e-12 * max(sxx * syy, 1e-300):
        return None
    b = (sxv * syy - syv * sxy) / det
    c = (syv * sxx - sxv * sxy) / det
    a0 = sv / len(v)
    return (a0 - b * mx - c * my, b, c)


def solve_corrections_sgd(offset_matrix, eta_initial=1, eta_half_life=100, rtol=1e-10, atol=0):
    r"""The corrections (one per image) that best explain a matrix of pairwise offsets
    (``offset_matrix[i, j]``: how much image i is above image j, NaN where unknown), by
    reproject's stochastic gradient descent: the learning rate
    ``eta = eta_initial * exp(-iteration / eta_half_life)``, the mean correction subtracted
    after each sweep, until the corrections change by less than ``rtol``/``atol``.

    One difference from reproject 0.21: an image with no known offset keeps correction 0
    (reproject's ``np.mean`` of its empty row makes it NaN, with a RuntimeWarning, and the
    image's part of the mosaic NaN); the Rust core does the same.
    """
    if offset_matrix.ndim != 2 or offset_matrix.shape[0] != offset_matrix.shape[1]:
        raise ValueError("offset_matrix should be a square NxN matrix")
    n = offset_matrix.shape[0]
    indices = np.arange(n)
    corrections = np.zeros(n)
    previous_corrections = None
    for iteration in range(int(eta_half_life * 10)):
        # Shuffled to avoid cyclical behaviour (numpy's global random state, as reproject).
        np.random.shuffle(indices)
        eta = eta_initial * exp(-iteration / eta_half_life)
        for i in indices:
            if np.isnan(corrections[i]):
                continue
            keep = ~np.isnan(offset_matrix[i, :])
            if not keep.any():
                continue
            fitted_offset_matrix_row = corrections[i] - corrections[keep]
            corrections[i] += eta * np.mean(offset_matrix[i, keep] - fitted_offset_matrix_row)
        corrections -= np.nanmean(corrections)
        if previous_corrections is not None:
            if np.allclose(corrections, previous_corrections, rtol=rtol, atol=atol):
                break
        previous_corrections = corrections.copy()
    return corrections

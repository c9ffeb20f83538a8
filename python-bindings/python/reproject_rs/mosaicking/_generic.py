"""The generic path of :func:`~reproject_rs.mosaicking.reproject_and_coadd`: reproject 0.21's
algorithm (``reproject.mosaicking._coadd``, BSD-3-Clause), ported, for any reprojection
function with reproject's signature.

Per dataset: the output rectangle its edges cover (11 samples a side, mapped with astropy's
``pixel_to_pixel``, rounded outwards by half a pixel), the reprojection function called on
the output WCS cut to that rectangle (and again for the weights), NaN reset to 0 with a zero
footprint, the footprint multiplied by the weights; then background matching and the
combination. 'median', 'clipped' and ``match_background='plane'`` are this package's
extensions, computed as the Rust core computes them.
"""

from __future__ import annotations

import logging
import os
import tempfile
import uuid

import numpy as np

from .._parse import _is_ape14, parse_input_data
from ._background import determine_offset_matrix, determine_plane_matrices, solve_corrections_sgd
from ._coadd import CLIP_AMPFRAC, CLIP_SIGMA, parse_input_weights
from ._subset_array import ReprojectedArraySubset

__all__ = ["generic_coadd", "sample_array_edges", "covered_bounds"]

logger = logging.getLogger("reproject.mosaicking._coadd")



def sample_array_edges(shape, *, n_samples):
    """Pixel positions along every edge of an array of ``shape`` (``n_samples`` per edge,
    vertices included), as an array of shape ``(ndim, n)`` (reproject's)."""
    all_positions = []
    ndim = len(shape)
    shape = np.array(shape)
    for idim in range(ndim):
        for vertex in range(2**ndim):
            positions = -0.5 + shape * ((vertex & (2 ** np.arange(ndim))) > 0).astype(int)
            positions = np.broadcast_to(positions, (n_samples, ndim)).copy()
            positions[:, idim] = np.linspace(-0.5, shape[idim] - 0.5, n_samples)
            all_positions.append(positions)
    return np.unique(np.vstack(all_positions), axis=0).T


def covered_bounds(array_shape, wcs_in, wcs_out, shape_out):
    """reproject's cutout of one dataset: ``(bounds, n_broadcasted)``, ``bounds`` one
    ``(imin, imax)`` per output dimension, or None when the dataset misses the output."""
    from astropy.wcs.utils import pixel_to_pixel

    n_dim = wcs_in.low_level_wcs.pixel_n_dim
    edges = sample_array_edges(array_shape[-n_dim:], n_samples=11)[::-1]
    edges_out = pixel_to_pixel(wcs_in, wcs_out, *edges)[::-1]
    ndim_out = len(shape_out)
    n_broadcasted = len(shape_out) - n_dim
    if np.any(np.isnan(edges_out)):
        return list(zip([0] * ndim_out, shape_out)), n_broadcasted
    bounds = [(0, shape_out[idim]) for idim in range(max(n_broadcasted, 0))]
    for idim in range(len(edges_out)):
        imin = max(0, int(np.floor(edges_out[idim].min() + 0.5)))
        imax = min(shape_out[n_broadcasted + idim], int(np.ceil(edges_out[idim].max() + 0.5)))
        bounds.append((imin, imax))
        if imax <= imin:
            return None, n_broadcasted
    return bounds, n_broadcasted


def reproject_style_input(item, hdu_in, stack):
    """``(array, wcs)`` of one dataset as reproject's ``parse_input_data`` gives them: the
    caller's own WCS object for tuples and NDData (a low-level WCS wrapped in
    ``HighLevelWCSWrapper``), ``WCS(header)`` for headers, HDUs and files."""
    import astropy.nddata
    from astropy.io import fits
    from astropy.wcs.wcsapi import BaseHighLevelWCS, HighLevelWCSWrapper

    array, parsed = parse_input_data(item, hdu_in=hdu_in, stack=stack)
    if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[1], (str, fits.Header)):
        wcs = item[1]
        return array, wcs if isinstance(wcs, BaseHighLevelWCS) else HighLevelWCSWrapper(wcs)
    if isinstance(item, astropy.nddata.NDDataBase):
        return array, item.wcs
    return array, parsed.wcs


def reproject_style_output(output_projection, parsed_out):
    """The output WCS as reproject's ``parse_output_projection`` gives it."""
    from astropy.wcs.wcsapi import BaseHighLevelWCS, HighLevelWCSWrapper

    if _is_ape14(output_projection):
        if isinstance(output_projection, BaseHighLevelWCS):
            return output_projection
        return HighLevelWCSWrapper(output_projection)
    return parsed_out.wcs


def generic_coadd(
    input_data,
    output_projection,
    parsed_out,
    shape_out,
    *,
    input_weights,
    hdu_in,
    hdu_weights,
    reproject_function,
    combine_function,
    background,
    background_reference,
    output_array,
    output_footprint,
    block_sizes,
    progress_bar,
    blank_pixel_value,
    intermediate_memmap,
    kwargs,
    stack,
    clip=(CLIP_SIGMA, CLIP_AMPFRAC),
):
    """reproject's ``reproject_and_coadd`` with ``reproject_function`` (arguments checked by
    the caller; ``background`` 'none', 'offset' or 'plane'; ``background_reference`` None
    for reproject's falsy values; ``clip``: 'clipped''s sigma and ampfrac)."""
    from astropy.wcs import WCS
    from astropy.wcs.wcsapi import SlicedLowLevelWCS

    wcs_out = reproject_style_output(output_projection, parsed_out)
    if output_array is None:
        output_array = np.zeros(shape_out)
    if output_footprint is None:
        output_footprint = np.zeros(shape_out)
    match_background = background != "none"
    on_the_fly = not match_background and combine_function in ("mean", "sum")
    arrays = []

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=os.name == "nt") as local_tmp_dir:
        for idata in progress_bar(range(len(input_data))):
            array_in, wcs_in = reproject_style_input(input_data[idata], hdu_in, stack)
            if input_weights is None:
                weights_in = None
            else:
                weights_in, parsed_w = parse_input_weights(
                    input_weights[idata], hdu_weights=hdu_weights, stack=stack
                )
                if parsed_w is None:
                    weights_wcs = wcs_in
                else:
                    weights_wcs = parsed_w.wcs
                    try:
                        _validate_wcs(weights_wcs, wcs_in, weights_in.shape, shape_out)
                    except ValueError:
                        weights_wcs = wcs_in
                if np.any(np.isnan(weights_in)):
                    weights_in = np.nan_to_num(weights_in)

            bounds, n_broadcasted = covered_bounds(array_in.shape, wcs_in, wcs_out, shape_out)
            if bounds is None:
                logger.info("Skipping reprojection as no predicted overlap with final mosaic header")
                continue
            slice_out = tuple(slice(imin, imax) for (imin, imax) in bounds[n_broadcasted:])
            if isinstance(wcs_out, WCS):
                wcs_out_indiv = wcs_out[slice_out]
            else:
                wcs_out_indiv = SlicedLowLevelWCS(wcs_out.low_level_wcs, slice_out)
            shape_out_indiv = tuple(imax - imin for (imin, imax) in bounds)
            block_size = _dataset_block_size(
                block_sizes, idata, len(input_data), shape_out, shape_out_indiv,
                wcs_in.low_level_wcs.pixel_n_dim, n_broadcasted,
            )

            paths = []
            if intermediate_memmap:
                array, footprint = (
                    _memmap(local_tmp_dir, name, shape_out_indiv, dtype, paths)
                    for name, dtype in (("array", array_in.dtype), ("footprint", float))
                )
            else:
                array = footprint = None
            array, footprint = reproject_function(
                (array_in, wcs_in),
                output_projection=wcs_out_indiv,
                shape_out=shape_out_indiv,
                hdu_in=hdu_in,
                output_array=array,
                output_footprint=footprint,
                block_size=block_size,
                **kwargs,
            )
            if weights_in is not None:
                weights = (
                    _memmap(local_tmp_dir, "weights", shape_out_indiv, float, [])
                    if intermediate_memmap
                    else None
                )
                weights = reproject_function(
                    (weights_in, weights_wcs),
                    output_projection=wcs_out_indiv,
                    shape_out=shape_out_indiv,
                    hdu_in=hdu_in,
                    output_array=weights,
                    return_footprint=False,
                    **kwargs,
                )
                reset = np.isnan(array) | np.isnan(weights)
            else:
                reset = np.isnan(array)
            array[reset] = 0.0
            footprint[reset] = 0.0
            if weights_in is not None:
                weights[reset] = 0.0
                footprint *= weights
                weights = None

            subset = ReprojectedArraySubset(array, footprint, bounds)
            if on_the_fly:
                subset.array[subset.footprint == 0] = 0
                output_footprint[subset.view_in_original_array] += subset.footprint
                subset.array *= subset.footprint
                output_array[subset.view_in_original_array] += subset.array
                subset = array = footprint = None
                _remove(paths)
            else:
                arrays.append(subset)

        if match_background and len(arrays) > 1:
            _match_backgrounds(arrays, background, background_reference)

        if combine_function in ("mean", "sum"):
            if match_background:
                for subset in arrays:
                    subset.array[subset.footprint == 0] = 0
                    output_array[subset.view_in_original_array] += subset.array * subset.footprint
                    output_footprint[subset.view_in_original_array] += subset.footprint
            if combine_function == "mean":
                with np.errstate(invalid="ignore"):
                    output_array /= output_footprint
        elif combine_function in ("first", "last", "min", "max"):
            if combine_function == "min":
                output_array[...] = np.inf
            elif combine_function == "max":
                output_array[...] = -np.inf
            for subset in arrays:
                view = subset.view_in_original_array
                if combine_function == "first":
                    mask = output_footprint[view] == 0
                elif combine_function == "last":
                    mask = subset.footprint > 0
                elif combine_function == "min":
                    mask = (subset.footprint > 0) & (subset.array < output_array[view])
                else:
                    mask = (subset.footprint > 0) & (subset.array > output_array[view])
                output_footprint[view] = np.where(mask, subset.footprint, output_footprint[view])
                output_array[view] = np.where(mask, subset.array, output_array[view])
        else:
            _stacked_combine(arrays, output_array, output_footprint, combine_function, clip)
        arrays = []

    # Blank pixels, in chunks to avoid a large temporary mask.
    for chunk in _chunks(output_array.shape):
        output_array[chunk][output_footprint[chunk] == 0] = blank_pixel_value
    return output_array, output_footprint


def _validate_wcs(wcs_in, wcs_out, shape_in, shape_out):
    """reproject's ``_validate_wcs`` on APE-14 objects (ValueError with its messages)."""
    from .._job import _has_celestial

    n_in, n_out = wcs_in.low_level_wcs.pixel_n_dim, wcs_out.low_level_wcs.pixel_n_dim
    if n_in != n_out:
        raise ValueError("Number of dimensions in input and output WCS should match")
    elif len(shape_out) < n_out:
        raise ValueError("Too few dimensions in shape_out")
    elif len(shape_in) < n_in:
        raise ValueError("Too few dimensions in input data")
    elif len(shape_in) != len(shape_out):
        raise ValueError("Number of dimensions in input and output data should match")
    if tuple(shape_in[:-n_in]) != tuple(shape_out[:-n_out]):
        raise ValueError("Dimensions to be looped over must match exactly")
    if _has_celestial(wcs_in) and not _has_celestial(wcs_out):
        raise ValueError("Input WCS has celestial components but output WCS does not")
    elif _has_celestial(wcs_out) and not _has_celestial(wcs_in):
        raise ValueError("Output WCS has celestial components but input WCS does not")
    from astropy.wcs import WCS

    if isinstance(wcs_in, WCS) and isinstance(wcs_out, WCS):
        if wcs_in.wcs.spec >= 0 and wcs_out.wcs.spec >= 0:
            if wcs_in.wcs.ctype[wcs_in.wcs.spec][:4] != wcs_out.wcs.ctype[wcs_out.wcs.spec][:4]:
                raise ValueError(
                    f"The input ({wcs_in.wcs.ctype[wcs_in.wcs.spec]}) and output "
                    f"({wcs_out.wcs.ctype[wcs_out.wcs.spec]}) spectral "
                    "coordinate types are not equivalent."
                )
        elif wcs_in.wcs.spec >= 0:
            raise ValueError("Input WCS has a spectral component but output WCS does not")
        elif wcs_out.wcs.spec >= 0:
            raise ValueError("Output WCS has a spectral component but input WCS does not")


def _dataset_block_size(block_sizes, idata, n_data, shape_out, shape_out_indiv, n_dim,
                        n_broadcasted):
    """The ``block_size`` reproject passes to the reprojection of dataset ``idata``."""
    if block_sizes is None:
        return None
    if len(block_sizes) == n_data and len(block_sizes[idata]) == len(shape_out):
        global_block_size = block_sizes[idata]
    else:
        global_block_size = block_sizes
    if global_block_size and global_block_size[-n_dim] == shape_out[-n_dim]:
        return tuple(global_block_size[:n_broadcasted]) + tuple(shape_out_indiv[n_broadcasted:])
    return global_block_size


def _memmap(directory, name, shape, dtype, paths):
    path = os.path.join(directory, f"{name}_{uuid.uuid4()}.np")
    paths.append(path)
    logger.info(f"Creating memory-mapped {name} with shape {shape} at {path}")
    return np.memmap(path, shape=shape, mode="w+", dtype=dtype)


def _remove(paths):
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass


def _match_backgrounds(arrays, background, background_reference):
    """Subtracts each array's background correction (reproject's offsets, or planes)."""
    if background == "offset":
        corrections = solve_corrections_sgd(determine_offset_matrix(arrays))
        if background_reference:
            corrections -= corrections[background_reference]
        for subset, correction in zip(arrays, corrections):
            subset.array -= correction
        return
    coefficients = [solve_corrections_sgd(m) for m in determine_plane_matrices(arrays)]
    if background_reference:
        coefficients = [c - c[background_reference] for c in coefficients]
    for k, subset in enumerate(arrays):
        a, b, c = (coefficient[k] for coefficient in coefficients)
        (r0, r1), (c0, c1) = subset.bounds[-2], subset.bounds[-1]
        y = np.arange(r0, r1, dtype=float)[:, None]
        x = np.arange(c0, c1, dtype=float)[None, :]
        subset.array -= a + b * x + c * y


def _stacked_combine(arrays, output_array, output_footprint, combine_function, clip):
    """'median' and 'clipped': every covering input's value per pixel, in slabs of rows."""
    output_array[...] = 0
    output_footprint[...] = 0
    shape = output_array.shape
    ny = shape[-2]
    # Two float64 stacks (values, weights) of every input: slabs of at most ~64 MiB.
    row_bytes = 16 * max(len(arrays), 1) * int(np.prod(shape)) // max(ny, 1)
    step = max(1, (64 * 1024**2) // max(row_bytes, 1))
    for r0 in range(0, ny, step):
        r1 = min(ny, r0 + step)
        slab = (*shape[:-2], r1 - r0, shape[-1])
        values = []
        weights = []
        for subset in arrays:
            (a0, a1) = subset.bounds[-2]
            lo, hi = max(a0, r0), min(a1, r1)
            if hi <= lo:
                continue
            (c0, c1) = subset.bounds[-1]
            v = np.full(slab, np.nan)
            w = np.zeros(slab)
            lead = tuple(slice(i0, i1) for (i0, i1) in subset.bounds[:-2])
            src = (*[slice(None)] * len(lead), slice(lo - a0, hi - a0), slice(None))
            dst = (*lead, slice(lo - r0, hi - r0), slice(c0, c1))
            v[dst] = subset.array[src]
            w[dst] = subset.footprint[src]
            v[w <= 0] = np.nan
            values.append(v)
            weights.append(w)
        if not values:
            continue
        values, weights = np.stack(values), np.stack(weights)
        out_slice = (Ellipsis, slice(r0, r1), slice(None))
        output_footprint[out_slice] = weights.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"), _quiet():
            if combine_function == "median":
                output_array[out_slice] = np.nanmedian(values, axis=0)
            else:
                output_array[out_slice] = _clipped_mean(values, weights, *clip)


def _clipped_mean(values, weights, sigma=CLIP_SIGMA, ampfrac=CLIP_AMPFRAC):
    """SWarp's CLIPPED combination along axis 0 (NaN values absent): values further than
    ``sigma``·σ + ``ampfrac``·|median| from the median rejected until none is, then the
    weighted mean of the rest (the median of the last set when all would be rejected)."""
    kept = ~np.isnan(values)
    result = np.full(values.shape[1:], np.nan)
    active = kept.any(axis=0)
    while True:
        v = np.where(kept, values, np.nan)
        m = np.nanmedian(v, axis=0)
        n = kept.sum(axis=0)
        mean = np.nansum(v, axis=0) / np.maximum(n, 1)
        var = np.nansum(np.where(kept, (values - mean) ** 2, 0.0), axis=0) / np.maximum(n, 1)
        limit = sigma * np.sqrt(var) + ampfrac * np.abs(m)
        new_kept = kept & (np.abs(values - m) <= limit)
        n_new = new_kept.sum(axis=0)
        emptied = active & (n_new == 0)
        result[emptied] = m[emptied]
        active &= ~emptied
        changed = active & (n_new != n)
        kept = np.where(active, new_kept, kept)
        if not changed.any():
            break
    w = np.where(kept, weights, 0.0)
    weighted = (w * np.where(kept, values, 0.0)).sum(axis=0) / w.sum(axis=0)
    return np.where(active, weighted, result)


class _quiet:
    """Silences numpy's RuntimeWarnings for all-NaN pixels (no input covers them)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def _chunks(shape, max_elements=256 * 1024**2):
    """Slices of the first axis covering at most ``max_elements`` each."""
    if not shape or 0 in shape:
        return
    per = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    step = max(1, max_elements // max(per, 1))
    for start in range(0, shape[0], step):
        yield (slice(start, min(shape[0], start + step)),)

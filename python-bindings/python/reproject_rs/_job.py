"""One reprojection as the engine computes it: the input array, both WCS as header text
(celestial axes first), the output shape, the engine options and the device, checked with
reproject's ``_validate_wcs`` rules and messages."""

from __future__ import annotations

import numpy as np

from . import _core
from ._arrays import is_cuda_array, is_dask, normalise_dtype
from ._lazy import _user_axes
from ._parse import ParsedWCS, wcs_to_header
from ._positions import precomputed_positions

__all__ = ["Job", "validate_wcs"]


class Job:
    """One reprojection, checked and put in the engine's axis order.

    ``array_in`` is a numpy array (anything numpy converts), a dask array or a GPU array;
    ``wcs_in``/``wcs_out`` are :class:`~reproject_rs._parse.ParsedWCS`; ``engine_options``
    the engine keyword arguments (order, roundtrip_coords, nan_policy, precision); ``device``
    the engine device, canonical ('cpu', 'auto', 'cuda', 'cuda:N' or 'cuda:all').

    Attributes: ``array_in`` (in the engine's axis order), ``is_dask``, ``dtype_in``,
    ``n_wcs`` (WCS pixel dimensions), ``shape_out`` (caller's axis order), ``engine_shape``
    (engine's axis order), ``in_axes``/``out_axes`` (numpy axis permutations to the engine's
    order, None when there is none), ``header_in``/``header_out`` (None for a WCS the engine
    does not read), ``engine_options``, ``device``, ``positions`` (``(xs, ys)`` computed
    before the job for a 2-D pair a plan does not describe, by astropy or with lookup tables;
    else None).
    """

    def __init__(
        self, array_in, wcs_in: ParsedWCS, wcs_out: ParsedWCS, shape_out, engine_options, device
    ):
        self.is_dask = is_dask(array_in)
        if not self.is_dask and not is_cuda_array(array_in):
            array_in = np.asarray(array_in)
        self.dtype_in = array_in.dtype
        validate_wcs(wcs_in, wcs_out, array_in.shape, shape_out)
        self.n_wcs = wcs_in.pixel_n_dim
        self.shape_out = tuple(shape_out)
        wcs_in, wcs_out = _celestial_first(wcs_in), _celestial_first(wcs_out)
        self.in_axes = _numpy_axes(wcs_in.perm, array_in.ndim) if wcs_in.perm else None
        self.out_axes = _numpy_axes(wcs_out.perm, len(shape_out)) if wcs_out.perm else None
        if self.in_axes is not None:
            array_in = array_in.transpose(self.in_axes)
        # The shape the engine computes (output axes in the engine's order).
        self.engine_shape = (
            tuple(self.shape_out[a] for a in self.out_axes) if self.out_axes else self.shape_out
        )
        self.array_in = array_in
        self.header_in, self.header_out = wcs_in.header, wcs_out.header
        self.engine_options = dict(engine_options)
        self.device = device
        # For a 2-D pair a plan does not describe: the input positions, computed now.
        self.positions = precomputed_positions(
            wcs_in, wcs_out, self.header_in, self.header_out, array_in.shape,
            self.engine_shape, self.engine_options,
        )

    def numpy_input(self):
        """The input as a numpy array of a dtype the engine reads (a dask input computed)."""
        array = self.array_in
        if self.is_dask:
            array = np.asarray(array.compute())
        return normalise_dtype(array)

    def to_user_axes(self, array):
        """An engine-order output back in the caller's axis order."""
        return _user_axes(array, self.out_axes)

    def empty_plane(self) -> bool:
        """Whether the input's celestial plane has no pixel (reproject then returns NaN)."""
        shape = self.array_in.shape
        return 0 in shape[-2:] and 0 not in shape[:-2] and 0 not in self.shape_out


def validate_wcs(wcs_in: ParsedWCS, wcs_out: ParsedWCS, shape_in, shape_out):
    """reproject's ``_validate_wcs`` checks, with its messages."""
    n_in, n_out = wcs_in.pixel_n_dim, wcs_out.pixel_n_dim
    if n_in != n_out:
        raise _core.ShapeError("Number of dimensions in input and output WCS should match")
    elif len(shape_out) < n_out:
        raise _core.ShapeError("Too few dimensions in shape_out")
    elif len(shape_in) < n_in:
        raise _core.ShapeError("Too few dimensions in input data")
    elif len(shape_in) != len(shape_out):
        raise _core.ShapeError("Number of dimensions in input and output data should match")
    if tuple(shape_in[:-n_in]) != tuple(shape_out[:-n_out]):
        raise _core.ShapeError("Dimensions to be looped over must match exactly")
    facts_in, facts_out = _axis_facts(wcs_in), _axis_facts(wcs_out)
    if facts_in is None or facts_out is None:
        return  # no astropy: the engine checks
    (celestial_in, spectral_in), (celestial_out, spectral_out) = facts_in, facts_out
    if celestial_in and not celestial_out:
        raise _core.WcsError("Input WCS has celestial components but output WCS does not")
    elif celestial_out and not celestial_in:
        raise _core.WcsError("Output WCS has celestial components but input WCS does not")
    if wcs_in.is_fits and wcs_out.is_fits:
        if spectral_in is not None and spectral_out is not None:
            if spectral_in[:4] != spectral_out[:4]:
                raise _core.WcsError(
                    f"The input ({spectral_in}) and output ({spectral_out}) spectral "
                    "coordinate types are not equivalent."
                )
        elif spectral_in is not None:
            raise _core.WcsError("Input WCS has a spectral component but output WCS does not")
        elif spectral_out is not None:
            raise _core.WcsError("Output WCS has a spectral component but input WCS does not")


def _axis_facts(parsed: ParsedWCS):
    """``(has celestial axes, CTYPE of the spectral axis or None)`` as reproject's checks see
    them (the spectral CTYPE of a FITS WCS only), or None without astropy. A celestial image
    is known without building astropy's WCS."""
    if parsed.celestial_image:
        return True, None
    w = parsed.wcs
    if w is None:
        return None
    spec = w.wcs.spec if parsed.is_fits else -1
    return _has_celestial(w), (w.wcs.ctype[spec] if spec >= 0 else None)


def _has_celestial(wcs) -> bool:
    """reproject's ``has_celestial``: a FITS WCS's own answer, else whether any world axis
    is a SkyCoord."""
    if hasattr(wcs, "has_celestial"):
        return wcs.has_celestial
    from astropy.coordinates import SkyCoord

    low = getattr(wcs, "low_level_wcs", wcs)
    return any(issubclass(c[0], SkyCoord) for c in low.world_axis_object_classes.values())


def _celestial_first(parsed: ParsedWCS) -> ParsedWCS:
    """The engine wants the celestial axes as WCS axes 1 and 2; for a cube whose celestial
    axes are elsewhere, reorder the WCS (``WCS.sub``) and remember the permutation, so the
    data can be transposed the same way (a view, no copy)."""
    if parsed.celestial_image:
        return parsed
    w = parsed.wcs
    if parsed.header is None or w is None or w.pixel_n_dim <= 2 or not w.has_celestial:
        return parsed
    lng, lat = w.wcs.lng, w.wcs.lat
    if max(lng, lat) <= 1:
        return parsed
    if w.pixel_n_dim != w.world_n_dim:
        return parsed  # let the engine report it
    celestial = sorted((lng, lat))
    wcs_order = celestial + [i for i in range(w.pixel_n_dim) if i not in celestial]
    sub = w.sub([i + 1 for i in wcs_order])
    return ParsedWCS(wcs_to_header(sub), sub, parsed.is_fits, perm=tuple(wcs_order))


def _numpy_axes(perm, ndim):
    """numpy axis order realising a WCS axis permutation (WCS axis i is numpy axis ndim-1-i;
    leading broadcast axes stay first)."""
    n = len(perm)
    lead = list(range(ndim - n))
    return lead + [ndim - 1 - perm[j] for j in reversed(range(n))]

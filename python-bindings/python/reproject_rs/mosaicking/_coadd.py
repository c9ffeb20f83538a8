"""``reproject_and_coadd``: astropy reproject 0.21's mosaicking function, on the Rust core.

Two paths, one result (reproject's):

* the fast path: with ``reproject_function`` an interpolation (``reproject_rs.reproject_interp``
  or ``reproject.reproject_interp``) and every WCS one the engine evaluates, the whole mosaic
  is one call of the core (``_core.reproject_and_coadd``, the GIL released): inputs read in
  place, output blocks combined in parallel, nothing kept per input;
* the generic path (:mod:`reproject_rs.mosaicking._generic`): any other reprojection function
  (``reproject_adaptive``, ``reproject_exact``, one's own), or WCS the engine does not
  evaluate (then with ``reproject_rs.reproject_interp``, whose positions astropy computes),
  or output arrays that already hold values (which reproject adds to): reproject's own
  algorithm, ported.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
import threading

import numpy as np

from .. import _core
from .._arrays import is_dask, normalise_dtype
from .._blocks import parallel_threads
from .._job import _celestial_first, validate_wcs
from .._options import parse_device, parse_order, select_device
from .._parse import ParsedWCS, parse_input_data, parse_output_projection

__all__ = ["reproject_and_coadd", "COMBINE_FUNCTIONS"]

logger = logging.getLogger("reproject.mosaicking._coadd")

#: reproject's combine functions, then the core's extensions.
COMBINE_FUNCTIONS = ("mean", "sum", "first", "last", "min", "max", "median", "clipped")
#: SWarp's CLIPPED defaults (the core's ``Combine::Clipped``).
CLIP_SIGMA = 4.0
CLIP_AMPFRAC = 0.3
_REPROJECT_COMBINES = COMBINE_FUNCTIONS[:6]

#: Keyword arguments of the reprojection that the fast path understands (anything else goes
#: to the reprojection function itself, on the generic path).
_FAST_KWARGS = {"order", "roundtrip_coords", "parallel", "nan_policy", "precision", "dask_method"}


def reproject_and_coadd(
    input_data,
    output_projection,
    shape_out=None,
    input_weights=None,
    hdu_in=None,
    hdu_weights=None,
    reproject_function=None,
    combine_function="mean",
    match_background=False,
    background_reference=None,
    output_array=None,
    output_footprint=None,
    block_sizes=None,
    progress_bar=None,
    blank_pixel_value=0,
    intermediate_memmap=False,
    *,
    return_type=None,
    device=None,
    clip_sigma=CLIP_SIGMA,
    clip_ampfrac=CLIP_AMPFRAC,
    **kwargs,
):
    """
    Given a set of input data, reproject and co-add these to a single final image (drop-in
    for ``reproject.mosaicking.reproject_and_coadd`` 0.21).

    With ``reproject_function`` set to ``reproject_rs.reproject_interp`` or
    ``reproject.reproject_interp`` and FITS WCS the engine evaluates, the whole mosaic is
    computed by the reproject-rs Rust core (inputs read in place, output blocks combined in
    parallel with ``parallel=``); any other reprojection function runs reproject's own
    algorithm with that function. Either way the result is reproject's.

    Parameters
    ----------
    input_data : iterable
        One entry per dataset: a FITS file name, an `~astropy.io.fits.HDUList`, an image HDU
        (`~astropy.io.fits.PrimaryHDU`, `~astropy.io.fits.ImageHDU`,
        `~astropy.io.fits.CompImageHDU`), a tuple ``(array, wcs)`` with ``wcs`` a
        `~astropy.wcs.WCS` (or APE-14 WCS), a `~astropy.io.fits.Header` or FITS header text,
        or an `~astropy.nddata.NDData`.
    output_projection : `~astropy.wcs.WCS` or `~astropy.io.fits.Header` or str
        The output projection: a WCS (or APE-14 WCS), a Header, a FITS file name or FITS
        header text.
    shape_out : tuple, optional
        The output shape, when ``output_projection`` does not give it. For inputs with
        leading dimensions (cubes), the full shape; (rows, columns) is extended with the
        inputs' leading dimensions on the fast path.
    input_weights : iterable, optional
        One entry per dataset: a FITS file name, an `~astropy.io.fits.HDUList`, an image HDU
        or a `~numpy.ndarray`. NaN weights count as 0. Weights with a WCS of their own
        (a header with CTYPE1) are reprojected through it, else through the dataset's.
    hdu_in, hdu_weights : int or str, optional
        The HDU of FITS files and HDULists in ``input_data`` / ``input_weights``.
    reproject_function : callable
        The reprojection function: ``reproject_rs.reproject_interp`` or
        ``reproject.reproject_interp`` (fast path), or any function with reproject's
        signature (``reproject.reproject_adaptive``, ``reproject.reproject_exact``, ...).
        Required, as in reproject.
    combine_function : str
        ``'mean'``, ``'sum'``, ``'first'``, ``'last'``, ``'min'``, ``'max'`` (reproject's), or
        ``'median'`` (the median of the inputs covering a pixel) and ``'clipped'`` (SWarp's
        CLIPPED: the weighted mean of the values within 4 standard deviations plus 0.3 times
        the median of the median, rejected iteratively). For ``'median'`` and ``'clipped'``
        the footprint is the summed weights, as for ``'mean'``.
    match_background : bool or str
        ``True`` (or ``'offset'``): match the backgrounds with one offset per image;
        ``'plane'``: with one plane (offset and slopes along x and y) per image.
    background_reference : int, optional
        The image whose correction is zero; ``None`` (and, as in reproject, ``0``): the
        corrections average to zero.
    output_array, output_footprint : `~numpy.ndarray`, optional
        Arrays of the output shape to fill and return. As in reproject, values they already
        hold take part ('mean' and 'sum' add to them; the footprint decides 'first', ...):
        zero-filled float64 arrays (``numpy.zeros``, a new ``numpy.memmap``) are written in
        place by the core.
    block_sizes : tuple or list of tuples, optional
        The block shape for the reprojections (a single tuple, or one per dataset as in
        reproject); on the fast path the output block of the core (its last two entries).
        Never changes a value.
    progress_bar : callable, optional
        Called as ``progress_bar(range(len(input_data)))``; the iterator is advanced as the
        work progresses (e.g. ``tqdm.tqdm``).
    blank_pixel_value : float, optional
        The value of output pixels no input covers (default 0).
    intermediate_memmap : bool, optional
        Keep the reprojected inputs in memory-mapped temporary files (generic path; the fast
        path keeps no reprojected input).
    return_type : {'numpy', 'dask'}, keyword-only, optional
        ``'dask'``: lazy dask arrays (fast path: one core call per output block, chunked by
        ``block_size``/``block_sizes``, default dask's automatic chunks, bit-identical to
        the numpy result; with background matching, the corrections, which need every
        overlap, are one task computed once and given to every block; generic path:
        computed now, wrapped).
    clip_sigma, clip_ampfrac : float, keyword-only, optional
        SWarp's CLIP_SIGMA (default 4) and CLIP_AMPFRAC (default 0.3) of
        ``combine_function='clipped'``: values further than ``clip_sigma`` standard deviations
        plus ``clip_ampfrac`` times the absolute median from the median are rejected.
    device : {'cpu', 'auto', 'cuda', 'cuda:N', 'cuda:all'}, keyword-only, optional
        Where the fast path's reprojections compute (see ``reproject_rs.reproject_interp``);
        passed on to ``reproject_rs.reproject_interp`` on the generic path.
    **kwargs
        Passed to the reprojection function: ``order``, ``roundtrip_coords``, ``parallel``
        (fast path: ``True`` every core, an integer that many threads), ``block_size``,
        ``nan_policy``, ``precision``, ...

    Returns
    -------
    array : `~numpy.ndarray` or `dask.array.Array`
        The co-added array.
    footprint : `~numpy.ndarray` or `dask.array.Array`
        The footprint of the co-added array: the summed (weighted) coverage for 'mean',
        'sum', 'median' and 'clipped', the chosen input's for the others; 0 where no input
        has a valid value.

    Examples
    --------
    Two 32 x 32 images, of 1 and of 3, overlapping on 16 columns of a 32 x 48 mosaic: the
    mean is 2 in the overlap, where the footprint counts both images, and reproject's own
    ``reproject_and_coadd`` gives the same arrays.

    >>> import numpy as np
    >>> from astropy.wcs import WCS
    >>> from reproject_rs import reproject_interp
    >>> from reproject_rs.mosaicking import reproject_and_coadd
    >>> header = {"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 10.0, "CRVAL2": 20.0,
    ...           "CDELT1": -0.01, "CDELT2": 0.01, "CRPIX1": 16.0, "CRPIX2": 16.0}
    >>> left = (np.ones((32, 32)), WCS(header))                         # columns 0-31
    >>> right = (np.full((32, 32), 3.0), WCS(dict(header, CRPIX1=0.0)))  # columns 16-47
    >>> array, footprint = reproject_and_coadd(
    ...     [left, right], WCS(header), shape_out=(32, 48),
    ...     reproject_function=reproject_interp, combine_function="mean")
    >>> [float(array[16, x]) for x in (8, 24, 40)]      # left only, overlap, right only
    [1.0, 2.0, 3.0]
    >>> [float(footprint[16, x]) for x in (8, 24, 40)]
    [1.0, 2.0, 1.0]
    >>> import reproject, reproject.mosaicking
    >>> expected, expected_footprint = reproject.mosaicking.reproject_and_coadd(
    ...     [left, right], WCS(header), shape_out=(32, 48),
    ...     reproject_function=reproject.reproject_interp, combine_function="mean")
    >>> bool(np.allclose(array, expected) and np.allclose(footprint, expected_footprint))
    True
    """
    if combine_function not in COMBINE_FUNCTIONS:
        raise ValueError(
            "combine_function should be one of mean/sum/first/last/min/max/median/clipped"
        )
    if reproject_function is None:
        raise ValueError(
            "reprojection function should be specified with the reproject_function argument"
        )
    if "block_size" in kwargs and kwargs["block_size"] is not None:
        if block_sizes is not None:
            raise ValueError("Cannot specify block_sizes= and block_size= at the same time")
        block_sizes = kwargs.pop("block_size")
    kwargs.pop("block_size", None)
    background = _parse_background(match_background)
    clip = _parse_clip(combine_function, clip_sigma, clip_ampfrac)
    if return_type is None:
        return_type = "numpy"
    elif return_type not in ("numpy", "dask"):
        raise ValueError("return_type should be set to 'numpy' or 'dask'")
    if device is not None:
        device = parse_device(device)
    if progress_bar is None:
        progress_bar = _noop

    parsed_out, shape_out = parse_output_projection(output_projection, shape_out=shape_out)
    if output_array is not None and output_array.shape != shape_out:
        raise ValueError(
            "If you specify an output array, it must have a shape matching "
            f"the output shape {shape_out}"
        )
    if output_footprint is not None and output_footprint.shape != shape_out:
        raise ValueError(
            "If you specify an output footprint array, it must have a shape matching "
            f"the output shape {shape_out}"
        )
    if return_type == "dask" and (output_array is not None or output_footprint is not None):
        raise ValueError(
            "output_array and output_footprint cannot be used with return_type='dask'"
        )

    common = dict(
        combine_function=combine_function,
        background=background,
        # reproject ignores a reference of 0 (``if background_reference:``): so does this.
        background_reference=background_reference if background_reference else None,
        blank_pixel_value=blank_pixel_value,
        progress_bar=progress_bar,
        clip=clip,
    )
    interp = _is_interp(reproject_function)
    with contextlib.ExitStack() as stack:  # files opened while parsing stay open until done
        if interp and set(kwargs) <= _FAST_KWARGS:
            fast = _fast_inputs(
                input_data, input_weights, hdu_in, hdu_weights, parsed_out, shape_out,
                kwargs, stack,
            )
            if fast is not None and _outputs_allow_fast(
                output_array, output_footprint, combine_function
            ):
                return _fast_coadd(
                    fast, parsed_out, shape_out, output_array, output_footprint, block_sizes,
                    kwargs, return_type, device, **common,
                )
        from ._generic import generic_coadd

        if interp:
            from .._high_level import reproject_interp as function

            if device is not None:
                kwargs = dict(kwargs, device=device)
        else:
            if device is not None:
                raise ValueError(
                    "device= is for reproject_rs.reproject_interp; "
                    f"{getattr(reproject_function, '__name__', reproject_function)} takes none"
                )
            function = reproject_function
        result = generic_coadd(
            input_data,
            output_projection,
            parsed_out,
            shape_out,
            input_weights=input_weights,
            hdu_in=hdu_in,
            hdu_weights=hdu_weights,
            reproject_function=function,
            output_array=output_array,
            output_footprint=output_footprint,
            block_sizes=block_sizes,
            intermediate_memmap=intermediate_memmap,
            kwargs=kwargs,
            stack=stack,
            **common,
        )
    if return_type == "dask":
        return _wrap_dask(result, _engine_block(block_sizes, shape_out))
    return result


def _noop(iterable):
    return iterable


def _parse_clip(combine_function, sigma, ampfrac):
    """``(sigma, ampfrac)`` of 'clipped', checked: finite and non-negative, and left at their
    defaults for the other combine functions."""
    clip = (float(sigma), float(ampfrac))
    if not all(np.isfinite(v) and v >= 0 for v in clip):
        raise ValueError(
            f"clip_sigma and clip_ampfrac must be finite and non-negative, got {sigma}, {ampfrac}"
        )
    if combine_function != "clipped" and clip != (CLIP_SIGMA, CLIP_AMPFRAC):
        raise ValueError("clip_sigma and clip_ampfrac apply to combine_function='clipped'")
    return clip


def _parse_background(match_background) -> str:
    """'none', 'offset' or 'plane' from ``match_background``."""
    if isinstance(match_background, str):
        if match_background in ("offset", "plane"):
            return match_background
        if match_background == "none":
            return "none"
        raise ValueError(
            "match_background should be True, False, 'offset' or 'plane', "
            f"got {match_background!r}"
        )
    return "offset" if match_background else "none"


def _is_interp(function) -> bool:
    """Whether ``function`` is reproject_rs's or reproject's ``reproject_interp``."""
    from .._high_level import reproject_interp

    if function is reproject_interp:
        return True
    return (
        getattr(function, "__module__", None) == "reproject.interpolation._high_level"
        and getattr(function, "__name__", None) == "reproject_interp"
    )


# ----------------------------------------------------------------------------------------
# Inputs of the fast path


class _FastInput:
    """One dataset as the core reads it: the array (engine dtype), its header text, and the
    weights (array with NaN left for the core to read as 0) with their header text (None:
    the dataset's)."""

    __slots__ = ("array", "header", "parsed", "weights", "weights_header")

    def __init__(self, array, parsed, weights=None, weights_header=None):
        self.array = array
        self.header = parsed.header
        self.parsed = parsed
        self.weights = weights
        self.weights_header = weights_header

    @property
    def wcs(self):
        """The astropy WCS (built on first use for a Header: see ``ParsedWCS``)."""
        return self.parsed.wcs


def _engine_ready(parsed: ParsedWCS) -> bool:
    """Whether the engine reads this WCS as it is (FITS header text, celestial axes first)."""
    return parsed.header is not None and _celestial_first(parsed).perm is None


def _fast_inputs(input_data, input_weights, hdu_in, hdu_weights, parsed_out, shape_out, kwargs,
                 stack):
    """The datasets (and weights) as :class:`_FastInput`, or None when one of them needs the
    generic path (a WCS the engine does not evaluate, weights of another shape than their
    data, an input the engine refuses). Raises reproject_interp's errors for inconsistent
    WCS and shapes."""
    if not _engine_ready(parsed_out):
        return None
    order = parse_order(kwargs.get("order", "bilinear"))
    inputs = []
    for idata in range(len(input_data)):
        array, parsed = parse_input_data(input_data[idata], hdu_in=hdu_in, stack=stack)
        if is_dask(array):
            array = array.compute()
        array = normalise_dtype(np.asarray(array))
        if not _engine_ready(parsed):
            return None
        full = _full_shape(array.shape, shape_out)
        validate_wcs(parsed, parsed_out, array.shape, full)
        if not _engine_accepts(parsed.header, parsed_out.header, array.shape, full, order):
            return None
        item = _FastInput(array, parsed)
        if input_weights is not None:
            weights, parsed_w = parse_input_weights(
                input_weights[idata], hdu_weights=hdu_weights, stack=stack
            )
            if parsed_w is not None:
                try:
                    validate_wcs(parsed_w, parsed, weights.shape, shape_out)
                except ValueError:
                    parsed_w = None  # most likely a blank WCS: the dataset's is used
            weights = np.asarray(weights)
            if np.any(np.isnan(weights)) and np.any(np.isinf(weights)):
                weights = np.nan_to_num(weights)  # reproject's: infinities become finite too
            weights = normalise_dtype(weights)
            if weights.shape != array.shape:
                return None
            if parsed_w is not None:
                if not _engine_ready(parsed_w) or not _engine_accepts(
                    parsed_w.header, parsed_out.header, weights.shape, full, order
                ):
                    return None
                item.weights_header = parsed_w.header
            item.weights = weights
        inputs.append(item)
    return inputs


def _engine_accepts(header_in, header_out, shape_in, shape_out, order) -> bool:
    """Whether the engine reprojects this pair itself (``_core.check_plan``)."""
    if 0 in shape_in or 0 in shape_out:
        return False
    try:
        _core.check_plan(header_in, header_out, list(shape_in), list(shape_out), order=order)
    except _core.ReprojectError:
        return False
    return True


def _full_shape(shape_in, shape_out):
    """``shape_out`` with the input's leading dimensions when it gives only the plane."""
    if len(shape_out) == 2 and len(shape_in) > 2:
        return (*shape_in[:-2], *shape_out)
    return tuple(shape_out)


def parse_input_weights(input_weights, hdu_weights=None, stack=None):
    """reproject's ``parse_input_weights``: ``(array, ParsedWCS or None)``; None when the
    weights have no WCS of their own (an array, an HDU whose header has no CTYPE1)."""
    from astropy.io import fits

    if isinstance(input_weights, str):
        hdul = fits.open(input_weights)
        if stack is not None:
            stack.callback(hdul.close)
        return parse_input_data(hdul, hdu_in=hdu_weights, stack=stack)
    if isinstance(input_weights, fits.HDUList):
        if hdu_weights is None:
            if len(input_weights) > 1:
                raise ValueError(
                    "More than one HDU is present, please specify "
                    "HDU to use with ``hdu_weights=`` option"
                )
            hdu_weights = 0
        return parse_input_data(input_weights[hdu_weights], stack=stack)
    if isinstance(input_weights, (fits.PrimaryHDU, fits.ImageHDU, fits.CompImageHDU)):
        if "CTYPE1" in input_weights.header:
            return parse_input_data(input_weights, stack=stack)
        return input_weights.data, None
    if isinstance(input_weights, np.ndarray):
        return input_weights, None
    raise TypeError("input_weights should either be an HDU object or a Numpy array")


def _outputs_allow_fast(output_array, output_footprint, combine_function) -> bool:
    """Whether the caller's output arrays hold nothing reproject would combine with: a
    footprint of zeros, and data of zeros for 'mean', 'sum', 'first' and 'last' ('min' and
    'max' overwrite the data first; 'median' and 'clipped' always overwrite)."""
    if combine_function in ("median", "clipped"):
        return True
    if output_footprint is not None and _any_nonzero(output_footprint):
        return False
    if output_array is not None and combine_function not in ("min", "max"):
        if _any_nonzero(output_array):
            return False
    return True


def _any_nonzero(array) -> bool:
    """Whether ``array`` holds anything but zeros, read in slabs of at most 64 MiB."""
    array = np.asarray(array)
    if array.ndim == 0 or array.size == 0:
        return bool(array.size and array.item() != 0)
    step = max(1, (64 * 1024**2) // max(1, array[0].nbytes))
    for start in range(0, array.shape[0], step):
        if np.any(array[start : start + step]):
            return True
    return False


# ----------------------------------------------------------------------------------------
# The fast path


def _engine_block(block_sizes, shape_out):
    """The output block (rows, columns) from ``block_sizes``/``block_size``: its last two
    entries (-1: the whole axis); None when not given or given per dataset."""
    if block_sizes is None or isinstance(block_sizes, str):
        return None
    entries = list(block_sizes)
    if entries and all(isinstance(e, (tuple, list)) for e in entries):
        return None  # one per dataset: a reprojection detail, not the mosaic's block
    if len(entries) < 2 or not all(isinstance(e, numbers.Integral) for e in entries):
        raise ValueError(f"block_sizes should be a tuple of integers, got {block_sizes!r}")
    rows, cols = int(entries[-2]), int(entries[-1])
    rows = shape_out[-2] if rows == -1 else rows
    cols = shape_out[-1] if cols == -1 else cols
    if rows <= 0 or cols <= 0:
        raise _core.InvalidArgumentError(f"block_size must be positive, got {block_sizes}")
    return rows, cols


def _fast_coadd(
    inputs, parsed_out, shape_out, output_array, output_footprint, block_sizes, kwargs,
    return_type, device, *, combine_function, background, background_reference,
    blank_pixel_value, progress_bar, clip,
):
    """The mosaic by the core: numpy arrays (in the caller's arrays where it can write
    them), or dask arrays of output blocks."""
    full = _full_shape(inputs[0].array.shape, shape_out) if inputs else tuple(shape_out)
    parallel = kwargs.get("parallel", False)
    core_kwargs = dict(
        combine=combine_function,
        clip_sigma=clip[0],
        clip_ampfrac=clip[1],
        background=background,
        background_reference=background_reference,
        blank_pixel_value=float(blank_pixel_value),
        order=parse_order(kwargs.get("order", "bilinear")),
        roundtrip_coords=bool(kwargs.get("roundtrip_coords", True)),
        nan_policy=kwargs.get("nan_policy", "propagate"),
        precision=kwargs.get("precision", "reproject"),
        threads=0 if isinstance(parallel, str) else parallel_threads(parallel),
        device=device or "cpu",
    )
    block = _engine_block(block_sizes, full)
    if background_reference is not None:
        core_kwargs["background_reference"] = (
            _reference_input(inputs, parsed_out, full, background_reference)
            if background != "none"
            else None
        )
    arrays = [i.array for i in inputs]
    headers = [i.header for i in inputs]
    weights = [i.weights for i in inputs]
    weight_headers = [i.weights_header for i in inputs]
    if return_type == "dask":
        for _ in progress_bar(range(len(inputs))):
            pass
        return _fast_dask(
            arrays, headers, weights, weight_headers, parsed_out.header, full, block,
            core_kwargs,
        )
    if device is not None:
        select_device(device)  # a 'cuda' GPU that cannot be used: the reason, now
    if not inputs:
        for _ in progress_bar(range(0)):
            pass
        return _blank_result(full, blank_pixel_value, output_array, output_footprint)

    direct_out = output_array if _core_writable(output_array) else None
    direct_fp = output_footprint if _core_writable(output_footprint) else None
    if direct_out is not None and direct_fp is not None and np.may_share_memory(
        direct_out, direct_fp
    ):
        direct_fp = None
    progress = None if progress_bar is _noop else _Progress(progress_bar, len(inputs))
    with progress or contextlib.nullcontext():
        data, footprint, corrections = _core.reproject_and_coadd(
            arrays, headers, parsed_out.header, list(full),
            weights=weights, weight_headers=weight_headers, block_size=block,
            output_array=direct_out, output_footprint=direct_fp, progress=progress,
            **core_kwargs,
        )
    logger.info("Background corrections: %s", corrections)
    if output_array is not None and data is not output_array:
        output_array[...] = data
        data = output_array
    if output_footprint is not None and footprint is not output_footprint:
        output_footprint[...] = footprint
        footprint = output_footprint
    return data, footprint


def _reference_input(inputs, parsed_out, full, background_reference):
    """The input that reproject's ``background_reference`` names: reproject indexes the list
    of the datasets that overlap the output (numpy indexing: negative indices count from
    the end, an IndexError past it), and ignores it with fewer than two of them."""
    from ._generic import covered_bounds, reproject_style_output

    wcs_out = reproject_style_output(None, parsed_out)
    kept = [
        k
        for k, item in enumerate(inputs)
        if covered_bounds(item.array.shape, item.wcs, wcs_out, full)[0] is not None
    ]
    if len(kept) <= 1:
        return None
    return int(np.array(kept)[background_reference])


def _core_writable(a) -> bool:
    """Whether the core writes ``a`` in place (a native, C-contiguous, aligned, writeable
    float64 numpy array)."""
    return (
        isinstance(a, np.ndarray)
        and a.dtype == np.float64
        and a.dtype.isnative
        and a.flags.c_contiguous
        and a.flags.aligned
        and a.flags.writeable
    )


def _blank_result(shape, blank_pixel_value, output_array, output_footprint):
    """reproject's mosaic of no input: blank everywhere, zero footprint."""
    if output_array is None:
        output_array = np.zeros(shape)
    if output_footprint is None:
        output_footprint = np.zeros(shape)
    output_array[...] = blank_pixel_value
    output_footprint[...] = 0
    return output_array, output_footprint


class _Progress:
    """Advances the iterator of ``progress_bar(range(n))`` as the core combines output blocks
    (``progress(done, total)``, called with the GIL from the core's threads), and exhausts it
    at the end (so that e.g. tqdm closes)."""

    def __init__(self, progress_bar, n):
        self._iterator = iter(progress_bar(range(n)))
        self._n = n
        self._advanced = 0
        self._lock = threading.Lock()

    def __call__(self, done, total):
        target = (done * self._n) // max(total, 1)
        with self._lock:
            while self._advanced < target:
                self._advanced += 1
                next(self._iterator, None)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            for _ in self._iterator:
                pass
        return False


# ----------------------------------------------------------------------------------------
# Dask results


def _fast_dask(arrays, headers, weights, weight_headers, header_out, full, block, core_kwargs):
    """Lazy ``(data, footprint)`` dask arrays: each output block one core call on its window
    of the output (the inputs one graph key), bit-identical to the same pixels of the whole
    mosaic. With background matching, the corrections (which need every overlap) are one task
    computed once, and every block is given them."""
    import dask
    import dask.array as da

    lead = len(full) - 2
    if block is not None:
        template = da.empty(full, chunks=tuple(full[:lead]) + tuple(block))
    else:
        template = da.empty(full).rechunk(
            block_size_limit=64 * 1024**2, chunks=(-1,) * lead + ("auto", "auto")
        )
    if not arrays:
        data = da.full(full, float(core_kwargs["blank_pixel_value"]), chunks=template.chunks)
        return data, da.zeros(full, chunks=template.chunks)
    core_kwargs = dict(core_kwargs, threads=1)
    inputs = dict(headers=tuple(headers), weight_headers=tuple(weight_headers),
                  header_out=header_out, full=tuple(full), core_kwargs=core_kwargs)
    sources = dask.delayed((tuple(arrays), tuple(weights)), pure=True)
    if core_kwargs["background"] != "none":
        corrections = dask.delayed(_corrections, pure=True)(sources, **inputs)
    else:
        corrections = None
    stacked = da.map_blocks(
        _window_stacked,
        template,
        sources,
        corrections,
        dtype=np.float64,
        new_axis=0,
        chunks=((2,),) + template.chunks,
        meta=np.empty((0,) * (template.ndim + 1), dtype=np.float64),
        **inputs,
    )
    return stacked[0], stacked[1]


def _corrections(sources, *, headers, weight_headers, header_out, full, core_kwargs):
    """The background corrections of every input (one dask task)."""
    arrays, weights = sources
    return _core.background_corrections(
        list(arrays), list(headers), header_out, list(full), weights=list(weights),
        weight_headers=list(weight_headers), **core_kwargs,
    )


def _window_stacked(template, sources, corrections, block_info=None, *, headers,
                    weight_headers, header_out, full, core_kwargs):
    """One dask block: the mosaic over the block's rows and columns (with the corrections
    computed once, when backgrounds are matched), as a float64 array of shape ``(2,
    *block)``. Module-level, so it pickles."""
    if not block_info or 0 not in block_info:
        return np.empty((2,) + (0,) * template.ndim)
    (r0, r1), (c0, c1) = block_info[0]["array-location"][-2:]
    shape = (*full[:-2], r1 - r0, c1 - c0)
    arrays, weights = sources
    result = np.empty((2, *shape))
    _core.reproject_and_coadd(
        list(arrays), list(headers), header_out, list(full), weights=list(weights),
        weight_headers=list(weight_headers), output_array=result[0],
        output_footprint=result[1], window=((r0, r1), (c0, c1)),
        corrections=None if corrections is None else list(corrections), **core_kwargs,
    )
    return result


def _wrap_dask(result, block):
    """A computed ``(data, footprint)`` as dask arrays chunked by ``block``."""
    import dask.array as da

    data, footprint = result
    chunks = "auto" if block is None else (*data.shape[:-2], *block)
    return da.from_array(data, chunks=chunks), da.from_array(footprint, chunks=chunks)

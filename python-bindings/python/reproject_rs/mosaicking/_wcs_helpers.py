"""``find_optimal_celestial_wcs``, a drop-in for reproject 0.21's, computed by the Rust core
(``reproject::mosaic::optimal_wcs``) for FITS WCS; other WCS (and frames the core does not
know) go to reproject's own function when reproject is installed."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .. import _core
from .._parse import _parsed_from_header, _parsed_from_text, _parsed_from_wcs

__all__ = ["find_optimal_celestial_wcs"]

#: Longitude CTYPEs for which reproject's 'auto' gives a negative CDELT1.
NEGATIVE_CDELT_CTYPES = ["RA--", "GLON", "ELON", "HLON", "SLON"]

#: astropy frame names the core knows (default equinoxes only).
_FRAMES = {"icrs", "fk5", "fk4", "fk4noeterms", "galactic", "supergalactic"}


#: reproject's own function, when a test harness has put ours in its place (see
#: python-bindings/tests/upstream/substitute_reproject_and_coadd.py).
_THEIRS = None


class _Fallback(Exception):
    """The core cannot take this request: reproject's function can."""


def _is_single(input_data):
    from astropy.io.fits import Header
    from astropy.wcs.wcsapi import BaseHighLevelWCS, BaseLowLevelWCS

    if isinstance(input_data, (str, Path)):
        return True
    if np.iterable(input_data):
        return len(input_data) == 2 and isinstance(
            input_data[1], (BaseLowLevelWCS, BaseHighLevelWCS, Header)
        )
    return True


def _shape_and_header(item, hdu_in):
    """(shape, header text) of one input, in every form reproject accepts."""
    from astropy.io import fits
    from astropy.io.fits import Header
    from astropy.nddata import NDDataBase
    from astropy.wcs.wcsapi import BaseHighLevelWCS, BaseLowLevelWCS

    if isinstance(item, (str, Path)):
        if str(item).lower().endswith((".png", ".jpg", ".jpeg")):
            raise _Fallback  # AVM-tagged images: reproject reads their WCS
        with fits.open(item) as hdul:
            return _shape_and_header(hdul, hdu_in)
    if isinstance(item, fits.HDUList):
        if hdu_in is None:
            if len(item) > 1:
                raise ValueError(
                    "More than one HDU is present, please specify HDU to use with "
                    "``hdu_in=`` option"
                )
            hdu_in = 0
        return _shape_and_header(item[hdu_in], hdu_in)
    if isinstance(item, (fits.PrimaryHDU, fits.ImageHDU, fits.CompImageHDU)):
        return tuple(item.shape), _parsed_from_header(item.header)
    if isinstance(item, NDDataBase):
        return tuple(item.data.shape), _parsed_from_wcs(item.wcs)
    if isinstance(item, (BaseLowLevelWCS, BaseHighLevelWCS)):
        low = getattr(item, "low_level_wcs", item)
        if low.array_shape is None:
            raise ValueError("The WCS object should have array_shape set")
        return tuple(low.array_shape), _parsed_from_wcs(item)
    if isinstance(item, tuple) and len(item) == 2:
        first, wcs = item
        shape = tuple(first.shape) if hasattr(first, "shape") else tuple(first)
        if isinstance(wcs, str):
            return shape, _parsed_from_text(wcs)
        if isinstance(wcs, Header):
            return shape, _parsed_from_header(wcs)
        return shape, _parsed_from_wcs(wcs)
    raise TypeError(
        "input_data should either be an HDU object or a tuple of (array, WCS) or (array, Header)"
    )


def _frame_name(frame):
    """The core's name of an astropy frame (or frame name), or _Fallback."""
    if frame is None:
        return None
    if isinstance(frame, str):
        name = frame.lower()
    else:
        name = frame.name
        equinox = getattr(frame, "equinox", None)
        defaults = {"fk5": "J2000.000", "fk4": "B1950.000", "fk4noeterms": "B1950.000"}
        if equinox is not None and name in defaults and equinox.to_string() != defaults[name]:
            raise _Fallback
    if name not in _FRAMES:
        raise _Fallback
    return name


def find_optimal_celestial_wcs(
    input_data,
    hdu_in=None,
    frame=None,
    auto_rotate=False,
    projection="TAN",
    resolution=None,
    reference=None,
    negative_lon_cdelt=None,
):
    """Given one or more images, return an optimal WCS projection object and shape, as
    ``reproject.mosaicking.find_optimal_celestial_wcs`` (reproject 0.21) does: same inputs,
    keywords, results and errors. Computed by the reproject-rs core for FITS WCS.

    Returns ``(wcs, shape)``: an ``astropy.wcs.WCS`` and the ``(rows, columns)`` covering
    every input.

    Examples
    --------
    For one image, the optimal WCS is the image's own, with its shape; for two images
    side by side (the second 16 columns to the right), it covers both.

    >>> import numpy as np
    >>> from astropy.wcs import WCS
    >>> from reproject_rs.mosaicking import find_optimal_celestial_wcs
    >>> header = {"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 10.0, "CRVAL2": 20.0,
    ...           "CDELT1": -0.01, "CDELT2": 0.01, "CRPIX1": 16.0, "CRPIX2": 16.0}
    >>> left = (np.zeros((32, 32)), WCS(header))
    >>> wcs, shape = find_optimal_celestial_wcs(left)
    >>> shape, [float(c) for c in wcs.wcs.cdelt], [float(c) for c in wcs.wcs.crval]
    ((32, 32), [-0.01, 0.01], [10.0, 20.0])
    >>> right = (np.zeros((32, 32)), WCS(dict(header, CRPIX1=0.0)))
    >>> find_optimal_celestial_wcs([left, right])[1]
    (32, 48)
    """
    from astropy import units as u
    from astropy.wcs import WCS

    items = [input_data] if _is_single(input_data) else list(input_data)
    try:
        shapes, headers = [], []
        for item in items:
            shape, parsed = _shape_and_header(item, hdu_in)
            # reproject's checks and messages (a celestial image's header has two pixel and
            # two world axes without astropy's WCS being built).
            if parsed.celestial_image:
                dims = (2, 2)
            elif parsed.wcs is not None:
                dims = (parsed.wcs.pixel_n_dim, parsed.wcs.world_n_dim)
            else:
                dims = None
            n = dims[0] if dims is not None else len(shape)
            if len(shape) > n:
                shape = shape[-n:]
            if len(shape) != 2:
                raise ValueError(f"Input data is not 2-dimensional (got shape {shape!r})")
            if dims is not None and dims != (2, 2):
                raise ValueError("Input WCS is not 2-dimensional")
            # A WCS given through APE-14 (not astropy.wcs.WCS) has its reference at the
            # image centre in reproject, not at CRPIX: reproject's function takes it.
            if parsed.header is None or not parsed.is_fits:
                raise _Fallback
            shapes.append([int(s) for s in shape])
            headers.append(parsed.header)
        name = _frame_name(frame)
        ref = None
        if reference is not None:
            sph = reference.spherical
            ref = (float(sph.lon.deg), float(sph.lat.deg), _frame_name(reference.frame))
        res = None if resolution is None else float(u.Quantity(resolution).to_value(u.deg))
        sign = {None: "true", True: "true", False: "false", "auto": "auto"}.get(
            negative_lon_cdelt, "true"
        )
        try:
            text, shape = _core.optimal_celestial_wcs_header(
                shapes,
                headers,
                frame=name,
                projection=projection,
                resolution=res,
                reference=ref,
                auto_rotate=bool(auto_rotate),
                negative_lon_cdelt=sign,
            )
        except _core.UnsupportedError:
            raise _Fallback from None
    except _Fallback:
        try:
            theirs = _THEIRS
            if theirs is None:
                from reproject.mosaicking._wcs_helpers import find_optimal_celestial_wcs as theirs
        except ImportError:
            raise _core.UnsupportedError(
                "this find_optimal_celestial_wcs request (a non-FITS WCS or a frame the "
                "reproject-rs core does not know) needs astropy reproject installed"
            ) from None
        return theirs(
            input_data,
            hdu_in=hdu_in,
            frame=frame,
            auto_rotate=auto_rotate,
            projection=projection,
            resolution=resolution,
            reference=reference,
            negative_lon_cdelt=negative_lon_cdelt,
        )
    from astropy.io.fits import Header

    wcs = WCS(Header.fromstring(text, sep="\n"))
    if negative_lon_cdelt is None and wcs.wcs.ctype[0][:4] not in NEGATIVE_CDELT_CTYPES:
        warnings.warn(
            "negative_lon_cdelt is not set, and currently defaults to True, but in future "
            "will change to 'auto', and for this WCS this will evaluate to False in future. "
            "It is recommended that you set negative_lon_cdelt explicitly, either to 'auto', "
            "or to True/False.",
            DeprecationWarning,
            stacklevel=2,
        )
    return wcs, tuple(shape)

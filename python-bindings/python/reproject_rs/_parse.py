"""Turning reproject's input and output forms into (array, header text).

All the mathematics happens in the Rust engine; this module only finds the data and the
FITS header text describing its WCS. astropy is optional: without it, inputs must be
``(array, header_text)`` tuples and outputs header text.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from . import _core
from ._arrays import is_cuda_array, is_dask

__all__ = ["ParsedWCS", "parse_input_data", "parse_output_projection"]


def _astropy():
    """astropy's modules, or None when astropy is not installed."""
    try:
        from astropy.io import fits
        from astropy.wcs import WCS
    except ImportError:  # pragma: no cover - exercised only without astropy
        return None
    return fits, WCS


class ParsedWCS:
    """A WCS as the engine sees it: header text, plus the astropy WCS when there is one.

    ``header``: FITS header text for the engine; None for a WCS it does not read (a
    generalized APE-14 WCS, whose positions astropy computes; lookup-table distortions,
    whose positions the engine computes with the tables beside the text,
    ``engine_lookup_tables``).
    ``wcs``: astropy.wcs.WCS (FITS WCS) when astropy is available, for validation; the APE-14
    object itself when ``header`` is None. A celestial image's Header (``lazy``) builds it
    only when asked: the engine's reading of the text answers the checks of most calls.
    ``is_fits``: whether the caller gave a FITS WCS or Header (not an APE-14 wrapper):
    reproject checks spectral axes only then. ``perm``: numpy-order permutation applied to
    the WCS axes (None: identity), see ``reorder``.
    """

    def __init__(self, header, wcs=None, is_fits=True, perm=None, *, lazy=None):
        self.header: str | None = header
        self._wcs: Any = wcs
        self.is_fits: bool = is_fits
        self.perm: tuple | None = perm
        #: The Header ``wcs`` is built from on first use; given only for a WCS of two
        #: celestial axes without lookup tables.
        self._lazy = lazy
        self._celestial_image = lazy is not None

    @property
    def wcs(self):
        if self._lazy is not None:
            self._wcs, self._lazy = _astropy_wcs(self._lazy), None
        return self._wcs

    @property
    def celestial_image(self) -> bool:
        """Known, without astropy, to have just two axes, celestial longitude and latitude
        (so no spectral axis): reproject's WCS checks need nothing more."""
        return self._celestial_image

    @property
    def pixel_n_dim(self) -> int:
        if self._lazy is not None:
            return 2
        if self.wcs is not None:
            return self.wcs.pixel_n_dim
        return _core.check_header(self.header)


def _celestial_image(text: str) -> bool:
    """Whether the engine reads header text as a WCS of two celestial axes."""
    try:
        naxis, celestial = _core.header_axes(text)
    except _core.ReprojectError:
        return False
    return naxis == 2 and celestial is not None


# ----------------------------------------------------------------------------------------
# WCS objects -> header text


def _unwrap_fits_wcs(wcs):
    """The astropy.wcs.WCS an APE-14 object stands for, or None.

    Handles astropy.wcs.WCS itself, HighLevelWCSWrapper and any object whose
    ``low_level_wcs`` leads to one, and SlicedLowLevelWCS of one (see ``_fits_slice``).
    """
    _, WCS = _astropy()
    from astropy.wcs.wcsapi import SlicedLowLevelWCS

    for _ in range(32):
        if isinstance(wcs, WCS):
            return wcs
        if isinstance(wcs, SlicedLowLevelWCS):
            inner = _unwrap_fits_wcs(wcs._wcs)
            return None if inner is None else _fits_slice(inner, list(wcs._slices_pixel))
        low = getattr(wcs, "low_level_wcs", None)
        if low is None or low is wcs:
            return None
        wcs = low
    return None


def _fits_slice(inner, slices):
    """The astropy.wcs.WCS equal to ``SlicedLowLevelWCS(inner, slices)`` (``slices`` in
    pixel order, as the sliced WCS holds them), or None when there is none.

    Plain slices become ``WCS.slice``. An integer drops its pixel axis (a plane of a cube):
    the slice is the FITS WCS of the kept axes (``WCS.sub``) when no kept world axis depends
    on a dropped pixel axis and no dropped world axis on a kept one, as for a cube whose
    spectral or Stokes axis is cut away; astropy then gives the same coordinates either way.
    Otherwise (a dropped axis coupled to the kept ones by the PC matrix or a celestial pair)
    there is none, and astropy computes the positions (``_positions``).
    """
    kept = [i for i, s in enumerate(slices) if isinstance(s, slice)]
    if len(kept) < len(slices):
        corr = np.asarray(inner.axis_correlation_matrix, dtype=bool)  # world x pixel
        dropped = [i for i in range(len(slices)) if i not in kept]
        world = [w for w in range(corr.shape[0]) if corr[w, kept].any()]
        if not kept or world != kept or corr[np.ix_(world, dropped)].any():
            return None
        shape_known = inner.pixel_shape is not None
        inner = inner.sub([i + 1 for i in kept])
        if not shape_known:
            inner.pixel_shape = None  # WCS.sub keeps one 0 per axis of the cube, not of the sub
        slices = [slices[i] for i in kept]
    if all(s.start in (None, 0) and s.stop is None and s.step in (None, 1) for s in slices):
        return inner
    return inner.slice(tuple(slices), numpy_order=False)


def wcs_to_header(wcs) -> str:
    """FITS header text of an astropy.wcs.WCS (SIP and TPV kept), holding the values the object
    holds, as reproject computes with the object itself.

    This is WCSLIB's own text (``Wcsprm.to_header``), with the cards of
    ``WCS.to_header(relax=True)``. astropy writes 14 significant digits and then parses the
    text into a Header only to drop its blank and COMMENT cards, which the engine skips
    anyway; here every value has 17 digits (a double read back unchanged), and astropy does
    not parse and verify each card twice (most of a small job's time). SIP coefficients,
    which WCSLIB does not hold, follow as cards of their own (``_sip_cards``), as
    ``WCS.to_header`` appends them.
    """
    beyond = _beyond_header(wcs)
    if beyond is not None:
        raise _core.UnsupportedError(f"{beyond}: no FITS header describes this WCS")
    return _header_text(wcs)


def _header_text(wcs) -> str:
    """``wcs_to_header`` of a WCS that ``_beyond_header`` lets through."""
    if wcs.wcs is not None and wcs.wcs.alt.strip():
        # An alternate description (``WCS(header, key="A")``) writes keywords with its letter
        # (``CTYPE1A``); the engine reads the primary ones, so a copy is written as primary.
        wcs = wcs.deepcopy()
        wcs.wcs.alt = " "
    if wcs.wcs is not None:
        from astropy.wcs import WCSHDO_P17, WCSHDO_all

        # WCS.to_header(relax=True)'s flags, with 17 digits where astropy asks for 14.
        text = wcs.wcs.to_header(WCSHDO_P17 | WCSHDO_all)
        if wcs.sip is None:
            return text
        # A CTYPE without "-SIP" beside SIP coefficients is one astropy rewrites (and says
        # so): its path keeps that behaviour.
        if all(ctype.endswith("-SIP") for ctype in wcs.wcs.ctype):
            sip = _sip_cards(wcs.sip)
            if sip is not None:
                return text + sip
    return wcs.to_header(relax=True).tostring()


def _sip_cards(sip) -> str | None:
    """The cards ``WCS.to_header`` writes for SIP coefficients (``A_ORDER``, then each
    nonzero ``A_i_j``; likewise B, AP and BP), as 80-character cards; None when one is not
    finite or its keyword is too long for a card. Each value has all its digits (``repr``):
    astropy's Header cuts a value to 20 characters.
    """
    cards = []
    for name, coefficients in (("A", sip.a), ("B", sip.b), ("AP", sip.ap), ("BP", sip.bp)):
        if coefficients is None:
            continue
        size = coefficients.shape[0]
        cards.append(f"{name}_ORDER".ljust(8) + f"= {size - 1:>20}")
        for i in range(size):
            for j in range(size - i):
                value = float(coefficients[i, j])
                if value == 0.0:
                    continue
                if not np.isfinite(value):
                    return None
                key = f"{name}_{i}_{j}"
                if len(key) > 8:  # a HIERARCH card in astropy's Header
                    return None
                cards.append(key.ljust(8) + f"= {_fits_real(value):>20}")
    return "".join(card.ljust(80) for card in cards)


def _fits_real(value: float) -> str:
    """A float as a FITS real value that reads back to the same double: ``repr``'s shortest
    digits, with a decimal point and an upper-case, signed exponent (``1.5E-06``)."""
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent):+03d}" if exponent else mantissa


def _parsed_from_wcs(obj) -> ParsedWCS:
    mods = _astropy()
    if mods is None:
        raise TypeError("WCS objects need astropy; pass FITS header text instead")
    _, WCS = mods
    fits_wcs = _unwrap_fits_wcs(obj)
    if fits_wcs is None:
        if not _is_ape14(obj):
            raise TypeError(f"not a WCS: {type(obj).__name__}")
        return ParsedWCS(None, obj, is_fits=False)  # astropy computes its positions
    if _beyond_header(fits_wcs) is not None:
        return ParsedWCS(None, fits_wcs, is_fits=isinstance(obj, WCS))
    return ParsedWCS(_header_text(fits_wcs), fits_wcs, is_fits=isinstance(obj, WCS))


def _beyond_header(wcs) -> str | None:
    """What of an astropy WCS its header text would not hold, or None: distortion lookup
    tables (CPDIS/D2IM), which live in other HDUs (the engine takes them as arrays beside the
    text, ``engine_lookup_tables``); a SIP polynomial whose origin (``Sip.crpix``) is not
    CRPIX has no FITS keyword (a header's SIP takes CRPIX: astropy computes such a WCS's
    positions)."""
    if _has_lookup_tables(wcs):
        return "distortion lookup tables (CPDIS/D2IM)"
    sip = wcs.sip
    if sip is not None and wcs.wcs is not None:
        if not np.array_equal(np.asarray(sip.crpix), np.asarray(wcs.wcs.crpix)[:2]):
            return f"a SIP origin {list(sip.crpix)} other than CRPIX {list(wcs.wcs.crpix)}"
    return None


#: astropy's attributes for the lookup tables, in the order ``_core.input_positions`` takes.
_LOOKUP_TABLES = ("det2im1", "det2im2", "cpdis1", "cpdis2")


def engine_lookup_tables(parsed: ParsedWCS):
    """``(header text, tables)`` for ``_core.input_positions``: the engine's description of a
    FITS WCS whose header text holds everything but its distortion lookup tables, which go
    beside it as arrays (``[det2im1, det2im2, cpdis1, cpdis2]``, each None or ``(samples,
    crpix, crval, cdelt)``; None without tables). None for a WCS the engine cannot describe
    so (a generalized APE-14 WCS, a SIP origin other than CRPIX)."""
    if parsed.header is not None:
        return parsed.header, None
    mods = _astropy()
    wcs = parsed.wcs
    if mods is None or not isinstance(wcs, mods[1]) or not _has_lookup_tables(wcs):
        return None
    bare = wcs.deepcopy()
    for name in _LOOKUP_TABLES:
        setattr(bare, name, None)
    if _beyond_header(bare) is not None:
        return None
    tables = []
    for name in _LOOKUP_TABLES:
        t = getattr(wcs, name)
        tables.append(None if t is None else (
            np.ascontiguousarray(t.data, dtype=np.float32),
            tuple(float(v) for v in t.crpix),
            tuple(float(v) for v in t.crval),
            tuple(float(v) for v in t.cdelt),
        ))
    return _header_text(bare), tables


def _has_lookup_tables(wcs) -> bool:
    """Whether a FITS WCS has distortion lookup tables (CPDIS/D2IM), which its header text
    does not hold."""
    return any(getattr(wcs, n, None) is not None for n in _LOOKUP_TABLES)


def _parsed_from_header(header, fobj=None) -> ParsedWCS:
    """A FITS Header: its own text goes to the engine, astropy's WCS serves validation.

    For a celestial image (two axes, read by the engine), astropy's WCS is built only if
    something asks for it: its ``WCS(header)`` is most of a small call's time.
    """
    text = header.tostring()
    # Lookup tables (read from the file, with fobj) are astropy's to read; without their
    # keywords, fobj changes nothing WCS(header) reads.
    lookup = fobj is not None and any(k.startswith(("CPDIS", "D2IM")) for k in header)
    if not lookup and _celestial_image(text):
        return ParsedWCS(text, is_fits=True, lazy=header)
    wcs = _astropy_wcs(header, fobj)
    if fobj is not None and _has_lookup_tables(wcs):
        return ParsedWCS(None, wcs, is_fits=True)  # positions with the tables (_positions)
    return ParsedWCS(text, wcs, is_fits=True)


def _astropy_wcs(header, fobj=None):
    """reproject's ``WCS(header)`` (``fobj``: the HDUList, for lookup tables)."""
    _, WCS = _astropy()
    import warnings

    with warnings.catch_warnings():
        # astropy warns about e.g. non-standard keywords; reproject's WCS(header) would too,
        # but the engine reads the text itself.
        warnings.simplefilter("ignore")
        return WCS(header, fobj=fobj) if fobj is not None else WCS(header)


def _header_from_text(text: str):
    fits, _ = _astropy()
    return fits.Header.fromstring(text, sep="\n" if "\n" in text else "")


def _parsed_from_text(text: str) -> ParsedWCS:
    if _astropy() is None:
        _core.check_header(text)
        return ParsedWCS(text, None, is_fits=True)
    return _parsed_from_header(_header_from_text(text))


_CARD = re.compile(r"^(NAXIS\d*)\s*=\s*(\d+)")


def _naxis_shape_from_text(text: str):
    """The (numpy-order) shape given by NAXIS/NAXISn cards of header text, or None."""
    cards = text.splitlines() if "\n" in text else [text[i : i + 80] for i in range(0, len(text), 80)]
    values = {}
    for card in cards:
        m = _CARD.match(card)
        if m:
            values[m.group(1)] = int(m.group(2))
    if "NAXIS" not in values:
        return None
    try:
        return [values[f"NAXIS{i + 1}"] for i in range(values["NAXIS"])][::-1]
    except KeyError:
        return None


# ----------------------------------------------------------------------------------------
# Inputs


def _is_png(path) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a"


def _is_jpeg(path) -> bool:
    with open(path, "rb") as f:
        return f.read(3) == b"\xff\xd8\xff"


def _hdu_data(hdu):
    data = hdu.data
    if data is None:
        raise ValueError("the HDU has no data")
    return data


def parse_input_data(input_data, hdu_in=0, stack=None):
    """(array, ParsedWCS) for every input form reproject_interp accepts. The array of an
    ``(array, wcs)`` tuple may be a numpy, dask or GPU (``__cuda_array_interface__``) array.

    ``stack`` (a contextlib.ExitStack) keeps files opened here open until the caller is done.
    """
    mods = _astropy()
    if isinstance(input_data, (str, Path)):
        if _is_png(input_data) or _is_jpeg(input_data):
            from PIL import Image
            from pyavm import AVM

            data = np.array(Image.open(input_data)).transpose(2, 0, 1)[:, ::-1]
            return data, _parsed_from_wcs(AVM.from_image(input_data).to_wcs())
        if mods is None:
            raise TypeError("reading FITS files needs astropy")
        hdul = mods[0].open(input_data)
        if stack is not None:
            stack.callback(hdul.close)
        return parse_input_data(hdul, hdu_in=hdu_in, stack=stack)
    if isinstance(input_data, tuple) and len(input_data) == 2:
        array, wcs = input_data
        if not (isinstance(array, np.ndarray) or is_dask(array) or is_cuda_array(array)):
            raise TypeError(
                "input_data should either be an HDU object or a tuple "
                "of (array, WCS) or (array, Header)"
            )
        if isinstance(wcs, str):
            return array, _parsed_from_text(wcs)
        if mods is not None and isinstance(wcs, mods[0].Header):
            return array, _parsed_from_header(wcs)
        return array, _parsed_from_wcs(wcs)
    if mods is not None:
        fits, _ = mods
        import astropy.nddata

        if isinstance(input_data, fits.HDUList):
            if hdu_in is None:
                if len(input_data) > 1:
                    raise ValueError(
                        "More than one HDU is present, please specify "
                        "HDU to use with ``hdu_in=`` option"
                    )
                hdu_in = 0
            hdu = input_data[hdu_in]
            return _hdu_data(hdu), _parsed_from_header(hdu.header, fobj=input_data)
        if isinstance(input_data, (fits.PrimaryHDU, fits.ImageHDU, fits.CompImageHDU)):
            return _hdu_data(input_data), _parsed_from_header(input_data.header)
        if isinstance(input_data, astropy.nddata.NDDataBase):
            if input_data.wcs is None:
                raise ValueError("the NDData has no WCS")
            return input_data.data, _parsed_from_wcs(input_data.wcs)
    raise TypeError(
        "input_data should either be an HDU object or a tuple of (array, WCS) or (array, Header)"
    )


# ----------------------------------------------------------------------------------------
# Outputs


def parse_output_projection(output_projection, shape_in=None, shape_out=None, output_array=None):
    """(ParsedWCS, shape_out tuple), with reproject's rules and messages."""
    if shape_out is None:
        if output_array is not None:
            shape_out = output_array.shape
    elif output_array is not None and tuple(shape_out) != tuple(output_array.shape):
        raise ValueError("shape_out does not match shape of output_array")

    mods = _astropy()
    if isinstance(output_projection, (str, Path)) and not (
        isinstance(output_projection, str)
        and "CTYPE" in output_projection
        and not os.path.exists(output_projection)
    ):
        if mods is None:
            raise TypeError("reading FITS files needs astropy")
        with mods[0].open(output_projection) as hdul:
            shape_out = hdul[0].data.shape
            parsed = _parsed_from_header(hdul[0].header)
    elif isinstance(output_projection, str):
        # Header text (an extension of reproject's API).
        parsed = _parsed_from_text(output_projection)
        naxis = _naxis_shape_from_text(output_projection)
        if naxis is not None:
            shape_out = naxis
        elif shape_out is None:
            raise ValueError(
                "Need to specify shape since output header "
                "does not contain complete shape information"
            )
    elif mods is not None and isinstance(output_projection, mods[0].Header):
        parsed = _parsed_from_header(output_projection)
        try:
            shape_out = [
                output_projection[f"NAXIS{i + 1}"] for i in range(output_projection["NAXIS"])
            ][::-1]
        except KeyError:
            if shape_out is None:
                raise ValueError(
                    "Need to specify shape since output header "
                    "does not contain complete shape information"
                ) from None
    elif mods is not None and _is_ape14(output_projection):
        parsed = _parsed_from_wcs(output_projection)
        if shape_out is None:
            low = getattr(output_projection, "low_level_wcs", output_projection)
            if low.array_shape is not None:
                shape_out = low.array_shape
            else:
                raise ValueError(
                    "Need to specify shape_out when specifying output_projection as WCS object"
                )
    else:
        raise TypeError("output_projection should either be a Header, a WCS object, or a filename")

    if len(shape_out) == 0:
        raise ValueError("The shape of the output image should not be an empty tuple")
    if (
        shape_in is not None
        and len(shape_out) < len(shape_in)
        and len(shape_out) == parsed.pixel_n_dim
    ):
        shape_out = (*shape_in[: -len(shape_out)], *shape_out)
    return parsed, tuple(int(n) for n in shape_out)


def _is_ape14(obj) -> bool:
    from astropy.wcs.wcsapi import BaseHighLevelWCS, BaseLowLevelWCS

    return isinstance(obj, (BaseLowLevelWCS, BaseHighLevelWCS))

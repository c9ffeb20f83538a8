"""Input positions computed before the job, for the WCS pairs a plan does not describe.

The engine computes output pixel -> world -> input pixel itself for FITS WCS given as
header text. FITS WCS with distortion lookup tables (CPDIS/D2IM, from other HDUs) it
computes from the text and the tables (``_core.input_positions``). For a 2-D pair it does
not evaluate (a generalized WCS such as gwcs, solar frames of different observers,
non-linear spectral algorithms, time axes from different references), astropy computes the
positions exactly as reproject does (``pixel_to_pixel``, with the round-trip check). Either
way the engine interpolates at them, so the values are reproject's; positions astropy
computes cost astropy's time.
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._parse import engine_lookup_tables

__all__ = ["precomputed_positions"]


def precomputed_positions(parsed_in, parsed_out, header_in, header_out, shape_in,
                          engine_shape, engine_options):
    """``(xs, ys)``: the input position of every pixel of the output plane, computed by the
    engine from WCS with lookup tables or by astropy, when a plan cannot compute them; None
    when it can. Raises the engine's error when neither can (a pair of WCS of more than two
    axes)."""
    if header_in is not None and header_out is not None:
        if 0 in shape_in or 0 in engine_shape:
            return None  # nothing to compute: the dispatcher returns reproject's empty result
        try:
            _core.check_plan(
                header_in, header_out, list(shape_in), list(engine_shape),
                order=engine_options.get("order"),
            )
            return None
        except _core.UnsupportedError:
            if not _two_dimensional(parsed_in, parsed_out):
                raise
        except _core.InvalidArgumentError:
            # Solar frames the core cannot convert between (e.g. helioprojective to Stonyhurst
            # heliographic: the core reports an InvalidArgumentError), which astropy (with
            # sunpy) converts as reproject does.
            if not (_two_dimensional(parsed_in, parsed_out) and _solar(parsed_in, parsed_out)):
                return None  # the engine reports it where it computes (lazily for dask)
        except _core.ReprojectError:
            return None  # the engine reports it where it computes (lazily for dask)
    elif not _two_dimensional(parsed_in, parsed_out):
        raise _core.UnsupportedError(
            "reproject_rs computes FITS WCS, and other WCS (with astropy's coordinates) for 2-D "
            f"images only; got WCS of {parsed_in.pixel_n_dim} and {parsed_out.pixel_n_dim} axes"
        )
    ny, nx = engine_shape[-2:]
    engine = _engine_positions(parsed_in, parsed_out, shape_in, (ny, nx), engine_options)
    if engine is not None:
        return engine
    return _pixel_positions(
        _high_level(parsed_in.wcs), _high_level(parsed_out.wcs), (ny, nx),
        engine_options.get("roundtrip_coords", True),
    )


def _engine_positions(parsed_in, parsed_out, shape_in, shape, engine_options):
    """The engine's positions for a pair of FITS WCS of which one or both have distortion
    lookup tables (its round-trip check and SIP inversion: the same as a plan's); None for
    any other pair, or one the engine refuses (astropy then computes them)."""
    described = [engine_lookup_tables(p) for p in (parsed_in, parsed_out)]
    if None in described or (described[0][1] is None and described[1][1] is None):
        return None
    (text_in, tables_in), (text_out, tables_out) = described
    try:
        return _core.input_positions(
            text_in, text_out, tuple(shape_in[-2:]), tuple(shape),
            tables_in=tables_in, tables_out=tables_out,
            roundtrip_coords=engine_options.get("roundtrip_coords", True),
            precision=engine_options.get("precision", "reproject"),
        )
    except _core.ReprojectError:
        return None


def _two_dimensional(parsed_in, parsed_out) -> bool:
    return (
        parsed_in.wcs is not None
        and parsed_out.wcs is not None
        and parsed_in.pixel_n_dim == 2
        and parsed_out.pixel_n_dim == 2
    )


#: CTYPE prefixes of the solar frames (helioprojective, heliographic Stonyhurst and
#: Carrington, heliocentric, helioprojective-radial).
_SOLAR_CTYPES = ("HPLN", "HPLT", "HGLN", "HGLT", "CRLN", "CRLT", "SOLX", "SOLY", "SOLZ",
                 "HRLN", "HRLT")


def _solar(*parsed) -> bool:
    """Whether any of the WCS has a solar celestial frame."""
    for p in parsed:
        ctype = getattr(getattr(p.wcs, "wcs", None), "ctype", None)
        if ctype is not None and any(c[:4].upper() in _SOLAR_CTYPES for c in ctype):
            return True
    return False


def _high_level(wcs):
    """A high-level APE-14 WCS (what ``pixel_to_pixel`` needs) for any APE-14 object."""
    from astropy.wcs.wcsapi import BaseHighLevelWCS, HighLevelWCSWrapper

    return wcs if isinstance(wcs, BaseHighLevelWCS) else HighLevelWCSWrapper(wcs)


def _pixel_positions(wcs_in, wcs_out, shape, roundtrip):
    """reproject's ``_reproject_full`` coordinates: the output pixel grid through
    ``pixel_to_pixel`` (and back, dropping pixels that do not come back within a pixel)."""
    import warnings

    from astropy.wcs.utils import pixel_to_pixel

    ny, nx = shape
    rows, cols = np.meshgrid(
        np.arange(ny, dtype=float), np.arange(nx, dtype=float), indexing="ij", copy=False
    )
    rows, cols = rows.ravel(), cols.ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xs, ys = pixel_to_pixel(wcs_out, wcs_in, cols, rows)
        if roundtrip:
            back_x, back_y = pixel_to_pixel(wcs_in, wcs_out, xs, ys)
            reset = (np.abs(back_x - cols) > 1) | (np.abs(back_y - rows) > 1)
            if np.any(reset):
                xs, ys = xs.copy(), ys.copy()
                xs[reset] = np.nan
                ys[reset] = np.nan
    as_plane = lambda a: np.ascontiguousarray(np.broadcast_to(a, rows.shape), dtype=np.float64)
    return as_plane(xs).reshape(ny, nx), as_plane(ys).reshape(ny, nx)

"""Mosaics: ``find_optimal_celestial_wcs`` (on the Rust core) and ``reproject_and_coadd``, a drop-in for ``reproject.mosaicking.reproject_and_coadd``
(reproject 0.21) computed by the reproject-rs Rust core when the reprojection is an
interpolation of FITS WCS, and by reproject's own algorithm with any other reprojection
function.

>>> from reproject_rs import reproject_interp                       # doctest: +SKIP
>>> from reproject_rs.mosaicking import reproject_and_coadd         # doctest: +SKIP
>>> array, footprint = reproject_and_coadd(files, wcs_out, shape_out=shape_out,
...                                        reproject_function=reproject_interp)  # doctest: +SKIP
"""

from ._coadd import COMBINE_FUNCTIONS, reproject_and_coadd
from ._wcs_helpers import find_optimal_celestial_wcs

__all__ = ["reproject_and_coadd", "find_optimal_celestial_wcs", "COMBINE_FUNCTIONS"]

"""Mosaics: ``find_optimal_celestial_wcs`` (on the Rust core) and ``reproject_and_coadd``, a drop-in for ``reproject.mosaicking.reproject_and_coadd``
(reproject 0.21) computed by the reproject-rs Rust core when the reprojection is an
interpolation of FITS WCS, and by reproject's own algorithm with any other reprojection
function.

>>> from reproject_rs import reproject_interp                       # doctest: +SKIP
>>> from reproject_rs.mosaicking import reproject_and_coadd         # doctest: +SKIP
>>> array, footprint = reproject_and_coadd(files, wcs_out, shape_out=shape_out,
...                                        reproject_function=reproject_interp)  # doctest: +SKIP

``COMBINE_FUNCTIONS`` is the tuple of the ``combine_function`` values that
``reproject_and_coadd`` accepts: reproject's six, then ``'median'`` and ``'clipped'``.

Examples
--------
Each combine function on two images, of 1 and of 3, overlapping on 16 columns: the value
it gives in the overlap.

>>> import numpy as np
>>> from astropy.wcs import WCS
>>> from reproject_rs import reproject_interp
>>> from reproject_rs.mosaicking import COMBINE_FUNCTIONS, reproject_and_coadd
>>> header = {"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 10.0, "CRVAL2": 20.0,
...           "CDELT1": -0.01, "CDELT2": 0.01, "CRPIX1": 16.0, "CRPIX2": 16.0}
>>> images = [(np.ones((32, 32)), WCS(header)),
...           (np.full((32, 32), 3.0), WCS(dict(header, CRPIX1=0.0)))]
>>> for name in COMBINE_FUNCTIONS:
...     array, _ = reproject_and_coadd(images, WCS(header), shape_out=(32, 48),
...                                    reproject_function=reproject_interp,
...                                    combine_function=name)
...     print(name, float(array[16, 24]))
mean 2.0
sum 4.0
first 1.0
last 3.0
min 1.0
max 3.0
median 2.0
clipped 2.0
"""

from ._coadd import COMBINE_FUNCTIONS, reproject_and_coadd
from ._wcs_helpers import find_optimal_celestial_wcs

__all__ = ["reproject_and_coadd", "find_optimal_celestial_wcs", "COMBINE_FUNCTIONS"]

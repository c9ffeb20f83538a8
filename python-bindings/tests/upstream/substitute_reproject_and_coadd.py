"""pytest plugin: run astropy reproject's own mosaicking tests against
reproject_rs.mosaicking.

reproject's test modules bind what they test when they are imported
(``from reproject.mosaicking._coadd import reproject_and_coadd``,
``from .._background import solve_corrections_sgd``,
``from .._subset_array import ReprojectedArraySubset``), so the substitution happens in
``pytest_configure``, before collection:

* ``reproject_and_coadd`` (test_coadd.py) by ``reproject_rs.mosaicking.reproject_and_coadd``;
* ``solve_corrections_sgd`` (test_background.py) and ``ReprojectedArraySubset``
  (test_subset_array.py) by the ports that the generic path of reproject_rs's
  ``reproject_and_coadd`` uses.

* ``find_optimal_celestial_wcs`` (test_wcs_helpers.py) by
  ``reproject_rs.mosaicking.find_optimal_celestial_wcs`` (which keeps reproject's own for the
  requests its core does not take: non-FITS WCS, solar frames).

Load it with ``-p substitute_reproject_and_coadd`` (this folder on PYTHONPATH); see
``python-bindings/run_upstream_tests.sh``.
"""

import reproject_rs
from reproject_rs.mosaicking import (
    _background,
    _subset_array,
    _wcs_helpers,
    find_optimal_celestial_wcs,
    reproject_and_coadd,
)

_TARGETS = {
    "reproject.mosaicking": {
        "reproject_and_coadd": reproject_and_coadd,
        "find_optimal_celestial_wcs": find_optimal_celestial_wcs,
    },
    "reproject.mosaicking._coadd": {"reproject_and_coadd": reproject_and_coadd},
    "reproject.mosaicking._background": {
        "solve_corrections_sgd": _background.solve_corrections_sgd,
        "determine_offset_matrix": _background.determine_offset_matrix,
    },
    "reproject.mosaicking._subset_array": {
        "ReprojectedArraySubset": _subset_array.ReprojectedArraySubset,
    },
    "reproject.mosaicking._wcs_helpers": {
        "find_optimal_celestial_wcs": find_optimal_celestial_wcs,
    },
}


def pytest_configure(config):
    import importlib

    original = importlib.import_module("reproject.mosaicking._wcs_helpers")
    _wcs_helpers._THEIRS = original.find_optimal_celestial_wcs
    for name, attributes in _TARGETS.items():
        module = importlib.import_module(name)
        for attribute, value in attributes.items():
            setattr(module, attribute, value)


def pytest_report_header(config):
    return [
        "reproject_and_coadd and find_optimal_celestial_wcs substituted by reproject_rs's "
        f"(reproject_rs {reproject_rs.__version__})"
    ]

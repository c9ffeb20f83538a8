"""pytest plugin: run astropy reproject's own tests against reproject_rs.reproject_interp.

reproject's test modules bind ``reproject_interp`` when they are imported
(``from reproject.interpolation._high_level import reproject_interp``, ``from .. import
reproject_interp``), so the substitution happens in ``pytest_configure``, before collection.

Load it with ``-p substitute_reproject_interp`` (this folder on PYTHONPATH); see
``python-bindings/run_upstream_tests.sh``.
"""

import reproject_rs

_TARGETS = (
    "reproject",
    "reproject.interpolation",
    "reproject.interpolation._high_level",
)


def pytest_configure(config):
    import importlib

    for name in _TARGETS:
        module = importlib.import_module(name)
        module.reproject_interp = reproject_rs.reproject_interp


def pytest_report_header(config):
    import reproject

    return [
        "reproject_interp substituted by: reproject_rs.reproject_interp "
        f"(reproject_rs {reproject_rs.__version__}, reproject {reproject.__version__})"
    ]

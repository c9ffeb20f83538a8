"""pytest plugin: numpy's global random generator seeded before each of reproject's tests.

Some of reproject's tests draw their input with ``np.random.rand`` and no seed, and compare
with a relative tolerance: ``test_high_level.py::test_identity_projection`` asks that an
identity reprojection keep every value within ``rtol=1e-6``, which a value drawn near 0 (in
about 1 % of runs) misses, reproject's own ``reproject_interp`` as often as reproject_rs's
(the round trip through the sky moves each pixel by about 1e-9 of a pixel in both). Seeded,
every run tests the same inputs, in the substituted and the ``BASELINE=1`` runs alike.

Load it with ``-p seed_random`` (this folder on PYTHONPATH); see
``python-bindings/run_upstream_tests.sh``.
"""

import numpy as np


def pytest_runtest_setup(item):
    np.random.seed(0)

#!/usr/bin/env bash
# Runs astropy reproject's own interpolation, high-level and mosaicking tests with reproject_rs
# substituted for reproject:
#   * reproject_interp by reproject_rs.reproject_interp (tests/upstream/substitute_reproject_interp.py);
#   * reproject_and_coadd by reproject_rs.mosaicking.reproject_and_coadd, and the
#     ReprojectedArraySubset / solve_corrections_sgd / determine_offset_matrix that
#     test_subset_array.py and test_background.py test by the ports reproject_rs's generic
#     mosaic path uses (tests/upstream/substitute_reproject_and_coadd.py). test_wcs_helpers.py
#     still tests reproject's own find_optimal_celestial_wcs.
#
#   python-bindings/run_upstream_tests.sh [extra pytest arguments]
#
# VENV (default: <repo>/.venv, as scripts/test.sh) gets the test plugins reproject's suite
# needs (pytest-arraydiff, pytest-astropy-header, pytest-doctestplus); SKIP_BUILD=1 reuses
# the installed reproject_rs instead of rebuilding it; BASELINE=1 runs the same tests on
# reproject's own functions, for comparison. scripts/test.sh runs it (about 4 minutes on
# one core, most of it reproject_exact itself in test_coadd.py's 'exact' cases, which
# reproject_rs's generic mosaic path calls); the tests are spread over the machine's cores
# (pytest-xdist, at most 4 processes; UPSTREAM_PROCESSES sets the number, 0 runs them in this
# process).
#
# numpy's global random generator is seeded before each test (tests/upstream/seed_random.py):
# some of reproject's tests draw unseeded random inputs, and test_identity_projection misses
# its rtol=1e-6 in about 1 % of runs, reproject's own reproject_interp as often as ours.
#
# Deselected, because they need network access (they download astropy's galactic-centre 2MASS
# image with astropy.utils.data.download_file, and CI has no network):
#   reproject/interpolation/tests/test_core.py::test_blocked_against_single (72 cases)
# Nothing else is deselected or skipped by this script. sunpy, asdf and gwcs are installed so
# that the solar-map and generalized-WCS tests run (their positions come from astropy, see
# reproject_rs/_positions.py). reproject's own suite still skips, in the BASELINE=1 run too:
# input/output combinations of test_interp_input_output_types that do not apply (96 cases),
# reproject_exact with gwcs (3), and test_wcs_helpers.py's input-type cases that do not apply
# (41). tests/upstream/pytest.ini ignores one sunpy warning that test_coadd_solar_map's own
# weight maps raise before any reprojection (an error in the BASELINE=1 run too otherwise).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
VENV="${VENV:-$root/.venv}"

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
VENV="$(cd "$VENV" && pwd)"  # absolute: the tests run from another folder
"$VENV/bin/pip" install -q maturin pytest numpy astropy "reproject==0.21.*" "dask[array,distributed]" \
  pytest-arraydiff pytest-astropy-header pytest-doctestplus pytest-xdist "sunpy[map]" asdf asdf-astropy \
  gwcs shapely
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$root" && VIRTUAL_ENV="$VENV" "$VENV/bin/maturin" develop --release -m python-bindings/Cargo.toml)
fi

plugin=(-p seed_random -p substitute_reproject_interp -p substitute_reproject_and_coadd)
processes="${UPSTREAM_PROCESSES:-$(nproc 2>/dev/null || echo 1)}"
[ "$processes" -gt 4 ] && processes=4
[ "$processes" -le 1 ] && processes=0  # one core: no worker processes
[ "${BASELINE:-0}" = 1 ] && plugin=(-p seed_random)
cd "$here/tests/upstream"
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$here/tests/upstream${PYTHONPATH:+:$PYTHONPATH}" \
  exec "$VENV/bin/python" -m pytest -c pytest.ini --rootdir=. -p no:cacheprovider "${plugin[@]}" \
  -k "not test_blocked_against_single" -n "$processes" \
  --pyargs reproject.interpolation reproject.tests.test_high_level reproject.mosaicking "$@"

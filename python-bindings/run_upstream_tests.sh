#!/usr/bin/env bash
# Runs astropy reproject's own interpolation and high-level tests with reproject_rs's
# reproject_interp substituted for reproject's (tests/upstream/substitute_reproject_interp.py).
#
#   python-bindings/run_upstream_tests.sh [extra pytest arguments]
#
# VENV (default: <repo>/.venv, as scripts/test.sh) gets the test plugins reproject's suite
# needs (pytest-arraydiff, pytest-astropy-header, pytest-doctestplus); SKIP_BUILD=1 reuses
# the installed reproject_rs instead of rebuilding it; BASELINE=1 runs the same tests on
# reproject's own reproject_interp, for comparison. scripts/test.sh runs it (about 45 s).
#
# Deselected, because they need network access (they download astropy's galactic-centre 2MASS
# image with astropy.utils.data.download_file, and CI has no network):
#   reproject/interpolation/tests/test_core.py::test_blocked_against_single (72 cases)
# Nothing else is deselected or skipped by this script. sunpy, asdf and gwcs are installed so
# that the solar-map and generalized-WCS tests run (their positions come from astropy, see
# reproject_rs/_positions.py). reproject's own suite still skips, in the BASELINE=1 run too:
# input/output combinations of test_interp_input_output_types that do not apply (96 cases)
# and reproject_exact with gwcs (3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
VENV="${VENV:-$root/.venv}"

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
VENV="$(cd "$VENV" && pwd)"  # absolute: the tests run from another folder
"$VENV/bin/pip" install -q maturin pytest numpy astropy "reproject==0.21.*" "dask[array,distributed]" \
  pytest-arraydiff pytest-astropy-header pytest-doctestplus "sunpy[map]" asdf asdf-astropy gwcs
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$root" && VIRTUAL_ENV="$VENV" "$VENV/bin/maturin" develop --release -m python-bindings/Cargo.toml)
fi

plugin=(-p substitute_reproject_interp -p substitute_reproject_and_coadd)
[ "${BASELINE:-0}" = 1 ] && plugin=()
cd "$here/tests/upstream"
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$here/tests/upstream${PYTHONPATH:+:$PYTHONPATH}" \
  exec "$VENV/bin/python" -m pytest -c pytest.ini --rootdir=. -p no:cacheprovider "${plugin[@]}" \
  -k "not test_blocked_against_single" \
  --pyargs reproject.interpolation reproject.tests.test_high_level reproject.mosaicking "$@"

#!/usr/bin/env bash
# Runs astropy reproject's own interpolation and high-level tests with reproject_rs's
# reproject_interp substituted for reproject's (tests/upstream/substitute_reproject_interp.py).
#
#   python-bindings/run_upstream_tests.sh [extra pytest arguments]
#
# VENV (default: <repo>/.venv, as scripts/test.sh) gets the test plugins reproject's suite
# needs (pytest-arraydiff, pytest-astropy-header, pytest-doctestplus); SKIP_BUILD=1 reuses
# the installed reproject_rs instead of rebuilding it; BASELINE=1 runs the same tests on
# reproject's own reproject_interp, for comparison. Not part of scripts/test.sh: slow, and
# extra dependencies.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
VENV="${VENV:-$root/.venv}"

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q maturin pytest numpy astropy reproject "dask[array,distributed]" \
  pytest-arraydiff pytest-astropy-header pytest-doctestplus
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$root" && VIRTUAL_ENV="$VENV" "$VENV/bin/maturin" develop --release -m python-bindings/Cargo.toml)
fi

plugin=(-p substitute_reproject_interp)
[ "${BASELINE:-0}" = 1 ] && plugin=()
cd "$here/tests/upstream"
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$here/tests/upstream${PYTHONPATH:+:$PYTHONPATH}" \
  exec "$VENV/bin/python" -m pytest -c pytest.ini --rootdir=. -p no:cacheprovider "${plugin[@]}" \
  --pyargs reproject.interpolation reproject.tests.test_high_level "$@"

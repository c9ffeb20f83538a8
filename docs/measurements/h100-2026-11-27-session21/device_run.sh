#!/usr/bin/env bash
# This session's one device call, from the repository root with gpu-bundle/ carried:
#   LEASE_S=575 docs/measurements/h100-2026-11-27-session21/device_run.sh
# The sections most telling first, each under a limit of its own and never past the lease's
# end; one log per section in $OUT (else ./device-logs).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.." || exit 1
export LOGDIR="${OUT:-$PWD/device-logs}" PYTHONUNBUFFERED=1
mkdir -p "$LOGDIR"
end=$(( $(date +%s) + ${LEASE_S:-575} ))
status=0
for entry in "bench 160" "pybench 90" "cliprobe 100" "parity 120" "pytests 110" "cli 60"; do
  set -- $entry
  left=$(( end - $(date +%s) ))
  if [ "$left" -lt 25 ]; then
    echo "== $1 skipped: ${left} s left"
    continue
  fi
  limit=$(( $2 < left ? $2 : left ))
  echo "== $1 (at most ${limit} s, at $(date +%T))"
  if [ "$1" = cliprobe ]; then
    timeout "$limit" "$here/cli_probe.sh" gpu-bundle 8192 2>&1 | tee "$LOGDIR/cliprobe.log"
    rc=${PIPESTATUS[0]}
  else
    timeout "$limit" gpu-bundle/run.sh "$1" >/dev/null
    rc=$?
    tail -n 25 "$LOGDIR/$1.log"
  fi
  [ "$rc" -eq 0 ] || { status=1; echo "== $1 failed or ran out of time (status $rc)"; }
done
exit $status

#!/usr/bin/env bash
# This session's device call, from the repository root with gpu-bundle/ carried:
#   LEASE_S=540 docs/measurements/gpu-2026-11-28-session24/device_run.sh
# First the CLI probe of session 21 (the compile helper's fix: every GPU call should return
# right after its `wrote` line, and the next process find the variant cached), with the disk
# cache and any helper process still running listed after it; then the benchmarks, parity and
# the Python paths. Each section under a limit of its own, never past the lease's end; one
# log per section in $OUT (else ./device-logs).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.." || exit 1
export LOGDIR="${OUT:-$PWD/device-logs}" PYTHONUNBUFFERED=1
mkdir -p "$LOGDIR"
end=$(( $(date +%s) + ${LEASE_S:-540} ))
probe="$here/../h100-2026-11-27-session21/cli_probe.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
status=0
for entry in "cliprobe 150" "bench 170" "parity 150" "pybench 100" "pytests 110" "cli 60"; do
  set -- $entry
  left=$(( end - $(date +%s) ))
  if [ "$left" -lt 25 ]; then
    echo "== $1 skipped: ${left} s left"
    continue
  fi
  limit=$(( $2 < left ? $2 : left ))
  echo "== $1 (at most ${limit} s, at $(date +%T))"
  start=$(date +%s)
  if [ "$1" = cliprobe ]; then
    {
      timeout "$limit" "$probe" gpu-bundle 8192
      rc=$?
      echo "== after the probe ($(( $(date +%s) - start )) s): helper processes still running"
      ps -eo pid,etimes,stat,args | grep -E 'reproject-rs (warmup|worker)' | grep -v grep || echo "  none"
      echo "== the disk cache"
      ls -la --time-style=+%T ~/.cache/reproject-rs 2>&1 | tail -n 20
      exit $rc
    } 2>&1 | tee "$LOGDIR/cliprobe.log"
    rc=${PIPESTATUS[0]}
  else
    timeout "$limit" gpu-bundle/run.sh "$1" >/dev/null
    rc=$?
    tail -n 30 "$LOGDIR/$1.log"
  fi
  echo "== $1 took $(( $(date +%s) - start )) s"
  [ "$rc" -eq 0 ] || { status=1; echo "== $1 failed or ran out of time (status $rc)"; }
done
exit $status

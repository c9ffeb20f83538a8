#!/usr/bin/env bash
# A bicubic job run by worker processes on the CPU: wall time, CPU time of the whole process
# tree, and the memory the run takes from the machine (MemAvailable before, minus its lowest
# value during the run, sampled every 20 ms), for each binary given, in alternating rounds.
#
#   scripts/bench_process_splines.sh [N] [PROCESSES] [BINARY...]
#
# N (default 6144) is the side of the float32 input and of the output; BINARY defaults to
# this tree's release build. To see what sharing the spline coefficients with the workers
# changed (session 19), build the commit before it into another binary and pass both. On the
# development machine (2 cores), 6144², 4 processes, three rounds: 5.3-5.8 s, 8.6-9.5 s of CPU
# and 1.32-1.47 GB taken before; 3.0-3.4 s, 5.0-5.6 s and 0.49-0.54 GB after. Outputs
# identical.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-6144}"
PROCESSES="${2:-4}"
shift $(( $# < 2 ? $# : 2 ))
if [ $# -eq 0 ]; then
  cargo build -q --release --bin reproject-rs
  set -- "$PWD/target/release/reproject-rs"
fi
PY="${VENV:-.venv}/bin/python"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PY" - "$N" "$WORK" <<'EOF'
import sys
import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

n, work = int(sys.argv[1]), sys.argv[2]
w = WCS(naxis=2)
w.wcs.ctype = ["RA---TAN", "DEC--TAN"]
w.wcs.crval, w.wcs.crpix, w.wcs.cdelt = [150, 30], [n / 2, n / 2], [-1e-4, 1e-4]
data = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
fits.PrimaryHDU(data, header=w.to_header()).writeto(f"{work}/in.fits")
t = w.deepcopy()
t.wcs.crval = [150.01, 30.01]
t.wcs.pc = [[np.cos(0.2), -np.sin(0.2)], [np.sin(0.2), np.cos(0.2)]]
h = t.to_header()
h["NAXIS"], h["NAXIS1"], h["NAXIS2"] = 2, n, n
open(f"{work}/target.hdr", "w").write(h.tostring(sep="\n"))
EOF

available() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }

# One run of binary $1: prints wall and CPU seconds and the megabytes taken.
measure() {
  rm -f "$WORK/out.fits"
  local before low start end cpu
  before=$(available)
  low=$before
  start=$(date +%s.%N)
  cpu=$( { TIMEFORMAT='%U %S'; time "$1" reproject "$WORK/in.fits" --to "$WORK/target.hdr" \
    -o "$WORK/out.fits" --order bicubic --device cpu --processes "$PROCESSES" -q & pid=$!
    while kill -0 $pid 2>/dev/null; do
      a=$(available); [ "$a" -lt "$low" ] && low=$a; sleep 0.02
    done
    echo "$low" > "$WORK/low"; wait $pid; } 2>&1 | tail -1)
  end=$(date +%s.%N)
  low=$(cat "$WORK/low")
  awk -v s="$start" -v e="$end" -v c="$cpu" -v b="$before" -v l="$low" 'BEGIN {
    split(c, t, " ");
    printf "%.2f s wall, %.2f s CPU, %d MB taken\n", e - s, t[1] + t[2], (b - l) / 1024 }'
}

echo "${N}x${N} float32 bicubic, ${PROCESSES} worker processes on the CPU"
for round in 1 2 3; do
  for binary in "$@"; do
    echo "  round $round, $binary: $(measure "$binary")"
  done
done

#!/usr/bin/env bash
# The CLI probe's CAR galactic -> TAN ICRS job (8192^2, a float32 FITS input) on the CPU and
# on the GPU, first with the general kernel (nothing cached), then with the job's variant
# (once the compile helper has put it in the disk cache), compared in float32 ulps
# (cli_ulps.py beside this file).
#   docs/measurements/gpu-2026-11-28-session24/cli_ulps.sh [gpu-bundle] [SIZE]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "${1:-gpu-bundle}" && pwd)/reproject-rs"
size="${2:-8192}"
d=/tmp/cli-ulps
rm -rf "$d" && mkdir -p "$d" && cd "$d" || exit 1
TIMEFORMAT="    %R s wall"
"$R" demo --out-dir "$d" --size "$size" -q >/dev/null 2>&1 || exit 1
printf "NAXIS   = 2\nNAXIS1  = %d\nNAXIS2  = %d\nCTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = %s\nCRPIX2  = %s\nCRVAL1  = 266.416833\nCRVAL2  = -29.007806\nCDELT1  = -0.01\nCDELT2  = 0.01\nRADESYS = 'ICRS'\n" \
  "$size" "$size" "$((size / 2)).5" "$((size / 2)).5" >tile.hdr
in=galactic_survey_car.fits
cache="${XDG_CACHE_HOME:-$HOME/.cache}/reproject-rs"
before=$(ls "$cache"/*.cubin 2>/dev/null | wc -l)
echo "== $before kernel(s) in the disk cache; CPU, then GPU (general kernel), then GPU (variant)"
time "$R" "$in" --to tile.hdr -o cpu.fits --device cpu 2>&1 | grep -E '^(wrote|error)'
time "$R" "$in" --to tile.hdr -o gpu-first.fits --device cuda 2>&1 | grep -E '^(wrote|error)'
for i in $(seq 1 90); do
  [ "$(ls "$cache"/*.cubin 2>/dev/null | wc -l)" -ge $(( before + 2 )) ] && break
  [ "$before" -ge 2 ] && break
  sleep 1
done
echo "  the disk cache after ${i} s of waiting:"; ls -la --time-style=+%T "$cache"
time "$R" "$in" --to tile.hdr -o gpu-variant.fits --device cuda 2>&1 | grep -E '^(wrote|error)'
python3 "$here/cli_ulps.py" "$d" cpu.fits gpu-first.fits gpu-variant.fits

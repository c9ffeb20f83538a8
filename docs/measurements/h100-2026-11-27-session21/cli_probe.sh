#!/usr/bin/env bash
# The CLI on the GPU machine, for what sessions 18-20 left unmeasured: fresh output files
# written by GPU jobs (timed against the CPU, interleaved), and a multi-process job prepared
# where no GPU is visible (CUDA_VISIBLE_DEVICES=) whose worker then runs where one is.
#   docs/measurements/h100-2026-11-27-session21/cli_probe.sh [gpu-bundle] [SIZE]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bundle="$(cd "${1:-gpu-bundle}" && pwd)"
size="${2:-8192}"
R="$bundle/reproject-rs"
d=/tmp/cli-probe
rm -rf "$d" && mkdir -p "$d" && cd "$d" || exit 1
TIMEFORMAT="    %R s wall"
echo "== demo --size $size (the input: galactic_survey_car.fits, ${size} x $((size / 2)) f32)"
time "$R" demo --out-dir "$d" --size "$size" -q || exit 1
# An 8192 x 8192 (SIZE x SIZE) TAN tile at Sgr A*, ICRS: CAR galactic -> TAN ICRS.
printf "NAXIS   = 2\nNAXIS1  = %d\nNAXIS2  = %d\nCTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRPIX1  = %s\nCRPIX2  = %s\nCRVAL1  = 266.416833\nCRVAL2  = -29.007806\nCDELT1  = -0.01\nCDELT2  = 0.01\nRADESYS = 'ICRS'\n" \
  "$size" "$size" "$((size / 2)).5" "$((size / 2)).5" >"$d/tile.hdr"
in="$d/galactic_survey_car.fits"
echo "== the first GPU call (kernels compiled into the disk cache), untimed"
"$R" "$in" --to tile.hdr -o warm.fits --device cuda 2>&1 | grep -E '^(wrote|error)'
status=0
echo "== fresh output files (new paths every call), CPU and GPU interleaved"
for round in 1 2 3; do
  for device in cpu cuda; do
    rm -f "out-$device.fits"
    echo "  round $round, --device $device:"
    time "$R" "$in" --to tile.hdr -o "out-$device.fits" --device "$device" 2>&1 | grep -E '^(wrote|error)' || status=1
  done
done
echo "== the same job into a file that exists (--overwrite), GPU"
time "$R" "$in" --to tile.hdr -o out-cuda.fits --device cuda --overwrite 2>&1 | grep -E '^(wrote|error)' || status=1
echo "== a 2-process job prepared with no GPU visible, --device auto"
CUDA_VISIBLE_DEVICES= "$R" "$in" --to tile.hdr -o job-gpu.fits --device auto --processes 2 --plan-only || status=1
echo "  its one worker, the GPU visible:"
time "$R" worker --job job-gpu.fits.job.json --share 0/1 || status=1
"$R" "$in" --to tile.hdr -o job-gpu.fits --device auto --processes 2 || status=1
echo "== the same, its worker without a GPU (for comparison)"
CUDA_VISIBLE_DEVICES= "$R" "$in" --to tile.hdr -o job-cpu.fits --device auto --processes 2 --plan-only -q || status=1
echo "  its one worker, no GPU visible:"
time CUDA_VISIBLE_DEVICES= "$R" worker --job job-cpu.fits.job.json --share 0/1 || status=1
CUDA_VISIBLE_DEVICES= "$R" "$in" --to tile.hdr -o job-cpu.fits --device auto --processes 2 || status=1
echo "== a 2-process job prepared where the GPU is visible, --device auto"
time "$R" "$in" --to tile.hdr -o job-owner.fits --device auto --processes 2 || status=1
python3 "$here/cli_compare.py" "$d" || status=1
exit $status

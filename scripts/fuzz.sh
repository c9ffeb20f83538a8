#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ (see fuzz/README.md) for a bounded time each and prints
# executions, corpus size and findings per target.
#
#   scripts/fuzz.sh                 # every target, 600 s each
#   scripts/fuzz.sh --short         # every target, 30 s each (CI)
#   scripts/fuzz.sh -t 120 header_text wcs_transform
#   JOBS=2 scripts/fuzz.sh          # two targets at a time (default 1)
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`); without them it says
# so and exits 0 (the stable replay of the corpora is `cargo test --test fuzz_replay`).
# New corpus entries go to fuzz/corpus/<target>/ (minimise before committing:
# `cargo +nightly fuzz cmin <target>`); crashes to fuzz/artifacts/<target>/. The exit status
# is 1 when any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=600
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --short) SECONDS_EACH=30 ;;
    -t|--time) SECONDS_EACH="$2"; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) TARGETS+=("$1") ;;
  esac
  shift
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(header_text fits_open npy_header wcs_transform)
JOBS="${JOBS:-1}"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: SKIPPED: no nightly toolchain (rustup toolchain install nightly)"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: SKIPPED: cargo-fuzz is not installed (cargo install cargo-fuzz)"
  exit 0
fi

# Per-target libFuzzer options. FITS files need room for a header block and a data block;
# CFITSIO reserves (mallocs, never touches) 4 to 8 GB for a gzipped file whose size trailer is
# below its compressed size, so fits_open allows single allocations up to 8.5 GB (the resident
# memory limit stays 4 GB: see fuzz/README.md).
max_len() {
  case "$1" in
    fits_open) echo 20000 ;;
    header_text) echo 12000 ;;
    *) echo 4096 ;;
  esac
}
malloc_limit() {
  case "$1" in
    fits_open) echo 8704 ;;
    *) echo 4096 ;;
  esac
}

echo "== building the fuzz targets (nightly, ASan, debug assertions)"
(cd fuzz && cargo +nightly fuzz build) || { echo "fuzz.sh: build failed"; exit 2; }

LOGDIR="fuzz/artifacts/logs"
mkdir -p "$LOGDIR"
run_target() {
  local t="$1" log="$LOGDIR/$1.log"
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  local extra=()
  [ -d "fuzz/seeds/$t" ] && extra+=("seeds/$t")
  (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" ${extra[@]+"${extra[@]}"} -- \
      -max_total_time="$SECONDS_EACH" -max_len="$(max_len "$t")" -timeout=10 \
      -rss_limit_mb=4096 -malloc_limit_mb="$(malloc_limit "$t")" -print_final_stats=1) >"$log" 2>&1
  echo $? >"$log.rc"
}

start=$(date +%s)
running=0
for t in "${TARGETS[@]}"; do
  echo "== $t: ${SECONDS_EACH} s (log: $LOGDIR/$t.log)"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

status=0
# corpus: libFuzzer's corpus at the end (inputs/size); on disk: files in fuzz/corpus/<target>
# (every input ever added, until `cargo fuzz cmin`).
printf '\n%-14s %12s %9s %16s %20s  %s\n' target execs exec/s corpus "on disk (files, B)" result
for t in "${TARGETS[@]}"; do
  log="$LOGDIR/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corp=$(grep -a -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | sed 's/corp: //')
  files=$(find "fuzz/corpus/$t" -type f | wc -l)
  bytes=$(find "fuzz/corpus/$t" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
  rc=$(cat "$log.rc" 2>/dev/null || echo "?")
  if [ "$rc" = 0 ]; then
    result="ok"
  else
    result="FINDING (exit $rc): $(grep -m1 -o 'Test unit written to .*' "$log" || echo "see $log")"
    status=1
  fi
  printf '%-14s %12s %9s %16s %20s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${corp:-?}" "$files, $bytes" "$result"
done
echo "total wall time: $(( $(date +%s) - start )) s"
exit $status

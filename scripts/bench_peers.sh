#!/usr/bin/env bash
# Side-by-side wall times of this crate's engine against its peers, on the jobs of the
# performance issue, in one run:
#   A  4096x4096 float32 TAN -> TAN, bilinear (1" pixels, output rotated 30 deg, CRPIX offset
#      (3.7, -2.2) px, CRVAL shift (2e-3, -1e-3) deg, output shape = input shape)
#   B  2048x2048 Galactic CAR (0.001 deg) -> ICRS TAN (0.001 deg) at the Galactic centre, bilinear
#   C  job A, bicubic
# Rows per job:
#   floor       one read of the float32 input + one write of the float64 output and footprint
#               (fresh arrays, as the engine allocates them), examples/bench_job.rs --floor
#   ours        examples/bench_job.rs: open the memory-mapped .npy (or FITS) input and run
#               reproject::engine::reproject_interp (default options, round trip on) into
#               in-memory float64 data + footprint; Parallel::Serial and Parallel::AllCores
#   reproject   astropy reproject_interp, default options (serial), and parallel=<cores> with
#               block_size for information (scripts/compare_peers.py time); input np.load'ed
#               with mmap_mode='r' inside the timed region; float64 output + footprint in memory
#   SWarp       -RESAMPLING_TYPE BILINEAR -COMBINE N -RESAMPLE Y -SUBTRACT_BACK N, target .head,
#               whole process timed (start-up, FITS read, float32 image + weight written to
#               $SCRATCH, a tmpfs when /dev/shm exists); default PROJECTION_ERR 0.001 (its
#               spline-approximated astrometry) and, for information, PROJECTION_ERR 0 (exact)
#   Montage     mProjectPP -f (job A only; flux-conserving plane-to-plane, single-threaded,
#               float64 image + area written to $SCRATCH), whole process timed
# Ratios are of medians: peer / ours (all cores) and ours / floor. All inputs are read from
# the page cache (they are generated, then read once before timing).
#
# Environment: REPEAT (ours and floor runs, 5), PEER_REPEAT (SWarp/Montage runs, 3),
# PY_REPEAT (reproject runs, 2), JOBS ("A B C"), SIZE_A (4096), SIZE_B (2048),
# BENCH_DATA (target/bench-data), SWARP_BIN (SWarp), MPROJECTPP_BIN (mProjectPP), SCRATCH (tmpfs dir for peer outputs), VENV (a venv with
# numpy, astropy, reproject; otherwise .venv or /work/venv, else .venv is created),
# WAIT_QUIET=<seconds> (before each job, wait up to that long for a 1-minute load average
# below 0.5).
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${BENCH_DATA:-target/bench-data}
SIZE_A=${SIZE_A:-4096}
SIZE_B=${SIZE_B:-2048}
REPEAT=${REPEAT:-5}
PEER_REPEAT=${PEER_REPEAT:-3}
PY_REPEAT=${PY_REPEAT:-2}
JOBS=${JOBS:-"A B C"}
NCPU=$(nproc)
if [ -z "${SCRATCH:-}" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    SCRATCH=$(mktemp -d /dev/shm/reproject-bench.XXXXXX)
  else
    SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/reproject-bench.XXXXXX")
  fi
  trap 'rm -rf "$SCRATCH"' EXIT
fi
mkdir -p "$SCRATCH"
RESULTS="$SCRATCH/results.tsv"
: >"$RESULTS"

log() { echo "$@" >&2; }

# ---- Python environment ------------------------------------------------------------------
pick_python() {
  local py
  for py in "${VENV:+$VENV/bin/python}" .venv/bin/python /work/venv/bin/python; do
    if [ -n "$py" ] && [ -x "$py" ] && "$py" -c 'import numpy, astropy, reproject' 2>/dev/null; then
      echo "$py"
      return
    fi
  done
  log "== creating .venv with numpy, astropy, reproject"
  python3 -m venv .venv >&2
  .venv/bin/pip install -q --upgrade pip >&2
  .venv/bin/pip install -q numpy astropy reproject >&2
  echo .venv/bin/python
}
PY=$(pick_python)

# ---- build and inputs --------------------------------------------------------------------
log "== cargo build --release --example bench_job"
cargo build --release --example bench_job >&2
BENCH_JOB=target/release/examples/bench_job
# The commit the binary was built from (others may commit while this runs).
COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml examples/bench_job.rs || echo ' (+ uncommitted changes)')"

log "== inputs in $DATA"
"$PY" scripts/compare_peers.py generate --data "$DATA" --size-a "$SIZE_A" --size-b "$SIZE_B" >&2
# Warm the page cache so no timing includes a disk read.
cat "$DATA"/A_"$SIZE_A".* "$DATA"/B_"$SIZE_B".* >/dev/null

# With WAIT_QUIET=<seconds>: before each job, wait up to that long for a 1-minute load
# average below 0.5 (other processes on the machine skew every row they overlap).
wait_quiet() {
  [ -n "${WAIT_QUIET:-}" ] || return 0
  local end=$((SECONDS + WAIT_QUIET))
  while awk '{exit !($1 >= 0.5)}' /proc/loadavg && [ $SECONDS -lt $end ]; do
    log "   load $(cut -d' ' -f1-3 </proc/loadavg), waiting for < 0.5"
    sleep 20
  done
}
wait_quiet
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- timing helpers ----------------------------------------------------------------------
# record JOB LABEL MEDIAN MIN RUNS LOAD (LOAD: 1-minute load average when the row started)
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# A program that prints "RESULT median=<s> min=<s> runs=<n>": record JOB LABEL -- CMD...
run_result() {
  local job=$1 label=$2
  shift 3
  log "-- $job: $label"
  local out line load
  load=$(load1)
  if ! out=$("$@" 2>&1); then
    log "$out"
    log "   FAILED, skipped"
    return
  fi
  grep '^info' <<<"$out" | sed 's/^/   /' >&2 || true
  line=$(grep '^RESULT' <<<"$out" | tail -1)
  record "$job" "$label" \
    "$(sed -E 's/.*median=([0-9.]+).*/\1/' <<<"$line")" \
    "$(sed -E 's/.*min=([0-9.]+).*/\1/' <<<"$line")" \
    "$(sed -E 's/.*runs=([0-9]+).*/\1/' <<<"$line")" "$load"
}

# An external program, timed whole: time_cmd JOB LABEL REPEAT CLEANUP_GLOB -- CMD...
time_cmd() {
  local job=$1 label=$2 n=$3 clean=$4
  shift 5
  log "-- $job: $label"
  local times=() i s e load
  load=$(load1)
  for ((i = 0; i < n; i++)); do
    rm -f $clean
    s=$EPOCHREALTIME
    if ! "$@" >"$SCRATCH/peer.log" 2>&1; then
      cat "$SCRATCH/peer.log" >&2
      log "   FAILED, skipped"
      return
    fi
    e=$EPOCHREALTIME
    times+=("$(awk -v s="$s" -v e="$e" 'BEGIN{printf "%.6f", e - s}')")
  done
  rm -f $clean
  log "   runs: ${times[*]}"
  printf '%s\n' "${times[@]}" | sort -g | awk -v job="$job" -v label="$label" -v load="$load" '
    { t[NR] = $1 }
    END {
      m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%s\t%s\t%.6f\t%.6f\t%d\t%s\n", job, label, m, t[1], NR, load
    }' >>"$RESULTS"
}

# ---- the jobs ----------------------------------------------------------------------------
HAVE_SWARP=$(command -v "${SWARP_BIN:-SWarp}" || true)
HAVE_MONTAGE=$(command -v "${MPROJECTPP_BIN:-mProjectPP}" || true)
[ -n "$HAVE_SWARP" ] || log "!! SWarp not found (apt-get install swarp): SWarp rows skipped"
[ -n "$HAVE_MONTAGE" ] || log "!! mProjectPP not found (apt-get install montage): Montage rows skipped"

for job in $JOBS; do
  case $job in
    A) n=$SIZE_A stem=A order=bilinear swarp_kernel=BILINEAR ;;
    B) n=$SIZE_B stem=B order=bilinear swarp_kernel=BILINEAR ;;
    C) n=$SIZE_A stem=A order=bicubic swarp_kernel=LANCZOS3 ;;
    *) log "unknown job $job"; exit 2 ;;
  esac
  base="$DATA/${stem}_$n"
  common=(--input "$base.npy" --wcs-in "${base}_in.hdr" --wcs-out "${base}_out.hdr" --order "$order" --repeat "$REPEAT")
  wait_quiet
  log "== job $job: ${n}x$n $order"

  run_result "$job" "floor (read f32 + write f64 data+footprint), all cores" -- \
    "$BENCH_JOB" "${common[@]}" --floor --parallel all
  run_result "$job" "ours, serial" -- "$BENCH_JOB" "${common[@]}" --parallel serial
  run_result "$job" "ours, all cores" -- "$BENCH_JOB" "${common[@]}" --parallel all
  run_result "$job" "ours, all cores, FITS input" -- \
    "$BENCH_JOB" --input "$base.fits" --wcs-out "${base}_out.hdr" --order "$order" \
    --repeat "$REPEAT" --parallel all

  if [ -n "$HAVE_SWARP" ]; then
    cp "${base}_out.hdr" "$SCRATCH/coadd_$job.head"
    swarp=("$HAVE_SWARP" "$base.fits" -c /dev/null -IMAGEOUT_NAME "$SCRATCH/coadd_$job.fits"
      -WEIGHTOUT_NAME "$SCRATCH/coadd_$job.weight.fits" -RESAMPLING_TYPE "$swarp_kernel"
      -COMBINE N -RESAMPLE Y -RESAMPLE_DIR "$SCRATCH" -SUBTRACT_BACK N -FSCALASTRO_TYPE NONE
      -WRITE_XML N -VERBOSE_TYPE QUIET -MEM_MAX 4096 -VMEM_DIR "$SCRATCH"
      -COMBINE_BUFSIZE 1024)
    info=""
    [ "$job" = C ] && info=" (info: LANCZOS3, SWarp has no bicubic)"
    time_cmd "$job" "SWarp $swarp_kernel, $NCPU threads$info" "$PEER_REPEAT" "$SCRATCH/*.resamp*.fits" -- \
      "${swarp[@]}" -NTHREADS "$NCPU"
    if [ "$job" != C ]; then
      time_cmd "$job" "SWarp $swarp_kernel, 1 thread" "$PEER_REPEAT" "$SCRATCH/*.resamp*.fits" -- \
        "${swarp[@]}" -NTHREADS 1
      time_cmd "$job" "SWarp $swarp_kernel, $NCPU threads, PROJECTION_ERR 0 (exact, info)" \
        "$PEER_REPEAT" "$SCRATCH/*.resamp*.fits" -- "${swarp[@]}" -NTHREADS "$NCPU" -PROJECTION_ERR 0
    fi
  fi

  if [ -n "$HAVE_MONTAGE" ] && [ "$job" = A ]; then
    { printf '%-80s\n' "SIMPLE  = T" "BITPIX  = -64"; cat "${base}_out.hdr"; } >"$SCRATCH/montage_$job.hdr"
    time_cmd "$job" "Montage mProjectPP (1 thread, flux-conserving)" "$PEER_REPEAT" "$SCRATCH/pp_$job*.fits" -- \
      "$HAVE_MONTAGE" -f "$base.fits" "$SCRATCH/pp_$job.fits" "$SCRATCH/montage_$job.hdr"
  fi

  run_result "$job" "reproject $("$PY" -c 'import reproject; print(reproject.__version__)'), default (serial)" -- \
    "$PY" scripts/compare_peers.py time --data "$DATA" --job "$job" --size "$n" --repeat "$PY_REPEAT"
  bs=$((n / 4))
  run_result "$job" "reproject, parallel=$NCPU block_size=($bs, $bs) (info)" -- \
    "$PY" scripts/compare_peers.py time --data "$DATA" --job "$job" --size "$n" --repeat "$PY_REPEAT" \
    --parallel "$NCPU" --block-size "$bs" "$bs"
done

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ------------------------------------------------------------------------------
echo
echo "reproject-rs peer comparison: commit $COMMIT (built at start), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $NCPU cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load average at start $LOAD_START, at end $LOAD_END"
echo "ours: wall time of open(memory-mapped input) + reproject_interp -> in-memory f64 data + footprint"
echo
awk -F'\t' '
  { job[NR] = $1; label[NR] = $2; med[NR] = $3; mn[NR] = $4; runs[NR] = $5; ld[NR] = $6
    if ($2 == "ours, all cores") ours[$1] = $3 }
  END {
    fmt = "%-3s  %-68s  %9s  %9s  %4s  %11s  %5s\n"
    printf fmt, "job", "tool", "median s", "min s", "runs", "x ours(all)", "load"
    line = sprintf("%118s", ""); gsub(/ /, "-", line); print line
    for (i = 1; i <= NR; i++) {
      r = (ours[job[i]] > 0) ? sprintf("%.2f", med[i] / ours[job[i]]) : "-"
      if (i > 1 && job[i] != job[i - 1]) print line
      printf fmt, job[i], label[i], sprintf("%.3f", med[i]), sprintf("%.3f", mn[i]), runs[i], r, ld[i]
    }
  }' "$RESULTS"
echo "(x ours(all) = median / median of \"ours, all cores\" of the same job; load = 1-minute load average"
echo " when the row started: above ~0.5 other processes shared the 2 cores and the row is noisy)"

echo
echo "Issue targets (2 cores; ours = all cores; verdict on the ratio of medians, ratio of minima in brackets):"
awk -F'\t' '
  function get(job, re,   i) { for (i = 1; i <= n; i++) if (j[i] == job && l[i] ~ re) return m[i]; return 0 }
  function ratio(a, b) { return (a > 0 && b > 0) ? sprintf("%.1fx", a / b) : "n/a" }
  function both(job1, re1, job2, re2) { return sprintf("%-7s (%s)", ratio(get(job1, re1), get(job2, re2)), ratio(getmin(job1, re1), getmin(job2, re2))) }
  function getmin(job, re,   i) { for (i = 1; i <= n; i++) if (j[i] == job && l[i] ~ re) return mn[i]; return 0 }
  function verdict(ok, a, b) { return (a > 0 && b > 0) ? (ok ? "MET" : "NOT MET") : "not measured" }
  { n++; j[n] = $1; l[n] = $2; m[n] = $3; mn[n] = $4 }
  END {
    oa = get("A", "^ours, all cores$"); ob = get("B", "^ours, all cores$"); oc = get("C", "^ours, all cores$")
    ra = get("A", "^reproject .*default"); rb = get("B", "^reproject .*default"); rc = get("C", "^reproject .*default")
    sa = get("A", "^SWarp BILINEAR, [0-9]+ threads$"); fa = get("A", "^floor"); ma = get("A", "^Montage")
    O = "^ours, all cores$"; R = "^reproject .*default"; S = "^SWarp BILINEAR, [0-9]+ threads$"
    printf "  A  reproject / ours   >= 100x : %-20s %s\n", both("A", R, "A", O), verdict(ra / (oa ? oa : 1) >= 100, ra, oa)
    printf "  A  SWarp / ours       >= 10x  : %-20s %s\n", both("A", S, "A", O), verdict(sa / (oa ? oa : 1) >= 10, sa, oa)
    printf "  B  reproject / ours   >= 20x  : %-20s %s\n", both("B", R, "B", O), verdict(rb / (ob ? ob : 1) >= 20, rb, ob)
    printf "  A  ours / floor       <= 3x   : %-20s %s\n", both("A", O, "A", "^floor"), verdict(oa / (fa ? fa : 1) <= 3, oa, fa)
    printf "  A  Montage / ours     (info)  : %s\n", both("A", "^Montage", "A", O)
    printf "  B  SWarp / ours       (info)  : %s\n", both("B", S, "B", O)
    printf "  C  reproject / ours   (info)  : %s\n", both("C", R, "C", O)
  }' "$RESULTS"

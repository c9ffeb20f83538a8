#!/usr/bin/env bash
# Builds the GPU parity suite, the NVRTC compile check and the GPU benchmark as standalone
# binaries into gpu-bundle/ (git-ignored), the Python package and its GPU tests with the wheels
# they need (Python 3.12), and a run.sh that runs them on a machine with an NVIDIA GPU and its
# driver: no Rust toolchain or network needed there, only libcuda (the driver), a libnvrtc
# (CUDA toolkit, or a pip wheel such as nvidia-cuda-nvrtc-cu12) and Python with numpy (and
# CuPy for the GPU-array paths). Here it needs maturin and pip with network access.
#
#   scripts/gpu_bundle.sh                # here: builds gpu-bundle/
#   gpu-bundle/run.sh                    # there: parity suite, compile check, benchmark
#   REPROJECT_RS_CUDA_SIM=1 PYTHON=python3.12 gpu-bundle/python-paths.sh   # the Python part, here
#   SIZE=4096 gpu-bundle/run.sh          # a smaller benchmark
#   LEASE_S=540 gpu-bundle/lease.sh      # the sections by priority within a device lease
#   LEASE_SECTIONS="ab:330 parity:210" gpu-bundle/lease.sh   # others, with their limits
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-gpu-bundle}"
rm -rf "$OUT"
mkdir -p "$OUT"

echo "== building test binaries (release)"
# The executables cargo built, from its JSON messages.
tests_json="$(cargo test --release --no-run --test gpu_parity --test gpu_kernels_compile \
  --message-format=json 2>/dev/null)"
for name in gpu_parity gpu_kernels_compile; do
  exe="$(printf '%s\n' "$tests_json" | python3 -c '
import json, sys
name = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == name:
        print(m["executable"])
' "$name" | tail -n 1)"
  [ -n "$exe" ] || { echo "error: no executable for test $name" >&2; exit 1; }
  cp "$exe" "$OUT/$name"
done

echo "== building the benchmark and the CLI (release)"
cargo build --release --example gpu_bench --bin reproject-rs
cp target/release/examples/gpu_bench "$OUT/gpu_bench"
cp target/release/reproject-rs "$OUT/reproject-rs"
git describe --always --dirty >"$OUT/gpu_bench.rev"
# Debug info is not needed there (and keeps the bundle small).
for f in "$OUT"/*; do
  strip --strip-debug "$f" 2>/dev/null || true
done

echo "== the Python package and what its GPU tests need, as wheels for the GPU machine's Python 3.12"
# The GPU machine has Python 3.12 with numpy and CuPy, no network: everything else comes as
# wheels (its own numpy is used: the numpy wheel pip picks is dropped).
MATURIN="${MATURIN:-$(command -v maturin || echo .venv/bin/maturin)}"
PIP="${PIP:-$(command -v pip3 || echo .venv/bin/pip)}"
"$MATURIN" build --release --strip -m python-bindings/Cargo.toml -o "$OUT/wheels" >/dev/null
"$PIP" download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d "$OUT/wheels" \
  astropy "dask[array,distributed]" pytest
rm -f "$OUT"/wheels/numpy-*.whl
mkdir -p "$OUT/python-tests"
cp python-bindings/tests/{conftest.py,fake_cupy.py,test_gpu_paths.py,test_gpu_arrays.py} \
  python-bindings/examples/dask_gpu.py python-bindings/benchmarks/gpu_bench.py "$OUT/python-tests/"

cat >"$OUT/python-paths.sh" <<'PYPATHS'
#!/usr/bin/env bash
# The Python package's GPU tests on this machine's GPU (REPROJECT_RS_CUDA_SIM=0; =1 runs them
# on the simulator, e.g. to check the bundle where there is no GPU): every path (numpy, lazy,
# dask threads, a dask.distributed cluster of processes, CuPy in and out, dask arrays of CuPy
# chunks) gives the same bits on the GPU, within 1e-9 of the CPU. Then the dask example and the
# GPU benchmark from Python (SIZE, default 16384: numpy and CuPy in, a line per goal).
# PYTHON (default python3) needs numpy; CuPy for the GPU-array tests (they skip without it).
#   python-paths.sh [tests] [dask] [bench]     # the parts to run, in that order (default: all)
set -uo pipefail
cd "$(dirname "$0")"
py="${PYTHON:-python3}"
site="${TMPDIR:-/tmp}/reproject-rs-python"
rm -rf "$site"
"$py" - "$site" wheels/*.whl <<'UNPACK' || exit 1
import sys, zipfile
for wheel in sys.argv[2:]:
    zipfile.ZipFile(wheel).extractall(sys.argv[1])
UNPACK
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" REPROJECT_RS_CUDA_SIM="${REPROJECT_RS_CUDA_SIM:-0}"
status=0
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(tests dask bench)
for part in "${parts[@]}"; do
  case "$part" in
    tests) "$py" -m pytest -q -p no:cacheprovider -o addopts="" --rootdir python-tests \
             python-tests/test_gpu_paths.py python-tests/test_gpu_arrays.py || status=1 ;;
    dask) "$py" python-tests/dask_gpu.py || status=1 ;;
    bench) "$py" python-tests/gpu_bench.py "${SIZE:-16384}" || status=1 ;;
    *) echo "unknown part $part (tests, dask, bench)" >&2; status=1 ;;
  esac
done
exit $status
PYPATHS
chmod +x "$OUT/python-paths.sh"

cat >"$OUT/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs reproject-rs's GPU checks with the prebuilt binaries beside this script, as sections:
#   info      what reproject-rs finds (GPU, NVRTC)
#   compile   every kernel variant compiles with NVRTC, resources within budget
#   parity    the GPU parity suite (GPU vs CPU)
#   cli       the CLI's GPU paths and mosaics against the CPU's
#   pytests   the Python package's GPU paths (python-paths.sh tests dask)
#   pybench   the GPU benchmark from Python (python-paths.sh bench)
#   bench     the GPU benchmark from Rust (gpu_bench)
#   ab        gpu_bench as built at another revision (gpu_bench_base, added by scripts/gpu_ab.sh)
#             and as built here, in turn, ROUNDS times (default 3), on BENCH_JOBS (default
#             bilinear: its first job only; `all`: every job, bicubic included): a kernel
#             change timed on one machine (not in the default list)
#   profile   Nsight Compute on gpu_bench PROFILE_SIZE (default 4096): the block kernel and
#             the spline prefilter's kernels, or those PROFILE_KERNELS names (not in the
#             default list; needs ncu)
#   run.sh [SECTION...]     # in the order given; default: all, in the order above
# LOGDIR=dir also writes each section's output to dir/SECTION.log (a device run can order the
# sections by priority and keep what finished). Needs the NVIDIA driver; finds libnvrtc on the
# loader path, in $REPROJECT_RS_NVRTC, the CUDA toolkit or a Python wheel. SIZE (default
# 16384) sets the benchmarks' image size; BENCH_JOBS=bilinear stops the Rust benchmark after
# its first job.
set -uo pipefail
cd "$(dirname "$0")"
if [ -z "${REPROJECT_RS_NVRTC:-}" ]; then
  dirs="${CUDA_HOME:-/usr/local/cuda}/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib"
  for py in python3 /opt/torch/.venv/bin/python3; do
    if command -v "$py" >/dev/null 2>&1; then
      dirs="$dirs $("$py" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)"
    fi
  done
  for d in $dirs; do
    [ -d "$d" ] || continue
    lib="$(find "$d" -maxdepth 5 -name 'libnvrtc.so.1[23]*' ! -name '*builtins*' ! -name '*alt*' 2>/dev/null | head -n 1)"
    if [ -n "$lib" ]; then
      export REPROJECT_RS_NVRTC="$(dirname "$lib")"
      break
    fi
  done
fi
echo "REPROJECT_RS_NVRTC=${REPROJECT_RS_NVRTC:-(loader path)}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true
info() {
  status=0
  echo "== what reproject-rs finds"
  printf "NAXIS   = 2\nNAXIS1  = 10\nNAXIS2  = 10\nCTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\nCRVAL1  = 0.0\nCRVAL2  = 0.0\nCRPIX1  = 5.0\nCRPIX2  = 5.0\nCDELT1  = -0.1\nCDELT2  = 0.1\n" >/tmp/reproject-rs-probe.hdr
  ./reproject-rs info /tmp/reproject-rs-probe.hdr | grep -E '^GPU' || status=1
  return $status
}
compile() {
  status=0
  echo "== every kernel compiles with NVRTC"
  # NVRTC 13.0 answers a build it compiled before (here or in an earlier section) from its
  # compute cache (~/.nv/ComputeCache) with an empty log: ask it not to (untested there; the
  # check reads such builds' resources from their CUBINs either way).
  CUDA_CACHE_DISABLE=1 REPROJECT_RS_REQUIRE_NVRTC=1 ./gpu_kernels_compile --nocapture || status=1
  return $status
}
parity() {
  status=0
  echo "== GPU parity suite (GPU vs CPU)"
  ./gpu_parity --nocapture --test-threads=1 || status=1
  return $status
}
cli() {
  status=0
  echo "== GPU paths of the CLI: threads, one worker process per GPU (cuda:all), same values as the CPU"
  demo=/tmp/reproject-rs-demo
  ./reproject-rs demo --out-dir "$demo" --size 1800 -q || status=1
  for device in "cpu" "cuda --threads 4" "cuda:all --processes 4 --block-size 128"; do
    tag="${device%% *}"
    ./reproject-rs "$demo/galactic_survey_car.fits" --to "$demo/galactic_centre_tan.hdr" \
      -o "$demo/paths-$tag.fits" --footprint "$demo/paths-$tag-fp.fits" --overwrite --device $device \
      || status=1
  done
  echo "== mosaics on the GPU against the CPU's: inputs sampled there (offset matching), and"
  echo "   combined there too (no matching: the accumulate kernel), with their times"
  TIMEFORMAT="  %R s"
  for background in offset none; do
    for device in cpu cuda; do
      echo " $background, $device:"
      time ./reproject-rs mosaic "$demo"/mosaic_exposure*.fits --auto-wcs \
        -o "$demo/paths-mosaic-$background-$device.fits" \
        --match-background "$background" --overwrite --device "$device" -q || status=1
    done
  done
  python3 - "$demo" <<'PY' || status=1
import sys, numpy as np
def fits(path, hdu=0):
    """Image HDU `hdu` of a FITS file (no astropy on GPU machines)."""
    buf = open(path, "rb").read()
    start = 0
    for k in range(hdu + 1):
        cards, i = {}, start
        while True:
            card = buf[i:i + 80].decode("ascii")
            i += 80
            if card.startswith("END"):
                break
            if card[8:10] == "= ":
                cards[card[:8].strip()] = card[10:].split("/")[0].strip()
        data = -(-i // 2880) * 2880
        dtype = {"-64": ">f8", "-32": ">f4"}[cards["BITPIX"]]
        shape = (int(cards["NAXIS2"]), int(cards["NAXIS1"]))
        start = data + -(-(shape[0] * shape[1] * np.dtype(dtype).itemsize) // 2880) * 2880
    return np.frombuffer(buf, dtype, shape[0] * shape[1], data).reshape(shape).astype(float)
def same(tag, v, f, cpu, fp, atol=0.0):
    ok = np.array_equal(f, fp) and np.allclose(v, cpu, rtol=1e-9, atol=atol, equal_nan=True)
    rel = np.nanmax(np.abs(v - cpu) / np.maximum(np.abs(cpu), 1e-300))
    print(f"  {tag:9s} footprints identical: {np.array_equal(f, fp)}, max rel {rel:.2e}: {'ok' if ok else 'FAIL'}")
    return ok
d = sys.argv[1]
cpu, fp = fits(f"{d}/paths-cpu.fits"), fits(f"{d}/paths-cpu-fp.fits")
ok = all([same(tag, fits(f"{d}/paths-{tag}.fits"), fits(f"{d}/paths-{tag}-fp.fits"), cpu, fp)
          for tag in ("cuda", "cuda:all")])
for background in ("offset", "none"):
    m = f"{d}/paths-mosaic-{background}"
    ok &= same(f"mosaic, {background}", fits(f"{m}-cuda.fits"), fits(f"{m}-cuda.fits", 1),
               fits(f"{m}-cpu.fits"), fits(f"{m}-cpu.fits", 1), atol=1e-9)
sys.exit(0 if ok else 1)
PY
  return $status
}
pytests() {
  status=0
  echo "== the Python package's GPU paths"
  ./python-paths.sh tests dask || status=1
  return $status
}
pybench() {
  status=0
  echo "== the GPU benchmark from Python"
  ./python-paths.sh bench || status=1
  return $status
}
bench() {
  status=0
  echo "== GPU benchmark"
  # shellcheck disable=SC2086 # BENCH_JOBS is a list of words
  ./gpu_bench "${SIZE:-16384}" ${BENCH_JOBS:-} || status=1
  return $status
}
ab() {
  status=0
  [ -x ./gpu_bench_base ] || { echo "no gpu_bench_base here: scripts/gpu_ab.sh REV adds it"; return 1; }
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for build in gpu_bench_base gpu_bench; do
      echo "== round $round: $build, built at $(cat "$build.rev")"
      # shellcheck disable=SC2086 # BENCH_JOBS is a list of words
      ./"$build" "${SIZE:-16384}" ${BENCH_JOBS:-bilinear} | grep -E "^[0-9]+x|resident|pinned|D2D" || status=1
    done
  done
  return $status
}
profile() {
  status=0
  ncu_bin="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)"
  [ -n "$ncu_bin" ] || { echo "no ncu on this machine"; return 1; }
  sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
  size="${PROFILE_SIZE:-4096}"
  # The bicubic job's second prefilter: float32 samples, so its columns from the samples
  # (rp_spline_filter_from), then its rows (no rp_spline_values since session 27).
  for probe in "rp_reproject_block 40 3" "rp_spline_filter_from 1 1" "rp_spline_filter 1 1"; do
    set -- $probe
    case " ${PROFILE_KERNELS:-$1} " in *" $1 "*) ;; *) continue ;; esac
    echo "== Nsight Compute: $1 (launches $2 to $(( $2 + $3 - 1 )) of gpu_bench $size)"
    # --kill: the benchmark stops once the launches are profiled.
    "$ncu_bin" --clock-control none --kill yes -k "$1" --launch-skip "$2" --launch-count "$3" \
      $sections ./gpu_bench "$size" 2>&1 | grep -v '^==PROF==' || status=1
  done
  return $status
}
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(info compile parity cli pytests pybench bench)
failed=()
for section in "${sections[@]}"; do
  case "$section" in
    info | compile | parity | cli | pytests | pybench | bench | ab | profile) ;;
    *) echo "unknown section $section" >&2; failed+=("$section"); continue ;;
  esac
  if [ -n "${LOGDIR:-}" ]; then
    mkdir -p "$LOGDIR"
    "$section" 2>&1 | tee "$LOGDIR/$section.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("$section")
  else
    "$section" || failed+=("$section")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "FAILED sections: ${failed[*]}"; exit 1; }
echo "all sections passed: ${sections[*]}"
RUN
chmod +x "$OUT/run.sh"

cat >"$OUT/lease.sh" <<'LEASE'
#!/usr/bin/env bash
# run.sh's sections for a device lease of LEASE_S seconds (default 540: one call of the
# device tool, under its 600 s limit), most telling first, each under a limit of its own
# (what it took on the H100 on 2026-11-26, with room) and never past the lease's end; a
# section that cannot have 30 s is skipped. Logs go to LOGDIR (default $OUT when set, else
# ./lease-logs), one per section, so what finished comes back even if the call is cut.
# LEASE_SECTIONS lists other sections, each with its limit in seconds, in the order to run.
#   LEASE_S=540 gpu-bundle/lease.sh
#   LEASE_S=560 LEASE_SECTIONS="ab:330 parity:210" BENCH_JOBS=all gpu-bundle/lease.sh
set -uo pipefail
cd "$(dirname "$0")"
export LOGDIR="${LOGDIR:-${OUT:-./lease-logs}}" PYTHONUNBUFFERED=1
end=$(( $(date +%s) + ${LEASE_S:-540} ))
status=0
# parity took 95 s in session 12 and about 160 s on a fresh machine in session 14 (six tests
# in 100 s, the other four in 57 s): its variants compile there first.
sections="${LEASE_SECTIONS:-info:30 bench:170 pybench:150 parity:210 pytests:120 compile:90 cli:60}"
for entry in $sections; do
  name="${entry%%:*}" want="${entry##*:}"
  case "$want" in
    '' | *[!0-9]*)
      echo "== $entry: not SECTION:SECONDS"
      status=1
      continue
      ;;
  esac
  left=$(( end - $(date +%s) ))
  if [ "$left" -lt 30 ]; then
    echo "== $name skipped: ${left} s left of the lease"
    continue
  fi
  limit=$(( want < left ? want : left ))
  echo "== $name (at most ${limit} s)"
  timeout "$limit" ./run.sh "$name" || { status=1; echo "== $name failed or ran out of time"; }
done
exit $status
LEASE
chmod +x "$OUT/lease.sh"
ls -l "$OUT"
echo "bundle ready: copy $OUT/ to the GPU machine and run $OUT/run.sh"

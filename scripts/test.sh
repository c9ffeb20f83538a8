#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, the Rust suite (unit, integration, doc
# tests) and, once the Python bindings exist, their pytest suite in a project venv.
# Needs only the Rust toolchain and Python 3.11; installs anything else it uses.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${WCS_VECTORS:-}" ] && [ ! -f ../shared/wcs-vectors/summary.json ]; then
  echo "error: ../shared/wcs-vectors not found (set WCS_VECTORS to its path)" >&2
  exit 1
fi

# Each step's heading says when it started, to see where the suite's time goes.
step() { printf '== %s (at %dm%02ds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }
trap 'step "end, exit status $?"' EXIT

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --all-targets -- -D warnings

step "cargo doc -D warnings (the library's documentation and its links)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib
# The same for the internal items, whose links a module split easily breaks (a link such as
# [`Feed`] or [`super::x`] resolves from the module it is written in).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib --document-private-items

step "cargo test"
# The host builds of the CUDA kernels (tests/gpu_host_*.rs) fail here, instead of skipping,
# without a C++ compiler or the WCS vectors.
REPROJECT_RS_REQUIRE_HOST_KERNELS=1 cargo test --all-targets
cargo test --doc

step "the GPU pipeline on the CUDA simulator (no GPU needed: the kernels run as host C++)"
REPROJECT_RS_CUDA_SIM=1 cargo test --test gpu_parity --test gpu_runtime

step "the CUDA simulator's kernels under AddressSanitizer and UBSan (a build of its own)"
# build.rs builds the simulator's kernels with the harnesses' sanitizers and makes the bytes of
# each allocation past its size unreadable: a kernel reading or writing past its buffers, a
# misaligned access or a float-to-integer overflow stops these tests. Its own target directory,
# as its test binaries link the sanitizers' runtimes.
sanitized=(env REPROJECT_RS_SANITIZE_SIM=1 CARGO_TARGET_DIR=target/sanitized-sim)
features=(--no-default-features --features cuda,fits)
"${sanitized[@]}" cargo test "${features[@]}" --lib gpu::sim::sanitized
"${sanitized[@]}" REPROJECT_RS_CUDA_SIM=1 cargo test "${features[@]}" --test cuda_sim \
  --test gpu_parity --test gpu_runtime --test gpu_device_spline --test mosaic_gpu

# The heavy tests use neither CFITSIO nor the CLI: their release build leaves both out (about
# 2 minutes instead of 3 on 2 cores).
heavy=(--release --no-default-features --features cuda)
step "heavy tests (release): memory of a 16384^2 memory-mapped reprojection"
cargo test "${heavy[@]}" --test engine_memory -- --ignored --nocapture
step "heavy tests (release): the 16384^2 host pipeline replayed at H100 rates (timeline model)"
cargo test "${heavy[@]}" --test gpu_timeline -- --ignored --nocapture

if [ -f python-bindings/pyproject.toml ]; then
  step "the Python environment"
  VENV="${VENV:-.venv}"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q maturin pytest numpy astropy "reproject==0.21.*" "dask[array,distributed]" shapely nvidia-cuda-nvrtc-cu12
  step "every kernel compiles with NVRTC, and compiles in the background and in helper processes (no GPU needed; libnvrtc from the nvidia-cuda-nvrtc-cu12 wheel)"
  NVRTC_LIB="$("$VENV/bin/python" -c 'import nvidia.cuda_nvrtc, os; print(os.path.join(list(nvidia.cuda_nvrtc.__path__)[0], "lib"))')"
  REPROJECT_RS_NVRTC="$NVRTC_LIB" REPROJECT_RS_REQUIRE_NVRTC=1 cargo test --test gpu_kernels_compile --test gpu_kernel_args --test gpu_background_compile --test gpu_helper_exit -- --nocapture
  step "python tests (the bindings built in release)"
  "$VENV/bin/maturin" develop --release -m python-bindings/Cargo.toml
  "$VENV/bin/python" -m pytest -q python-bindings/tests
  step "astropy reproject's own tests with reproject_rs.reproject_interp substituted"
  SKIP_BUILD=1 VENV="$VENV" python-bindings/run_upstream_tests.sh -q -rfEs
fi

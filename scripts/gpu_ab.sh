#!/usr/bin/env bash
# Adds to a bundle of scripts/gpu_bundle.sh the GPU benchmark as built at another revision
# (gpu_bench_base), for the `ab` section of the bundle's run.sh: the two builds run in turn on
# one machine, so a kernel change is timed against its base in one device call.
#   scripts/gpu_ab.sh REV [BUNDLE]          # here, after scripts/gpu_bundle.sh (gpu-bundle)
#   ROUNDS=3 gpu-bundle/run.sh ab           # there (BENCH_JOBS, default bilinear, or all; SIZE)
# The base is built in a worktree of REV with a target folder of its own (target/gpu-ab), so
# this checkout's release builds are left as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?usage: scripts/gpu_ab.sh REV [BUNDLE]}"
out="${2:-gpu-bundle}"
[ -x "$out/gpu_bench" ] || {
  echo "error: no $out/gpu_bench: run scripts/gpu_bundle.sh first" >&2
  exit 1
}
tree="$(mktemp -d)/base"
git worktree add -q --detach "$tree" "$rev"
trap 'git worktree remove --force "$tree"' EXIT
echo "== building gpu_bench at $rev (release)"
CARGO_TARGET_DIR="$PWD/target/gpu-ab" cargo build -q --release --example gpu_bench \
  --manifest-path "$tree/Cargo.toml"
cp target/gpu-ab/release/examples/gpu_bench "$out/gpu_bench_base"
strip --strip-debug "$out/gpu_bench_base" 2>/dev/null || true
git -C "$tree" describe --always >"$out/gpu_bench_base.rev"
echo "added $out/gpu_bench_base ($(cat "$out/gpu_bench_base.rev")): run $out/run.sh ab there"

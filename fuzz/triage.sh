#!/usr/bin/env bash
# Groups the crash inputs of a target by panic location / sanitizer summary:
#   fuzz/triage.sh <target> [files...]      (default: fuzz/artifacts/<target>/crash-*)
set -uo pipefail
cd "$(dirname "$0")"
t="$1"; shift
bin="target/x86_64-unknown-linux-gnu/release/$t"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(artifacts/"$t"/crash-* artifacts/"$t"/timeout-* artifacts/"$t"/oom-*)
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  out=$(RUST_BACKTRACE=0 timeout 60 "$bin" -rss_limit_mb=4096 "$f" 2>&1)
  key=$(printf '%s\n' "$out" | grep -a -m1 -A1 "panicked at" | tr '\n' ' ' | sed 's/thread .* panicked at //')
  [ -n "$key" ] || key=$(printf '%s\n' "$out" | grep -a -m1 "SUMMARY\|ERROR: libFuzzer")
  [ -n "$key" ] || key="(no crash on replay)"
  printf '%s\t%s\t%s\n' "$key" "$(wc -c <"$f")" "$f"
done | sort | awk -F'\t' '{ if ($1 != prev) { print ""; print $1; prev = $1 } print "    " $2 " bytes  " $3 }'

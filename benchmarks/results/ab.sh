#!/bin/bash
# A/B run of kernel builds in one lease (the bundle of tools/ab_bundle.sh): every kernel test
# binary, then ROUNDS rounds of the kernel benchmark, the builds alternated within each round.
# Usage (device, repo root): [FILTER=...] [ROUNDS=2] [TESTS=0] bash benchmarks/results/ab.sh BUNDLE
# Logs under $LOGS (default /tmp/encore_logs), packed into $OUT/all_logs.tgz after each phase.
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
# (Logs outside $OUT: the device tool returns at most 8 files, and loose logs can crowd out
# the archive; run 151 lost its logs that way.)
L=${LOGS:-/tmp/encore_logs}
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
# The tests (and env.txt) as run23.sh's test phase runs them, without sanitizers.
# TESTS=0 skips them (a second run of builds whose tests passed earlier in the session).
if [ "${TESTS:-1}" != 0 ]; then SANITIZERS= bash "$(dirname "$0")/run23.sh" "$1" tests; fi
F=${FILTER:-'gpumode/s./auto/it|fewtiles/.*/auto'}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for b in "$B"/b_*; do
    v=${b##*/b_}
    timeout 150 "$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
  pack
done

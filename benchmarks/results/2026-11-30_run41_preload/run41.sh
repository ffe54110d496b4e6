#!/bin/bash
# Device run 41 (2026-11-30, session 5): the _preload experiment against the default (early
# weight loads). Bundle gb/ = tools/ab_bundle.sh gpu_ab4 _preload _parts2 (only b_default and
# b_preload are run). Usage (repo root): bash run41.sh gb
G=$(cd "$1" && pwd)
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
export LD_LIBRARY_PATH=$G
t=$G/tests/sm90_nvfp4_grouped_gemm_preload_test
timeout 120 "$t" > "$L/t_preload_test.txt" 2>&1; echo "rc=$?" >> "$L/t_preload_test.txt"
grep -E '^\[  (PASSED|FAILED)' "$L/t_preload_test.txt"; tail -1 "$L/t_preload_test.txt"
F='gpumode/s./auto/it|fewtiles/.*/auto'
for round in 1 2; do
  for v in default preload; do
    timeout 150 "$G/b_$v" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
  pack
done

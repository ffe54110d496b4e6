#!/bin/bash
# Run 205 (session 30): the manual build _n8 (token tiles rounded to 8 rows: wgmma n in steps of 8)
# against the default, same commit, one lease: ROUNDS alternated rounds of the kernel benchmark,
# then the _n8 kernel test (every case) unless TESTS=0.
# Here: tools/ab_bundle.sh gpu_n8 _n8 (gpu_n8.tar.xz, carried). There (repo root):
#   mkdir -p gb && tar xJf gpu_n8.tar.xz -C gb && bash benchmarks/results/2026-12-02_run205_n8/run205.sh gb
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${LOGS:-/tmp/encore_logs}
mkdir -p "$L"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; } > "$L/env.txt" 2>&1
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
F=${FILTER:-'gpumode/s./auto/(it|early/)|fewtiles/[a-z0-9_]+/auto/it|decode/[a-z0-9_]+/m(8|16|40|72)/it'}
for round in $(seq 1 "${ROUNDS:-3}"); do
  for b in "$B"/b_*; do
    v=${b##*/b_}
    timeout 150 "$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round rc=$?"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
  pack
done
if [ "${TESTS:-1}" != 0 ]; then
  t="$B/tests/sm90_nvfp4_grouped_gemm_n8_test"
  s0=$(date +%s)
  timeout 300 "$t" > "$L/t_n8.txt" 2>&1
  echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> "$L/t_n8.txt"
  grep -E '^\[  (PASSED|FAILED|  SKIPPED)|FAILED|Failure' "$L/t_n8.txt" | head -20; tail -1 "$L/t_n8.txt"
  pack
fi

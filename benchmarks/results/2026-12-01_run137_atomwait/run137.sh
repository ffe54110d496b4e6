#!/bin/bash
# Device run 137: _atomwait (a work item's first fp16 token stage on two barriers, one a 64-k
# atom: the consumers start steps 0-3 once the first atom has landed) against the default: its
# kernel test, then ROUNDS rounds alternating the builds.
# Usage (repo root; carry gpu_a137.tar.xz = tools/ab_bundle.sh gpu_a137 _atomwait):
#   bash benchmarks/results/2026-12-01_run137_atomwait/run137.sh
mkdir -p ga && tar xJf gpu_a137.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
s0=$(date +%s)
timeout 240 ga/tests/sm90_nvfp4_grouped_gemm_atomwait_test > $L/t_atomwait.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_atomwait.txt
echo "atomwait test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_atomwait.txt | tr '\n' ' ') $(tail -1 $L/t_atomwait.txt)"
pack
F='gpumode/s./auto/it|fewtiles/(one_tile|decode8|tiny)/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default atomwait; do
    timeout 90 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

#!/bin/bash
# Device run 133 (prepared in session 19, not yet run): the manual build _pre32 (the token
# pre-pass's unit index by one 32-bit division instead of div.s64; run 132's ncu lead) against the
# default: _pre32's whole kernel test, then ROUNDS rounds alternating the builds on the GPU MODE
# shapes, their pre-passes alone and the few-tile shapes.
# Usage (repo root; carry gpu_a133.tar.xz = tools/ab_bundle.sh gpu_a133 _pre32):
#   bash benchmarks/results/2026-12-01_run133_pre32_ready/run133.sh
mkdir -p ga && tar xJf gpu_a133.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=ga/tests/sm90_nvfp4_grouped_gemm_pre32_test
s0=$(date +%s)
timeout 220 $T > $L/t_pre32.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_pre32.txt
echo "pre32 test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_pre32.txt | tr '\n' ' ') $(tail -1 $L/t_pre32.txt)"
pack
F='gpumode/s./auto/(it|prepass_only/)|fewtiles/(one_tile|decode8)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default pre32; do
    timeout 90 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  done
  pack
done

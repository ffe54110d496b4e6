#!/bin/bash
# Device run 144 (session 21): the stream-K walk with each CTA's split pieces first (_skfirst,
# ENCORE_SM90_SK_SPLITS_FIRST=1) against the default. Phase 1: the whole _skfirst kernel test and
# memcheck of its stream-K tests (correctness of the reordered walk and both reduction protocols).
# Phase 2: ROUNDS rounds of the kernel benchmark, builds alternated: the stream-K shapes (GPU MODE
# shape 0 by kAuto and forced with the default, half and quarter split io costs; one_tile) and the
# other GPU MODE shapes as a control (not stream-K: unchanged code paths).
# Usage (repo root; carry gpu_a144.tar.xz from tools/ab_bundle.sh gpu_a144 _skfirst):
#   bash benchmarks/results/2026-12-01_run144_sk_splits_first/run144.sh
mkdir -p gb && tar xJf gpu_a144.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/env.txt
timeout 300 $B/tests/sm90_nvfp4_grouped_gemm_skfirst_test > $L/test_skfirst.txt 2>&1
echo "== test _skfirst rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $L/test_skfirst.txt | tr '\n' ' ')"
timeout 200 compute-sanitizer --tool memcheck $B/tests/sm90_nvfp4_grouped_gemm_skfirst_test \
  --gtest_filter='*StreamK*' > $L/memcheck_skfirst.txt 2>&1
echo "== memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $L/memcheck_skfirst.txt | tr '\n' ' ')"
pack
F='gpumode/s./auto/it|gpumode/s0/stream_k/costs(0|13|14)/|fewtiles/one_tile/(auto/it|stream_k/costs(0|13|14)/)'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default skfirst; do
    timeout 150 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

#!/bin/bash
# Device run 183 (session 26): the manual build _early_ready (the ready count for early
# pre-passes: the next GEMM computes beside the previous one's last CTAs) against the default
# build, both on the default calls (auto) and as multi-call graphs prepare them (auto/early):
# 2 alternated rounds of the kernel benchmark, then the _early_ready kernel test's early and
# back-to-back tests.
# Usage (repo root; carry gpu_ab183.tar.xz from tools/ab_bundle.sh gpu_ab183 _early_ready):
#   bash benchmarks/results/2026-12-02_run183_early_ready/run183.sh <commit>
mkdir -p gb && tar xJf gpu_ab183.tar.xz -C gb
B=$(cd gb && pwd)
export LD_LIBRARY_PATH=$B
L=/tmp/logs183
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs183.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
F='(gpumode/s.|fewtiles/(one_tile|decode8))/auto/(early|it)'
for round in 1 2; do
  for v in default early_ready; do
    timeout 60 $B/b_$v --benchmark_filter="$F" > $L/bench_${v}_$round.txt 2>&1
    echo "== $v round $round rc=$?"; grep median $L/bench_${v}_$round.txt | awk '{print $1, $3}'
  done
  pack
done
timeout 100 $B/tests/sm90_nvfp4_grouped_gemm_early_ready_test \
  --gtest_filter='*EarlyPrepass*:*PrepassPlansBackToBack*' > $L/t_early_ready.txt 2>&1
echo "early_ready test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_early_ready.txt | tr '\n' ' ')"
pack

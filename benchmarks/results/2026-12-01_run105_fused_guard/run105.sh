#!/bin/bash
# Device run 105 (2026-12-01, session 16): the fused pre-pass's barrier without co-residency and
# FusePrepass::kAuto (ccf84b6). The default build's kernel test (with the new
# FusedPrepassProgressesWithoutCoResidency), memcheck of the fused tests, then ROUNDS rounds of
# the kernel benchmark: kAuto (auto/it), never fused (auto/unfused), always fused (auto/fused).
# Usage (repo root; carry gpu_f.tar.xz = tools/ab_bundle.sh gpu_f):
#   bash benchmarks/results/2026-12-01_run105_fused_guard/run105.sh
mkdir -p gb && tar xJf gpu_f.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_test
s0=$(date +%s)
timeout 240 $T > $L/t_default.txt 2>&1; echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_default.txt
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|rc=" $L/t_default.txt
grep -A3 "FusedPrepassProgressesWithoutCoResidency" $L/t_default.txt | head -8
pack
s0=$(date +%s)
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*FusedPrepassProgressesWithoutCoResidency*:*PlansLaunchBehindTheKernelBeforeThem*' > $L/san_memcheck.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/san_memcheck.txt; tail -3 $L/san_memcheck.txt
pack
F='gpumode/s./auto/(it|unfused/it|fused/it)|fewtiles/(decode8|one_tile|tiny)/auto/(it|unfused/it)'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 100 $B/b_default --benchmark_filter="$F" > $L/bench_$round.txt 2>&1
  echo "== round $round"; grep median $L/bench_$round.txt | awk '{print $1, $2}' | sed 's/iterations:1.repeats:[0-9]*.manual_time_median//'
  pack
done

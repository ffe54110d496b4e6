#!/bin/bash
# Run 242 (session 38): the GPU test binaries after the review fixes of 4184458 (runner) and
# 365e8c4 (graph cache), and the GPU MODE calls as a check that the host changes moved nothing.
# Here: tools/gpu_bundle.sh gpu_s38 (carried as gpu_s38.tar.xz). There:
#   bash benchmarks/results/2026-12-03_run242_review_fixes/run242.sh
[ -d gb/gpu_s38 ] || { mkdir -p gb && tar xJf gpu_s38.tar.xz -C gb; }
B=gb/gpu_s38
L=/tmp/logs242
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
# Each test binary on its own (a failure names its binary). (The first call, at 9a7306c, left out
# the weights-normal kernel test; the kernel test took 57 s, so the second runs both.)
rc=0
for t in $B/tests/*; do
  n=$(basename $t)
  LD_LIBRARY_PATH=$(pwd)/$B timeout 400 $t > $L/test_$n.txt 2>&1 || { rc=1; echo "FAIL $n" >> $L/summary.txt; }
  echo "$n: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' $L/test_$n.txt | tr '\n' ' ')" >> $L/summary.txt
done
LD_LIBRARY_PATH=$(pwd)/$B timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
  --benchmark_filter='gpumode/s[0-3]/auto/iter' --benchmark_report_aggregates_only=true \
  > $L/bench.txt 2>&1
grep median $L/bench.txt | awk '{print $1, $2}' >> $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs242.tar.xz -C $L .
exit $rc

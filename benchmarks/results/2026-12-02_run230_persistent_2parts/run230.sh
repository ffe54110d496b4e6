#!/bin/bash
# Run 230 (session 34): the persistent kernel's tiles of <= 128 tokens in 2 parts a stage by
# default (ENCORE_SM90_PERSISTENT_NARROW_PARTS = 2; run 229's _pw2 without the stream-K kernel).
# Every GPU test binary of the new default, memcheck on the persistent kernel's tests, then 2
# alternated rounds of the old default (gpu_s33d, 0fe45a9) and the new one.
# Here: tools/gpu_bundle.sh gpu_s34 (gpu_s34.tar.xz) and gpu_s33d.tar.xz, both carried. There:
#   bash benchmarks/results/2026-12-02_run230_persistent_2parts/run230.sh
for d in gpu_s34 gpu_s33d; do [ -d gb/$d ] || { mkdir -p gb && tar xJf $d.tar.xz -C gb; }; done
L=/tmp/logs230
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
export LD_LIBRARY_PATH=$(pwd)/gb/gpu_s34
start=$(date +%s)
for t in gb/gpu_s34/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/test_$n.txt 2>&1
  echo "$n rc=$? $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/test_$n.txt | tr '\n' ' ')"
done
echo "tests took $(( $(date +%s) - start )) s"
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
  gb/gpu_s34/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='Sm90GemmTest.PackedPersistentScheduleMatchesReference:Sm90GemmTest.GpuModeShapesBothKernelsBothDistributions' \
  > $L/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $L/memcheck.txt | tr '\n' ' ')"
F='gpumode/s[0-3]/auto/iter|decode/n7168_k2048/m(64|96)/iter|moe/e64_s4096/n(4096_k7168|7168_k2048)/iter'
for r in 1 2; do
  for v in gpu_s33d gpu_s34; do
    LD_LIBRARY_PATH=$(pwd)/gb/$v gb/$v/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
      --benchmark_repetitions=10 --benchmark_report_aggregates_only=true > $L/bench_${v}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs230.tar.xz -C $L .

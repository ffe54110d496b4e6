#!/bin/bash
# Run 229 (session 34): tiles of widths <= 128 in 2 parts a stage in the persistent and stream-K
# kernels too (manual build _pw2, ENCORE_SM90_NARROW_PARTS=2; wider tiles keep 4), after run
# 226's micro table put 2 parts 3-12 points of the tensor peak above 4 at widths 64-128. The
# _pw2 kernel tests (a subset), then 3 alternated rounds of default / _pw2.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_pw2
#   //tests/gemm:sm90_nvfp4_grouped_gemm_pw2_test, copied with the default benchmark of gpu_s33d
#   (0fe45a9) into gpu_p/, packed as gpu_p.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-02_run229_narrow_parts/run229.sh
[ -d gb/gpu_p ] || { mkdir -p gb && tar xJf gpu_p.tar.xz -C gb; }
B=gb/gpu_p
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs229
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
T='Sm90GemmTest.GpuModeShapesBothKernelsBothDistributions:Sm90GemmTest.StreamK*:Sm90GemmTest.BalancedStreamKMatchesReference:Sm90GemmTest.PackedPersistentScheduleMatchesReference:Sm90GemmTest.DynamicMComputesOnlyValidRows:Sm90GemmTest.SixtyFourGroups:Sm90GemmTest.TokenTileEdgesAndAllGroupsEmpty:Sm90KernelResourcesTest.*'
timeout 200 $B/sm90_nvfp4_grouped_gemm_pw2_test --gtest_filter="$T" > $L/test_pw2.txt 2>&1
echo "pw2 test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_pw2.txt | tr '\n' ' ')"
F='gpumode/s[0-3]/auto/iter|decode/n7168_k2048/m(64|96)/iter|moe/e64_s4096/n4096_k7168/iter'
for r in 1 2 3; do
  for v in "" _pw2; do
    $B/sm90_nvfp4_grouped_gemm$v --benchmark_filter="$F" --benchmark_repetitions=10 \
      --benchmark_report_aggregates_only=true > $L/bench${v:-_default}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs229.tar.xz -C $L .

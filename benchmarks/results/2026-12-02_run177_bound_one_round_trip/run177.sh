#!/bin/bash
# Device run 177 (session 25): run 176 again (its tests, memcheck and kernel benchmark; no replay
# processes: 309 s of device time left) after the bound pre-pass's blocks load their token
# pointers in one L2 round trip.
# Usage (repo root; carry gpu_s177.tar.xz = gpu_r172/: kernel test, executor/sequence tests,
# kernel benchmark, replay, libbenchmark; built with tools/bazel build -c opt at ccfcc24):
#   bash benchmarks/results/2026-12-02_run177_bound_one_round_trip/run177.sh ccfcc24
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s177.tar.xz -C gb
B=gb/gpu_r172
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs177
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs177.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 200 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*Bound*:*NoKernelUsesLocalMemory*:*LaunchPlanAsGraphNodeAndPdl*:*PlansLaunchBehind*:*InvalidArguments*:*PrepassPlansBackToBack*:*StreamKWorkspacesArePerStream*' \
  > $L/t_kernel.txt 2>&1
echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel.txt | tr '\n' ' ')"
for n in executor_test sequence_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*BoundPlansServe*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_kernel.txt | tr '\n' ' ')"
pack
timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
  --benchmark_filter='gpumode/s./auto/bound/iter|fewtiles/tiny/auto/bound/iter|gpumode/s./auto/iter|fewtiles/tiny/auto/iter' \
  > $L/bench.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack

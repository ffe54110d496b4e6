#!/bin/bash
# Device run 176 (session 25): run 175 again with the bound GEMM's early weight loads back (the producer polls the binding block's 'filled' word). Before: run 175 (padding for the bound pre-pass's own static shared memory), run 174: a slot that was not staged is read over the bus
# by the bound pre-pass's block 0 alone (the other blocks wait for its 'filled' release; run 173:
# every block reading it cost ~1 us a block on the first call after a sync): the kernel test's
# bound, launch and validation tests, the bound test under memcheck, executor and sequence tests,
# the kernel benchmark's bound family beside auto, then 6 replay processes.
# Usage (repo root; carry gpu_s176.tar.xz = gpu_r172/: kernel test, executor/sequence tests,
# kernel benchmark, replay, libbenchmark; built with tools/bazel build -c opt at f847d22):
#   bash benchmarks/results/2026-12-02_run176_bound_early_weights/run176.sh f847d22
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s176.tar.xz -C gb
B=gb/gpu_r172
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs176
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs176.tar.xz -C $L .; }
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
for i in 1 2 3 4 5 6; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_rebind |^graph_rebind_bound " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s e %s th %s te %s | ", $1, $2, $3, $4, $5, $6}')"
done
pack

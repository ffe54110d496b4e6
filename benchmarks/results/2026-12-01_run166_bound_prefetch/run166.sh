#!/bin/bash
# Device run 166 (session 24): bound calls with the next call's bindings prefetched by the GEMM
# before it. The bound tests (kernel test under memcheck too), the kernel benchmark's bound family
# beside auto (GPU MODE shapes, tiny), then 4 processes of //benchmarks:replay pinned to one core.
# Usage (repo root; carry gpu_s166.tar.xz: gpu_r166/{sm90_nvfp4_grouped_gemm, replay, the kernel
# and executor tests} + libbenchmark):
#   bash benchmarks/results/2026-12-01_run166_bound_prefetch/run166.sh COMMIT
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s166.tar.xz -C gb
B=gb/gpu_r166
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs166
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
timeout 120 $B/sm90_nvfp4_grouped_gemm_test --gtest_filter='*Bound*' > $L/t_kernel.txt 2>&1
echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel.txt | tr '\n' ' ')"
timeout 120 $B/executor_test --gtest_filter='*Bound*:*Swapping*' > $L/t_executor.txt 2>&1
echo "executor rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_executor.txt | tr '\n' ' ')"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*BoundPlansServe*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_kernel.txt | tr '\n' ' ')"
pack
timeout 240 $B/sm90_nvfp4_grouped_gemm \
  --benchmark_filter='bound|gpumode/s./auto/iter|fewtiles/tiny/auto/iter' > $L/bench.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_rebind |^graph_rebind_bound " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s e %s tinyh %s fl %s | ", $1, $2, $3, $4, $5, $7}')"
  pack
done

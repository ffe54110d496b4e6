#!/bin/bash
# Device run 167 (session 24): the final code (69cd866). The GPU test binaries (kernel, graph
# cache), the bound kernel test under memcheck, the kernel benchmark's bound family beside auto,
# then 5 processes of //benchmarks:replay pinned to one core (replay.json: their per-field medians).
# Usage (repo root; carry gpu_s167.tar.xz: tools/gpu_bundle.sh output, stripped):
#   bash benchmarks/results/2026-12-01_run167_final/run167.sh 69cd866
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s167.tar.xz -C gb
B=gb/gpu_r167
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs167
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in sm90_nvfp4_grouped_gemm_test executor_test sequence_test batch_test backend_test; do
  timeout 150 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*BoundPlansServe*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_kernel.txt | tr '\n' ' ')"
pack
timeout 120 $B/bin/sm90_nvfp4_grouped_gemm \
  --benchmark_filter='gpumode/s./auto/bound/iter|fewtiles/tiny/auto/bound/iter|gpumode/s./auto/iter|fewtiles/tiny/auto/iter' \
  > $L/bench.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack
for i in 1 2 3 4 5; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_rebind |^graph_rebind_bound |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s e %s fl %s | ", $1, $2, $3, $4, $7}')"
  pack
done

#!/bin/bash
# Device run 185: graph_cache merged launches (46ce2d2). The graph_cache test binaries (the new GPU
# test BatchMergesIndependentSmallCallsBitForBit: merged launches bit for bit against direct ones,
# patched, simple alone vs persistent merged), memcheck of it, 8 main-job processes (batch and
# sequence modes now merge shape 3 and the tiny problem), and the kernel benchmark's merge<c> with
# the chunk fix (ed67b98).
# Build here: tools/gpu_bundle.sh gpu_r185 && tar cJf gpu_s185.tar.xz gpu_r185
# Usage (repo root; carry gpu_s185.tar.xz): bash benchmarks/results/2026-12-02_run185_merged_launches/run185.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s185.tar.xz -C gb
B=gb/gpu_r185
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs185
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs185.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test backend_test; do
  timeout 300 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
grep -E "BatchMerges" $L/t_executor_test.txt
pack
timeout 240 compute-sanitizer --tool memcheck $B/tests/executor_test --gtest_filter='*BatchMerges*' > $L/memcheck_merges.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $L/memcheck_merges.txt | tr '\n' ' ')"
pack
for i in $(seq 1 8); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^graph_batch_prebuilt |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s e %s th %s te %s fl %s | ", $1, $2, $3, $4, $5, $6, $7}')"
done
pack
$B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='(gpumode/s.|fewtiles/(one_tile|decode8|tiny))/auto/merge' \
  --benchmark_out=$L/bench_merge.json > $L/bench_merge.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench_merge.txt | sed -E "s#/iterations:1/repeats:[0-9]+/manual_time##" | cut -c1-150
pack

#!/bin/bash
# Run 224 (session 33): the final commit e65b76f (GemmBatch's move operations since run 223's
# acf8c3f): the GPU test binaries of graph_cache and the device tests, then 4 replay processes.
# Here: tools/gpu_bundle.sh gpu_s33c at e65b76f. There:
#   bash benchmarks/results/2026-12-02_run224_final_check/run224.sh
[ -d gb/gpu_s33c ] || { mkdir -p gb && tar xJf gpu_s33c.tar.xz -C gb; }
B=gb/gpu_s33c
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs224
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs224.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for n in executor_test sequence_test backend_test device_test device_problem_test; do
  s0=$(date +%s)
  timeout 120 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=e65b76f \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_batch |^graph_batch_prebuilt |^sequence_step |^graph_per_call " $L/replay/new_$i.txt | awk '{printf "%s h %s | ", $1, $2}')"
  pack
done

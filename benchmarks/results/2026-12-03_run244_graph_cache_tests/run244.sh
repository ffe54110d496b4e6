#!/bin/bash
# Run 244 (session 38): the graph cache's GPU test binaries after 31e56a1 (a new variant checked
# with its own bytes before capture), and one replay process.
# Here: tools/gpu_bundle.sh gpu_s38 at 31e56a1 (carried as gpu_s38.tar.xz). There:
#   bash benchmarks/results/2026-12-03_run244_graph_cache_tests/run244.sh
[ -d gb/gpu_s38 ] || { mkdir -p gb && tar xJf gpu_s38.tar.xz -C gb; }
B=gb/gpu_s38
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs244
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
rc=0
for n in executor_test sequence_test backend_test; do
  timeout 200 $B/tests/$n > $L/test_$n.txt 2>&1 || { rc=1; echo "FAIL $n" >> $L/summary.txt; }
  echo "$n: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' $L/test_$n.txt | tr '\n' ' ')" >> $L/summary.txt
done
timeout 90 taskset -c 5 $B/bin/replay --encore_json=$L/replay.json --encore_commit=31e56a1 \
  > $L/replay.txt 2>&1 || rc=1
grep -E "^graph_batch |^graph_batch_prebuilt |^sequence_step |^graph_per_call |^graph_prebuilt " $L/replay.txt >> $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs244.tar.xz -C $L .
exit $rc

#!/bin/bash
# Run 212 (session 31): the graph_cache GPU tests (executor, sequence, batch, backend) and the
# device tests after the sequence recorder's and the options' fixes (571c74a), plus 4 replay
# processes (the recorder's period launches on the hot path).
# Here: tools/gpu_bundle.sh gpu_s31f at 571c74a (gpu_s31f.tar.xz). There:
#   bash benchmarks/results/2026-12-02_run212_recorder_fixes/run212.sh
[ -d gb/gpu_s31f ] || { mkdir -p gb && tar xJf gpu_s31f.tar.xz -C gb; }
B=gb/gpu_s31f
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs212
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs212.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test backend_test device_test device_problem_test; do
  timeout 120 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=571c74a \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s dev %s hf %s | ", $1, $2, $3, $8}')"
done
pack

#!/bin/bash
# Run 206 (session 30): the graph_cache GPU tests at ccf6181 (the fast hit's one record per
# variant), then //benchmarks:replay before (6a60970: old) and after (ccf6181: new) that change,
# alternated processes in one lease, pinned to one core as run 204.
# Here: replay_old built at 6a60970's graph_cache/executor.cc, replay_new and the tests at ccf6181
# (-c opt), packed as gpu_r206.tar.xz (carried). There (repo root):
#   bash benchmarks/results/2026-12-02_run206_hit_record/run206.sh [PAIRS]
[ -d gb/gpu_r206 ] || { mkdir -p gb && tar xJf gpu_r206.tar.xz -C gb; }
B=gb/gpu_r206
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs206
mkdir -p $L/replay $L/tests
pack() { tar cJf ${OUT:-/tmp/out}/logs206.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 120 $t > $L/tests/$n.txt 2>&1
  echo "$n rc=$? $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/tests/$n.txt | tr '\n' ' ')"
done
grep -h -A3 'Failure' $L/tests/*.txt | head -20
pack
for i in $(seq 1 ${1:-10}); do
  for v in old new; do
    c=$([ $v = old ] && echo 6a60970 || echo ccf6181)
    timeout 60 taskset -c 5 $B/replay_$v --encore_json=$L/replay/${v}_$i.json --encore_commit=$c \
      > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/${v}_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  done
  [ $((i % 3)) = 0 ] && pack
done
pack

#!/bin/bash
# Device run 157 (session 23): the graph cache's hit memo (900c840) and the driver's entry points
# for cuGraphLaunch / cuStreamIsCapturing (0b472ec). First the graph_cache and cuda_utils test
# binaries (their GPU tests included), then the main job A/B: `old` = //benchmarks:replay at
# c281e7a, `new` = at 0b472ec, alternated, 4 processes each, pinned to one core.
# Usage (repo root; carry gpu_s157.tar.xz: gpu_r157/{old,new}/replay, gpu_r157/tests/*, stripped,
# with libbenchmark):
#   bash benchmarks/results/2026-12-01_run157_hit_memo/run157.sh
mkdir -p gb && tar xJf gpu_s157.tar.xz -C gb
B=gb/gpu_r157
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs157
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
uptime > $L/uptime.txt
for n in executor_test sequence_test batch_test backend_test device_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in 1 2 3 4; do
  for v in old new; do
    timeout 45 taskset -c 5 $B/$v/replay --encore_json=$L/replay/${v}_$i.json \
      --encore_commit=$([ $v = old ] && echo c281e7a || echo 0b472ec) > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E '^floors' $L/replay/${v}_$i.txt | grep -oE 'graph, 1 node [0-9.]+|through the driver.*' | tr '\n' ' ')"
    grep -E "^graph_per_call |^graph_rebind |^graph_batch |^sequence_step " $L/replay/${v}_$i.txt | cut -c1-110
  done
  pack
done

#!/bin/bash
# Device run 158 (session 23): the main job A/B again, with more processes than run 157 (whose
# host ran slow: empty-graph floors 1.9-2.2 us). `old` = //benchmarks:replay at c281e7a, `new` =
# at d065a74 (hit memo, driver entry points, and the graph_prebuilt decomposition mode),
# alternated, 10 processes each, pinned to one core; the new processes give replay.json.
# Usage (repo root; carry gpu_s158.tar.xz: gpu_r158/{old,new}/replay stripped, libbenchmark):
#   bash benchmarks/results/2026-12-01_run158_per_call_ab/run158.sh
mkdir -p gb && tar xJf gpu_s158.tar.xz -C gb
B=gb/gpu_r158
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs158
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
uptime > $L/uptime.txt
lscpu > $L/lscpu.txt
for i in 1 2 3 4 5 6 7 8 9 10; do
  for v in old new; do
    timeout 45 taskset -c 5 $B/$v/replay --encore_json=$L/replay/${v}_$i.json \
      --encore_commit=$([ $v = old ] && echo c281e7a || echo d065a74) > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt " $L/replay/${v}_$i.txt | awk '{printf "%s %s floor %s | ", $1, $2, $7}')"
  done
  pack
done

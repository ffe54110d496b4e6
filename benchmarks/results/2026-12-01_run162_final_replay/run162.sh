#!/bin/bash
# Device run 162 (session 23): the main job at the session's final graph-cache code (d82305a: the
# capture query checks for a current context first) alternated with 956bc66's (run 160's new),
# 10 processes each, pinned to one core; the d82305a processes give replay.json.
# Usage (repo root; carry gpu_s162.tar.xz: gpu_r162/{old,new}/replay, libbenchmark):
#   bash benchmarks/results/2026-12-01_run162_final_replay/run162.sh
mkdir -p gb && tar xJf gpu_s162.tar.xz -C gb
B=gb/gpu_r162
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs162
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
uptime > $L/uptime.txt
for i in 1 2 3 4 5 6 7 8 9 10; do
  for v in old new; do
    timeout 45 taskset -c 5 $B/$v/replay --encore_json=$L/replay/${v}_$i.json \
      --encore_commit=$([ $v = old ] && echo 956bc66 || echo d82305a) > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step " $L/replay/${v}_$i.txt | awk '{printf "%s %s floor %s | ", $1, $2, $7}')"
  done
  pack
done

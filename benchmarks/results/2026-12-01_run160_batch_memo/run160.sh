#!/bin/bash
# Device run 160 (session 23): the hit memo extended to RunBatch (956bc66). First the graph_cache
# test binaries (GPU tests included), then the main job A/B: `old` = //benchmarks:replay at
# d065a74 (run 158's new binary: the memo for Run only), `new` = at 956bc66, alternated,
# 10 processes each, pinned to one core.
# Usage (repo root; carry gpu_s160.tar.xz: gpu_r160/{old,new}/replay, gpu_r160/tests/*, stripped,
# with libbenchmark): bash benchmarks/results/2026-12-01_run160_batch_memo/run160.sh
mkdir -p gb && tar xJf gpu_s160.tar.xz -C gb
B=gb/gpu_r160
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs160
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
uptime > $L/uptime.txt
for n in executor_test sequence_test batch_test backend_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in 1 2 3 4 5 6 7 8 9 10; do
  for v in old new; do
    timeout 45 taskset -c 5 $B/$v/replay --encore_json=$L/replay/${v}_$i.json \
      --encore_commit=$([ $v = old ] && echo d065a74 || echo 956bc66) > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step " $L/replay/${v}_$i.txt | awk '{printf "%s %s floor %s | ", $1, $2, $7}')"
  done
  pack
done

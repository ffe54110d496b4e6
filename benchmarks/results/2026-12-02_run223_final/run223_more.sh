#!/bin/bash
# Run 223, second call (the same warm machine, right after run223.sh): 8 more replay processes of
# acf8c3f, pinned to one core, for the final main-job medians (replay.json: these 8 and run223.sh's
# 5 new processes). Issued inline as:
[ -d gb/gpu_s33b ] || { mkdir -p gb && tar xJf gpu_s33b.tar.xz -C gb; }
B=gb/gpu_s33b; export LD_LIBRARY_PATH=$(pwd)/$B; L=/tmp/logs223b; mkdir -p $L
for i in 1 2 3 4 5 6 7 8; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/new_$i.json --encore_commit=acf8c3f > $L/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_batch |^sequence_step |^graph_per_call " $L/new_$i.txt | awk '{printf "%s h %s | ", $1, $2}')"
done
tar cJf $OUT/logs223b.tar.xz -C $L .

#!/bin/bash
# Device run 57 (2026-11-30, session 7): A/B of the grid-stride pre-pass (_pgrid, 4642e9f) vs the
# default, then 8 more processes of the main job at 92a016d (bundle gpu_s7c of run 56).
# Usage (repo root; carry gpu_s7d.tar.xz and gpu_s7c.tar.xz): bash benchmarks/results/2026-11-30_run57_prepass_grid/run57.sh
mkdir -p gb && tar xJf gpu_s7d.tar.xz -C gb && tar xJf gpu_s7c.tar.xz -C gb
FILTER='gpumode/s./auto/(it|pdl/)|fewtiles/.*/auto/(it|pdl/)' ROUNDS=2 bash benchmarks/results/ab.sh gb > $OUT/ab.txt 2>&1
grep -A20 "== " $OUT/ab.txt | grep -v "^--" | awk '{print $1, $2, $3}' | sed 's/iterations:1\/repeats:[0-9]*\/manual_time_median//'
cat $OUT/logs/tests_summary.txt
export LD_LIBRARY_PATH=$(pwd)/gb/gpu_s7c
for i in 7 8 9 10 11 12 13 14; do
  timeout 60 taskset -c 5 gb/gpu_s7c/bin/replay --encore_json=$OUT/logs/replay_$i.json --encore_commit=92a016d > $OUT/logs/replay_$i.txt 2>&1
  echo "rc=$?" >> $OUT/logs/replay_$i.txt
done
tar czf $OUT/all_logs.tgz -C $OUT/logs .
grep -h "^floors\|^graph_per_call \|^graph_batch \|^sequence_step " $OUT/logs/replay_*.txt | cut -c1-110

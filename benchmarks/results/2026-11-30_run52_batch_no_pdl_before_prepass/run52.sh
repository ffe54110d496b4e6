#!/bin/bash
# Device run 52 (2026-11-30, session 6): 8e58ad6 (no PDL edge in front of a pre-kernel in batch
# graphs): the graph_cache test binaries, then the main job in 6 processes pinned to one core.
# Usage (repo root): bash run52.sh gb/gpu_s6g
G=$(cd "$1" && pwd)
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
export LD_LIBRARY_PATH=$G
for t in executor_test sequence_test batch_test backend_test; do
  timeout 120 "$G/tests/$t" > "$L/t_$t.txt" 2>&1; echo "rc=$?" >> "$L/t_$t.txt"
  echo "$t: $(grep -E '^\[  (PASSED|FAILED)' "$L/t_$t.txt" | tr '\n' ' ') $(tail -1 "$L/t_$t.txt")"
done
for i in 1 2 3 4 5 6; do
  timeout 60 taskset -c 3 "$G/bin/replay" --encore_json="$L/replay_$i.json" --encore_commit=8e58ad6 \
    > "$L/replay_$i.txt" 2>&1
  echo "rc=$?" >> "$L/replay_$i.txt"
done
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
grep -h "^floors\|^graph_per_call \|^graph_batch \|^sequence_step " "$L"/replay_*.txt | cut -c1-150

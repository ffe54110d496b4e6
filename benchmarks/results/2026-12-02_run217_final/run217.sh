#!/bin/bash
# Run 217 (session 32): every GPU test binary at 1902f93 (after the patch fixes 3314f4c and the
# kernel notes), then 4 replay processes (pinned to one core).
# Here: tools/gpu_bundle.sh gpu_s32d at 1902f93. There:
#   bash benchmarks/results/2026-12-02_run217_final/run217.sh
[ -d gb/gpu_s32d ] || { mkdir -p gb && tar xJf gpu_s32d.tar.xz -C gb; }
B=gb/gpu_s32d
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs217
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs217.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 240 $t > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=1902f93 \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step |^graph_rebind_bound " $L/replay/new_$i.txt | awk '{printf "%s h %s dev %s hf %s | ", $1, $2, $3, $8}')"
done
pack

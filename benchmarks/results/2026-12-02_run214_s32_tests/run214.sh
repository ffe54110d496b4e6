#!/bin/bash
# Run 214 (session 32): every GPU test binary at 8993446 (overlap validation, whole-batch checks).
# Here: tools/gpu_bundle.sh gpu_s32a at 8993446 (gpu_s32a.tar.xz: the GPU test binaries). There:
#   bash benchmarks/results/2026-12-02_run214_s32_tests/run214.sh
[ -d gb/gpu_s32a ] || { mkdir -p gb && tar xJf gpu_s32a.tar.xz -C gb; }
B=gb/gpu_s32a
L=/tmp/logs214
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs214.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 300 $t > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack
# Then 4 replay processes at the same commit (one pinned core, as runs 208 and 212).
export LD_LIBRARY_PATH=$(pwd)/$B
mkdir -p $L/replay
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=8993446 \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step |^graph_rebind_bound " $L/replay/new_$i.txt | awk '{printf "%s h %s dev %s hf %s | ", $1, $2, $3, $8}')"
done
pack

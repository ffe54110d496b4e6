#!/bin/bash
# Run 223 (session 33): the session's final code (acf8c3f: GemmBatch's ticket, its compare
# through SameCall, the calls' spans set at every flush). The graph_cache GPU tests, then the main
# job A/B as in run 220: replay at d6c6d8c (`replay_old`, run 219's bundle gpu_s32e) and at acf8c3f
# alternated, 5 processes each, pinned to one core.
# Here: tools/gpu_bundle.sh gpu_s33b at acf8c3f, plus gpu_s32e/bin/replay as bin/replay_old in the
# same archive. There:
#   bash benchmarks/results/2026-12-02_run223_final/run223.sh
[ -d gb/gpu_s33b ] || { mkdir -p gb && tar xJf gpu_s33b.tar.xz -C gb; }
B=gb/gpu_s33b
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs223
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs223.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for n in executor_test sequence_test backend_test device_test device_problem_test; do
  s0=$(date +%s)
  timeout 120 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack
for i in 1 2 3 4 5; do
  for v in old new; do
    exe=$B/bin/replay; [ $v = old ] && exe=$B/bin/replay_old
    c=acf8c3f; [ $v = old ] && c=d6c6d8c
    timeout 60 taskset -c 5 $exe --encore_json=$L/replay/${v}_$i.json --encore_commit=$c \
      > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_batch |^graph_batch_prebuilt |^sequence_step |^graph_per_call " $L/replay/${v}_$i.txt | awk '{printf "%s h %s | ", $1, $2}')"
  done
  pack
done

#!/bin/bash
# Device run 186: the session's final code in full (session 26's prepared run 184, renumbered: run
# 184 went to the merge measurements). Phase "tests": every test binary (the whole kernel test
# ~300 s; the runner refactor a50e44e had not run on the GPU) and memcheck of the merged-launch
# test; phase "replay": 24 processes of //benchmarks:replay pinned to one core for replay.json.
# Build here: tools/gpu_bundle.sh gpu_r186 && tar cJf gpu_s186.tar.xz gpu_r186
# Usage (repo root; carry gpu_s186.tar.xz):
#   bash benchmarks/results/2026-12-02_run186_final/run186.sh tests <commit>
#   bash benchmarks/results/2026-12-02_run186_final/run186.sh replay <commit>
P=${1:-tests}
C=${2:-unknown}
[ -d gb/gpu_r186 ] || { mkdir -p gb && tar xJf gpu_s186.tar.xz -C gb; }
B=gb/gpu_r186
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs186_$P
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs186_$P.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
if [ "$P" = tests ]; then
  for t in $B/tests/*; do
    n=$(basename $t)
    timeout 400 $t > $L/t_$n.txt 2>&1
    echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
    pack
  done
  timeout 120 compute-sanitizer --tool memcheck $B/tests/executor_test --gtest_filter='*BatchMerges*' > $L/memcheck_merges.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $L/memcheck_merges.txt | tr '\n' ' ')"
else
  for i in $(seq 1 24); do
    timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
      > $L/replay/new_$i.txt 2>&1
    echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s te %s fl %s | ", $1, $2, $3, $6, $7}')"
    [ $((i % 6)) = 0 ] && pack
  done
fi
pack

#!/bin/bash
# Device run 203 (session 29): the capture-state query with the thread's context checked once per
# thread (one driver call less per hit). graph_cache tests; compute-sanitizer memcheck on the
# backend and executor GPU tests (the thread's-first-call test among them: no driver API error);
# 4 processes of the stamps build of replay (the hit's steps in cycles, to set against run 201's
# capture_query), then 6 of the default build. All pinned to one core.
# Build here: tools/gpu_bundle.sh gpu_r203 (graph_cache tests and replay kept), stripped, plus
#   `tools/bazel build -c opt --copt=-DENCORE_HIT_STAMPS=1 //benchmarks:replay` copied (stripped)
#   to gpu_r203/bin/replay_stamps; tar cJf gpu_s203.tar.xz gpu_r203
# Usage (repo root; carry gpu_s203.tar.xz): bash benchmarks/results/2026-12-02_run203_context_once/run203.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r203 ] || { mkdir -p gb && tar xJf gpu_s203.tar.xz -C gb; }
B=gb/gpu_r203
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs203
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs203.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 100 $t > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for n in backend_test executor_test; do
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/$n --gtest_filter='*Cuda*:*Gpu*' > $L/memcheck_$n.txt 2>&1
  echo "memcheck $n rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_$n.txt | tr '\n' ' ')"
  pack
done
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/bin/replay_stamps --benchmark_filter='graph_per_call|graph_prebuilt' \
    --encore_json=$L/replay/s_$i.json --encore_commit=$C > $L/replay/s_$i.txt 2>&1
  echo "stamps $i rc=$? $(grep -h 'hit stamps' $L/replay/s_$i.txt | cut -d: -f2-)"
done
pack
for i in 1 2 3 4 5 6; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "new $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
done
pack

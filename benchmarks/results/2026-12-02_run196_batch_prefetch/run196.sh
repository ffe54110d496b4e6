#!/bin/bash
# Device run 196 (session 29): the batch compare's prefetch (829ec6a, ExecutorOptions::
# prefetch_batch_compare) with the sequence recorder's whole-period prefetch. The graph_cache
# tests; the signature benchmark's cold batch and harness benchmarks on this host; 12 processes of
# //benchmarks:replay --encore_ab_prefetch=1 (graph_batch and sequence_step each followed by its
# control without the prefetch, *_nopf, in the same process); then 16 plain processes (the main
# job as a user runs it, for replay.json). All pinned to one core.
# Build here: tools/gpu_bundle.sh gpu_r196 (graph_cache tests and the benchmarks kept), stripped,
#   tar cJf gpu_s196.tar.xz gpu_r196
# Usage (repo root; carry gpu_s196.tar.xz): bash benchmarks/results/2026-12-02_run196_batch_prefetch/run196.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r196 ] || { mkdir -p gb && tar xJf gpu_s196.tar.xz -C gb; }
B=gb/gpu_r196
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs196
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs196.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
lscpu > $L/lscpu.txt 2>&1; uptime >> $L/lscpu.txt
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
timeout 120 taskset -c 5 $B/bin/signature --benchmark_filter='BatchFlushCold|HarnessCold|BM_BatchFlush/|BM_SequenceStep' > $L/signature.txt 2>&1
echo "signature rc=$?"; grep -E "median|^BM_BatchFlush/|^BM_SequenceStep" $L/signature.txt | awk '{print $1, $2, $3, $NF}'
pack
for i in $(seq 1 12); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_ab_prefetch=1 --encore_json=$L/replay/ab_$i.json \
    --encore_commit=$C > $L/replay/ab_$i.txt 2>&1
  echo "ab $i rc=$? $(grep -E "^graph_per_call |^graph_batch|^sequence_step" $L/replay/ab_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  [ $((i % 4)) = 0 ] && pack
done
pack
for i in $(seq 1 16); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "new $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  [ $((i % 4)) = 0 ] && pack
done
pack

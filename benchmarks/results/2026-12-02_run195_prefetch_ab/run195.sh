#!/bin/bash
# Device run 195 (session 29): the prefetch hints (ExecutorOptions::prefetch_hints, 1faad8b) A/B.
# The host's CPU (lscpu); the graph_cache tests (executor, sequence, batch, backend: their GPU
# parts run the real kernels through the hinted paths); the signature benchmark's
# BM_ExecutorHarnessCold on this host; then 14 processes of //benchmarks:replay with
# --encore_ab_prefetch=1 (graph_per_call, graph_batch, sequence_step each followed by its
# control without hints, <mode>_nopf, in the same process), pinned to one core.
# Build here: tools/gpu_bundle.sh gpu_r195 (graph_cache tests and benchmarks kept), stripped,
#   tar cJf gpu_s195.tar.xz gpu_r195
# Usage (repo root; carry gpu_s195.tar.xz): bash benchmarks/results/2026-12-02_run195_prefetch_ab/run195.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r195 ] || { mkdir -p gb && tar xJf gpu_s195.tar.xz -C gb; }
B=gb/gpu_r195
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs195
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs195.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
lscpu > $L/lscpu.txt 2>&1; nproc >> $L/lscpu.txt; uptime >> $L/lscpu.txt
grep -E "Model name|^CPU\(s\)|Thread|L2|L3" $L/lscpu.txt
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
timeout 120 taskset -c 5 $B/bin/signature --benchmark_filter='HarnessCold|ExecutorRotationCold' > $L/signature.txt 2>&1
echo "signature rc=$?"; grep -E "median" $L/signature.txt | awk '{print $1, $2, $3}'
pack
for i in $(seq 1 14); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_ab_prefetch=1 --encore_json=$L/replay/ab_$i.json \
    --encore_commit=$C > $L/replay/ab_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call|^graph_prebuilt |^graph_batch|^sequence_step" $L/replay/ab_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  [ $((i % 4)) = 0 ] && pack
done
pack

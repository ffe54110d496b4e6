#!/bin/bash
# Device run 170 (session 25): is the host's "slow state" (run 169: half the replay processes ran
# every host number ~2x slower, batch replay 0.4 vs 0.17 us a call) an artifact of pinning the
# whole process, the CUDA driver's helper threads included, to ONE core? 8 rounds of the replay
# binary (c76d93d) under three affinities: taskset -c 5 (as runs 154-169), taskset -c 4-7, none.
# Usage (repo root; carry gpu_s169.tar.xz):
#   bash benchmarks/results/2026-12-02_run170_pinning/run170.sh c76d93d
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s169.tar.xz -C gb
B=gb/gpu_r169
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs170
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs170.tar.xz -C $L .; }
nproc > $L/nproc.txt; lscpu > $L/lscpu.txt 2>&1
for i in $(seq 1 8); do
  for cfg in one four none; do
    case $cfg in one) pin="taskset -c 5";; four) pin="taskset -c 4-7";; none) pin="";; esac
    timeout 60 $pin $B/bin/replay --encore_json=$L/replay/${cfg}_$i.json --encore_commit=$C \
      > $L/replay/${cfg}_$i.txt 2>&1
    echo "$cfg $i rc=$? $(grep -E "^graph_per_call |^graph_batch |^graph_batch_prebuilt |^sequence_step " $L/replay/${cfg}_$i.txt | awk '{printf "%s h %s fl %s | ", $1, $2, $7}')"
  done
  pack
done

#!/bin/bash
# Device run 159 (session 23): the host and device costs of the rebind-without-patches candidates
# (NOTES, session 23, next step 1): 3 processes of //benchmarks:replay at the commit below (its
# floors mem_op_write_40, mem_op_write_40_and_launch, copy_2k_and_launch), then
# benchmarks/micro/binding_reads.cu (built here with the command in its header).
# Usage (repo root; carry gpu_s159.tar.xz: gpu_r159/{replay,binding_reads}, libbenchmark):
#   bash benchmarks/results/2026-12-01_run159_rebind_candidates/run159.sh COMMIT
mkdir -p gb && tar xJf gpu_s159.tar.xz -C gb
B=gb/gpu_r159
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs159
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
uptime > $L/uptime.txt
timeout 60 $B/binding_reads > $L/binding_reads.txt 2>&1
echo "binding_reads rc=$?"; cat $L/binding_reads.txt
pack
for i in 1 2 3; do
  timeout 45 taskset -c 5 $B/replay --encore_json=$L/replay/replay_$i.json --encore_commit="$1" \
    > $L/replay/replay_$i.txt 2>&1
  echo "replay $i rc=$?"; grep -E "^floors" $L/replay/replay_$i.txt
  grep -E "^graph_per_call |^graph_prebuilt |^graph_rebind " $L/replay/replay_$i.txt | cut -c1-110
  pack
done

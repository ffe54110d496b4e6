#!/bin/bash
# Device run 58 (2026-11-30, session 7): 8bd0f1f (the pre-pass waits, then triggers; Run launches
# with PDL where LaunchPlan::prefers_pdl). Every test binary, memcheck of the PDL and pre-pass
# kernel tests, the kernel benchmark (the default family now launches as Run does), torch bf16,
# then the main job in 3 processes pinned to one core.
# Usage (repo root; carry gpu_s7e.tar.xz): bash benchmarks/results/2026-11-30_run58_run_pdl/run58.sh
R=benchmarks/results
mkdir -p gb && tar xJf gpu_s7e.tar.xz -C gb
G=$(pwd)/gb/gpu_s7e
L=${OUT:-/tmp/out}/logs
SANITIZERS=memcheck SAN_FILTER='*PlansLaunchBehind*:*PrepassPlansBackToBack*' SAN_TIMEOUT=150 \
  bash $R/run23.sh gb/gpu_s7e tests | tail -25
BENCH_FILTER='gpumode/s./auto/(it|pdl/|fused/pdl)|fewtiles/.*/auto/(it|pdl/)' \
  bash $R/run23.sh gb/gpu_s7e bench | tail -30
export LD_LIBRARY_PATH=$G
for i in 1 2 3; do
  timeout 60 taskset -c 3 $G/bin/replay --encore_json=$L/replay_$i.json --encore_commit=8bd0f1f \
    > $L/replay_$i.txt 2>&1
  echo "rc=$?" >> $L/replay_$i.txt
done
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .
grep -h "^floors\|^direct \|^graph_per_call \|^graph_batch \|^sequence_step " $L/replay_*.txt | cut -c1-120

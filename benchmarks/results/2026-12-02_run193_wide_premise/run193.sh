#!/bin/bash
# Device run 193 (session 28): (1) the weights-normal kernel test at the final kernels (run 192
# skipped it); (2) the premise of a 256-row weight tile for narrow token groups (the helper
# review's lever 3): the manual build _wide (2 strips per consumer warpgroup, 256 x <= 128 tiles)
# against the default on the steady family's GEMM alone (one group of W tokens, one weight tile
# per SM: _wide's N and FLOPs are twice the default's, compare per FLOP), 2 alternated rounds;
# (3) two processes of the main job with the review commit's replay.cc (AddEmptyChain).
# Build here: tools/ab_bundle.sh gpu_ab193 _wide, then its tests replaced by the weights-normal
# kernel test and the replay binary added (-c opt, stripped), tar cJf gpu_ab193.tar.xz -C gpu_ab193 .
# Usage (repo root; carry gpu_ab193.tar.xz): bash benchmarks/results/2026-12-02_run193_wide_premise/run193.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_ab193.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=/tmp/encore_logs
mkdir -p $L/replay
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 330 gb/tests/sm90_nvfp4_grouped_gemm_weights_normal_test > $L/t_weights_normal.txt 2>&1
echo "weights_normal rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_weights_normal.txt | tr '\n' ' ')"
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .
mv gb/replay gb/../replay193
LOGS=$L TESTS=0 FILTER='steady/w(64|96|128|160|256)/k(4096|8192)/gemm_only' ROUNDS=2 \
  bash benchmarks/results/ab.sh gb
for i in 1 2; do
  timeout 60 taskset -c 5 ./replay193 --encore_json=$L/replay/new_$i.json --encore_commit=$C > $L/replay/new_$i.txt 2>&1
  echo "replay $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt " $L/replay/new_$i.txt | awk '{printf "%s h %s fl %s hf %s | ", $1, $2, $7, $8}')"
done
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

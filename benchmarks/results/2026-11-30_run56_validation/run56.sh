#!/bin/bash
# Device run 56 (2026-11-30, session 7): validation of the session's default (PDL for plans that
# read after their wait; graph_batch_fused in the main job).
# Usage (repo root, bundle of tools/gpu_bundle.sh unpacked under gb/):
#   bash benchmarks/results/2026-11-30_run56_validation/run56.sh gb/gpu_s7c tests
#     every test binary, memcheck of the pre-pass and PDL kernel tests
#   bash benchmarks/results/2026-11-30_run56_validation/run56.sh gb/gpu_s7c bench COMMIT
#     the kernel benchmark (GPU MODE and few-tile shapes), torch bf16, then the main job in
#     6 processes pinned to one core
R=$(dirname "$0")/..
G=$(cd "$1" && pwd)
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
export LD_LIBRARY_PATH=$G
if [ "$2" = tests ]; then
  SANITIZERS=memcheck SAN_FILTER='*Prepass*:*InKernelPlansLaunch*' SAN_TIMEOUT=300 \
    bash "$R/run23.sh" "$1" tests
fi
if [ "$2" = bench ]; then
  BENCH_FILTER='gpumode/s./auto/(it|pdl/|fused/pdl)|fewtiles/.*/auto/(it|pdl/)' \
    bash "$R/run23.sh" "$1" bench
  for i in 1 2 3 4 5 6; do
    timeout 60 taskset -c 3 "$G/bin/replay" --encore_json="$L/replay_$i.json" \
      --encore_commit="$3" > "$L/replay_$i.txt" 2>&1
    echo "rc=$?" >> "$L/replay_$i.txt"
  done
  tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
  grep -h "^floors\|^direct \|^graph_per_call \|^graph_batch\|^sequence_step " "$L"/replay_*.txt | cut -c1-150
fi

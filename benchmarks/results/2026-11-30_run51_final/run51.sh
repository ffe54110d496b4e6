#!/bin/bash
# Device run 51 (2026-11-30, session 6): the check of 81a7810 (tools/gpu_bundle.sh): every test
# binary, memcheck of the pre-pass and fused kernel tests, the kernel benchmark (GPU MODE auto and
# auto/fused/pdl, few tiles) with torch bf16 in the same run, the main job x3.
# Usage (repo root): REPLAY_COMMIT=81a7810 bash run51.sh gb/gpu_s6f
G=$(cd "$1" && pwd)
R=benchmarks/results
SANITIZERS=memcheck SAN_TIMEOUT=90 SAN_FILTER='*Prepass*:*Fused*' bash $R/run23.sh "$1" tests
BENCH_FILTER='gpumode/s./auto/(it|fused/pdl)|fewtiles/[a-z0-9_]+/auto/(it|fused/pdl)' bash $R/run23.sh "$1" bench
L=${OUT:-/tmp/out}/logs
export LD_LIBRARY_PATH=$G
for i in 1 2; do
  timeout 70 "$G/bin/replay" --encore_json="$L/replay_$i.json" --encore_commit="$REPLAY_COMMIT" \
    > "$L/replay_$i.txt" 2>&1
  echo "rc=$?" >> "$L/replay_$i.txt"
  tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
done
grep -h "^floors\|^graph_per_call \|^graph_rebind \|^graph_batch \|^sequence_step " "$L"/replay_*.txt

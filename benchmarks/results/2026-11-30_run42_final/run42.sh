#!/bin/bash
# Device run 42 (2026-11-30, session 5): the check of the default build with early weight loads
# (tools/gpu_bundle.sh at COMMIT): every test binary, memcheck of the pre-pass kernel tests, the
# kernel benchmark (GPU MODE auto + few tiles) with torch bf16 in the same run, replay x3.
# Usage (repo root): REPLAY_COMMIT=COMMIT bash run42.sh gb
G=$(cd "$1" && pwd)
R=benchmarks/results
SANITIZERS=memcheck SAN_TIMEOUT=100 bash $R/run23.sh "$1" tests
BENCH_FILTER='gpumode/s./auto/it|fewtiles/.*/auto' bash $R/run23.sh "$1" bench
L=${OUT:-/tmp/out}/logs
export LD_LIBRARY_PATH=$G
for i in 1 2 3; do
  timeout 70 "$G/bin/replay" --encore_json="$L/replay_$i.json" --encore_commit="$REPLAY_COMMIT" \
    > "$L/replay_$i.txt" 2>&1
  echo "rc=$?" >> "$L/replay_$i.txt"
  tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
done
grep -h "^floors\|^graph_per_call \|^graph_rebind \|^graph_batch \|^sequence_step " "$L"/replay_*.txt

#!/bin/bash
# Device run 45 (2026-11-30, session 5): the fused token pre-pass (RunnerOptions::
# fuse_token_prepass): every test binary (incl. FusedPrepassMatchesReference), then the kernel
# benchmark with and without fusion, alternated (GPU MODE, few tiles, steady/).
# Bundle gb/ = tools/gpu_bundle.sh at 2907bc4. Usage (repo root): bash run45.sh gb
G=$(cd "$1" && pwd)
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
SANITIZERS= bash benchmarks/results/run23.sh "$1" tests
export LD_LIBRARY_PATH=$G
for round in 1 2; do
  for f in 'gpumode/s./auto/(it|fused)|fewtiles/.*/auto/(it|fused)' 'steady/'; do
    n=$([ "$f" = 'steady/' ] && echo steady || echo main)
    timeout 100 "$G/bin/sm90_nvfp4_grouped_gemm" --benchmark_filter="$f" \
      --benchmark_out="$L/bench_${n}_$round.json" --benchmark_out_format=json \
      > "$L/bench_${n}_$round.txt" 2>&1
    echo "rc=$?" >> "$L/bench_${n}_$round.txt"
    grep median "$L/bench_${n}_$round.txt" | awk '{print $1, $2, $3, $NF}'
    tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
  done
done

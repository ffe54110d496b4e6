#!/bin/bash
# Device run 38 (2026-11-30, session 5). Bundle gb/: full/ (tools/gpu_bundle.sh), ab/
# (tools/ab_bundle.sh gpu_ab _epi_offload _parts2 _parts8), ceiling (benchmarks/micro/
# wgmma_rs_ceiling.cu built with nvcc here). Usage (repo root): bash run38.sh gb PHASE
#   PHASE=1: the ceiling, every test binary of full/, the experiments' kernel tests, A/B round 1
#   PHASE=2: A/B round 2, then the main job (replay) in 3 processes
G=$(cd "$1" && pwd)
R=benchmarks/results
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
if [ "$2" = 1 ]; then
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw --format=csv > "$L/clocks.txt" 2>&1
  timeout 60 "$G/ceiling" > "$L/ceiling.txt" 2>&1; echo "rc=$?" >> "$L/ceiling.txt"
  cat "$L/ceiling.txt"; pack
  SANITIZERS= bash $R/run23.sh "$G/full" tests
  export LD_LIBRARY_PATH=$G/ab
  for t in "$G"/ab/tests/*; do
    n=$(basename "$t")
    case $n in sm90_nvfp4_grouped_gemm_test) continue;; esac
    timeout 120 "$t" > "$L/t_$n.txt" 2>&1; echo "rc=$?" >> "$L/t_$n.txt"
    echo "$n: $(grep -E '^\[  (PASSED|FAILED)' "$L/t_$n.txt" | tr '\n' ' ') $(tail -1 "$L/t_$n.txt")"
  done | tee -a "$L/tests_summary.txt"
  pack
fi
F=${FILTER:-'gpumode/s./auto/it|fewtiles/.*/auto'}
export LD_LIBRARY_PATH=$G/ab
for b in "$G"/ab/b_*; do
  v=${b##*/b_}
  timeout 150 "$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$2.json" \
    --benchmark_out_format=json > "$L/bench_${v}_$2.txt" 2>&1
  echo "== $v round $2"; grep median "$L/bench_${v}_$2.txt" | awk '{print $1, $2, $3}'
done
pack
if [ "$2" = 2 ]; then
  export LD_LIBRARY_PATH=$G/full
  for i in 1 2 3; do
    timeout 80 "$G/full/bin/replay" --encore_json="$L/replay_$i.json" \
      --encore_commit="${REPLAY_COMMIT:-unknown}" > "$L/replay_$i.txt" 2>&1
    echo "rc=$?" >> "$L/replay_$i.txt"
    pack
  done
  grep -h "floors\|floor\|graph_per_call\|graph_rebind\|graph_batch\|sequence\|patch" "$L"/replay_*.txt | head -60
fi

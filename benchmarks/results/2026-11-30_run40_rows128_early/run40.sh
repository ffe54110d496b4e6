#!/bin/bash
# Device run 40 (2026-11-30, session 5). Bundle gb/: full/ (run 38's bin/ with replay rebuilt at this commit), ab/
# (tools/ab_bundle.sh gpu_ab3 _rows128 _early _rows128_early). Usage (repo root): bash run40.sh gb
#   the new experiments' kernel tests, 2 A/B rounds, replay x3 (with the exec-ring floors)
G=$(cd "$1" && pwd)
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
export LD_LIBRARY_PATH=$G/ab
for t in "$G"/ab/tests/*; do
  n=$(basename "$t")
  case $n in sm90_nvfp4_grouped_gemm_test) continue;; esac
  timeout 120 "$t" > "$L/t_$n.txt" 2>&1; echo "rc=$?" >> "$L/t_$n.txt"
  echo "$n: $(grep -E '^\[  (PASSED|FAILED)' "$L/t_$n.txt" | tr '\n' ' ') $(tail -1 "$L/t_$n.txt")"
done | tee "$L/tests_summary.txt"
pack
F=${FILTER:-'gpumode/s./auto/it|fewtiles/.*/auto'}
for round in 1 2; do
  for b in "$G"/ab/b_*; do
    v=${b##*/b_}
    timeout 150 "$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
  pack
done
export LD_LIBRARY_PATH=$G/full
for i in 1 2 3; do
  timeout 80 "$G/full/bin/replay" --encore_json="$L/replay_$i.json" \
    --encore_commit="${REPLAY_COMMIT:-unknown}" > "$L/replay_$i.txt" 2>&1
  echo "rc=$?" >> "$L/replay_$i.txt"
  pack
done
grep -h -i "floor\|graph_per_call\|graph_rebind\|graph_batch\|sequence\|patch" "$L"/replay_*.txt | head -60

#!/bin/bash
# Device run 23 (2026-11-30, session 3): the token pre-pass. Usage (device tool, carry the packed
# bundle): bash benchmarks/results/run23.sh BUNDLE PHASE
#   PHASE=tests: every test binary, then memcheck + racecheck of the pre-pass GPU test;
#   PHASE=bench: the kernel benchmark (BENCH_FILTER), torch bf16 on the same shapes, and the main
#                job (//benchmarks:replay) when REPLAY_COMMIT is set.
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
# (Logs outside $OUT: the device tool returns at most 8 files, and loose logs can crowd out
# the archive; run 151 lost its logs that way.)
L=${LOGS:-/tmp/encore_logs}
mkdir -p "$L"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; } > "$L/env.txt" 2>&1
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
if [ "$2" = tests ]; then
  for t in "$B"/tests/*; do
    n=$(basename "$t")
    s0=$(date +%s)
    timeout 240 "$t" > "$L/t_$n.txt" 2>&1
    echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> "$L/t_$n.txt"
    echo "$n: $(grep -E '^\[  (PASSED|FAILED|  SKIPPED)' "$L/t_$n.txt" | tr '\n' ' ') $(tail -1 "$L/t_$n.txt")"
  done | tee "$L/tests_summary.txt"
  grep -h "FAILED\|Failure" "$L"/t_*.txt | head -20
  pack
  for tool in ${SANITIZERS-memcheck racecheck}; do
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool "$B/tests/sm90_nvfp4_grouped_gemm_test" \
      --gtest_filter="${SAN_FILTER:-*Prepass*}" > "$L/$tool.txt" 2>&1
    echo "rc=$?" >> "$L/$tool.txt"; tail -3 "$L/$tool.txt"
  done
  pack
fi
if [ "$2" = bench ]; then
  timeout ${BENCH_TIMEOUT:-300} "$B/bin/sm90_nvfp4_grouped_gemm" --benchmark_filter="${BENCH_FILTER:-gpumode/}" \
    --benchmark_out="$L/bench.json" --benchmark_out_format=json > "$L/bench.txt" 2>&1
  echo "rc=$?" >> "$L/bench.txt"
  grep -E "median" "$L/bench.txt" | awk '{print $1, $2, $3, $NF}' | tee "$L/bench_summary.txt"
  pack
  if [ "${TORCH:-1}" = 1 ]; then
    timeout 90 python3 "$B/bin/torch_grouped_mm.py" --out "$L/torch.json" > "$L/torch.txt" 2>&1
    echo "rc=$?" >> "$L/torch.txt"; tail -7 "$L/torch.txt"
    pack
  fi
  if [ -n "${REPLAY_COMMIT:-}" ]; then
    timeout 200 "$B/bin/replay" --encore_json="$L/replay.json" --encore_commit="$REPLAY_COMMIT" \
      > "$L/replay.txt" 2> "$L/replay_summary.txt"
    echo "rc=$?" >> "$L/replay_summary.txt"
    cat "$L/replay_summary.txt"
    pack
  fi
fi

#!/bin/bash
# Device run 48 (session 6): the fused pre-pass converted by warps 1-11 with 4 jobs in flight, and
# PDL launches. Usage: bash run48.sh BUNDLE (tools/ab_bundle.sh DIR _exp_stamps, unpacked).
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; } > "$L/env.txt" 2>&1
timeout 200 "$B/tests/sm90_nvfp4_grouped_gemm_test" > "$L/t_kernel.txt" 2>&1
echo "rc=$?" >> "$L/t_kernel.txt"; grep -E "^\[  (PASSED|FAILED)|rc=" "$L/t_kernel.txt"; grep -A5 "Failure" "$L/t_kernel.txt" | head -20
pack
F='gpumode/s[0-3]/auto/(iter|pdl|fused)|fewtiles/[a-z0-9_]+/auto/(iter|pdl|fused)|steady/w(64|256)/k4096/(iter|fused)'
timeout 240 "$B/b_default" --benchmark_filter="$F" --benchmark_out="$L/bench.json" \
  --benchmark_out_format=json > "$L/bench.txt" 2>&1
echo "rc=$?" >> "$L/bench.txt"
grep median "$L/bench.txt" | awk '{printf "%-48s %8s %s %s %s\n", $1, $2, $3, $(NF-1), $NF}' | sed 's|/iterations:1/repeats:[0-9]*/manual_time_median||'
pack
timeout 120 "$B/b_exp_stamps" --benchmark_filter='gpumode/s[0-3]/auto/(iter|pdl|fused)' \
  > "$L/stamps.txt" 2>&1
echo "rc=$?" >> "$L/stamps.txt"
grep -E "^==|medians" "$L/stamps.txt" | sed 's/medians over calls 1..14 (us): //'
pack

#!/bin/bash
# Device run 53 (session 6): the pre-pass's full-sector stores (_sectors) vs default. Usage:
# bash run53.sh BUNDLE (tools/ab_bundle.sh DIR _sectors, unpacked).
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
timeout 100 "$B/tests/sm90_nvfp4_grouped_gemm_sectors_test" > "$L/t_kernel_sectors.txt" 2>&1
echo "rc=$?" >> "$L/t_kernel_sectors.txt"
grep -E "^\[  (PASSED|FAILED)|rc=" "$L/t_kernel_sectors.txt"; grep -A4 Failure "$L/t_kernel_sectors.txt" | head
F='gpumode/s[0-3]/auto/(iter|prepass_only|fused/pdl)'
for r in 1 2; do for b in default sectors; do
  timeout 60 "$B/b_$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${b}_$r.json" \
    --benchmark_out_format=json > "$L/bench_${b}_$r.txt" 2>&1
  echo "rc=$?" >> "$L/bench_${b}_$r.txt"
done; done
paste <(grep median "$L/bench_default_1.txt" | awk '{print $1, $2}') <(grep median "$L/bench_default_2.txt" | awk '{print $2}') \
  <(grep median "$L/bench_sectors_1.txt" | awk '{print $2}') <(grep median "$L/bench_sectors_2.txt" | awk '{print $2}') | sed 's|/iterations:1/repeats:[0-9]*/manual_time_median||'
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .

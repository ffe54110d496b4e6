#!/bin/bash
# Device run 50 (session 6): _trigger now triggers dependents first (before griddepcontrol.wait).
# Usage: bash run50.sh BUNDLE (tools/ab_bundle.sh DIR _trigger _exp_stamps_trigger, unpacked).
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
{ date -u; nvidia-smi -L; } > "$L/env.txt" 2>&1
timeout 60 "$B/b_exp_stamps_trigger" --benchmark_filter='gpumode/s[23]/auto/(pdl|fused/pdl)' > "$L/stamps.txt" 2>&1
echo "rc=$?" >> "$L/stamps.txt"
grep -E "^==|medians" "$L/stamps.txt" | sed 's/medians over calls 1..14 (us): //'
grep -A4 "== gpumode/s2/auto/pdl" "$L/stamps.txt" | cut -c1-240
pack
F='gpumode/s[0-3]/auto/(iter|pdl|fused/pdl)|fewtiles/(one_tile|decode8)/auto/(iter|pdl|fused/pdl)'
for b in default trigger; do
  timeout 60 "$B/b_$b" --benchmark_filter="$F" --benchmark_out="$L/bench_$b.json" \
    --benchmark_out_format=json > "$L/bench_$b.txt" 2>&1
  echo "rc=$?" >> "$L/bench_$b.txt"
done
paste <(grep median "$L/bench_default.txt" | awk '{print $1, $2}') <(grep median "$L/bench_trigger.txt" | awk '{print $2, $NF}') | sed 's|/iterations:1/repeats:[0-9]*/manual_time_median||'
pack

#!/bin/bash
# Device run 49 (session 6): the fused pre-pass with the one-counter grid barrier (both builds),
# and every thread triggering dependents right after griddepcontrol.wait (_trigger) vs the weight
# producer's lane after its last load (default). Usage: bash run49.sh BUNDLE
# (tools/ab_bundle.sh DIR _trigger _exp_stamps _exp_stamps_trigger, unpacked).
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; } > "$L/env.txt" 2>&1
timeout 150 "$B/tests/sm90_nvfp4_grouped_gemm_test" > "$L/t_kernel.txt" 2>&1
echo "rc=$?" >> "$L/t_kernel.txt"
timeout 100 "$B/tests/sm90_nvfp4_grouped_gemm_trigger_test" --gtest_filter='*Fused*:*Prepass*:*Pdl*' > "$L/t_kernel_trigger.txt" 2>&1
echo "rc=$?" >> "$L/t_kernel_trigger.txt"
for f in "$L"/t_kernel*.txt; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)' $f | tr '\n' ' ') $(tail -1 $f)"; done
grep -h -A5 "Failure" "$L"/t_kernel*.txt | head -20
pack
F='gpumode/s[0-3]/auto/(iter|pdl|fused)|fewtiles/(one_tile|decode8)/auto/(iter|pdl|fused)'
for r in 1 2; do
  for b in default trigger; do
    timeout 100 "$B/b_$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${b}_$r.json" \
      --benchmark_out_format=json > "$L/bench_${b}_$r.txt" 2>&1
    echo "rc=$?" >> "$L/bench_${b}_$r.txt"
  done
done
for b in default trigger; do
  echo "== $b"
  paste <(grep median "$L/bench_${b}_1.txt" | awk '{print $1, $2}') <(grep median "$L/bench_${b}_2.txt" | awk '{print $2, $NF}') | sed 's|/iterations:1/repeats:[0-9]*/manual_time_median||'
done
pack
for b in exp_stamps exp_stamps_trigger; do
  timeout 60 "$B/b_$b" --benchmark_filter='gpumode/s[0-3]/auto/(pdl|fused)' > "$L/stamps_$b.txt" 2>&1
  echo "rc=$?" >> "$L/stamps_$b.txt"
  echo "== $b"; grep -E "^==|medians" "$L/stamps_$b.txt" | sed 's/medians over calls 1..14 (us): //'
done
pack

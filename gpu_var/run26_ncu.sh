#!/bin/bash
# Device run 26 (2026-11-30, session 3): Nsight Compute of the default kernel (narrow tile, token
# pre-pass) on GPU MODE shape 1 (auto = persistent) and on decode8 (auto = simple, 16-row tiles),
# with per-source-line stall samples. Usage (repo root on the device, bundle carried):
#   bash benchmarks/results/run26_ncu.sh BUNDLE
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
for c in "s1 gpumode/s1/auto" "decode8 fewtiles/decode8/auto"; do
  set -- $c
  timeout 200 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemm --launch-skip 20 \
    --launch-count 1 --set full --import-source yes --source-folders "$PWD" -o "$L/ncu_$1" \
    "$B/b_default" --benchmark_filter="$2" > "$L/ncu_run_$1.txt" 2>&1
  ncu --import "$L/ncu_$1.ncu-rep" --page details --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section InstructionStats --section WarpStateStats --section SchedulerStats --section SourceCounters \
    --section MemoryWorkloadAnalysis_Tables --print-details all > "$L/ncu_$1_details.txt" 2>&1
  ncu --import "$L/ncu_$1.ncu-rep" --page source --csv --print-source cuda,sass > "$L/ncu_$1_source.csv" 2>&1
  xz -9 "$L/ncu_$1_source.csv"
  rm -f "$L/ncu_$1.ncu-rep"
  tail -3 "$L/ncu_run_$1.txt"
done
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .

#!/bin/bash
# Device run 43 (2026-11-30, session 5): Nsight Compute of the default GEMM kernel (early weight
# loads, d2c7751) on GPU MODE shapes 2 and 0, per-source-line stall samples.
# Usage (repo root, run 42's bundle carried): bash run43.sh gb
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
for c in "s2 gpumode/s2/auto/it" "s0 gpumode/s0/auto/it"; do
  set -- $c
  timeout 150 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemmKernel --launch-skip 20 \
    --launch-count 1 --set full --import-source yes --source-folders "$PWD" -o "$L/ncu_$1" \
    "$B/bin/sm90_nvfp4_grouped_gemm" --benchmark_filter="$2" > "$L/ncu_run_$1.txt" 2>&1
  ncu --import "$L/ncu_$1.ncu-rep" --page details --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section InstructionStats --section WarpStateStats --section SchedulerStats --section SourceCounters \
    --section MemoryWorkloadAnalysis_Tables --section Occupancy --print-details all > "$L/ncu_$1_details.txt" 2>&1
  ncu --import "$L/ncu_$1.ncu-rep" --page source --csv --print-source cuda,sass > "$L/ncu_$1_source.csv" 2>&1
  xz -9 "$L/ncu_$1_source.csv"
  rm -f "$L/ncu_$1.ncu-rep"
  tail -2 "$L/ncu_run_$1.txt"
  tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
done

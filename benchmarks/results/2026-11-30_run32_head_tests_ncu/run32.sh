#!/bin/bash
# Device run 32 (2026-11-30, session 4): every test of HEAD (incl. the capture-guard test not run
# before), memcheck of it, the kernel benchmark, and Nsight Compute of the default kernel on GPU
# MODE shapes 0 and 1 (per-source-line stall samples).
# Usage (repo root on the device, bundle carried): bash benchmarks/results/run32.sh BUNDLE
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
SANITIZERS=memcheck SAN_FILTER='*Capture*:*Prepass*' bash benchmarks/results/run23.sh "$1" tests
TORCH=0 BENCH_FILTER='gpumode/s./auto|fewtiles/.*/auto' bash benchmarks/results/run23.sh "$1" bench
for c in "s0 gpumode/s0/auto" "s1 gpumode/s1/auto"; do
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
  tail -3 "$L/ncu_run_$1.txt"
done
pack

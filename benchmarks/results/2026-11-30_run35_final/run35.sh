#!/bin/bash
# Device run 35 (2026-11-30, session 4): final check of HEAD: every test binary, memcheck and
# racecheck of the pre-pass kernel tests, the kernel benchmark with torch bf16 on the same shapes,
# the main job (//benchmarks:replay), then ncu of GPU MODE shape 2 (narrow token tiles).
# Usage (repo root on the device, bundle carried): REPLAY_COMMIT=<hash> bash run35.sh BUNDLE
B=$(cd "$1" && pwd)
R=benchmarks/results
SAN_TIMEOUT=150 bash $R/run23.sh "$1" tests
BENCH_FILTER='gpumode/s./(auto|simple|persistent)/it|fewtiles/.*/auto' bash $R/run23.sh "$1" bench
L=${OUT:-/tmp/out}/logs
export LD_LIBRARY_PATH=$B
timeout 150 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemmKernel --launch-skip 20 \
  --launch-count 1 --set full --import-source yes --source-folders "$PWD" -o "$L/ncu_s2" \
  "$B/bin/sm90_nvfp4_grouped_gemm" --benchmark_filter='gpumode/s2/auto' > "$L/ncu_run_s2.txt" 2>&1
ncu --import "$L/ncu_s2.ncu-rep" --page details --section SpeedOfLight --section ComputeWorkloadAnalysis \
  --section InstructionStats --section WarpStateStats --section SchedulerStats --section Occupancy \
  --section MemoryWorkloadAnalysis_Tables --print-details all > "$L/ncu_s2_details.txt" 2>&1
ncu --import "$L/ncu_s2.ncu-rep" --page source --csv --print-source cuda,sass > "$L/ncu_s2_source.csv" 2>&1
xz -9 "$L/ncu_s2_source.csv"; rm -f "$L/ncu_s2.ncu-rep"; tail -2 "$L/ncu_run_s2.txt"
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .

#!/bin/bash
# Device run 141: where shape 0's GEMM waits, per instruction. ncu (full set, --clock-control none)
# of one stream-K launch from the gemm_only family, then the report's details (every metric
# table) and its SASS source page with the stall samples per instruction (CSV, compressed).
# Usage (repo root; carry gpu_a140.tar.xz, whose b_default is 4cb0305's default build):
#   bash benchmarks/results/2026-12-01_run141_ncu_s0_source/run141.sh
mkdir -p ga && tar xJf gpu_a140.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 200 ncu --clock-control none -k regex:Sm90Nvfp4GroupedGemmKernel --launch-skip 30 \
  --launch-count 1 --set full -o $L/s0_gemm ga/b_default \
  --benchmark_filter='gpumode/s0/auto/gemm_only' > $L/ncu_run.txt 2>&1
echo "ncu rc=$?"; tail -3 $L/ncu_run.txt
ncu -i $L/s0_gemm.ncu-rep --page details --print-details all > $L/details.txt 2>&1
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|highest-utilized" $L/details.txt | head
ncu -i $L/s0_gemm.ncu-rep --page source --csv --print-source sass > $L/source_sass.csv 2>&1
echo "source rc=$? lines=$(wc -l < $L/source_sass.csv)"; head -c 600 $L/source_sass.csv; echo
xz -9 $L/source_sass.csv
rm -f $L/s0_gemm.ncu-rep
ls -la $L

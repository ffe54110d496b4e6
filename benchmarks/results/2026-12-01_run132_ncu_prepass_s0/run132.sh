#!/bin/bash
# Device run 132 (2026-12-01, session 19): what bounds GPU MODE shape 0's token pre-pass (NOTES
# session 19, next step 1): the parts of shapes 0-1 timed alone (prepass_only / gemm_only), then
# ncu (full set) of one shape-0 pre-pass launch from the prepass_only family.
# Usage (repo root; carry gpu_a131.tar.xz, whose b_default is 2a77591's default build):
#   bash benchmarks/results/2026-12-01_run132_ncu_prepass_s0/run132.sh
mkdir -p ga && tar xJf gpu_a131.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
timeout 60 ga/b_default --benchmark_filter='gpumode/s[01]/auto/(prepass_only|gemm_only)' > $L/parts.txt 2>&1
grep median $L/parts.txt | awk '{print $1, $2, $3}'
pack
timeout 100 ncu --clock-control none -k regex:TokenPrepass --launch-skip 30 --launch-count 1 \
  --set full ga/b_default --benchmark_filter='gpumode/s0/auto/prepass_only' > $L/ncu_s0_prepass.txt 2>&1
echo "ncu rc=$?"
grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Waves Per SM|Compute \(SM\) Throughput|Warp Cycles Per Issued|Issue Slot|Stall" $L/ncu_s0_prepass.txt | head -40
pack

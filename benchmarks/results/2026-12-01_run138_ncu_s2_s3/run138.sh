#!/bin/bash
# Device run 138 (2026-12-01, session 20): evidence for the next session on the one-wave shapes:
# shapes 2-3's calls and their parts timed alone (auto/it, gemm_only, prepass_only), then ncu
# (full set, --clock-control none) of one GEMM launch of each from the gemm_only family.
# Usage (repo root; carry gpu_s136.tar.xz, run 136's bundle of 73f1e90):
#   bash benchmarks/results/2026-12-01_run138_ncu_s2_s3/run138.sh
mkdir -p gb && tar xJf gpu_s136.tar.xz -C gb
B=gb/gpu_r136
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
timeout 60 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s[23]/auto/(it|prepass_only|gemm_only)' > $L/parts.txt 2>&1
grep median $L/parts.txt | awk '{print $1, $2, $3}'
pack
for s in 3 2; do
  timeout 150 ncu --clock-control none -k regex:Sm90Nvfp4GroupedGemmKernel --launch-skip 30 --launch-count 1 \
    --set full $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="gpumode/s$s/auto/gemm_only" > $L/ncu_s${s}_gemm.txt 2>&1
  echo "ncu s$s rc=$?"
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Stall" $L/ncu_s${s}_gemm.txt | head -24
  pack
done

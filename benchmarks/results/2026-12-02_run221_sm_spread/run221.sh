#!/bin/bash
# Run 221 (session 33): how unevenly the SMs finish the multi-wave GEMMs (the "dynamic tail"
# lever named since session 15, measured so far only with the stamps build, which slows the
# stream-K loops 8-30%), and the narrow loop's stall reasons by name (run 220 printed only the top
# one). Nsight Compute on the GEMM kernel alone of GPU MODE shapes 0 (stream-K) and 1 (packed
# persistent) and of steady/w64 and w128: per-SM active cycles (min / avg / max against the
# elapsed cycles) and the warp-state breakdown per issued instruction.
# Here: the bundle of run 220 (gpu_s33a, 48249bf; kernels unchanged since d6c6d8c). There:
#   bash benchmarks/results/2026-12-02_run221_sm_spread/run221.sh
[ -d gb/gpu_s33a ] || { mkdir -p gb && tar xJf gpu_s33a.tar.xz -C gb; }
B=gb/gpu_s33a
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs221
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs221.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version; } > $L/env.txt 2>&1
M="sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,gpu__time_duration.sum,smsp__cycles_active.avg,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__average_warps_issue_stalled_per_issue_active.ratio"
for f in gpumode/s0/auto/gemm_only gpumode/s1/auto/gemm_only steady/w64/k8192/gemm_only steady/w128/k8192/gemm_only; do
  n=$(echo $f | tr '/' '_')
  timeout 150 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemm --launch-skip 10 \
    --launch-count 1 --metrics "$M" $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter="^$f" > $L/ncu_$n.txt 2>&1
  echo "$f rc=$?"
  grep -E "sm__cycles|gpu__time|stalled" $L/ncu_$n.txt | awk '{v=$NF; n=$1; if (v+0 > 0.05 || n ~ /sm__|gpu__/) print n, v}'
  pack
done

#!/bin/bash
# Run 218 (session 32): is the narrow main loop bound by shared-memory bandwidth? Nsight Compute
# of the GEMM kernel alone at one weight tile per SM, 64 and 256 tokens (steady/w<W>/k8192/
# gemm_only), at 1902f93: shared-memory bank reads/writes against their peak, the LSU's shared
# wavefronts, the tensor pipe, issue.
# Here: tools/gpu_bundle.sh gpu_s32d at 1902f93. There:
#   bash benchmarks/results/2026-12-02_run218_ncu_smem/run218.sh
[ -d gb/gpu_s32d ] || { mkdir -p gb && tar xJf gpu_s32d.tar.xz -C gb; }
B=gb/gpu_s32d
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs218
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs218.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version; } > $L/env.txt 2>&1
ncu --query-metrics --chip gh100 2>/dev/null | grep -E -i "data_bank|mem_shared|gmma|pipe_tensor|shared_op" > $L/metric_names.txt
M=l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_reads.sum,l1tex__data_bank_writes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for w in 64 128 256; do
  timeout 120 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemm --launch-skip 10 \
    --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --metrics $M \
    $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="^steady/w$w/k8192/gemm_only" \
    > $L/ncu_w$w.txt 2>&1
  echo "w$w rc=$?"
  grep -E "data_bank|mem_shared|gmma|Shared Memory|Compute \(SM\) Throughput|Memory Throughput|Duration|inst_executed" $L/ncu_w$w.txt | head -30
  pack
done

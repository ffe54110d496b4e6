#!/bin/bash
# Device run 44 (2026-11-30, session 5): the kernel's steady state (benchmark family steady/: one
# tile per SM, K = 4096 and 8192) next to the consumer ceiling, same lease; ncu of steady/w128/k8192.
# Bundle gb/: b_default (//benchmarks:sm90_nvfp4_grouped_gemm -c opt at this commit), ceiling
# (run 38's). Usage (repo root): bash run44.sh gb
G=$(cd "$1" && pwd)
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
export LD_LIBRARY_PATH=$G
timeout 60 "$G/ceiling" > "$L/ceiling.txt" 2>&1; echo "rc=$?" >> "$L/ceiling.txt"
timeout 120 "$G/b_default" --benchmark_filter='steady/' --benchmark_out="$L/bench_steady.json" \
  --benchmark_out_format=json > "$L/bench_steady.txt" 2>&1
echo "rc=$?" >> "$L/bench_steady.txt"
grep median "$L/bench_steady.txt"
timeout 100 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemmKernel --launch-skip 3 \
  --launch-count 1 --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg \
  "$G/b_default" --benchmark_filter='steady/w128/k8192' > "$L/ncu_steady_w128.txt" 2>&1
grep -E "duration|cycles|tensor" "$L/ncu_steady_w128.txt"
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .

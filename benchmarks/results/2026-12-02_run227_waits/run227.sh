#!/bin/bash
# Run 227 (session 34): where the consumers' loop time goes in real timing (the measurement build
# _exp_waits: clock64 around the weight- and token-stage waits, the k-block drain, the loop and
# the epilogue, summed over every consumer warp; stamp_log.h WaitCounter), on the steady family
# (simple kernel, one tile per SM) and the GPU MODE shapes, beside run 226's micro table.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_exp_waits, copied with
# libbenchmark into gpu_w/ (carried). There:
#   bash benchmarks/results/2026-12-02_run227_waits/run227.sh
export LD_LIBRARY_PATH=$(pwd)/gpu_w
L=${OUT:-/tmp/out}
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > $L/env.txt 2>&1
gpu_w/sm90_nvfp4_grouped_gemm_exp_waits \
  --benchmark_filter='steady/w[0-9]+/k8192/gemm_only/|gpumode/s[0-3]/auto/(it|gemm_only)/|decode/n2048_k7168/m(16|64|128)/' \
  --benchmark_repetitions=3 > $L/waits.txt 2>&1
grep -E "_median|_mean" $L/waits.txt | grep median | sed -E 's/ +/ /g' | cut -c1-400

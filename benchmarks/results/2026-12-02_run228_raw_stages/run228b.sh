#!/bin/bash
# Run 228b (session 34, after run 228 matched no GPU MODE benchmark): 8 or 9 raw (weight) stages in the pre-pass kernels instead of 6 (manual
# builds _raw8 / _raw9, ENCORE_SM90_PREPASS_RAW_STAGES), after run 227 put the consumers' wait for
# the weight stage at ~6-14% of their loop time. Kernel tests of both builds (a subset), then
# 3 alternated rounds of default / _raw8 / _raw9 on the GPU MODE shapes, the steady family and a
# decode step.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_raw{8,9}
#   //tests/gemm:sm90_nvfp4_grouped_gemm_raw{8,9}_test, copied with the default benchmark of
#   gpu_s33d (0fe45a9; the default kernels' PTX is unchanged since) into gpu_r/, packed as
#   gpu_r.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-02_run228_raw_stages/run228b.sh
[ -d gb/gpu_r ] || { mkdir -p gb && tar xJf gpu_r.tar.xz -C gb; }
B=gb/gpu_r
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs228b
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
# (the kernel tests ran in run 228)
F='gpumode/s[0-3]/auto/iter'
for r in 1 2 3; do
  for v in "" _raw8 _raw9; do
    $B/sm90_nvfp4_grouped_gemm$v --benchmark_filter="$F" --benchmark_repetitions=10 \
      --benchmark_report_aggregates_only=true > $L/bench${v:-_default}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs228b.tar.xz -C $L .

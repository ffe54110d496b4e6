#!/bin/bash
# Run 232 (session 34): whether kAuto's kernel choice still holds on the GPU MODE shapes now that
# the persistent kernel runs tiles of <= 128 tokens in 2 parts (530185e): every kernel kind forced,
# old default (gpu_s33d, 0fe45a9) and new (gpu_s34, 530185e) in one lease.
# There: bash benchmarks/results/2026-12-02_run232_kinds/run232.sh (gpu_s34.tar.xz, gpu_s33d.tar.xz)
for d in gpu_s34 gpu_s33d; do [ -d gb/$d ] || { mkdir -p gb && tar xJf $d.tar.xz -C gb; }; done
L=/tmp/logs232
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
F='gpumode/s[0-3]/(auto|simple|persistent|stream_k)/iter'
for v in gpu_s33d gpu_s34; do
  LD_LIBRARY_PATH=$(pwd)/gb/$v timeout 100 gb/$v/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_repetitions=10 --benchmark_report_aggregates_only=true > $L/bench_$v.txt 2>&1
done
for f in $L/bench_*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs232.tar.xz -C $L .

#!/bin/bash
# Device run 125 (2026-12-01, session 18): stamped time lines of the GPU MODE shapes with every
# PDL pre-pass padded to an even spread (fa2c59a; kernels as fb77c59), launched as the timed calls
# are (run 113's method), then the default build on the same filter.
# Usage (repo root; carry gpu_s125.tar.xz: b_exp_stamps and b_default of tools/ab_bundle.sh
# gpu_a125 _exp_stamps, libbenchmark):
#   bash benchmarks/results/2026-12-01_run125_stamps_spread/run125.sh
mkdir -p gs && tar xJf gpu_s125.tar.xz -C gs
export LD_LIBRARY_PATH=$(pwd)/gs
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s./auto/it'
timeout 150 gs/b_exp_stamps --benchmark_filter="$F" > $L/stamps.txt 2>&1
echo "stamps rc=$?"; grep -E "^== |medians over calls" $L/stamps.txt | cut -c1-420
grep -A6 "CTA profile" $L/stamps.txt | cut -c1-100
pack
timeout 60 gs/b_default --benchmark_filter="$F" > $L/bench_default.txt 2>&1
echo "default rc=$?: $(grep median $L/bench_default.txt | awk '{printf "%s %s | ", $1, $2}')"
pack

#!/bin/bash
# Device run 112 (2026-12-01, session 17): where the calls' time goes at ad68511's kernels (the
# measurement build _exp_stamps: each benchmark prints the time line of one stamped batch and a
# per-CTA profile), GPU MODE shapes 0-3 (kAuto: shape 3 fused) and shapes 2-3 unfused, then the
# default build on the same filter for the unstamped times.
# Usage (repo root; carry gpu_s.tar.xz = tools/ab_bundle.sh gpu_s _exp_stamps):
#   bash benchmarks/results/2026-12-01_run112_stamps/run112.sh
mkdir -p gs && tar xJf gpu_s.tar.xz -C gs
export LD_LIBRARY_PATH=$(pwd)/gs
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s./auto/it|gpumode/s[23]/auto/unfused/it|fewtiles/(decode8|one_tile)/auto/it'
timeout 200 gs/b_exp_stamps --benchmark_filter="$F" > $L/stamps.txt 2>&1
echo "stamps rc=$?"; grep -E "^== |medians over calls" $L/stamps.txt | cut -c1-400
pack
timeout 120 gs/b_default --benchmark_filter="$F" > $L/bench_default.txt 2>&1
echo "default rc=$?: $(grep median $L/bench_default.txt | awk '{printf "%s %s | ", $1, $2}')"
pack

#!/bin/bash
# Device run 113 (2026-12-01, session 17): run 112 again with the stamped batch launched as the
# timed batches are (PDL where the plan prefers it; run 112 stamped without PDL), plus shapes 2-3
# with a forced PDL edge in front of the pre-pass (auto/pdl).
# Usage (repo root; carry gpu_s.tar.xz = tools/ab_bundle.sh gpu_s _exp_stamps):
#   bash benchmarks/results/2026-12-01_run113_stamps_pdl/run113.sh
mkdir -p gs && tar xJf gpu_s.tar.xz -C gs
export LD_LIBRARY_PATH=$(pwd)/gs
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s./auto/it|gpumode/s[23]/auto/(unfused|pdl)/it|fewtiles/(decode8|one_tile)/auto/it'
timeout 200 gs/b_exp_stamps --benchmark_filter="$F" > $L/stamps.txt 2>&1
echo "stamps rc=$?"; grep -E "^== |medians over calls" $L/stamps.txt | cut -c1-400
pack
timeout 120 gs/b_default --benchmark_filter="$F" > $L/bench_default.txt 2>&1
echo "default rc=$?: $(grep median $L/bench_default.txt | awk '{printf "%s %s | ", $1, $2}')"
pack

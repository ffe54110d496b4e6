#!/bin/bash
# Device run 115 (2026-12-01, session 17): the fused pre-pass's own stamps (the CTA's jobs
# converted, its share fenced, past the grid barrier; new events 9-11) on the fused plans: shape 3
# and decode8 (kAuto fuses them), shapes 1-2 forced fused (auto/fused = kAlways).
# Usage (repo root; carry gpu_s.tar.xz = tools/ab_bundle.sh gpu_s _exp_stamps):
#   bash benchmarks/results/2026-12-01_run115_fused_stamps/run115.sh
mkdir -p gs && tar xJf gpu_s.tar.xz -C gs
export LD_LIBRARY_PATH=$(pwd)/gs
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s3/auto/it|gpumode/s[12]/auto/fused/it|fewtiles/decode8/auto/it'
timeout 200 gs/b_exp_stamps --benchmark_filter="$F" > $L/stamps.txt 2>&1
echo "stamps rc=$?"
grep -E "^== |fused pre-pass|first tile start|last tile end|sum of main" $L/stamps.txt | cut -c1-200
pack

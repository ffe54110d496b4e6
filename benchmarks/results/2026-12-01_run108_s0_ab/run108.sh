#!/bin/bash
# Device run 108 (2026-12-01, session 16): is run 107's shape 0 +1.3% (new 99.3-99.9 vs the
# reference's 98.0-98.2 us, stream-K, unfused in both) the tree or the process? Each process runs
# only the four GPU MODE shapes with kAuto; reference (run 104's b_default) and new (251630d)
# alternated, ROUNDS rounds; then once more with the new binary's s0 alone.
# Usage (repo root; carry gpu_r107.tar.xz and gpu_k.tar.xz as in run 107):
#   bash benchmarks/results/2026-12-01_run108_s0_ab/run108.sh
mkdir -p gb gk && tar xJf gpu_r107.tar.xz -C gb && tar xJf gpu_k.tar.xz -C gk
B=gb/gpu_r107
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s./auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 60 gk/b_default --benchmark_filter="$F" > $L/bench_ref_$round.txt 2>&1
  echo "== ref $round: $(grep median $L/bench_ref_$round.txt | awk '{printf "%s ", $2}')"
  timeout 60 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" > $L/bench_new_$round.txt 2>&1
  echo "== new $round: $(grep median $L/bench_new_$round.txt | awk '{printf "%s ", $2}')"
  pack
done
timeout 60 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s0/auto/it' > $L/bench_new_s0.txt 2>&1
echo "== new s0 alone: $(grep median $L/bench_new_s0.txt | awk '{printf "%s ", $2}')"
timeout 60 gk/b_default --benchmark_filter='gpumode/s0/auto/it' > $L/bench_ref_s0.txt 2>&1
echo "== ref s0 alone: $(grep median $L/bench_ref_s0.txt | awk '{printf "%s ", $2}')"
pack

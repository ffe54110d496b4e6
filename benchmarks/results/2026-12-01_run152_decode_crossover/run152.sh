#!/bin/bash
# Device run 152 (session 22): where the simple kernel's streaming loop on a 4-stage token ring
# (_ring4s: ENCORE_SM90_SIMPLE_RING4 + SIMPLE_STREAM, tiles <= 128 tokens) pays against the
# default, by token-tile rows: the decode/ family (8 groups of M = 16..128 tokens at N = 2048,
# K = 7168 and N = 7168, K = 2048), ROUNDS rounds, builds alternated. Only the packed logs go to
# $OUT (the device tool returns at most 8 files; run 151's unpacked logs did not come back).
# Usage (repo root; carry gpu_a152.tar.xz from tools/ab_bundle.sh gpu_a152 _ring4s):
#   bash benchmarks/results/2026-12-01_run152_decode_crossover/run152.sh
mkdir -p gb && tar xJf gpu_a152.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=/tmp/logs152
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
F='decode/|fewtiles/decode8/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default ring4s; do
    timeout 150 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

#!/bin/bash
# Device run 153 (session 22): narrower token-tile caps than kMTileCaps' smallest (64) on the
# one-wave GPU MODE shapes. Shape 2 (M = [192, 320], N = 3072: 12 weight tiles a group) runs 96
# tiles of 64 rows on 132 SMs; a cap of 48 gives 4 + 7 token tiles, i.e. exactly 132 tiles
# (pack model: 3478 vs 3734 units a CTA, -7%). Shape 3 at 48 would need 176 tiles (two waves).
# ROUNDS rounds of gpumode/s{2,3}/auto/rows{32,48,64,80} and the default choice (/auto/it).
# Usage (repo root; carry gpu_a153.tar.xz from tools/ab_bundle.sh gpu_a153):
#   bash benchmarks/results/2026-12-01_run153_rows48/run153.sh
mkdir -p gb && tar xJf gpu_a153.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=/tmp/logs153
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
F='gpumode/s[123]/auto/(it|rows(32|48|64|80))'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 200 $B/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== $round: $(short $L/bench_$round.txt)"
  pack
done

#!/bin/bash
# Device run 151 (prepared in session 21, not yet run): the simple kernel's token ring split into
# 4 stages for tiles of groups whose token tiles are <= 128 rows (_ring4: ENCORE_SM90_SIMPLE_RING4),
# and the same with those tiles streaming (no drain between k-blocks; _ring4s: + SIMPLE_STREAM)
# against the default. Run 148 measured the stream on 4 stages at 1-2% on GPU MODE shapes 2-3 and
# 6% on decode8, but on the _rows128 tile, which is slower by itself; this keeps the default tile.
# Phase 1: the kernel tests of both builds (in parallel; ~150 s). Phase 2: ROUNDS rounds of the
# simple-kernel shapes (GPU MODE 2 and 3, decode8, tiny, one_tile) plus shapes 0-1 as a control
# (their persistent and stream-K kernels are unchanged), builds alternated.
# Usage (repo root; carry gpu_a151.tar.xz from tools/ab_bundle.sh gpu_a151 _ring4 _ring4s):
#   bash benchmarks/results/2026-12-01_run151_ring4/run151.sh
mkdir -p gb && tar xJf gpu_a151.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
for v in ring4 ring4s; do
  timeout 300 $B/tests/sm90_nvfp4_grouped_gemm_${v}_test > $L/test_$v.txt 2>&1 &
done
wait
for v in ring4 ring4s; do
  echo "== test $v: $(grep -E '^\[  (PASSED|FAILED) ' $L/test_$v.txt | tr '\n' ' ')"
done
pack
F='gpumode/s./auto/it|fewtiles/(decode8|tiny|one_tile)/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default ring4 ring4s; do
    timeout 120 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

#!/bin/bash
# Device run 147 (session 21): _skfirst as two stretches of the range walked by a nested loop
# (one call site of the tile body; no cursor switch inside a walk). First the SASS statistics (run
# 145's script: is the stream-K k loop back on the uniform datapath?); if _skfirst's pre-pass
# stream-K kernel still has more than 200 R2UR, stop there; else the _skfirst stream-K tests and
# ROUNDS rounds of run 144's benchmarks, builds alternated.
# Usage (repo root; carry gpu_a147.tar.xz from tools/ab_bundle.sh gpu_a147 _skfirst):
#   bash benchmarks/results/2026-12-01_run147_skfirst_segments/run147.sh
mkdir -p gb && tar xJf gpu_a147.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
for v in default skfirst; do cuobjdump -sass $B/b_$v > /tmp/$v.sass 2>&1; done
python3 benchmarks/results/2026-12-01_run145_skfirst_sass/sass_stats.py /tmp/default.sass \
  /tmp/skfirst.sass $L | grep ScheduleE2
r2ur=$(grep '^skfirst .*ILi8ELNS1_8ScheduleE2ELNS1_11TokenSourceE1' $L/stats.txt | sed 's/.*R2UR=\([0-9]*\).*/\1/')
echo "== _skfirst pre-pass stream-K kernel R2UR: $r2ur"
if [ "${r2ur:-999}" -gt 200 ]; then pack; exit 0; fi
timeout 200 $B/tests/sm90_nvfp4_grouped_gemm_skfirst_test --gtest_filter='*StreamK*:*GpuMode*' \
  > $L/test_skfirst.txt 2>&1
echo "== test _skfirst rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_skfirst.txt | tr '\n' ' ')"
pack
F='gpumode/s0/auto/it|gpumode/s0/stream_k/costs(0|13|14)/|fewtiles/one_tile/(auto/it|stream_k/costs(0|13|14)/)'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in default skfirst; do
    timeout 150 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

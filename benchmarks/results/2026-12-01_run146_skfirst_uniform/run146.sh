#!/bin/bash
# Device run 146 (session 21): _skfirst with two cursor values more instead of seven (the resume
# point re-located, not saved). First the SASS statistics (run 145's script: is the stream-K k loop
# back on the uniform datapath?), then the _skfirst stream-K tests, then ROUNDS rounds of run 144's
# benchmarks, builds alternated.
# Usage (repo root; carry gpu_a146.tar.xz from tools/ab_bundle.sh gpu_a146 _skfirst):
#   bash benchmarks/results/2026-12-01_run146_skfirst_uniform/run146.sh
mkdir -p gb && tar xJf gpu_a146.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
for v in default skfirst; do cuobjdump -sass $B/b_$v > /tmp/$v.sass 2>&1; done
python3 benchmarks/results/2026-12-01_run145_skfirst_sass/sass_stats.py /tmp/default.sass \
  /tmp/skfirst.sass $L | grep ScheduleE2
timeout 200 $B/tests/sm90_nvfp4_grouped_gemm_skfirst_test --gtest_filter='*StreamK*:*GpuMode*' \
  > $L/test_skfirst.txt 2>&1
echo "== test _skfirst rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_skfirst.txt | tr '\n' ' ')"
pack
F='gpumode/s0/auto/it|gpumode/s0/stream_k/costs(0|13|14)/|fewtiles/one_tile/(auto/it|stream_k/costs(0|13|14)/)'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default skfirst; do
    timeout 150 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

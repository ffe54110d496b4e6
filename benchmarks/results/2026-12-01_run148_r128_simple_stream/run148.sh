#!/bin/bash
# Device run 148 (session 21): the simple kernel without the drain between k-blocks on <= 128-row
# token tiles (_r128sstream: ENCORE_SM90_MAX_TOKEN_ROWS=128 + ENCORE_SM90_SIMPLE_STREAM=1; 4 fp16
# token stages, so the token stage released half a k-block later still leaves the producer stages
# to fill) against _rows128 (the same tile with the drain) and the default, on the simple-kernel
# shapes (GPU MODE 2 and 3, decode8, tiny). Runs 39/41 (older kernels, 2 token stages) lost with
# the drain removed; run 38's micro gained 10% at n = 128 without it.
# First the correctness tests that cover the simple kernel (its in-kernel-token kernels spill 36
# bytes in this build, so NoKernelUsesLocalMemory is expected to fail there), then ROUNDS rounds.
# Usage (repo root; carry gpu_a148.tar.xz from tools/ab_bundle.sh gpu_a148 _rows128 _r128sstream):
#   bash benchmarks/results/2026-12-01_run148_r128_simple_stream/run148.sh
mkdir -p gb && tar xJf gpu_a148.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
T='*GpuMode*:*Subnormal*:*DynamicM*:*OutputsStay*:*FusedPrepassMatches*:*SixtyFour*:*NoKernelUsesLocalMemory*'
timeout 170 $B/tests/sm90_nvfp4_grouped_gemm_r128sstream_test --gtest_filter="$T" \
  > $L/test_r128sstream.txt 2>&1
echo "== test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_r128sstream.txt | tr '\n' ' ')"
pack
F='gpumode/s[23]/auto/it|fewtiles/(decode8|tiny)/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in default rows128 r128sstream; do
    timeout 60 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

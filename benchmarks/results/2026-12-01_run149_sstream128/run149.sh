#!/bin/bash
# Device run 149 (session 21): run 148's stream on the default tile, only for tiles of <= 128
# tokens (_sstream128: ENCORE_SM90_SIMPLE_STREAM=1, ENCORE_SM90_SIMPLE_STREAM_MAX_N=128; wider tiles
# keep the drain, so the 256-row kernels' registers stay as they are: no stack frame) against the
# default, on the simple-kernel shapes (GPU MODE 2 and 3, decode8, tiny). The default tile has 2
# fp16 token stages, so the later release leaves the token producer half a k-block less lead.
# Tests first (the simple kernel's), then ROUNDS rounds, builds alternated.
# Usage (repo root; carry gpu_a149.tar.xz from tools/ab_bundle.sh gpu_a149 _sstream128):
#   bash benchmarks/results/2026-12-01_run149_sstream128/run149.sh
mkdir -p gb && tar xJf gpu_a149.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
T='*GpuMode*:*Subnormal*:*DynamicM*:*OutputsStay*:*FusedPrepassMatches*:*SixtyFour*:*NoKernelUsesLocalMemory*'
timeout 170 $B/tests/sm90_nvfp4_grouped_gemm_sstream128_test --gtest_filter="$T" \
  > $L/test_sstream128.txt 2>&1
echo "== test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_sstream128.txt | tr '\n' ' ')"
pack
F='gpumode/s[23]/auto/it|fewtiles/(decode8|tiny)/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default sstream128; do
    timeout 60 $B/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done

#!/bin/bash
# Device run 155 (session 22): the streamed simple kernel streaming only 16- and 128-row tiles,
# chosen for plans whose tiles all have those widths (RunnerOptions::stream_simple_tiles, commit
# COMMIT). The kernel test (and its streamed test under memcheck and racecheck), then ROUNDS rounds
# of the decode/ family (default vs /nostream), GPU MODE shapes 2-3 and the few-tile shapes
# (default vs /nostream: shape 3's 128-row tiles now stream; shape 2 is a control).
# Usage (repo root; carry gpu_s155.tar.xz = tools/gpu_bundle.sh gpu_r155's kernel test and
# kernel benchmark, stripped): bash benchmarks/results/2026-12-01_run155_stream_16_128/run155.sh
mkdir -p gb && tar xJf gpu_s155.tar.xz -C gb
B=gb/gpu_r155
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs155
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
timeout 200 $B/tests/sm90_nvfp4_grouped_gemm_test > $L/t_kernel.txt 2>&1
echo "kernel test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_kernel.txt | tr '\n' ' ')"
pack
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter='*StreamedSimpleKernel*' > $L/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_$tool.txt | tr '\n' ' ')"
  pack
done
F='decode/n2048|gpumode/s[23]/auto/(it|nostream)|fewtiles/(decode8|tiny|one_tile)/auto/(it|nostream)'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== $round: $(short $L/bench_$round.txt)"
  pack
done

#!/bin/bash
# Device run 119 (2026-12-01, session 18): the pre-pass padding's bounds, all in one binary
# (runtime options): small pre-passes padded to 1 / 2 (default) / 3 blocks a SM
# (RunnerOptions::prepass_pad_blocks_per_sm), and the pre-passes that already launch behind an
# edge (shapes 0-1) padded too (pad_large_prepasses: max(bound, blocks / SMs) a SM). Also the
# device test (DeviceInfo::reserved_smem_per_block, first time on a GPU) and forced stream-K on
# shapes 2-3. ROUNDS rounds of the same filter.
# Usage (repo root; carry gpu_a119.tar.xz: the default kernel benchmark and device_test, stripped):
#   bash benchmarks/results/2026-12-01_run119_pad_bounds/run119.sh
mkdir -p ga && tar xJf gpu_a119.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
timeout 60 ga/device_test > $L/t_device_test.txt 2>&1
echo "device_test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED' $L/t_device_test.txt | tr '\n' ' ')"
pack
F='gpumode/s[01]/auto/(it|padlarge/|padlarge3/)|gpumode/s[23]/auto/(it|pad1/|pad3/)|fewtiles/(one_tile|decode8)/auto/(it|pad1/|pad3/)|gpumode/s[23]/stream_k/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 150 ga/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== round $round rc=$?"
  grep median $L/bench_$round.txt | awk '{print $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//'
  pack
done

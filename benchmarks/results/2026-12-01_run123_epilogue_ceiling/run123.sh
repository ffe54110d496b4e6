#!/bin/bash
# Device run 123 (2026-12-01, session 18): what the persistent and stream-K kernels' epilogue
# costs (measurement builds, wrong results on purpose): _exp_epi1 keeps the packing, the stmatrix
# and one barrier a chunk but stores nothing (the consumers' share if other warps copied the
# staged chunks out), _exp_epi2 has no epilogue. ROUNDS rounds, the builds alternated.
# Usage (repo root; carry gpu_a123.tar.xz: b_default, b_exp_epi1, b_exp_epi2, libbenchmark):
#   bash benchmarks/results/2026-12-01_run123_epilogue_ceiling/run123.sh
mkdir -p ga && tar xJf gpu_a123.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s[01]/auto/it|fewtiles/one_tile/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default exp_epi1 exp_epi2; do
    timeout 60 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  done
  pack
done

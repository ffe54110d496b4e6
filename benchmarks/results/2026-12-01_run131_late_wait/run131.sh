#!/bin/bash
# Device run 131 (2026-12-01, session 19): the weight producer waiting before it triggers (default,
# ENCORE_SM90_PRODUCER_WAITS_LATE=1) against _earlytrig (=0: the kernels of b3540f4, PTX-identical),
# ROUNDS rounds alternating the builds, GPU MODE shapes and the few-tile ones.
# Usage (repo root; carry gpu_a131.tar.xz = tools/ab_bundle.sh gpu_a131 _earlytrig):
#   bash benchmarks/results/2026-12-01_run131_late_wait/run131.sh
mkdir -p ga && tar xJf gpu_a131.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s./auto/it|fewtiles/(one_tile|decode8)/auto/it'
for round in $(seq 1 ${ROUNDS:-4}); do
  for v in default earlytrig; do
    timeout 60 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  done
  pack
done

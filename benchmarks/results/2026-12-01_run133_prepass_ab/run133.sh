#!/bin/bash
# Device run 133: three token pre-pass builds against the default, one lease.
#   _pre32: the unit index by one 32-bit division (run 132's lead);
#   _stage: _pre32 + each warp's stores staged in shared memory (4 whole-line stores of 2 units);
#   _ready: _stage + the GEMM waits for the pre-pass blocks' done count instead of the grid.
# Their kernel tests run in parallel (CPU-reference bound; the device has 16 cores), then ROUNDS
# rounds alternating the builds on the GPU MODE shapes, their pre-passes alone and the few-tile
# shapes.
# Usage (repo root; carry gpu_a133.tar.xz = tools/ab_bundle.sh gpu_a133 _pre32 _stage _ready):
#   bash benchmarks/results/2026-12-01_run133_prepass_ab/run133.sh
mkdir -p ga && tar xJf gpu_a133.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
s0=$(date +%s)
for v in pre32 stage ready; do
  ( timeout 300 ga/tests/sm90_nvfp4_grouped_gemm_${v}_test > $L/t_$v.txt 2>&1
    echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_$v.txt ) &
done
wait
for v in pre32 stage ready; do
  echo "$v test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_$v.txt | tr '\n' ' ') $(tail -1 $L/t_$v.txt)"
done
pack
F='gpumode/s./auto/(it|prepass_only/)|fewtiles/(one_tile|decode8)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default pre32 stage ready; do
    timeout 90 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  done
  pack
done

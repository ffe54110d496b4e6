#!/bin/bash
# Device run 102 (2026-12-01, session 15): the whole-tile epilogue of the simple kernel (_wtepi)
# against the default. _wtepi's kernel test first (stop if it fails), racecheck + memcheck of two
# tests that run the simple kernel, then ROUNDS rounds of the kernel benchmark (builds alternated).
# Usage (repo root; carry gpu_x.tar.xz = tools/ab_bundle.sh gpu_x _wtepi):
#   bash benchmarks/results/2026-12-01_run102_wtepi/run102.sh
mkdir -p gb && tar xJf gpu_x.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_wtepi_test
s0=$(date +%s)
timeout 220 $T > $L/t_wtepi.txt 2>&1; echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_wtepi.txt
grep -E "^\[  (PASSED|FAILED)|rc=" $L/t_wtepi.txt
grep -q "rc=0" $L/t_wtepi.txt || { pack; exit 1; }
for tool in racecheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $T \
    --gtest_filter='*DynamicMComputesOnlyValidRows*:*SubnormalWeightFragmentsAreHonored*' > $L/san_$tool.txt 2>&1
  echo "rc=$?" >> $L/san_$tool.txt; tail -2 $L/san_$tool.txt
done
pack
F='gpumode/s./auto/it|fewtiles/(decode8|tiny)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for b in $B/b_*; do
    v=${b##*/b_}
    timeout 60 $b --benchmark_filter="$F" > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done

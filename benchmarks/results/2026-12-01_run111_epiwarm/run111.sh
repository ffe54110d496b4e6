#!/bin/bash
# Device run 111 (2026-12-01, session 17): _epiwarm (the consumers run their epilogue once without
# stores before the first tile, so its code is in the instruction cache for the first real one;
# the simple kernel then packs per chunk). Its kernel tests (a subset) and racecheck, then ROUNDS
# rounds alternating the default and _epiwarm.
# Usage (repo root; carry gpu_w.tar.xz = tools/ab_bundle.sh gpu_w _epiwarm):
#   bash benchmarks/results/2026-12-01_run111_epiwarm/run111.sh
mkdir -p gw && tar xJf gpu_w.tar.xz -C gw
export LD_LIBRARY_PATH=$(pwd)/gw
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=gw/tests/sm90_nvfp4_grouped_gemm_epiwarm_test
s0=$(date +%s)
timeout 120 $T --gtest_filter='*GpuModeShapes*:*Fused*:*DynamicM*:*StreamK*:*Packed*:*NoKernelUsesLocalMemory*:*M0*:*Ragged*' > $L/t_epiwarm.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_epiwarm.txt
echo "epiwarm test: $(grep -E '^\[  PASSED|^\[  FAILED|^\[       OK|^\[  FAILED  \]' $L/t_epiwarm.txt | tr '\n' ' ' | cut -c1-900) $(tail -1 $L/t_epiwarm.txt)"
pack
s0=$(date +%s)
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $T \
  --gtest_filter='*GpuModeShapesBothKernels*' > $L/san_racecheck.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/san_racecheck.txt
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/san_racecheck.txt | tr '\n' ' ') $(tail -1 $L/san_racecheck.txt)"
pack
F='gpumode/s./auto/it|fewtiles/(decode8|tiny|one_tile)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default epiwarm; do
    timeout 60 gw/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done
echo "names: $(grep median $L/bench_default_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"

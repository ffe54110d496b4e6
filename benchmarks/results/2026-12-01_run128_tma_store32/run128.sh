#!/bin/bash
# Device run 128 (2026-12-01, session 19): C by TMA stores with 32-row boxes (ENCORE_SM90_TMA_STORE=1, the
# default: pre-pass kernels with <= 8 groups and static M) against the threads' stores (_thrstore).
# The default's kernel tests that cover the epilogue, the new output-bounds and dynamic-M tests of _thrstore,
# racecheck of the output-bounds test, the SASS's store instructions, then ROUNDS rounds
# alternating the builds.
# Usage (repo root; carry gpu_a128.tar.xz = tools/ab_bundle.sh gpu_a128 _thrstore + the torch script):
#   bash benchmarks/results/2026-12-01_run128_tma_store32/run128.sh
mkdir -p ga && tar xJf gpu_a128.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=ga/tests/sm90_nvfp4_grouped_gemm_test
s0=$(date +%s)
timeout 200 $T --gtest_filter='*GpuModeShapes*:*OutputsStay*:*DynamicM*:*PrepassPlans*:*Packed*:*BalancedStreamK*:*Fused*' > $L/t_default.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_default.txt
echo "default test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_default.txt | tr '\n' ' ') $(tail -1 $L/t_default.txt)"
grep -E "FAILED|Failure" $L/t_default.txt | head -5
pack
timeout 60 ga/tests/sm90_nvfp4_grouped_gemm_thrstore_test --gtest_filter='*OutputsStay*:*DynamicM*' > $L/t_thrstore.txt 2>&1
echo "thrstore tests: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_thrstore.txt | tr '\n' ' ')"
s0=$(date +%s)
timeout 100 compute-sanitizer --tool racecheck $T --gtest_filter='*OutputsStay*' > $L/racecheck.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/racecheck.txt
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED|hazard' $L/racecheck.txt | head -4 | tr '\n' ' ') $(tail -1 $L/racecheck.txt)"
timeout 40 cuobjdump -sass ga/b_default | grep -oE "UTMASTG|UTMACMDFLUSH|UTMALDG|STG\.E\.128" | sort | uniq -c > $L/sass_default.txt
timeout 40 cuobjdump -sass ga/b_thrstore | grep -oE "UTMASTG|UTMACMDFLUSH|UTMALDG|STG\.E\.128" | sort | uniq -c > $L/sass_thrstore.txt
echo "sass default: $(cat $L/sass_default.txt | tr '\n' ' ') | thrstore: $(cat $L/sass_thrstore.txt | tr '\n' ' ')"
pack
F='gpumode/s./auto/it|fewtiles/(one_tile|decode8|tiny)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default thrstore; do
    timeout 60 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  done
  pack
done

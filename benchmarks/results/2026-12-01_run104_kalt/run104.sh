#!/bin/bash
# Device run 104 (2026-12-01, session 16): four consumer warpgroups, pairs taking every other k-block of a strip
# (_ksplit, full-width wgmmas) against the default. _ksplit's kernel test first, racecheck of two tests that
# run the simple kernel, then ROUNDS rounds of the kernel benchmark (builds alternated): the GPU MODE
# shapes (auto, simple, persistent), two few-tile shapes and the steady family (main-loop rate).
# Usage (repo root; carry gpu_k.tar.xz = tools/ab_bundle.sh gpu_k _ksplit):
#   bash benchmarks/results/2026-12-01_run104_kalt/run104.sh
mkdir -p gb && tar xJf gpu_k.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_ksplit_test
s0=$(date +%s)
timeout 200 $T > $L/t_ksplit.txt 2>&1; echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_ksplit.txt
grep -E "^\[  (PASSED|FAILED)|rc=" $L/t_ksplit.txt
if grep -q "rc=0" $L/t_ksplit.txt; then
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $T \
    --gtest_filter='*DynamicMComputesOnlyValidRows*:*SubnormalWeightFragmentsAreHonored*' > $L/san_racecheck.txt 2>&1
  echo "rc=$?" >> $L/san_racecheck.txt; tail -2 $L/san_racecheck.txt
fi
pack
F='gpumode/s./(auto|simple|persistent)/it|fewtiles/(decode8|tiny)/auto/it|steady/w(64|96|128)/k(4096|8192)/gemm_only'
for round in $(seq 1 ${ROUNDS:-2}); do
  for b in $B/b_*; do
    v=${b##*/b_}
    timeout 90 $b --benchmark_filter="$F" > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done

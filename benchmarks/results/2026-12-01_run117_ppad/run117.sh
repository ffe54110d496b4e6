#!/bin/bash
# Device run 117 (2026-12-01, session 17): _ppad (pre-pass plans whose GEMM leaves SMs idle launch
# with PDL too, their pre-pass blocks padded with 100 KB of unused shared memory so at most 2 wait
# on an idle SM; run 113: shape 2's pre-pass otherwise launches 2.4 us after the previous GEMM
# ends). Its pre-pass tests, then ROUNDS rounds alternating the default and _ppad.
# Usage (repo root; carry gpu_p.tar.xz = tools/ab_bundle.sh gpu_p _ppad):
#   bash benchmarks/results/2026-12-01_run117_ppad/run117.sh
mkdir -p gp && tar xJf gpu_p.tar.xz -C gp
export LD_LIBRARY_PATH=$(pwd)/gp
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=gp/tests/sm90_nvfp4_grouped_gemm_ppad_test
s0=$(date +%s)
timeout 100 $T --gtest_filter='*PrepassPlansBackToBack*:*PlansLaunchBehind*:*LaunchPlanAsGraph*:*GpuModeShapes*' > $L/t_ppad.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_ppad.txt
echo "ppad test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_ppad.txt | tr '\n' ' ') $(tail -1 $L/t_ppad.txt)"
pack
F='gpumode/s[23]/auto/(it|unfused/it)|fewtiles/one_tile/auto/it|gpumode/s1/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default ppad; do
    timeout 60 gp/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done
echo "names: $(grep median $L/bench_default_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"
grep -h "label\|auto/it" $L/bench_ppad_1.txt | grep median | head -3

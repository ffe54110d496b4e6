#!/bin/bash
# Device run 116 (2026-12-01, session 17): _fwlate (the fused pre-pass kernels' weight producer
# loads only after its CTA's conversion share is fenced: run 115 saw one conversion job's loads
# take up to 2.8 us behind every CTA's first weight stages). Its fused tests and racecheck, then
# ROUNDS rounds alternating the default and _fwlate.
# Usage (repo root; carry gpu_f.tar.xz = tools/ab_bundle.sh gpu_f _fwlate):
#   bash benchmarks/results/2026-12-01_run116_fwlate/run116.sh
mkdir -p gf && tar xJf gpu_f.tar.xz -C gf
export LD_LIBRARY_PATH=$(pwd)/gf
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=gf/tests/sm90_nvfp4_grouped_gemm_fwlate_test
s0=$(date +%s)
timeout 100 $T --gtest_filter='*Fused*:*GpuModeShapes*:*NoKernelUsesLocalMemory*:*PlansLaunchBehind*' > $L/t_fwlate.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_fwlate.txt
echo "fwlate test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_fwlate.txt | tr '\n' ' ') $(tail -1 $L/t_fwlate.txt)"
pack
s0=$(date +%s)
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $T \
  --gtest_filter='*FusedPrepassMatchesReference*' > $L/san_racecheck.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/san_racecheck.txt
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|^\[  PASSED|^\[  FAILED' $L/san_racecheck.txt | tr '\n' ' ') $(tail -1 $L/san_racecheck.txt)"
pack
F='gpumode/s3/auto/it|fewtiles/decode8/auto/it|gpumode/s[12]/auto/(it|fused/it)'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default fwlate; do
    timeout 60 gf/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done
echo "names: $(grep median $L/bench_default_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"

#!/bin/bash
# Device run 79 (2026-12-01, session 10): the token ring sized by tile width (commit below, bundle
# gpu_r79) against run 76's binary (gpu_r76) in one lease: every GPU test of the new binary,
# racecheck of two short ones, then the GPU MODE shapes (kAuto) and the steady 64/128-token main
# loop, alternating old/new, two rounds.
# Usage (repo root; carry gpu_r76.tar.xz and gpu_r79.tar.xz):
#   bash benchmarks/results/2026-12-01_run79_token_ring/run79.sh
mkdir -p gb && tar xJf gpu_r76.tar.xz -C gb && tar xJf gpu_r79.tar.xz -C gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
export LD_LIBRARY_PATH=$(pwd)/gb/gpu_r79
timeout 200 gb/gpu_r79/tests/sm90_nvfp4_grouped_gemm_test > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
tail -n 3 $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "FAILED|Failure" $L/t_sm90_nvfp4_grouped_gemm_test.txt | head -10
timeout 90 compute-sanitizer --tool racecheck gb/gpu_r79/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*SubnormalTokenValues*:*DynamicM*' > $L/racecheck.txt 2>&1
echo "rc=$?" >> $L/racecheck.txt
tail -n 3 $L/racecheck.txt
for round in 1 2; do
  for b in gpu_r76 gpu_r79; do
    LD_LIBRARY_PATH=$(pwd)/gb/$b timeout 100 gb/$b/bin/sm90_nvfp4_grouped_gemm \
      --benchmark_filter='gpumode/s./auto/it|steady/w(64|128|256)/k8192/gemm_only' \
      > $L/bench_${b}_$round.txt 2>&1
    grep median $L/bench_${b}_$round.txt | awk -v b=$b -v r=$round '{print r, b, $1, $2, $3}'
  done
done
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

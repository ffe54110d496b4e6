#!/bin/bash
# Device run 180 (session 26): the early pre-pass held by one thread of its last block (the other
# blocks free their SMs for the next GEMM's CTAs) against the default calls: the early test,
# memcheck of it, then the kernel benchmark (3 alternated rounds, as run 178).
# Usage (repo root; carry gpu_s180.tar.xz = gpu_r180/: kernel test and benchmark, libbenchmark):
#   bash benchmarks/results/2026-12-02_run180_early_one_waiter/run180.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s180.tar.xz -C gb
B=gb/gpu_r180
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs180
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs180.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for r in 1 2 3; do
  timeout 100 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='(gpumode/s.|fewtiles/(decode8|one_tile))/auto/(early|iter)' \
    > $L/bench_$r.txt 2>&1
  echo "bench $r rc=$?"
  grep -E "_median" $L/bench_$r.txt | awk '{print $1, $2, $3}'
  pack
done
timeout 120 $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter='*EarlyPrepass*:*PrepassPlansBackToBack*' > $L/t_early.txt 2>&1
echo "early test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_early.txt | tr '\n' ' ')"
pack
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*EarlyPrepass*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck kernel rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_kernel.txt | tr '\n' ' ')"
pack

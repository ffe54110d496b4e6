#!/bin/bash
# Device run 110a (2026-12-01, session 17): every test binary of HEAD (b5aa92c), the GPU ones
# first, and compute-sanitizer memcheck + racecheck on the fused pre-pass's reference test.
# Usage (repo root; carry gpu_r110.tar.xz = tools/gpu_bundle.sh gpu_r110, stripped, tar cJf):
#   bash benchmarks/results/2026-12-01_run110_verify/run110a.sh
mkdir -p gb && tar xJf gpu_r110.tar.xz -C gb
B=gb/gpu_r110
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
for n in sm90_nvfp4_grouped_gemm_test sm90_nvfp4_grouped_gemm_weights_normal_test; do
  s0=$(date +%s)
  timeout 200 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_$n.txt
  echo "$n: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_$n.txt | tr '\n' ' ') $(tail -1 $L/t_$n.txt)"
  pack
done
for tool in memcheck racecheck; do
  s0=$(date +%s)
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter='*FusedPrepassMatchesReference*' > $L/san_$tool.txt 2>&1
  echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/san_$tool.txt
  echo "$tool: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/san_$tool.txt | tr '\n' ' ') $(tail -1 $L/san_$tool.txt)"
  pack
done
for t in $B/tests/*; do
  n=$(basename $t)
  case $n in sm90_nvfp4_grouped_gemm_test|sm90_nvfp4_grouped_gemm_weights_normal_test) continue;; esac
  timeout 60 $t > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
  echo "$n: $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' $L/t_$n.txt | head -3 | tr '\n' ' ') $(tail -1 $L/t_$n.txt)"
done
pack

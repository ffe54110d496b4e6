#!/bin/bash
# Device run 154a (session 22): the tree with the streamed simple kernel chosen by
# RunnerOptions::stream_tile_rows (f83e9f7): every GPU test binary, then the kernel test's
# streamed-kernel test under compute-sanitizer memcheck and racecheck (and the dynamic-M and
# group-boundary tests, whose small problems now run it too).
# Usage (repo root; carry gpu_s154.tar.xz = tools/gpu_bundle.sh gpu_r154, stripped):
#   bash benchmarks/results/2026-12-01_run154_streamed_default/run154a.sh
mkdir -p gb && tar xJf gpu_s154.tar.xz -C gb
B=gb/gpu_r154
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs154a
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs_a.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
for n in sm90_nvfp4_grouped_gemm_test sm90_nvfp4_grouped_gemm_weights_normal_test executor_test sm90_runner_host_test sequence_test batch_test backend_test device_test device_problem_test; do
  s0=$(date +%s)
  timeout 200 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_$n.txt
  echo "$n: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_$n.txt | tr '\n' ' ') $(tail -1 $L/t_$n.txt)"
  pack
done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter='*StreamedSimpleKernel*:*DynamicMComputesOnlyValidRows*' > $L/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_$tool.txt | tr '\n' ' ')"
  pack
done

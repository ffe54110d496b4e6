#!/bin/bash
# Device run 191 (session 28): the manual build _mapprefetch (ENCORE_SM90_PREFETCH_MAPS=1: warp 1 of
# every CTA requests every group's tensor-map descriptors before its wait for the previous grid)
# against the default build: the build's kernel tests on the paths the change touches, then 3
# alternated rounds of the kernel benchmark on the GPU MODE shapes and the few-tile shapes.
# Build here: tools/ab_bundle.sh gpu_ab191 _mapprefetch (-> gpu_ab191.tar.xz)
# Usage (repo root; carry gpu_ab191.tar.xz): bash benchmarks/results/2026-12-02_run191_mapprefetch/run191.sh
mkdir -p gb && tar xJf gpu_ab191.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=/tmp/encore_logs
mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 240 gb/tests/sm90_nvfp4_grouped_gemm_mapprefetch_test \
  --gtest_filter='*GpuModeShapes*:*SixtyFour*:*Bound*:*Fused*:*Streamed*:*NoKernelUsesLocalMemory*:*PrepassPlansBackToBack*:*StreamKSplits*:*DynamicM*' \
  > $L/t_mapprefetch.txt 2>&1
echo "mapprefetch test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_mapprefetch.txt | tr '\n' ' ')"
LOGS=$L TESTS=0 FILTER='gpumode/s./auto/it|fewtiles/(decode8|tiny|one_tile)/auto/it' ROUNDS=3 \
  bash benchmarks/results/ab.sh gb

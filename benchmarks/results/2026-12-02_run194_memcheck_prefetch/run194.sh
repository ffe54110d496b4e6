#!/bin/bash
# Device run 194 (session 28): compute-sanitizer memcheck of the default kernels with the
# descriptor prefetch (ENCORE_SM90_PREFETCH_MAPS = 1, every group's maps requested before the
# wait, M = 0 groups included) on the kernel tests that cover 64 groups, bound plans, dynamic M
# and outputs beside other groups' buffers.
# Usage (repo root; carry gpu_s192.tar.xz, run 192's bundle: kernels as 53abf9b = HEAD's):
#   bash benchmarks/results/2026-12-02_run194_memcheck_prefetch/run194.sh
[ -d gb/gpu_r192 ] || { mkdir -p gb && tar xJf gpu_s192.tar.xz -C gb; }
B=gb/gpu_r192
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 230 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*SixtyFour*:*BoundPlansServe*:*OutputsStayInside*:*DynamicM*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED|FAILED  \]' $L/memcheck_kernel.txt | tr '\n' ' ')"

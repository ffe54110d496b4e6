#!/bin/bash
# Device run 87 (2026-12-01, session 12): the rolled epilogue (chunk loop not unrolled) against
# the kernels before it (run 86's b_default = 2f2c623), in one lease:
#  1. the new build's whole kernel test;
#  2. 2 alternating rounds of the GPU MODE shapes, the steady family and the few-tile shapes;
#  3. the new stamps build (per-piece start / loop / tail and per-CTA end) on shapes 0 and 1;
#  4. cuobjdump of the new simple kernel's epilogue (that the chunk loop is one copy).
# Usage (repo root; carry gpu_e87.tar.xz from tools/ab_bundle.sh gpu_e87 _exp_stamps, and gpu_s12a.tar.xz):
#   bash benchmarks/results/2026-12-01_run87_rolled_epilogue/run87.sh
mkdir -p gb go && tar xJf gpu_e87.tar.xz -C gb && tar xJf gpu_s12a.tar.xz -C go ./b_default
cp go/b_default gb/b_old && mv gb/b_exp_stamps gb/s_stamps
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 240 gb/tests/sm90_nvfp4_grouped_gemm_test > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "PASSED|FAILED|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt | tail -6
FILTER='gpumode/s./auto/it|steady/w(64|128|256)/k8192/gemm_only|fewtiles/.*/auto' ROUNDS=2 TESTS=0 \
  bash benchmarks/results/ab.sh gb
gb/s_stamps --benchmark_filter='gpumode/s[01]/auto/it' > $L/stamps_s01.txt 2>&1; echo "stamps rc=$?"
cuobjdump -sass gb/b_default > /tmp/new.sass 2>/dev/null
grep -n "STSM\|Function" /tmp/new.sass | head -40 > $L/sass_stsm_lines.txt
wc -l /tmp/new.sass >> $L/sass_stsm_lines.txt
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

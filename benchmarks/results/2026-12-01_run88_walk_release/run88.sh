#!/bin/bash
# Device run 88 (2026-12-01, session 12): rolled epilogue v2 (packing as volatile asm, so it stays
# in its chunk), the stream-K walk without binary searches, and release/acquire atomics instead of
# fence.sc in StreamKReduce (b_default), against run 87's rolled epilogue v1 (b_e87) and
# 2f2c623 (b_old), in one lease: the new kernel test, 2 alternating rounds, the new stamps build.
# Usage (repo root; carry gpu_e88.tar.xz (tools/ab_bundle.sh gpu_e88 _exp_stamps), gpu_e87.tar.xz,
# gpu_s12a.tar.xz): bash benchmarks/results/2026-12-01_run88_walk_release/run88.sh
mkdir -p gb go ge && tar xJf gpu_e88.tar.xz -C gb && tar xJf gpu_s12a.tar.xz -C go ./b_default \
  && tar xJf gpu_e87.tar.xz -C ge ./b_default
cp go/b_default gb/b_old && cp ge/b_default gb/b_e87 && mv gb/b_exp_stamps gb/s_stamps
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 240 gb/tests/sm90_nvfp4_grouped_gemm_test > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "PASSED|FAILED|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt | tail -6
FILTER='gpumode/s./auto/it|fewtiles/(one_tile|tiny|decode8)/auto/it' ROUNDS=2 TESTS=0 \
  bash benchmarks/results/ab.sh gb
gb/s_stamps --benchmark_filter='gpumode/s[01]/auto/it' > $L/stamps_s01.txt 2>&1; echo "stamps rc=$?"
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

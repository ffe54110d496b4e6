#!/bin/bash
# Device run 139: the kernel test's resource check (NoKernelUsesLocalMemory, now also the token
# pre-pass's static shared memory and registers) and a dynamic-M case in every build with a
# different pre-pass kernel: the default (staged), _exp_stamps, _pgrid (grid stride), _shuffle,
# _ready.
# Usage (repo root; carry gpu_t139.tar.xz: those five kernel test binaries, stripped):
#   bash benchmarks/results/2026-12-01_run139_prepass_resources/run139.sh
mkdir -p gt && tar xJf gpu_t139.tar.xz -C gt
L=${OUT:-/tmp/out}/logs
mkdir -p $L
for t in gt/*_test; do
  n=$(basename $t)
  timeout 60 $t --gtest_filter='*NoKernelUsesLocalMemory*:*DynamicMComputesOnlyValidRows*' > $L/$n.txt 2>&1
  echo "$n rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|Failure' $L/$n.txt | tr '\n' ' ')"
done
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

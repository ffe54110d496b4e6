#!/bin/bash
# Device run 163 (session 23): every test binary at the session's final code, from
# tools/gpu_bundle.sh (-c opt, copied from the opt output path), stripped and packed as
# gpu_s163.tar.xz. Usage (repo root; carry gpu_s163.tar.xz):
#   bash benchmarks/results/2026-12-01_run163_final_tests/run163.sh
mkdir -p gb && tar xJf gpu_s163.tar.xz -C gb
B=gb/gpu_r163
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs163
mkdir -p $L
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 150 $t > $L/t_$n.txt 2>&1
  rc=$?
  echo "$n rc=$rc $(( $(date +%s) - s0 ))s $(grep -E '^\[  PASSED|^\[  FAILED|tests?, listed below' $L/t_$n.txt | tr '\n' ' ')"
done
tar cJf ${OUT:-/tmp/out}/logs.tar.xz -C $L .

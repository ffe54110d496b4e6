#!/bin/bash
# Run 214 (session 32): every GPU test binary at 8993446 (overlap validation, whole-batch checks).
# Here: tools/gpu_bundle.sh gpu_s32a at 8993446 (gpu_s32a.tar.xz: the GPU test binaries). There:
#   bash benchmarks/results/2026-12-02_run214_s32_tests/run214.sh
[ -d gb/gpu_s32a ] || { mkdir -p gb && tar xJf gpu_s32a.tar.xz -C gb; }
B=gb/gpu_s32a
L=/tmp/logs214
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs214.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 300 $t > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack

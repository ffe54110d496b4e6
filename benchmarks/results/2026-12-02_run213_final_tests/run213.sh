#!/bin/bash
# Run 213 (session 31): every GPU test binary at the session's last code (1e7f3db).
# Here: tools/gpu_bundle.sh gpu_s31g at 1e7f3db (gpu_s31g.tar.xz: the GPU test binaries). There:
#   bash benchmarks/results/2026-12-02_run213_final_tests/run213.sh
[ -d gb/gpu_s31g ] || { mkdir -p gb && tar xJf gpu_s31g.tar.xz -C gb; }
B=gb/gpu_s31g
L=/tmp/logs213
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs213.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 300 $t > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack

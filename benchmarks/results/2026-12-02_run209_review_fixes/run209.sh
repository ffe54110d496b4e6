#!/bin/bash
# Run 209 (session 31): the GPU test binaries at 25df3cb (the review's fixes: workspaces the device
# cannot hold, allocations beside a global-mode capture, the graph cache's backoff / bound-exec /
# batch-validation / byte-estimate fixes), then the two new GPU tests under compute-sanitizer
# memcheck.
# Here: tools/gpu_bundle.sh gpu_s31d at 25df3cb (gpu_s31d.tar.xz: the GPU test binaries). There:
#   bash benchmarks/results/2026-12-02_run209_review_fixes/run209.sh
[ -d gb/gpu_s31d ] || { mkdir -p gb && tar xJf gpu_s31d.tar.xz -C gb; }
B=gb/gpu_s31d
L=/tmp/logs209
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs209.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 300 $t > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -30
pack
f='*WorkspaceTheDeviceCannotHold*:*FirstPlanBesideAGlobalCapture*'
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter="$f" > $L/memcheck_new.txt 2>&1
echo "memcheck rc=$?"; tail -4 $L/memcheck_new.txt
pack

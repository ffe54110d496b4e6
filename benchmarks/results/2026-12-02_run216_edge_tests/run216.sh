#!/bin/bash
# Run 216 (session 32): the kernel tests at 5068058 (the new edge tests: StreamKSplitsAtTheEdges,
# TokenTileEdgesAndAllGroupsEmpty), first the new ones alone, then both kernel test binaries whole.
# Here: tools/gpu_bundle.sh gpu_s32c at 5068058. There:
#   bash benchmarks/results/2026-12-02_run216_edge_tests/run216.sh
[ -d gb/gpu_s32c ] || { mkdir -p gb && tar xJf gpu_s32c.tar.xz -C gb; }
B=gb/gpu_s32c
L=/tmp/logs216
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs216.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
timeout 120 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*StreamKSplitsAtTheEdges*:*TokenTileEdgesAndAllGroupsEmpty*' > $L/new_tests.txt 2>&1
echo "new tests rc=$? $(grep -E '^\[  (PASSED|FAILED) |^\[       OK|Failure' $L/new_tests.txt | tr '\n' ' ')"
grep -A8 'Failure' $L/new_tests.txt | head -40
pack
for n in sm90_nvfp4_grouped_gemm_test sm90_nvfp4_grouped_gemm_weights_normal_test; do
  s0=$(date +%s)
  timeout 240 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED) ' $L/$n.txt | tr '\n' ' ')"
  pack
done

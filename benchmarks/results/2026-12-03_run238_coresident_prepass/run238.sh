#!/bin/bash
# Run 238 (session 37): the manual build _coreside (ENCORE_SM90_CORESIDENT_PREPASS = 1: GEMMs
# launch with 160 registers a thread and trigger right after their wait; early pre-passes run
# sm_count grid-stride blocks of 128 threads <= 32 registers, one beside every GEMM CTA): its whole
# kernel-test binary, then 3 alternated rounds default / _coreside of the calls as multi-call
# graphs prepare them (early) and the default calls.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_coreside
#   //tests/gemm:sm90_nvfp4_grouped_gemm_coreside_test, copied with the default benchmark of
#   gpu_s34 (530185e; the default kernels are byte for byte the same) into gpu_cs/, packed as
#   gpu_cs.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-03_run238_coresident_prepass/run238.sh
[ -d gb/gpu_cs ] || { mkdir -p gb && tar xJf gpu_cs.tar.xz -C gb; }
B=gb/gpu_cs
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs238
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
timeout 200 $B/sm90_nvfp4_grouped_gemm_coreside_test > $L/test_coreside.txt 2>&1
echo "coreside test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_coreside.txt | tr '\n' ' ')"
grep -E '^\[  FAILED' $L/test_coreside.txt | head
F='gpumode/s[0-3]/auto/(iter|early/)|fewtiles/(one_tile|decode8)/auto/early/|decode/n7168_k2048/m64/iter|steady/w128/k8192/gemm_only/'
for r in 1 2 3; do
  for v in "" _coreside; do
    timeout 100 $B/sm90_nvfp4_grouped_gemm$v --benchmark_filter="$F" --benchmark_repetitions=10 \
      --benchmark_report_aggregates_only=true > $L/bench${v:-_default}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs238.tar.xz -C $L .

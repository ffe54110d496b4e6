#!/bin/bash
# Run 239 (session 37): the pre-pass-token kernels' register split (ENCORE_SM90_PREPASS_REGS_SPLIT):
# _r56 (producer warpgroup 56, consumers 224) and _r40 (40 / 232) against the default (80 / 208):
# the _r56 kernel-test binary, then 3 alternated rounds.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_r56
#   //tests/gemm:sm90_nvfp4_grouped_gemm_r56_test //benchmarks:sm90_nvfp4_grouped_gemm_r40, copied
#   with the default benchmark of gpu_s34 (530185e; the default kernels are byte for byte the
#   same) into gpu_rs/, packed as gpu_rs.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-03_run239_register_split/run239.sh
[ -d gb/gpu_rs ] || { mkdir -p gb && tar xJf gpu_rs.tar.xz -C gb; }
B=gb/gpu_rs
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs239
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
timeout 200 $B/sm90_nvfp4_grouped_gemm_r56_test > $L/test_r56.txt 2>&1
echo "r56 test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_r56.txt | tr '\n' ' ')"
F='gpumode/s[0-3]/auto/iter|decode/n7168_k2048/m(64|96)/iter|moe/e64_s4096/n4096_k7168/iter|steady/w(64|128|256)/k8192/gemm_only/'
for r in 1 2 3; do
  for v in "" _r56 _r40; do
    timeout 100 $B/sm90_nvfp4_grouped_gemm$v --benchmark_filter="$F" --benchmark_repetitions=10 \
      --benchmark_report_aggregates_only=true > $L/bench${v:-_default}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs239.tar.xz -C $L .

#!/bin/bash
# Device run 106 (2026-12-01, session 16): run 105's fused pre-pass with warp 2 minding the grid
# barrier (37d0067). Every test binary (stop if the kernel test fails), memcheck of the fused
# tests, then ROUNDS rounds of the kernel benchmark: kAuto (auto/it), never fused (auto/unfused),
# always fused (auto/fused).
# Usage (repo root; carry gpu_r106.tar.xz = tools/gpu_bundle.sh gpu_r106, stripped, tar cJf):
#   bash benchmarks/results/2026-12-01_run106_fused_guard2/run106.sh
mkdir -p gb && tar xJf gpu_r106.tar.xz -C gb
B=gb/gpu_r106
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_test
s0=$(date +%s)
timeout 220 $T > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -q "rc=0" $L/t_sm90_nvfp4_grouped_gemm_test.txt || { pack; exit 1; }
pack
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*FusedPrepassProgressesWithoutCoResidency*' > $L/san_memcheck.txt 2>&1
echo "rc=$?" >> $L/san_memcheck.txt; tail -2 $L/san_memcheck.txt
F='gpumode/s./auto/(it|unfused/it|fused/it)|fewtiles/(decode8|one_tile|tiny)/auto/(it|unfused/it)'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 100 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" > $L/bench_$round.txt 2>&1
  echo "== round $round: $(grep median $L/bench_$round.txt | awk '{printf "%s ", $2}')"
  pack
done
grep median $L/bench_1.txt | awk '{print $1}' | sed 's/iterations:1.repeats:[0-9]*.manual_time_median//' | tr '\n' ' '; echo
for t in $B/tests/*; do
  n=$(basename $t)
  case $n in sm90_nvfp4_grouped_gemm_test) continue;; esac
  timeout 170 $t > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
done
grep -H -E "FAILED|rc=" $L/t_*.txt | grep -v "rc=0"; echo "binaries passing: $(grep -l 'rc=0' $L/t_*.txt | wc -l) of $(ls $L/t_*.txt | wc -l)"
pack

#!/bin/bash
# Device run 99 (2026-12-01, session 14): the per-warp epilogue copy-out (_wepi) against the
# default, with the consumer-pipe variants _parts2 and _nopipe re-measured on today's kernels.
# _wepi's kernel test first (stop if it fails), racecheck + memcheck of two of its tests, then
# ROUNDS rounds of the kernel benchmark (builds alternated), then torch bf16.
# Usage (repo root; carry gpu_y.tar.xz = tools/ab_bundle.sh gpu_y _wepi _parts2 _nopipe):
#   bash benchmarks/results/2026-12-01_run99_warp_epilogue/run99.sh
mkdir -p gb && tar xJf gpu_y.tar.xz -C gb
B=$(pwd)/gb
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_wepi_test
s0=$(date +%s)
timeout 200 $T > $L/t_wepi.txt 2>&1; echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_wepi.txt
grep -E "^\[  (PASSED|FAILED)|rc=" $L/t_wepi.txt
grep -q "rc=0" $L/t_wepi.txt || { pack; exit 1; }
for tool in racecheck memcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $T \
    --gtest_filter='*PackedPersistentSchedule*:*DynamicMComputesOnlyValidRows*' > $L/san_$tool.txt 2>&1
  echo "rc=$?" >> $L/san_$tool.txt; tail -2 $L/san_$tool.txt
done
pack
F='gpumode/s./auto/it|fewtiles/(one_tile|decode8|tiny)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for b in $B/b_*; do
    v=${b##*/b_}
    timeout 100 $b --benchmark_filter="$F" > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done
timeout 120 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
echo "rc=$?" >> $L/torch.txt; tail -6 $L/torch.txt
pack

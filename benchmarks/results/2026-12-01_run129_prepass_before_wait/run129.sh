#!/bin/bash
# Device run 129 (2026-12-01, session 19): the experimental RunnerOptions::prepass_before_wait
# (pre-passes that convert before their griddepcontrol.wait, calls alternating between two
# runners: gpumode/<shape>/auto/spec) against the same alternation without it (.../pair) and the
# default single runner (.../it), in one binary; the default kernel test (the weight producer now
# waits before it triggers); the stamped time lines of shapes 0-1 (NOTES session 18, step 3) for
# the default and spec; and the placement families of shape 0 (inst<I>, inshift<MB>; step 2).
# Usage (repo root; carry gpu_a129.tar.xz = tools/ab_bundle.sh gpu_a129 _exp_stamps):
#   bash benchmarks/results/2026-12-01_run129_prepass_before_wait/run129.sh
mkdir -p ga && tar xJf gpu_a129.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=ga/tests/sm90_nvfp4_grouped_gemm_test
s0=$(date +%s)
timeout 200 $T > $L/t_default.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_default.txt
echo "default test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_default.txt | tr '\n' ' ') $(tail -1 $L/t_default.txt)"
grep -E "FAILED|Failure" $L/t_default.txt | head -5
pack
F='gpumode/s./auto/(it|pair/|spec/)'
for round in 1 2 3; do
  timeout 100 ga/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_spec_$round.json \
    --benchmark_out_format=json > $L/bench_spec_$round.txt 2>&1
  echo "== spec $round: $(grep median $L/bench_spec_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g; s/gpumode.//g')"
  pack
done
timeout 60 ga/b_exp_stamps --benchmark_filter='gpumode/s[01]/auto/(it|spec/)' --benchmark_repetitions=3 > $L/stamps.txt 2>&1
echo "stamps rc=$? lines=$(wc -l < $L/stamps.txt)"
pack
for round in 1 2; do
  timeout 100 ga/b_default --benchmark_filter='gpumode/s0/auto/(it|inst[1-4]/|inshift[0-9]+/)' \
    --benchmark_out=$L/bench_place_$round.json --benchmark_out_format=json > $L/bench_place_$round.txt 2>&1
  echo "== place $round: $(grep median $L/bench_place_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g; s/gpumode.//g')"
  pack
done

#!/bin/bash
# Device run 124 (2026-12-01, session 18): _epihand (ENCORE_SM90_EPILOGUE_HANDOFF: the persistent
# kernel's consumers stage each 32-token chunk into a ring of 4 buffers and go on; warps 2-3 copy
# the chunks to C). Its whole kernel test, racecheck on the pre-pass plans test, then ROUNDS
# rounds alternating the default and _epihand, and torch bf16 (for gpumode_shapes.json if adopted).
# Usage (repo root; carry gpu_a124.tar.xz = tools/ab_bundle.sh gpu_a124 _epihand + the torch script):
#   bash benchmarks/results/2026-12-01_run124_epilogue_handoff/run124.sh
mkdir -p ga && tar xJf gpu_a124.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=ga/tests/sm90_nvfp4_grouped_gemm_epihand_test
s0=$(date +%s)
timeout 200 $T > $L/t_epihand.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_epihand.txt
echo "epihand test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_epihand.txt | tr '\n' ' ') $(tail -1 $L/t_epihand.txt)"
pack
s0=$(date +%s)
timeout 120 compute-sanitizer --tool racecheck $T --gtest_filter='*PrepassPlansBackToBack*' > $L/racecheck_epihand.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/racecheck_epihand.txt
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED|hazard' $L/racecheck_epihand.txt | head -4 | tr '\n' ' ') $(tail -1 $L/racecheck_epihand.txt)"
pack
F='gpumode/s./auto/it|fewtiles/(one_tile|decode8)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default epihand; do
    timeout 60 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  done
  pack
done
timeout 60 python3 ga/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -4 $L/torch.txt
pack

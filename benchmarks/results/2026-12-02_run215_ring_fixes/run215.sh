#!/bin/bash
# Run 215 (session 32): the review fixes of the binding ring and stream-K at 5c58ded.
# Here: tools/gpu_bundle.sh gpu_s32b at that commit, repacked as gpu_r215.tar.xz (one archive: the
# device tool refused three) with old/ = run 214's kernel benchmark and replay (8993446, the
# kernels as before) and mutant/ = the kernel test built without Unwrite's invalidation of the
# staged slot (its new test must fail there). There:
#   bash benchmarks/results/2026-12-02_run215_ring_fixes/run215.sh
[ -d gb/gpu_r215 ] || { mkdir -p gb && tar xJf gpu_r215.tar.xz -C gb; }
A=gb/gpu_r215/old
B=gb/gpu_r215
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs215
mkdir -p $L/bench $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs215.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
# 1. Every GPU test binary at the new commit.
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s)
  timeout 300 $t > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
# 2. The mutant: FailedBoundLaunchDropsItsPrefetchedSlot must fail there.
timeout 120 $B/mutant/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*FailedBoundLaunchDropsItsPrefetchedSlot*' > $L/mutant.txt 2>&1
echo "mutant rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/mutant.txt | tr '\n' ' ')"
pack
# 3. The kernels, old (a: 8993446) and new (b), 3 rounds alternated.
F='gpumode/s./auto/it|fewtiles/.*/auto'
for r in 1 2 3; do
  for v in a b; do
    d=$A; [ $v = b ] && d=$B/bin
    timeout 150 $d/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
      --benchmark_out=$L/bench/${v}_$r.json --benchmark_out_format=json > $L/bench/${v}_$r.txt 2>&1
    echo "== $v round $r: $(grep median $L/bench/${v}_$r.txt | awk '{printf "%s %s | ", $1, $2}')"
  done
  pack
done
# 4. Replay, old and new alternated, 2 processes each (bound rebind's device time: the prefetch's
# second round trip).
for r in 1 2; do
  for v in a b; do
    d=$A; [ $v = b ] && d=$B/bin
    timeout 60 taskset -c 5 $d/replay --encore_json=$L/replay/${v}_$r.json > $L/replay/${v}_$r.txt 2>&1
    echo "$v $r rc=$? $(grep -E "^graph_per_call |^graph_rebind_bound " $L/replay/${v}_$r.txt | awk '{printf "%s h %s dev %s e2e %s tiny_e2e %s | ", $1, $2, $3, $4, $6}')"
  done
done
pack

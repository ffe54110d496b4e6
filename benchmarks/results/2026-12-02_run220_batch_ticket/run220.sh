#!/bin/bash
# Run 220 (session 33): GemmBatch's ticket (48249bf: a batch equal to its last flush compares in
# Add and replays without the executor's second compare). The graph_cache GPU tests at 48249bf,
# then the main job A/B: replay at d6c6d8c (`replay_old`, run 219's bundle gpu_s32e) and at
# 48249bf alternated, 6 processes each, pinned to one core. Then Nsight Compute's warp-state
# statistics of the narrow main loop (steady/w64 and w128, GEMM alone; session 32's next step).
# Here: tools/gpu_bundle.sh gpu_s33a at 48249bf, plus gpu_s32e/bin/replay as bin/replay_old in
# the same archive. There:
#   bash benchmarks/results/2026-12-02_run220_batch_ticket/run220.sh
[ -d gb/gpu_s33a ] || { mkdir -p gb && tar xJf gpu_s33a.tar.xz -C gb; }
B=gb/gpu_s33a
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs220
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs220.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version; } > $L/env.txt 2>&1
for n in executor_test sequence_test backend_test device_test device_problem_test; do
  s0=$(date +%s)
  timeout 120 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
grep -h -A5 'Failure' $L/*.txt | head -20
pack
for i in 1 2 3 4 5 6; do
  for v in old new; do
    exe=$B/bin/replay; [ $v = old ] && exe=$B/bin/replay_old
    c=48249bf; [ $v = old ] && c=d6c6d8c
    timeout 60 taskset -c 5 $exe --encore_json=$L/replay/${v}_$i.json --encore_commit=$c \
      > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_batch |^graph_batch_prebuilt |^sequence_step |^graph_per_call " $L/replay/${v}_$i.txt | awk '{printf "%s h %s | ", $1, $2}')"
  done
  pack
done
for w in 64 128; do
  timeout 150 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemm --launch-skip 10 \
    --launch-count 1 --section WarpStateStats --section SchedulerStats --section SourceCounters \
    --section SpeedOfLight $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter="^steady/w$w/k8192/gemm_only" > $L/ncu_w$w.txt 2>&1
  echo "w$w rc=$?"
  grep -E "Stall|Warp Cycles|Issued Warp|Eligible|Active Warps|No Eligible|Duration" $L/ncu_w$w.txt | head -24
  pack
done

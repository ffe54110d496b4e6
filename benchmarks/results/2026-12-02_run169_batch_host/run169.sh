#!/bin/bash
# Device run 169 (session 25): the graph cache's GPU tests after the batch/sequence host changes
# (c76d93d), the bound kernel tests (LaunchWithBindings and the review commits after run 168),
# then //benchmarks:replay: 12 processes of the new binary (c76d93d) alternated with 12 of the
# old one (112d9ed), each pinned to one core.
# Usage (repo root; carry gpu_s169.tar.xz = gpu_r169/: replay, replay_old, 5 test binaries, libbenchmark):
#   bash benchmarks/results/2026-12-02_run169_batch_host/run169.sh c76d93d 112d9ed
NEW=${1:-new}; OLD=${2:-old}
mkdir -p gb && tar xJf gpu_s169.tar.xz -C gb
B=gb/gpu_r169
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs169
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs169.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test backend_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
timeout 150 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*Bound*:*LaunchPlanAsGraphNodeAndPdl*:*PlansLaunchBehind*:*InvalidArguments*' \
  > $L/t_kernel_bound.txt 2>&1
echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel_bound.txt | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/sequence_test \
  > $L/memcheck_sequence.txt 2>&1
echo "memcheck sequence rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_sequence.txt | tr '\n' ' ')"
pack
for i in $(seq 1 12); do
  for v in old new; do
    bin=$B/bin/replay; c=$NEW
    [ $v = old ] && bin=$B/bin/replay_old && c=$OLD
    timeout 60 taskset -c 5 $bin --encore_json=$L/replay/${v}_$i.json --encore_commit=$c \
      > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_per_call |^graph_batch |^graph_batch_prebuilt |^sequence_step " $L/replay/${v}_$i.txt | awk '{printf "%s h %s fl %s | ", $1, $2, $7}')"
  done
  pack
done

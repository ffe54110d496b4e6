#!/bin/bash
# Device run 181 (session 26): the final code: the kernel benchmark's GPU MODE shapes by default
# and as multi-call graphs prepare them (30 repetitions, with --benchmark_out for
# gpumode_json.py), torch._grouped_mm bf16 in the same lease, the graph cache's executor and
# sequence tests, then 8 processes of //benchmarks:replay pinned to one core.
# Usage (repo root; carry gpu_s181.tar.xz = gpu_r181/: kernel benchmark of run 180 (kernels
# unchanged since 1a0b9b5), replay, executor/sequence tests, torch_grouped_mm.py, libbenchmark):
#   bash benchmarks/results/2026-12-02_run181_final/run181.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s181.tar.xz -C gb
B=gb/gpu_r181
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs181
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs181.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 120 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s./auto/(early|it)' \
  --benchmark_out=$L/bench.json --benchmark_out_format=json > $L/bench.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack
timeout 90 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
echo "torch rc=$?"; tail -4 $L/torch.txt
pack
for n in executor_test sequence_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in $(seq 1 8); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^graph_batch_prebuilt |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s fl %s | ", $1, $2, $3, $7}')"
  [ $((i % 4)) = 0 ] && pack
done
pack

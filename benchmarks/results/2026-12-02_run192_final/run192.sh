#!/bin/bash
# Device run 192 (session 28): the session's final code. Phase "tests": every test binary but the
# weights-normal kernel test (~260 s; its kernels differ from the default only by the weight
# fragments' scaling, and the descriptor prefetch adopted this session changes no result), then
# the kernel benchmark's GPU MODE shapes by default and as multi-call graphs prepare them (30
# repetitions, --benchmark_out for gpumode_json.py) and torch._grouped_mm bf16 in the same lease.
# Phase "replay": 16 processes of //benchmarks:replay pinned to one core (with the harness floor).
# Build here: tools/gpu_bundle.sh gpu_r192 (weights-normal test dropped), tar cJf gpu_s192.tar.xz gpu_r192
# Usage (repo root; carry gpu_s192.tar.xz):
#   bash benchmarks/results/2026-12-02_run192_final/run192.sh tests
#   bash benchmarks/results/2026-12-02_run192_final/run192.sh replay <commit>
P=${1:-tests}
C=${2:-unknown}
[ -d gb/gpu_r192 ] || { mkdir -p gb && tar xJf gpu_s192.tar.xz -C gb; }
B=gb/gpu_r192
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs192_$P
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs192_$P.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
if [ "$P" = tests ]; then
  for t in $B/tests/*; do
    n=$(basename $t)
    timeout 330 $t > $L/t_$n.txt 2>&1
    echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
  done
  pack
  timeout 120 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s./auto/(early|it)' \
    --benchmark_out=$L/bench.json --benchmark_out_format=json > $L/bench.txt 2>&1
  echo "bench rc=$?"
  grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
  pack
  timeout 90 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
  echo "torch rc=$?"; tail -4 $L/torch.txt
else
  for i in $(seq 1 16); do
    timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
      > $L/replay/new_$i.txt 2>&1
    echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch " $L/replay/new_$i.txt | awk '{printf "%s h %s fl %s hf %s | ", $1, $2, $7, $8}')"
    [ $((i % 4)) = 0 ] && pack
  done
fi
pack

#!/bin/bash
# Device run 70 (2026-11-30, session 9): the session's final tree (kernels as in run 69; the host
# packing rewritten): the packed-schedule and local-memory GPU tests, the host tests of the
# packing, the kernel benchmark (two passes), torch bf16, 4 processes of the main job.
# Usage (repo root; carry gpu_r70.tar.xz from tools/gpu_bundle.sh gpu_r70 + strip + tar):
#   bash benchmarks/results/2026-11-30_run70_final/run70.sh COMMIT
mkdir -p gb && tar xJf gpu_r70.tar.xz -C gb
B=gb/gpu_r70
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
timeout 120 $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter='*Packed*:*LocalMemory*' \
  > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1; echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
for t in sm90_runner_host_test heuristics_test; do
  timeout 60 $B/tests/$t > $L/t_$t.txt 2>&1; echo "rc=$?" >> $L/t_$t.txt
done
tail -n 3 $L/t_*.txt
for pass in 1 2; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='gpumode/s./auto/(it|unpacked)|fewtiles/.*/auto/it' \
    --benchmark_out=$L/bench_$pass.json --benchmark_out_format=json > $L/bench_$pass.txt 2>&1
  grep median $L/bench_$pass.txt | awk '{print $1, $2, $3, $NF}'
done
timeout 90 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -5 $L/torch.txt
for i in 1 2 3 4; do
  timeout 120 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
done
tail -14 $L/replay/replay_1.txt
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

#!/bin/bash
# Device run 76 (2026-12-01, session 10): the session's final tree (kernels as in run 75; the
# stream-K cost model refitted): the stream-K, packed and local-memory GPU tests, the host tests,
# the kernel benchmark (two passes: kAuto, the forced kinds, unpacked), torch bf16, 4 processes
# of the main job.
# Usage (repo root; carry gpu_r76.tar.xz from tools/gpu_bundle.sh gpu_r76 + strip + tar):
#   bash benchmarks/results/2026-12-01_run76_final/run76.sh COMMIT
mkdir -p gb && tar xJf gpu_r76.tar.xz -C gb
B=gb/gpu_r76
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
timeout 150 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*StreamK*:*Packed*:*LocalMemory*:*GpuModeShapes*' \
  > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1; echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
for t in sm90_runner_host_test heuristics_test; do
  timeout 60 $B/tests/$t > $L/t_$t.txt 2>&1; echo "rc=$?" >> $L/t_$t.txt
done
tail -n 3 $L/t_*.txt
for pass in 1 2; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='gpumode/s./(auto|persistent|stream_k|simple)/it|gpumode/s./auto/unpacked|fewtiles/.*/(auto|stream_k)/it' \
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

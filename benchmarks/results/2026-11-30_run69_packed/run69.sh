#!/bin/bash
# Device run 69 (2026-11-30, session 9): the packed persistent schedule at its commit: every test
# binary, memcheck and racecheck of the packed-schedule test, the kernel benchmark (kAuto packed vs
# RunnerOptions::pack_tiles = false, GPU MODE and few-tile shapes, two passes), torch bf16 on the
# same shapes, and 4 processes of the main job.
# Usage (repo root; carry gpu_r69.tar.xz from tools/gpu_bundle.sh gpu_r69 + strip + tar):
#   bash benchmarks/results/2026-11-30_run69_packed/run69.sh COMMIT
mkdir -p gb && tar xJf gpu_r69.tar.xz -C gb
B=gb/gpu_r69
SANITIZERS=memcheck SAN_FILTER='*Packed*' SAN_TIMEOUT=150 bash benchmarks/results/run23.sh $B tests
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
timeout 150 compute-sanitizer --tool racecheck $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*Packed*' > $L/racecheck.txt 2>&1
echo "rc=$?" >> $L/racecheck.txt; tail -3 $L/racecheck.txt
for pass in 1 2; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='gpumode/s./auto/(it|unpacked)|fewtiles/.*/auto/it' \
    --benchmark_out=$L/bench_$pass.json --benchmark_out_format=json > $L/bench_$pass.txt 2>&1
  grep median $L/bench_$pass.txt | awk '{print $1, $2, $3, $NF}'
done
timeout 90 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -5 $L/torch.txt
mkdir -p $L/replay
for i in 1 2 3 4; do
  timeout 120 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
done
tail -14 $L/replay/replay_1.txt
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

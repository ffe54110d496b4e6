#!/bin/bash
# Device run 63 (2026-11-30, session 8): the session's final default (commit in README.md of the
# run folder): every test binary, memcheck (pre-pass and stream-K tests) and racecheck (stream-K
# tests) of the kernel test, the kernel benchmark's GPU MODE and few-tile default families, torch
# bf16 on the same shapes.
# Usage (repo root; carry gpu_r63.tar.xz from tools/gpu_bundle.sh gpu_r63 + strip + tar):
#   bash benchmarks/results/run63.sh
mkdir -p gb && tar xJf gpu_r63.tar.xz -C gb
B=gb/gpu_r63
SANITIZERS=memcheck SAN_FILTER='*Prepass*:*StreamK*' SAN_TIMEOUT=150 \
  bash benchmarks/results/run23.sh $B tests
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
timeout 100 compute-sanitizer --tool racecheck $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*StreamK*' > $L/racecheck.txt 2>&1
echo "rc=$?" >> $L/racecheck.txt; tail -3 $L/racecheck.txt
timeout 120 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s./auto/it|fewtiles/.*/auto/it' \
  --benchmark_out=$L/bench.json --benchmark_out_format=json > $L/bench.txt 2>&1
grep median $L/bench.txt | awk '{print $1, $2, $3, $NF}'
timeout 90 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -5 $L/torch.txt
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

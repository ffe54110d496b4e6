#!/bin/bash
# Device run 59 (2026-11-30, session 7): the session's final default (commit in README.md): the
# kernel test, the kernel benchmark's GPU MODE and few-tile default families, torch bf16.
# Usage (repo root; carry gpu_s7f.tar.xz from tools/ab_bundle.sh gpu_s7f):
#   bash benchmarks/results/2026-11-30_run59_run_pdl_final/run59.sh
mkdir -p gb && tar xJf gpu_s7f.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
{ date -u; nvidia-smi -L; } > $L/env.txt 2>&1
timeout 150 gb/tests/sm90_nvfp4_grouped_gemm_test > $L/t_kernel.txt 2>&1; echo "rc=$?" >> $L/t_kernel.txt
grep -E "^\[  (PASSED|FAILED)|Failure|rc=" $L/t_kernel.txt
timeout 120 gb/b_default --benchmark_filter='gpumode/s./auto/it|fewtiles/.*/auto/it' \
  --benchmark_out=$L/bench.json --benchmark_out_format=json > $L/bench.txt 2>&1
grep median $L/bench.txt | awk '{print $1, $2, $3, $NF}'
timeout 90 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -5 $L/torch.txt
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

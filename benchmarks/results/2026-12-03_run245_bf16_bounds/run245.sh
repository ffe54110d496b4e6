#!/bin/bash
# Run 245 (session 39): what the bf16 tensor-core library path (cuBLAS through torch) does on the
# GPU MODE shapes' work, timed as #3's harness times (15 distinct sets, L2 flushed, per-call
# mean, median of 30): torch.mm of the call's whole [sum(M), K] x [K, N] with one weight matrix
# (the easiest problem of the same FLOPs), per-group torch.mm, torch._grouped_mm, each also as one
# CUDA graph of the 15 calls; FP8 (_scaled_mm, inexact for NVFP4) for information; the 8192^3
# bf16 peak; and Encore's default calls beside them in the same lease.
# Here: gpu_s38.tar.xz (tools/gpu_bundle.sh at 31e56a1; kernels = 784888d's). There:
#   bash benchmarks/results/2026-12-03_run245_bf16_bounds/run245.sh
[ -d gb/gpu_s38 ] || { mkdir -p gb && tar xJf gpu_s38.tar.xz -C gb; }
B=gb/gpu_s38
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs245
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs245.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print(torch.__version__)'; } > $L/env.txt 2>&1
T=benchmarks/torch_grouped_mm.py
timeout 60 python3 $T --baseline peak --out $L/peak.json > $L/peak.txt 2>&1; cat $L/peak.txt
for b in dense dense_fp8 per_group grouped; do
  for g in "" "--graph"; do
    name=${b}${g:+_graph}
    timeout 150 python3 $T --baseline $b $g --out $L/$name.json > $L/$name.txt 2>&1
    echo "== $name rc=$?"; cat $L/$name.txt
  done
  pack
done
timeout 200 $B/bin/sm90_nvfp4_grouped_gemm \
  --benchmark_filter='gpumode/s[0-3]/auto/(iter|early/iter|gemm_only/pdl/iter)' \
  --benchmark_report_aggregates_only=true > $L/encore.txt 2>&1
echo "== encore rc=$?"; grep median $L/encore.txt | awk '{print $1, $2}'
pack

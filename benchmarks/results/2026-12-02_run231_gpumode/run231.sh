#!/bin/bash
# Run 231 (session 34): gpumode_shapes.json for 530185e's kernels (the persistent kernel's narrow
# tiles in 2 parts), as run 210: the kernel benchmark's GPU MODE shapes (auto, and as multi-call
# graphs prepare them), then torch_grouped_mm.py in the same lease.
# Here: gpu_s34.tar.xz (tools/gpu_bundle.sh at 530185e). There:
#   bash benchmarks/results/2026-12-02_run231_gpumode/run231.sh
[ -d gb/gpu_s34 ] || { mkdir -p gb && tar xJf gpu_s34.tar.xz -C gb; }
B=gb/gpu_s34
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs231
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs231.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c 'import torch; print(torch.__version__)'; } > $L/env.txt 2>&1
timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s./auto/(early|it)' \
  --benchmark_out=$L/bench.json --benchmark_out_format=json > $L/bench.txt 2>&1
echo "bench rc=$?"; grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack
timeout 120 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
echo "torch rc=$?"; cat $L/torch.txt
pack

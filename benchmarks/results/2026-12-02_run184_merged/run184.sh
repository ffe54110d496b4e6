#!/bin/bash
# Device run 184: the 15 independent GPU MODE calls merged into grouped GEMMs of up to 2/4/8/15
# calls (kernel benchmark ".../auto/merge<c>", CallMode::merge) against the calls one by one
# (".../auto/it", default) and as a multi-call graph prepares them (".../auto/early"); torch
# per call and merged (torch_grouped_mm.py --merge) in the same lease.
# Build here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm, stripped into
# gpu_m184/ with libbenchmark.so.1debian and benchmarks/torch_grouped_mm.py; tar cJf gpu_m184.tar.xz
# Usage (repo root; carry gpu_m184.tar.xz): bash benchmarks/results/2026-12-02_run184_merged/run184.sh
mkdir -p gb && tar xJf gpu_m184.tar.xz -C gb
B=gb/gpu_m184
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
$B/sm90_nvfp4_grouped_gemm --benchmark_filter='(gpumode/s.|fewtiles/(one_tile|decode8|tiny))/auto/(early|it|merge)' \
  --benchmark_out=$L/bench.json > $L/bench.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench.txt | sed -E "s#/iterations:1/repeats:[0-9]+/manual_time##" | cut -c1-170
python3 $B/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1; echo "torch rc=$?"; cat $L/torch.txt
python3 $B/torch_grouped_mm.py --merge --out $L/torch_merged.json > $L/torch_merged.txt 2>&1; echo "torch merged rc=$?"; cat $L/torch_merged.txt

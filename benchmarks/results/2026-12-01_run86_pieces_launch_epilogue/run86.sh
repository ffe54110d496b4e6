#!/bin/bash
# Device run 86 (2026-12-01, session 12). Carry gpu_s12a.tar.xz (b_default, b_stamps,
# graph_launch_batch, libbenchmark). Usage (repo root): bash benchmarks/results/2026-12-01_run86_pieces_launch_epilogue/run86.sh
#  1. stamps build: every piece of shapes 0 and 1 (tile, k-blocks, loop us per k-block);
#  2. graph_launch_batch: the replay's batch-of-15 launch pattern vs the floor's;
#  3. ncu source view of shape 3's GEMM alone (simple kernel, 128 tiles of 128 x 128, 12 k-blocks):
#     what the epilogue's instructions wait for.
mkdir -p gb && tar xJf gpu_s12a.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
gb/b_stamps --benchmark_filter='gpumode/s[01]/auto/it' > $L/stamps_s01.txt 2>&1
echo "stamps rc=$?"; grep -c piece $L/stamps_s01.txt
gb/graph_launch_batch > $L/graph_launch_batch.txt 2>&1; echo "glb rc=$?"; cat $L/graph_launch_batch.txt
timeout 200 ncu --clock-control none --set full --import-source yes --kernel-name-base demangled \
  --kernel-name regex:'Sm90Nvfp4GroupedGemmKernel' --launch-skip 3 --launch-count 1 -o /tmp/s3 \
  gb/b_default --benchmark_filter='gpumode/s3/auto/gemm_only' > $L/ncu_run.txt 2>&1
tail -3 $L/ncu_run.txt
ncu -i /tmp/s3.ncu-rep --page source --csv --print-source sass > $L/s3_source.csv 2> $L/page_err.txt
ncu -i /tmp/s3.ncu-rep --page details > $L/s3_details.txt 2>&1
ls -la $L
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

#!/bin/bash
# Run 210 (session 31): gpumode_shapes.json again, with torch_grouped_mm.py keeping each batch's 15
# outputs (c13d1d9: 15 distinct output buffers, as Encore writes 15 distinct C), alternated with
# the script before that change (torch_grouped_mm_before.py: each result dropped, so one output
# block for all 15 calls) to size the difference in one lease; the kernel benchmark's GPU MODE
# shapes (auto, and as multi-call graphs prepare them) as in run 192.
# Here: gpu_s31d.tar.xz (tools/gpu_bundle.sh at 25df3cb: the kernels are 9d55487's, PTX byte for
# byte). There: bash benchmarks/results/2026-12-02_run210_torch_outputs/run210.sh
D=benchmarks/results/2026-12-02_run210_torch_outputs
[ -d gb/gpu_s31d ] || { mkdir -p gb && tar xJf gpu_s31d.tar.xz -C gb; }
B=gb/gpu_s31d
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs210
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs210.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c 'import torch; print(torch.__version__)'; } > $L/env.txt 2>&1
timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s./auto/(early|it)' \
  --benchmark_out=$L/bench.json --benchmark_out_format=json > $L/bench.txt 2>&1
echo "bench rc=$?"; grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack
for round in 1 2; do
  timeout 120 python3 benchmarks/torch_grouped_mm.py --out $L/torch_$round.json > $L/torch_$round.txt 2>&1
  echo "torch (15 outputs) round $round rc=$?"; cat $L/torch_$round.txt
  timeout 120 python3 $D/torch_grouped_mm_before.py --out $L/torch_before_$round.json > $L/torch_before_$round.txt 2>&1
  echo "torch (before) round $round rc=$?"; cat $L/torch_before_$round.txt
  pack
done
cp $L/torch_1.json $L/torch.json
pack

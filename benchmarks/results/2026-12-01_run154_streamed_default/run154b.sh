#!/bin/bash
# Device run 154b (session 22, right after 154a, same bundle): the kernel benchmark's decode/
# family (default = streamed where tiles are <= 16 rows, /nostream, /stream128) and the GPU MODE
# and few-tile shapes as Run launches them (30 repetitions), torch bf16 on the GPU MODE shapes
# (gpumode_shapes.json), then 3 processes of the main job (replay.json).
# Usage: bash benchmarks/results/2026-12-01_run154_streamed_default/run154b.sh COMMIT
mkdir -p gb && [ -d gb/gpu_r154 ] || tar xJf gpu_s154.tar.xz -C gb
B=gb/gpu_r154
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs154b
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs_b.tar.xz -C $L .; }
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='decode/n2048' \
  --benchmark_out=$L/decode.json --benchmark_out_format=json > $L/decode.txt 2>&1
echo "decode rc=$?: $(short $L/decode.txt)"
pack
F='gpumode/s./auto/it|fewtiles/(decode8|tiny|one_tile)/auto/it'
timeout 120 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_repetitions=30 --benchmark_out=$L/bench_1.json \
  --benchmark_out_format=json > $L/bench_1.txt 2>&1
echo "bench rc=$?: $(short $L/bench_1.txt)"
pack
timeout 60 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -4 $L/torch.txt
pack
for i in 1 2 3; do
  timeout 40 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
  echo "replay $i rc=$?"
  grep -E "floors|direct  |graph_per_call  |graph_rebind  |graph_batch  |sequence_step  " $L/replay/replay_$i.txt | cut -c1-120
  pack
done

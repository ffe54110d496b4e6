#!/bin/bash
# Device run 110b (2026-12-01, session 17): the main job (3 processes, pinned to one core) at HEAD
# (b5aa92c, kAuto fuses shape 3), then the _rows128 A/B (token tiles <= 128 rows, 4 fp16 token
# stages; NOTES session 16 step 3): its GPU MODE kernel tests, then ROUNDS rounds alternating the
# default and _rows128 on the GPU MODE shapes and the few-tile simple ones.
# Usage (repo root; carry gpu_r110.tar.xz as run110a and gpu_x.tar.xz = tools/ab_bundle.sh gpu_x
# _rows128): bash benchmarks/results/2026-12-01_run110_verify/run110b.sh COMMIT
mkdir -p gb gx && tar xJf gpu_r110.tar.xz -C gb && tar xJf gpu_x.tar.xz -C gx
B=gb/gpu_r110
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
for i in 1 2 3; do
  LD_LIBRARY_PATH=$(pwd)/$B timeout 80 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
  echo "replay $i rc=$?"
  grep -E "floors|graph_per_call  |graph_batch  |sequence_step  " $L/replay/replay_$i.txt | cut -c1-120
  pack
done
export LD_LIBRARY_PATH=$(pwd)/gx
timeout 90 gx/tests/sm90_nvfp4_grouped_gemm_rows128_test \
  --gtest_filter='*GpuModeShapes*:*Fused*:*NoKernelUsesLocalMemory*:*DynamicM*' > $L/t_rows128.txt 2>&1
echo "rc=$?" >> $L/t_rows128.txt
echo "rows128 test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_rows128.txt | tr '\n' ' ') $(tail -1 $L/t_rows128.txt)"
pack
F='gpumode/s./auto/it|fewtiles/(decode8|tiny|one_tile)/auto/it'
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default rows128; do
    timeout 60 gx/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(grep median $L/bench_${v}_$round.txt | awk '{printf "%s ", $2}')"
  done
  pack
done
echo "names: $(grep median $L/bench_default_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"

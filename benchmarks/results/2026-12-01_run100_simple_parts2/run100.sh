#!/bin/bash
# Device run 100 (2026-12-01, session 14): the default with the simple kernel in 2 parts per stage.
# The kernel test (stop if it fails), the other test binaries, 2 processes of the kernel benchmark,
# torch bf16, then the weights-normal kernel test and one process of the main job while time lasts.
# Usage (repo root; carry gpu_r100.tar.xz = tools/gpu_bundle.sh gpu_r100, stripped, tar cJf):
#   bash benchmarks/results/2026-12-01_run100_simple_parts2/run100.sh COMMIT
mkdir -p gb && tar xJf gpu_r100.tar.xz -C gb
B=gb/gpu_r100
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_test
s0=$(date +%s)
timeout 220 $T > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "^\[  (PASSED|FAILED)|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -q "rc=0" $L/t_sm90_nvfp4_grouped_gemm_test.txt || { pack; exit 1; }
for t in $B/tests/*; do
  n=$(basename $t)
  case $n in sm90_nvfp4_grouped_gemm_test|sm90_nvfp4_grouped_gemm_weights_normal_test) continue;; esac
  timeout 60 $t > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
done
grep -H -E "FAILED|rc=" $L/t_*.txt | grep -v "rc=0"; echo "binaries passing: $(grep -l 'rc=0' $L/t_*.txt | wc -l)"
pack
F='gpumode/s./auto/it|fewtiles/(one_tile|tiny|decode8)/auto/it'
for i in 1 2; do
  timeout 100 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_out=$L/bench_$i.json \
    --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== process $i: $(grep median $L/bench_$i.txt | awk '{printf "%s ", $2}')"
done
pack
timeout 90 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -4 $L/torch.txt
pack
s0=$(date +%s)
timeout 170 $B/tests/sm90_nvfp4_grouped_gemm_weights_normal_test > $L/t_weights_normal.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_weights_normal.txt
grep -E "^\[  (PASSED|FAILED)|rc=" $L/t_weights_normal.txt
pack
timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay.json --encore_commit="$1" \
  > $L/replay.txt 2>&1; echo "rc=$?" >> $L/replay.txt
tail -16 $L/replay.txt
pack

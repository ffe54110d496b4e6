#!/bin/bash
# Device run 97 (2026-12-01, session 13): the fused pre-pass as the default for whole-tile plans
# that fit (FusePrepass::kAuto, cooperative launch + PDL). The fused and default-options kernel
# tests first (stop if they fail), every test binary, 2 processes of the kernel benchmark (default
# vs never fused), torch bf16, 3 processes of the main job, then memcheck and racecheck of the
# default-options test.
# Usage (repo root; carry gpu_r97.tar.xz = tools/gpu_bundle.sh gpu_r97, stripped, tar cJf):
#   bash benchmarks/results/2026-12-01_run97_fused_default/run97.sh COMMIT
mkdir -p gb && tar xJf gpu_r97.tar.xz -C gb
B=gb/gpu_r97
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_test
timeout 120 $T --gtest_filter='*Fused*:*DefaultOptions*' > $L/t_first.txt 2>&1
echo "rc=$?" >> $L/t_first.txt; grep -E "OK|FAILED|rc=" $L/t_first.txt | tail -6
grep -q "rc=0" $L/t_first.txt || { pack; exit 1; }
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
done
grep -H -E "FAILED|rc=" $L/t_*.txt | grep -v "rc=0"; echo "binaries passing: $(grep -l 'rc=0' $L/t_*.txt | wc -l)"
pack
F='gpumode/s./auto/(it|unfused/it)|fewtiles/(one_tile|tiny|decode8)/auto/(it|unfused/it)'
for i in 1 2; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_out=$L/bench_$i.json \
    --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== process $i"
  grep median $L/bench_$i.txt | sed 's#/iterations:1/repeats:[0-9]*/manual_time_median##' | awk '{print $1, $2, $NF}'
done
pack
timeout 90 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -5 $L/torch.txt
for i in 1 2 3; do
  timeout 120 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
done
tail -16 $L/replay/replay_1.txt
pack
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $T \
    --gtest_filter='*DefaultOptions*' > $L/san_$tool.txt 2>&1; echo "rc=$?" >> $L/san_$tool.txt
  tail -2 $L/san_$tool.txt
done
pack

#!/bin/bash
# Device run 136 (2026-12-01, session 20): the session's final tree (the staged token pre-pass by
# default). The kernel, runner-host, executor, sequence, batch, backend and device tests, the
# kernel benchmark (GPU MODE shapes as Run launches them), torch bf16 for gpumode_shapes.json, then
# 3 processes of the main job.
# Usage (repo root; carry gpu_s136.tar.xz = from tools/gpu_bundle.sh gpu_r136, those binaries
# stripped, with the torch script and libbenchmark):
#   bash benchmarks/results/2026-12-01_run136_final/run136.sh COMMIT
mkdir -p gb && tar xJf gpu_s136.tar.xz -C gb
B=gb/gpu_r136
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
for n in sm90_nvfp4_grouped_gemm_test executor_test sm90_runner_host_test sm90_runner_host_tmastore_test sequence_test batch_test backend_test device_test; do
  s0=$(date +%s)
  timeout 240 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_$n.txt
  echo "$n: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_$n.txt | tr '\n' ' ') $(tail -1 $L/t_$n.txt)"
  pack
done
# The staged pre-pass under the sanitizers (its shared-memory exchange: racecheck).
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter='*DynamicMComputesOnlyValidRows*:*OutputsStayInsideTheirGroups*' > $L/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_$tool.txt | tr '\n' ' ')"
  pack
done
F='gpumode/s./auto/it|fewtiles/(decode8|tiny|one_tile)/auto/it'
timeout 120 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_repetitions=30 --benchmark_out=$L/bench_1.json \
  --benchmark_out_format=json > $L/bench_1.txt 2>&1
echo "bench rc=$?"; grep median $L/bench_1.txt | awk '{print $1, $2, $NF}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//'
pack
timeout 60 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -4 $L/torch.txt
pack
for i in 1 2 3; do
  timeout 40 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
  echo "replay $i rc=$?"
  grep -E "floors|direct  |graph_per_call  |graph_batch  |sequence_step  " $L/replay/replay_$i.txt | cut -c1-120
  pack
done

#!/bin/bash
# Device run 107 (2026-12-01, session 16): the fused pre-pass without co-residency, kAuto default
# (251630d). The kernel test (stop if it fails), memcheck of the no-co-residency test, ROUNDS
# rounds alternating the reference binary (run 104's default, b_ref: kernels as run 100's) and
# this tree's (kAuto = auto/it, never fused = auto/unfused, always = auto/fused), torch bf16, then
# the other test binaries while time lasts.
# Usage (repo root; carry gpu_r107.tar.xz = tools/gpu_bundle.sh gpu_r107, stripped, tar cJf, and
# gpu_k.tar.xz = run 104's tools/ab_bundle.sh gpu_k _ksplit, for its b_default):
#   bash benchmarks/results/2026-12-01_run107_final/run107.sh
mkdir -p gb gk && tar xJf gpu_r107.tar.xz -C gb && tar xJf gpu_k.tar.xz -C gk
B=gb/gpu_r107
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_test
s0=$(date +%s)
timeout 220 $T > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -q "rc=0" $L/t_sm90_nvfp4_grouped_gemm_test.txt || { pack; exit 1; }
pack
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*FusedPrepassCompletesWithoutCoResidency*' > $L/san_memcheck.txt 2>&1
echo "rc=$?" >> $L/san_memcheck.txt; tail -2 $L/san_memcheck.txt
pack
F='gpumode/s./auto/(it|unfused/it|fused/it)|fewtiles/(decode8|one_tile|tiny)/auto/(it|unfused/it)'
for round in $(seq 1 ${ROUNDS:-2}); do
  timeout 90 gk/b_default --benchmark_filter="$F" > $L/bench_ref_$round.txt 2>&1
  echo "== ref $round: $(grep median $L/bench_ref_$round.txt | awk '{printf "%s ", $2}')"
  timeout 100 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== new $round: $(grep median $L/bench_$round.txt | awk '{printf "%s ", $2}')"
  pack
done
echo "ref: $(grep median $L/bench_ref_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"
echo "new: $(grep median $L/bench_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"
timeout 90 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -4 $L/torch.txt
pack
for n in executor_test batch_test sequence_test backend_test device_problem_test sm90_runner_host_test sm90_nvfp4_grouped_gemm_weights_normal_test; do
  timeout 170 $B/tests/$n > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
  echo "$n: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_$n.txt | tr '\n' ' ') $(tail -1 $L/t_$n.txt)"
  pack
done

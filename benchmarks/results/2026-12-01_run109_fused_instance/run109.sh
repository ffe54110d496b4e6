#!/bin/bash
# Device run 109 (2026-12-01, session 16): the fused pre-pass as its own kernel instantiation
# (8129752). The kernel tests that cover it, then the reference (run 104's b_default: kernels as
# run 100's) and this tree alternated (ref, new, new), then torch bf16 for gpumode_shapes.json.
# Usage (repo root; carry gpu_s109.tar.xz = the kernel test, kernel benchmark, torch script and
# libbenchmark of tools/gpu_bundle.sh gpu_r109, stripped; gpu_k.tar.xz as in run 107):
#   bash benchmarks/results/2026-12-01_run109_fused_instance/run109.sh
mkdir -p gb gk && tar xJf gpu_s109.tar.xz -C gb && tar xJf gpu_k.tar.xz -C gk
B=gb/gpu_r109
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
s0=$(date +%s)
timeout 90 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*Fused*:*GpuModeShapes*:*NoKernelUsesLocalMemory*:*PlansLaunchBehind*:*LaunchPlanAsGraph*:*InvalidArguments*' \
  > $L/t_kernel.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_kernel.txt
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|rc=" $L/t_kernel.txt
grep -q "rc=0" $L/t_kernel.txt || { pack; exit 1; }
pack
F='gpumode/s./auto/(it|unfused/it)|fewtiles/(decode8|tiny)/auto/it'
timeout 45 gk/b_default --benchmark_filter="$F" > $L/bench_ref.txt 2>&1
echo "== ref: $(grep median $L/bench_ref.txt | awk '{printf "%s ", $2}')"
for i in 1 2; do
  timeout 45 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_out=$L/bench_$i.json \
    --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== new $i: $(grep median $L/bench_$i.txt | awk '{printf "%s ", $2}')"
  pack
done
echo "ref: $(grep median $L/bench_ref.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"
echo "new: $(grep median $L/bench_1.txt | awk '{print $1}' | sed 's/.iterations.*//' | tr '\n' ' ')"
timeout 60 python3 $B/bin/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -4 $L/torch.txt
pack

#!/bin/bash
# Device run 96 (2026-12-01, session 13), three measurements of the session's final kernels (2c153f9,
# PTX identical to 4bd1fa9 / run 90):
#  1. the fused pre-pass v3 (grid barrier; RunnerOptions::fuse_token_prepass, opt-in) against the
#     pre-pass kernel and the GEMM alone, 2 processes: is v3 still behind, as runs 93-95's
#     streamed fusion was?
#  2. ncu source view of shape 1's GEMM alone (persistent kernel, 448 tiles) and shape 3's (simple,
#     128 tiles): where the v4 epilogue's warps stall (next: a TMA-store epilogue);
#  3. the stamps build (cheap per-CTA stamps, first run on a GPU): shapes 0 and 1, pieces and rates.
# Usage (repo root; carry gpu_r96.tar.xz from tools/ab_bundle.sh gpu_r96 _exp_stamps).
mkdir -p gb && tar xJf gpu_r96.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
F='gpumode/s./auto/(it|fused/it|fused/pdl/it|gemm_only/it)|fewtiles/(one_tile|decode8)/auto/(it|fused/it|fused/pdl/it)'
for i in 1 2; do
  timeout 150 gb/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_$i.json \
    --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== process $i"
  grep median $L/bench_$i.txt | sed 's#/iterations:1/repeats:[0-9]*/manual_time_median##' | awk '{print $1, $2}'
done
pack
for s in 1 3; do
  timeout 150 ncu --clock-control none --set full --import-source yes --kernel-name-base demangled \
    --kernel-name regex:'Sm90Nvfp4GroupedGemmKernel' --launch-skip 3 --launch-count 1 -o /tmp/s$s \
    gb/b_default --benchmark_filter="gpumode/s$s/auto/gemm_only" > $L/ncu_run_s$s.txt 2>&1
  tail -2 $L/ncu_run_s$s.txt
  ncu -i /tmp/s$s.ncu-rep --page source --csv --print-source sass 2> /dev/null | xz > $L/s${s}_source.csv.xz
  ncu -i /tmp/s$s.ncu-rep --page details > $L/s${s}_details.txt 2>&1
done
pack
timeout 120 gb/b_exp_stamps --benchmark_filter='gpumode/s[01]/auto/it' > $L/stamps_s01.txt 2>&1
echo "stamps rc=$?"; grep -c piece $L/stamps_s01.txt
pack

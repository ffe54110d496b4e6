#!/bin/bash
# Device run 89 (2026-12-01, session 12): epilogue v3 (the tile's chunks packed first, in
# straight-line code, then the rolled chunk loop) + run 88's walk and release/acquire (b_default)
# against run 88's default (b_e88: packing in the loop's switch cases) and 2f2c623 (b_old), in one
# lease: the new kernel test, 2 alternating rounds, the new stamps build on shapes 0 and 1, and an
# ncu source view of shape 1's GEMM (packed persistent: an epilogue between tiles).
# Usage (repo root; carry gpu_e89.tar.xz (tools/ab_bundle.sh gpu_e89 _exp_stamps), gpu_e88.tar.xz,
# gpu_s12a.tar.xz): bash benchmarks/results/2026-12-01_run89_epilogue_v3/run89.sh
mkdir -p gb go ge && tar xJf gpu_e89.tar.xz -C gb && tar xJf gpu_s12a.tar.xz -C go ./b_default \
  && tar xJf gpu_e88.tar.xz -C ge ./b_default
cp go/b_default gb/b_old && cp ge/b_default gb/b_e88 && mv gb/b_exp_stamps gb/s_stamps
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 240 gb/tests/sm90_nvfp4_grouped_gemm_test > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "PASSED|FAILED|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt | tail -6
FILTER='gpumode/s./auto/it|fewtiles/(one_tile|tiny|decode8)/auto/it' ROUNDS=2 TESTS=0 \
  bash benchmarks/results/ab.sh gb
gb/s_stamps --benchmark_filter='gpumode/s[01]/auto/it' > $L/stamps_s01.txt 2>&1; echo "stamps rc=$?"
timeout 150 ncu --clock-control none --set full --import-source yes --kernel-name-base demangled \
  --kernel-name regex:'Sm90Nvfp4GroupedGemmKernel' --launch-skip 3 --launch-count 1 -o /tmp/s1 \
  gb/b_default --benchmark_filter='gpumode/s1/auto/gemm_only' > $L/ncu_run.txt 2>&1
ncu -i /tmp/s1.ncu-rep --page source --csv --print-source sass > $L/s1_source.csv 2> $L/page_err.txt
ncu -i /tmp/s1.ncu-rep --page details > $L/s1_details.txt 2>&1
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

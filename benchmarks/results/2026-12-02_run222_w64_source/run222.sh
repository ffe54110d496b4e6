#!/bin/bash
# Run 222 (session 33): which instructions the narrow loop stalls on. Run 221: at w64 the warps
# stall 2.81 cycles an issue on "long scoreboard" and 1.28 on "barrier" against 1.06 and 0.06 at
# w128. Nsight Compute's per-instruction warp-state samples (SourceCounters, SASS) of
# steady/w64 and w128 (GEMM alone), exported as CSV.
# Here: the bundle of run 220 (gpu_s33a, 48249bf). There:
#   bash benchmarks/results/2026-12-02_run222_w64_source/run222.sh
[ -d gb/gpu_s33a ] || { mkdir -p gb && tar xJf gpu_s33a.tar.xz -C gb; }
B=gb/gpu_s33a
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs222
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs222.tar.xz -C $L .; }
for w in 64 128; do
  timeout 200 ncu --clock-control none --kernel-name regex:Sm90Nvfp4GroupedGemm --launch-skip 10 \
    --launch-count 1 --section SourceCounters --section WarpStateStats -f -o /tmp/w$w \
    $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="^steady/w$w/k8192/gemm_only" \
    > $L/ncu_w$w.txt 2>&1
  echo "w$w rc=$?"
  ncu -i /tmp/w$w.ncu-rep --page source --csv --print-source sass > $L/source_w$w.csv 2> $L/source_w$w.err
  echo "export rc=$? lines=$(wc -l < $L/source_w$w.csv)"
  head -3 $L/source_w$w.csv | cut -c1-600
  pack
done

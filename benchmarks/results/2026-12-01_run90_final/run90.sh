#!/bin/bash
# Device run 90 (2026-12-01, session 12): the session's final tree (epilogue v4, the stream-K walk,
# release/acquire): every test binary; 2 alternating rounds of the kernel benchmark against run 88's
# default (b_e88) and 2f2c623 (b_old); torch bf16; 3 processes of the main job.
# Usage (repo root; carry gpu_r90.tar.xz (tools/gpu_bundle.sh gpu_r90, strip, tar), gpu_e88.tar.xz,
# gpu_s12a.tar.xz): bash benchmarks/results/2026-12-01_run90_final/run90.sh COMMIT
mkdir -p gb go ge && tar xJf gpu_r90.tar.xz -C gb && tar xJf gpu_s12a.tar.xz -C go ./b_default \
  && tar xJf gpu_e88.tar.xz -C ge ./b_default
B=gb/gpu_r90
mkdir -p ab && cp $B/bin/sm90_nvfp4_grouped_gemm ab/b_default && cp go/b_default ab/b_old \
  && cp ge/b_default ab/b_e88 && cp $B/libbenchmark.so.1debian ab/
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
done
grep -H -E "PASSED|FAILED|rc=" $L/t_*.txt | grep -v "rc=0" | grep -v PASSED; grep -c "rc=0" $L/t_*.txt | grep -c ":1"
FILTER='gpumode/s./auto/it|fewtiles/(one_tile|tiny|decode8)/auto/it' ROUNDS=2 TESTS=0 \
  bash benchmarks/results/ab.sh ab > $L/ab.txt 2>&1
grep -A7 "default round 2" $L/ab.txt
timeout 90 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -5 $L/torch.txt
for i in 1 2 3; do
  timeout 120 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
done
tail -14 $L/replay/replay_1.txt
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

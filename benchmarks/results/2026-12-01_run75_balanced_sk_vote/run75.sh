#!/bin/bash
# Device run 75 (2026-12-01, session 10): run 74 with the reduction's decisions through a warp vote
# (the tile loop back on the uniform datapath): the SASS of the 8-group pre-pass-token kernels (R2UR and UIADD3
# counts per schedule), every GPU test, the kernel benchmark per kernel kind (two passes),
# memcheck and racecheck of the stream-K tests.
# Usage (repo root; carry gpu_r75.tar.xz from tools/gpu_bundle.sh gpu_r75 + strip + tar):
#   bash benchmarks/results/2026-12-01_run75_balanced_sk_vote/run75.sh
mkdir -p gb && tar xJf gpu_r75.tar.xz -C gb
B=gb/gpu_r75
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
cuobjdump -sass $B/bin/sm90_nvfp4_grouped_gemm > /tmp/all.sass 2>&1
python3 - /tmp/all.sass > $L/sass_counts.txt <<'PY'
import sys, re
parts = re.split(r'\n\s*Function : ', open(sys.argv[1]).read())
for p in parts[1:]:
    name = p.split('\n', 1)[0]
    if 'Sm90Nvfp4GroupedGemmKernel' in name:
        ops = re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)', p, re.M)
        c = {k: ops.count(k) for k in ('R2UR', 'UIADD3', 'HGMMA', 'STL', 'LDL')}
        print(re.sub(r'encore::gemm::sm90::', '', name)[:120], len(ops), c)
PY
cat $L/sass_counts.txt
timeout 200 $B/tests/sm90_nvfp4_grouped_gemm_test > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
tail -n 3 $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "FAILED|Failure" $L/t_sm90_nvfp4_grouped_gemm_test.txt | head -20
for pass in 1 2; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='gpumode/s./(auto|persistent|stream_k|simple)/it|fewtiles/.*/(auto|stream_k|simple)/it' \
    --benchmark_out=$L/bench_$pass.json --benchmark_out_format=json > $L/bench_$pass.txt 2>&1
  grep median $L/bench_$pass.txt | awk '{print $1, $2, $3, $NF}'
done
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter='*StreamK*' > $L/sanitize_$tool.txt 2>&1
  echo "rc=$?" >> $L/sanitize_$tool.txt
  tail -n 3 $L/sanitize_$tool.txt
done
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

#!/bin/bash
# Device run 84 (2026-12-01, session 11): two epilogue staging buffers (bb9bb95) against the
# kernels before it (run 82's default binary, f1e07d7: same default kernels as 7ac13f9), in one
# lease: the new build's GPU tests that cover the epilogue (every kind, packed multi-tile CTAs,
# dynamic M, stream-K workspaces, subnormals, no local memory), then 2 alternating rounds of the
# GPU MODE shapes and the steady family, then torch bf16 (for gpumode_shapes.json if adopted).
# Usage (repo root; carry gpu_e84.tar.xz from tools/ab_bundle.sh gpu_e84 and gpu_w82.tar.xz):
#   bash benchmarks/results/2026-12-01_run84_epilogue_buffers/run84.sh
mkdir -p gb go && tar xJf gpu_e84.tar.xz -C gb && tar xJf gpu_w82.tar.xz -C go ./b_default
cp go/b_default gb/b_old
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 120 gb/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*GpuModeShapes*:*Packed*:*LocalMemory*:*DynamicM*:*StreamKWorkspaces*:*Subnormal*:*AsGraphNode*' \
  > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1; echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "PASSED|FAILED|rc=" $L/t_sm90_nvfp4_grouped_gemm_test.txt | tail -4
FILTER='gpumode/s./auto/it|steady/w(64|128|256)/k8192/gemm_only' ROUNDS=2 TESTS=0 \
  bash benchmarks/results/ab.sh gb
timeout 90 python3 benchmarks/torch_grouped_mm.py --out $L/torch.json > $L/torch.txt 2>&1
tail -3 $L/torch.txt
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

#!/bin/bash
# Run 207 (session 30): _n8 against the default on a MoE layer's ragged expert GEMMs
# (moe/e64_s4096/*: 64 experts, M ~ 64 +- 8 each), plus GPU MODE shape 1 as run 205's reference,
# then the _n8 kernel test at this commit (its width switch now indexes by a shift).
# Here: tools/ab_bundle.sh gpu_n8b _n8 (gpu_n8b.tar.xz, carried). There (repo root):
#   mkdir -p gb && tar xJf gpu_n8b.tar.xz -C gb && bash benchmarks/results/2026-12-02_run207_n8_moe/run207.sh gb
FILTER=${FILTER:-'moe/|gpumode/s1/auto/it'} ROUNDS=${ROUNDS:-3} \
  bash "$(dirname "$0")/../2026-12-02_run205_n8/run205.sh" "$1"

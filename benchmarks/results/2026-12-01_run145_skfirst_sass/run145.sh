#!/bin/bash
# Device run 145 (session 21): why run 144's _skfirst was slower even where its walk is unchanged
# (one_tile: at most one CTA's range is rotated, yet +7%): the SASS of the default and _skfirst
# kernel benchmarks (cuobjdump exists only on the device), per kernel: instruction count, R2UR
# (values moved off the uniform datapath: run 73's stream-K loss) and HGMMA counts; the stream-K
# kernels' SASS packed for a diff here.
# Usage (repo root; carry gpu_a144.tar.xz):
#   bash benchmarks/results/2026-12-01_run145_skfirst_sass/run145.sh
mkdir -p gb && tar xJf gpu_a144.tar.xz -C gb
O=${OUT:-/tmp/out}
for v in default skfirst; do cuobjdump -sass gb/b_$v > /tmp/$v.sass 2>&1; done
python3 benchmarks/results/2026-12-01_run145_skfirst_sass/sass_stats.py /tmp/default.sass /tmp/skfirst.sass $O

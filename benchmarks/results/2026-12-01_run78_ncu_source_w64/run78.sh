#!/bin/bash
# Device run 78 (2026-12-01, session 10): per-instruction stall sampling of the main loop at 64
# tokens (steady/w64/k8192/gemm_only: one 128 x 64 tile per SM, pre-pass tokens) with run 76's
# binary (built with -lineinfo), to attribute run 72's long_scoreboard stalls.
# Usage (repo root; carry gpu_r76.tar.xz): bash benchmarks/results/2026-12-01_run78_ncu_source_w64/run78.sh
mkdir -p gb && tar xJf gpu_r76.tar.xz -C gb
B=gb/gpu_r76
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 200 ncu --clock-control none --set full --import-source yes --kernel-name-base demangled \
  --kernel-name regex:'Sm90Nvfp4GroupedGemmKernel' --launch-skip 3 --launch-count 1 -o /tmp/w64 \
  $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='steady/w64/k8192/gemm_only' > $L/ncu_run.txt 2>&1
tail -3 $L/ncu_run.txt
ncu -i /tmp/w64.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $L/page_err.txt
ls -la /tmp/w64.ncu-rep /tmp/src.csv; head -c 600 /tmp/src.csv; echo
python3 - /tmp/src.csv > $L/sass_stalls_top.txt <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hdr_i = next(i for i, r in enumerate(rows) if any('Source' == c or 'Address' in c for c in r))
hdr = rows[hdr_i]; data = rows[hdr_i + 1:]
print('columns:', hdr)
def col(name):
    for i, h in enumerate(hdr):
        if h == name: return i
    return None
src = col('Source')
samp = next((i for i, h in enumerate(hdr) if h.startswith('Warp Stall Sampling (All')), None)
stall_cols = [i for i, h in enumerate(hdr) if h.startswith('stall_')]
def num(x):
    try: return float(x.replace(',', ''))
    except: return 0.0
tot = sum(num(r[samp]) for r in data if samp is not None and len(r) > samp)
print('total samples', tot)
top = sorted(data, key=lambda r: -num(r[samp]) if samp is not None and len(r) > samp else 0)[:60]
for r in top:
    extra = {hdr[i]: r[i] for i in stall_cols if len(r) > i and num(r[i]) > 0.05 * max(1, num(r[samp]))}
    print(r[0] if r else '', '|', r[src] if src is not None else '', '|', r[samp], '|', extra)
ops = collections.Counter()
for r in data:
    if samp is None or len(r) <= samp or src is None: continue
    op = r[src].split()[0] if r[src].split() else '?'
    if op.startswith('@'): op = r[src].split()[1] if len(r[src].split()) > 1 else op
    ops[op.split('.')[0]] += num(r[samp])
print('samples by opcode:', ops.most_common(25))
PY
head -5 $L/sass_stalls_top.txt
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .

#!/bin/bash
# Device run 4 (kernel branch): every variant's correctness test, then GPU MODE timings of every
# variant (auto kernel choice), torch bf16 in the same run, a reduced memcheck of the candidate.
# Bundle layout: t_<variant> (gtest binary), b_<variant> (benchmark), libbenchmark.so.1debian,
# torch_grouped_mm.py. Logs go to $OUT.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=.
OUT=${OUT:-/tmp/run4_out}
mkdir -p "$OUT"
V=$(ls t_* | sed 's/^t_//')
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; echo "variants: $V"; } > "$OUT/env.txt" 2>&1
T0=$(date +%s)
# 1. tests, in parallel (the host reference dominates; each binary has its own 20 s hang guard)
for v in $V; do
  ( timeout 150 ./t_$v > "$OUT/t_$v.txt" 2>&1; echo "rc=$?" >> "$OUT/t_$v.txt" ) &
done
wait
for v in $V; do echo "$v: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/t_$v.txt" | tr '\n' ' ') $(tail -1 "$OUT/t_$v.txt")"; done | tee "$OUT/tests_summary.txt"
echo "tests done at +$(( $(date +%s) - T0 )) s"
# 2. timings, one binary at a time
for v in $V; do
  timeout 60 ./b_$v --benchmark_filter='gpumode/.*/auto' --benchmark_out="$OUT/bench_$v.json" \
    --benchmark_out_format=json > "$OUT/bench_$v.txt" 2>&1
  echo "rc=$?" >> "$OUT/bench_$v.txt"
  echo "== $v"; grep -E "median" "$OUT/bench_$v.txt" | awk '{print $1, $2, $3}'
done 2>&1 | tee "$OUT/bench_summary.txt"
echo "benches done at +$(( $(date +%s) - T0 )) s"
# 3. torch bf16, same run
timeout 90 python3 torch_grouped_mm.py --out "$OUT/torch.json" > "$OUT/torch.txt" 2>&1; echo "rc=$?" >> "$OUT/torch.txt"
cat "$OUT/torch.txt"
echo "torch done at +$(( $(date +%s) - T0 )) s"
# 4. reduced memcheck of the candidate variant(s), as time allows
for v in ${MEMCHECK:-widehp}; do
  [ -x t_$v ] || continue
  timeout 60 compute-sanitizer --tool memcheck ./t_$v --gtest_filter='*Dynamic*:*SubnormalToken*' \
    > "$OUT/memcheck_$v.txt" 2>&1; echo "rc=$?" >> "$OUT/memcheck_$v.txt"
  tail -3 "$OUT/memcheck_$v.txt"
done
echo "all done at +$(( $(date +%s) - T0 )) s"

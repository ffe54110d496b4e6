#!/bin/bash
# Device run of kernel variants (kernel branch; run 4 used 2026-run4_variants/run4.sh): every
# variant's correctness test (in parallel, each with its 20 s hang guard), GPU MODE timings of
# every variant (auto kernel choice), torch bf16 in the same run, memcheck of $MEMCHECK variants.
# Bundle layout: t_<variant> (gtest binary), b_<variant> (benchmark), libbenchmark.so.1debian,
# torch_grouped_mm.py, this script. Run: MEMCHECK="<variants>" RACECHECK="<variants>" TORCH=0|1 bash
# <bundle>/run_variants.sh (memcheck on '*Dynamic*:*Subnormal*', racecheck on '*Subnormal*').
# NOTES: the run tool returns only the first few files under $OUT (run 4 lost most logs), so the
# logs go to $OUT/logs/ and everything is also packed into $OUT/all_logs.tgz, which sorts first.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=.
OUT=${OUT:-/tmp/run_variants_out}
L="$OUT/logs"
mkdir -p "$L"
V=$(ls t_* 2>/dev/null | sed 's/^t_//')
B=$(ls b_* | sed 's/^b_//')  # experiment builds may have a benchmark and no test
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; echo "tests: $V"; echo "benchmarks: $B"; } > "$L/env.txt" 2>&1
T0=$(date +%s)
for v in $V; do
  ( timeout 150 ./t_$v > "$L/t_$v.txt" 2>&1; echo "rc=$?" >> "$L/t_$v.txt" ) &
done
wait
for v in $V; do echo "$v: $(grep -E '^\[  (PASSED|FAILED)' "$L/t_$v.txt" | tr '\n' ' ') $(tail -1 "$L/t_$v.txt")"; done | tee "$L/tests_summary.txt"
echo "tests done at +$(( $(date +%s) - T0 )) s"
tar czf "$OUT/all_logs.tgz" -C "$L" .  # re-packed after every phase: a killed run keeps its logs
for v in $B; do
  timeout 60 ./b_$v --benchmark_filter='gpumode/.*/auto' --benchmark_out="$L/bench_$v.json" \
    --benchmark_out_format=json > "$L/bench_$v.txt" 2>&1
  echo "rc=$?" >> "$L/bench_$v.txt"
  echo "== $v"; grep -E "median" "$L/bench_$v.txt" | awk '{print $1, $2, $3}'
done 2>&1 | tee "$L/bench_summary.txt"
echo "benches done at +$(( $(date +%s) - T0 )) s"
tar czf "$OUT/all_logs.tgz" -C "$L" .
[ "${TORCH:-1}" = 1 ] && timeout 90 python3 torch_grouped_mm.py --out "$L/torch.json" > "$L/torch.txt" 2>&1; echo "rc=$?" >> "$L/torch.txt"
cat "$L/torch.txt"
tar czf "$OUT/all_logs.tgz" -C "$L" .
for v in ${MEMCHECK:-}; do
  [ -x t_$v ] || continue
  timeout 60 compute-sanitizer --tool memcheck ./t_$v --gtest_filter='*Dynamic*:*Subnormal*' \
    > "$L/memcheck_$v.txt" 2>&1; echo "rc=$?" >> "$L/memcheck_$v.txt"
  tail -3 "$L/memcheck_$v.txt"
done
for v in ${RACECHECK:-}; do
  [ -x t_$v ] || continue
  timeout 60 compute-sanitizer --tool racecheck ./t_$v --gtest_filter='*Subnormal*' \
    > "$L/racecheck_$v.txt" 2>&1; echo "rc=$?" >> "$L/racecheck_$v.txt"
  tail -3 "$L/racecheck_$v.txt"
done
tar czf "$OUT/all_logs.tgz" -C "$L" .
echo "all done at +$(( $(date +%s) - T0 )) s"

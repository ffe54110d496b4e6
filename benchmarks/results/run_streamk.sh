#!/bin/bash
# Device run (2026-11-30, session 2): every test binary of the bundle, the kernel
# benchmark on the GPU MODE shapes (auto / simple / persistent / stream_k), torch bf16 in the same
# run, memcheck + racecheck of the stream-K test. Usage (device tool, carry ["gpu_bundle"]):
#   bash benchmarks/results/run_streamk.sh gpu_bundle
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv; } > "$L/env.txt" 2>&1
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
for t in "$B"/tests/*; do
  n=$(basename "$t")
  timeout 240 "$t" > "$L/t_$n.txt" 2>&1
  echo "rc=$?" >> "$L/t_$n.txt"
  echo "$n: $(grep -E '^\[  (PASSED|FAILED|  SKIPPED)' "$L/t_$n.txt" | tr '\n' ' ') $(tail -1 "$L/t_$n.txt")"
done | tee "$L/tests_summary.txt"
grep -h "FAILED\|Failure" "$L"/t_*.txt | head -20
pack
timeout 150 "$B/bin/sm90_nvfp4_grouped_gemm" --benchmark_filter="${BENCH_FILTER:-gpumode/}" \
  --benchmark_out="$L/bench.json" --benchmark_out_format=json > "$L/bench.txt" 2>&1
echo "rc=$?" >> "$L/bench.txt"
grep -E "median" "$L/bench.txt" | awk '{print $1, $2, $3, $NF}' | tee "$L/bench_summary.txt"
pack
[ "${TORCH:-1}" = 1 ] && timeout 90 python3 "$B/bin/torch_grouped_mm.py" --out "$L/torch.json" > "$L/torch.txt" 2>&1
echo "rc=$?" >> "$L/torch.txt"; tail -7 "$L/torch.txt"
pack
for tool in ${SANITIZERS-memcheck racecheck}; do
  timeout 150 compute-sanitizer --tool $tool "$B/tests/sm90_nvfp4_grouped_gemm_test" \
    --gtest_filter='*StreamK*' > "$L/$tool.txt" 2>&1
  echo "rc=$?" >> "$L/$tool.txt"; tail -3 "$L/$tool.txt"
done
pack
# SASS of the simple 8-group kernel (instruction mix of the dequant loops), if asked.
if [ -n "${SASS:-}" ]; then
  cuobjdump -sass -fun '_ZN6encore4gemm4sm9026Sm90Nvfp4GroupedGemmKernelILi8ELNS1_8ScheduleE0EEEvNS1_6ParamsIXT_EEE' \
    "$B/bin/sm90_nvfp4_grouped_gemm" > "$L/sass_simple8.txt" 2>&1
  wc -l "$L/sass_simple8.txt"
  pack
fi
# The main job (//benchmarks:replay), if asked: REPLAY_COMMIT=<commit> names the code in its JSON.
if [ -n "${REPLAY_COMMIT:-}" ]; then
  timeout 300 "$B/bin/replay" --encore_json="$L/replay.json" --encore_commit="$REPLAY_COMMIT" \
    > "$L/replay.txt" 2> "$L/replay_summary.txt"
  echo "rc=$?" >> "$L/replay_summary.txt"
  cat "$L/replay_summary.txt"
  pack
fi

#!/bin/bash
# Device run 61 (2026-11-30, session 8). Usage (device, repo root, bundle extracted at gb/):
#   bash benchmarks/results/run61.sh gb micro   # decode ceiling micro + its SASS histogram
#   bash benchmarks/results/run61.sh gb tests   # every test binary, memcheck of the stream-K tests
#   bash benchmarks/results/run61.sh gb ab      # b_head (2614265) vs the bundle's benchmark
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
case "$2" in
  micro)
    nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
      -diag-suppress=1160 -I. -o /tmp/decode benchmarks/micro/decode_ceiling.cu > "$L/decode_build.txt" 2>&1
    timeout 120 /tmp/decode > "$L/decode.txt" 2>&1; echo "rc=$?" >> "$L/decode.txt"
    cat "$L/decode.txt"
    # Static SASS opcode counts of the N = 64 kernels' bodies (per kernel).
    cuobjdump -sass /tmp/decode > "$L/decode_sass.txt" 2>&1
    awk '/Function :/ {f=$3} /^ +\/\*[0-9a-f]+\*\// {op=$2; if (op ~ /^@/) op=$3; sub(/\..*/, "", op); sub(/;/, "", op); c[f" "op]++} END {for (k in c) print k, c[k]}' \
      "$L/decode_sass.txt" | grep "Li64E" | sort > "$L/decode_sass_hist.txt"
    grep -E "LOP3|SHF|IMAD|PRMT|HMUL2|HGMMA|LDS|SHL|HFMA2" "$L/decode_sass_hist.txt" | sed 's/_Z[^ ]*DecodeILi64ELi\([0-9]\)E[^ ]*/N64_dec\1/'
    pack ;;
  tests)
    SANITIZERS=memcheck SAN_FILTER='*StreamK*' SAN_TIMEOUT=240 bash "$(dirname "$0")/run23.sh" "$1" tests ;;
  ab)
    F=${FILTER:-'gpumode/s./auto/it|fewtiles/.*/auto/it'}
    for round in 1 2; do
      for v in head new; do
        b="$B/b_$v"; [ "$v" = new ] && b="$B/bin/sm90_nvfp4_grouped_gemm"
        timeout 150 "$b" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
          --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
        echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
      done
      pack
    done ;;
esac

#!/bin/bash
# Run 208 (session 31): every test binary at f7e59fd (the threaded reference: how long the kernel
# test takes now), then //benchmarks:replay in alternated processes with and without address-space
# randomization (setarch -R), pinned to one core as runs 204 and 206: do the per-call hit's bad
# episodes follow the process's address layout?
# Here: tools/gpu_bundle.sh gpu_s31 at f7e59fd, packed as gpu_s31.tar.xz (carried). There (repo root):
#   bash benchmarks/results/2026-12-02_run208_reference_aslr/run208.sh [PAIRS]
[ -d gb/gpu_s31 ] || { mkdir -p gb && tar xJf gpu_s31.tar.xz -C gb; }
B=gb/gpu_s31
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs208
mkdir -p $L/replay $L/tests
pack() { tar cJf ${OUT:-/tmp/out}/logs208.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nproc;
  cat /proc/sys/kernel/randomize_va_space; setarch -R true && echo "setarch -R works"; } > $L/env.txt 2>&1
cat $L/env.txt
for t in $B/tests/*; do
  n=$(basename $t)
  s0=$(date +%s.%N)
  timeout 400 $t > $L/tests/$n.txt 2>&1
  rc=$?
  echo "$n rc=$rc seconds=$(echo "$(date +%s.%N) - $s0" | bc) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/tests/$n.txt | tr '\n' ' ')"
done
grep -h -A3 'Failure' $L/tests/*.txt | head -20
grep -h -E '^\[       OK \]' $L/tests/sm90_nvfp4_grouped_gemm_test.txt | sort -t'(' -k2 -n | tail -8
pack
for i in $(seq 1 ${1:-8}); do
  for v in aslr noaslr; do
    pre=$([ $v = noaslr ] && echo "setarch -R" || echo "")
    timeout 60 $pre taskset -c 5 $B/bin/replay --encore_json=$L/replay/${v}_$i.json \
      --encore_commit=f7e59fd > $L/replay/${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/${v}_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  done
  [ $((i % 3)) = 0 ] && pack
done
pack

#!/bin/bash
# Device run 198 (session 29): is the per-process "bad" per-call replay (runs 196-197: Encore's hit
# + 0.4-0.7 us over the harness floor in some processes, + 0.1 in others, whatever the floors'
# state; worst for the 8-group workloads) a TLB effect of Encore's scattered heap lines? 16 pairs
# of //benchmarks:replay processes alternated: plain, and with glibc's heap on transparent huge
# pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1: malloc madvises MADV_HUGEPAGE). Same binary as
# run 197 (5be7d34). The kernel's THP settings are logged.
# Usage (repo root; carry gpu_s197.tar.xz): bash benchmarks/results/2026-12-02_run198_thp_heap/run198.sh 5be7d34
C=${1:-unknown}
[ -d gb/gpu_r197 ] || { mkdir -p gb && tar xJf gpu_s197.tar.xz -C gb; }
B=gb/gpu_r197
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs198
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs198.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
{ for f in enabled defrag; do echo "$f: $(cat /sys/kernel/mm/transparent_hugepage/$f)"; done; ldd --version | head -1; uname -r; } > $L/thp.txt 2>&1
cat $L/thp.txt
for i in $(seq 1 16); do
  for arm in plain thp; do
    if [ $arm = thp ]; then export GLIBC_TUNABLES=glibc.malloc.hugetlb=1; else unset GLIBC_TUNABLES; fi
    timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/${arm}_$i.json --encore_commit=$C \
      > $L/replay/${arm}_$i.txt 2>&1 &
    pid=$!
    sleep 2
    c=$(pgrep -P $pid | head -1)
    echo "$arm $i $(grep -h AnonHugePages /proc/$c/smaps_rollup 2>/dev/null)" >> $L/anon_huge.txt
    wait $pid
    echo "$arm $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt " $L/replay/${arm}_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  done
  unset GLIBC_TUNABLES
  [ $((i % 4)) = 0 ] && pack
done
grep -h AnonHugePages /proc/meminfo >> $L/thp.txt
pack

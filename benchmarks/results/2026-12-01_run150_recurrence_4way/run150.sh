#!/bin/bash
# Device run 150 (session 21): the graph cache's recurrence and ghost tables made 4-way
# set-associative (9186239). Every graph_cache test binary on the GPU (their GPU tests run the
# executor, batches and sequences on real graphs), then one process of the main job (replay) as a
# smoke test of the per-call, batch and sequence modes with the new counter.
# Usage (repo root; carry gpu_a150.tar.xz: the six //tests/graph_cache binaries and
# //benchmarks:replay, -c opt, stripped, with libbenchmark):
#   bash benchmarks/results/2026-12-01_run150_recurrence_4way/run150.sh
mkdir -p gb && tar xJf gpu_a150.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
for t in gb/tests/*; do
  n=$(basename $t)
  timeout 60 $t > $L/$n.txt 2>&1
  echo "== $n rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
timeout 100 taskset -c 5 gb/replay --encore_json=$L/replay_1.json --encore_commit=9186239 \
  > $L/replay_1.txt 2>&1
echo "== replay rc=$?"; tail -14 $L/replay_1.txt
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .

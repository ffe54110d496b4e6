#!/bin/bash
# Device run 159b (session 23): benchmarks/micro/binding_reads.cu after its fix (run 159's first
# build read the parameter block through a generic volatile pointer and faulted).
# Usage (repo root; carry gpu_s159b.tar.xz: gpu_r159b/binding_reads, built with the command in
# its header): bash benchmarks/results/2026-12-01_run159_rebind_candidates/run159b.sh
mkdir -p gb && tar xJf gpu_s159b.tar.xz -C gb
L=/tmp/logs159b
mkdir -p $L
for i in 1 2 3; do
  timeout 60 gb/gpu_r159b/binding_reads > $L/binding_reads_$i.txt 2>&1
  echo "binding_reads $i rc=$?"; cat $L/binding_reads_$i.txt
done
tar cJf ${OUT:-/tmp/out}/logs_b.tar.xz -C $L .

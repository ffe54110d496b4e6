#!/usr/bin/env bash
# Builds the kernel benchmark and kernel test of the default build and of experiment builds
# (gemm/sm90_builds.bzl: SM90_EXPERIMENTS suffixes) into one git-ignored folder for an A/B run on
# the GPU machine with benchmarks/results/ab.sh; strips them and packs DIR.tar.xz beside DIR.
#
#   tools/ab_bundle.sh DIR [SUFFIX...]      # e.g. tools/ab_bundle.sh gpu_ab _rows128
#   # device tool, carry=["DIR.tar.xz"]: mkdir gb && tar xJf DIR.tar.xz -C gb &&
#   #   bash benchmarks/results/ab.sh gb
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$1"; shift
targets=(//benchmarks:sm90_nvfp4_grouped_gemm //tests/gemm:sm90_nvfp4_grouped_gemm_test)
for s in "$@"; do
  targets+=("//benchmarks:sm90_nvfp4_grouped_gemm$s" "//tests/gemm:sm90_nvfp4_grouped_gemm${s}_test")
done
tools/bazel build -c opt "${targets[@]}"
# The -c opt outputs by their own path: bazel-bin follows the last build of any configuration
# (run 162 copied a stale fastbuild binary through it).
opt_bin=$(tools/bazel info -c opt bazel-bin 2>/dev/null)
rm -rf "$dir" && mkdir -p "$dir/tests"
cp "$opt_bin"/benchmarks/sm90_nvfp4_grouped_gemm "$dir/b_default"
cp "$opt_bin"/tests/gemm/sm90_nvfp4_grouped_gemm_test "$dir/tests/"
for s in "$@"; do
  cp "$opt_bin/benchmarks/sm90_nvfp4_grouped_gemm$s" "$dir/b_${s#_}"
  cp "$opt_bin/tests/gemm/sm90_nvfp4_grouped_gemm${s}_test" "$dir/tests/"
done
cp /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$dir/"
chmod -R u+w "$dir" && strip "$dir"/b_* "$dir"/tests/*
tar cJf "$dir.tar.xz" -C "$dir" .
echo "$dir.tar.xz: $(ls "$dir" | tr '\n' ' ')"

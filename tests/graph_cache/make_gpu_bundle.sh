#!/bin/bash
# Builds the graph_cache test binaries (statically linked against our libraries, absl, gtest and
# the CUDA runtime; no Bazel needed where they run) and copies them into a bundle folder, then
# prints the command that runs them on a GPU machine. GPU tests skip without a GPU, so the same
# binaries also run here.
#
# Example:
#   tests/graph_cache/make_gpu_bundle.sh gpu_bundle_graph
#   # on the GPU machine, from the folder holding the bundle:
#   for t in gpu_bundle_graph/*_test; do echo "== $t"; "$t" || echo "FAILED: $t"; done
set -euo pipefail
out="${1:-gpu_bundle_graph}"
bazel build //tests/graph_cache/...
mkdir -p "$out"
for t in signature_test policy_test executor_test batch_test sequence_test backend_test; do
  cp -f "bazel-bin/tests/graph_cache/$t" "$out/"
done
echo "bundle: $out ($(du -sh "$out" | cut -f1))"
echo "run:    for t in $out/*_test; do echo \"== \$t\"; \"\$t\" || echo \"FAILED: \$t\"; done"

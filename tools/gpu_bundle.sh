#!/usr/bin/env bash
# Builds the test and benchmark binaries here (-c opt, static except libbenchmark) and copies them,
# with the shared libraries they need and a runner, into one git-ignored folder that can be run on
# a GPU machine without Bazel.
#
#   tools/gpu_bundle.sh [DIR]        # DIR defaults to gpu_bundle/
#   # on the GPU machine (e.g. the device tool with carry=["gpu_bundle"]):
#   gpu_bundle/run.sh tests          # every test binary; exits non-zero if any fails
#   gpu_bundle/run.sh sanitize       # the GPU tests under compute-sanitizer memcheck + racecheck
#   gpu_bundle/run.sh replay [ARGS]  # the main benchmark
#   gpu_bundle/run.sh bench NAME [ARGS]
# It also packs DIR.tar.xz for the device tool's carry: the benchmarks, and only the test binaries
# that skip something on this machine (a test binary whose every test passes without a GPU gains
# nothing from the device). The device tool refused the whole bundle (11 MB packed) as a working
# tree over 64 MiB (session 31); the GPU part is ~4.5 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-gpu_bundle}"

tests=$(tools/bazel query 'kind(cc_test, //tests/...) except attr(tags, manual, //tests/...)' 2>/dev/null)
benches=$(tools/bazel query 'kind(cc_binary, //benchmarks/...) except attr(tags, manual, //benchmarks/...)' 2>/dev/null || true)
# shellcheck disable=SC2086
tools/bazel build -c opt $tests $benches
# The -c opt outputs by their own path: bazel-bin follows the last build of any configuration
# (run 162 copied a stale fastbuild binary through it).
opt_bin=$(tools/bazel info -c opt bazel-bin 2>/dev/null)

rm -rf "$dir"
mkdir -p "$dir/tests" "$dir/bin"
for t in $tests; do
  path="$opt_bin/$(echo "${t#//}" | tr ':' '/')"
  cp "$path" "$dir/tests/$(basename "$path")"
done
for b in $benches; do
  path="$opt_bin/$(echo "${b#//}" | tr ':' '/')"
  cp "$path" "$dir/bin/$(basename "$path")"
done
cp benchmarks/*.py "$dir/bin/" 2>/dev/null || true
cp /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$dir/"

cat > "$dir/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled binaries (see tools/gpu_bundle.sh).
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
what="${1:-tests}"; shift || true
case "$what" in
  tests)
    rc=0
    for t in "$here"/tests/*; do
      echo "=== $(basename "$t")"
      "$t" "$@" || rc=1
    done
    exit $rc ;;
  sanitize)
    rc=0
    for t in "$here"/tests/*; do
      for tool in memcheck racecheck; do
        echo "=== compute-sanitizer --tool $tool $(basename "$t")"
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" "$@" || rc=1
      done
    done
    exit $rc ;;
  replay) exec "$here/bin/replay" "$@" ;;
  bench) name="$1"; shift; exec "$here/bin/$name" "$@" ;;
  *) echo "usage: run.sh tests|sanitize|replay|bench NAME [args]" >&2; exit 2 ;;
esac
RUN
chmod +x "$dir/run.sh"
du -sh "$dir"

# The device tool's carry: DIR.tar.xz with the GPU test binaries only.
pack=$(mktemp -d)
name=$(basename "$dir")
mkdir -p "$pack/$name/tests"
cp -r "$dir/bin" "$dir/run.sh" "$dir/libbenchmark.so.1debian" "$pack/$name/"
for t in "$dir"/tests/*; do
  out=$("$t" 2>&1 || true)  # (not piped into grep -q: pipefail would read its early exit as a miss)
  if grep -q '^\[  SKIPPED \]' <<<"$out"; then cp "$t" "$pack/$name/tests/"; fi
done
XZ_OPT=-9e tar cJf "$dir.tar.xz" -C "$pack" "$name"
rm -rf "$pack"
echo "$dir.tar.xz: $(du -h "$dir.tar.xz" | cut -f1), $(tar tJf "$dir.tar.xz" | grep -c '/tests/.') test binaries"

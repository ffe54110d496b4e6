"""The sm90 kernel builds' compile-time switches, shared by gemm/BUILD (kernels and runners),
benchmarks/BUILD and tests/gemm/BUILD (the binaries that include the parameter header)."""

# Experiment builds (manual; each gets :grouped_gemm<suffix> in gemm/BUILD and a benchmark/test
# target of the same suffix, and its own runner compiled with the same flags: run 34's
# nine-raw-stage build faulted when its runner, built without them, reserved shared memory for
# six). _rows128 changes
# TileShape (token tiles <= 128 rows, 4 fp16 token stages): its test and benchmark get the flag
# too (SM90_HEADER_COPTS below). Run 40: -1..-5% on s2/s3 and few-tile shapes, +4..12% on s0/s1.
# _fearly: the fused pre-pass's weight producer loading before griddepcontrol.wait (the default
# before session 16; Run then launches fused plans without PDL; run 98 with PDL: shape 1 -3.2%).
# _parts2: every kernel's stage in 2 parts of 4 k-steps (the simple kernel's default since run
# 99); _sparts4: the simple kernel's in 4 parts as well (the default before run 99).
# _wg3: three consumer warpgroups (512 threads, 192 x <= 192 tiles; changes TileShape too).
# _wg4: four (640 threads, 256 x <= 128 tiles, 4 raw stages): half the token bytes per FLOP of the
# default and four warpgroups to hide the decode at narrow widths (run 61's micro: 63 -> 73-79% at
# width 64).
# (No build for ncu's source view: every build passes -lineinfo, tools/cuda.bzl; run 78 used the
# default one.) Flags other than -D reach nvcc only, not the runner.
# The _exp_* builds are for measurement only: _exp_notok/_exp_nowgt/_exp_none/_exp_epi* compute wrong results
# on purpose (they remove one part of the work to measure what it costs); _exp_stamps computes the
# right results and appends %globaltimer stamps of kernel events to a device log
# (kernels/internal/stamps.cuh; the benchmark's stamps/ family prints each call's time line).
SM90_EXPERIMENTS = [
    ("_nopipe", ["-DENCORE_SM90_CONSUMER_PIPE=0"]),
    ("_parts2", ["-DENCORE_SM90_PIPE_PARTS=2"]),
    ("_sparts4", ["-DENCORE_SM90_SIMPLE_PIPE_PARTS=4"]),
    ("_rows128", ["-DENCORE_SM90_MAX_TOKEN_ROWS=128"]),
    ("_exp_notok", ["-DENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT=1"]),
    ("_exp_nowgt", ["-DENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT=1"]),
    ("_exp_stamps", ["-DENCORE_SM90_EXP_STAMPS=1"]),
    # Cycle counters of the consumers' waits, drain, loop and epilogue (stamp_log.h WaitCounter;
    # the benchmark prints them as shares of the loop: `wait_*` counters).
    ("_exp_waits", ["-DENCORE_SM90_EXP_WAITS=1"]),
    ("_pgrid", [
        "-DENCORE_SM90_PREPASS_THREADS=1024",
        "-DENCORE_SM90_PREPASS_GRID_STRIDE=1",
    ]),
    ("_fearly", ["-DENCORE_SM90_FUSED_WEIGHTS_WAIT=0"]),
    # (Their simple kernels keep 4 parts: with 2, _wg4's spills 272 bytes at 104 registers.)
    ("_wg3", ["-DENCORE_SM90_CONSUMER_WGS=3", "-DENCORE_SM90_SIMPLE_PIPE_PARTS=4"]),
    ("_wg4", ["-DENCORE_SM90_CONSUMER_WGS=4", "-DENCORE_SM90_SIMPLE_PIPE_PARTS=4"]),
    ("_exp_none", [
        "-DENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT=1",
        "-DENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT=1",
    ]),
    # The persistent and stream-K kernels' epilogue without its copy-out (stmatrix and one barrier
    # a chunk: what the consumers would keep if other warps stored C; run 123).
    ("_exp_epi1", ["-DENCORE_SM90_EXP_EPILOGUE=1"]),
    # C by TMA stores in the pre-pass kernels with <= 8 groups and static M (runs 127-128: lost).
    ("_tmastore", ["-DENCORE_SM90_TMA_STORE=1"]),
    # The weight producer triggers without waiting first (the default before session 19).
    ("_earlytrig", ["-DENCORE_SM90_PRODUCER_WAITS_LATE=0"]),
    # The token pre-pass before run 133: the shuffle exchange and the 64-bit unit index.
    ("_shuffle", ["-DENCORE_SM90_PREPASS_STAGE=0", "-DENCORE_SM90_PREPASS_U32_INDEX=0"]),
    # The GEMM waits for the pre-pass blocks' done count instead of the pre-pass grid (run 133:
    # lost on every GPU MODE shape).
    ("_ready", ["-DENCORE_SM90_PREPASS_READY=1"]),
    # The ready count for early pre-passes (ENCORE_SM90_EARLY_READY): the GEMM after one computes
    # beside the previous GEMM's last CTAs (not stream-K plans; independent calls only). Run 183,
    # as multi-call graphs prepare the calls, against the default build's early pre-passes: GPU
    # MODE shapes 0-3 +0.7 / -0.3 / +0.6 / 0%, one_tile -0.6%, decode8 +0.8%: no gain.
    ("_early_ready", ["-DENCORE_SM90_PREPASS_READY=1", "-DENCORE_SM90_EARLY_READY=1"]),
    # The simple kernel without the drain between k-blocks, on <= 128-row token tiles (4 fp16
    # token stages: the later release has stages to spare). Run 148: against _rows128 (the same
    # tile with the drain) GPU MODE shape 2 -0.3 us, shape 3 -0.2..-0.3, decode8 -1.7 (-6%); but
    # _rows128 itself is 0.2-0.5 us slower than the default on shapes 2-3, so against the default
    # shape 2 +0.2, shape 3 equal, decode8 -1.2. With the default 256-row tile ptxas puts the
    # simple kernels' accumulators in local memory (672-704-byte frames): not built; streaming
    # only its <= 128-token tiles, on its 2 token stages, lost (run 149: s2 +5%, decode8 +16%). (Like
    # _rows128, its in-kernel-token simple kernels spill 36 bytes: NoKernelUsesLocalMemory fails.)
    ("_r128sstream", ["-DENCORE_SM90_MAX_TOKEN_ROWS=128", "-DENCORE_SM90_SIMPLE_STREAM=1"]),
    # The default tile, the simple kernel splitting its 2 token stages into 4 for tiles <= 128
    # tokens (_ring4), and streaming those tiles too (_ring4s) in every simple kernel. Run 151:
    # _ring4 equal to the default, _ring4s decode8 -5.6% but GPU MODE shape 2 +0.8%; run 152:
    # by width -5.3% at 16 rows, +0.3..+1.3% at 32-64, -1.5 / -3.8% at 96 / 128. The default
    # build has _ring4s's simple kernel as its streamed instantiation, chosen for plans of 16-row
    # and 128-row tiles, streaming only those two widths (RunnerOptions::stream_simple_tiles).
    ("_ring4", ["-DENCORE_SM90_SIMPLE_RING4=1"]),
    ("_ring4s", ["-DENCORE_SM90_SIMPLE_RING4=1", "-DENCORE_SM90_SIMPLE_STREAM=1"]),
    # Each descriptor fetched by its first TMA (ENCORE_SM90_PREFETCH_MAPS = 0: the default before
    # run 191, which measured the prefetch as the manual build _mapprefetch).
    ("_nomapprefetch", ["-DENCORE_SM90_PREFETCH_MAPS=0"]),
    # Token tiles rounded to 8 rows instead of 16 (wgmma n in steps of 8; TileShape::kMGranule):
    # GPU MODE shape 1's groups pad 1040 token columns instead of 1088. Run 205: widths it runs
    # unpadded 1-4% faster (shape 1 -1.1%, decode M = 40 / 72 -2..-3%), every unchanged width
    # 0.6-1% slower (the 32-case width switch), shape 0 +1.0%; GPU MODE geomean equal. Not adopted.
    # Run 207: a MoE layer of 64 experts with 48-84 tokens each (5.8% fewer padded columns) -0.7%.
    ("_n8", ["-DENCORE_SM90_M_GRANULE=8"]),
    # 8 or 9 raw (weight) stages in the pre-pass kernels instead of 6 (run 228).
    ("_raw8", ["-DENCORE_SM90_PREPASS_RAW_STAGES=8"]),
    ("_raw9", ["-DENCORE_SM90_PREPASS_RAW_STAGES=9"]),
    # Widths <= 128 in 2 parts a stage in every kernel (the persistent and stream-K kernels keep 4
    # above 128): run 226's micro table; run 229.
    ("_pw2", ["-DENCORE_SM90_NARROW_PARTS=2"]),
]

# The manual builds, each a runner compiled with its kernels' flags (they may change TileShape or
# Pipeline, which the runner sizes launches by) and :grouped_gemm<suffix> = runner + kernels.
SM90_MANUAL_BUILDS = [
    ("_wide", ["-DENCORE_SM90_WIDE_N=1"]),
] + SM90_EXPERIMENTS

# Builds whose switches change the shared parameter header's constants (TileShape, the pre-pass
# launch shape, the stream-K tables, the stamp log): the tests and benchmarks that include it are
# compiled with the same switches as their kernels and runner.
SM90_HEADER_SUFFIXES = [
    "_wide",
    "_rows128",
    "_r128sstream",
    "_exp_stamps",
    "_exp_waits",
    "_pgrid",
    "_wg3",
    "_wg4",
    "_tmastore",
    "_shuffle",
    "_earlytrig",  # (sm90::kEarlyPrepassBuilt: no early pre-passes)
    "_n8",
    "_raw8",
    "_raw9",
]
SM90_HEADER_COPTS = {s: f for s, f in SM90_MANUAL_BUILDS if s in SM90_HEADER_SUFFIXES}
SM90_MANUAL_SUFFIXES = [s for s, _ in SM90_MANUAL_BUILDS]

# The manual builds whose kernels compute the right results (each gets a kernel test target in
# tests/gemm/BUILD); the _exp_notok / _exp_nowgt / _exp_none / _exp_epi* builds skip work on
# purpose.
SM90_WRONG_ON_PURPOSE = ["_exp_notok", "_exp_nowgt", "_exp_none", "_exp_epi1"]
SM90_TESTED_SUFFIXES = [s for s in SM90_MANUAL_SUFFIXES if s not in SM90_WRONG_ON_PURPOSE]

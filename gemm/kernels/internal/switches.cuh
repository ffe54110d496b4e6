// Compile-time switches of the sm90 NVFP4 kernels (each build of gemm/BUILD's SM90_VARIANTS, the
// manual ones in gemm/sm90_builds.bzl, sets some with -D; its runner gets the same flags).
// The two that change tile and shared-memory sizes the runner must know, ENCORE_SM90_WIDE_N and
// ENCORE_SM90_MAX_TOKEN_ROWS, live in sm90_nvfp4_grouped_gemm_params.h.
//
// Example:
//   nvcc ... -DENCORE_SM90_CONSUMER_PIPE=0   # the consumer without its fragment pipeline
#pragma once

#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"  // ENCORE_SM90_WIDE_N

#ifndef ENCORE_SM90_WEIGHTS_NORMAL_FP16
// 0: weight fragments are e2m1*scale*2^-7 (one multiply; may be fp16 subnormal, which the tensor
//    cores must honor; the epilogue multiplies by 2^7). 1: exact e2m1*scale (two multiplies).
#define ENCORE_SM90_WEIGHTS_NORMAL_FP16 0
#endif
#ifndef ENCORE_SM90_TOKEN_ONE_MUL
// In-kernel token conversion (TokenSource::kInKernel) only; the pre-pass writes exact values.
// 1 (the wide build's default, except weights-normal): token values are e2m1*scale*2^-7 in one
//    multiply (scale*2^7 per 16 k; fp16 subnormals possible, as for the weight fragments);
// 0 (the narrow default, as measured in runs 6 and 23): exact e2m1*scale (two multiplies).
#define ENCORE_SM90_TOKEN_ONE_MUL (ENCORE_SM90_WIDE_N && !ENCORE_SM90_WEIGHTS_NORMAL_FP16)
#endif
#ifndef ENCORE_SM90_CONSUMER_PIPE
// 1 (default since run 25: -3% on GPU MODE shapes 1-3, -5% on 16-row tiles, 0 on shape 0): a
//    stage's 8 k-steps run in parts of 2 with double-buffered weight fragments: part p+1's
//    fragments are built while part p's wgmmas run (wgmma.wait_group 1). 0: parts of 8/kStrips
//    steps, each built, run and waited for in turn (the two consumer warpgroups overlap).
// (Runs 33 and 39 measured a third mode, one stream of parts across a tile's k-blocks with the
// next k-block's weights loaded during the last part: +2..+5% slower in the simple kernels (run
// 39), and ptxas serialized the persistent kernels' wgmmas with it (C7512, +18% on s1); removed.
// Run 41: the next k-block's weights loaded and first fragments built before the drain instead of
// after it, +2..9%; removed. The ceiling (benchmarks/micro/wgmma_rs_ceiling.cu) puts the drain at
// 10% of the tensor pipe at width 128; moving work across it costs more in the real kernel.)
#define ENCORE_SM90_CONSUMER_PIPE 1
#endif
// (Run 235, manual build _pretest at 56b4f63: the consumers tested the next k-block's weight and
// token barriers with mbarrier.test_wait before a k-block's drain and skipped the blocking wait
// after it where the test passed: GPU MODE shapes 0-2 +3.3 / +3.6 / +5.1%, decode +4..5%, steady
// +2%, no ptxas serialization warning; removed.)
#ifndef ENCORE_SM90_PREFETCH_MAPS
// 1 (default since run 191): before its wait for the previous grid, warp 1 of every CTA requests
//    every group's tensor-map descriptors (prefetch.tensormap), so the first token load after the
//    wait (and the weight producer's first load) does not wait for its descriptor to come from
//    memory. Run 191 (manual build _mapprefetch against the default, 3 alternated rounds): decode8
//    27.16-27.25 -> 26.71-26.77 us (-1.7%), GPU MODE shape 3 -0.4%, shapes 1-2 -0.1%, shape 0
//    +0.1% (95.42-95.52 -> 95.51-95.75), one_tile and tiny equal.
// 0: each descriptor is fetched by the first TMA that uses it.
#define ENCORE_SM90_PREFETCH_MAPS 1
#endif
#ifndef ENCORE_SM90_EARLY_WEIGHTS
// 1 (default since run 40: -1..-5% on every GPU MODE and few-tile shape): with the pre-pass, the
//    weight producer does not wait for the previous grid (the pre-pass) before its TMA loads, so
//    the weight pipeline fills while the pre-pass runs; every other role still waits (token loads,
//    C stores). The pre-pass triggers the GEMM's launch only after its own griddepcontrol.wait
//    (since 8bd0f1f; run 55: no cost), so these early reads still follow the completion of the
//    kernel before the pre-pass, PDL edge or not. (Before, they could overlap it: graphs drop the
//    PDL edge in front of a call whose early reads meet an output of the graph,
//    graph_cache/internal/early_reads.h, a rule now stricter than needed except for the fused
//    pre-pass, whose weight producer reads before its own wait.) 0: every thread waits first.
#define ENCORE_SM90_EARLY_WEIGHTS 1
#endif
#ifndef ENCORE_SM90_PRODUCER_WAITS_LATE
// 1 (default since session 19): where the weight producer reads before griddepcontrol.wait
//    (ENCORE_SM90_EARLY_WEIGHTS), it waits right before its launch_dependents, so this grid's
//    trigger also says the pre-pass before it completed. 0 (manual build _earlytrig): it never
//    waits (the trigger still followed the pre-pass in practice: the consumers need its tokens).
//    Run 131 (same lease, 4 rounds): equal within 0.1 us on every GPU MODE and few-tile shape.
#define ENCORE_SM90_PRODUCER_WAITS_LATE 1
#endif
#ifndef ENCORE_SM90_PREPASS_U32_INDEX
// 1 (default since run 133): the token pre-pass finds a unit's row and k-block with one 32-bit
//    division (a group's units < 2^32: the runner refuses larger pre-passes). Run 133 alone
//    (_pre32): GPU MODE shape 0's pre-pass 7.76-7.87 vs 7.93-7.98 us, the calls equal.
// 0 (manual build _shuffle): a 64-bit division (PTX div.s64; run 132's ncu of shape 0's
//    pre-pass: 370 instructions a warp, issue-latency bound at 34% issue slots, DRAM 12%).
#define ENCORE_SM90_PREPASS_U32_INDEX 1
#endif
#ifndef ENCORE_SM90_PIPE_PARTS
// Parts per 8-step stage with the consumer pipe (2, 4 or 8; steps per part = 8 / parts): the
// default 4 (parts of 2 steps) since run 25. Runs 38-39: 2 parts -2% on s0 and few-tile shapes,
// +2..3% on s2/s3; 8 parts +3..10%.
#define ENCORE_SM90_PIPE_PARTS 4
#endif
#ifndef ENCORE_SM90_NARROW_PARTS
// > 0 (manual build _pw2): tiles of widths <= 128 run this many parts a stage in every kernel
// (the persistent and stream-K kernels' other widths keep ENCORE_SM90_PIPE_PARTS). Run 226's
// micro table (wgmma_rs_ceiling `table`, no TMA): 2 parts reach 71 / 80 / 87 / 99% of the tensor
// peak at widths 64 / 80 / 96 / 128 where 4 parts reach 68 / 72 / 75 / 87%, both 100% from 160.
// Run 229 (_pw2): persistent plans -1.1..-2.6% (decode 8 x 64 / 96 tokens at N 7168 K 2048, a MoE
// layer's 64 experts), GPU MODE shape 0 (stream-K) +0.3..+0.8%, shape 1 equal.
// 0: ENCORE_SM90_PERSISTENT_NARROW_PARTS below.
#define ENCORE_SM90_NARROW_PARTS 0
#endif
#ifndef ENCORE_SM90_PERSISTENT_NARROW_PARTS
// The persistent kernel's parts a stage at widths <= 128 (0: ENCORE_SM90_PIPE_PARTS, the default
// before session 34): 2 since run 229 (the stream-K kernel keeps 4, the simple kernel has 2).
#define ENCORE_SM90_PERSISTENT_NARROW_PARTS 2
#endif
#ifndef ENCORE_SM90_SIMPLE_PIPE_PARTS
// The simple kernel's parts per stage (ENCORE_SM90_PIPE_PARTS is the persistent and stream-K
// kernels'): 2 since run 99 (A/B of _parts2, all kernels 2 parts, against 4 parts, 3 rounds):
// shape 2 (simple, 120 tiles of 96-112 tokens) 27.0-27.1 vs 28.1-28.2 us, shape 3 (simple)
// 15.5-15.7 vs 15.6-15.7, decode8 (simple) equal; shapes 0 (stream-K) and 1 (persistent) lost
// 0.5% and 0.4% with 2 parts, so they keep 4. Manual build _sparts4: the simple kernel at 4 too.
#define ENCORE_SM90_SIMPLE_PIPE_PARTS 2
#endif
#ifndef ENCORE_SM90_PREPASS_SECTOR_STORES
// 1 (default since run 53): the token pre-pass's 4 threads of a unit exchange their converted
//    chunks so each store instruction writes full 32-byte sectors (sm90_nvfp4_token_prepass.cuh):
//    the pre-pass alone 13.6 -> 7.7 us on GPU MODE shape 0, 5.8 -> 4.2 on shape 2; calls -1..-4.5%.
// 0: each thread stores its own 64 contiguous bytes (a warp instruction: 16 bytes every 64).
#define ENCORE_SM90_PREPASS_SECTOR_STORES 1
#endif
#ifndef ENCORE_SM90_BYTE_DECODE
// 1 (default since run 62): the fp16 high bytes of four e2m1 codes at once, then one PRMT per
//    half2 (E2m1HighBytes / E2m1SlotFromHighBytes: ~2.75 ALU ops per half2; slots pair other
//    nibbles than the pair form, so the weights and the tokens (pre-pass, in-kernel dequant)
//    switch together). Run 62 (A/B): GPU MODE shapes -1.2..-2.8%, 8 x M = 16 -6%, the main loop
//    per k-block -3.6% at width 64, -2.8% at 128, equal at 256.
// 0: a nibble pair at a time (E2m1PairToHalf2Shifted: 2 shifts + 2 LOP3 per half2; pair i =
//    nibbles {i, i + 4}).
#define ENCORE_SM90_BYTE_DECODE 1
#endif
// The simple kernel's consumers without the drain between k-blocks (consumer.cuh ConsumerLoop's
// kStream; 2 parts a stage only). 0: drain every k-block (the default).
#ifndef ENCORE_SM90_SIMPLE_STREAM
#define ENCORE_SM90_SIMPLE_STREAM 0
#endif
// The simple kernel's fp16 token ring with pre-pass tokens: 1 splits each of the default's 2
// stages (kMaxBlockM = 256 rows) in two for a CTA whose group's token tiles are <= 128 rows (4
// stages of 128-row atoms; other tiles keep 2), and with ENCORE_SM90_SIMPLE_STREAM only they stream
// (run 149: streaming on 2 stages starves the token producer). 0: 2 stages (the default).
#ifndef ENCORE_SM90_SIMPLE_RING4
#define ENCORE_SM90_SIMPLE_RING4 0
#endif
// Measurement-only switches (wrong results; benchmarks only): skip the token dequant (the token
// stage keeps whatever it held) or the weight dequant (raw packed words used as fragments).
#ifndef ENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT
#define ENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT 0
#endif
#ifndef ENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT
#define ENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT 0
#endif
// The persistent and stream-K kernels' epilogue (measurement only): 1 keeps the packing, the
// stmatrix and one barrier a chunk but stores nothing (what the consumers would keep if other
// warps copied the staged chunks out; run 123: GPU MODE shape 1 -3.1 us, shape 0 -2.4 us).
// (Skipping the whole epilogue let the compiler drop the accumulators' work: not a measurement.)
#ifndef ENCORE_SM90_EXP_EPILOGUE
#define ENCORE_SM90_EXP_EPILOGUE 0
#endif
#if ENCORE_SM90_TOKEN_ONE_MUL && ENCORE_SM90_WEIGHTS_NORMAL_FP16
#error "ENCORE_SM90_TOKEN_ONE_MUL relies on fp16 subnormals; the weights-normal build avoids them"
#endif

// Compile-time switches of the sm90 NVFP4 kernels (each build of gemm/BUILD's SM90_VARIANTS and
// SM90_EXPERIMENTS sets some with -D; the runner of an experiment build gets the same flags).
// The two that change shared-memory sizes the runner must know, ENCORE_SM90_WIDE_N and
// ENCORE_SM90_EPI_OFFLOAD, live in sm90_nvfp4_grouped_gemm_params.h.
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
// (Run 33 measured a third mode, one stream of parts across a tile's k-blocks with the next
// k-block's weights loaded during the last part: +3..+8% slower in the simple kernels, and ptxas
// serialized the persistent kernels' wgmmas with it (C7512); removed.)
#define ENCORE_SM90_CONSUMER_PIPE 1
#endif
#ifndef ENCORE_SM90_CONSUMER_STREAM
// 1: the consumer pipe's parts run as one stream across a tile's k-blocks (wait_group 1 only; a
//    token stage is released after the next stage's first part, the next k-block's weights are
//    loaded while the last part runs); 0 (default): every k-block ends with wait_group 0 (the
//    drain). Run 38's ceiling (benchmarks/micro/wgmma_rs_ceiling.cu): the drain costs 10% of the
//    tensor pipe at width 128 with nothing else in the CTA.
#define ENCORE_SM90_CONSUMER_STREAM 0
#endif
#ifndef ENCORE_SM90_EARLY_WEIGHTS
// 1: with the pre-pass, the weight producer does not wait for the previous grid (the pre-pass)
//    before its TMA loads: weights and weight scales are never written by the pre-pass, so the
//    weight pipeline fills while the pre-pass runs; every other role still waits (token loads,
//    C stores). 0 (default): every thread waits first.
#define ENCORE_SM90_EARLY_WEIGHTS 0
#endif
#ifndef ENCORE_SM90_PIPE_PARTS
// Parts per 8-step stage with the consumer pipe (2, 4 or 8; steps per part = 8 / parts): the
// default 4 (parts of 2 steps) since run 25.
#define ENCORE_SM90_PIPE_PARTS 4
#endif
// Measurement-only switches (wrong results; benchmarks only): skip the token dequant (the token
// stage keeps whatever it held) or the weight dequant (raw packed words used as fragments).
#ifndef ENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT
#define ENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT 0
#endif
#ifndef ENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT
#define ENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT 0
#endif
#if ENCORE_SM90_TOKEN_ONE_MUL && ENCORE_SM90_WEIGHTS_NORMAL_FP16
#error "ENCORE_SM90_TOKEN_ONE_MUL relies on fp16 subnormals; the weights-normal build avoids them"
#endif

// sm_90a NVFP4 grouped GEMM: C[m][n] (fp16) = sum_k A[m][k] * B[n][k], A and B e2m1 with e4m3
// scales per 16 k (blocked 128x4 layout).
//
// Hopper has no FP4 tensor cores, so both operands are dequantized exactly to fp16 (e2m1 x e4m3
// products have <= 6 significant bits, within fp16 normals) and multiplied by wgmma with fp32
// accumulation. The transposed product D[n][m] = B.A^T is computed:
//   - weights (B, N side, the large operand) are the register-sourced wgmma A operand: each
//     consumer warpgroup dequantizes its kStrips 64-row strips straight into A fragments;
//   - tokens (A, M side, small and ragged) are the wgmma B operand (n = 16..kMaxBlockM chosen
//     per tile, the k loop instantiated per width and dispatched once per tile):
//     a dequant warp group writes them as fp16 into shared memory in the 128B-swizzled K-major
//     layout, so small M wastes little.
// Roles (warp specialization, one CTA = 3 warpgroups):
//   warp 0 lane 0: TMA producer (packed e2m1 tiles by tensor maps, scales by 1D bulk copies);
//   warps 1-3:     token dequant (raw stage -> fp16 token stage), TokenSource::kInKernel;
//   warp 1 lane 0: fp16 token-tile TMA producer instead, TokenSource::kPrepass (the tokens were
//                  converted once per call by sm90_nvfp4_token_prepass.cuh; warps 2-3 idle);
//   warpgroups 1-2: weight dequant + wgmma + epilogue (staged through shared memory, 16-byte
//                  coalesced stores, masked to the valid rows and columns).
// Pipelines: raw stages (inputs_arrived = raw_full, inputs_finished = raw_empty) and fp16 token
// stages (tokens_ready = tok_full, tokens_finished = tok_empty), all mbarriers.
//
// NOTES: the k order inside a 128-k stage is permuted (any consistent permutation of the sum is
// fine): wgmma step s (16 k), position p (0..15) holds actual k
//   32*((p%8)/2) + 8*(s/2) + 2*(s%2) + p/8 + 4*(p%2)
// so a consumer thread (lane%4 = c) reads its row's bytes [16c, 16c+16) as one 16-byte load
// covering all 8 steps, and every half2 fragment is one nibble pair {i, i+4} of one 32-bit word.
// The token dequant writes fp16 in exactly that order (see StoreTokenRow).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"
#include "gemm/kernels/internal/token_dequant.cuh"
#include "gemm/kernels/internal/wgmma_rs.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

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

namespace encore::gemm::sm90 {

enum class WarpRole { kProducer, kTokenDequant, kTokenProducer, kIdle, kConsumer };

// NOTES: setmaxnreg only moves registers inside the CTA's launch allocation: with
// __launch_bounds__(384, 1) every thread starts with 168 (65536 / 384 rounded down to 8), so
// producer + 2 x consumer must stay <= 3 x 168 = 504, or setmaxnreg.inc waits forever.
inline constexpr uint32_t kProducerRegs = 80;
inline constexpr uint32_t kConsumerRegs = 208;
static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * (65536 / TileShape::kThreads / 8 * 8),
              "register reallocation exceeds the launch allocation (deadlock)");
inline constexpr int kDequantThreads = 96;
inline constexpr int kConsumerThreads = 256;

// Shared memory, from the 1024-byte aligned base: raw stages | fp16 token stages | epilogue
// staging | barriers. Everything the async proxy, the mbarriers and the consumers' loads touch is
// addressed in the shared window (32-bit: one base register plus compile-time offsets); plain
// generic pointers remain for the in-kernel token dequant and the epilogue staging.
template <TokenSource kSrc>
struct SmemLayout {
  using P = Pipeline<kSrc>;
  using T = TileShape;
  static constexpr uint32_t kTok = P::kRawStages * P::kRawStageBytes;
  static constexpr uint32_t kEpi = kTok + P::kTokStages * T::kTokStageBytes;
  static constexpr uint32_t kRawFull = kEpi + T::kEpilogueBytes;  // inputs_arrived
  static constexpr uint32_t kRawEmpty = kRawFull + 8 * P::kRawStages;  // inputs_finished
  static constexpr uint32_t kTokFull = kRawEmpty + 8 * P::kRawStages;  // tokens_ready
  static constexpr uint32_t kTokEmpty = kTokFull + 8 * P::kTokStages;  // tokens_finished
  // stream-K: the arrival count seen by consumer thread 0, for all consumers
  static constexpr uint32_t kSkArrivals = kTokEmpty + 8 * P::kTokStages;
  static_assert(kSkArrivals + 4 - kRawFull <= T::kBarrierBytes, "barrier area too small");

  uint8_t* base;  // generic
  uint32_t s;     // shared window

  __device__ explicit SmemLayout(uint8_t* b) : base(b), s(SmemAddr(b)) {}
  __device__ uint32_t RawFull(int i) const { return s + kRawFull + 8 * i; }
  __device__ uint32_t RawEmpty(int i) const { return s + kRawEmpty + 8 * i; }
  __device__ uint32_t TokFull(int i) const { return s + kTokFull + 8 * i; }
  __device__ uint32_t TokEmpty(int i) const { return s + kTokEmpty + 8 * i; }
  // Stage i: [weights | weight scales | (in kernel) tokens | token scales].
  __device__ uint32_t RawWeights(int i) const { return s + i * P::kRawStageBytes; }
  __device__ uint32_t SfWeights(int i) const { return RawWeights(i) + T::kRawWeightBytes; }
  __device__ uint32_t RawTokens(int i) const { return SfWeights(i) + T::kSfWeightBytes; }
  __device__ uint32_t SfTokens(int i) const { return RawTokens(i) + T::kRawTokenBytes; }
  // fp16 token stage i: 2 atoms x [kMaxBlockM rows][128 bytes], 128B swizzle.
  __device__ uint32_t Tok(int i) const { return s + kTok + i * T::kTokStageBytes; }
  __device__ uint8_t* Generic(uint32_t a) const { return base + (a - s); }
  __device__ uint16_t* Epi() const { return reinterpret_cast<uint16_t*>(base + kEpi); }
  __device__ uint32_t EpiAddr() const { return s + kEpi; }
  __device__ int* SkArrivals() const { return reinterpret_cast<int*>(base + kSkArrivals); }
};

// ---------------------------------------------------------------------------------------------
// Raw stages: packed weights + weight scales, and (in kernel) packed tokens + token scales.
template <TokenSource kSrc>
__device__ __forceinline__ void ProducerTile(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                             const GroupInfo& gi, const TileCoord& tc,
                                             const SmemLayout<kSrc>& sm, uint32_t& it, int kb0,
                                             int kb1, uint64_t pol_first, uint64_t pol_last) {
  using T = TileShape;
  using P = Pipeline<kSrc>;
  const int k64 = gi.k / 64;
  const int mblk0 = tc.m0 / 128;
  const int nblk = (tc.m0 + tc.nw - 1) / 128 - mblk0 + 1;
  const int wblk = min(T::kStrips, (gi.n - tc.n0 + 127) / 128);
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int s = it % P::kRawStages;
    MbarWait(sm.RawEmpty(s), ((it / P::kRawStages) & 1) ^ 1);
    const uint32_t sf_bytes = T::HalfBlock(gi.k, kb) ? 512 : 1024;
    MbarArriveExpectTx(sm.RawFull(s),
                       P::kPrepass
                           ? T::kRawWeightBytes + sf_bytes * wblk
                           : T::kRawWeightBytes + T::kRawTokenBytes + sf_bytes * (wblk + nblk));
    TmaLoad2D(sm.RawWeights(s), map_b, sm.RawFull(s), kb * 64, tc.n0, pol_first);
    if (!P::kPrepass) {
      TmaLoad2D(sm.RawTokens(s), map_a, sm.RawFull(s), kb * 64, tc.m0, pol_last);
    }
    // Weight scale blocks past N (wide tiles, N an odd multiple of 128) are not loaded: their
    // rows' outputs are masked in the epilogue.
    for (int b = 0; b < wblk; ++b) {
      BulkLoad(sm.SfWeights(s) + b * 1024,
               gi.sfb + (static_cast<size_t>(tc.n0 / 128 + b) * k64 + 2 * kb) * 512, sf_bytes,
               sm.RawFull(s), pol_first);
    }
    for (int b = 0; b < (P::kPrepass ? 0 : nblk); ++b) {
      BulkLoad(sm.SfTokens(s) + b * 1024,
               gi.sfa + (static_cast<size_t>(mblk0 + b) * k64 + 2 * kb) * 512, sf_bytes,
               sm.RawFull(s), pol_last);
    }
  }
}

// TokenSource::kPrepass: the fp16 token stages, two 64-k atoms of tile_rows rows per k-block,
// straight from the pre-pass workspace (128B swizzle by the tensor map: the layout the token
// dequant warps write in kernel; rows past the group are zero filled and never stored).
__device__ __forceinline__ void TokenProducerTile(const CUtensorMap* map_a, const GroupInfo& gi,
                                                  const TileCoord& tc,
                                                  const SmemLayout<TokenSource::kPrepass>& sm,
                                                  uint32_t& it, int kb0, int kb1,
                                                  uint64_t policy) {
  using P = Pipeline<TokenSource::kPrepass>;
  const uint32_t atom_bytes = static_cast<uint32_t>(gi.tile_rows) * 128;
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int ts = it % P::kTokStages;
    MbarWait(sm.TokEmpty(ts), ((it / P::kTokStages) & 1) ^ 1);
    MbarArriveExpectTx(sm.TokFull(ts), 2 * atom_bytes);
    TmaLoad2D(sm.Tok(ts), map_a, sm.TokFull(ts), kb * 128, tc.m0, policy);
    TmaLoad2D(sm.Tok(ts) + TileShape::kTokAtomBytes, map_a, sm.TokFull(ts), kb * 128 + 64, tc.m0,
              policy);
  }
}

__device__ __forceinline__ void DequantTile(const GroupInfo& gi, const TileCoord& tc,
                                            const SmemLayout<TokenSource::kInKernel>& sm,
                                            uint32_t& it, int kb0, int kb1, int dt) {
  using P = Pipeline<TokenSource::kInKernel>;
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int s = it % P::kRawStages;
    const int ts = it % P::kTokStages;
    MbarWait(sm.RawFull(s), (it / P::kRawStages) & 1);
    MbarWait(sm.TokEmpty(ts), ((it / P::kTokStages) & 1) ^ 1);
    const bool half = TileShape::HalfBlock(gi.k, kb);
    for (int r = dt; r < (ENCORE_SM90_EXP_SKIP_TOKEN_DEQUANT ? 0 : tc.nw); r += kDequantThreads) {
      TokenRow t;
      LoadTokenRow(t, sm.Generic(sm.RawTokens(s)), sm.Generic(sm.SfTokens(s)), r, tc.m0, half);
      StoreTokenRow<ENCORE_SM90_TOKEN_ONE_MUL>(t, sm.Generic(sm.Tok(ts)), r);
    }
    FenceProxyAsyncShared();
    MbarArrive(sm.TokFull(ts));
    MbarArrive(sm.RawEmpty(s));
  }
}

// A stage's 8 wgmma k-steps run in kParts parts (wide tiles: two parts of 4 steps, so the
// fragments of both strips fit in 32 registers); strip j accumulates into acc[64j..] (wide tiles
// have nw <= 128, i.e. <= 64 accumulators per strip).
inline constexpr int kParts = ENCORE_SM90_CONSUMER_PIPE ? 4 : TileShape::kStrips;
inline constexpr int kPartSteps = 8 / kParts;
template <int kSteps>
using FragOf = uint32_t[TileShape::kStrips][kSteps][4];
using Frag = FragOf<kPartSteps>;


// NOTES: `stage_desc` is the descriptor of the token stage's base; step s's operand starts
// (s / 4) atoms + (s % 4) x 32 bytes further, a compile-time constant added to the descriptor's
// start-address field (address >> 4 in bits 0-13: shared addresses < 2^18 never carry out). Run 26
// (ncu): building each descriptor from the address took ~20% of the consumers' instructions.
template <int N, int kSteps>
__device__ __forceinline__ void MmaSteps(float* acc, const FragOf<kSteps>& frag,
                                         uint64_t stage_desc, int first) {
#pragma unroll
  for (int ls = 0; ls < kSteps; ++ls) {
    const int s = first + ls;
    const int offset = (s / 4) * TileShape::kTokAtomBytes + (s % 4) * 32;  // bytes, unrolled
    const uint64_t desc = stage_desc + static_cast<uint64_t>(offset >> 4);
#pragma unroll
    for (int j = 0; j < TileShape::kStrips; ++j) WgmmaRS<N>(acc + 64 * j, frag[j][ls], desc);
  }
}

// Weight fragments of steps [first, first + kSteps): a = packed rows (r0, r0 + 8) per strip,
// sl = broadcast scales.
template <int kSteps>
__device__ __forceinline__ void BuildSteps(FragOf<kSteps>& frag,
                                           const uint32_t (&a)[TileShape::kStrips][2][4],
                                           const uint32_t (&sl)[TileShape::kStrips][2][2],
                                           int first) {
#pragma unroll
  for (int j = 0; j < TileShape::kStrips; ++j) {
#pragma unroll
    for (int ls = 0; ls < kSteps; ++ls) {
      const int st = first + ls;
      const int q = st >> 1;
      uint32_t x0, x1, x2, x3;
      if (ENCORE_SM90_EXP_SKIP_WEIGHT_DEQUANT) {
        frag[j][ls][0] = a[j][0][q];
        frag[j][ls][1] = a[j][1][q];
        frag[j][ls][2] = a[j][0][q] ^ 1u;
        frag[j][ls][3] = a[j][1][q] ^ 1u;
        continue;
      }
      if (st & 1) {
        x0 = E2m1PairToHalf2Shifted<2>(a[j][0][q]);
        x1 = E2m1PairToHalf2Shifted<2>(a[j][1][q]);
        x2 = E2m1PairToHalf2Shifted<3>(a[j][0][q]);
        x3 = E2m1PairToHalf2Shifted<3>(a[j][1][q]);
      } else {
        x0 = E2m1PairToHalf2Shifted<0>(a[j][0][q]);
        x1 = E2m1PairToHalf2Shifted<0>(a[j][1][q]);
        x2 = E2m1PairToHalf2Shifted<1>(a[j][0][q]);
        x3 = E2m1PairToHalf2Shifted<1>(a[j][1][q]);
      }
#if ENCORE_SM90_WEIGHTS_NORMAL_FP16
      x0 = HMul2(x0, kHalf2Two14);
      x1 = HMul2(x1, kHalf2Two14);
      x2 = HMul2(x2, kHalf2Two14);
      x3 = HMul2(x3, kHalf2Two14);
#endif
      frag[j][ls][0] = HMul2(x0, sl[j][0][st >> 2]);
      frag[j][ls][1] = HMul2(x1, sl[j][1][st >> 2]);
      frag[j][ls][2] = HMul2(x2, sl[j][0][st >> 2]);
      frag[j][ls][3] = HMul2(x3, sl[j][1][st >> 2]);
    }
  }
}

// One k-block's weight rows and scales: raw stage s -> registers (a = packed rows r0, r0 + 8 per
// strip; sl = broadcast scales, zeroed for the upper 64 k of a half block), then the stage is
// released.
template <TokenSource kSrc>
__device__ __forceinline__ void LoadWeights(const SmemLayout<kSrc>& sm, int s, uint32_t phase,
                                            int rbase, int c,
                                            const int (&sfo)[TileShape::kStrips][2], bool zero_hi,
                                            uint32_t (&a)[TileShape::kStrips][2][4],
                                            uint32_t (&sl)[TileShape::kStrips][2][2]) {
  constexpr int S = TileShape::kStrips;
  MbarWait(sm.RawFull(s), phase);
  const uint32_t rw = sm.RawWeights(s), sf = sm.SfWeights(s);
  uint32_t sc[S][2];
#pragma unroll
  for (int j = 0; j < S; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint4 w = LdShared128(rw + (rbase + 64 * j + 8 * h) * 64 + c * 16);
      a[j][h][0] = w.x;
      a[j][h][1] = w.y;
      a[j][h][2] = w.z;
      a[j][h][3] = w.w;
      sc[j][h] = LdSharedU16(sf + sfo[j][h]);
    }
  }
  MbarArrive(sm.RawEmpty(s));
#pragma unroll
  for (int j = 0; j < S; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint32_t hh = E4m3x2ToHalf2(zero_hi ? 0u : sc[j][h]);
#if !ENCORE_SM90_WEIGHTS_NORMAL_FP16
      hh = HMul2(hh, kHalf2Two7);
#endif
      sl[j][h][0] = BroadcastLo(hh);
      sl[j][h][1] = BroadcastHi(hh);
    }
  }
}

// Accumulators a width-kN wgmma writes per thread (strip j at acc[64 j..]).
template <int kN>
inline constexpr int kAccUsed = 64 * (TileShape::kStrips - 1) + kN / 2;

template <int kN>
__device__ __forceinline__ void FenceAcc(float (&acc)[128]) {
#pragma unroll
  for (int i = 0; i < kAccUsed<kN>; ++i) FenceRegister(acc[i]);
}

// Steps [first, first + kSteps) as one commit group.
template <int kN, int kSteps>
__device__ __forceinline__ void IssueSteps(float (&acc)[128], const FragOf<kSteps>& frag,
                                           uint64_t stage_desc, int first) {
  FenceAcc<kN>(acc);
  WgmmaFence();
  MmaSteps<kN, kSteps>(acc, frag, stage_desc, first);
  WgmmaCommit();
}

// The k loop of one tile at wgmma width kN (fixed at compile time: one dispatch per tile).
template <int kN, TokenSource kSrc>
__device__ __forceinline__ void ConsumerLoop(const GroupInfo& gi, const SmemLayout<kSrc>& sm,
                                             uint32_t& it, int kb0, int kb1, int rbase, int c,
                                             const int (&sfo)[TileShape::kStrips][2],
                                             float (&acc)[128]) {
  using T = TileShape;
  using P = Pipeline<kSrc>;
  constexpr int S = T::kStrips;
  const uint64_t tok_desc = SmemDescSw128(sm.Tok(0));
  // TileShape::HalfBlock(gi.k, kb) hoisted out of the loop: true only for kb == half_kb.
  const int half_kb = (gi.k % T::kBlockK != 0) ? gi.k / T::kBlockK : -1;
  uint32_t a[S][2][4];  // [strip][row r0 / r0 + 8][word]
  uint32_t sl[S][2][2];  // [strip][row][k half]: broadcast scale
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int ts = it % P::kTokStages;
    const uint64_t stage_desc = tok_desc + static_cast<uint64_t>(ts) * (T::kTokStageBytes >> 4);
    LoadWeights(sm, it % P::kRawStages, (it / P::kRawStages) & 1, rbase, c, sfo,
                kb == half_kb && c >= 2, a, sl);
#if ENCORE_SM90_CONSUMER_PIPE
    // NOTES: fragment buffer (p & 1) is rebuilt for part p + 2 only after wait_group 1 following
    // part p + 1's commit, i.e. after part p's wgmmas (its readers) completed. (Run 34: a third
    // buffer, built with two parts in flight, was 1-3% slower.)
    Frag frag[2];
    BuildSteps<kPartSteps>(frag[0], a, sl, 0);
    MbarWait(sm.TokFull(ts), (it / P::kTokStages) & 1);
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      IssueSteps<kN, kPartSteps>(acc, frag[part & 1], stage_desc, part * kPartSteps);
      if (part + 1 < kParts) {
        WgmmaWait<1>();
        BuildSteps<kPartSteps>(frag[(part + 1) & 1], a, sl, (part + 1) * kPartSteps);
      }
    }
    WgmmaWait<0>();
    FenceAcc<kN>(acc);
#else
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      Frag frag;
      BuildSteps<kPartSteps>(frag, a, sl, part * kPartSteps);
      if (part == 0) MbarWait(sm.TokFull(ts), (it / P::kTokStages) & 1);
      IssueSteps<kN, kPartSteps>(acc, frag, stage_desc, part * kPartSteps);
      WgmmaWait<0>();
      FenceAcc<kN>(acc);
    }
#endif
    MbarArrive(sm.TokEmpty(ts));
  }
}

// Consumer warpgroup cw (0/1): weight rows [64S cw, 64S cw + 64S) of the tile (S = kStrips
// strips of 64 rows; strip j's thread rows r0 = 64S cw + 64j + 16 warp + g and r0 + 8).
template <TokenSource kSrc>
__device__ __forceinline__ void ConsumerTile(const GroupInfo& gi, const TileCoord& tc,
                                             const SmemLayout<kSrc>& sm, uint32_t& it, int kb0,
                                             int kb1, int cw, int ct, float (&acc)[128]) {
  using T = TileShape;
  constexpr int S = T::kStrips;
  const int lane = ct & 31;
  const int g = lane >> 2, c = lane & 3;
  const int rbase = cw * 64 * S + (ct >> 5) * 16 + g;
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  int sfo[S][2];  // scale offsets (128-row blocks of 1024 bytes)
#pragma unroll
  for (int j = 0; j < S; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = rbase + 64 * j + 8 * h;
      sfo[j][h] =
          (r >> 7) * 1024 + (c >> 1) * 512 + (r & 31) * 16 + ((r & 127) >> 5) * 4 + 2 * (c & 1);
    }
  }
  switch (tc.nw >> 4) {
#define ENCORE_CASE(i)                                                \
  case i:                                                             \
    if constexpr (16 * i <= T::kMaxBlockM) {                          \
      ConsumerLoop<16 * i, kSrc>(gi, sm, it, kb0, kb1, rbase, c, sfo, acc); \
    }                                                                 \
    break;
    ENCORE_CASE(1)
    ENCORE_CASE(2)
    ENCORE_CASE(3) ENCORE_CASE(4) ENCORE_CASE(5) ENCORE_CASE(6) ENCORE_CASE(7) ENCORE_CASE(8)
        ENCORE_CASE(9) ENCORE_CASE(10) ENCORE_CASE(11) ENCORE_CASE(12) ENCORE_CASE(13)
            ENCORE_CASE(14) ENCORE_CASE(15) ENCORE_CASE(16)
#undef ENCORE_CASE
                default : break;
  }
}

template <TokenSource kSrc>
__device__ __forceinline__ void EpilogueTile(const GroupInfo& gi, const TileCoord& tc,
                                             const SmemLayout<kSrc>& sm, int cw, int ct,
                                             const float (&acc)[128]) {
  using T = TileShape;
  // Undo the fragments' 2^-7 scalings (the pre-pass writes exact token values).
  constexpr float kOut =
      (ENCORE_SM90_WEIGHTS_NORMAL_FP16 ? 1.0f : 128.0f) *
      (ENCORE_SM90_TOKEN_ONE_MUL && kSrc == TokenSource::kInKernel ? 128.0f : 1.0f);
  const int lane = ct & 31;
  uint16_t* stage = sm.Epi() + cw * T::kEpilogueRows * T::kEpiloguePitch;
  const uint32_t stage_s = sm.EpiAddr() + 2 * cw * T::kEpilogueRows * T::kEpiloguePitch;
  constexpr int P = T::kEpiloguePitch;
#pragma unroll
  for (int sj = 0; sj < T::kStrips; ++sj) {
    const int col0 = tc.n0 + (cw * T::kStrips + sj) * 64;
#pragma unroll
    for (int ch = 0; ch < T::kMaxBlockM / T::kEpilogueRows; ++ch) {
      if (ch * T::kEpilogueRows < tc.nw) {
        // n8 blocks j, j + 1 of this chunk: four 8x8 matrices (weight rows 16 warp + 0..7 and
        // + 8..15 of each), stored transposed (token rows of 8 weights, 16 bytes). Run 36: -2% on
        // GPU MODE shape 1 against one 2-byte store per value (one_tile +2%, decode8 +1%).
#pragma unroll
        for (int jp = 0; jp < T::kEpilogueRows / 16; ++jp) {
          const int j = ch * (T::kEpilogueRows / 8) + 2 * jp;
          const float* ac = acc + 64 * sj + 4 * j;
          const int mat = lane >> 3, t = lane & 7;
          const uint32_t addr =
              stage_s + 2 * ((8 * (2 * jp + (mat >> 1)) + t) * P + (ct >> 5) * 16 + 8 * (mat & 1));
          StMatrixX4Trans(addr, PackHalf2(ac[0] * kOut, ac[1] * kOut),
                          PackHalf2(ac[2] * kOut, ac[3] * kOut),
                          PackHalf2(ac[4] * kOut, ac[5] * kOut),
                          PackHalf2(ac[6] * kOut, ac[7] * kOut));
        }
        NamedBarrierSync(1 + cw, 128);
#pragma unroll
        for (int idx = ct; idx < T::kEpilogueRows * 8; idx += 128) {
          const int row = idx >> 3, col8 = idx & 7;
          const int m = ch * T::kEpilogueRows + row;
          const int n = col0 + col8 * 8;
          if (m < tc.rows && n < gi.n) {
            *reinterpret_cast<uint4*>(gi.c + static_cast<size_t>(tc.m0 + m) * gi.n + n) =
                *reinterpret_cast<const uint4*>(stage + row * P + col8 * 8);
          }
        }
        NamedBarrierSync(1 + cw, 128);
      }
    }
  }
}

template <int kGroups, Schedule kSchedule, TokenSource kSrc>
__global__ void __launch_bounds__(TileShape::kThreads, 1)
    Sm90Nvfp4GroupedGemmKernel(const __grid_constant__ Params<kGroups> p) {
  using P = Pipeline<kSrc>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~static_cast<uintptr_t>(1023));
  const SmemLayout<kSrc> sm(base);
  const TileScheduler<kGroups, kSchedule> sched{p};
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const WarpRole role =
      warp == 0 ? WarpRole::kProducer
                : (warp >= 4 ? WarpRole::kConsumer
                             : (!P::kPrepass ? WarpRole::kTokenDequant
                                             : (warp == 1 ? WarpRole::kTokenProducer
                                                          : WarpRole::kIdle)));

  if (tid == 0) {
    // Arrivals: raw stages are released by every consumer (and the dequant warps in kernel);
    // with the pre-pass the token stages are filled by TMA (one expect_tx arrival).
    for (int s = 0; s < P::kRawStages; ++s) {
      MbarInit(sm.RawFull(s), 1);
      MbarInit(sm.RawEmpty(s), (P::kPrepass ? 0 : kDequantThreads) + kConsumerThreads);
    }
    for (int s = 0; s < P::kTokStages; ++s) {
      MbarInit(sm.TokFull(s), P::kPrepass ? 1 : kDequantThreads);
      MbarInit(sm.TokEmpty(s), kConsumerThreads);
    }
    FenceBarrierInit();
  }
  __syncthreads();
  // PDL: nothing below reads inputs or writes outputs before the previous grid completed.
  GridDependencyWait();

  uint32_t it = 0;  // k-block counter across tiles (pipeline stage and phase)
  if (role != WarpRole::kConsumer) {
    RegDealloc<kProducerRegs>();
    if (role == WarpRole::kProducer) {
      if ((tid & 31) == 0) {
        const uint64_t pol_first = PolicyEvictFirst();
        const uint64_t pol_last = PolicyEvictLast();
        sched.ForEach([&](const WorkItem& w) {
          const TileCoord tc = sched.Decode(w.t);
          if (tc.rows <= 0) return;
          ProducerTile<kSrc>(&p.maps[tc.slot].a, &p.maps[tc.slot].b, p.info[tc.slot], tc, sm, it,
                             w.kb0, w.kb1, pol_first, pol_last);
        });
        // Every weight load is issued: dependents may start launching (they wait for our
        // completion with griddepcontrol.wait before touching memory).
        GridDependentsLaunch();
      }
    } else if constexpr (P::kPrepass) {
      if (role == WarpRole::kTokenProducer && (tid & 31) == 0) {
        const uint64_t pol_last = PolicyEvictLast();
        sched.ForEach([&](const WorkItem& w) {
          const TileCoord tc = sched.Decode(w.t);
          if (tc.rows <= 0) return;
          TokenProducerTile(&p.maps[tc.slot].a, p.info[tc.slot], tc, sm, it, w.kb0, w.kb1,
                            pol_last);
        });
      }
    } else {  // WarpRole::kTokenDequant
      sched.ForEach([&](const WorkItem& w) {
        const TileCoord tc = sched.Decode(w.t);
        if (tc.rows <= 0) return;
        DequantTile(p.info[tc.slot], tc, sm, it, w.kb0, w.kb1, tid - 32);
      });
    }
  } else {
    RegAlloc<kConsumerRegs>();
    const int cw = warp / 4 - 1;
    const int ct = tid - 128 * (cw + 1);
    float acc[128];
    sched.ForEach([&](const WorkItem& w) {
      const TileCoord tc = sched.Decode(w.t);
      if (tc.rows <= 0) return;
      ConsumerTile<kSrc>(p.info[tc.slot], tc, sm, it, w.kb0, w.kb1, cw, ct, acc);
      if (kSchedule == Schedule::kStreamK && w.split() &&
          !StreamKReduce(p, sched, w, sm.SkArrivals(), 128 * cw + ct, acc)) {
        return;
      }
      EpilogueTile<kSrc>(p.info[tc.slot], tc, sm, cw, ct, acc);
    });
  }
}

}  // namespace encore::gemm::sm90

// The sm90 kernel's consumer warpgroups' main loop: weight rows from the raw stage dequantized into
// register fragments (wgmma A), token tiles from the fp16 stage (wgmma B), fp32 accumulators.
//
// Example (inside the kernel, consumer warpgroup cw, thread ct):
//   float acc[TileShape::kAccFloats];
//   ConsumerTile<kSrc, kPartsOf<kSchedule>>(gi, tc, sm, it, w.kb0, w.kb1, cw, ct, acc);
//   // then EpilogueTile
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/smem_layout.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"
#include "gemm/kernels/internal/wgmma_rs.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

inline constexpr int kConsumerThreads = TileShape::kConsumerThreads;  // warpgroups 1..

// A stage's 8 wgmma k-steps run in kParts parts (wide tiles: two parts of 4 steps, so the
// fragments of both strips fit in 32 registers); strip j accumulates into acc[64j..] (wide tiles
// have nw <= 128, i.e. <= 64 accumulators per strip).
// The simple kernel runs ENCORE_SM90_SIMPLE_PIPE_PARTS parts (switches.cuh), the persistent and
// stream-K kernels ENCORE_SM90_PIPE_PARTS; kParts / Frag are the latter's (the micro-benchmarks').
// A consumer warpgroup's wgmma k-steps per 128-k stage: 8, or 4 in the k-split build (warpgroup
// cw runs steps 4 (cw / kRowWgs) ..; its thread holds 2 of the 4 weight words of its row piece
// and one scale instead of two).
inline constexpr int kStageSteps = 8 / TileShape::kKSplit;
inline constexpr int kStageWords = kStageSteps / 2;   // 32-bit words of packed e2m1 per row
inline constexpr int kStageScales = kStageSteps / 4;  // e4m3 scales per row
template <Schedule kSchedule>
inline constexpr int kPartsOf = TileShape::kKSplit > 1           ? ENCORE_SM90_KSPLIT_PARTS
                                : !ENCORE_SM90_CONSUMER_PIPE     ? TileShape::kStrips
                                : kSchedule == Schedule::kSimple ? ENCORE_SM90_SIMPLE_PIPE_PARTS
                                                                 : ENCORE_SM90_PIPE_PARTS;
inline constexpr int kParts = kPartsOf<Schedule::kPersistent>;
static_assert(kStageSteps % kPartsOf<Schedule::kSimple> == 0 && kStageSteps % kParts == 0,
              "parts must divide the steps of a stage");
inline constexpr int kPartSteps = kStageSteps / kParts;
template <int kSteps>
using FragOf = uint32_t[TileShape::kStrips][kSteps][4];
using Frag = FragOf<kPartSteps>;


// NOTES: `stage_desc` is the descriptor of the token stage's base; step s's operand starts
// (s / 4) atoms + (s % 4) x 32 bytes further, a compile-time constant added to the descriptor's
// start-address field (address >> 4 in bits 0-13: shared addresses < 2^18 never carry out). Run 26
// (ncu): building each descriptor from the address took ~20% of the consumers' instructions.
// k-split: two wgmmas of width N / 2 per step, the warpgroup's own half of the tokens (descriptor
// stage_desc) into acc[0 .. N / 4) and the other half (stage_desc + other) into
// acc[kOtherAcc .. kOtherAcc + N / 4).
// NOTES: the other half sits at a fixed register index, not at N / 4: with acc[N / 4 ..] (a
// contiguous width-N layout) ptxas serialized every k-split kernel's wgmmas (C7511).
inline constexpr int kOtherAcc = TileShape::kAccFloats / 2;

template <int N, int kSteps>
__device__ __forceinline__ void MmaSteps(float* acc, const FragOf<kSteps>& frag,
                                         uint64_t stage_desc, uint64_t other, int first) {
#pragma unroll
  for (int ls = 0; ls < kSteps; ++ls) {
    const int s = first + ls;
    const int offset = (s / 4) * TileShape::kTokAtomBytes + (s % 4) * 32;  // bytes, unrolled
    const uint64_t desc = stage_desc + static_cast<uint64_t>(offset >> 4);
    if constexpr (TileShape::kKSplit > 1) {
      WgmmaRS<N / 2>(acc, frag[0][ls], desc);
      WgmmaRS<N / 2>(acc + kOtherAcc, frag[0][ls], desc + other);
    } else {
#pragma unroll
      for (int j = 0; j < TileShape::kStrips; ++j) WgmmaRS<N>(acc + 64 * j, frag[j][ls], desc);
    }
  }
}

// Weight fragments of steps [first, first + kSteps): a = packed rows (r0, r0 + 8) per strip,
// sl = broadcast scales.
template <int kSteps>
__device__ __forceinline__ void BuildSteps(
    FragOf<kSteps>& frag, const uint32_t (&a)[TileShape::kStrips][2][kStageWords],
    const uint32_t (&sl)[TileShape::kStrips][2][kStageScales], int first) {
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
      if (ENCORE_SM90_BYTE_DECODE) {  // slots 0, 1 from the hi nibbles; 2, 3 from the lo ones
        const uint32_t h0 = (st & 1) ? E2m1HighBytes<false>(a[j][0][q])
                                     : E2m1HighBytes<true>(a[j][0][q]);
        const uint32_t h1 = (st & 1) ? E2m1HighBytes<false>(a[j][1][q])
                                     : E2m1HighBytes<true>(a[j][1][q]);
        x0 = (st & 1) ? E2m1SlotFromHighBytes<2>(h0) : E2m1SlotFromHighBytes<0>(h0);
        x1 = (st & 1) ? E2m1SlotFromHighBytes<2>(h1) : E2m1SlotFromHighBytes<0>(h1);
        x2 = (st & 1) ? E2m1SlotFromHighBytes<3>(h0) : E2m1SlotFromHighBytes<1>(h0);
        x3 = (st & 1) ? E2m1SlotFromHighBytes<3>(h1) : E2m1SlotFromHighBytes<1>(h1);
      } else if (st & 1) {
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
// released. `koff`: the k-split warpgroup's byte offset in the thread's 16 bytes (0 or 8; its
// scale byte is already in sfo).
template <TokenSource kSrc>
__device__ __forceinline__ void LoadWeights(const SmemLayout<kSrc>& sm, int s, uint32_t phase,
                                            int rbase, int c, int koff,
                                            const int (&sfo)[TileShape::kStrips][2], bool zero_hi,
                                            uint32_t (&a)[TileShape::kStrips][2][kStageWords],
                                            uint32_t (&sl)[TileShape::kStrips][2][kStageScales]) {
  constexpr int S = TileShape::kStrips;
  MbarWait(sm.RawFull(s), phase);
  const uint32_t rw = sm.RawWeights(s), sf = sm.SfWeights(s);
  uint32_t sc[S][2];
#pragma unroll
  for (int j = 0; j < S; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t row = rw + (rbase + 64 * j + 8 * h) * 64 + c * 16;
      if constexpr (kStageWords == 4) {
        const uint4 w = LdShared128(row);
        a[j][h][0] = w.x;
        a[j][h][1] = w.y;
        a[j][h][2] = w.z;
        a[j][h][3] = w.w;
        sc[j][h] = LdSharedU16(sf + sfo[j][h]);
      } else {
        const uint2 w = LdShared64(row + koff);
        a[j][h][0] = w.x;
        a[j][h][1] = w.y;
        sc[j][h] = LdSharedU8(sf + sfo[j][h]);
      }
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
      if constexpr (kStageScales == 2) sl[j][h][1] = BroadcastHi(hh);
    }
  }
}

// Accumulators a width-kN wgmma writes per thread (strip j at acc[64 j..]; k-split: the two halves
// at acc[0 ..] and acc[kOtherAcc ..]).
template <int kN>
inline constexpr int kAccUsed = 64 * (TileShape::kStrips - 1) + kN / 2;

template <int kN>
__device__ __forceinline__ void FenceAcc(float (&acc)[TileShape::kAccFloats]) {
  if constexpr (TileShape::kKSplit > 1) {
#pragma unroll
    for (int i = 0; i < kN / 4; ++i) {
      FenceRegister(acc[i]);
      FenceRegister(acc[kOtherAcc + i]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kAccUsed<kN>; ++i) FenceRegister(acc[i]);
  }
}

// Steps [first, first + kSteps) as one commit group.
template <int kN, int kSteps>
__device__ __forceinline__ void IssueSteps(float (&acc)[TileShape::kAccFloats],
                                           const FragOf<kSteps>& frag, uint64_t stage_desc,
                                           uint64_t other, int first) {
  FenceAcc<kN>(acc);
  WgmmaFence();
  MmaSteps<kN, kSteps>(acc, frag, stage_desc, other, first);
  WgmmaCommit();
}

// The k loop of one tile at wgmma width kN (fixed at compile time: one dispatch per tile), a
// stage's 8 k-steps in kNumParts parts.
template <int kN, TokenSource kSrc, int kNumParts>
__device__ __forceinline__ void ConsumerLoop(const GroupInfo& gi, const SmemLayout<kSrc>& sm,
                                             uint32_t& it, int kb0, int kb1, int rbase, int c,
                                             int khalf, const int (&sfo)[TileShape::kStrips][2],
                                             float (&acc)[TileShape::kAccFloats]) {
  using T = TileShape;
  using P = Pipeline<kSrc>;
  constexpr int S = T::kStrips;
  constexpr int kSteps = kStageSteps / kNumParts;
  // k-split: the upper warpgroup's steps start one 64-k atom further in the token stage, and its
  // own tokens kN / 2 rows further (token row r at 128 r bytes; kN / 2 is a multiple of 8, whole
  // 1024-byte swizzle groups); `other` (mod 2^64) steps to the other half.
  constexpr uint64_t kHalfRows = static_cast<uint64_t>(kN / 2) * 128 >> 4;
  const uint64_t tok_desc =
      SmemDescSw128(sm.Tok(0)) +
      (T::kKSplit > 1 ? static_cast<uint64_t>(khalf) * ((T::kTokAtomBytes >> 4) + kHalfRows) : 0);
  const uint64_t other = khalf ? 0 - kHalfRows : kHalfRows;
  // TileShape::HalfBlock(gi.k, kb) hoisted out of the loop: true only for kb == half_kb.
  const int half_kb = (gi.k % T::kBlockK != 0) ? gi.k / T::kBlockK : -1;
  uint32_t a[S][2][kStageWords];   // [strip][row r0 / r0 + 8][word]
  uint32_t sl[S][2][kStageScales];  // [strip][row][k half]: broadcast scale
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int ts = it % P::kTokStages;
    const uint64_t stage_desc = tok_desc + static_cast<uint64_t>(ts) * (T::kTokStageBytes >> 4);
    LoadWeights(sm, it % P::kRawStages, (it / P::kRawStages) & 1, rbase, c, 8 * khalf, sfo,
                kb == half_kb && c >= 2, a, sl);
#if ENCORE_SM90_CONSUMER_PIPE
    // NOTES: fragment buffer (p & 1) is rebuilt for part p + 2 only after wait_group 1 following
    // part p + 1's commit, i.e. after part p's wgmmas (its readers) completed. (Run 34: a third
    // buffer, built with two parts in flight, was 1-3% slower.)
    FragOf<kSteps> frag[2];
    BuildSteps<kSteps>(frag[0], a, sl, 0);
    MbarWait(sm.TokFull(ts), (it / P::kTokStages) & 1);
#pragma unroll
    for (int part = 0; part < kNumParts; ++part) {
      IssueSteps<kN, kSteps>(acc, frag[part & 1], stage_desc, other, part * kSteps);
      if (part + 1 < kNumParts) {
        WgmmaWait<1>();
        BuildSteps<kSteps>(frag[(part + 1) & 1], a, sl, (part + 1) * kSteps);
      }
    }
    WgmmaWait<0>();
    FenceAcc<kN>(acc);
#else
#pragma unroll
    for (int part = 0; part < kNumParts; ++part) {
      FragOf<kSteps> frag;
      BuildSteps<kSteps>(frag, a, sl, part * kSteps);
      if (part == 0) MbarWait(sm.TokFull(ts), (it / P::kTokStages) & 1);
      IssueSteps<kN, kSteps>(acc, frag, stage_desc, other, part * kSteps);
      WgmmaWait<0>();
      FenceAcc<kN>(acc);
    }
#endif
    MbarArrive(sm.TokEmpty(ts));
  }
}

// Named barriers of the k-split pairs (strip 0's, strip 1's), after the fused pre-pass's
// (kStreamKBarrier + 1).
inline constexpr uint32_t kKSplitBarrier = kStreamKBarrier + 2;

// The 64-row strip group of consumer warpgroup cw (cw itself unless k-split).
__device__ __forceinline__ int RowWg(int cw) {
  return TileShape::kKSplit > 1 ? cw % TileShape::kRowWgs : cw;
}

// The k-split pair's reduce-scatter after a width-kN tile's k loop (all consumer threads; each
// pair of warpgroups cw, cw + kRowWgs on its own barrier). Both hold their own half of the tokens
// in acc[0 .. kN / 4) and the other half in acc[kOtherAcc ..] (MmaSteps): each sends the
// latter and adds what it receives to the former. Passes of kExchangeFloats floats a thread
// through the warpgroups' own epilogue staging buffers, float4 q of thread ct at 16 (128 q + ct)
// (conflict-free).
// NOTES: a buffer is free when its pair reaches the first barrier of a pass (its owner finished
// the previous tile's epilogue before this tile's loop); the second barrier keeps the next pass
// and the epilogue from overwriting what the partner still reads. Each output is one fp32 add
// a + b of the two k halves' sums (either order is the same bits). The accumulators never move
// between registers: with the upper warpgroup moving acc[kN / 4 + i] to acc[i] (its own half
// computed in the natural order), ptxas serialized every kernel's wgmmas (C7511).
template <int kN, TokenSource kSrc>
__device__ __forceinline__ void KSplitExchange(const SmemLayout<kSrc>& sm, int cw, int ct,
                                               float (&acc)[TileShape::kAccFloats]) {
  using T = TileShape;
  constexpr int kSend = kN / 4;  // floats a thread sends (and receives)
  constexpr int kPass = T::kExchangeFloats;
  static_assert(kSend % 4 == 0 && kPass % 4 == 0, "whole float4s");
  const int partner = cw < T::kRowWgs ? cw + T::kRowWgs : cw - T::kRowWgs;
  const uint32_t bar = kKSplitBarrier + static_cast<uint32_t>(RowWg(cw));
  const uint32_t mine = sm.EpiAddr() + cw * T::kEpilogueWgBytes + 16 * ct;
  const uint32_t theirs = sm.EpiAddr() + partner * T::kEpilogueWgBytes + 16 * ct;
#pragma unroll
  for (int p0 = 0; p0 < kSend; p0 += kPass) {
#pragma unroll
    for (int i = p0; i < p0 + kPass && i < kSend; i += 4) {
      StShared128F(mine + 16 * 128 * ((i - p0) / 4), acc[kOtherAcc + i], acc[kOtherAcc + i + 1],
                   acc[kOtherAcc + i + 2], acc[kOtherAcc + i + 3]);
    }
    NamedBarrierSync(bar, 256);
#pragma unroll
    for (int i = p0; i < p0 + kPass && i < kSend; i += 4) {
      const float4 v = LdShared128F(theirs + 16 * 128 * ((i - p0) / 4));
      acc[i] += v.x;
      acc[i + 1] += v.y;
      acc[i + 2] += v.z;
      acc[i + 3] += v.w;
    }
    NamedBarrierSync(bar, 256);
  }
}

// The part of a tile consumer warpgroup cw stores: the whole tile, or in the k-split build its
// half of the tokens after KSplitExchange (tokens [nw / 2, nw) for the upper warpgroup of a pair;
// nw is a multiple of 16, so both halves are whole n8 blocks).
__device__ __forceinline__ TileCoord ConsumerPart(const TileCoord& tc, int cw) {
  if constexpr (TileShape::kKSplit == 1) {
    return tc;
  } else {
    TileCoord part = tc;
    const int half = tc.nw / 2;
    part.nw = half;
    if (cw >= TileShape::kRowWgs) {
      part.m0 += half;
      part.rows = tc.rows > half ? tc.rows - half : 0;
    } else {
      part.rows = tc.rows < half ? tc.rows : half;
    }
    return part;
  }
}

// Consumer warpgroup cw (0 .. kConsumerWgs - 1): weight rows [64S w, 64S w + 64S) of the tile,
// w = RowWg(cw) (S = kStrips strips of 64 rows; strip j's thread rows r0 = 64S w + 64j + 16 warp +
// g and r0 + 8); in the k-split build the k-steps 4 (cw / kRowWgs) .. + 3 of every stage, then the
// pair's KSplitExchange.
template <TokenSource kSrc, int kNumParts>
__device__ __forceinline__ void ConsumerTile(const GroupInfo& gi, const TileCoord& tc,
                                             const SmemLayout<kSrc>& sm, uint32_t& it, int kb0,
                                             int kb1, int cw, int ct,
                                             float (&acc)[TileShape::kAccFloats]) {
  using T = TileShape;
  constexpr int S = T::kStrips;
  const int lane = ct & 31;
  const int g = lane >> 2, c = lane & 3;
  const int khalf = T::kKSplit > 1 ? cw / T::kRowWgs : 0;
  const int rbase = RowWg(cw) * 64 * S + (ct >> 5) * 16 + g;
#pragma unroll
  for (int i = 0; i < T::kAccFloats; ++i) acc[i] = 0.f;
  // Scale offsets: 128-row blocks of 1024 bytes from the one holding the tile's first row (a tile
  // of 192 rows starts at row 0 or 64 of it).
  const int row_in_block = tc.n0 % 128;
  int sfo[S][2];
#pragma unroll
  for (int j = 0; j < S; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row_in_block + rbase + 64 * j + 8 * h;
      sfo[j][h] = (r >> 7) * 1024 + (c >> 1) * 512 + (r & 31) * 16 + ((r & 127) >> 5) * 4 +
                  2 * (c & 1) + khalf;
    }
  }
  switch (tc.nw >> 4) {
#define ENCORE_CASE(i)                                                                 \
  case i:                                                                              \
    if constexpr (16 * i <= T::kMaxBlockM) {                                                  \
      ConsumerLoop<16 * i, kSrc, kNumParts>(gi, sm, it, kb0, kb1, rbase, c, khalf, sfo, acc); \
      if constexpr (T::kKSplit > 1) KSplitExchange<16 * i>(sm, cw, ct, acc);                  \
    }                                                                                         \
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

}  // namespace encore::gemm::sm90

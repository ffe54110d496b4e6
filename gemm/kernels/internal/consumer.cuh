// The sm90 kernel's consumer warpgroups' main loop: weight rows from the raw stage dequantized into
// register fragments (wgmma A), token tiles from the fp16 stage (wgmma B), fp32 accumulators.
//
// Example (inside the kernel, consumer warpgroup cw, thread ct):
//   float acc[TileShape::kAccFloats];
//   ConsumerTile<kSrc, kSchedule>(gi, tc, sm, it, w.kb0, w.kb1, cw, ct, acc);
//   // then EpilogueTile
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/smem_layout.cuh"
#include "gemm/kernels/internal/stamps.cuh"
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
// stream-K kernels ENCORE_SM90_PIPE_PARTS, except the persistent kernel's tiles of <= 128 tokens
// (ENCORE_SM90_PERSISTENT_NARROW_PARTS: PartsFor); kParts / Frag are ENCORE_SM90_PIPE_PARTS's
// (the micro-benchmarks').
template <Schedule kSchedule>
inline constexpr int kPartsOf = !ENCORE_SM90_CONSUMER_PIPE       ? TileShape::kStrips
                                : kSchedule == Schedule::kSimple ? ENCORE_SM90_SIMPLE_PIPE_PARTS
                                                                 : ENCORE_SM90_PIPE_PARTS;
// The parts a stage of a width-n tile runs in kSchedule's kernel: kPartsOf<kSchedule>, or at
// widths <= 128 ENCORE_SM90_NARROW_PARTS (every kernel) / ENCORE_SM90_PERSISTENT_NARROW_PARTS
// (the persistent kernel) where set. Only the default tile's pipe has them (the _nopipe, _wide,
// _wg3 and _wg4 builds keep their own parts: no fragment buffers, two strips' fragments, or fewer
// registers a consumer).
template <Schedule kSchedule>
constexpr int PartsFor(int n) {
  constexpr int kNarrow =
      (!ENCORE_SM90_CONSUMER_PIPE || TileShape::kStrips != 1 || TileShape::kConsumerWgs != 2) ? 0
      : ENCORE_SM90_NARROW_PARTS > 0       ? ENCORE_SM90_NARROW_PARTS
      : kSchedule == Schedule::kPersistent ? ENCORE_SM90_PERSISTENT_NARROW_PARTS
                                           : 0;
  return (kNarrow > 0 && n <= 128) ? kNarrow : kPartsOf<kSchedule>;
}
inline constexpr int kParts = kPartsOf<Schedule::kPersistent>;
static_assert(8 % kPartsOf<Schedule::kSimple> == 0 && 8 % kParts == 0,
              "parts must divide the 8 steps of a stage");
inline constexpr int kPartSteps = 8 / kParts;
// Whether this build has the streamed simple kernel (the kernel's kStreamed): the stream runs 2
// parts a stage, and its ring splits 2 stages of 256-row atoms.
inline constexpr bool kStreamedBuilt = ENCORE_SM90_CONSUMER_PIPE &&
                                       kPartsOf<Schedule::kSimple> == 2 &&
                                       SmemLayout<TokenSource::kPrepass>::kSplittable;
// The widths the streamed simple kernel streams (its other widths drain between k-blocks, on the
// same 4-stage ring); the runner picks it for plans whose tiles are all that wide
// (RunnerOptions::stream_simple_tiles). NOTES: runs 152 and 154 (8 groups of M tokens,
// N = 2048, every <= 128-row width streamed): 16 rows -5.3% (K = 7168) / -3.2% (K = 2048), 128
// rows -2.3..-3.8% / -1.1%, but 32-64 rows +0.3..+1.3% and GPU MODE shape 2's 96-112 rows +0.8%
// (run 151).
template <int kN>
inline constexpr bool kStreamedWidth = StreamedTileRows(kN);
template <int kSteps>
using FragOf = uint32_t[TileShape::kStrips][kSteps][4];
using Frag = FragOf<kPartSteps>;


// NOTES: `stage_desc` is the descriptor of the token stage's base; step s's operand starts
// (s / 4) atoms + (s % 4) x 32 bytes further, a compile-time constant added to the descriptor's
// start-address field (address >> 4 in bits 0-13: shared addresses < 2^18 never carry out). Run 26
// (ncu): building each descriptor from the address took ~20% of the consumers' instructions.
template <int N, int kSteps, int kAtomBytes = TileShape::kTokAtomBytes>
__device__ __forceinline__ void MmaSteps(float* acc, const FragOf<kSteps>& frag,
                                         uint64_t stage_desc, int first) {
#pragma unroll
  for (int ls = 0; ls < kSteps; ++ls) {
    const int s = first + ls;
    const int offset = (s / 4) * kAtomBytes + (s % 4) * 32;  // bytes, unrolled
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
// released.
template <TokenSource kSrc>
__device__ __forceinline__ void LoadWeights(const SmemLayout<kSrc>& sm, int s, uint32_t phase,
                                            int rbase, int c,
                                            const int (&sfo)[TileShape::kStrips][2], bool zero_hi,
                                            uint32_t (&a)[TileShape::kStrips][2][4],
                                            uint32_t (&sl)[TileShape::kStrips][2][2]) {
  constexpr int S = TileShape::kStrips;
  const long long t_wait = WaitClock();
  MbarWait(sm.RawFull(s), phase);
  WaitAdd(WaitCounter::kRawWait, t_wait);
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

// The wait for a token stage's tok_full barrier (the _exp_waits build times it).
__device__ __forceinline__ void TokWait(uint32_t tok_full, uint32_t phase) {
  const long long t_wait = WaitClock();
  MbarWait(tok_full, phase);
  WaitAdd(WaitCounter::kTokWait, t_wait);
}

// Accumulators a width-kN wgmma writes per thread (strip j at acc[64 j..]).
template <int kN>
inline constexpr int kAccUsed = 64 * (TileShape::kStrips - 1) + kN / 2;

template <int kN>
__device__ __forceinline__ void FenceAcc(float (&acc)[TileShape::kAccFloats]) {
#pragma unroll
  for (int i = 0; i < kAccUsed<kN>; ++i) FenceRegister(acc[i]);
}

// Steps [first, first + kSteps) as one commit group (token atoms kAtomBytes apart).
template <int kN, int kSteps, int kAtomBytes = TileShape::kTokAtomBytes>
__device__ __forceinline__ void IssueSteps(float (&acc)[TileShape::kAccFloats],
                                           const FragOf<kSteps>& frag, uint64_t stage_desc,
                                           int first) {
  FenceAcc<kN>(acc);
  WgmmaFence();
  MmaSteps<kN, kSteps, kAtomBytes>(acc, frag, stage_desc, first);
  WgmmaCommit();
}

// The k loop of one tile at wgmma width kN (fixed at compile time: one dispatch per tile), a
// stage's 8 k-steps in kNumParts parts. kStream (the streamed simple kernel, or
// ENCORE_SM90_SIMPLE_STREAM; 2 parts only): no drain between k-blocks, at every width or, where
// !kStreamAll, at the widths kStreamedWidth names. kRing4 (the streamed simple kernel, or
// ENCORE_SM90_SIMPLE_RING4 builds): widths <= 128 run 4 token
// stages of half the size (ConsumerTile dispatches tiles of groups with wider token tiles at
// >= 144, so this is the token producer's test, the group's tile rows <= 128); only they stream.
template <int kN, TokenSource kSrc, int kNumParts, bool kStream = false, bool kRing4 = false,
          bool kStreamAll = true>
__device__ __forceinline__ void ConsumerLoop(const GroupInfo& gi, const SmemLayout<kSrc>& sm,
                                             uint32_t& it, int kb0, int kb1, int rbase, int c,
                                             const int (&sfo)[TileShape::kStrips][2],
                                             float (&acc)[TileShape::kAccFloats]) {
  using T = TileShape;
  using P = Pipeline<kSrc>;
  constexpr int S = T::kStrips;
  constexpr int kSteps = 8 / kNumParts;
  constexpr bool kNarrowRing = kRing4 && kN <= 128;
  constexpr auto kRing = SmemLayout<kSrc>::RingOf(kNarrowRing);
  constexpr int kStages = static_cast<int>(kRing.stages);  // a power of 2
  constexpr int kStageBytes = static_cast<int>(kRing.stage_bytes);
  constexpr int kAtom = static_cast<int>(kRing.atom_bytes);
  static_assert(!kRing4 || SmemLayout<kSrc>::kSplittable,
                "the split ring halves 2 stages of 256-row atoms");
  const uint64_t tok_desc = SmemDescSw128(sm.Tok(0));
  // TileShape::HalfBlock(gi.k, kb) hoisted out of the loop: true only for kb == half_kb.
  const int half_kb = (gi.k % T::kBlockK != 0) ? gi.k / T::kBlockK : -1;
  uint32_t a[S][2][4];  // [strip][row r0 / r0 + 8][word]
  uint32_t sl[S][2][2];  // [strip][row][k half]: broadcast scale
#if ENCORE_SM90_CONSUMER_PIPE
  if constexpr (kStream && (!kRing4 || kNarrowRing) && (kStreamAll || kStreamedWidth<kN>)) {
    // NOTES (ENCORE_SM90_SIMPLE_STREAM): one stream of parts across k-blocks. The next k-block's
    // weights are loaded and its part 0 built while this one's part 1 runs; the wait before that
    // build (wait_group 1 after part 1's commit) frees frag[0] (part 0 done), and the wait after
    // the next part 0's commit frees frag[1] and this k-block's token stage (part 1 done), which
    // is released only then: half a k-block later than with the drain, so the token ring needs
    // stages to spare (the _rows128 tile: 4). Runs 39 and 41 (older kernels, 2 token stages) lost;
    // run 148 (manual build _r128sstream): 1-2% faster than the same tile with the drain on GPU
    // MODE shapes 2-3, 6% on decode8, but that tile is slower than the default's on shapes 2-3;
    // run 149: on the default tile's 2 token stages it starves the token producer (+5..16%).
    static_assert(kNumParts == 2, "the stream runs 2 parts a stage");
    if (kb0 >= kb1) return;
    FragOf<kSteps> frag[2];
    LoadWeights(sm, it % P::kRawStages, (it / P::kRawStages) & 1, rbase, c, sfo,
                kb0 == half_kb && c >= 2, a, sl);
    BuildSteps<kSteps>(frag[0], a, sl, 0);
    TokWait(sm.TokFull(it % kStages), (it / kStages) & 1);
    for (int kb = kb0; kb < kb1; ++kb, ++it) {
      const int ts = it % kStages;
      const uint64_t stage_desc = tok_desc + static_cast<uint64_t>(ts) * (kStageBytes >> 4);
      IssueSteps<kN, kSteps, kAtom>(acc, frag[0], stage_desc, 0);
      if (kb > kb0) {
        WgmmaWait<1>();  // the previous k-block's part 1 is done: its token stage is free
        MbarArrive(sm.TokEmpty((it - 1) % kStages));
      }
      BuildSteps<kSteps>(frag[1], a, sl, kSteps);
      IssueSteps<kN, kSteps, kAtom>(acc, frag[1], stage_desc, kSteps);
      if (kb + 1 < kb1) {
        const uint32_t nx = it + 1;
        LoadWeights(sm, nx % P::kRawStages, (nx / P::kRawStages) & 1, rbase, c, sfo,
                    kb + 1 == half_kb && c >= 2, a, sl);
        WgmmaWait<1>();  // this k-block's part 0 is done: frag[0] is free
        BuildSteps<kSteps>(frag[0], a, sl, 0);
        TokWait(sm.TokFull(nx % kStages), (nx / kStages) & 1);
      }
    }
    WgmmaWait<0>();
    FenceAcc<kN>(acc);
    MbarArrive(sm.TokEmpty((it - 1) % kStages));
    return;
  }
#endif
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int ts = it % kStages;
    const uint64_t stage_desc = tok_desc + static_cast<uint64_t>(ts) * (kStageBytes >> 4);
    LoadWeights(sm, it % P::kRawStages, (it / P::kRawStages) & 1, rbase, c, sfo,
                kb == half_kb && c >= 2, a, sl);
#if ENCORE_SM90_CONSUMER_PIPE
    // NOTES: fragment buffer (p & 1) is rebuilt for part p + 2 only after wait_group 1 following
    // part p + 1's commit, i.e. after part p's wgmmas (its readers) completed. (Run 34: a third
    // buffer, built with two parts in flight, was 1-3% slower.)
    FragOf<kSteps> frag[2];
    BuildSteps<kSteps>(frag[0], a, sl, 0);
    TokWait(sm.TokFull(ts), (it / kStages) & 1);
#pragma unroll
    for (int part = 0; part < kNumParts; ++part) {
      IssueSteps<kN, kSteps, kAtom>(acc, frag[part & 1], stage_desc, part * kSteps);
      if (part + 1 < kNumParts) {
        WgmmaWait<1>();
        BuildSteps<kSteps>(frag[(part + 1) & 1], a, sl, (part + 1) * kSteps);
      }
    }
    const long long t_drain = WaitClock();
    WgmmaWait<0>();
    FenceAcc<kN>(acc);
    WaitAdd(WaitCounter::kDrain, t_drain);
#else
#pragma unroll
    for (int part = 0; part < kNumParts; ++part) {
      FragOf<kSteps> frag;
      BuildSteps<kSteps>(frag, a, sl, part * kSteps);
      if (part == 0) TokWait(sm.TokFull(ts), (it / kStages) & 1);
      IssueSteps<kN, kSteps, kAtom>(acc, frag, stage_desc, part * kSteps);
      WgmmaWait<0>();
      FenceAcc<kN>(acc);
    }
#endif
    MbarArrive(sm.TokEmpty(ts));
  }
}

// Consumer warpgroup cw (0 .. kConsumerWgs - 1): weight rows [64S cw, 64S cw + 64S) of the tile
// (S = kStrips strips of 64 rows; strip j's thread rows r0 = 64S cw + 64j + 16 warp + g and
// r0 + 8).
template <TokenSource kSrc, Schedule kSchedule, bool kStream = false, bool kRing4 = false,
          bool kStreamAll = true>
__device__ __forceinline__ void ConsumerTile(const GroupInfo& gi, const TileCoord& tc,
                                             const SmemLayout<kSrc>& sm, uint32_t& it, int kb0,
                                             int kb1, int cw, int ct,
                                             float (&acc)[TileShape::kAccFloats]) {
  using T = TileShape;
  constexpr int S = T::kStrips;
  const int lane = ct & 31;
  const int g = lane >> 2, c = lane & 3;
  const int rbase = cw * 64 * S + (ct >> 5) * 16 + g;
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
      sfo[j][h] =
          (r >> 7) * 1024 + (c >> 1) * 512 + (r & 31) * 16 + ((r & 127) >> 5) * 4 + 2 * (c & 1);
    }
  }
  // NOTES (kRing4): a tile of a group whose token tiles are wider than 128 rows (its last, partial
  // tile can be narrower) runs at width >= 144 on the 2-stage ring, as its token producer loads it;
  // the extra columns are rows past the tile (the epilogue stores tc.nw columns, and the
  // accumulators' column order does not depend on the width).
  const int nw = (kRing4 && gi.tile_rows > 128 && tc.nw <= 128) ? 144 : tc.nw;
  WaitCount(WaitCounter::kKBlocks, static_cast<unsigned long long>(kb1 - kb0));
  // One case per width (a multiple of T::kMGranule up to kMaxBlockM): 16 cases, or 32 in the _n8
  // build. (The shift rests on the granule being 8 or 16: the parameter header's #error.)
  constexpr int G = T::kMGranule;
  switch (nw >> (G == 16 ? 4 : 3)) {
#define ENCORE_CASE(i)                                                                 \
  case i:                                                                              \
    if constexpr (G * i <= T::kMaxBlockM) {                                            \
      constexpr int kCaseParts = PartsFor<kSchedule>(G * i);                           \
      ConsumerLoop<G * i, kSrc, kCaseParts, kStream, kRing4, kStreamAll>(              \
          gi, sm, it, kb0, kb1, rbase, c, sfo, acc);                                   \
    }                                                                                  \
    break;
    ENCORE_CASE(1) ENCORE_CASE(2) ENCORE_CASE(3) ENCORE_CASE(4) ENCORE_CASE(5) ENCORE_CASE(6)
    ENCORE_CASE(7) ENCORE_CASE(8) ENCORE_CASE(9) ENCORE_CASE(10) ENCORE_CASE(11) ENCORE_CASE(12)
    ENCORE_CASE(13) ENCORE_CASE(14) ENCORE_CASE(15) ENCORE_CASE(16) ENCORE_CASE(17)
    ENCORE_CASE(18) ENCORE_CASE(19) ENCORE_CASE(20) ENCORE_CASE(21) ENCORE_CASE(22)
    ENCORE_CASE(23) ENCORE_CASE(24) ENCORE_CASE(25) ENCORE_CASE(26) ENCORE_CASE(27)
    ENCORE_CASE(28) ENCORE_CASE(29) ENCORE_CASE(30) ENCORE_CASE(31) ENCORE_CASE(32)
#undef ENCORE_CASE
    default:
      break;
  }
  static_assert(T::kMaxBlockM / G <= 32, "the width switch has 32 cases");
}

}  // namespace encore::gemm::sm90

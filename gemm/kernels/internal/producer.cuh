// The sm90 kernel's producer side: the TMA producer of the raw (weight) stages, the fp16 token-tile
// TMA producer (TokenSource::kPrepass) and the in-kernel token dequant warps (kInKernel).
//
// Example (inside the kernel, producer warp, one lane):
//   sched.ForEach([&](const WorkItem& w) { ProducerTile<kSrc>(..., sm, it, w.kb0, w.kb1, ...); });
#pragma once

#include <cuda.h>

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/smem_layout.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"
#include "gemm/kernels/internal/token_dequant.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

inline constexpr int kDequantThreads = 96;  // warps 1-3 (TokenSource::kInKernel)

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
  // 128-row weight scale blocks holding rows [n0, min(n0 + kBlockN, n)) (a 192-row tile may start
  // in the middle of one).
  const int wblk0 = tc.n0 / 128;
  const int wblk = T::kBlockN % 128 == 0 ? min(T::kBlockN / 128, (gi.n - tc.n0 + 127) / 128)
                                         : (min(tc.n0 + T::kBlockN, gi.n) - 1) / 128 - wblk0 + 1;
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
    // Weight scale blocks past N (wide tiles, N an odd multiple of 128; 192-row tiles) are not
    // loaded: their rows' outputs are masked in the epilogue.
    for (int b = 0; b < wblk; ++b) {
      BulkLoad(sm.SfWeights(s) + b * 1024,
               gi.sfb + (static_cast<size_t>(wblk0 + b) * k64 + 2 * kb) * 512, sf_bytes,
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
// kRing4 (ENCORE_SM90_SIMPLE_RING4, the simple kernel): a tile of a group whose token tiles are
// <= 128 rows (the TMA box) runs 4 stages of half the size (128-row atoms), as its consumers do
// (ConsumerTile dispatches every other tile at a width > 128: ConsumerLoop's kNarrowRing).
template <bool kRing4 = false>
__device__ __forceinline__ void TokenProducerTile(const CUtensorMap* map_a, const GroupInfo& gi,
                                                  const TileCoord& tc,
                                                  const SmemLayout<TokenSource::kPrepass>& sm,
                                                  uint32_t& it, int kb0, int kb1,
                                                  uint64_t policy) {
  using L = SmemLayout<TokenSource::kPrepass>;
  const uint32_t atom_bytes = static_cast<uint32_t>(gi.tile_rows) * 128;
  static_assert(!kRing4 || L::kSplittable, "splits 2 stages of 256-row atoms");
  // (compile-time constants where kRing4 is off; a select between the two constant rings, so
  // that `it % stages` stays a mask: through one runtime Ring it became a division)
  constexpr typename L::Ring kSplit = L::RingOf(true), kWhole = L::RingOf(false);
  const bool split = kRing4 && gi.tile_rows <= 128;
  const uint32_t stages = split ? kSplit.stages : kWhole.stages;
  const uint32_t stage_bytes = split ? kSplit.stage_bytes : kWhole.stage_bytes;
  const uint32_t atom_stride = split ? kSplit.atom_bytes : kWhole.atom_bytes;
  for (int kb = kb0; kb < kb1; ++kb, ++it) {
    const int ts = static_cast<int>(it % stages);
    MbarWait(sm.TokEmpty(ts), ((it / stages) & 1) ^ 1);
    MbarArriveExpectTx(sm.TokFull(ts), 2 * atom_bytes);
    const uint32_t tok = sm.Tok(0) + ts * stage_bytes;
    TmaLoad2D(tok, map_a, sm.TokFull(ts), kb * 128, tc.m0, policy);
    TmaLoad2D(tok + atom_stride, map_a, sm.TokFull(ts), kb * 128 + 64, tc.m0, policy);
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

}  // namespace encore::gemm::sm90

// The sm90 kernel's shared-memory layout and its addresses (mbarriers, stages, epilogue staging).
//
// Example (inside the kernel):
//   const SmemLayout<kSrc> sm(base);             // base: 1024-byte aligned dynamic smem
//   MbarWait(sm.RawFull(stage), phase);          // 32-bit shared-window addresses
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// Shared memory, from the 1024-byte aligned base: raw stages | fp16 token stages | epilogue
// staging | barriers. Everything the async proxy, the mbarriers and the consumers' loads touch is
// addressed in the shared window (32-bit: one base register plus compile-time offsets); plain
// generic pointers remain for the in-kernel token dequant and the epilogue staging.
template <TokenSource kSrc>
struct SmemLayout {
  using P = Pipeline<kSrc>;
  using T = TileShape;
  // Token-stage barriers: one pair per stage, 4 pairs where the simple kernel may split its
  // stages (pre-pass tokens: the streamed instantiation, ENCORE_SM90_SIMPLE_RING4).
  static constexpr int kTokBarriers = (P::kPrepass && P::kTokStages < 4) ? 4 : P::kTokStages;
  // The fp16 token ring a tile runs on: P::kTokStages stages of kMaxBlockM-row atoms, or split
  // (the simple kernel's tiles of <= 128 token rows with ENCORE_SM90_SIMPLE_RING4 or the streamed
  // instantiation) 4 stages of 128-row atoms in the same bytes, which needs the unsplit ring to
  // be 2 stages of 256-row atoms (kSplittable). The token producer and the consumers use it alike.
  static constexpr bool kSplittable = P::kTokStages == 2 && T::kMaxBlockM == 256;
  struct Ring {
    uint32_t stages;  // a power of 2
    uint32_t stage_bytes;
    uint32_t atom_bytes;
  };
  static constexpr Ring RingOf(bool split) {
    return split ? Ring{4, T::kTokStageBytes / 2, T::kTokAtomBytes / 2}
                 : Ring{P::kTokStages, T::kTokStageBytes, T::kTokAtomBytes};
  }
  static constexpr uint32_t kTok = P::kRawStages * P::kRawStageBytes;
  static constexpr uint32_t kEpi = kTok + P::kTokStages * T::kTokStageBytes;
  static constexpr uint32_t kRawFull = kEpi + P::kEpilogueBytes;  // inputs_arrived
  static constexpr uint32_t kRawEmpty = kRawFull + 8 * P::kRawStages;  // inputs_finished
  static constexpr uint32_t kTokFull = kRawEmpty + 8 * P::kRawStages;  // tokens_ready
  static constexpr uint32_t kTokEmpty = kTokFull + 8 * kTokBarriers;  // tokens_finished
  // stream-K: the arrival count seen by consumer thread 0, for all consumers (two words: a
  // CTA's two split pieces, StreamKReduce)
  static constexpr uint32_t kSkArrivals = kTokEmpty + 8 * kTokBarriers;
  static_assert(kSkArrivals + 8 - kRawFull <= T::kBarrierBytes, "barrier area too small");

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
  // Epilogue staging (shared-window address: the epilogue reads it with ld.shared; through a
  // generic pointer it was LD.E, run 89). Padded (Pipeline::kEpiBuffers == 0): warpgroup cw's
  // chunk at EpiAddr() + cw x (rows x pitch) halves; swizzled: warpgroup cw's buffer i at
  // EpiChunk(cw, i), 1024-byte aligned (the TMA's swizzle is of the address bits).
  __device__ uint32_t EpiAddr() const { return s + kEpi; }
  __device__ uint32_t EpiChunk(int cw, uint32_t i) const {
    return s + kEpi + (cw * P::kEpiBuffers + i) * T::kEpilogueChunkBytes;
  }
  __device__ int* SkArrivals() const { return reinterpret_cast<int*>(base + kSkArrivals); }
};

}  // namespace encore::gemm::sm90

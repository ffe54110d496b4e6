// The sm90 kernel's epilogue: a consumer warpgroup's fp32 accumulators -> fp16 C through shared
// memory (stmatrix, 32 tokens per pass), 16-byte coalesced stores masked to the valid rows/columns.
//
// Example (inside the kernel, after ConsumerTile):
//   EpilogueTile<kSrc>(gi, tc, sm, cw, ct, acc);
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/smem_layout.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

template <TokenSource kSrc>
__device__ __forceinline__ void EpilogueTile(const GroupInfo& gi, const TileCoord& tc,
                                             const SmemLayout<kSrc>& sm, int cw, int ct,
                                             const float (&acc)[TileShape::kAccFloats]) {
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

}  // namespace encore::gemm::sm90

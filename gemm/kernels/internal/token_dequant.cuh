// Token dequant of one row of one raw stage (the token-dequant warps' unit of work): the packed
// e2m1 bytes and e4m3 scales are loaded into a TokenRow (registers), then converted to 16 fp16
// chunks (128 k) in the kernel's permuted k order and stored into the 128B-swizzled token stage.
// Split in two so that a pipelined loop can load the next row before converting this one.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

struct TokenRow {
  uint32_t w[4][4];  // [c][q]: bytes [16c, 16c+16) of the row (64-byte TMA swizzle undone)
  uint32_t s0, s1;   // e4m3 scales of k [0, 64) and [64, 128) (s1 = 0 for a half block)
};

// Row r of a tile starting at token row m0: raw_tok/sf_tok are the stage's raw tokens/scales.
__device__ __forceinline__ void LoadTokenRow(TokenRow& t, const uint8_t* raw_tok,
                                             const uint8_t* sf_tok, int r, int m0, bool half) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint4 v =
        *reinterpret_cast<const uint4*>(raw_tok + r * 64 + ((c ^ ((r >> 1) & 3)) << 4));
    t.w[c][0] = v.x; t.w[c][1] = v.y; t.w[c][2] = v.z; t.w[c][3] = v.w;
  }
  const int gr = m0 + r;
  const int blk = gr / 128 - m0 / 128;
  const int rr = gr & 127;
  const uint8_t* sp = sf_tok + blk * 1024 + (rr & 31) * 16 + (rr >> 5) * 4;
  t.s0 = *reinterpret_cast<const uint32_t*>(sp);
  t.s1 = half ? 0u : *reinterpret_cast<const uint32_t*>(sp + 512);
}

// Converts a loaded row and stores it as row r of the fp16 token stage `tok`.
// One-multiply form (kOneMul): e2m1 * (scale * 2^7), i.e. value * 2^-7 (the epilogue rescales).
template <bool kOneMul>
__device__ __forceinline__ void StoreTokenRow(const TokenRow& t, uint8_t* tok, int r) {
  using T = TileShape;
  // Scale of word (c, q) is column j = 2c + q/2: pair c of {s0 lo, s0 hi, s1 lo, s1 hi}.
  uint32_t sc[4][2];
  const uint32_t pairs[4] = {t.s0 & 0xFFFF, t.s0 >> 16, t.s1 & 0xFFFF, t.s1 >> 16};
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint32_t h = kOneMul ? HMul2(E4m3x2ToHalf2(pairs[c]), kHalf2Two7)  // 448 * 2^7 < 65504
                               : E4m3x2ToHalf2(pairs[c]);
    sc[c][0] = BroadcastLo(h);
    sc[c][1] = BroadcastHi(h);
  }
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    uint32_t x[4][4];  // [i][c]
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const uint32_t word = t.w[c][q];
      const uint32_t s = sc[c][q >> 1];
      if (kOneMul) {
        x[0][c] = HMul2(E2m1PairToHalf2Shifted<0>(word), s);
        x[1][c] = HMul2(E2m1PairToHalf2Shifted<1>(word), s);
        x[2][c] = HMul2(E2m1PairToHalf2Shifted<2>(word), s);
        x[3][c] = HMul2(E2m1PairToHalf2Shifted<3>(word), s);
      } else {
        x[0][c] = HMul2(HMul2(E2m1PairToHalf2Shifted<0>(word), kHalf2Two14), s);
        x[1][c] = HMul2(HMul2(E2m1PairToHalf2Shifted<1>(word), kHalf2Two14), s);
        x[2][c] = HMul2(HMul2(E2m1PairToHalf2Shifted<2>(word), kHalf2Two14), s);
        x[3][c] = HMul2(HMul2(E2m1PairToHalf2Shifted<3>(word), kHalf2Two14), s);
      }
    }
    uint8_t* row = tok + (q >> 1) * T::kTokAtomBytes + r * 128;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int ch = 4 * (q & 1) + i;
      *reinterpret_cast<uint4*>(row + ((ch ^ (r & 7)) << 4)) =
          make_uint4(x[i][0], x[i][1], x[i][2], x[i][3]);
    }
  }
}

}  // namespace encore::gemm::sm90

// Token dequant of one row of one raw stage (the token-dequant warps' unit of work): the packed
// e2m1 bytes and e4m3 scales are loaded into a TokenRow (registers), then converted to 16 fp16
// chunks (128 k) in the kernel's permuted k order and stored into the 128B-swizzled token stage.
// Split in two so that a pipelined loop can load the next row before converting this one.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/switches.cuh"
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

// Token scales of one 128-k block (s0: k [0, 64), s1: k [64, 128), 4 e4m3 codes each) -> the
// broadcast half2 scale of word (c, q) as sc[c][q >> 1] (word (c, q) holds k [32c + 8q, +8), its
// scale column is 2c + q / 2). kOneMul: scale * 2^7 (for e2m1 * 2^-14 codes: value * 2^-7).
template <bool kOneMul>
__device__ __forceinline__ void TokenScales(uint32_t s0, uint32_t s1, uint32_t (&sc)[4][2]) {
  const uint32_t pairs[4] = {s0 & 0xFFFF, s0 >> 16, s1 & 0xFFFF, s1 >> 16};
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint32_t h = kOneMul ? HMul2(E4m3x2ToHalf2(pairs[c]), kHalf2Two7)  // 448 * 2^7 < 65504
                               : E4m3x2ToHalf2(pairs[c]);
    sc[c][0] = BroadcastLo(h);
    sc[c][1] = BroadcastHi(h);
  }
}

// Word column q of a 128-k block (words w[c] = (c, q), c = 0..3, with their scales s[c]) -> the
// four 16-byte chunks ch = 4 (q & 1) + i (i = 0..3) of fp16 atom q >> 1, in the kernel's permuted
// k order (chunk ch, half2 c = k {32c + 8q + i, +4}; with ENCORE_SM90_BYTE_DECODE k 32c + 8q +
// kSlotNibbles[i]). kOneMul: one multiply (value * 2^-7, s from
// TokenScales<true>); else exact values in two multiplies.
template <bool kOneMul>
__device__ __forceinline__ void ConvertTokenColumn(const uint32_t (&w)[4], const uint32_t (&s)[4],
                                                   uint4 (&out)[4]) {
  uint32_t x[4][4];  // [i][c]
#pragma unroll
  for (int c = 0; c < 4; ++c) {
#if ENCORE_SM90_BYTE_DECODE  // the weights' slots (consumer.cuh BuildSteps)
    const uint32_t hi = E2m1HighBytes<true>(w[c]), lo = E2m1HighBytes<false>(w[c]);
    const uint32_t v[4] = {E2m1SlotFromHighBytes<0>(hi), E2m1SlotFromHighBytes<1>(hi),
                           E2m1SlotFromHighBytes<2>(lo), E2m1SlotFromHighBytes<3>(lo)};
#else
    const uint32_t v[4] = {
        E2m1PairToHalf2ShiftedOneCopy<0>(w[c]), E2m1PairToHalf2ShiftedOneCopy<1>(w[c]),
        E2m1PairToHalf2ShiftedOneCopy<2>(w[c]), E2m1PairToHalf2ShiftedOneCopy<3>(w[c])};
#endif
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      x[i][c] = kOneMul ? HMul2(v[i], s[c]) : HMul2(HMul2(v[i], kHalf2Two14), s[c]);
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = make_uint4(x[i][0], x[i][1], x[i][2], x[i][3]);
}

// Converts a loaded row and stores it as row r of the fp16 token stage `tok` (128B swizzle).
template <bool kOneMul>
__device__ __forceinline__ void StoreTokenRow(const TokenRow& t, uint8_t* tok, int r) {
  using T = TileShape;
  uint32_t sc[4][2];
  TokenScales<kOneMul>(t.s0, t.s1, sc);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uint32_t w[4] = {t.w[0][q], t.w[1][q], t.w[2][q], t.w[3][q]};
    const uint32_t s[4] = {sc[0][q >> 1], sc[1][q >> 1], sc[2][q >> 1], sc[3][q >> 1]};
    uint4 out[4];
    ConvertTokenColumn<kOneMul>(w, s, out);
    uint8_t* row = tok + (q >> 1) * T::kTokAtomBytes + r * 128;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int ch = 4 * (q & 1) + i;
      *reinterpret_cast<uint4*>(row + ((ch ^ (r & 7)) << 4)) = out[i];
    }
  }
}

}  // namespace encore::gemm::sm90

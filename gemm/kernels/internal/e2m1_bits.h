// The kernels' e2m1 -> fp16 bit tricks as plain integer functions, compiled for the device (in
// dequant.cuh) and the host (tests/gemm/e2m1_bits_test.cc checks them on every code pair).
//
// Example:
//   // w holds 8 e2m1 codes (nibble j = bits 4j..4j+3); pair 1 = nibbles 1 and 5:
//   const uint32_t h2 = E2m1PairToHalf2Shifted<1>(w);  // {fp16(e2m1[1]), fp16(e2m1[5])} * 2^-14
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ENCORE_E2M1_FN __host__ __device__ __forceinline__
#else
#define ENCORE_E2M1_FN inline
#endif

namespace encore::gemm::sm90 {

// Nibble pair i (0..3) of a 32-bit word holding 8 e2m1 codes -> half2 {nibble i, nibble i + 4}
// (low half, high half), each equal to e2m1 * 2^-14 exactly.
// NOTES: the e2m1 bits (s e1 e0 m) go to fp16 bits 15, 11, 10, 9: the exponent field e1e0 then
// reads as fp16 exponent e1e0 (bias 15 vs 1), so every code, the subnormal 0.5 included (fp16
// subnormal 2^-15), is e2m1 * 2^-14. The sign and the three magnitude bits come from two copies of
// w shifted so that nibble i's bit 3 lands on bit 15 (x) and its bits 0-2 on bits 9-11 (y); one
// lop3 merges them: 3 ALU ops per half2 (2 for i = 3, where x = w). The consumers use it (run 33:
// with the shared-window addressing, -4..-14% on the GPU MODE and few-tile shapes).
template <int kI>
ENCORE_E2M1_FN uint32_t E2m1PairToHalf2Shifted(uint32_t w) {
  const uint32_t x = kI == 3 ? w : w << (12 - 4 * kI);
  const uint32_t y = kI == 3 ? w >> 3 : w << (9 - 4 * kI);
  return (x & 0x80008000u) | (y & 0x0E000E00u);
}

// The same value from one shifted copy (one more ALU op per half2, one fewer live register): the
// in-kernel token dequant warps, which run in 80 registers, spill 16 bytes with the two-copy form.
template <int kI>
ENCORE_E2M1_FN uint32_t E2m1PairToHalf2ShiftedOneCopy(uint32_t w) {
  const uint32_t t = (kI == 3 ? w : (w << (12 - 4 * kI))) & 0xF000F000u;
  return (t | (t >> 3)) & 0x8E008E00u;
}

// The byte form (the kernels' default, ENCORE_SM90_BYTE_DECODE = 1): the fp16 high bytes of four
// codes at once, then one byte permute per half2. The fp16 with high byte (sign bit 7, e1 e0 m in
// bits 3..1) and a zero low byte is e2m1 * 2^-14, the same bits as E2m1PairToHalf2Shifted's.
// E2m1HighBytes<true>(w): byte b = that high byte of the hi nibble of w's byte b (nibble 2b + 1);
// <false>: of the lo nibble (nibble 2b). 3 and 4 ALU ops for four codes.
template <bool kHi>
ENCORE_E2M1_FN uint32_t E2m1HighBytes(uint32_t w) {
  return kHi ? (w & 0x80808080u) | ((w >> 3) & 0x0E0E0E0Eu)
             : ((w << 4) & 0x80808080u) | ((w << 1) & 0x0E0E0E0Eu);
}

// Slot s (0..3) of a word from its high bytes hb = E2m1HighBytes<(s < 2)>(w): half2 {low, high}
// of nibbles kSlotNibbles[s] = s 0: {1, 3}, 1: {5, 7}, 2: {0, 2}, 3: {4, 6} (one PRMT).
inline constexpr int kSlotNibbles[4][2] = {{1, 3}, {5, 7}, {0, 2}, {4, 6}};
template <int kS>
ENCORE_E2M1_FN uint32_t E2m1SlotFromHighBytes(uint32_t hb) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(hb, 0u, (kS & 1) ? 0x3424u : 0x1404u);  // {0, byte, 0, byte'}
#else
  const int b = 2 * (kS & 1);
  return (((hb >> (8 * b)) & 0xFFu) << 8) | (((hb >> (8 * b + 8)) & 0xFFu) << 24);
#endif
}
template <int kS>
ENCORE_E2M1_FN uint32_t E2m1Slot(uint32_t w) {
  return E2m1SlotFromHighBytes<kS>(E2m1HighBytes<(kS < 2)>(w));
}

}  // namespace encore::gemm::sm90

#undef ENCORE_E2M1_FN

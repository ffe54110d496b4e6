// NVFP4 -> fp16 bit tricks (no tables, no local memory).
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

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
__device__ __forceinline__ uint32_t E2m1PairToHalf2Shifted(uint32_t w) {
  const uint32_t x = kI == 3 ? w : w << (12 - 4 * kI);
  const uint32_t y = kI == 3 ? w >> 3 : w << (9 - 4 * kI);
  return (x & 0x80008000u) | (y & 0x0E000E00u);
}

// The same value from one shifted copy (one more ALU op per half2, one fewer live register): the
// in-kernel token dequant warps, which run in 80 registers, spill 16 bytes with the two-copy form.
template <int kI>
__device__ __forceinline__ uint32_t E2m1PairToHalf2ShiftedOneCopy(uint32_t w) {
  const uint32_t t = (kI == 3 ? w : (w << (12 - 4 * kI))) & 0xF000F000u;
  return (t | (t >> 3)) & 0x8E008E00u;
}

// {lo, hi} rounded to fp16 (one cvt.rn.f16x2.f32).
__device__ __forceinline__ uint32_t PackHalf2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

__device__ __forceinline__ uint32_t HMul2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Two e4m3 codes (low byte, high byte of the low 16 bits) -> half2 {lo, hi}; exact (e4m3 values,
// subnormals 2^-9.. included, are fp16 normals).
__device__ __forceinline__ uint32_t E4m3x2ToHalf2(uint32_t two_codes) {
  uint32_t d;
  asm("{\n.reg .b16 s;\ncvt.u16.u32 s, %1;\ncvt.rn.f16x2.e4m3x2 %0, s;\n}" : "=r"(d) : "r"(two_codes));
  return d;
}

// {x.lo, x.lo} and {x.hi, x.hi}.
__device__ __forceinline__ uint32_t BroadcastLo(uint32_t x) { return __byte_perm(x, 0, 0x1010); }
__device__ __forceinline__ uint32_t BroadcastHi(uint32_t x) { return __byte_perm(x, 0, 0x3232); }

inline constexpr uint32_t kHalf2Two14 = 0x74007400u;  // {2^14, 2^14}
inline constexpr uint32_t kHalf2Two7 = 0x58005800u;   // {2^7, 2^7}

}  // namespace encore::gemm::sm90

// Device-side NVFP4 -> fp16 helpers: e4m3 scale pairs, fp16x2 multiplies, broadcasts
// (no tables, no local memory). The e2m1 bit tricks live in e2m1_bits.h (host-testable).
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "gemm/kernels/internal/e2m1_bits.h"

namespace encore::gemm::sm90 {

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

// CPU reference for the NVFP4 grouped GEMM: dequantize exactly, accumulate in double, round
// once to fp16 (round to nearest even). The GPU kernels are tested against it.
//
// Example:
//   std::vector<uint16_t> c = encore::gemm::ReferenceGemm(a, b);  // a: M×K, b: N×K -> M×N fp16
#ifndef ENCORE_GEMM_REFERENCE_H_
#define ENCORE_GEMM_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "gemm/nvfp4.h"

namespace encore::gemm {

// C[M×N] = A · Bᵀ as fp16 bit patterns, row-major. Requires a.k == b.k.
std::vector<uint16_t> ReferenceGemm(const Nvfp4Matrix& a, const Nvfp4Matrix& b);

// The same in double before the final rounding (for error analysis in tests). Large products
// are computed on all of the machine's threads; every element is still one sequential sum, so the
// result is the same on any machine.
std::vector<double> ReferenceGemmDouble(const Nvfp4Matrix& a, const Nvfp4Matrix& b);

// ReferenceGemm's final rounding of ReferenceGemmDouble's values:
// ReferenceGemm(a, b) == RoundToHalf(ReferenceGemmDouble(a, b)).
std::vector<uint16_t> RoundToHalf(const std::vector<double>& wide);

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_REFERENCE_H_

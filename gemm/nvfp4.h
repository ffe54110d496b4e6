// NVFP4 number formats on the host: e2m1 values, e4m3 scales, quantization of float matrices,
// and the 128×4 blocked scale-factor layout the GPU kernels read.
//
// e2m1 (4 bits: sign, 2 exponent bits, 1 mantissa bit, bias 1): ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
// e4m3 (8 bits, the "fn" variant: bias 7, no infinities, 0x7f/0xff = NaN, max ±448, subnormals
// down to 2^-9). Encoders round to nearest, ties to even, and saturate finite overflow to the
// largest finite value (±inf included, as e4m3fn and e2m1 have no infinities). NaN encodes to
// NaN (0x7f) for e4m3; e2m1 has no NaN, so EncodeE2M1 maps NaN to +0.
//
// Example:
//   encore::gemm::Nvfp4Matrix q = encore::gemm::QuantizeNvfp4(values, rows, k);
//   std::vector<uint8_t> blocked = encore::gemm::ToBlockedScales(q.scales, rows, k);
//   float x = encore::gemm::DequantizeNvfp4(q, r, kk);
#ifndef ENCORE_GEMM_NVFP4_H_
#define ENCORE_GEMM_NVFP4_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace encore::gemm {

// e2m1: code in the low 4 bits.
float DecodeE2M1(uint8_t code);
// Round to nearest e2m1 (ties to even mantissa), saturating to ±6 (±inf included). The sign is
// kept, so small negative values give -0 (code 8). NaN -> +0 (code 0), since e2m1 has no NaN.
uint8_t EncodeE2M1(float x);

float DecodeE4M3(uint8_t code);  // NaN for 0x7f / 0xff
// Round to nearest e4m3 (ties to even), saturating overflow (±inf included) to ±448 (0x7e /
// 0xfe); NaN -> 0x7f. The sign is kept, so tiny negative values give -0 (0x80).
uint8_t EncodeE4M3(float x);

// A row-major NVFP4 matrix: rows × k values packed two per byte (low nibble = lower k), and one
// e4m3 scale per 16 consecutive k in plain row-major order (rows × k/16).
struct Nvfp4Matrix {
  int rows = 0;
  int k = 0;
  std::vector<uint8_t> packed;  // rows * k / 2
  std::vector<uint8_t> scales;  // rows * k / 16, row-major (NOT blocked)
};

// Per row and per 16 consecutive k: scale = e4m3(amax/6) (a zero scale when amax == 0),
// value = e2m1(x / decoded scale), with all 16 values +0 when the scale decodes to 0 (amax/6
// below half the smallest e4m3 subnormal). `values` is rows × k row-major and finite;
// k % 16 == 0; values.size() == rows · k (checked: a violation aborts).
Nvfp4Matrix QuantizeNvfp4(absl::Span<const float> values, int rows, int k);

// The e2m1 code of element (r, kk) and its dequantized value e2m1 · e4m3 (exact in float).
uint8_t Nvfp4Code(const Nvfp4Matrix& m, int r, int kk);
float DequantizeNvfp4(const Nvfp4Matrix& m, int r, int kk);

// Byte offset of (row r, scale column j) in the 128×4 blocked layout for a K of `k`:
// ((r/128)·ceil(K/64) + j/4)·512 + (r%32)·16 + ((r%128)/32)·4 + j%4.
inline constexpr size_t BlockedScaleOffset(int r, int j, int k) {
  const size_t col_blocks = (static_cast<size_t>(k) + 63) / 64;
  return ((static_cast<size_t>(r / 128)) * col_blocks + static_cast<size_t>(j / 4)) * 512 +
         static_cast<size_t>(r % 32) * 16 + static_cast<size_t>((r % 128) / 32) * 4 +
         static_cast<size_t>(j % 4);
}

// Row-major scales (rows × k/16) -> blocked (BlockedScaleBytes(rows, k) bytes, padding rows and
// columns zero-filled), and back. k % 16 == 0 (k need not be a multiple of 64 here: the last
// 4-column block is then partly padding); span sizes are checked (a violation aborts).
std::vector<uint8_t> ToBlockedScales(absl::Span<const uint8_t> row_major, int rows, int k);
std::vector<uint8_t> FromBlockedScales(absl::Span<const uint8_t> blocked, int rows, int k);

// fp16 helpers (IEEE binary16, round to nearest even, overflow to ±inf, subnormals kept).
uint16_t FloatToHalfBits(float x);
uint16_t DoubleToHalfBits(double x);  // one rounding straight from double
float HalfBitsToFloat(uint16_t h);

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_NVFP4_H_

#include "gemm/nvfp4.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "absl/types/span.h"
#include "gemm/problem.h"

namespace encore::gemm {
namespace {

// e2m1 magnitudes by code & 7. Adjacent codes differ in the mantissa bit, so an even code is an
// even mantissa (the tie-breaking target).
constexpr float kE2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

// Magnitude code (0..7) of |a| rounded to nearest e2m1, ties to even, saturating at 6. `a` is
// non-negative and not NaN. Works in double so callers can pass an exact quotient.
uint8_t E2M1MagnitudeCode(double a) {
  for (uint8_t i = 0; i < 7; ++i) {
    const double mid = 0.5 * (static_cast<double>(kE2M1Magnitudes[i]) + kE2M1Magnitudes[i + 1]);
    if (a < mid) return i;
    if (a == mid) return (i % 2 == 0) ? i : static_cast<uint8_t>(i + 1);
  }
  return 7;
}

uint8_t EncodeE2M1Double(double x) {
  if (std::isnan(x)) return 0;
  const uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  return static_cast<uint8_t>(sign | E2M1MagnitudeCode(std::fabs(x)));
}

// Works in double so QuantizeNvfp4 can pass amax/6 without a first rounding to float.
uint8_t EncodeE4M3Double(double x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(x);
  if (a >= 448.0) return sign | 0x7e;  // saturate (also everything that would round above 448)
  // Below the smallest normal (2^-6) the quantum is 2^-9 and the code is the subnormal mantissa;
  // a quotient of 8 lands on code 0x08 = 2^-6, the carry into the exponent field.
  if (a < 0x1p-6) {
    const double q = std::nearbyint(a * 512.0);  // exact scaling, one RNE rounding
    return sign | static_cast<uint8_t>(q);
  }
  int e2 = 0;
  (void)std::frexp(a, &e2);  // a = f · 2^e2, f in [0.5, 1): a in [2^(e2-1), 2^e2)
  const int exponent = e2 - 1;
  // Quantum 2^(exponent-3): q in [8, 16]; q = 16 carries into the next exponent naturally.
  const double q = std::nearbyint(std::ldexp(a, 3 - exponent));
  const int code = ((exponent + 7) << 3) + (static_cast<int>(q) - 8);
  return sign | static_cast<uint8_t>(std::min(code, 0x7e));
}

}  // namespace

float DecodeE2M1(uint8_t code) {
  const float mag = kE2M1Magnitudes[code & 0x7];
  return (code & 0x8) ? -mag : mag;
}

uint8_t EncodeE2M1(float x) { return EncodeE2M1Double(static_cast<double>(x)); }

float DecodeE4M3(uint8_t code) {
  const int exponent = (code >> 3) & 0xf;
  const int mantissa = code & 0x7;
  float mag;
  if (exponent == 0xf && mantissa == 0x7) {
    mag = std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {
    mag = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m · 2^-9
  } else {
    mag = std::ldexp(static_cast<float>(8 + mantissa), exponent - 7 - 3);  // (1 + m/8) · 2^(e-7)
  }
  return (code & 0x80) ? -mag : mag;
}

uint8_t EncodeE4M3(float x) { return EncodeE4M3Double(static_cast<double>(x)); }

Nvfp4Matrix QuantizeNvfp4(absl::Span<const float> values, int rows, int k) {
  ABSL_RAW_CHECK(rows >= 0 && k >= 0 && k % kScaleVectorSize == 0, "QuantizeNvfp4: bad shape");
  ABSL_RAW_CHECK(values.size() == static_cast<size_t>(rows) * static_cast<size_t>(k),
                 "QuantizeNvfp4: values.size() != rows * k");
  Nvfp4Matrix m;
  m.rows = rows;
  m.k = k;
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(k);
  m.packed.assign(count / 2, 0);
  m.scales.assign(count / kScaleVectorSize, 0);
  for (size_t block = 0; block < m.scales.size(); ++block) {
    const float* x = values.data() + block * kScaleVectorSize;
    float amax = 0.0f;
    for (int i = 0; i < kScaleVectorSize; ++i) amax = std::max(amax, std::fabs(x[i]));
    if (amax == 0.0f) continue;  // zero scale, zero values
    const uint8_t scale_code = EncodeE4M3Double(static_cast<double>(amax) / 6.0);
    m.scales[block] = scale_code;
    const double scale = DecodeE4M3(scale_code);
    if (scale == 0.0) continue;  // the scale underflowed: every value is +0
    uint8_t* out = m.packed.data() + block * kScaleVectorSize / 2;
    for (int i = 0; i < kScaleVectorSize; i += 2) {
      // The double quotient of two floats never crosses or lands on an e2m1 midpoint unless the
      // exact quotient does, so the rounding decision is the exact one.
      const uint8_t lo = EncodeE2M1Double(static_cast<double>(x[i]) / scale);
      const uint8_t hi = EncodeE2M1Double(static_cast<double>(x[i + 1]) / scale);
      out[i / 2] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
  return m;
}

uint8_t Nvfp4Code(const Nvfp4Matrix& m, int r, int kk) {
  const size_t index = static_cast<size_t>(r) * static_cast<size_t>(m.k) + static_cast<size_t>(kk);
  const uint8_t byte = m.packed[index / 2];
  return (index % 2 == 0) ? (byte & 0xf) : (byte >> 4);
}

float DequantizeNvfp4(const Nvfp4Matrix& m, int r, int kk) {
  const size_t scale_index = static_cast<size_t>(r) * static_cast<size_t>(m.k / kScaleVectorSize) +
                             static_cast<size_t>(kk / kScaleVectorSize);
  return DecodeE2M1(Nvfp4Code(m, r, kk)) * DecodeE4M3(m.scales[scale_index]);
}

std::vector<uint8_t> ToBlockedScales(absl::Span<const uint8_t> row_major, int rows, int k) {
  ABSL_RAW_CHECK(rows >= 0 && k >= 0 && k % kScaleVectorSize == 0, "ToBlockedScales: bad shape");
  const int cols = k / kScaleVectorSize;
  ABSL_RAW_CHECK(row_major.size() == static_cast<size_t>(rows) * static_cast<size_t>(cols),
                 "ToBlockedScales: row_major.size() != rows * k / 16");
  std::vector<uint8_t> blocked(BlockedScaleBytes(rows, k), 0);
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = row_major.data() + static_cast<size_t>(r) * static_cast<size_t>(cols);
    for (int j = 0; j < cols; ++j) blocked[BlockedScaleOffset(r, j, k)] = src[j];
  }
  return blocked;
}

std::vector<uint8_t> FromBlockedScales(absl::Span<const uint8_t> blocked, int rows, int k) {
  ABSL_RAW_CHECK(rows >= 0 && k >= 0 && k % kScaleVectorSize == 0, "FromBlockedScales: bad shape");
  ABSL_RAW_CHECK(blocked.size() == BlockedScaleBytes(rows, k),
                 "FromBlockedScales: blocked.size() != BlockedScaleBytes(rows, k)");
  const int cols = k / kScaleVectorSize;
  std::vector<uint8_t> row_major(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    uint8_t* dst = row_major.data() + static_cast<size_t>(r) * static_cast<size_t>(cols);
    for (int j = 0; j < cols; ++j) dst[j] = blocked[BlockedScaleOffset(r, j, k)];
  }
  return row_major;
}

uint16_t FloatToHalfBits(float x) {
  return DoubleToHalfBits(static_cast<double>(x));  // float -> double is exact: one rounding
}

uint16_t DoubleToHalfBits(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0x0000;
  if (std::isnan(x)) return sign | 0x7e00;
  const double a = std::fabs(x);
  // 65520 is the midpoint between 65504 (odd mantissa 0x3ff) and 2^16: it and above round to inf.
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < 0x1p-14) {
    // Subnormal range, quantum 2^-24: the code is the rounded quotient (1024 -> min normal).
    return sign | static_cast<uint16_t>(std::nearbyint(a * 0x1p24));
  }
  int e2 = 0;
  (void)std::frexp(a, &e2);
  const int exponent = e2 - 1;  // a in [2^exponent, 2^(exponent+1)), exponent in [-14, 15]
  const double q = std::nearbyint(std::ldexp(a, 10 - exponent));  // [1024, 2048], one rounding
  return sign | static_cast<uint16_t>(((exponent + 15) << 10) + (static_cast<int>(q) - 1024));
}

float HalfBitsToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float mag;
  if (exponent == 0x1f) {
    mag = mantissa == 0 ? std::numeric_limits<float>::infinity()
                        : std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {
    mag = std::ldexp(static_cast<float>(mantissa), -24);
  } else {
    mag = std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
  }
  return (h & 0x8000) ? -mag : mag;
}

}  // namespace encore::gemm

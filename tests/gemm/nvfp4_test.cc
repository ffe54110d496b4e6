#include "gemm/nvfp4.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "gemm/problem.h"
#include "gtest/gtest.h"

namespace encore::gemm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// e2m1

TEST(E2M1, DecodesTheTable) {
  const float expected[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint8_t c = 0; c < 8; ++c) {
    EXPECT_EQ(DecodeE2M1(c), expected[c]) << int{c};
    EXPECT_EQ(DecodeE2M1(static_cast<uint8_t>(c | 8)), -expected[c]) << int{c};
  }
  EXPECT_TRUE(std::signbit(DecodeE2M1(8)));      // -0
  EXPECT_EQ(DecodeE2M1(0xf3), DecodeE2M1(0x3));  // only the low nibble counts
}

TEST(E2M1, AllSixteenCodesRoundTrip) {
  for (uint8_t c = 0; c < 16; ++c) EXPECT_EQ(EncodeE2M1(DecodeE2M1(c)), c) << int{c};
}

TEST(E2M1, TiesRoundToEvenMantissa) {
  struct Case {
    float x;
    float expected;
  };
  const Case cases[] = {{0.25f, 0.0f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f},
                        {2.5f, 2.0f},  {3.5f, 4.0f},  {5.0f, 4.0f}};
  for (const Case& c : cases) {
    EXPECT_EQ(DecodeE2M1(EncodeE2M1(c.x)), c.expected) << c.x;
    EXPECT_EQ(DecodeE2M1(EncodeE2M1(-c.x)), -c.expected) << -c.x;
    // Just off the tie, the nearer neighbour wins.
    const float up = std::nextafter(c.x, kInf);
    const float down = std::nextafter(c.x, 0.0f);
    EXPECT_GT(DecodeE2M1(EncodeE2M1(up)), c.x) << c.x;
    EXPECT_LT(DecodeE2M1(EncodeE2M1(down)), c.x) << c.x;
  }
}

TEST(E2M1, SaturatesAndHandlesSpecials) {
  for (float x : {6.5f, 7.0f, 8.0f, 1e9f, kInf}) {
    EXPECT_EQ(EncodeE2M1(x), 0x7) << x;
    EXPECT_EQ(EncodeE2M1(-x), 0xf) << -x;
  }
  EXPECT_EQ(EncodeE2M1(kNaN), 0x0);
  EXPECT_EQ(EncodeE2M1(-0.1f), 0x8);  // rounds to -0
  EXPECT_EQ(EncodeE2M1(0.1f), 0x0);
}

// ---------------------------------------------------------------------------------------------
// e4m3 (fn)

TEST(E4M3, DecodesKnownCodes) {
  EXPECT_EQ(DecodeE4M3(0x00), 0.0f);
  EXPECT_EQ(DecodeE4M3(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(DecodeE4M3(0x07), std::ldexp(7.0f, -9));  // largest subnormal
  EXPECT_EQ(DecodeE4M3(0x08), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(DecodeE4M3(0x38), 1.0f);
  EXPECT_EQ(DecodeE4M3(0x40), 2.0f);
  EXPECT_EQ(DecodeE4M3(0x39), 1.125f);
  EXPECT_EQ(DecodeE4M3(0x78), 256.0f);
  EXPECT_EQ(DecodeE4M3(0x7e), 448.0f);
  EXPECT_EQ(DecodeE4M3(0xfe), -448.0f);
  EXPECT_EQ(DecodeE4M3(0xb8), -1.0f);
  EXPECT_TRUE(std::signbit(DecodeE4M3(0x80)));
  EXPECT_EQ(DecodeE4M3(0x80), 0.0f);
  EXPECT_TRUE(std::isnan(DecodeE4M3(0x7f)));
  EXPECT_TRUE(std::isnan(DecodeE4M3(0xff)));
}

TEST(E4M3, PositiveCodesAreStrictlyIncreasing) {
  for (int c = 0; c < 0x7e; ++c) {
    EXPECT_LT(DecodeE4M3(static_cast<uint8_t>(c)), DecodeE4M3(static_cast<uint8_t>(c + 1))) << c;
  }
}

TEST(E4M3, All256CodesRoundTrip) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    const float x = DecodeE4M3(code);
    if (std::isnan(x)) {
      EXPECT_EQ(EncodeE4M3(x), 0x7f) << c;
      EXPECT_TRUE(std::isnan(DecodeE4M3(EncodeE4M3(x)))) << c;
    } else {
      EXPECT_EQ(EncodeE4M3(x), code) << c;  // includes -0 (0x80)
    }
  }
}

TEST(E4M3, MidpointsRoundToEven) {
  for (int c = 0; c < 0x7e; ++c) {
    const float lo = DecodeE4M3(static_cast<uint8_t>(c));
    const float hi = DecodeE4M3(static_cast<uint8_t>(c + 1));
    const float mid = 0.5f * (lo + hi);  // exact: 5 significant bits
    ASSERT_EQ(mid - lo, hi - mid) << c;
    const int even = (c % 2 == 0) ? c : c + 1;
    EXPECT_EQ(EncodeE4M3(mid), even) << c;
    EXPECT_EQ(EncodeE4M3(-mid), even | 0x80) << c;
    EXPECT_EQ(EncodeE4M3(std::nextafter(mid, kInf)), c + 1) << c;
    EXPECT_EQ(EncodeE4M3(std::nextafter(mid, 0.0f)), c) << c;
  }
  // Below the smallest subnormal: 2^-10 is the tie between 0 and 2^-9.
  EXPECT_EQ(EncodeE4M3(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(EncodeE4M3(-std::ldexp(1.0f, -10)), 0x80);
  EXPECT_EQ(EncodeE4M3(std::ldexp(1.0f, -10) * 1.001f), 0x01);
  EXPECT_EQ(EncodeE4M3(std::ldexp(1.0f, -30)), 0x00);
}

TEST(E4M3, SaturatesAndHandlesNaN) {
  for (float x : {448.0f, 449.0f, 464.0f, 480.0f, 500.0f, 1e9f, kInf}) {
    EXPECT_EQ(EncodeE4M3(x), 0x7e) << x;
    EXPECT_EQ(EncodeE4M3(-x), 0xfe) << -x;
    EXPECT_EQ(DecodeE4M3(EncodeE4M3(x)), 448.0f) << x;
  }
  EXPECT_EQ(EncodeE4M3(kNaN), 0x7f);
  EXPECT_EQ(EncodeE4M3(-kNaN), 0x7f);
  // Just below 448 and its lower neighbour 416: nearest.
  EXPECT_EQ(EncodeE4M3(440.0f), 0x7e);
  EXPECT_EQ(EncodeE4M3(432.0f), 0x7e);  // tie 416/448: 448 has the even mantissa (6)
  EXPECT_EQ(EncodeE4M3(420.0f), 0x7d);
}

// ---------------------------------------------------------------------------------------------
// fp16

TEST(Half, KnownValues) {
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);  // tie with 2^16 rounds to even -> inf
  EXPECT_EQ(FloatToHalfBits(1e9f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(-kInf), 0xfc00);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);  // tie with 0 -> 0
  EXPECT_EQ(FloatToHalfBits(std::ldexp(3.0f, -25)), 0x0002);  // tie 1/2 quanta -> 2
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);
  const uint16_t nan = FloatToHalfBits(kNaN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0xfc01)));
  EXPECT_EQ(HalfBitsToFloat(0x7c00), kInf);
  EXPECT_EQ(HalfBitsToFloat(0xfc00), -kInf);
  EXPECT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
}

TEST(Half, EveryNonNaNValueRoundTrips) {
  for (int h = 0; h < 0x10000; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float x = HalfBitsToFloat(bits);
    if (std::isnan(x)) continue;
    EXPECT_EQ(FloatToHalfBits(x), bits) << h;
    EXPECT_EQ(DoubleToHalfBits(static_cast<double>(x)), bits) << h;
  }
}

TEST(Half, MidpointsRoundToEven) {
  // All adjacent pairs of positive finite halves, including the subnormal/normal boundary.
  for (int h = 0; h < 0x7bff; ++h) {
    const double lo = HalfBitsToFloat(static_cast<uint16_t>(h));
    const double hi = HalfBitsToFloat(static_cast<uint16_t>(h + 1));
    const double mid = 0.5 * (lo + hi);
    const int even = (h % 2 == 0) ? h : h + 1;
    ASSERT_EQ(DoubleToHalfBits(mid), even) << h;
    ASSERT_EQ(DoubleToHalfBits(-mid), even | 0x8000) << h;
    ASSERT_EQ(DoubleToHalfBits(std::nextafter(mid, 1e10)), h + 1) << h;
    ASSERT_EQ(DoubleToHalfBits(std::nextafter(mid, 0.0)), h) << h;
    ASSERT_EQ(FloatToHalfBits(static_cast<float>(mid)), even) << h;  // mid is exact in float
  }
}

TEST(Half, DoubleRoundsOnceNotThroughFloat) {
  // 1 + 2^-11 is the tie between 1 (0x3c00) and 1 + 2^-10 (0x3c01). A double just above it must
  // round up; rounding it to float first lands exactly on the tie, which then rounds down.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(DoubleToHalfBits(x), 0x3c01);
  EXPECT_EQ(FloatToHalfBits(static_cast<float>(x)), 0x3c00);
  EXPECT_EQ(DoubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  // The same at the overflow threshold: just below 65520 stays finite.
  EXPECT_EQ(DoubleToHalfBits(std::nextafter(65520.0, 0.0)), 0x7bff);
  EXPECT_EQ(DoubleToHalfBits(65520.0), 0x7c00);
  // And in the subnormal range: 2^-25 + 2^-60 is above the tie with 0.
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.0, -25) + std::ldexp(1.0, -60)), 0x0001);
  EXPECT_EQ(FloatToHalfBits(static_cast<float>(std::ldexp(1.0, -25) + std::ldexp(1.0, -60))),
            0x0000);
}

// ---------------------------------------------------------------------------------------------
// Blocked scale layout

// The layout written as a 5-D array [row tile][column tile][32][4][4] (an independent spelling
// of the offset formula in the header).
size_t OracleOffset(int r, int j, int k) {
  const int col_tiles = (k / 16 + 3) / 4;
  const int row_tile = r / 128, in_tile = r % 128, col_tile = j / 4;
  const size_t tile = static_cast<size_t>(row_tile) * col_tiles + col_tile;
  const size_t row_slot = (tile * 32 + in_tile % 32) * 4 + in_tile / 32;
  return row_slot * 4 + j % 4;
}

std::vector<uint8_t> PatternScales(int rows, int k) {
  std::vector<uint8_t> s(static_cast<size_t>(rows) * (k / 16));
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(1 + (i * 37 + i / 7) % 254);
  return s;  // never 0, so padding is distinguishable
}

class BlockedLayout : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BlockedLayout, EveryElementAtTheFormulaOffsetAndPaddingZero) {
  const auto [rows, k] = GetParam();
  const int cols = k / 16;
  const std::vector<uint8_t> row_major = PatternScales(rows, k);
  const std::vector<uint8_t> blocked = ToBlockedScales(row_major, rows, k);
  ASSERT_EQ(blocked.size(), BlockedScaleBytes(rows, k));
  ASSERT_EQ(blocked.size(), static_cast<size_t>((rows + 127) / 128) * ((cols + 3) / 4) * 512);
  std::vector<bool> used(blocked.size(), false);
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < cols; ++j) {
      const size_t off = OracleOffset(r, j, k);
      ASSERT_EQ(BlockedScaleOffset(r, j, k), off) << r << "," << j;
      ASSERT_LT(off, blocked.size());
      ASSERT_FALSE(used[off]) << "two elements at offset " << off;
      used[off] = true;
      ASSERT_EQ(blocked[off], row_major[static_cast<size_t>(r) * cols + j]) << r << "," << j;
    }
  }
  for (size_t i = 0; i < blocked.size(); ++i) {
    if (!used[i]) {
      ASSERT_EQ(blocked[i], 0) << "padding byte " << i;
    }
  }
  EXPECT_EQ(FromBlockedScales(blocked, rows, k), row_major);
  // blocked -> row-major -> blocked is the identity on buffers with zero padding.
  EXPECT_EQ(ToBlockedScales(FromBlockedScales(blocked, rows, k), rows, k), blocked);
}

// K = 48 and 80 (K/16 = 3, 5) cover partial 4-column blocks, which K % 64 == 0 never produces.
INSTANTIATE_TEST_SUITE_P(Shapes, BlockedLayout,
                         ::testing::Combine(::testing::Values(1, 100, 128, 200, 300),
                                            ::testing::Values(48, 64, 80, 128, 192, 320)));

TEST(BlockedLayoutEdge, ZeroRowsIsEmpty) {
  EXPECT_TRUE(ToBlockedScales({}, 0, 128).empty());
  EXPECT_TRUE(FromBlockedScales({}, 0, 128).empty());
  EXPECT_EQ(BlockedScaleBytes(0, 128), 0u);
}

// ---------------------------------------------------------------------------------------------
// Quantization

TEST(Quantize, PacksLowNibbleFirstAndDequantizesExactly) {
  std::vector<float> x(2 * 32, 0.0f);
  // Row 0, block 0: amax 6 -> scale 1.0; values exactly representable.
  const float row0[16] = {6, -3, 0.5f, 1, 0, -0.5f, 4, 2, 1.5f, -6, 3, 0, 0, 0, 0, 0};
  for (int i = 0; i < 16; ++i) x[i] = row0[i];
  // Row 0, block 1 stays zero. Row 1, block 1: amax 12 -> scale 2.0.
  x[32 + 16] = 12.0f;
  x[32 + 17] = -1.0f;
  const Nvfp4Matrix q = QuantizeNvfp4(x, 2, 32);
  ASSERT_EQ(q.rows, 2);
  ASSERT_EQ(q.k, 32);
  ASSERT_EQ(q.packed.size(), 32u);
  ASSERT_EQ(q.scales.size(), 4u);
  EXPECT_EQ(q.scales[0], 0x38);
  EXPECT_EQ(q.scales[1], 0x00);
  EXPECT_EQ(q.scales[2], 0x00);
  EXPECT_EQ(q.scales[3], 0x40);
  EXPECT_EQ(q.packed[0], 0xd7);  // low nibble: 6 (0x7), high nibble: -3 (0xd)
  EXPECT_EQ(Nvfp4Code(q, 0, 0), 0x7);
  EXPECT_EQ(Nvfp4Code(q, 0, 1), 0xd);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(DequantizeNvfp4(q, 0, i), row0[i]) << i;
  for (int i = 16; i < 32; ++i) EXPECT_EQ(DequantizeNvfp4(q, 0, i), 0.0f) << i;
  EXPECT_EQ(DequantizeNvfp4(q, 1, 16), 12.0f);
  EXPECT_EQ(DequantizeNvfp4(q, 1, 17), -1.0f);
}

TEST(Quantize, ScaleUnderflowGivesZeroValues) {
  // amax/6 = 2^-10 is the tie between e4m3 0 and 2^-9: the scale rounds to 0, so do the values.
  std::vector<float> x(16, 0.0f);
  x[0] = 6.0f * std::ldexp(1.0f, -10);
  x[1] = -std::ldexp(1.0f, -10);
  Nvfp4Matrix q = QuantizeNvfp4(x, 1, 16);
  EXPECT_EQ(q.scales[0], 0x00);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(DequantizeNvfp4(q, 0, i), 0.0f) << i;
  // Slightly larger: the smallest subnormal scale, and the values are then quantized.
  x[0] = 6.0f * std::ldexp(1.0f, -10) * 1.01f;
  q = QuantizeNvfp4(x, 1, 16);
  EXPECT_EQ(q.scales[0], 0x01);
  EXPECT_NE(Nvfp4Code(q, 0, 0), 0);
}

// Half the gap between adjacent e4m3 values around v > 0 (the scale's own rounding bound).
double E4M3HalfUlp(double v) {
  if (v < std::ldexp(1.0, -6)) return std::ldexp(1.0, -10);
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(v))) - 4);
}

// Half the gap between adjacent e2m1 values around y in [0, 6].
double E2M1HalfStep(double y) { return y < 2 ? 0.25 : (y < 4 ? 0.5 : 1.0); }

// Checks every block of `x` (rows × k): the scale is the nearest e4m3 to amax/6 (ties to even),
// every value is the nearest e2m1 to x/scale, and the element error is within
//   |x - q| <= s · E2M1HalfStep(|x|/s)     when |x|/s <= 6 (plain e2m1 rounding), else
//   |x - q| <= 6 · E4M3HalfUlp(amax/6)      (saturation: |x| - 6s <= amax - 6s <= 6(amax/6 - s)),
// and the latter also covers s == 0 (then |x| <= amax <= 6 · 2^-10).
void CheckQuantization(const std::vector<float>& x, int rows, int k) {
  const Nvfp4Matrix q = QuantizeNvfp4(x, rows, k);
  ASSERT_EQ(q.packed.size(), x.size() / 2);
  ASSERT_EQ(q.scales.size(), x.size() / 16);
  for (int r = 0; r < rows; ++r) {
    for (int b = 0; b < k / 16; ++b) {
      const float* blk = x.data() + static_cast<size_t>(r) * k + b * 16;
      double amax = 0;
      for (int i = 0; i < 16; ++i) amax = std::max(amax, std::fabs(static_cast<double>(blk[i])));
      ASSERT_LT(amax / 6, 448.0) << "test data must not saturate the scale";
      const uint8_t scale_code = q.scales[static_cast<size_t>(r) * (k / 16) + b];
      const double s = DecodeE4M3(scale_code);
      // Scale optimality against every finite positive code.
      for (int c = 0; c <= 0x7e; ++c) {
        const double d_best = std::fabs(s - amax / 6), d_c = std::fabs(DecodeE4M3(c) - amax / 6);
        ASSERT_LE(d_best, d_c) << "block " << r << "," << b << " code " << c;
        if (d_best == d_c && c != scale_code) {
          ASSERT_EQ(scale_code % 2, 0);
        }
      }
      for (int i = 0; i < 16; ++i) {
        const int kk = b * 16 + i;
        const double xv = blk[i];
        const double qv = DequantizeNvfp4(q, r, kk);
        const double err = std::fabs(xv - qv);
        if (s == 0) {
          ASSERT_EQ(qv, 0.0);
          ASSERT_LE(err, 6 * E4M3HalfUlp(amax / 6));
          continue;
        }
        const double y = std::fabs(xv) / s;
        // Value optimality against every e2m1 value (both signs).
        const uint8_t code = Nvfp4Code(q, r, kk);
        for (uint8_t c = 0; c < 16; ++c) {
          const double d_best = std::fabs(DecodeE2M1(code) - xv / s);
          const double d_c = std::fabs(DecodeE2M1(c) - xv / s);
          ASSERT_LE(d_best, d_c) << xv << " / " << s;
          if (d_best == d_c && DecodeE2M1(c) != DecodeE2M1(code)) {
            ASSERT_EQ(code % 2, 0);
          }
        }
        const double bound = y <= 6 ? s * E2M1HalfStep(y) : 6 * E4M3HalfUlp(amax / 6);
        ASSERT_LE(err, bound) << "x = " << xv << ", q = " << qv << ", s = " << s;
        // Looser, block-level form: never worse than amax/6 plus six times the scale rounding.
        ASSERT_LE(err, amax / 6 + 6 * E4M3HalfUlp(amax / 6));
      }
    }
  }
}

TEST(Quantize, NormalDataWithinTheErrorBound) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int rows = 64, k = 256;
  std::vector<float> x(static_cast<size_t>(rows) * k);
  for (float& v : x) v = normal(rng);
  CheckQuantization(x, rows, k);
  for (float& v : x) v *= 1e-3f;  // scales in the e4m3 subnormal range
  CheckQuantization(x, rows, k);
}

TEST(Quantize, WideDynamicRangeWithinTheErrorBound) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-30.0, 11.0);
  std::bernoulli_distribution negative(0.5);
  const int rows = 128, k = 128;
  std::vector<float> x(static_cast<size_t>(rows) * k);
  for (float& v : x) {
    v = static_cast<float>(std::exp2(exponent(rng)));
    if (negative(rng)) v = -v;
  }
  // A few exact zeros and whole-zero blocks.
  for (size_t i = 0; i < x.size(); i += 97) x[i] = 0.0f;
  for (int i = 0; i < 16; ++i) x[16 + i] = 0.0f;
  CheckQuantization(x, rows, k);
  // Per-block dynamic range concentrated near the underflow edge of the scale.
  std::uniform_real_distribution<double> tiny(-20.0, -8.0);
  for (float& v : x) v = static_cast<float>(std::exp2(tiny(rng))) * (negative(rng) ? -1 : 1);
  CheckQuantization(x, rows, k);
}

}  // namespace
}  // namespace encore::gemm

#include "gemm/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gemm/nvfp4.h"
#include "gemm/testing/host_problem.h"
#include "gtest/gtest.h"

namespace encore::gemm {
namespace {

using ::encore::gemm::testing::Distribution;
using ::encore::gemm::testing::RandomNvfp4;

// All finite non-negative fp16 values in increasing order (bits 0x0000..0x7bff), built from the
// bit fields directly, independent of the library's converters.
const std::vector<long double>& HalfTable() {
  static const std::vector<long double>* table = [] {
    auto* t = new std::vector<long double>();
    for (int h = 0; h <= 0x7bff; ++h) {
      const int e = h >> 10, f = h & 0x3ff;
      t->push_back(e == 0 ? std::ldexp(static_cast<long double>(f), -24)
                          : std::ldexp(static_cast<long double>(1024 + f), e - 25));
    }
    return t;
  }();
  return *table;
}

// Round to nearest fp16, ties to even, overflow to inf, by searching the table.
uint16_t OracleHalf(long double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const long double a = std::fabs(v);
  const std::vector<long double>& t = HalfTable();
  if (a >= 65520.0L) return sign | 0x7c00;
  const size_t hi = std::lower_bound(t.begin(), t.end(), a) - t.begin();
  if (hi == t.size()) return sign | 0x7bff;  // (65504, 65520)
  if (t[hi] == a) return sign | static_cast<uint16_t>(hi);
  const size_t lo = hi - 1;
  const long double dlo = a - t[lo], dhi = t[hi] - a;
  if (dlo < dhi) return sign | static_cast<uint16_t>(lo);
  if (dhi < dlo) return sign | static_cast<uint16_t>(hi);
  return sign | static_cast<uint16_t>(lo % 2 == 0 ? lo : hi);
}

// The naive product: dequantize to float matrices, then a plain triple loop in long double.
std::vector<long double> NaiveGemm(const Nvfp4Matrix& a, const Nvfp4Matrix& b) {
  auto dequantize = [](const Nvfp4Matrix& m) {
    std::vector<float> f(static_cast<size_t>(m.rows) * m.k);
    for (int r = 0; r < m.rows; ++r) {
      for (int kk = 0; kk < m.k; ++kk) {
        f[static_cast<size_t>(r) * m.k + kk] = DequantizeNvfp4(m, r, kk);
      }
    }
    return f;
  };
  const std::vector<float> fa = dequantize(a), fb = dequantize(b);
  std::vector<long double> c(static_cast<size_t>(a.rows) * b.rows);
  for (int i = 0; i < a.rows; ++i) {
    for (int j = 0; j < b.rows; ++j) {
      long double acc = 0;
      for (int kk = 0; kk < a.k; ++kk) {
        acc += static_cast<long double>(fa[static_cast<size_t>(i) * a.k + kk]) *
               fb[static_cast<size_t>(j) * b.k + kk];
      }
      c[static_cast<size_t>(i) * b.rows + j] = acc;
    }
  }
  return c;
}

TEST(OracleHalf, AgreesWithKnownValues) {
  EXPECT_EQ(OracleHalf(1.0L), 0x3c00);
  EXPECT_EQ(OracleHalf(1.0L + std::ldexp(1.0L, -11)), 0x3c00);
  EXPECT_EQ(OracleHalf(1.0L + 3 * std::ldexp(1.0L, -11)), 0x3c02);
  EXPECT_EQ(OracleHalf(-65520.0L), 0xfc00);
  EXPECT_EQ(OracleHalf(65519.0L), 0x7bff);
  EXPECT_EQ(OracleHalf(std::ldexp(1.0L, -25)), 0x0000);
}

// Sets element (r, kk) of `m` to e2m1 `code`.
void SetCode(Nvfp4Matrix& m, int r, int kk, uint8_t code) {
  const size_t i = static_cast<size_t>(r) * m.k + kk;
  uint8_t& byte = m.packed[i / 2];
  byte = (i % 2 == 0) ? static_cast<uint8_t>((byte & 0xf0) | code)
                      : static_cast<uint8_t>((byte & 0x0f) | (code << 4));
}

Nvfp4Matrix Zeros(int rows, int k) {
  Nvfp4Matrix m;
  m.rows = rows;
  m.k = k;
  m.packed.assign(static_cast<size_t>(rows) * k / 2, 0);
  m.scales.assign(static_cast<size_t>(rows) * k / 16, 0x38);  // 1.0
  return m;
}

TEST(ReferenceGemm, HandComputedTinyCase) {
  // A (1×64): all 1.0 with block scales 1, 2, 1, 1 -> the A side of a dot product weighs 80 for
  // a constant B row. B (8×64): row j all e2m1 code j (0, 0.5, ..., 6), except row 0 = -6.
  Nvfp4Matrix a = Zeros(1, 64);
  for (int kk = 0; kk < 64; ++kk) SetCode(a, 0, kk, 0x2);
  a.scales[1] = 0x40;
  Nvfp4Matrix b = Zeros(8, 64);
  for (int j = 0; j < 8; ++j) {
    for (int kk = 0; kk < 64; ++kk) SetCode(b, j, kk, j == 0 ? 0xf : static_cast<uint8_t>(j));
  }
  // C = 80 · {-6, 0.5, 1, 1.5, 2, 3, 4, 6} = {-480, 40, 80, 120, 160, 240, 320, 480}.
  const std::vector<uint16_t> expected = {0xdf80, 0x5100, 0x5500, 0x5780,
                                          0x5900, 0x5b80, 0x5d00, 0x5f80};
  EXPECT_EQ(ReferenceGemm(a, b), expected);
  const std::vector<double> wide = ReferenceGemmDouble(a, b);
  const std::vector<double> expected_wide = {-480, 40, 80, 120, 160, 240, 320, 480};
  EXPECT_EQ(wide, expected_wide);
}

TEST(ReferenceGemm, HandComputedRoundingTies) {
  // C[0][0] = 4·256 · 2·1 + 1·1 = 2049: the tie between 2048 and 2050 -> 2048 (even).
  // C[0][1] = 2048 + 3·1 = 2051: the tie between 2050 and 2052 -> 2052 (even).
  // C[0][2] = 2048 + 1 + 0.5·0.5·1 = 2049.25: above the tie -> 2050, which a float or fp16
  // accumulator that rounded 2049 first would miss.
  Nvfp4Matrix a = Zeros(1, 64);
  a.scales[0] = 0x78;      // 256
  SetCode(a, 0, 0, 0x6);   // 4 -> 1024
  SetCode(a, 0, 16, 0x2);  // 1 (scale 1)
  SetCode(a, 0, 32, 0x1);  // 0.5 (scale 1)
  Nvfp4Matrix b = Zeros(8, 64);
  for (int j = 0; j < 3; ++j) SetCode(b, j, 0, 0x4);  // 2
  SetCode(b, 0, 16, 0x2);                             // 1
  SetCode(b, 1, 16, 0x5);                             // 3
  SetCode(b, 2, 16, 0x2);                             // 1
  SetCode(b, 2, 32, 0x1);                             // 0.5
  const std::vector<double> wide = ReferenceGemmDouble(a, b);
  EXPECT_EQ(wide[0], 2049.0);
  EXPECT_EQ(wide[1], 2051.0);
  EXPECT_EQ(wide[2], 2049.25);
  const std::vector<uint16_t> c = ReferenceGemm(a, b);
  EXPECT_EQ(c[0], 0x6800);  // 2048
  EXPECT_EQ(c[1], 0x6802);  // 2052
  EXPECT_EQ(c[2], 0x6801);  // 2050
  for (int j = 3; j < 8; ++j) EXPECT_EQ(c[j], 0x0000) << j;
}

void ExpectMatchesNaive(const Nvfp4Matrix& a, const Nvfp4Matrix& b) {
  const std::vector<long double> naive = NaiveGemm(a, b);
  const std::vector<double> wide = ReferenceGemmDouble(a, b);
  const std::vector<uint16_t> c = ReferenceGemm(a, b);
  ASSERT_EQ(wide.size(), naive.size());
  ASSERT_EQ(c.size(), naive.size());
  for (size_t i = 0; i < naive.size(); ++i) {
    // For K <= 256 every partial sum fits 53 bits (products span 2^-20 .. 2^23, sums < 2^31),
    // so double accumulation is exact and must equal the long double sum.
    if (a.k <= 256) {
      ASSERT_EQ(static_cast<long double>(wide[i]), naive[i]) << i;
    }
    ASSERT_EQ(c[i], OracleHalf(naive[i]))
        << "element " << i << " = " << static_cast<double>(naive[i]);
  }
}

TEST(ReferenceGemm, MatchesNaiveOnRandomShapes) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> m_dist(2, 70), n_blocks(1, 8), k_blocks(1, 4);
  uint64_t seed = 1;
  for (Distribution dist : {Distribution::kFullRange, Distribution::kGpuMode}) {
    for (int trial = 0; trial < 8; ++trial) {
      const int m = trial == 0 ? 0 : (trial == 1 ? 1 : m_dist(rng));
      const int n = 8 * n_blocks(rng), k = 64 * k_blocks(rng);
      SCOPED_TRACE(::testing::Message()
                   << "m=" << m << " n=" << n << " k=" << k << " dist=" << static_cast<int>(dist));
      const Nvfp4Matrix a = RandomNvfp4(m, k, dist, seed++);
      const Nvfp4Matrix b = RandomNvfp4(n, k, dist, seed++);
      ExpectMatchesNaive(a, b);
      if (m == 0) {
        EXPECT_TRUE(ReferenceGemm(a, b).empty());
      }
    }
  }
}

// The threaded, column-blocked reference against one sequential double sum per element in the
// plain loop order: equal bit for bit. 70 x 130 x 512 crosses the threading threshold (2^22
// multiply-adds) and leaves a partial column block (130 = 32 x 4 + 2). (Every product here is a
// multiple of 2^-20 below 2^23, so these sums are exact in any order: what this checks is that
// every row and column is computed once, in its place; a dropped row or tail column fails it.)
TEST(ReferenceGemm, ThreadedBlocksEqualTheSequentialLoopBitForBit) {
  const int m = 70, n = 130, k = 512;
  const Nvfp4Matrix a = RandomNvfp4(m, k, Distribution::kFullRange, 91);
  const Nvfp4Matrix b = RandomNvfp4(n, k, Distribution::kFullRange, 92);
  std::vector<float> da(static_cast<size_t>(m) * k), db(static_cast<size_t>(n) * k);
  for (int r = 0; r < m; ++r) {
    for (int kk = 0; kk < k; ++kk) da[static_cast<size_t>(r) * k + kk] = DequantizeNvfp4(a, r, kk);
  }
  for (int r = 0; r < n; ++r) {
    for (int kk = 0; kk < k; ++kk) db[static_cast<size_t>(r) * k + kk] = DequantizeNvfp4(b, r, kk);
  }
  const std::vector<double> got = ReferenceGemmDouble(a, b);
  ASSERT_EQ(got.size(), static_cast<size_t>(m) * n);
  int differ = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int kk = 0; kk < k; ++kk) {
        acc += static_cast<double>(da[static_cast<size_t>(i) * k + kk]) *
               db[static_cast<size_t>(j) * k + kk];
      }
      const double g = got[static_cast<size_t>(i) * n + j];
      differ += std::memcmp(&acc, &g, sizeof(double)) != 0;
    }
  }
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(ReferenceGemm(a, b), RoundToHalf(got));
}

TEST(ReferenceGemm, MatchesNaiveOnQuantizedNormalData) {
  // Realistic data: finite, mostly-representable outputs, many rounding decisions.
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int m = 33, n = 24, k = 512;
  std::vector<float> xa(static_cast<size_t>(m) * k), xb(static_cast<size_t>(n) * k);
  for (float& v : xa) v = normal(rng);
  for (float& v : xb) v = normal(rng);
  const Nvfp4Matrix a = QuantizeNvfp4(xa, m, k);
  const Nvfp4Matrix b = QuantizeNvfp4(xb, n, k);
  ExpectMatchesNaive(a, b);
  // Most outputs are finite and non-zero here, so this exercises real rounding.
  const std::vector<uint16_t> c = ReferenceGemm(a, b);
  const size_t finite_nonzero = std::count_if(
      c.begin(), c.end(), [](uint16_t h) { return (h & 0x7c00) != 0x7c00 && (h & 0x7fff) != 0; });
  EXPECT_GT(finite_nonzero, c.size() * 9 / 10);
}

}  // namespace
}  // namespace encore::gemm

#include "gemm/testing/host_problem.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "gemm/nvfp4.h"
#include "gemm/problem.h"
#include "gtest/gtest.h"

namespace encore::gemm::testing {
namespace {

TEST(RandomNvfp4, FullRangeCoversEveryValueCodeAndManyScales) {
  const Nvfp4Matrix m = RandomNvfp4(256, 1024, Distribution::kFullRange, 1);
  ASSERT_EQ(m.rows, 256);
  ASSERT_EQ(m.k, 1024);
  ASSERT_EQ(m.packed.size(), 256u * 1024 / 2);
  ASSERT_EQ(m.scales.size(), 256u * 1024 / 16);
  size_t code_counts[16] = {};
  for (int r = 0; r < m.rows; ++r) {
    for (int kk = 0; kk < m.k; ++kk) ++code_counts[Nvfp4Code(m, r, kk)];
  }
  // Uniform: each of the 16 codes near 1/16 of 262144 = 16384.
  for (int c = 0; c < 16; ++c) {
    EXPECT_GT(code_counts[c], 15000u) << c;
    EXPECT_LT(code_counts[c], 17800u) << c;
  }
  size_t scale_counts[256] = {};
  for (uint8_t s : m.scales) ++scale_counts[s];
  int distinct = 0;
  for (int s = 0; s < 256; ++s) {
    if (s > 0x7e) {
      EXPECT_EQ(scale_counts[s], 0u) << "scale code " << s << " is NaN or negative";
    } else if (scale_counts[s] > 0) {
      ++distinct;
    }
  }
  EXPECT_EQ(distinct, 127);           // 16384 draws over 127 codes: all of them
  EXPECT_GT(scale_counts[0x00], 0u);  // zero scale
  EXPECT_GT(scale_counts[0x01], 0u);  // subnormal
  EXPECT_GT(scale_counts[0x7e], 0u);  // 448
}

TEST(RandomNvfp4, GpuModeMasksBytesAndUsesScalesOneAndTwo) {
  const Nvfp4Matrix m = RandomNvfp4(128, 512, Distribution::kGpuMode, 2);
  std::set<uint8_t> bytes;
  for (uint8_t b : m.packed) {
    ASSERT_EQ(b & 0xbb, b);
    bytes.insert(b);
  }
  EXPECT_EQ(bytes.size(), 64u);  // 6 free bits, all combinations drawn
  size_t ones = 0, twos = 0;
  for (uint8_t s : m.scales) {
    ASSERT_TRUE(s == 0x38 || s == 0x40) << int{s};
    (s == 0x38 ? ones : twos)++;
  }
  EXPECT_GT(ones, m.scales.size() / 3);
  EXPECT_GT(twos, m.scales.size() / 3);
  EXPECT_EQ(DecodeE4M3(0x38), 1.0f);
  EXPECT_EQ(DecodeE4M3(0x40), 2.0f);
}

TEST(RandomNvfp4, DeterministicInTheSeed) {
  for (Distribution d : {Distribution::kFullRange, Distribution::kGpuMode}) {
    const Nvfp4Matrix a = RandomNvfp4(40, 192, d, 7);
    const Nvfp4Matrix b = RandomNvfp4(40, 192, d, 7);
    const Nvfp4Matrix c = RandomNvfp4(40, 192, d, 8);
    EXPECT_EQ(a.packed, b.packed);
    EXPECT_EQ(a.scales, b.scales);
    EXPECT_NE(a.packed, c.packed);
    EXPECT_NE(a.scales, c.scales);
  }
}

TEST(RandomNvfp4, OddSizesAndEmpty) {
  // 3 × 16: 24 packed bytes (not a multiple of 8) and 3 scales (not a multiple of 2).
  const Nvfp4Matrix m = RandomNvfp4(3, 16, Distribution::kFullRange, 3);
  EXPECT_EQ(m.packed.size(), 24u);
  EXPECT_EQ(m.scales.size(), 3u);
  const Nvfp4Matrix e = RandomNvfp4(0, 128, Distribution::kGpuMode, 3);
  EXPECT_EQ(e.rows, 0);
  EXPECT_EQ(e.k, 128);
  EXPECT_TRUE(e.packed.empty());
  EXPECT_TRUE(e.scales.empty());
}

TEST(MakeHostProblem, ShapesSizesAndBlockedScalesAreConsistent) {
  const std::vector<Shape> shapes = {{96, 128, 256}, {0, 64, 128}, {1, 8, 64}, {300, 200, 320}};
  for (Distribution d : {Distribution::kFullRange, Distribution::kGpuMode}) {
    const HostGroupedProblem p = MakeHostProblem(shapes, d, 42);
    ASSERT_EQ(p.groups.size(), shapes.size());
    for (size_t g = 0; g < shapes.size(); ++g) {
      SCOPED_TRACE(g);
      const HostGroup& hg = p.groups[g];
      const Shape& s = shapes[g];
      EXPECT_EQ(hg.shape.m, s.m);
      EXPECT_EQ(hg.shape.n, s.n);
      EXPECT_EQ(hg.shape.k, s.k);
      EXPECT_EQ(hg.a.rows, s.m);
      EXPECT_EQ(hg.a.k, s.k);
      EXPECT_EQ(hg.b.rows, s.n);
      EXPECT_EQ(hg.b.k, s.k);
      EXPECT_EQ(hg.a.packed.size(), static_cast<size_t>(s.m) * s.k / 2);
      EXPECT_EQ(hg.b.packed.size(), static_cast<size_t>(s.n) * s.k / 2);
      ASSERT_EQ(hg.sfa_blocked.size(), BlockedScaleBytes(s.m, s.k));
      ASSERT_EQ(hg.sfb_blocked.size(), BlockedScaleBytes(s.n, s.k));
      EXPECT_EQ(FromBlockedScales(hg.sfa_blocked, s.m, s.k), hg.a.scales);
      EXPECT_EQ(FromBlockedScales(hg.sfb_blocked, s.n, s.k), hg.b.scales);
      EXPECT_EQ(hg.sfa_blocked, ToBlockedScales(hg.a.scales, s.m, s.k));
      EXPECT_EQ(hg.sfb_blocked, ToBlockedScales(hg.b.scales, s.n, s.k));
    }
    // Groups and operands draw from different streams.
    EXPECT_NE(p.groups[0].a.packed,
              std::vector<uint8_t>(p.groups[0].b.packed.begin(),
                                   p.groups[0].b.packed.begin() + p.groups[0].a.packed.size()));
    // Deterministic in the seed.
    const HostGroupedProblem again = MakeHostProblem(shapes, d, 42);
    EXPECT_EQ(again.groups[3].b.packed, p.groups[3].b.packed);
    EXPECT_EQ(again.groups[3].sfa_blocked, p.groups[3].sfa_blocked);
  }
}

TEST(MakeHostProblem, LargeProblemHasEveryByte) {
  // Benchmark-sized problem (2 groups × 4096 × 7168): sizes are exact and the GPU MODE byte
  // pattern holds to the last byte. (Generation speed is not a test matter.)
  const HostGroupedProblem p =
      MakeHostProblem({{4096, 4096, 7168}, {4096, 4096, 7168}}, Distribution::kGpuMode, 9);
  ASSERT_EQ(p.groups[1].b.packed.size(), 4096u * 7168 / 2);
  EXPECT_EQ(p.groups[1].b.packed.back() & 0xBB, p.groups[1].b.packed.back());
  EXPECT_EQ(p.groups[1].sfb_blocked.size(), BlockedScaleBytes(4096, 7168));
}

}  // namespace
}  // namespace encore::gemm::testing

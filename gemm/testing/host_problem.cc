#include "gemm/testing/host_problem.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "gemm/nvfp4.h"
#include "gemm/problem.h"

namespace encore::gemm::testing {
namespace {

constexpr uint8_t kScaleOne = 0x38;  // e4m3 1.0
constexpr uint8_t kScaleTwo = 0x40;  // e4m3 2.0
constexpr uint8_t kMaxFiniteScaleCode = 0x7e;

// splitmix64 (Steele, Lea, Flood 2014): 64 fresh bits per call, deterministic in the seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Fills `out` with random bytes, each ANDed with `mask`.
void FillBytes(SplitMix64& rng, uint8_t mask, std::vector<uint8_t>& out) {
  uint64_t wide_mask = 0;
  std::memset(&wide_mask, mask, sizeof(wide_mask));
  size_t i = 0;
  for (; i + 8 <= out.size(); i += 8) {
    const uint64_t r = rng.Next() & wide_mask;
    std::memcpy(out.data() + i, &r, 8);
  }
  if (i < out.size()) {
    const uint64_t r = rng.Next() & wide_mask;
    std::memcpy(out.data() + i, &r, out.size() - i);
  }
}

// Uniform over 0x00..0x7e (127 codes): 32-bit multiply-shift, bias below 127 / 2^32.
void FillFullRangeScales(SplitMix64& rng, std::vector<uint8_t>& out) {
  size_t i = 0;
  for (; i + 2 <= out.size(); i += 2) {
    const uint64_t r = rng.Next();
    out[i] = static_cast<uint8_t>(((r & 0xffffffffULL) * (kMaxFiniteScaleCode + 1)) >> 32);
    out[i + 1] = static_cast<uint8_t>(((r >> 32) * (kMaxFiniteScaleCode + 1)) >> 32);
  }
  if (i < out.size()) {
    out[i] = static_cast<uint8_t>(((rng.Next() & 0xffffffffULL) * (kMaxFiniteScaleCode + 1)) >> 32);
  }
}

// 1.0 or 2.0, one random bit each.
void FillGpuModeScales(SplitMix64& rng, std::vector<uint8_t>& out) {
  for (size_t i = 0; i < out.size(); i += 64) {
    const uint64_t bits = rng.Next();
    const size_t end = std::min(out.size(), i + 64);
    for (size_t j = i; j < end; ++j) out[j] = ((bits >> (j - i)) & 1) ? kScaleTwo : kScaleOne;
  }
}

// An independent stream per (seed, group, operand): hashing keeps nearby seeds unrelated.
uint64_t StreamSeed(uint64_t seed, uint64_t group, uint64_t operand) {
  SplitMix64 mix(seed ^ (group * 0x632be59bd9b4e019ULL) ^ (operand * 0x8cb92ba72f3d8dd7ULL));
  return mix.Next();
}

}  // namespace

Nvfp4Matrix RandomNvfp4(int rows, int k, Distribution dist, uint64_t seed) {
  ABSL_RAW_CHECK(rows >= 0 && k >= 0 && k % kScaleVectorSize == 0, "RandomNvfp4: bad shape");
  Nvfp4Matrix m;
  m.rows = rows;
  m.k = k;
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(k);
  m.packed.resize(count / 2);
  m.scales.resize(count / kScaleVectorSize);
  SplitMix64 rng(seed);
  switch (dist) {
    case Distribution::kFullRange:
      FillBytes(rng, 0xff, m.packed);  // two uniform nibbles: all 16 e2m1 codes
      FillFullRangeScales(rng, m.scales);
      break;
    case Distribution::kGpuMode:
      FillBytes(rng, 0xbb, m.packed);
      FillGpuModeScales(rng, m.scales);
      break;
  }
  return m;
}

HostGroupedProblem MakeHostProblem(const std::vector<Shape>& shapes, Distribution dist,
                                   uint64_t seed) {
  HostGroupedProblem p;
  p.groups.resize(shapes.size());
  for (size_t g = 0; g < shapes.size(); ++g) {
    HostGroup& group = p.groups[g];
    const Shape& s = shapes[g];
    group.shape = s;
    group.a = RandomNvfp4(s.m, s.k, dist, StreamSeed(seed, g, 0));
    group.b = RandomNvfp4(s.n, s.k, dist, StreamSeed(seed, g, 1));
    group.sfa_blocked = ToBlockedScales(group.a.scales, s.m, s.k);
    group.sfb_blocked = ToBlockedScales(group.b.scales, s.n, s.k);
  }
  return p;
}

}  // namespace encore::gemm::testing

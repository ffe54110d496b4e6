// Random NVFP4 grouped problems on the host, for tests and benchmarks.
//
// Two distributions:
//   - kFullRange: every e2m1 code (all 16, both signs of zero) and every finite e4m3 scale code
//     (0x00..0x7e, positive) drawn uniformly — exercises subnormal and large scales.
//   - kGpuMode: like the GPU MODE task: value bytes = random & 0xBB, scale bytes chosen from
//     the e4m3 codes of 1.0 and 2.0.
// Each matrix is drawn directly in NVFP4 (codes and scales), so dequantization is exact.
//
// Example:
//   encore::gemm::testing::HostGroupedProblem p = encore::gemm::testing::MakeHostProblem(
//       {{96, 128, 256}, {128, 256, 512}}, encore::gemm::testing::Distribution::kFullRange, 42);
//   std::vector<uint16_t> ref = encore::gemm::ReferenceGemm(p.groups[0].a, p.groups[0].b);
#ifndef ENCORE_GEMM_TESTING_HOST_PROBLEM_H_
#define ENCORE_GEMM_TESTING_HOST_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "gemm/nvfp4.h"

namespace encore::gemm::testing {

enum class Distribution { kFullRange, kGpuMode };

struct Shape {
  int m = 0;
  int n = 0;
  int k = 0;
};

struct HostGroup {
  Shape shape;
  Nvfp4Matrix a;                     // m × k
  Nvfp4Matrix b;                     // n × k
  std::vector<uint8_t> sfa_blocked;  // BlockedScaleBytes(m, k)
  std::vector<uint8_t> sfb_blocked;  // BlockedScaleBytes(n, k)
};

struct HostGroupedProblem {
  std::vector<HostGroup> groups;
};

// Random NVFP4 matrix of rows × k drawn per `dist`.
Nvfp4Matrix RandomNvfp4(int rows, int k, Distribution dist, uint64_t seed);

HostGroupedProblem MakeHostProblem(const std::vector<Shape>& shapes, Distribution dist,
                                   uint64_t seed);

}  // namespace encore::gemm::testing

#endif  // ENCORE_GEMM_TESTING_HOST_PROBLEM_H_

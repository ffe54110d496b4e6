// The parameter block and the per-element formula of the fake grouped GEMM used by the graph
// cache tests. The "GEMM" is a hash, not a product: C[r][j] of group g mixes bytes of A, B, SFA
// and SFB at pointer-dependent offsets with g, M, N, K, r and j, so an output proves which
// buffers and sizes a launch used (replay vs direct equality is meaningful, and a stale binding
// shows up as a wrong value). Shared by the GPU kernel (fake_kernel.cu) and the host
// implementation (FakeGemm in host mode, and the expected values in tests).
//
// Example:
//   uint16_t want = FakeValue(group_params, /*variant=*/0, r, j);
#ifndef ENCORE_TESTS_GRAPH_CACHE_FAKE_PARAMS_H_
#define ENCORE_TESTS_GRAPH_CACHE_FAKE_PARAMS_H_

#include <cstdint>

#include "gemm/problem.h"

#if defined(__CUDACC__)
#define ENCORE_FAKE_HD __host__ __device__
#else
#define ENCORE_FAKE_HD
#endif

namespace encore::graph_cache::testing {

struct FakeGroup {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  uint16_t* c;
  int m;  // rows planned (the capacity when M is dynamic)
  int n;
  int k;
  int pad;
};

// The fake's view of one group of a call.
inline FakeGroup FakeGroupOf(const gemm::GroupProblem& p) {
  return FakeGroup{static_cast<const uint8_t*>(p.a),
                   static_cast<const uint8_t*>(p.b),
                   static_cast<const uint8_t*>(p.sfa),
                   static_cast<const uint8_t*>(p.sfb),
                   static_cast<uint16_t*>(p.c),
                   p.m,
                   p.n,
                   p.k,
                   0};
}

struct FakeParams {
  int num_groups;
  int variant;              // 0 simple, 1 persistent, 2 stream-K (which kernel function runs)
  const int32_t* device_m;  // dynamic M: rows computed per group = min(device_m[g], m)
  FakeGroup groups[gemm::kMaxGroups];
};

ENCORE_FAKE_HD inline uint32_t FakeMix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Requires k ≥ 2 and r < m, j < n; SFA/SFB hold at least 512 bytes (BlockedScaleBytes ≥ 512).
// A function of the group's own buffers and shape (not of its index in the launch: merged launches
// of several calls compute what each call computes alone) and of how the variant sums: like the
// real kernels, simple (0) and persistent (1) sum every element in the same order and agree bit
// for bit; stream-K (2) adds split partial sums and may not (graph_cache MergeCalls::kSameSums).
ENCORE_FAKE_HD inline uint16_t FakeValue(const FakeGroup& g, int variant, int r, int j) {
  const int half_k = g.k / 2;
  const uint32_t a = g.a[static_cast<int64_t>(r) * half_k + j % half_k];
  const uint32_t b = g.b[static_cast<int64_t>(j) * half_k + r % half_k];
  const uint32_t sa = g.sfa[(r + j) % 512];
  const uint32_t sb = g.sfb[(3 * r + j) % 512];
  uint32_t h = FakeMix(a | (b << 8) | (sa << 16) | (sb << 24));
  h ^= FakeMix(static_cast<uint32_t>(g.m) * 131u + static_cast<uint32_t>(g.n) * 7u +
               static_cast<uint32_t>(g.k) + (variant == 2 ? 0x51ed27u : 0u));
  h ^= FakeMix(static_cast<uint32_t>(r) * 65599u + static_cast<uint32_t>(j));
  return static_cast<uint16_t>(h ^ (h >> 16));
}

ENCORE_FAKE_HD inline int FakeRows(const FakeParams& p, int g) {
  int rows = p.groups[g].m;
  if (p.device_m != nullptr) {
    const int dm = p.device_m[g];
    rows = dm < 0 ? 0 : (dm < rows ? dm : rows);
  }
  return rows;
}

}  // namespace encore::graph_cache::testing

#endif  // ENCORE_TESTS_GRAPH_CACHE_FAKE_PARAMS_H_

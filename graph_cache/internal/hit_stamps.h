// Per-step CPU cycle counts of GraphExecutor::Run's fast hit (measurement only: built with
// -DENCORE_HIT_STAMPS=1, e.g. `tools/bazel build -c opt --copt=-DENCORE_HIT_STAMPS=1
// //benchmarks:replay`; otherwise every macro below is empty). Each executor sums, per step, the
// TSC cycles of its fast hits and prints the sums when it is destroyed (stderr), so that the
// GPU host's bad episodes (NOTES session 29) can be placed in one step of the hit.
//
// Example (inside GraphExecutor::Run):
//   ENCORE_HIT_STAMP(stamps, 0);   // entry
//   ...
//   ENCORE_HIT_STAMP(stamps, 1);   // after the capture-state query
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_HIT_STAMPS_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_HIT_STAMPS_H_

#ifndef ENCORE_HIT_STAMPS
#define ENCORE_HIT_STAMPS 0
#endif

#if ENCORE_HIT_STAMPS
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>

namespace encore::graph_cache::internal {

// Stamps of one call: stamp 0 at entry, stamp s at the end of step s (1..kSteps).
struct HitStamps {
  static constexpr int kSteps = 6;
  static constexpr const char* kNames[kSteps] = {
      "capture_query", "memo_key", "lock", "memo_compare", "graph_launch", "bookkeeping_unlock"};
  uint64_t t[kSteps + 1] = {};
};

// Per-step sums over the fast hits of one executor.
struct HitStampSums {
  uint64_t hits = 0;
  uint64_t cycles[HitStamps::kSteps] = {};
  void Add(const HitStamps& s) {
    ++hits;
    for (int i = 0; i < HitStamps::kSteps; ++i) cycles[i] += s.t[i + 1] - s.t[i];
  }
  void Print(const void* executor) const {
    if (hits == 0) return;
    std::fprintf(stderr, "hit stamps %p: %llu fast hits, cycles per hit:", executor,
                 static_cast<unsigned long long>(hits));
    for (int i = 0; i < HitStamps::kSteps; ++i) {
      std::fprintf(stderr, " %s %.1f", HitStamps::kNames[i],
                   static_cast<double>(cycles[i]) / static_cast<double>(hits));
    }
    std::fprintf(stderr, "\n");
  }
};

}  // namespace encore::graph_cache::internal

#define ENCORE_HIT_STAMP(stamps, i) ((stamps).t[(i)] = __rdtsc())
#else
#define ENCORE_HIT_STAMP(stamps, i) ((void)0)
#endif

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_HIT_STAMPS_H_

// Software prefetch of address ranges, for the graph cache's batch compare: the lines a compare
// is about to read, requested all at once so that their misses overlap.
//
// A prefetch never faults and changes no result; it only moves lines into this core's caches.
// Why it pays (run 195, ExecutorOptions::prefetch_batch_compare): a batch's memo compare reads
// every call's groups from the caller and from the variant, ~200 lines for 15 calls of 8 groups
// in many short runs; on a host whose caches a busy neighbour shares (NOTES session 25, the slow
// state) those come from the last-level cache or memory, and the hardware prefetcher learns each
// short run too late.
//
// Example:
//   internal::PrefetchLines(groups.data(), groups.size() * sizeof(GroupBinding));
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_PREFETCH_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_PREFETCH_H_

#include <cstddef>
#include <cstdint>

namespace encore::graph_cache::internal {

// Prefetches (for reading, into every cache level) the 64-byte lines of [p, p + bytes).
inline void PrefetchLines(const void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return;
  constexpr uintptr_t kLine = 64;
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~(kLine - 1); a < end; a += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);
  }
}

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_PREFETCH_H_

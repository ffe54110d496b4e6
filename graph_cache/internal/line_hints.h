// Software prefetch hints for the graph cache's hit paths: the cache lines a hit is known (or
// expected) to read, recorded as a few address ranges and prefetched ahead of the reads.
//
// Only addresses are stored, never dereferenced: a prefetch does not fault, so a stale range
// (memory freed or reused since it was recorded) costs a wasted line fill, never a read.
// Why: on a host whose caches are shared with a busy neighbour (NOTES, session 25: the GPU
// host's slow state) a hit's ~25 lines come from the last-level cache or memory one dependent
// miss after another; prefetched while the driver launches the previous call's graph, they are
// in this core's caches when the next call reads them.
//
// Example:
//   internal::LineHints<8> hints;
//   hints.Add(groups.data(), groups.size() * sizeof(GroupBinding), /*max_lines=*/8);
//   ...
//   hints.Prefetch();  // later, ahead of the reads
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_LINE_HINTS_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_LINE_HINTS_H_

#include <cstddef>
#include <cstdint>

namespace encore::graph_cache::internal {

inline constexpr uintptr_t kLineBytes = 64;

// Prefetches (for reading, into every cache level) the lines of [p, p + bytes), at most
// `max_lines` of them from the first.
inline void PrefetchLines(const void* p, size_t bytes, size_t max_lines = ~size_t{0}) {
  if (p == nullptr || bytes == 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~(kLineBytes - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t a = first; a < end && max_lines > 0; a += kLineBytes, --max_lines) {
    __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);
  }
}

// Up to N ranges of lines, recorded with Add and prefetched together.
template <int N>
class LineHints {
 public:
  void Clear() { n_ = 0; }
  // Records the lines of [p, p + bytes) (at most `max_lines`); ignored when full or empty.
  void Add(const void* p, size_t bytes, uint32_t max_lines = 8) {
    if (p == nullptr || bytes == 0 || n_ == N) return;
    const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~(kLineBytes - 1);
    const uintptr_t lines = (reinterpret_cast<uintptr_t>(p) + bytes - first + kLineBytes - 1) /
                            kLineBytes;
    ranges_[n_++] = Range{reinterpret_cast<const char*>(first),
                          static_cast<uint32_t>(lines < max_lines ? lines : max_lines)};
  }
  void Prefetch() const {
    for (int i = 0; i < n_; ++i) {
      for (uint32_t l = 0; l < ranges_[i].lines; ++l) {
        __builtin_prefetch(ranges_[i].first + kLineBytes * l, 0, 3);
      }
    }
  }
  int size() const { return n_; }
  // Total lines recorded (tests).
  uint32_t lines() const {
    uint32_t t = 0;
    for (int i = 0; i < n_; ++i) t += ranges_[i].lines;
    return t;
  }
  // Whether line-aligned address `a` lies in a recorded range (tests).
  bool Covers(const void* a) const {
    const auto x = reinterpret_cast<uintptr_t>(a) & ~(kLineBytes - 1);
    for (int i = 0; i < n_; ++i) {
      const auto f = reinterpret_cast<uintptr_t>(ranges_[i].first);
      if (x >= f && x < f + kLineBytes * ranges_[i].lines) return true;
    }
    return false;
  }

 private:
  struct Range {
    const char* first = nullptr;  // line-aligned
    uint32_t lines = 0;
  };
  Range ranges_[N];
  int n_ = 0;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_LINE_HINTS_H_

// Counts how often each structure (by 64-bit hash) has been seen, in a fixed, direct-mapped table
// allocated once: a one-off structure costs no memory and no map entry, and counting a call never
// allocates. A slot holds one hash; a different hash landing in it starts over at 1, so the count
// is a lower bound (a collision only delays a capture; it can never cause a wrong replay, because
// cached graphs are found by exact key comparison elsewhere). Pure CPU; not thread-safe.
//
// Example:
//   encore::graph_cache::internal::RecurrenceCounter seen(/*slots=*/1024);
//   if (seen.Bump(hash) >= min_repeats) Capture();
//   seen.Set(hash, -backoff);   // after a failed capture: wait `backoff` more recurrences
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_RECURRENCE_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_RECURRENCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace encore::graph_cache::internal {

class RecurrenceCounter {
 public:
  // `slots` is rounded up to a power of two (at least 1).
  explicit RecurrenceCounter(size_t slots) {
    size_t n = 1;
    while (n < slots) n <<= 1;
    slots_.resize(n);
    mask_ = n - 1;
  }

  // Counts one more sighting of `hash`; returns the count including this one.
  int Bump(uint64_t hash) {
    Slot& s = slots_[Index(hash)];
    if (!s.used || s.hash != hash) {
      s = Slot{hash, 0, true};
    }
    return ++s.count;
  }

  int Get(uint64_t hash) const {
    const Slot& s = slots_[Index(hash)];
    return (s.used && s.hash == hash) ? s.count : 0;
  }

  // Sets the count (negative values make the structure wait longer before it qualifies).
  void Set(uint64_t hash, int count) { slots_[Index(hash)] = Slot{hash, count, true}; }

  void Forget(uint64_t hash) {
    Slot& s = slots_[Index(hash)];
    if (s.used && s.hash == hash) s = Slot{};
  }

  void Clear() {
    for (Slot& s : slots_) s = Slot{};
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    int count = 0;
    bool used = false;
  };
  size_t Index(uint64_t hash) const { return static_cast<size_t>((hash ^ (hash >> 29)) & mask_); }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_RECURRENCE_H_

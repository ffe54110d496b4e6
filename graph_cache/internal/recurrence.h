// Counts how often each structure (by 64-bit hash) has been seen, in a fixed table allocated once:
// a one-off structure costs no memory and no map entry, and counting a call never allocates. The
// table is 4-way set-associative: a hash maps to a bucket of 4 slots, and a new hash takes an empty
// slot there or else the one with the lowest non-negative count (entries backing off, count < 0,
// are kept). So counts are lower bounds (an eviction only delays a capture; it can never cause a
// wrong replay, because cached graphs are found by exact key comparison elsewhere), and up to 4
// recurring hashes of one bucket count side by side.
// NOTES: the table was direct-mapped until session 21; two recurring hashes sharing a slot then
// reset each other on every call and neither was ever captured (with 15 input sets in rotation and
// 4096 slots, ~2.5% of processes; a 1-in-~4000 flake of ExecutorTest.SteadyStateVariantHit...,
// whose absl hash seed changes per process). Pure CPU; not thread-safe.
//
// Example:
//   encore::graph_cache::internal::RecurrenceCounter seen(/*slots=*/1024);
//   if (seen.Bump(hash) >= min_repeats) Capture();
//   seen.Set(hash, -backoff);   // after a failed capture: wait `backoff` more recurrences
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_RECURRENCE_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_RECURRENCE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace encore::graph_cache::internal {

class RecurrenceCounter {
 public:
  static constexpr size_t kWays = 4;

  // `slots` is rounded up to a power of two, at least kWays.
  explicit RecurrenceCounter(size_t slots) {
    size_t n = kWays;
    while (n < slots) n <<= 1;
    slots_.resize(n);
    bucket_mask_ = n / kWays - 1;
  }

  // Counts one more sighting of `hash`; returns the count including this one (saturating at
  // INT_MAX: a structure that recurs but is never captured is bumped on every call).
  int Bump(uint64_t hash) {
    int& count = Claim(hash)->count;
    if (count < std::numeric_limits<int>::max()) ++count;
    return count;
  }

  int Get(uint64_t hash) const {
    const Slot* s = Find(hash);
    return s != nullptr ? s->count : 0;
  }

  // Sets the count (negative values make the structure wait longer before it qualifies).
  void Set(uint64_t hash, int count) { Claim(hash)->count = count; }

  void Forget(uint64_t hash) {
    if (Slot* s = Find(hash)) *s = Slot{};
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
  size_t BucketStart(uint64_t hash) const {
    return static_cast<size_t>((hash ^ (hash >> 29)) & bucket_mask_) * kWays;
  }
  const Slot* Find(uint64_t hash) const {
    const Slot* b = &slots_[BucketStart(hash)];
    for (size_t i = 0; i < kWays; ++i) {
      if (b[i].used && b[i].hash == hash) return &b[i];
    }
    return nullptr;
  }
  Slot* Find(uint64_t hash) {
    return const_cast<Slot*>(static_cast<const RecurrenceCounter*>(this)->Find(hash));
  }
  // `hash`'s slot; a hash not in the table takes Victim's, with count 0.
  Slot* Claim(uint64_t hash) {
    Slot* s = Find(hash);
    if (s == nullptr) {
      s = Victim(hash);
      *s = Slot{hash, 0, true};
    }
    return s;
  }
  // The slot a new hash takes: an empty one, else the lowest non-negative count (the first of
  // equals), else (every entry backing off) the first.
  Slot* Victim(uint64_t hash) {
    Slot* b = &slots_[BucketStart(hash)];
    Slot* victim = nullptr;
    for (size_t i = 0; i < kWays; ++i) {
      if (!b[i].used) return &b[i];
      if (b[i].count >= 0 && (victim == nullptr || b[i].count < victim->count)) victim = &b[i];
    }
    return victim != nullptr ? victim : &b[0];
  }

  std::vector<Slot> slots_;
  size_t bucket_mask_ = 0;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_RECURRENCE_H_

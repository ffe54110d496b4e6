// Detects that a stream of call hashes has become periodic: period p is confirmed when the last
// max(k·p, min_calls) hashes repeat with period p (k ≥ 2 full repetitions). Incremental: for every
// candidate p ≤ max_period it keeps the length of the current run of calls with
// h[t] == h[t - p], so one Add costs O(max_period) compares and never allocates. The smallest
// confirmed period wins (multiples of it confirm later or at the same call).
//
// A hash match is only a candidate: the sequence recorder confirms the period by comparing the
// full recorded calls exactly before it replays anything.
//
// Example:
//   encore::graph_cache::internal::PeriodDetector d(/*max_period=*/32, /*repeats=*/2,
//                                                    /*min_calls=*/8);
//   for (uint64_t h : hashes) if (int p = d.Add(h); p > 0) { UsePeriod(p); d.Reset(); }
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_PERIOD_DETECTOR_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_PERIOD_DETECTOR_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace encore::graph_cache::internal {

class PeriodDetector {
 public:
  PeriodDetector(int max_period, int repeats, int min_calls)
      : max_period_(std::max(1, max_period)),
        repeats_(std::max(2, repeats)),
        min_calls_(std::max(0, min_calls)),
        ring_(static_cast<size_t>(max_period_) + 1, 0),
        run_(static_cast<size_t>(max_period_) + 1, 0) {}

  // Adds the next call's hash. Returns the smallest confirmed period, or 0.
  int Add(uint64_t h) {
    const int64_t cap = static_cast<int64_t>(ring_.size());
    int found = 0;
    const int limit = static_cast<int>(std::min<int64_t>(max_period_, count_));
    for (int p = 1; p <= limit; ++p) {
      const uint64_t prev = ring_[static_cast<size_t>((count_ - p) % cap)];
      run_[p] = (prev == h) ? run_[p] + 1 : 0;
      if (found == 0 && run_[p] >= Needed(p)) found = p;
    }
    ring_[static_cast<size_t>(count_ % cap)] = h;
    ++count_;
    return found;
  }

  // Calls needed in a run for period p: the last max(k·p, min_calls) calls are p-periodic when
  // the last (that many − p) calls each equal the call p before.
  int Needed(int p) const { return std::max((repeats_ - 1) * p, min_calls_ - p); }

  // Forgets every run (the next period must be confirmed from scratch).
  void Reset() {
    std::fill(run_.begin(), run_.end(), 0);
    count_ = 0;
  }

  int max_period() const { return max_period_; }
  int64_t calls_seen() const { return count_; }

 private:
  int max_period_;
  int repeats_;
  int min_calls_;
  std::vector<uint64_t> ring_;  // last max_period + 1 hashes
  std::vector<int> run_;        // run_[p]: current run of h[t] == h[t-p]
  int64_t count_ = 0;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_PERIOD_DETECTOR_H_

// Hysteresis switch that stops graph capture while the cache thrashes (see ThrashGuardOptions in
// graph_cache/options.h for the rule). Fixed window allocated once; Record never allocates.
// Pure CPU; not thread-safe (the executor calls it under its mutex).
//
// Example:
//   encore::graph_cache::internal::ThrashGuard guard(options.thrash);
//   if (entry != nullptr) guard.Record(/*miss=*/false);           // a hit
//   else if (was_evicted) guard.Record(/*miss=*/true);            // a reload: thrash evidence
//   else guard.Tick();                                            // a first capture
//   if (entry == nullptr && guard.CaptureAllowed()) Capture(); else RunDirect();
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_THRASH_GUARD_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_THRASH_GUARD_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph_cache/options.h"

namespace encore::graph_cache::internal {

class ThrashGuard {
 public:
  explicit ThrashGuard(const ThrashGuardOptions& o)
      : o_(o),
        window_(static_cast<size_t>(std::max(1, o.window)), 0),
        cooldown_(std::max(1, o.cooldown_lookups)) {}

  // One lookup of a recurring structure: `miss` when its graph had been evicted and is needed
  // again (a reload), false for a hit.
  void Record(bool miss) {
    if (!o_.enabled) return;
    if (cooldown_left_ > 0) {
      if (--cooldown_left_ == 0) ClearWindow();  // probation: a fresh window decides
      return;
    }
    const size_t w = window_.size();
    misses_ += static_cast<int>(miss) - window_[pos_];
    window_[pos_] = miss ? 1 : 0;
    if (++pos_ == w) pos_ = 0;  // no division on the hit path
    if (++filled_ < static_cast<int>(w)) return;
    // A full window since the last decision.
    const double ratio = static_cast<double>(misses_) / static_cast<double>(w);
    if (ratio > o_.engage_miss_ratio) {
      cooldown_left_ = cooldown_;
      ++engagements_;
      const int max_cooldown = std::max(1, o_.max_cooldown_lookups);
      // (Doubled only below half the cap: at the options' largest cooldown, 2^30, a plain
      // doubling overflowed an int.)
      cooldown_ = cooldown_ > max_cooldown / 2 ? max_cooldown : cooldown_ * 2;
      ClearWindow();
    } else {
      if (ratio <= o_.release_miss_ratio) cooldown_ = std::max(1, o_.cooldown_lookups);
      filled_ = 0;  // judge the next full window afresh (tumbling windows)
    }
  }

  // A lookup that is neither a hit nor a reload (e.g. a first capture): it tells nothing about
  // thrashing, but an engaged guard counts it towards the end of the cooldown.
  void Tick() {
    if (!o_.enabled || cooldown_left_ == 0) return;
    if (--cooldown_left_ == 0) ClearWindow();
  }

  bool CaptureAllowed() const { return !o_.enabled || cooldown_left_ == 0; }
  bool engaged() const { return cooldown_left_ > 0; }
  uint64_t engagements() const { return engagements_; }
  int cooldown_left() const { return cooldown_left_; }
  // The cooldown the next engagement would use.
  int next_cooldown() const { return cooldown_; }

 private:
  void ClearWindow() {
    std::fill(window_.begin(), window_.end(), 0);
    misses_ = 0;
    pos_ = 0;
    filled_ = 0;
  }

  ThrashGuardOptions o_;
  std::vector<uint8_t> window_;
  int misses_ = 0;
  size_t pos_ = 0;
  int filled_ = 0;
  int cooldown_;
  int cooldown_left_ = 0;
  uint64_t engagements_ = 0;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_THRASH_GUARD_H_

// Pure-CPU policy classes: LRU + byte bound, recurrence table, thrash guard, period detector.
#include <cstdint>
#include <random>
#include <limits>
#include <vector>

#include "gemm/problem.h"
#include "graph_cache/internal/early_reads.h"
#include "graph_cache/internal/lru.h"
#include "graph_cache/internal/period_detector.h"
#include "graph_cache/internal/recurrence.h"
#include "graph_cache/internal/thrash_guard.h"
#include "gtest/gtest.h"

namespace encore::graph_cache::internal {
namespace {

struct Item : LruNode {
  int id = 0;
};

TEST(LruBudgetTest, EvictsLeastRecentlyUsedByCount) {
  LruBudget lru(3, 1 << 20);
  Item items[5];
  for (int i = 0; i < 5; ++i) items[i].id = i;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lru.NextVictim(10), nullptr);
    lru.Insert(&items[i], 10);
  }
  EXPECT_EQ(lru.entries(), 3u);
  lru.Touch(&items[0]);  // order MRU→LRU: 0, 2, 1
  LruNode* v = lru.NextVictim(10);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(static_cast<Item*>(v)->id, 1);
  lru.Remove(v);
  EXPECT_EQ(lru.NextVictim(10), nullptr);
  lru.Insert(&items[3], 10);
  EXPECT_EQ(static_cast<Item*>(lru.NextVictim(10))->id, 2);
  EXPECT_EQ(static_cast<Item*>(lru.mru())->id, 3);
}

TEST(LruBudgetTest, EvictsUntilBytesFit) {
  LruBudget lru(100, 100);
  Item a, b, c, d;
  lru.Insert(&a, 40);
  lru.Insert(&b, 30);
  lru.Insert(&c, 20);
  EXPECT_EQ(lru.bytes(), 90u);
  // 50 more bytes: a (40) must go, then 50 + 50 = 100 fits.
  int evicted = 0;
  while (LruNode* v = lru.NextVictim(50)) {
    lru.Remove(v);
    ++evicted;
  }
  EXPECT_EQ(evicted, 1);
  EXPECT_FALSE(a.lru_linked);
  lru.Insert(&d, 50);
  EXPECT_EQ(lru.bytes(), 100u);
  EXPECT_TRUE(lru.Admissible(100));
  EXPECT_FALSE(lru.Admissible(101));
  LruBudget none(0, 100);
  EXPECT_FALSE(none.Admissible(1));
}

TEST(LruBudgetTest, ForEachVictimPreviewsNextVictimWithoutRemoving) {
  LruBudget lru(3, 100);
  Item it[3];
  for (int i = 0; i < 3; ++i) {
    it[i].id = i;
    lru.Insert(&it[i], 30);  // MRU→LRU: 2, 1, 0; 90 bytes
  }
  std::vector<int> seen;
  auto collect = [&](LruNode* n) {
    seen.push_back(static_cast<Item*>(n)->id);
    return true;
  };
  lru.ForEachVictim(10, collect);  // count bound: one must go
  EXPECT_EQ(seen, (std::vector<int>{0}));
  seen.clear();
  lru.ForEachVictim(60, collect);  // bytes: 90 + 60 → evict 0 and 1 (30 + 60 fits)
  EXPECT_EQ(seen, (std::vector<int>{0, 1}));
  seen.clear();
  lru.ForEachVictim(60, [&](LruNode* n) {  // early stop
    seen.push_back(static_cast<Item*>(n)->id);
    return false;
  });
  EXPECT_EQ(seen, (std::vector<int>{0}));
  EXPECT_EQ(lru.entries(), 3u) << "nothing removed";
  // Agrees with NextVictim when the victims are removed in turn.
  std::vector<int> removed;
  while (LruNode* v = lru.NextVictim(60)) {
    removed.push_back(static_cast<Item*>(v)->id);
    lru.Remove(v);
  }
  EXPECT_EQ(removed, (std::vector<int>{0, 1}));
  seen.clear();
  lru.ForEachVictim(10, collect);
  EXPECT_TRUE(seen.empty());
}

TEST(LruBudgetTest, RemoveAndTouchKeepListConsistent) {
  LruBudget lru(10, 1000);
  Item it[6];
  for (int i = 0; i < 6; ++i) {
    it[i].id = i;
    lru.Insert(&it[i], 1);
  }
  lru.Remove(&it[3]);
  lru.Remove(&it[0]);  // tail
  lru.Remove(&it[5]);  // head
  lru.Touch(&it[1]);
  lru.Remove(&it[3]);  // twice: no-op
  std::vector<int> order;
  for (LruNode* n = lru.mru(); n != nullptr; n = n->lru_next)
    order.push_back(static_cast<Item*>(n)->id);
  EXPECT_EQ(order, (std::vector<int>{1, 4, 2}));
  EXPECT_EQ(lru.entries(), 3u);
  EXPECT_EQ(static_cast<Item*>(lru.lru())->id, 2);
}

TEST(RecurrenceCounterTest, CountsAndBacksOff) {
  RecurrenceCounter r(16);
  EXPECT_EQ(r.Bump(42), 1);
  EXPECT_EQ(r.Bump(42), 2);
  EXPECT_EQ(r.Get(42), 2);
  r.Set(42, -3);
  EXPECT_EQ(r.Bump(42), -2);
  r.Forget(42);
  EXPECT_EQ(r.Get(42), 0);
  EXPECT_EQ(r.Bump(42), 1);
}

// A structure that recurs but is never captured is bumped on every call: the count saturates
// (it used to overflow into a negative count, read as a failure backoff, after 2^31 calls).
TEST(RecurrenceCounterTest, CountsSaturate) {
  RecurrenceCounter r(16);
  r.Set(7, std::numeric_limits<int>::max() - 1);
  EXPECT_EQ(r.Bump(7), std::numeric_limits<int>::max());
  EXPECT_EQ(r.Bump(7), std::numeric_limits<int>::max());
  EXPECT_EQ(r.Get(7), std::numeric_limits<int>::max());
}

TEST(RecurrenceCounterTest, AFullBucketEvictsTheLowestCount) {
  RecurrenceCounter r(1);  // rounded up to one bucket of kWays slots: every hash shares it
  ASSERT_EQ(RecurrenceCounter::kWays, 4u);
  for (int i = 0; i < 3; ++i) r.Bump(1);
  for (int i = 0; i < 2; ++i) r.Bump(2);
  r.Bump(3);
  r.Set(4, -5);  // backing off: kept even though its count is the lowest
  EXPECT_EQ(r.Bump(5), 1);  // takes 3's slot (count 1)
  EXPECT_EQ(r.Get(3), 0);
  EXPECT_EQ(r.Get(1), 3);
  EXPECT_EQ(r.Get(2), 2);
  EXPECT_EQ(r.Get(4), -5);
  EXPECT_EQ(r.Bump(3), 1);  // starts over, taking 5's slot (the lowest count again)
  EXPECT_EQ(r.Get(5), 0);
}

// Two recurring hashes of one bucket, called in turn (as two input sets of a rotation whose hashes
// share a bucket), both count up: with a direct-mapped table they reset each other on every call
// and neither ever reached the capture threshold.
TEST(RecurrenceCounterTest, AlternatingHashesOfOneBucketBothCount) {
  RecurrenceCounter r(4096);
  const uint64_t a = 5, b = 5 + (uint64_t{1} << 20);  // equal low bits, (h >> 29) = 0: one bucket
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(r.Bump(a), i);
    EXPECT_EQ(r.Bump(b), i);
  }
}

ThrashGuardOptions GuardOptions() {
  ThrashGuardOptions o;
  o.window = 10;
  o.engage_miss_ratio = 0.5;
  o.release_miss_ratio = 0.1;
  o.cooldown_lookups = 20;
  o.max_cooldown_lookups = 80;
  return o;
}

TEST(ThrashGuardTest, StaysOffWhileHitsDominate) {
  ThrashGuard g(GuardOptions());
  for (int i = 0; i < 1000; ++i) {
    g.Record(i % 4 == 0);  // 25% misses
    EXPECT_TRUE(g.CaptureAllowed());
  }
  EXPECT_EQ(g.engagements(), 0u);
}

TEST(ThrashGuardTest, EngagesCoolsDownAndRetries) {
  ThrashGuard g(GuardOptions());
  for (int i = 0; i < 9; ++i) g.Record(true);
  EXPECT_TRUE(g.CaptureAllowed()) << "window not full yet";
  g.Record(true);
  EXPECT_FALSE(g.CaptureAllowed());
  EXPECT_EQ(g.engagements(), 1u);
  EXPECT_EQ(g.cooldown_left(), 20);
  for (int i = 0; i < 19; ++i) g.Record(true);
  EXPECT_FALSE(g.CaptureAllowed());
  g.Record(true);
  EXPECT_TRUE(g.CaptureAllowed()) << "cooldown over: try capturing again";
  // Thrashing again: the cooldown doubles.
  for (int i = 0; i < 10; ++i) g.Record(true);
  EXPECT_FALSE(g.CaptureAllowed());
  EXPECT_EQ(g.cooldown_left(), 40);
  EXPECT_EQ(g.engagements(), 2u);
}

TEST(ThrashGuardTest, BackoffGrowsToMaxAndResetsOnlyBelowReleaseRatio) {
  ThrashGuard g(GuardOptions());
  auto thrash_once = [&] {
    for (int i = 0; i < 10; ++i) g.Record(true);
    while (g.engaged()) g.Record(true);
  };
  thrash_once();
  thrash_once();
  thrash_once();
  thrash_once();
  EXPECT_EQ(g.next_cooldown(), 80) << "capped";
  // A window with 30% misses: between the ratios → the backoff is kept (hysteresis).
  for (int i = 0; i < 10; ++i) g.Record(i < 3);
  EXPECT_TRUE(g.CaptureAllowed());
  EXPECT_EQ(g.next_cooldown(), 80);
  // A clean window (≤ 10% misses) resets it.
  for (int i = 0; i < 10; ++i) g.Record(i == 0);
  EXPECT_EQ(g.next_cooldown(), 20);
}

// At the largest cooldown the options allow (2^30) an engagement keeps the next cooldown at the
// cap: the doubling used to overflow an int there (negative cooldowns: a guard that refused
// captures while reporting itself not engaged).
TEST(ThrashGuardTest, TheLargestCooldownDoesNotOverflow) {
  ThrashGuardOptions o = GuardOptions();
  o.window = 1;
  o.cooldown_lookups = 1 << 30;
  o.max_cooldown_lookups = 1 << 30;
  ThrashGuard g(o);
  g.Record(true);
  EXPECT_TRUE(g.engaged());
  EXPECT_EQ(g.cooldown_left(), 1 << 30);
  EXPECT_EQ(g.next_cooldown(), 1 << 30);
  o.cooldown_lookups = (1 << 29) + 1;  // just over half the cap: doubled to the cap, not past it
  ThrashGuard h(o);
  h.Record(true);
  EXPECT_EQ(h.next_cooldown(), 1 << 30);
}

TEST(ThrashGuardTest, TicksNeitherEngageNorStallTheCooldown) {
  ThrashGuard g(GuardOptions());
  for (int i = 0; i < 1000; ++i) g.Tick();  // first captures: no evidence of thrashing
  EXPECT_TRUE(g.CaptureAllowed());
  for (int i = 0; i < 10; ++i) g.Record(true);
  ASSERT_FALSE(g.CaptureAllowed());
  for (int i = 0; i < 20; ++i) g.Tick();  // but they do run the cooldown down
  EXPECT_TRUE(g.CaptureAllowed());
}

TEST(ThrashGuardTest, DisabledNeverEngages) {
  ThrashGuardOptions o = GuardOptions();
  o.enabled = false;
  ThrashGuard g(o);
  for (int i = 0; i < 100; ++i) g.Record(true);
  EXPECT_TRUE(g.CaptureAllowed());
}

// Feeds `seq` repeated forever; returns the first confirmed period and the call count when it
// was confirmed.
std::pair<int, int> Detect(PeriodDetector& d, const std::vector<uint64_t>& prefix,
                           const std::vector<uint64_t>& period, int max_calls) {
  int calls = 0;
  for (uint64_t h : prefix) {
    ++calls;
    if (int p = d.Add(h); p > 0) return {p, calls};
  }
  for (int i = 0; calls < max_calls; ++i) {
    ++calls;
    if (int p = d.Add(period[i % period.size()]); p > 0) return {p, calls};
  }
  return {0, calls};
}

TEST(PeriodDetectorTest, FindsEveryPeriodUpToMax) {
  constexpr int kMax = 24;
  for (int p = 1; p <= kMax; ++p) {
    PeriodDetector d(kMax, /*repeats=*/2, /*min_calls=*/8);
    std::vector<uint64_t> period;
    for (int i = 0; i < p; ++i) period.push_back(1000 + i);
    const auto [found, calls] = Detect(d, {}, period, 10 * kMax);
    EXPECT_EQ(found, p);
    EXPECT_EQ(calls, std::max(2 * p, 8)) << "confirmed exactly after max(k·p, min_calls) calls";
  }
}

TEST(PeriodDetectorTest, RepeatsParameterK) {
  PeriodDetector d(16, /*repeats=*/3, /*min_calls=*/0);
  const auto [found, calls] = Detect(d, {}, {1, 2, 3, 4, 5}, 100);
  EXPECT_EQ(found, 5);
  EXPECT_EQ(calls, 15);
}

TEST(PeriodDetectorTest, PeriodsAboveMaxAreNotReported) {
  PeriodDetector d(8, 2, 8);
  std::vector<uint64_t> period;
  for (int i = 0; i < 9; ++i) period.push_back(i + 1);
  EXPECT_EQ(Detect(d, {}, period, 200).first, 0);
}

TEST(PeriodDetectorTest, RepeatedElementsInsideAPeriod) {
  // A A B C: the early "A A" must not confirm period 1 (min_calls), the true period is 4.
  PeriodDetector d(16, 2, 8);
  EXPECT_EQ(Detect(d, {}, {7, 7, 8, 9}, 100).first, 4);
  // A B A B A C: period 6, not 2.
  PeriodDetector e(16, 2, 8);
  EXPECT_EQ(Detect(e, {}, {1, 2, 1, 2, 1, 3}, 100).first, 6);
}

TEST(PeriodDetectorTest, NoisePrefixThenPeriod) {
  PeriodDetector d(16, 2, 8);
  std::mt19937_64 rng(7);
  std::vector<uint64_t> noise;
  for (int i = 0; i < 37; ++i) noise.push_back(rng());
  const auto [found, calls] = Detect(d, noise, {11, 12, 13, 14, 15}, 500);
  EXPECT_EQ(found, 5);
  EXPECT_EQ(calls, 37 + 10);
}

TEST(PeriodDetectorTest, DivergenceRestartsConfirmation) {
  PeriodDetector d(16, 2, 8);
  const std::vector<uint64_t> period = {1, 2, 3};
  // 7 calls of the period (not yet confirmed: needs 8), then one odd call, then the period.
  std::vector<uint64_t> prefix;
  for (int i = 0; i < 7; ++i) prefix.push_back(period[i % 3]);
  prefix.push_back(99);
  int calls = 0;
  for (uint64_t h : prefix) {
    ++calls;
    ASSERT_EQ(d.Add(h), 0) << "call " << calls;
  }
  // Needs 8 clean calls after the noise (the noise breaks every run).
  int found = 0;
  int after = 0;
  for (int i = 0; found == 0 && i < 100; ++i) {
    ++after;
    found = d.Add(period[i % 3]);
  }
  EXPECT_EQ(found, 3);
  // Three calls compare against the noise or the broken phase, then a run of 5 (= 8 − 3).
  EXPECT_EQ(after, 8) << "the odd call breaks the runs; re-confirm from scratch";
}

TEST(PeriodDetectorTest, ResetForgetsHistory) {
  PeriodDetector d(8, 2, 4);
  EXPECT_EQ(Detect(d, {}, {1, 2}, 100).first, 2);
  d.Reset();
  EXPECT_EQ(d.Add(1), 0);
  EXPECT_EQ(d.Add(2), 0);
  EXPECT_EQ(d.Add(1), 0);
  EXPECT_EQ(d.Add(2), 2);
}

// Early reads (PDL edges): byte ranges of the weights, weight scales and dynamic M against the
// merged outputs, touching ranges not overlapping.
TEST(EarlyReadsTest, FindsReadsThatOverlapAnOutput) {
  alignas(16) static uint8_t mem[1 << 16];
  auto group = [&](size_t b, size_t sfb, size_t c, int m, int n, int k) {
    return gemm::GroupProblem{mem, mem + b, mem, mem + sfb, mem + c, m, n, k};
  };
  // Outputs: [1024, 1024 + 16 * 64 * 2) and [8192, 8192 + 8 * 64 * 2), added out of order.
  const gemm::GroupProblem w0[] = {group(0, 0, 8192, 8, 64, 64)};
  const gemm::GroupProblem w1[] = {group(0, 0, 1024, 16, 64, 64)};
  internal::EarlyReads r;
  r.Reset();
  r.AddOutputs(gemm::GroupedGemmArguments{w0});
  r.AddOutputs(gemm::GroupedGemmArguments{w1});
  r.Finish();
  // Weights of 16 x 64 / 2 = 512 bytes; scales BlockedScaleBytes(16, 64) = 512 bytes.
  auto reads = [&](size_t b, size_t sfb) {
    const gemm::GroupProblem g[] = {group(b, sfb, 30000, 8, 16, 64)};
    return r.Overlaps(gemm::GroupedGemmArguments{g});
  };
  EXPECT_FALSE(reads(512, 20000));         // weights end where the first output begins
  EXPECT_TRUE(reads(513, 20000));          // one byte into it
  EXPECT_TRUE(reads(3071, 20000));         // the output's last byte
  EXPECT_FALSE(reads(3072, 20000));        // just past it
  EXPECT_TRUE(reads(20000, 8192 + 1023));  // scales meet the second output
  EXPECT_FALSE(reads(20000, 9216));        // past the second output
  const gemm::GroupProblem g[] = {group(20000, 20000, 30000, 8, 16, 64)};
  EXPECT_FALSE(r.Overlaps(gemm::GroupedGemmArguments{g}));
  EXPECT_TRUE(r.Overlaps(gemm::GroupedGemmArguments{
      g, reinterpret_cast<const int32_t*>(mem + 9212)}));  // dynamic M's 4 bytes
  r.Reset();
  r.Finish();
  EXPECT_FALSE(reads(513, 20000));  // nothing collected
}

}  // namespace
}  // namespace encore::graph_cache::internal

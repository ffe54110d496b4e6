#include "graph_cache/options.h"

#include "absl/strings/str_cat.h"

namespace encore::graph_cache {
namespace {

absl::Status Bad(const char* field, const char* rule) {
  return absl::InvalidArgumentError(absl::StrCat("ExecutorOptions.", field, " ", rule));
}

}  // namespace

absl::Status ValidateExecutorOptions(const ExecutorOptions& o) {
  if (o.min_repeats < 1) return Bad("min_repeats", "must be >= 1");
  if (o.max_entries == 0) return Bad("max_entries", "must be >= 1");
  if (o.max_bindings_per_structure < 1) return Bad("max_bindings_per_structure", "must be >= 1");
  if (o.max_device_bytes == 0) return Bad("max_device_bytes", "must be > 0");
  if (o.recurrence_slots == 0) return Bad("recurrence_slots", "must be >= 1");
  // (Rounded up to a power of two by doubling: beyond 2^63 that wraps to 0 and never ends.)
  if (o.recurrence_slots > (size_t{1} << 24)) return Bad("recurrence_slots", "must be <= 2^24");
  if (o.failure_backoff < 0) return Bad("failure_backoff", "must be >= 0");
  if (o.m_bucket.mode != MBucketMode::kExact && o.m_bucket.mode != MBucketMode::kPowerOfTwo &&
      o.m_bucket.mode != MBucketMode::kMultiple) {
    return Bad("m_bucket.mode", "is not a MBucketMode");
  }
  if (o.m_bucket.mode == MBucketMode::kMultiple && o.m_bucket.multiple <= 0) {
    return Bad("m_bucket.multiple", "must be > 0");
  }
  if (o.max_batch_calls < 1) return Bad("max_batch_calls", "must be >= 1");
  if (o.rebind != RebindMode::kPatch && o.rebind != RebindMode::kBound) {
    return Bad("rebind", "must be kPatch or kBound");
  }
  if (o.merge_calls != MergeCalls::kNever && o.merge_calls != MergeCalls::kSameSums &&
      o.merge_calls != MergeCalls::kAlways) {
    return Bad("merge_calls", "is not a MergeCalls");
  }
  if (o.merge_max_kblocks_per_sm < 0) return Bad("merge_max_kblocks_per_sm", "must be >= 0");
  if (o.merge_max_launch_kblocks_per_sm < 0) {
    return Bad("merge_max_launch_kblocks_per_sm", "must be >= 0");
  }
  const ThrashGuardOptions& t = o.thrash;
  if (t.window < 1) return Bad("thrash.window", "must be >= 1");
  if (!(t.engage_miss_ratio >= 0.0 && t.engage_miss_ratio <= 1.0)) {
    return Bad("thrash.engage_miss_ratio", "must be in [0, 1]");
  }
  if (!(t.release_miss_ratio >= 0.0 && t.release_miss_ratio <= t.engage_miss_ratio)) {
    return Bad("thrash.release_miss_ratio", "must be in [0, engage_miss_ratio]");
  }
  if (t.cooldown_lookups < 1) return Bad("thrash.cooldown_lookups", "must be >= 1");
  if (t.max_cooldown_lookups < t.cooldown_lookups) {
    return Bad("thrash.max_cooldown_lookups", "must be >= cooldown_lookups");
  }
  // (The cooldown doubles up to it, never past it: internal/thrash_guard.h.)
  if (t.max_cooldown_lookups > (1 << 30)) {
    return Bad("thrash.max_cooldown_lookups", "must be <= 2^30");
  }
  return absl::OkStatus();
}

}  // namespace encore::graph_cache

// CPU tests of GraphExecutor: FakeGemm in host mode (launches compute on the host, at launch
// time) behind HostGraphBackend (graphs = copied plans), so results and every path of the state
// machine are checked without a GPU.
#include "graph_cache/executor.h"

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <new>
#include <thread>
#include <limits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph_cache/batch.h"
#include "graph_cache/sequence.h"
#include "gtest/gtest.h"
#include "tests/graph_cache/fake_gemm.h"
#include "tests/graph_cache/host_backend.h"
#include "tests/graph_cache/host_problem.h"
#include "tests/test_util.h"

// Allocation counting for the steady-state test: only counts on a thread that asked for it.
namespace {
thread_local bool g_count_allocations = false;
std::atomic<int64_t> g_allocations{0};
}  // namespace

void* operator new(size_t n) {
  if (g_count_allocations) g_allocations.fetch_add(1);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace encore::graph_cache {
namespace {

using gemm::KernelKind;
using testing::Dims;
using testing::FakeGemm;
using testing::FakeStream;
using testing::HostGraphBackend;
using testing::HostProblem;

// Calls of kind kSimple on `args`, in order (the batch tests' call lists).
std::vector<GemmCall> SimpleCalls(std::initializer_list<gemm::GroupedGemmArguments> args) {
  std::vector<GemmCall> calls;
  for (const gemm::GroupedGemmArguments& a : args) calls.push_back({a, KernelKind::kSimple});
  return calls;
}

class ExecutorTest : public ::testing::Test {
 protected:
  void Make(ExecutorOptions options = {}) {
    auto backend = std::make_unique<HostGraphBackend>();
    backend_ = backend.get();
    auto e = GraphExecutor::CreateWithBackend(&gemm_, std::move(backend), options);
    ASSERT_TRUE(e.ok()) << e.status();
    exec_ = *std::move(e);
  }
  // Runs `p` (outputs cleared first) and checks the outputs.
  void RunAndCheck(HostProblem& p, KernelKind kind = KernelKind::kSimple,
                   cudaStream_t stream = FakeStream(1)) {
    p.ClearC();
    ENCORE_ASSERT_OK(exec_->Run(p.args(), stream, kind));
    EXPECT_TRUE(p.Check(kind == KernelKind::kPersistent ? 1 : 0));
  }

  // Runs a, mid and c (kSimple, stream 1, outputs cleared first) as one batch and checks them.
  void RunBatchAndCheck(HostProblem& a, HostProblem& mid, HostProblem& c) {
    a.ClearC();
    mid.ClearC();
    c.ClearC();
    const std::vector<GemmCall> calls = SimpleCalls({a.args(), mid.args(), c.args()});
    ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
    EXPECT_TRUE(a.Check(0));
    EXPECT_TRUE(mid.Check(0));
    EXPECT_TRUE(c.Check(0));
  }

  // Runs `calls` as a batch (outputs `ps` cleared first), expects them in one merged launch and
  // checks every output against `variant`'s sums.
  void RunMergedAndCheck(const std::vector<GemmCall>& calls,
                         std::initializer_list<HostProblem*> ps, int variant) {
    for (HostProblem* p : ps) p->ClearC();
    ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
    EXPECT_EQ(backend_->last_pdl().size(), 1u);
    for (HostProblem* p : ps) EXPECT_TRUE(p->Check(variant));
  }

  // Runs `rounds` rounds over `ps` in order, checking every output and the bound on live execs.
  void Rotate(std::vector<std::unique_ptr<HostProblem>>& ps, int rounds, uint64_t max_live) {
    for (int round = 0; round < rounds; ++round) {
      for (auto& p : ps) {
        RunAndCheck(*p);
        ASSERT_LE(exec_->counters().live_execs, max_live);
      }
    }
  }

  FakeGemm gemm_{FakeGemm::Device::kHost};
  HostGraphBackend* backend_ = nullptr;
  std::unique_ptr<GraphExecutor> exec_;
};

const std::vector<Dims> kShape = {{64, 128, 128}, {32, 64, 256}, {0, 64, 128}, {17, 8, 64}};

TEST_F(ExecutorTest, CreateValidatesArguments) {
  EXPECT_FALSE(
      GraphExecutor::CreateWithBackend(nullptr, std::make_unique<HostGraphBackend>()).ok());
  EXPECT_FALSE(GraphExecutor::CreateWithBackend(&gemm_, nullptr).ok());
  ExecutorOptions bad;
  bad.min_repeats = 0;
  EXPECT_FALSE(
      GraphExecutor::CreateWithBackend(&gemm_, std::make_unique<HostGraphBackend>(), bad).ok());
}

TEST_F(ExecutorTest, CreateRejectsNonsenseOptionsNamingTheField) {
  ENCORE_EXPECT_OK(ValidateExecutorOptions(ExecutorOptions{}));
  struct Case {
    const char* field;
    void (*spoil)(ExecutorOptions&);
  };
  const Case cases[] = {
      {"min_repeats", [](ExecutorOptions& o) { o.min_repeats = 0; }},
      {"min_repeats", [](ExecutorOptions& o) { o.min_repeats = -3; }},
      {"max_entries", [](ExecutorOptions& o) { o.max_entries = 0; }},
      {"max_bindings_per_structure", [](ExecutorOptions& o) { o.max_bindings_per_structure = 0; }},
      {"max_device_bytes", [](ExecutorOptions& o) { o.max_device_bytes = 0; }},
      {"recurrence_slots", [](ExecutorOptions& o) { o.recurrence_slots = 0; }},
      {"recurrence_slots", [](ExecutorOptions& o) { o.recurrence_slots = ~size_t{0}; }},
      {"failure_backoff", [](ExecutorOptions& o) { o.failure_backoff = -1; }},
      {"m_bucket.multiple",
       [](ExecutorOptions& o) {
         o.m_bucket = {MBucketMode::kMultiple, 0};
       }},
      {"m_bucket.mode", [](ExecutorOptions& o) { o.m_bucket.mode = static_cast<MBucketMode>(7); }},
      {"max_batch_calls", [](ExecutorOptions& o) { o.max_batch_calls = 0; }},
      {"merge_calls", [](ExecutorOptions& o) { o.merge_calls = static_cast<MergeCalls>(5); }},
      {"merge_max_kblocks_per_sm", [](ExecutorOptions& o) { o.merge_max_kblocks_per_sm = -1; }},
      {"thrash.window", [](ExecutorOptions& o) { o.thrash.window = 0; }},
      {"thrash.engage_miss_ratio", [](ExecutorOptions& o) { o.thrash.engage_miss_ratio = 1.5; }},
      {"thrash.release_miss_ratio",
       [](ExecutorOptions& o) { o.thrash.release_miss_ratio = o.thrash.engage_miss_ratio * 2; }},
      {"thrash.cooldown_lookups", [](ExecutorOptions& o) { o.thrash.cooldown_lookups = 0; }},
      {"thrash.max_cooldown_lookups",
       [](ExecutorOptions& o) { o.thrash.max_cooldown_lookups = o.thrash.cooldown_lookups - 1; }},
      {"thrash.max_cooldown_lookups",
       [](ExecutorOptions& o) {
         o.thrash.cooldown_lookups = (1 << 30) + 1;
         o.thrash.max_cooldown_lookups = 2147483647;
       }},
  };
  for (const Case& c : cases) {
    ExecutorOptions o;
    c.spoil(o);
    const absl::Status s = ValidateExecutorOptions(o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(s.message().find(absl::StrCat("ExecutorOptions.", c.field, " ")),
              absl::string_view::npos)
        << s;
    auto made = GraphExecutor::CreateWithBackend(&gemm_, std::make_unique<HostGraphBackend>(), o);
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument) << c.field;
    // The CUDA path validates before it touches the device, so this holds without a GPU too.
    EXPECT_EQ(GraphExecutor::Create(&gemm_, o).status().code(), absl::StatusCode::kInvalidArgument)
        << c.field;
  }
}

TEST_F(ExecutorTest, ReplayMatchesDirect) {
  Make();
  HostProblem p(kShape, 1);
  for (int i = 0; i < 6; ++i) RunAndCheck(p);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.calls, 6u);
  EXPECT_EQ(c.direct_launches, 1u) << "first sighting runs directly (min_repeats = 2)";
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.graph_launches, 5u);
  EXPECT_EQ(c.hits, 4u);
  EXPECT_EQ(c.patches, 0u);
  EXPECT_EQ(c.live_execs, 1u);
  EXPECT_EQ(backend_->launches(), 5);
  EXPECT_EQ(gemm_.runs(), 1);
  // Every launch (direct or replayed) produced the checked outputs; now prove a replay really
  // recomputes: new input bytes, same pointers → new values from the graph.
  p.Scramble(99);
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().hits, 5u);
}

TEST_F(ExecutorTest, MinRepeatsIsConfigurable) {
  ExecutorOptions o;
  o.min_repeats = 4;
  Make(o);
  HostProblem p(kShape, 2);
  for (int i = 0; i < 3; ++i) RunAndCheck(p);
  EXPECT_EQ(exec_->counters().captures, 0u);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kBelowMinRepeats);
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().captures, 1u);
  o.min_repeats = 1;
  Make(o);
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().captures, 1u);
  EXPECT_EQ(exec_->counters().direct_launches, 0u);
}

TEST_F(ExecutorTest, PointerSwapPatchesWithoutRecapture) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;  // one exec per structure: every binding change patches
  Make(o);
  HostProblem p1(kShape, 1), p2(kShape, 2), p3(kShape, 3);
  RunAndCheck(p1);
  RunAndCheck(p1);  // captured
  ASSERT_EQ(exec_->counters().captures, 1u);
  for (int i = 0; i < 9; ++i) {
    HostProblem& p = i % 3 == 0 ? p2 : (i % 3 == 1 ? p3 : p1);
    RunAndCheck(p);
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u) << "a pointer change never re-captures";
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.patches, 9u);
  EXPECT_EQ(c.hits, 9u);
  EXPECT_EQ(backend_->builds(), 1);
  EXPECT_EQ(backend_->patches(), 9);
}

// RebindMode::kBound: pointer swaps are served by one bound exec (captured at the first swap),
// each call's pointers written for its launch, nothing patched. The host fake computes a bound
// launch with the oldest bindings written on its stream, so a write without its launch (or a
// launch without its write) would show up as wrong outputs.
TEST_F(ExecutorTest, BoundRebindServesPointerSwapsWithoutPatches) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  o.rebind = RebindMode::kBound;
  Make(o);
  HostProblem p1(kShape, 1), p2(kShape, 2), p3(kShape, 3);
  RunAndCheck(p1);
  RunAndCheck(p1);  // captured: the variant holds p1
  for (int i = 0; i < 9; ++i) {
    HostProblem& p = i % 3 == 0 ? p2 : (i % 3 == 1 ? p3 : p1);
    RunAndCheck(p);
  }
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.patches, 0u);
  EXPECT_EQ(c.bound_launches, 6u) << "p2 and p3 through the bound exec, p1 from its variant";
  EXPECT_EQ(gemm_.bound_launches(), 6);
  EXPECT_EQ(c.captures, 2u) << "the variant, then the bound exec";
  EXPECT_EQ(c.live_execs, 2u);
  EXPECT_EQ(c.fast_hits, 3u) << "p1's variant is memoized; the bound exec never is";
  EXPECT_EQ(gemm_.queued_bindings(FakeStream(1)), 0u);

  // A failed launch of the bound exec takes its write back (the next bound launch reads its own
  // bindings), drops the exec and runs the call directly; the next swap captures it again.
  gemm_.FailNextLaunches(1);
  RunAndCheck(p2);
  EXPECT_EQ(gemm_.queued_bindings(FakeStream(1)), 0u);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kLaunchFailed);
  RunAndCheck(p3);
  RunAndCheck(p2);
  c = exec_->counters();
  EXPECT_EQ(c.patches, 0u);
  EXPECT_EQ(c.bound_launches, 8u);
  EXPECT_EQ(c.captures, 3u);

  // Another stream: the bound exec (its ring is stream 1's) does not serve it; patched instead.
  RunAndCheck(p3, KernelKind::kSimple, FakeStream(2));
  EXPECT_EQ(exec_->counters().patches, 1u);
  EXPECT_EQ(exec_->counters().bound_launches, 8u);

  // Clear drops both execs.
  exec_->Clear();
  EXPECT_EQ(exec_->counters().live_execs, 0u);
}

// A full binding ring (the host 256 bound launches ahead of the device) never makes the executor
// wait under its lock: the call is patched into the variant instead, and bound launches resume
// once the ring has room. (A review found the wait inside the executor's mutex: every thread
// stalled behind it, and a stream whose progress waited on another thread's call deadlocked.)
TEST_F(ExecutorTest, AFullBindingRingPatchesInsteadOfWaiting) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  o.rebind = RebindMode::kBound;
  Make(o);
  HostProblem p1(kShape, 1), p2(kShape, 2), p3(kShape, 3);
  RunAndCheck(p1);
  RunAndCheck(p1);  // the variant holds p1
  RunAndCheck(p2);  // the bound exec
  EXPECT_EQ(exec_->counters().bound_launches, 1u);
  gemm_.SetBindingRingFull(true);
  RunAndCheck(p3);  // patched into the variant: no wait, no write
  EXPECT_EQ(gemm_.full_ring_waits(), 0);
  EXPECT_EQ(exec_->counters().bound_launches, 1u);
  EXPECT_EQ(exec_->counters().patches, 1u);
  EXPECT_EQ(gemm_.queued_bindings(FakeStream(1)), 0u);
  gemm_.SetBindingRingFull(false);
  RunAndCheck(p2);
  EXPECT_EQ(exec_->counters().bound_launches, 2u);
  EXPECT_EQ(exec_->counters().patches, 1u);
}

// A new variant larger than its entry's others (here: its plan gained a pre-kernel) is not
// captured where making room for it would evict one of them; the call runs directly. (The check
// before capture judged by the size of the entry's first variant: a review found the larger one
// evicting its own entry's variant.)
TEST_F(ExecutorTest, ALargerNewVariantNeverEvictsItsEntrysOwn) {
  static const int kPreTag = 0;
  // The two variants' sizes, each captured alone.
  size_t plain_bytes = 0, pre_bytes = 0;
  {
    ExecutorOptions o;
    o.min_repeats = 1;
    Make(o);
    HostProblem p(kShape, 1);
    RunAndCheck(p);
    plain_bytes = exec_->counters().live_bytes;
    gemm_.SetPreKernel(&kPreTag);
    exec_->Clear();
    RunAndCheck(p);
    pre_bytes = exec_->counters().live_bytes;
    gemm_.SetPreKernel(nullptr);
  }
  ASSERT_GT(pre_bytes, plain_bytes);
  // Room for two plain variants, not for a plain and a pre-kernel one.
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_device_bytes = plain_bytes + pre_bytes - 1;
  Make(o);
  HostProblem p1(kShape, 1), p2(kShape, 2);
  RunAndCheck(p1);  // V1, no pre-kernel
  gemm_.SetPreKernel(&kPreTag);
  RunAndCheck(p2);  // would be V2 with a pre-kernel: it does not fit beside V1
  gemm_.SetPreKernel(nullptr);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(c.live_execs, 1u);
  EXPECT_EQ(c.live_bytes, plain_bytes);
  EXPECT_EQ(c.last_fallback, FallbackReason::kOverBudget);
}

// kBound, room for two execs, no thrash guard: the eviction tests below.
ExecutorOptions BoundTwoExecs() {
  ExecutorOptions o;
  o.rebind = RebindMode::kBound;
  o.max_entries = 2;
  o.thrash.enabled = false;
  return o;
}

// An entry whose variants were evicted keeps its bound exec; a call that exec cannot serve (here:
// another stream) is captured as a variant only once it recurs min_repeats times, as any new
// variant is, and runs directly until then.
TEST_F(ExecutorTest, BoundOnlyEntryCapturesNoVariantBelowMinRepeats) {
  Make(BoundTwoExecs());
  HostProblem p1(kShape, 1), p2(kShape, 2), p3(kShape, 3), q({{17, 64, 64}}, 4);
  RunAndCheck(p1);
  RunAndCheck(p1);  // E's variant for p1
  RunAndCheck(p2);  // new bindings, first sight: E's bound exec (room for it: 2 execs)
  ASSERT_EQ(exec_->counters().bound_launches, 1u);
  RunAndCheck(q);
  RunAndCheck(q);  // F's variant evicts the least recently used exec: p1's variant
  ExecutorCounters c = exec_->counters();
  ASSERT_EQ(c.evictions, 1u);
  ASSERT_EQ(c.captures, 3u);
  RunAndCheck(p3, KernelKind::kSimple, FakeStream(2));  // the bound exec serves stream 1 only
  c = exec_->counters();
  EXPECT_EQ(c.captures, 3u) << "captured at first sight";
  EXPECT_EQ(c.last_fallback, FallbackReason::kBelowMinRepeats);
  RunAndCheck(p3, KernelKind::kSimple, FakeStream(2));  // its second sighting: captured
  EXPECT_EQ(exec_->counters().captures, 4u);
}

// An entry's bound exec is not created at the cost of one of the entry's own variants (the rule
// for every new exec): the call patches that variant instead.
TEST_F(ExecutorTest, BoundExecNeverEvictsItsOwnEntrysVariant) {
  Make(BoundTwoExecs());
  HostProblem p1(kShape, 1), p2(kShape, 2), q({{17, 64, 64}}, 4);
  RunAndCheck(p1);
  RunAndCheck(p1);  // E's variant for p1 (the least recently used exec from now on)
  RunAndCheck(q);
  RunAndCheck(q);  // F's variant: the cache is full
  RunAndCheck(p2);  // a bound exec for E would evict E's variant: patched instead
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(c.bound_launches, 0u);
  EXPECT_EQ(c.patches, 1u);
  EXPECT_EQ(c.live_execs, 2u);
  RunAndCheck(q);  // F's variant is still live
  EXPECT_EQ(exec_->counters().captures, 2u);
}

// RebindMode::kBound with a runner that has no bound plans serves pointer swaps by patching, as
// kPatch does, and tries PrepareBound once per structure.
TEST_F(ExecutorTest, BoundRebindFallsBackToPatchingWithoutBoundPlans) {
  gemm_.DisableBoundPlans();
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  o.rebind = RebindMode::kBound;
  Make(o);
  HostProblem p1(kShape, 1), p2(kShape, 2), p3(kShape, 3);
  RunAndCheck(p1);
  RunAndCheck(p1);
  for (int i = 0; i < 9; ++i) {
    HostProblem& p = i % 3 == 0 ? p2 : (i % 3 == 1 ? p3 : p1);
    RunAndCheck(p);
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.bound_launches, 0u);
  EXPECT_EQ(c.captures, 1u) << "no capture attempt for a bound exec without a bound plan";
  EXPECT_EQ(c.patches, 9u);
  EXPECT_EQ(c.hits, 9u);
}

TEST_F(ExecutorTest, RebindModeIsValidated) {
  ExecutorOptions o;
  o.rebind = static_cast<RebindMode>(7);
  auto e = GraphExecutor::CreateWithBackend(&gemm_, std::make_unique<HostGraphBackend>(), o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("rebind"), absl::string_view::npos) << e.status();
}

// The stream is part of a call's binding: a plan is prepared for its stream (the runner's token
// workspace of that stream), so the same arguments on another stream never replay a graph whose
// nodes were prepared for the first one; they get their own variant (or a patch).
TEST_F(ExecutorTest, AnotherStreamIsAnotherBinding) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  Make(o);
  HostProblem p(kShape, 1);
  RunAndCheck(p, KernelKind::kSimple, FakeStream(1));
  RunAndCheck(p, KernelKind::kSimple, FakeStream(1));  // captured for stream 1
  ASSERT_EQ(exec_->counters().captures, 1u);
  const uint64_t hits = exec_->counters().hits;
  const int prepares = gemm_.prepares();
  RunAndCheck(p, KernelKind::kSimple, FakeStream(2));
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.patches, 1u) << "stream 2 needs nodes prepared for stream 2";
  EXPECT_EQ(gemm_.prepares(), prepares + 1);
  EXPECT_EQ(gemm_.last_prepare_stream(), FakeStream(2));
  RunAndCheck(p, KernelKind::kSimple, FakeStream(2));  // now a plain hit
  c = exec_->counters();
  EXPECT_EQ(c.patches, 1u);
  EXPECT_EQ(c.hits, hits + 2);
  EXPECT_EQ(c.captures, 1u);
}

std::vector<std::unique_ptr<HostProblem>> BufferSets(int n, const std::vector<Dims>& shape) {
  std::vector<std::unique_ptr<HostProblem>> ps;
  for (int i = 0; i < n; ++i) ps.push_back(std::make_unique<HostProblem>(shape, 40 + i));
  return ps;
}

TEST_F(ExecutorTest, RotationWithinMaxBindingsReplaysVariantsWithoutPatching) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 4;
  Make(o);
  auto ps = BufferSets(3, kShape);            // same shapes, three input sets, called in rotation
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 3, 3));  // warm-up
  const ExecutorCounters warm = exec_->counters();
  EXPECT_EQ(warm.captures, 3u) << "one variant per binding set";
  EXPECT_EQ(warm.live_execs, 3u);
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 10, 3));
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.patches, warm.patches) << "every binding set has its own exec";
  EXPECT_EQ(c.captures, warm.captures);
  EXPECT_EQ(c.instantiations, warm.instantiations);
  EXPECT_EQ(c.hits - warm.hits, 30u);
  EXPECT_EQ(c.graph_launches - warm.graph_launches, 30u);
  EXPECT_EQ(c.direct_launches, warm.direct_launches);
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(backend_->live_graphs(), 3);
  // A replayed variant recomputes: new input bytes behind the same pointers.
  ps[1]->Scramble(7);
  RunAndCheck(*ps[1]);
  EXPECT_EQ(exec_->counters().patches, warm.patches);
}

TEST_F(ExecutorTest, RotationBeyondMaxBindingsPatchesTheLeastRecentlyUsedVariant) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 2;
  o.thrash.window = 8;  // judge often: patching a full entry must not count as thrash
  Make(o);
  auto ps = BufferSets(5, kShape);
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 2, 2));
  const ExecutorCounters warm = exec_->counters();
  EXPECT_EQ(warm.live_execs, 2u);
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 8, 2));
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, warm.captures) << "the entry is full: no more variants";
  EXPECT_EQ(c.patches - warm.patches, 40u)
      << "cycling 5 sets through 2 LRU variants: every call patches its (single) node";
  EXPECT_EQ(c.hits - warm.hits, 40u) << "patched calls are served from a graph";
  EXPECT_EQ(c.direct_launches, warm.direct_launches);
  EXPECT_EQ(c.live_execs, 2u);
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(c.thrash_engagements, 0u) << "rotation beyond max_bindings is the patch path";
}

TEST_F(ExecutorTest, MaxBindingsOneIsOneExecPatchedPerChange) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  Make(o);
  auto ps = BufferSets(3, kShape);
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 5, 1));
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.live_execs, 1u);
  EXPECT_EQ(c.direct_launches, 1u);
  EXPECT_EQ(c.patches, 13u) << "every call after the capture changes the bindings";
  EXPECT_EQ(c.hits, 13u);
  EXPECT_EQ(c.fast_hits, 0u) << "the hit memo never serves the exec for bindings it had";
}

TEST_F(ExecutorTest, EvictionAcrossVariantsUnderTheEntryBound) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_entries = 3;
  o.max_bindings_per_structure = 4;
  o.thrash.enabled = false;
  Make(o);
  const std::vector<Dims> s_shape = {{16, 64, 64}}, t_shape = {{24, 64, 64}};
  HostProblem s1(s_shape, 1), s2(s_shape, 2), s3(s_shape, 3), t1(t_shape, 4);
  auto expect = [&](uint64_t captures, uint64_t evictions, uint64_t patches, uint64_t live) {
    const ExecutorCounters c = exec_->counters();
    EXPECT_EQ(c.captures, captures);
    EXPECT_EQ(c.evictions, evictions);
    EXPECT_EQ(c.patches, patches);
    EXPECT_EQ(c.live_execs, live);
    EXPECT_EQ(backend_->live_graphs(), static_cast<int64_t>(live));
  };
  RunAndCheck(t1);
  RunAndCheck(s1);
  RunAndCheck(s2);
  expect(3, 0, 0, 3);  // T{t1}, S{s1, s2}
  RunAndCheck(s3);     // S has room; the LRU exec is T's only variant: T is evicted whole
  expect(4, 1, 0, 3);  // S{s1, s2, s3}
  RunAndCheck(t1);     // T is a new structure again; evicts S's LRU variant s1
  expect(5, 2, 0, 3);  // S{s2, s3}, T{t1}
  RunAndCheck(s1);     // S has room, but the LRU exec is S's own s2: patch it rather than
                       // capture one variant of S to evict another
  expect(5, 2, 1, 3);  // S{s1 (was s2), s3}, T{t1}
  RunAndCheck(s3);     // a hit
  RunAndCheck(t1);     // a hit
  expect(5, 2, 1, 3);
  EXPECT_EQ(exec_->counters().hits, 3u);
}

TEST_F(ExecutorTest, ByteBoundCountsEveryVariant) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.thrash.enabled = false;
  o.per_graph_bytes = 1000;
  o.per_node_bytes = 0;
  const size_t one = 1000 + sizeof(testing::FakeParams);
  o.max_device_bytes = 2 * one + one / 2;  // room for two execs
  Make(o);
  const std::vector<Dims> shape = {{16, 64, 64}};
  HostProblem p1(shape, 1), p2(shape, 2), p3(shape, 3), q({{17, 64, 64}}, 4);
  RunAndCheck(p1);
  RunAndCheck(p2);
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.live_execs, 2u) << "two variants of one structure";
  EXPECT_EQ(c.live_bytes, 2 * one);
  RunAndCheck(p3);  // a third variant would evict one of its own: patched instead
  c = exec_->counters();
  EXPECT_EQ(c.captures, 2u);
  EXPECT_EQ(c.patches, 1u);
  EXPECT_EQ(c.live_bytes, 2 * one);
  RunAndCheck(q);  // another structure evicts the structure's LRU variant
  c = exec_->counters();
  EXPECT_EQ(c.captures, 3u);
  EXPECT_EQ(c.evictions, 1u);
  EXPECT_EQ(c.live_execs, 2u);
  EXPECT_EQ(c.live_bytes, 2 * one);
  EXPECT_LE(c.live_bytes, o.max_device_bytes);
  RunAndCheck(p3);  // the variant patched to p3 was the more recently used: it survived
  c = exec_->counters();
  EXPECT_EQ(c.hits, 2u) << "the patched call, and this one";
  EXPECT_EQ(c.patches, 1u);
}

// A plan with a token pre-pass is two kernel nodes: the estimate counts per_node_bytes for each
// (and both parameter blocks), for a captured exec as for a bound one.
TEST_F(ExecutorTest, ByteEstimateCountsThePreKernelNode) {
  static const int kPreTag = 0;
  gemm_.SetPreKernel(&kPreTag);
  ExecutorOptions o;
  o.min_repeats = 1;
  o.per_graph_bytes = 1000;
  o.per_node_bytes = 100;
  Make(o);
  HostProblem p(kShape, 1);
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().live_execs, 1u);
  EXPECT_EQ(exec_->counters().live_bytes, 1000 + 2 * 100 + sizeof(testing::FakeParams));
  gemm_.SetPreKernel(nullptr);
}

TEST_F(ExecutorTest, FailedVariantCaptureBacksOffAndPatchesMeanwhile) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.failure_backoff = 3;
  Make(o);
  HostProblem p(kShape, 1), q(kShape, 2);
  RunAndCheck(p);  // captured
  backend_->FailNextCaptures(1);
  RunAndCheck(q);  // a new variant: its capture fails → direct
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.capture_failures, 1u);
  EXPECT_EQ(c.last_fallback, FallbackReason::kCaptureFailed);
  EXPECT_EQ(c.direct_launches, 1u);
  EXPECT_EQ(c.live_execs, 1u) << "the structure's other variant is untouched";
  // Backing off: q is not captured again but served by patching the structure's variant (once;
  // then that variant holds q's bindings and q hits).
  for (int i = 0; i < 3; ++i) RunAndCheck(q);
  c = exec_->counters();
  EXPECT_EQ(c.captures, 2u);
  EXPECT_EQ(c.patches, 1u);
  EXPECT_EQ(c.hits, 3u);
  EXPECT_EQ(c.direct_launches, 1u);
  RunAndCheck(p);  // p's bindings recur (min_repeats = 1): a variant of their own again
  c = exec_->counters();
  EXPECT_EQ(c.captures, 3u);
  EXPECT_EQ(c.live_execs, 2u);
}

TEST_F(ExecutorTest, SingleBufferChangeIsPatched) {
  Make();
  HostProblem p(kShape, 1), q(kShape, 2);
  RunAndCheck(p);
  RunAndCheck(p);
  // Mix: groups of p with q's C for group 1 only.
  std::vector<gemm::GroupProblem> mixed(p.args().groups.begin(), p.args().groups.end());
  mixed[1].c = q.args().groups[1].c;
  ENCORE_ASSERT_OK(exec_->Run(gemm::GroupedGemmArguments{absl::MakeConstSpan(mixed)}, FakeStream(1),
                              KernelKind::kSimple));
  EXPECT_EQ(exec_->counters().patches, 1u);
  EXPECT_EQ(exec_->counters().captures, 1u);
}

TEST_F(ExecutorTest, StructureAndKindSeparateEntries) {
  Make();
  HostProblem a({{64, 128, 128}}, 1), b({{64, 136, 128}}, 2), c({{64, 128, 192}}, 3);
  for (int i = 0; i < 3; ++i) {
    RunAndCheck(a);
    RunAndCheck(b);
    RunAndCheck(c);
    RunAndCheck(a, KernelKind::kPersistent);
  }
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.captures, 4u);
  EXPECT_EQ(k.live_execs, 4u);
  EXPECT_EQ(k.patches, 0u);
}

TEST_F(ExecutorTest, EvictionUnderChurnKeepsResultsCorrect) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_entries = 4;
  o.thrash.enabled = false;
  Make(o);
  std::vector<std::unique_ptr<HostProblem>> ps;
  for (int i = 0; i < 10; ++i) {
    ps.push_back(std::make_unique<HostProblem>(std::vector<Dims>{{16 + i, 64, 64}}, i));
  }
  for (int round = 0; round < 5; ++round) {
    for (auto& p : ps) {
      RunAndCheck(*p);
      EXPECT_LE(exec_->counters().live_execs, 4u);
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 50u) << "round-robin over 10 structures with room for 4: every call misses";
  EXPECT_EQ(c.evictions, 46u);
  EXPECT_EQ(c.live_execs, 4u);
  EXPECT_EQ(backend_->live_graphs(), 4) << "evicted graphs are destroyed";
}

TEST_F(ExecutorTest, LruKeepsTheHotEntries) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_entries = 2;
  o.thrash.enabled = false;
  Make(o);
  HostProblem hot({{16, 64, 64}}, 1), a({{17, 64, 64}}, 2), b({{18, 64, 64}}, 3);
  RunAndCheck(hot);
  RunAndCheck(a);
  RunAndCheck(hot);  // hot is MRU
  RunAndCheck(b);    // evicts a
  RunAndCheck(hot);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 3u);
  EXPECT_EQ(c.evictions, 1u);
  EXPECT_EQ(c.hits, 2u);
}

TEST_F(ExecutorTest, ByteBoundLimitsLiveGraphs) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.thrash.enabled = false;
  o.per_graph_bytes = 1000;
  o.per_node_bytes = 0;
  // Each single-call graph: 1000 + sizeof(FakeParams); room for two.
  const size_t one = 1000 + sizeof(testing::FakeParams);
  o.max_device_bytes = 2 * one + one / 2;
  Make(o);
  HostProblem a({{16, 64, 64}}, 1), b({{17, 64, 64}}, 2), c({{18, 64, 64}}, 3);
  RunAndCheck(a);
  RunAndCheck(b);
  EXPECT_EQ(exec_->counters().live_bytes, 2 * one);
  RunAndCheck(c);
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.live_execs, 2u);
  EXPECT_EQ(k.evictions, 1u);
  EXPECT_LE(k.live_bytes, o.max_device_bytes);

  // A graph larger than the whole budget is never captured.
  o.max_device_bytes = one - 1;
  Make(o);
  RunAndCheck(a);
  EXPECT_EQ(exec_->counters().captures, 0u);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kOverBudget);
}

TEST_F(ExecutorTest, ThrashGuardStopsCapturingThenRetries) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_entries = 2;
  o.thrash.window = 8;
  o.thrash.cooldown_lookups = 40;
  Make(o);
  std::vector<std::unique_ptr<HostProblem>> ps;
  for (int i = 0; i < 6; ++i) {
    ps.push_back(std::make_unique<HostProblem>(std::vector<Dims>{{16 + i, 64, 64}}, i));
  }
  bool saw_guard = false;
  for (int round = 0; round < 10; ++round) {
    for (auto& p : ps) {
      RunAndCheck(*p);
      saw_guard |= exec_->counters().last_fallback == FallbackReason::kThrashGuard;
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_TRUE(saw_guard);
  EXPECT_GE(c.thrash_engagements, 1u);
  EXPECT_LT(c.captures, 60u) << "capturing paused while thrashing";
  EXPECT_GT(c.direct_launches, 0u);
  EXPECT_EQ(c.calls, 60u);
  EXPECT_EQ(c.direct_launches + c.graph_launches, 60u);
}

TEST_F(ExecutorTest, WarmUpBurstOfNewStructuresDoesNotTripTheGuard) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.thrash.window = 8;
  Make(o);
  std::vector<std::unique_ptr<HostProblem>> ps;
  for (int i = 0; i < 40; ++i) {
    ps.push_back(std::make_unique<HostProblem>(std::vector<Dims>{{8 + i, 8, 64}}, i));
  }
  for (auto& p : ps) RunAndCheck(*p);  // 40 first captures in a row
  for (auto& p : ps) RunAndCheck(*p);  // all hits
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.thrash_engagements, 0u);
  EXPECT_EQ(c.captures, 40u);
  EXPECT_EQ(c.hits, 40u);
}

TEST_F(ExecutorTest, CallerCaptureGetsDirectLaunchNoNesting) {
  Make();
  HostProblem p(kShape, 1);
  backend_->SetCapturing(FakeStream(7), true);
  for (int i = 0; i < 4; ++i) RunAndCheck(p, KernelKind::kSimple, FakeStream(7));
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 0u);
  EXPECT_EQ(c.direct_launches, 4u);
  EXPECT_EQ(c.last_fallback, FallbackReason::kCallerCapturing);
  // Also when a graph already exists for the structure.
  RunAndCheck(p);  // the caller-capture calls did not count as sightings: direct
  RunAndCheck(p);  // captured
  ASSERT_EQ(exec_->counters().captures, 1u);
  RunAndCheck(p, KernelKind::kSimple, FakeStream(7));
  c = exec_->counters();
  EXPECT_EQ(c.direct_launches, 6u);
  EXPECT_EQ(c.graph_launches, 1u);
}

// A batch into the caller's capture runs its calls directly, each into that capture: a malformed
// call anywhere in it is an error before the first call is enqueued.
TEST_F(ExecutorTest, BatchIntoCallerCaptureValidatesEveryCallFirst) {
  Make();
  HostProblem a(kShape, 1), b(kShape, 2);
  std::vector<GemmCall> calls = SimpleCalls({a.args(), b.args()});
  gemm::GroupedGemmArguments bad = b.args();
  bad.groups = bad.groups.subspan(0, 0);  // no groups
  calls.push_back(GemmCall{bad, KernelKind::kSimple});
  backend_->SetCapturing(FakeStream(7), true);
  const int64_t runs = gemm_.runs();
  const absl::Status s = exec_->RunBatch(calls, FakeStream(7));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("batch call 2"), absl::string_view::npos) << s;
  EXPECT_EQ(gemm_.runs(), runs) << "nothing of the batch was launched";
  calls.pop_back();
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(7)));
  EXPECT_EQ(gemm_.runs(), runs + 2);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kCallerCapturing);
}

TEST_F(ExecutorTest, CaptureFailureFallsBackAndBacksOff) {
  ExecutorOptions o;
  o.failure_backoff = 3;
  Make(o);
  HostProblem p(kShape, 1);
  backend_->FailNextCaptures(1);
  RunAndCheck(p);
  RunAndCheck(p);  // capture attempt fails → direct
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.capture_failures, 1u);
  EXPECT_EQ(c.last_fallback, FallbackReason::kCaptureFailed);
  EXPECT_EQ(c.direct_launches, 2u);
  // Backoff: the structure must recur failure_backoff more times (count restarts at -2).
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kFailureBackoff);
  for (int i = 0; i < 3; ++i) RunAndCheck(p);
  c = exec_->counters();
  EXPECT_EQ(c.captures, 2u);
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.live_execs, 1u);
}

// capture_immediately (the sequence recorder's period launches) skips min_repeats, not the
// backoff after a failed capture: a new structure, and a new variant of a live one (patched
// meanwhile), wait failure_backoff more sightings before the next attempt.
TEST_F(ExecutorTest, CaptureImmediatelyKeepsTheFailureBackoff) {
  ExecutorOptions o;
  o.failure_backoff = 3;
  Make(o);
  const BatchRunOptions now{/*capture_immediately=*/true};
  HostProblem a(kShape, 1), b(kShape, 2);
  const std::vector<GemmCall> ca = SimpleCalls({a.args()}), cb = SimpleCalls({b.args()});
  backend_->FailNextCaptures(1);
  ENCORE_ASSERT_OK(exec_->RunBatch(ca, FakeStream(1), now));  // captured at once: fails
  EXPECT_EQ(exec_->counters().captures, 1u);
  EXPECT_EQ(exec_->counters().capture_failures, 1u);
  for (int i = 0; i < 2; ++i) {  // the count restarts at -2: two sightings back off
    ENCORE_ASSERT_OK(exec_->RunBatch(ca, FakeStream(1), now));
    EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kFailureBackoff);
  }
  EXPECT_EQ(exec_->counters().captures, 1u);
  ENCORE_ASSERT_OK(exec_->RunBatch(ca, FakeStream(1), now));  // the third: captured
  EXPECT_EQ(exec_->counters().captures, 2u);
  EXPECT_EQ(exec_->counters().live_execs, 1u);
  // A new binding set of the live structure: its variant's capture fails, then it is patched
  // (not captured again) until its backoff has passed.
  backend_->FailNextCaptures(1);
  ENCORE_ASSERT_OK(exec_->RunBatch(cb, FakeStream(1), now));
  EXPECT_EQ(exec_->counters().captures, 3u);
  EXPECT_EQ(exec_->counters().capture_failures, 2u);
  const uint64_t patches = exec_->counters().patches;
  b.ClearC();
  ENCORE_ASSERT_OK(exec_->RunBatch(cb, FakeStream(1), now));
  EXPECT_EQ(exec_->counters().captures, 3u);
  EXPECT_EQ(exec_->counters().patches, patches + 1);
  EXPECT_TRUE(b.Check(0));
}

TEST_F(ExecutorTest, InstantiateOutOfMemoryRetriesOnceAfterTrim) {
  Make();
  HostProblem p(kShape, 1);
  backend_->FailNextInstantiations(1);
  RunAndCheck(p);
  RunAndCheck(p);
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(backend_->trims(), 1);
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.instantiate_failures, 0u);
  EXPECT_EQ(c.graph_launches, 1u);

  Make();
  backend_->FailNextInstantiations(2);
  RunAndCheck(p);
  RunAndCheck(p);
  c = exec_->counters();
  EXPECT_EQ(c.instantiate_failures, 1u);
  EXPECT_EQ(c.instantiations, 0u);
  EXPECT_EQ(c.last_fallback, FallbackReason::kInstantiateFailed);
  EXPECT_EQ(c.direct_launches, 2u);
}

TEST_F(ExecutorTest, PatchFailureDropsEntryAndRunsDirect) {
  Make();
  HostProblem p(kShape, 1), q(kShape, 2);
  RunAndCheck(p);
  RunAndCheck(p);
  backend_->FailNextPatches(1);
  RunAndCheck(q);
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.dropped, 1u);
  EXPECT_EQ(c.live_execs, 0u);
  EXPECT_EQ(c.last_fallback, FallbackReason::kPatchFailed);
  RunAndCheck(q);
  RunAndCheck(q);
  EXPECT_EQ(exec_->counters().captures, 2u);
}

TEST_F(ExecutorTest, GraphLaunchFailureDropsEntryAndRunsDirect) {
  Make();
  HostProblem p(kShape, 1);
  RunAndCheck(p);
  RunAndCheck(p);
  gemm_.FailNextLaunches(1);  // the next replay's first node fails
  RunAndCheck(p);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.last_fallback, FallbackReason::kLaunchFailed);
  EXPECT_EQ(c.dropped, 1u);
  EXPECT_EQ(c.direct_launches, 2u);
}

TEST_F(ExecutorTest, InvalidCallIsAnErrorAndNotCached) {
  Make();
  HostProblem p({{64, 60, 128}}, 1);  // n not a multiple of 8: the runner rejects it
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(exec_->Run(p.args(), FakeStream(1), KernelKind::kSimple).ok());
  }
  EXPECT_EQ(exec_->counters().live_execs, 0u);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kPrepareFailed);
  EXPECT_EQ(exec_->Run(gemm::GroupedGemmArguments{}, FakeStream(1)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ExecutorTest, DynamicMChangingEveryStepReplaysWithoutRecapture) {
  ExecutorOptions o;
  o.min_repeats = 1;
  Make(o);
  HostProblem p({{256, 64, 128}, {256, 64, 128}, {128, 32, 64}}, 5);  // m = capacity
  for (int step = 0; step < 12; ++step) {
    p.set_device_m({(step * 37) % 257, (step * 91 + 5) % 300, step % 3 == 0 ? 0 : 128});
    RunAndCheck(p);
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.patches, 0u) << "token counts live on the device: same key, same binding";
  EXPECT_EQ(c.hits, 11u);
}

TEST_F(ExecutorTest, DynamicMCapacityWithinBucketIsPatchedNeverOverPlanned) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;  // else each capacity, seen once, gets its own variant
  o.m_bucket = {MBucketMode::kPowerOfTwo, 0};
  Make(o);
  // Buffers for 512 rows; the caller's capacity m varies.
  HostProblem p({{200, 64, 128}}, 6, /*capacity_rows=*/{512});
  p.set_device_m({1000});  // more than any capacity: the kernel computes exactly m rows
  RunAndCheck(p);
  p.set_m(0, 250);  // same bucket (256): patched, planned for exactly 250
  RunAndCheck(p);
  p.set_m(0, 129);
  RunAndCheck(p);
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.patches, 2u);
  p.set_m(0, 300);  // next bucket (512): a new structure
  RunAndCheck(p);
  c = exec_->counters();
  EXPECT_EQ(c.captures, 2u);
  EXPECT_EQ(c.live_execs, 2u);
}

TEST_F(ExecutorTest, KernelFunctionChangeOnPatchRecreatesTheGraph) {
  // kAuto switches variant at Σ m·n ≥ 64·128: a capacity change within the bucket can change the
  // kernel function; the node must not be patched to another kernel silently.
  FakeGemm gemm(FakeGemm::Device::kHost, /*auto_threshold=*/64 * 128);
  auto backend = std::make_unique<HostGraphBackend>();
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;  // the new capacity patches the only variant
  auto made = GraphExecutor::CreateWithBackend(&gemm, std::move(backend), o);
  ASSERT_TRUE(made.ok());
  GraphExecutor& exec = **made;
  HostProblem p({{40, 128, 128}}, 7, {64});
  p.set_device_m({1 << 20});
  ENCORE_ASSERT_OK(exec.Run(p.args(), FakeStream(1)));  // variant 0
  EXPECT_TRUE(p.Check(0));
  p.set_m(0, 64);  // bucket 64 again, but 64·128 ≥ threshold → variant 1
  p.ClearC();
  ENCORE_ASSERT_OK(exec.Run(p.args(), FakeStream(1)));
  EXPECT_TRUE(p.Check(1));
  const ExecutorCounters c = exec.counters();
  EXPECT_EQ(c.dropped, 1u);
  EXPECT_EQ(c.captures, 2u);
  EXPECT_EQ(c.patches, 0u);
}

// Bindings that need a graph of their own (here a dynamic-M capacity whose kAuto plan has another
// kernel than the variant's) become a variant beside it where the entry has room: two such
// capacities alternating in one bucket then both replay. (A review found them re-captured on
// every call: each replaced the other, and each capture forgot the other's recurrence count.)
// Where the entry holds one variant only, each such call replaces it as a reload, and the thrash
// guard stops the captures.
TEST_F(ExecutorTest, AlternatingUnpatchableBindingsBecomeVariantsOrTripTheGuard) {
  for (int max_variants : {4, 1}) {
    FakeGemm gemm(FakeGemm::Device::kHost, /*auto_threshold=*/100 * 64);
    auto backend = std::make_unique<HostGraphBackend>();
    ExecutorOptions o;
    o.max_bindings_per_structure = max_variants;
    auto made = GraphExecutor::CreateWithBackend(&gemm, std::move(backend), o);
    ASSERT_TRUE(made.ok());
    GraphExecutor& exec = **made;
    HostProblem p({{90, 64, 128}}, 21, {128});
    p.set_device_m({50});
    for (int i = 0; i < 200; ++i) {
      p.set_m(0, i % 2 ? 110 : 90);  // bucket 128 either way; 90·64 < 6400 <= 110·64
      p.ClearC();
      ENCORE_ASSERT_OK(exec.Run(p.args(), FakeStream(1)));
      ASSERT_TRUE(p.Check(i % 2)) << "call " << i << ", max_variants " << max_variants;
    }
    const ExecutorCounters c = exec.counters();
    if (max_variants > 1) {
      EXPECT_EQ(c.captures, 2u);
      EXPECT_EQ(c.live_execs, 2u);
      EXPECT_EQ(c.dropped, 0u);
      EXPECT_GE(c.graph_launches, 195u);
    } else {
      EXPECT_GE(c.thrash_engagements, 1u);
      EXPECT_LT(c.captures, 100u);
    }
  }
}

// A batch is planned (which calls to merge) before its calls are validated: extents far beyond
// kMaxExtent make a call unmergeable rather than overflow the work and token sums (UBSan found
// `(m + 127) / 128` overflowing for m near INT_MAX), and validation then names the argument.
TEST_F(ExecutorTest, ABatchOfUnvalidatedHugeCallsIsRefusedByValidation) {
  ExecutorOptions o;
  o.min_repeats = 1;
  Make(o);
  HostProblem a({{64, 128, 128}}, 22), b({{64, 128, 128}}, 23);
  std::vector<gemm::GroupProblem> ag(a.args().groups.begin(), a.args().groups.end());
  std::vector<gemm::GroupProblem> bg(b.args().groups.begin(), b.args().groups.end());
  ag[0].m = bg[0].m = std::numeric_limits<int>::max() - 10;
  const std::vector<GemmCall> calls =
      SimpleCalls({gemm::GroupedGemmArguments{ag}, gemm::GroupedGemmArguments{bg}});
  const absl::Status s = exec_->RunBatch(calls, FakeStream(1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "m")) << s;
  EXPECT_EQ(exec_->counters().captures, 0u);
}

TEST_F(ExecutorTest, BatchRunsAsOneGraphWithPdlAndPatchesPerNode) {
  ExecutorOptions o;
  o.merge_calls = MergeCalls::kNever;  // every call its own launch (merges: the Merge tests)
  Make(o);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {8, 8, 64}}, 2), c({{16, 64, 64}}, 3);
  HostProblem b2({{32, 64, 256}, {8, 8, 64}}, 4);
  auto batch = [&](HostProblem& mid) { RunBatchAndCheck(a, mid, c); };
  batch(b);  // direct (first sighting)
  EXPECT_EQ(exec_->counters().direct_launches, 3u);
  batch(b);  // captured as one 3-node graph
  EXPECT_EQ(exec_->counters().captures, 1u);
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  batch(b);
  batch(b2);  // only the middle node's bindings changed
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.captures, 1u);
  EXPECT_EQ(k.patches, 1u);
  EXPECT_EQ(k.graph_launches, 3u);
  EXPECT_EQ(k.calls, 12u);
  EXPECT_EQ(backend_->launches(), 3);
}

// A call whose weights are another call's output must not start its weight loads early: its
// node loses the programmatic edge, at capture and when a patch would create the overlap.
TEST_F(ExecutorTest, BatchDropsPdlWhereEarlyReadsMeetAnOutput) {
  ExecutorOptions o;
  o.merge_calls = MergeCalls::kNever;  // every call its own launch
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;  // new bindings patch the one variant
  Make(o);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  const std::vector<GemmCall> plain = SimpleCalls({a.args(), b.args(), c.args()});
  ENCORE_ASSERT_OK(exec_->RunBatch(plain, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  // c's weights now live in a's output (16 KB; c reads 2 KB of weights).
  std::vector<gemm::GroupProblem> cg(c.args().groups.begin(), c.args().groups.end());
  cg[0].b = a.args().groups[0].c;
  const std::vector<GemmCall> aliased =
      SimpleCalls({a.args(), b.args(), gemm::GroupedGemmArguments{cg}});
  ENCORE_ASSERT_OK(exec_->RunBatch(aliased, FakeStream(1)));
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.captures, 2u);  // the variant was dropped, not patched
  EXPECT_EQ(k.patches, 0u);
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, false}));
  // The same at the first capture of a structure, and for dynamic M and weight scales.
  exec_->Clear();
  cg[0].b = c.args().groups[0].b;
  cg[0].sfb = b.args().groups[0].c;
  const std::vector<GemmCall> scales = SimpleCalls({b.args(), gemm::GroupedGemmArguments{cg}});
  ENCORE_ASSERT_OK(exec_->RunBatch(scales, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, false}));
}

// Plans with a pre-kernel (the unfused token pre-pass) get no programmatic edge in front of them
// unless they prefer PDL (unpadded small pre-passes: measured slower, run 51); a variant captured
// with an edge is re-created, not patched, when a call's plan gains one.
TEST_F(ExecutorTest, BatchPutsNoPdlEdgeInFrontOfAPreKernel) {
  ExecutorOptions o;
  o.merge_calls = MergeCalls::kNever;  // every call its own launch
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;
  Make(o);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  const std::vector<GemmCall> calls = SimpleCalls({a.args(), b.args(), c.args()});
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  static const int kPreTag = 0;
  gemm_.SetPreKernel(&kPreTag);
  HostProblem c2({{16, 64, 64}}, 4);  // same structure, new binding: would patch node 2
  const std::vector<GemmCall> rebound = SimpleCalls({a.args(), b.args(), c2.args()});
  ENCORE_ASSERT_OK(exec_->RunBatch(rebound, FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 2u);  // re-created
  EXPECT_EQ(exec_->counters().patches, 0u);
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, false, false}));
  // A pre-kernel plan that prefers PDL (a padded or large token pre-pass) takes the edge.
  gemm_.SetPreKernel(&kPreTag, /*prefers_pdl=*/true);
  exec_->Clear();
  ENCORE_ASSERT_OK(exec_->RunBatch(rebound, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  gemm_.SetPreKernel(nullptr);
}

// Behind a programmatic edge, a call's token pre-pass converts before its wait (on alternate
// workspace halves) unless its tokens are an output of the graph; a variant whose patch would
// create that overlap is re-created without it, and ExecutorOptions::early_prepass turns it off.
TEST_F(ExecutorTest, BatchPrePassesReadEarlyWhereNoOutputIsTheirTokens) {
  ExecutorOptions o;
  o.merge_calls = MergeCalls::kNever;  // every call its own launch
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;
  Make(o);
  static const int kPreTag = 0;
  gemm_.SetPreKernel(&kPreTag, /*prefers_pdl=*/true);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  const std::vector<GemmCall> calls = SimpleCalls({a.args(), b.args(), c.args()});
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(gemm_.early_prepares(), 2);  // nodes 1 and 2; node 0 has no edge
  EXPECT_EQ(exec_->counters().early_prepass_nodes, 2u);
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));  // a hit
  EXPECT_EQ(gemm_.early_prepares(), 2);
  // c's tokens now live in a's output: its node would read them early, so the variant is
  // re-created, with node 2 behind its edge (its weights are no output) but not early.
  std::vector<gemm::GroupProblem> cg(c.args().groups.begin(), c.args().groups.end());
  cg[0].a = a.args().groups[0].c;
  const std::vector<GemmCall> aliased =
      SimpleCalls({a.args(), b.args(), gemm::GroupedGemmArguments{cg}});
  ENCORE_ASSERT_OK(exec_->RunBatch(aliased, FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 2u);
  EXPECT_EQ(exec_->counters().patches, 0u);
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(gemm_.early_prepares(), 3);  // node 1 again
  EXPECT_EQ(exec_->counters().early_prepass_nodes, 3u);
  // A patch that keeps the tokens apart re-prepares the node early.
  HostProblem b2({{32, 64, 256}}, 4);
  const std::vector<GemmCall> rebound =
      SimpleCalls({a.args(), b2.args(), gemm::GroupedGemmArguments{cg}});
  ENCORE_ASSERT_OK(exec_->RunBatch(rebound, FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 2u);
  EXPECT_EQ(exec_->counters().patches, 1u);
  EXPECT_EQ(gemm_.early_prepares(), 4);
  EXPECT_EQ(exec_->counters().early_prepass_nodes, 4u);
  // Off by option.
  o.early_prepass = false;
  Make(o);
  const int64_t before = gemm_.early_prepares();
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(gemm_.early_prepares(), before);
  EXPECT_EQ(exec_->counters().early_prepass_nodes, 0u);
  gemm_.SetPreKernel(nullptr);
}

// An early pre-pass behind launch u + 1 writes its workspace half while launch u runs: safe only
// while launch u keeps off that half. With dynamic M a new capacity in the same M bucket can make
// launch u's tokens outgrow its half (half -1, the whole workspace); such a patch re-creates the
// graph, whose launch u + 1 then converts after its wait. (Before session 32 the patch was taken:
// pre-pass u + 1 wrote into the tokens GEMM u still read.)
TEST_F(ExecutorTest, PatchThatMovesATokenHalfRecreatesTheGraph) {
  ExecutorOptions o;
  o.merge_calls = MergeCalls::kNever;
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;  // a new capacity patches the only variant
  o.m_bucket = {MBucketMode::kPowerOfTwo, 0};
  Make(o);
  static const int kPreTag = 0;
  gemm_.SetPreKernel(&kPreTag, /*prefers_pdl=*/true);
  gemm_.SetTokenHalfLimit(48 * 128);  // a capacity of 40 rows at k = 128 fits a half, 60 not
  HostProblem a({{40, 128, 128}}, 1, /*capacity_rows=*/{64}), b({{32, 64, 128}}, 2);
  a.set_device_m({1 << 20});
  const auto calls = [&] { return SimpleCalls({a.args(), b.args()}); };
  ENCORE_ASSERT_OK(exec_->RunBatch(calls(), FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true}));
  EXPECT_EQ(gemm_.early_prepares(), 1);  // launch 1, a's launch on half 0
  ENCORE_ASSERT_OK(exec_->RunBatch(calls(), FakeStream(1)));  // a hit
  EXPECT_EQ(exec_->counters().captures, 1u);
  // Capacity 44 (bucket 64 again, still fits its half): patched.
  a.set_m(0, 44);
  ENCORE_ASSERT_OK(exec_->RunBatch(calls(), FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 1u);
  EXPECT_EQ(exec_->counters().patches, 1u);
  // Capacity 60: a's tokens no longer fit half 0; b's early pre-pass would write into them.
  a.set_m(0, 60);
  a.ClearC();
  b.ClearC();
  ENCORE_ASSERT_OK(exec_->RunBatch(calls(), FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 2u) << "re-created";
  EXPECT_EQ(exec_->counters().patches, 1u);
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true}));
  EXPECT_EQ(gemm_.early_prepares(), 1) << "launch 1 converts after its wait now";
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));
  gemm_.SetPreKernel(nullptr);
  gemm_.SetTokenHalfLimit(INT64_MAX);
}

// A patch whose second launch fails to prepare leaves the variant with its first launch's new
// bindings and its second's old ones, a mix never checked against the PDL edges' early reads: the
// variant is dropped, and that mix, when it comes, is captured afresh.
TEST_F(ExecutorTest, PartlyPatchedVariantIsDropped) {
  ExecutorOptions o;
  o.merge_calls = MergeCalls::kNever;
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;
  Make(o);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), a2({{64, 128, 128}}, 3);
  ENCORE_ASSERT_OK(exec_->RunBatch(SimpleCalls({a.args(), b.args()}), FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 1u);
  // Call 1 with a misaligned token pointer: launch 0 is patched to a2, launch 1 fails.
  std::vector<gemm::GroupProblem> bad(b.args().groups.begin(), b.args().groups.end());
  bad[0].a = static_cast<const uint8_t*>(bad[0].a) + 8;
  const absl::Status s =
      exec_->RunBatch(SimpleCalls({a2.args(), gemm::GroupedGemmArguments{bad}}), FakeStream(1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(exec_->counters().patches, 1u);
  EXPECT_EQ(exec_->counters().live_execs, 0u) << "the partly patched variant is gone";
  a2.ClearC();
  b.ClearC();
  ENCORE_ASSERT_OK(exec_->RunBatch(SimpleCalls({a2.args(), b.args()}), FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, 2u) << "the mix is captured afresh";
  EXPECT_TRUE(a2.Check(0));
  EXPECT_TRUE(b.Check(0));
}

TEST_F(ExecutorTest, PdlCanBeDisabled) {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.use_pdl = false;
  Make(o);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2);
  const std::vector<GemmCall> calls = SimpleCalls({a.args(), b.args()});
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, false}));
}

TEST_F(ExecutorTest, BatchIsValidatedBeforeAnythingRuns) {
  Make();
  HostProblem a({{64, 128, 128}}, 1);
  a.ClearC();
  const GemmCall calls[] = {{a.args(), KernelKind::kSimple}, {gemm::GroupedGemmArguments{}}};
  EXPECT_EQ(exec_->RunBatch(calls, FakeStream(1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gemm_.launches(), 0);
  ExecutorOptions o;
  o.max_batch_calls = 1;
  Make(o);
  const GemmCall two[] = {{a.args()}, {a.args()}};
  EXPECT_EQ(exec_->RunBatch(two, FakeStream(1)).code(), absl::StatusCode::kInvalidArgument);
  ENCORE_EXPECT_OK(exec_->RunBatch({}, FakeStream(1)));
}

TEST_F(ExecutorTest, BatchAndSingleCallsShareTheCacheButNotEntries) {
  Make();
  HostProblem a({{64, 128, 128}}, 1);
  const std::vector<GemmCall> one = SimpleCalls({a.args()});
  RunAndCheck(a);
  ENCORE_ASSERT_OK(exec_->RunBatch(one, FakeStream(1)));  // same key words: a batch of one
  EXPECT_EQ(exec_->counters().captures, 1u) << "a batch of one is the single-call structure";
}

// The hit memo (executor.h) serves a call whose arguments equal a live single-call variant's
// without building a signature; whatever it launches is what the full lookup would launch.
TEST_F(ExecutorTest, HitMemoServesRepeatedCallsWithoutASignature) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 4;
  Make(o);
  auto ps = BufferSets(3, kShape);
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 3, 3));  // warm-up: one variant per set
  HostProblem a({{64, 128, 128}}, 9);
  for (int i = 0; i < 3; ++i) {  // the same bindings under two kinds: two structures
    RunAndCheck(a, KernelKind::kSimple);
    RunAndCheck(a, KernelKind::kPersistent);
  }
  const ExecutorCounters warm = exec_->counters();
  ASSERT_NO_FATAL_FAILURE(Rotate(ps, 10, 5));
  for (int i = 0; i < 5; ++i) {
    RunAndCheck(a, KernelKind::kSimple);  // outputs differ by kind: a wrong serve fails Check
    RunAndCheck(a, KernelKind::kPersistent);
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.hits - warm.hits, 40u);
  EXPECT_EQ(c.fast_hits - warm.fast_hits, 40u) << "every steady-state hit from the memo";
  EXPECT_EQ(c.graph_launches - warm.graph_launches, 40u);
  EXPECT_EQ(c.patches, warm.patches);
  EXPECT_EQ(c.captures, warm.captures);
}

// Two calls with one memo key (the same first and last groups, another middle group) are both
// memoized in one set, each found by its exact compare. (A patched exec is never served for the
// bindings it had: MaxBindingsOneIsOneExecPatchedPerChange.)
TEST_F(ExecutorTest, HitMemoNeverServesAForeignVariant) {
  Make();
  const std::vector<Dims> shape = {{16, 64, 64}, {24, 64, 64}, {8, 64, 64}};
  HostProblem p(shape, 1), q(shape, 2);
  const gemm::GroupedGemmArguments x = p.args();
  std::vector<gemm::GroupProblem> mixed(x.groups.begin(), x.groups.end());
  mixed[1] = q.args().groups[1];
  const gemm::GroupedGemmArguments y{absl::MakeConstSpan(mixed), nullptr};
  ExecutorCounters warm;
  for (int i = 0; i < 6; ++i) {
    if (i == 3) {  // warm: a variant each (patches on the way there are by design)
      warm = exec_->counters();
      ASSERT_EQ(warm.live_execs, 2u);
    }
    const uint64_t fast = exec_->counters().fast_hits;
    p.ClearC();
    q.ClearC();
    ENCORE_ASSERT_OK(exec_->Run(x, FakeStream(1), KernelKind::kSimple));
    EXPECT_TRUE(p.Check(0));
    EXPECT_TRUE(q.Untouched(1));
    p.ClearC();
    ENCORE_ASSERT_OK(exec_->Run(y, FakeStream(1), KernelKind::kSimple));
    EXPECT_TRUE(p.CheckGroup(0, 0));
    EXPECT_TRUE(p.Untouched(1));
    EXPECT_TRUE(q.CheckGroup(1, 0));
    EXPECT_TRUE(p.CheckGroup(2, 0));
    if (i >= 3) {
      EXPECT_EQ(exec_->counters().fast_hits, fast + 2);
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.patches, warm.patches);
  EXPECT_EQ(c.captures, warm.captures);
  EXPECT_EQ(c.hits - warm.hits, 6u);
  // Cleared graphs leave no memo behind: the next call counts again, directly.
  exec_->Clear();
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kBelowMinRepeats);
  EXPECT_EQ(exec_->counters().fast_hits, c.fast_hits);
}

// The memo key reads only the first and last groups (and the last one's M, A and C); the compare
// (Variant::HoldsCalls) reads every field of every call. A call that differs
// from a memoized variant's in any single field past the key -- a middle group's pointer or exact
// M, the kind, the stream -- is never a fast hit of that variant.
TEST_F(ExecutorTest, HitMemoComparesEveryField) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 16;
  Make(o);
  const std::vector<Dims> shape = {{16, 64, 64}, {24, 64, 64}, {8, 64, 64}};
  HostProblem p(shape, 1), q(shape, 2);
  const gemm::GroupedGemmArguments x = p.args();
  for (int i = 0; i < 4; ++i) ENCORE_ASSERT_OK(exec_->Run(x, FakeStream(1), KernelKind::kSimple));
  const uint64_t warm_fast = exec_->counters().fast_hits;
  ENCORE_ASSERT_OK(exec_->Run(x, FakeStream(1), KernelKind::kSimple));
  ASSERT_EQ(exec_->counters().fast_hits, warm_fast + 1) << "x is memoized";
  const gemm::GroupProblem& other = q.args().groups[1];
  using Edit = void (*)(gemm::GroupProblem&, const gemm::GroupProblem&);
  const std::vector<std::pair<const char*, Edit>> edits = {
      {"a", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.a = o.a; }},
      {"b", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.b = o.b; }},
      {"sfa", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.sfa = o.sfa; }},
      {"sfb", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.sfb = o.sfb; }},
      {"c", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.c = o.c; }},
      {"m", [](gemm::GroupProblem& g, const gemm::GroupProblem&) { g.m -= 1; }},
  };
  // Before each edited call, x is served from the memo again (its variant holds x's bindings:
  // an edited call's new bindings are patched into it, and x's patch them back).
  const auto x_from_memo = [&] {
    ENCORE_ASSERT_OK(exec_->Run(x, FakeStream(1), KernelKind::kSimple));
    const uint64_t fast = exec_->counters().fast_hits;
    p.ClearC();
    ENCORE_ASSERT_OK(exec_->Run(x, FakeStream(1), KernelKind::kSimple));
    ASSERT_EQ(exec_->counters().fast_hits, fast + 1);
    EXPECT_TRUE(p.Check(0));
  };
  for (const auto& [field, edit] : edits) {
    ASSERT_NO_FATAL_FAILURE(x_from_memo());
    std::vector<gemm::GroupProblem> groups(x.groups.begin(), x.groups.end());
    edit(groups[1], other);
    const gemm::GroupedGemmArguments y{absl::MakeConstSpan(groups), nullptr};
    const uint64_t before = exec_->counters().fast_hits;
    ENCORE_ASSERT_OK(exec_->Run(y, FakeStream(1), KernelKind::kSimple));
    EXPECT_EQ(exec_->counters().fast_hits, before) << "middle group's " << field;
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_NO_FATAL_FAILURE(x_from_memo());
    const uint64_t before = exec_->counters().fast_hits;
    ENCORE_ASSERT_OK(exec_->Run(x, FakeStream(i == 0 ? 2 : 1),
                                i == 0 ? KernelKind::kSimple : KernelKind::kPersistent));
    EXPECT_EQ(exec_->counters().fast_hits, before) << (i == 0 ? "another stream" : "another kind");
  }
}

// Recurring batches and a recorder's period launches are served from the hit memo too; a batch
// with one call's bindings changed is not (it is patched), and after the patch the memo serves
// the new bindings.
TEST_F(ExecutorTest, HitMemoServesRecurringBatchesAndSequences) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;  // a changed binding patches the one exec
  Make(o);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {8, 8, 64}}, 2), c({{16, 64, 64}}, 3);
  HostProblem b2({{32, 64, 256}, {8, 8, 64}}, 4);
  auto batch = [&](HostProblem& mid) { RunBatchAndCheck(a, mid, c); };
  batch(b);  // direct
  batch(b);  // captured
  ASSERT_EQ(exec_->counters().captures, 1u);
  ASSERT_EQ(exec_->counters().fast_hits, 0u);
  for (int i = 0; i < 3; ++i) batch(b);
  EXPECT_EQ(exec_->counters().fast_hits, 9u) << "three batches of three calls";
  batch(b2);  // the middle call's bindings changed: a patch, not a fast hit
  ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.patches, 1u);
  EXPECT_EQ(k.fast_hits, 9u);
  batch(b2);
  batch(b);  // patched back: the memo holds the exec under b2's key only
  k = exec_->counters();
  EXPECT_EQ(k.fast_hits, 12u);
  EXPECT_EQ(k.patches, 2u);
  EXPECT_EQ(k.captures, 1u);

  auto rec = SequenceRecorder::Create(exec_.get(), FakeStream(2));
  ASSERT_TRUE(rec.ok());
  auto step = [&] {
    a.ClearC();
    b.ClearC();
    c.ClearC();
    ENCORE_ASSERT_OK((*rec)->Run(a.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK((*rec)->Run(b.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK((*rec)->Run(c.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK((*rec)->EndStep());
    EXPECT_TRUE(a.Check(0));
    EXPECT_TRUE(b.Check(0));
    EXPECT_TRUE(c.Check(0));
  };
  for (int i = 0; i < 6; ++i) step();
  ASSERT_EQ((*rec)->counters().period, 3);
  const uint64_t before = exec_->counters().fast_hits;
  const uint64_t launches = (*rec)->counters().period_launches;
  for (int i = 0; i < 4; ++i) step();
  EXPECT_EQ((*rec)->counters().period_launches - launches, 4u);
  EXPECT_EQ(exec_->counters().fast_hits - before, 12u) << "every period launch from the memo";
}

TEST_F(ExecutorTest, SteadyStateHitDoesNotAllocate) {
  Make();
  HostProblem p(kShape, 1), q(kShape, 2);
  RunAndCheck(p);
  RunAndCheck(p);
  RunAndCheck(q);
  RunAndCheck(p);  // warm: both bindings seen, scratch grown
  const gemm::GroupedGemmArguments args = p.args();
  g_allocations = 0;
  g_count_allocations = true;
  for (int i = 0; i < 100; ++i) {
    if (!exec_->Run(args, FakeStream(1), KernelKind::kSimple).ok()) break;
  }
  g_count_allocations = false;
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_EQ(exec_->counters().hits, 102u);
}

TEST_F(ExecutorTest, SteadyStateVariantHitDoesNotAllocate) {
  Make();
  HostProblem p(kShape, 1), q(kShape, 2), r(kShape, 3);
  for (int i = 0; i < 4; ++i) {  // warm: one variant per binding set
    RunAndCheck(p);
    RunAndCheck(q);
    RunAndCheck(r);
  }
  ASSERT_EQ(exec_->counters().live_execs, 3u);
  const ExecutorCounters warm = exec_->counters();
  const gemm::GroupedGemmArguments args[] = {p.args(), q.args(), r.args()};
  g_allocations = 0;
  g_count_allocations = true;
  for (int i = 0; i < 99; ++i) {
    if (!exec_->Run(args[i % 3], FakeStream(1), KernelKind::kSimple).ok()) break;
  }
  g_count_allocations = false;
  EXPECT_EQ(g_allocations.load(), 0);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.hits - warm.hits, 99u);
  EXPECT_EQ(c.patches, warm.patches);
}

TEST_F(ExecutorTest, SteadyStateBatchFlushAndRecorderReplayDoNotAllocate) {
  Make();
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {8, 8, 64}}, 2), c({{16, 64, 64}}, 3);
  GemmBatch batch(exec_.get());
  auto flush = [&] {
    bool ok = batch.Add(a.args()).ok() && batch.Add(b.args()).ok() && batch.Add(c.args()).ok();
    return ok && batch.Flush(FakeStream(1)).ok();
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(flush());
  g_allocations = 0;
  g_count_allocations = true;
  for (int i = 0; i < 50; ++i) flush();
  g_count_allocations = false;
  EXPECT_EQ(g_allocations.load(), 0) << "batch flush";

  auto rec = SequenceRecorder::Create(exec_.get(), FakeStream(2));
  ASSERT_TRUE(rec.ok());
  auto step = [&] {
    bool ok =
        (*rec)->Run(a.args()).ok() && (*rec)->Run(b.args()).ok() && (*rec)->Run(c.args()).ok();
    return ok && (*rec)->EndStep().ok();
  };
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(step());
  ASSERT_EQ((*rec)->counters().period, 3);
  g_allocations = 0;
  g_count_allocations = true;
  for (int i = 0; i < 50; ++i) step();
  g_count_allocations = false;
  EXPECT_EQ(g_allocations.load(), 0) << "recorder replay";
  EXPECT_GE((*rec)->counters().period_launches, 50u);
}

TEST_F(ExecutorTest, EightThreadsConcurrently) {
  ExecutorOptions o;
  o.min_repeats = 2;
  o.max_entries = 6;  // fewer than the structures in play: eviction races too
  Make(o);
  constexpr int kThreads = 8;
  constexpr int kIters = 150;
  std::vector<std::unique_ptr<HostProblem>> shared_a, shared_b, own;
  for (int t = 0; t < kThreads; ++t) {
    // Same structure in every thread with different buffers: patches under contention.
    shared_a.push_back(std::make_unique<HostProblem>(std::vector<Dims>{{32, 64, 128}}, 100 + t));
    shared_b.push_back(std::make_unique<HostProblem>(std::vector<Dims>{{32, 64, 128}}, 200 + t));
    own.push_back(std::make_unique<HostProblem>(std::vector<Dims>{{8 + t, 64, 64}}, 300 + t));
  }
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::thread reader([&] {  // counters readable at any time
    uint64_t last_calls = 0;
    while (!done.load()) {
      const ExecutorCounters c = exec_->counters();
      if (c.calls < last_calls) failures.fetch_add(1);
      last_calls = c.calls;
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        HostProblem& p = i % 3 == 0 ? *shared_a[t] : (i % 3 == 1 ? *shared_b[t] : *own[t]);
        p.ClearC();
        if (!exec_->Run(p.args(), FakeStream(t + 1), KernelKind::kSimple).ok() || !p.Check(0)) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.calls, static_cast<uint64_t>(kThreads * kIters));
  EXPECT_EQ(c.direct_launches + c.graph_launches, c.calls);
  EXPECT_LE(c.live_execs, 6u);
  EXPECT_GT(c.patches, 0u);
}

TEST_F(ExecutorTest, ClearDropsEverything) {
  Make();
  HostProblem p(kShape, 1);
  RunAndCheck(p);
  RunAndCheck(p);
  exec_->Clear();
  EXPECT_EQ(exec_->counters().live_execs, 0u);
  EXPECT_EQ(backend_->live_graphs(), 0);
  RunAndCheck(p);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kBelowMinRepeats);
}

// Merged launches (ExecutorOptions::merge_calls). The host fake computes a merged launch group by
// group, so values cannot tell a merge from separate launches: the launches' count (the host
// backend's last PDL vector has one entry per launch) and the counters do.
// `n` calls of one group of `d` each, with distinct buffers (seeds seed, seed + 1, ...) that
// `owners` keeps.
std::vector<GemmCall> DistinctCalls(int n, Dims d, uint32_t seed,
                                    std::vector<std::unique_ptr<HostProblem>>* owners) {
  std::vector<GemmCall> calls;
  for (int i = 0; i < n; ++i) {
    owners->push_back(std::make_unique<HostProblem>(std::vector<Dims>{d}, seed + i));
    calls.push_back(GemmCall{owners->back()->args(), KernelKind::kSimple});
  }
  return calls;
}

ExecutorOptions MergeOptions() {
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_bindings_per_structure = 1;  // new bindings patch the one variant
  return o;
}

TEST_F(ExecutorTest, MergesIndependentSmallCallsIntoOneLaunch) {
  Make(MergeOptions());
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {8, 8, 64}}, 2), c({{16, 64, 64}}, 3);
  for (int round = 0; round < 2; ++round) {  // captured, then a hit
    RunBatchAndCheck(a, b, c);
    EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false})) << round;
  }
  ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.captures, 1u);
  EXPECT_EQ(k.graph_launches, 2u);
  EXPECT_EQ(k.merged_launches, 1u);
  EXPECT_EQ(k.merged_calls, 3u);
  // New bindings for the middle call patch the one merged launch (its node prepared again with
  // all three calls' groups).
  HostProblem b2({{32, 64, 256}, {8, 8, 64}}, 4);
  RunBatchAndCheck(a, b2, c);
  k = exec_->counters();
  EXPECT_EQ(k.captures, 1u);
  EXPECT_EQ(k.patches, 1u);
  EXPECT_EQ(k.merged_launches, 2u);
  EXPECT_EQ(k.merged_calls, 6u);
  // kNever keeps three launches.
  ExecutorOptions o = MergeOptions();
  o.merge_calls = MergeCalls::kNever;
  Make(o);
  RunBatchAndCheck(a, b, c);
  EXPECT_EQ(backend_->last_pdl(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(exec_->counters().merged_launches, 0u);
}

TEST_F(ExecutorTest, MergesNoCallThatReadsOrWritesAnotherOnesOutput) {
  Make(MergeOptions());
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  const gemm::GroupProblem a0 = a.args().groups[0];
  // Each alias makes c meet a's output; a and b still merge, c runs after them.
  struct Alias {
    const char* name;
    void (*apply)(gemm::GroupProblem&, const gemm::GroupProblem&);
  };
  const Alias aliases[] = {
      {"tokens", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.a = o.c; }},
      {"token scales", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.sfa = o.c; }},
      {"weights", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.b = o.c; }},
      {"weight scales", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) { g.sfb = o.c; }},
      {"output", [](gemm::GroupProblem& g, const gemm::GroupProblem& o) {
         g.c = static_cast<uint16_t*>(o.c) + 128;  // inside a's C (8192 elements)
       }},
  };
  for (const Alias& al : aliases) {
    gemm::GroupProblem cg = c.args().groups[0];
    al.apply(cg, a0);
    const std::vector<GemmCall> calls =
        SimpleCalls({a.args(), b.args(), gemm::GroupedGemmArguments{absl::MakeConstSpan(&cg, 1)}});
    exec_->Clear();
    ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
    EXPECT_EQ(backend_->last_pdl().size(), 2u) << al.name;
  }
  // An alias within one call (a call reading its own output) is malformed: gemm::Validate
  // rejects it (the runner's CanImplement), and the batch launches nothing.
  gemm::GroupProblem bg = b.args().groups[0];
  bg.a = bg.c;
  const std::vector<GemmCall> self =
      SimpleCalls({a.args(), gemm::GroupedGemmArguments{absl::MakeConstSpan(&bg, 1)}, c.args()});
  exec_->Clear();
  const int64_t graph_launches = backend_->launches(), kernels = gemm_.launches();
  const absl::Status self_status = exec_->RunBatch(self, FakeStream(1));
  EXPECT_EQ(self_status.code(), absl::StatusCode::kInvalidArgument) << self_status;
  EXPECT_TRUE(absl::StrContains(self_status.message(), "group 0: c overlaps the a of group 0"))
      << self_status;
  EXPECT_EQ(backend_->launches(), graph_launches);
  EXPECT_EQ(gemm_.launches(), kernels);
  // A patch that makes merged calls meet re-creates the graph with them apart.
  exec_->Clear();
  const std::vector<GemmCall> plain = SimpleCalls({a.args(), b.args(), c.args()});
  ENCORE_ASSERT_OK(exec_->RunBatch(plain, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl().size(), 1u);
  gemm::GroupProblem cg = c.args().groups[0];
  cg.a = a0.c;
  const std::vector<GemmCall> aliased =
      SimpleCalls({a.args(), b.args(), gemm::GroupedGemmArguments{absl::MakeConstSpan(&cg, 1)}});
  const uint64_t captures = exec_->counters().captures;
  ENCORE_ASSERT_OK(exec_->RunBatch(aliased, FakeStream(1)));
  EXPECT_EQ(exec_->counters().captures, captures + 1);
  EXPECT_EQ(backend_->last_pdl().size(), 2u);
}

TEST_F(ExecutorTest, MergesOnlySmallStaticCallsOfOneKindWithinTheLaunchLimits) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  auto launches = [&](const std::vector<GemmCall>& calls) {
    exec_->Clear();
    ENCORE_EXPECT_OK(exec_->RunBatch(calls, FakeStream(1)));
    return backend_->last_pdl().size();
  };
  // Work: a is 1·1·1 = 1 block of 128³, b 1·1·2 = 2, c 1; the fake has 132 SMs.
  ExecutorOptions o = MergeOptions();
  o.merge_max_kblocks_per_sm = 0;  // no call is small enough
  Make(o);
  EXPECT_EQ(launches(SimpleCalls({a.args(), b.args(), c.args()})), 3u);
  HostProblem empty1({{0, 64, 64}}, 7), empty2({{0, 64, 64}}, 8);  // no work at all: still none
  EXPECT_EQ(launches(SimpleCalls({empty1.args(), empty2.args()})), 2u);
  // A kind change ends a merge.
  Make(MergeOptions());
  std::vector<GemmCall> kinds = SimpleCalls({a.args(), b.args(), c.args()});
  kinds[2].kind = KernelKind::kPersistent;
  EXPECT_EQ(launches(kinds), 2u);
  // Dynamic M never merges.
  HostProblem d({{16, 64, 64}}, 4);
  d.set_device_m({8});
  EXPECT_EQ(launches(SimpleCalls({a.args(), d.args(), c.args()})), 3u);
  // The work of a launch: a limit of 1 block per SM (132 blocks) holds 44 calls of 3 blocks.
  o = MergeOptions();
  o.merge_max_launch_kblocks_per_sm = 1;
  Make(o);
  std::vector<std::unique_ptr<HostProblem>> owners;  // (distinct buffers: the calls must not meet)
  // 2 launches as the greedy cut (44 + 6) has, of 25 calls each.
  EXPECT_EQ(launches(DistinctCalls(50, Dims{16, 64, 384}, 100, &owners)), 2u);
  EXPECT_EQ(backend_->last_grid_y(), (std::vector<unsigned>{25, 25}));
  o.merge_max_launch_kblocks_per_sm = 0;  // no launch holds two calls
  Make(o);
  EXPECT_EQ(launches(SimpleCalls({a.args(), b.args(), c.args()})), 3u);
  // The token bytes of a launch: a's are 64·128·2 = 16 KB, b's 16 KB, c's 2 KB.
  o = MergeOptions();
  o.merge_max_token_bytes = 32 * 1024;
  Make(o);
  EXPECT_EQ(launches(SimpleCalls({a.args(), b.args(), c.args()})), 2u);  // {a, b}, {c}
  // Within the limits, a run is cut into launches of near-equal call counts: 15 calls of 16 KB of
  // tokens under a 96 KB limit are 5 + 5 + 5, not 6 + 6 + 3.
  o = MergeOptions();
  o.merge_max_token_bytes = 96 * 1024;
  Make(o);
  EXPECT_EQ(launches(DistinctCalls(15, Dims{64, 64, 128}, 200, &owners)), 3u);
  EXPECT_EQ(backend_->last_grid_y(), (std::vector<unsigned>{5, 5, 5}));
  // A run (checked whole for independence) holds at most 4 · kMaxGroups groups: 260 one-group
  // calls are a run of 256 cut 4 × 64, then one of 4.
  o = MergeOptions();
  o.max_batch_calls = 260;
  Make(o);
  EXPECT_EQ(launches(DistinctCalls(260, Dims{8, 8, 64}, 300, &owners)), 5u);
  EXPECT_EQ(backend_->last_grid_y(), (std::vector<unsigned>{64, 64, 64, 64, 4}));
  // At most gemm::kMaxGroups groups a launch.
  Make(MergeOptions());
  std::vector<Dims> forty(40, Dims{8, 8, 64});
  HostProblem e(forty, 5), f(forty, 6);
  EXPECT_EQ(launches(SimpleCalls({e.args(), f.args()})), 2u);
}

TEST_F(ExecutorTest, SameSumsPlansAMergedAutoLaunchPersistentWhereAutoWouldSplitK) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  // Each call alone (Σ m·n ≤ 8192) plans simple; the three merged (11264) would plan stream-K.
  gemm_.SetAutoStreamKFrom(10000);
  std::vector<GemmCall> calls = SimpleCalls({a.args(), b.args(), c.args()});
  for (GemmCall& call : calls) call.kind = KernelKind::kAuto;
  Make(MergeOptions());
  RunMergedAndCheck(calls, {&a, &b, &c}, 0);  // simple and persistent sums (stream-K's differ)
  ExecutorOptions o = MergeOptions();
  o.merge_calls = MergeCalls::kAlways;
  Make(o);
  RunMergedAndCheck(calls, {&a, &b, &c}, 2);  // planned as kAuto plans it: stream-K
}

TEST_F(ExecutorTest, SameSumsMergesNoStreamKCall) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2), c({{16, 64, 64}}, 3);
  std::vector<GemmCall> calls = SimpleCalls({a.args(), b.args(), c.args()});
  for (GemmCall& call : calls) call.kind = KernelKind::kStreamK;
  Make(MergeOptions());  // kSameSums, the default
  ENCORE_ASSERT_OK(exec_->RunBatch(calls, FakeStream(1)));
  EXPECT_EQ(backend_->last_pdl().size(), 3u);
  ExecutorOptions o = MergeOptions();
  o.merge_calls = MergeCalls::kAlways;
  Make(o);
  RunMergedAndCheck(calls, {&a, &b, &c}, 2);
}

TEST(FallbackReasonTest, EveryReasonHasAName) {
  for (int r = 0; r <= static_cast<int>(FallbackReason::kLaunchFailed); ++r) {
    EXPECT_STRNE(FallbackReasonName(static_cast<FallbackReason>(r)), "unknown");
  }
}

}  // namespace
}  // namespace encore::graph_cache

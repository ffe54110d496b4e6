// CPU tests of GemmBatch (host-mode FakeGemm + HostGraphBackend).
#include "graph_cache/batch.h"

#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/graph_cache/fake_gemm.h"
#include "tests/graph_cache/host_backend.h"
#include "tests/graph_cache/host_problem.h"
#include "tests/test_util.h"

namespace encore::graph_cache {
namespace {

using gemm::KernelKind;
using testing::Dims;
using testing::FakeGemm;
using testing::FakeStream;
using testing::HostGraphBackend;
using testing::HostProblem;

class BatchTest : public ::testing::Test {
 protected:
  void SetUp() override { Make(ExecutorOptions{}.max_bindings_per_structure); }
  void Make(int max_bindings_per_structure) {
    auto backend = std::make_unique<HostGraphBackend>();
    backend_ = backend.get();
    ExecutorOptions o;
    o.max_batch_calls = 4;
    o.max_bindings_per_structure = max_bindings_per_structure;
    auto e = GraphExecutor::CreateWithBackend(&gemm_, std::move(backend), o);
    ASSERT_TRUE(e.ok()) << e.status();
    exec_ = *std::move(e);
  }
  FakeGemm gemm_{FakeGemm::Device::kHost};
  HostGraphBackend* backend_ = nullptr;
  std::unique_ptr<GraphExecutor> exec_;
};

TEST_F(BatchTest, FlushRunsAllCallsAsOneRecurringGraph) {
  Make(/*max_bindings_per_structure=*/1);  // one exec: the alternating middle call patches
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2), c({{8, 64, 64}}, 3);
  HostProblem b2({{32, 64, 256}, {16, 8, 64}}, 4);
  GemmBatch batch(exec_.get());
  for (int step = 0; step < 6; ++step) {
    HostProblem& mid = step % 2 == 0 ? b : b2;
    a.ClearC();
    mid.ClearC();
    c.ClearC();
    {
      // The argument arrays are temporaries: the batch copies them on Add.
      std::vector<gemm::GroupProblem> tmp(mid.args().groups.begin(), mid.args().groups.end());
      ENCORE_ASSERT_OK(batch.Add(a.args(), KernelKind::kSimple));
      ENCORE_ASSERT_OK(
          batch.Add(gemm::GroupedGemmArguments{absl::MakeConstSpan(tmp)}, KernelKind::kSimple));
      std::fill(tmp.begin(), tmp.end(), gemm::GroupProblem{});
    }
    ENCORE_ASSERT_OK(batch.Add(c.args(), KernelKind::kPersistent));
    EXPECT_EQ(batch.size(), 3u);
    EXPECT_EQ(a.Check(0), ::testing::AssertionFailure()) << "nothing runs before Flush";
    ENCORE_ASSERT_OK(batch.Flush(FakeStream(1)));
    EXPECT_TRUE(batch.empty());
    EXPECT_TRUE(a.Check(0));
    EXPECT_TRUE(mid.Check(0));
    EXPECT_TRUE(c.Check(1));
  }
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.calls, 18u);
  EXPECT_EQ(k.direct_launches, 3u);
  EXPECT_EQ(k.captures, 1u);
  EXPECT_EQ(k.graph_launches, 5u);
  EXPECT_EQ(k.patches, 4u) << "steps 2..5 swap the middle call's buffers: one node each";
}

TEST_F(BatchTest, AlternatingBindingsGetTheirOwnVariants) {
  // The batch's bindings are all of its calls' bindings: two alternating buffer sets of the
  // middle call become two variants of the one 3-call structure, replayed without patching.
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2), c({{8, 64, 64}}, 3);
  HostProblem b2({{32, 64, 256}, {16, 8, 64}}, 4);
  GemmBatch batch(exec_.get());
  ExecutorCounters warm;
  for (int step = 0; step < 12; ++step) {
    HostProblem& mid = step % 2 == 0 ? b : b2;
    a.ClearC();
    mid.ClearC();
    c.ClearC();
    ENCORE_ASSERT_OK(batch.Add(a.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(batch.Add(mid.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(batch.Add(c.args(), KernelKind::kPersistent));
    ENCORE_ASSERT_OK(batch.Flush(FakeStream(1)));
    EXPECT_TRUE(a.Check(0)) << step;
    EXPECT_TRUE(mid.Check(0)) << step;
    EXPECT_TRUE(c.Check(1)) << step;
    if (step == 5) warm = exec_->counters();
  }
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.live_execs, 2u);
  EXPECT_EQ(k.captures, warm.captures) << "no capture after warm-up";
  EXPECT_EQ(k.patches, warm.patches) << "no patch after warm-up";
  EXPECT_EQ(k.hits - warm.hits, 6u);
  EXPECT_EQ(k.direct_launches, 3u) << "only the first sighting of the structure ran directly";
}

TEST_F(BatchTest, LimitsAndErrors) {
  HostProblem a({{64, 128, 128}}, 1);
  GemmBatch batch(exec_.get());
  for (int i = 0; i < 4; ++i) ENCORE_ASSERT_OK(batch.Add(a.args()));
  EXPECT_EQ(batch.Add(a.args()).code(), absl::StatusCode::kInvalidArgument);
  batch.Clear();
  EXPECT_EQ(batch.Add(gemm::GroupedGemmArguments{}).code(), absl::StatusCode::kInvalidArgument);
  ENCORE_EXPECT_OK(batch.Flush(FakeStream(1)));  // empty: no-op
  EXPECT_EQ(exec_->counters().calls, 0u);
  // A failing flush still empties the batch.
  HostProblem bad({{64, 60, 128}}, 2);
  ENCORE_ASSERT_OK(batch.Add(bad.args()));
  EXPECT_FALSE(batch.Flush(FakeStream(1)).ok());
  EXPECT_TRUE(batch.empty());
}

TEST_F(BatchTest, FlushIntoCallerCaptureRunsDirectly) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}}, 2);
  backend_->SetCapturing(FakeStream(3), true);
  GemmBatch batch(exec_.get());
  for (int i = 0; i < 3; ++i) {
    ENCORE_ASSERT_OK(batch.Add(a.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(batch.Add(b.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(batch.Flush(FakeStream(3)));
  }
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));
  EXPECT_EQ(exec_->counters().captures, 0u);
  EXPECT_EQ(exec_->counters().direct_launches, 6u);
  EXPECT_EQ(exec_->counters().last_fallback, FallbackReason::kCallerCapturing);
}

// Clears every C, adds `calls` (problem, kind) and flushes them on stream 1.
void ClearAddFlush(GemmBatch& batch,
                   std::initializer_list<std::pair<HostProblem*, KernelKind>> calls,
                   std::initializer_list<HostProblem*> all) {
  for (HostProblem* p : all) p->ClearC();
  for (const auto& [p, kind] : calls) ENCORE_ASSERT_OK(batch.Add(p->args(), kind));
  ENCORE_ASSERT_OK(batch.Flush(FakeStream(1)));
}

// A batch equal to its last flush replays that flush's graph without the executor's compare
// (GemmBatch's ticket); every kind of difference must leave that path and run the new calls.
TEST_F(BatchTest, ABatchEqualToItsLastFlushReplaysItAndAnyChangeRunsTheNewCalls) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2), c({{8, 64, 64}}, 3);
  HostProblem b2({{32, 64, 256}, {16, 8, 64}}, 4), d({{16, 64, 128}}, 5);
  const auto all = {&a, &b, &c, &b2, &d};
  GemmBatch batch(exec_.get());
  // Clears every C and flushes a, mid and c (kinds simple, simple, c_kind).
  const auto flush = [&](HostProblem& mid, KernelKind c_kind = KernelKind::kPersistent) {
    ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&mid, KernelKind::kSimple}, {&c, c_kind}},
                  all);
  };
  const auto same = [&] {
    flush(b);
    EXPECT_TRUE(a.Check(0));
    EXPECT_TRUE(b.Check(0));
    EXPECT_TRUE(c.Check(1));
    EXPECT_TRUE(b2.Untouched(0));
    EXPECT_TRUE(d.Untouched(0));
  };
  for (int i = 0; i < 4; ++i) same();  // captured; then replayed on the batch's ticket
  const ExecutorCounters warm = exec_->counters();
  EXPECT_GE(warm.fast_hits, 3u);

  // The middle call's buffers changed (same structure).
  flush(b2);
  EXPECT_TRUE(b2.Check(0));
  EXPECT_TRUE(b.Untouched(0));
  EXPECT_TRUE(b.Untouched(1));
  same();

  // One input of one group moved to another buffer (b2's), each input in turn.
  const gemm::GroupProblem own = b.group(1);
  for (const void* gemm::GroupProblem::*input :
       {&gemm::GroupProblem::a, &gemm::GroupProblem::b, &gemm::GroupProblem::sfa,
        &gemm::GroupProblem::sfb}) {
    b.mutable_group(1).*input = b2.group(1).*input;
    flush(b);
    EXPECT_TRUE(b.Check(0)) << "the graph read the old input";
    b.mutable_group(1) = own;
    same();
  }
  // A group's N or K changed (halved: the buffers stay large enough).
  const gemm::GroupProblem own0 = b.group(0);
  for (int gemm::GroupProblem::*dim : {&gemm::GroupProblem::n, &gemm::GroupProblem::k}) {
    b.mutable_group(0).*dim /= 2;
    flush(b);
    EXPECT_TRUE(b.CheckGroup(0, 0)) << "the graph ran the old shape";
    b.mutable_group(0) = own0;
    same();
  }

  // The last call's kind changed (stream-K: the fake kernel's values differ).
  flush(b, KernelKind::kStreamK);
  EXPECT_TRUE(c.Check(2));
  same();

  // A group's M changed (its C keeps the sentinel past the new M).
  b.set_m(0, 16);
  flush(b);
  EXPECT_TRUE(b.Check(0));
  b.set_m(0, 32);
  same();

  // Dynamic M: the same groups with a device_m array.
  b.set_device_m({20, 16});
  flush(b);
  EXPECT_TRUE(b.Check(0));
  b.set_device_m({});
  same();

  // A prefix of the last flush, then the calls again, then one call more.
  ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));
  EXPECT_TRUE(c.Untouched(0));
  same();
  ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple},
                        {&c, KernelKind::kPersistent}, {&d, KernelKind::kSimple}},
                all);
  EXPECT_TRUE(c.Check(1));
  EXPECT_TRUE(d.Check(0));
  same();
  const uint64_t hits = exec_->counters().fast_hits;
  same();
  EXPECT_EQ(exec_->counters().fast_hits, hits + 3) << "the repeated batch replayed its graph";
}

// The ticket holds only while the executor changed nothing: another batch patching the one
// graph of the structure (max_bindings_per_structure 1) must send the next flush of the first
// batch through the compare, which patches the graph back to its buffers.
TEST_F(BatchTest, AnotherBatchPatchingTheGraphVoidsTheTicket) {
  Make(/*max_bindings_per_structure=*/1);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2);
  HostProblem b2({{32, 64, 256}, {16, 8, 64}}, 4);
  const auto all = {&a, &b, &b2};
  GemmBatch first(exec_.get()), second(exec_.get());
  for (int i = 0; i < 4; ++i) {
    ClearAddFlush(first, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  }
  ClearAddFlush(second, {{&a, KernelKind::kSimple}, {&b2, KernelKind::kSimple}}, all);
  EXPECT_TRUE(b2.Check(0));
  EXPECT_TRUE(b.Untouched(0));
  const uint64_t patches = exec_->counters().patches;
  EXPECT_GE(patches, 1u);
  ClearAddFlush(first, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));
  EXPECT_TRUE(b2.Untouched(0)) << "the first batch replayed the graph patched for the second";
  EXPECT_EQ(exec_->counters().patches, patches + 1);
}

// Clear after an Add that differed from the last flush: the batch's records of that flush were
// overwritten, so equal calls added next must not be taken for that flush.
TEST_F(BatchTest, ClearAfterADifferingAddForgetsTheLastFlush) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2);
  HostProblem b2({{32, 64, 256}, {16, 8, 64}}, 4);
  const auto all = {&a, &b, &b2};
  GemmBatch batch(exec_.get());
  for (int i = 0; i < 4; ++i) {
    ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  }
  ENCORE_ASSERT_OK(batch.Add(a.args(), KernelKind::kSimple));
  ENCORE_ASSERT_OK(batch.Add(b2.args(), KernelKind::kSimple));
  batch.Clear();
  EXPECT_TRUE(batch.empty());
  ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b2, KernelKind::kSimple}}, all);
  EXPECT_TRUE(b2.Check(0));
  EXPECT_TRUE(b.Untouched(0)) << "ran the last flush's graph for other calls";
  // Clear after equal Adds keeps the flush: the next equal batch is still correct.
  ENCORE_ASSERT_OK(batch.Add(a.args(), KernelKind::kSimple));
  batch.Clear();
  ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b2, KernelKind::kSimple}}, all);
  EXPECT_TRUE(b2.Check(0));
  EXPECT_TRUE(b.Untouched(0));
}

// A copy of a batch that repeats its last flush holds its own records: flushed after the original
// is gone and after another batch patched the graph (so the executor compares the calls again),
// it still runs its calls.
TEST_F(BatchTest, ACopyOfARepeatingBatchOutlivesTheOriginal) {
  Make(/*max_bindings_per_structure=*/1);
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2);
  HostProblem b2({{32, 64, 256}, {16, 8, 64}}, 4);
  const auto all = {&a, &b, &b2};
  auto original = std::make_unique<GemmBatch>(exec_.get());
  for (int i = 0; i < 4; ++i) {
    ClearAddFlush(*original, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  }
  GemmBatch copy = *original;
  original.reset();
  // Reuse the freed memory with other bytes.
  std::vector<std::vector<gemm::GroupProblem>> junk;
  const gemm::GroupProblem garbage{&junk, &junk, &junk, &junk, &junk, 1, 8, 64};
  for (int i = 0; i < 16; ++i) junk.emplace_back(64, garbage);
  GemmBatch other(exec_.get());
  ClearAddFlush(other, {{&a, KernelKind::kSimple}, {&b2, KernelKind::kSimple}}, all);
  ClearAddFlush(copy, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));
  EXPECT_TRUE(b2.Untouched(0));
}

// A moved-from batch is empty and has no last flush: cleared or not, it can be used again, and the
// batch it moved into keeps its calls and its last flush (review of the ticket change).
TEST_F(BatchTest, AMovedFromBatchIsEmptyAndReusable) {
  HostProblem a({{64, 128, 128}}, 1), b({{32, 64, 256}, {16, 8, 64}}, 2);
  const auto all = {&a, &b};
  GemmBatch batch(exec_.get());
  for (int i = 0; i < 4; ++i) {
    ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  }
  GemmBatch moved = std::move(batch);
  batch.Clear();  // NOLINT(bugprone-use-after-move): a moved-from batch is specified
  EXPECT_TRUE(batch.empty());
  ClearAddFlush(batch, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));
  ClearAddFlush(moved, {{&a, KernelKind::kSimple}, {&b, KernelKind::kSimple}}, all);
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Check(0));

  // Moved between Add and Flush: the source is empty, the destination flushes the call.
  ENCORE_ASSERT_OK(batch.Add(a.args(), KernelKind::kSimple));
  GemmBatch mid = std::move(batch);
  EXPECT_EQ(batch.size(), 0u);  // NOLINT(bugprone-use-after-move)
  ENCORE_EXPECT_OK(batch.Flush(FakeStream(1)));
  a.ClearC();
  ENCORE_ASSERT_OK(mid.Flush(FakeStream(1)));
  EXPECT_TRUE(a.Check(0));
  // Move assignment over a batch with calls of its own.
  ENCORE_ASSERT_OK(moved.Add(b.args(), KernelKind::kSimple));
  moved = std::move(mid);
  EXPECT_TRUE(moved.empty());
  ClearAddFlush(moved, {{&a, KernelKind::kSimple}}, all);
  EXPECT_TRUE(a.Check(0));
  EXPECT_TRUE(b.Untouched(0));
}

}  // namespace
}  // namespace encore::graph_cache

// CPU tests of GemmBatch (host-mode FakeGemm + HostGraphBackend).
#include "graph_cache/batch.h"

#include <memory>
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

}  // namespace
}  // namespace encore::graph_cache

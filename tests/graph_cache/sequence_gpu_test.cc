// GPU tests of SequenceRecorder in both modes (CUDA backend; runners of GpuRunners()). Each
// starts with ENCORE_SKIP_WITHOUT_GPU(). Every step's outputs must equal direct launches.
#include <memory>
#include <vector>

#include "cuda_utils/raii.h"
#include "graph_cache/sequence.h"
#include "gtest/gtest.h"
#include "tests/graph_cache/gpu_util.h"
#include "tests/test_util.h"

namespace encore::graph_cache {
namespace {

using testing::DeviceProblem;
using testing::Dims;
using testing::DirectReference;
using Outputs = std::vector<std::vector<uint16_t>>;

class SequenceGpuTest : public testing::GpuRunnerTest {
 protected:
  void SetUp() override {
    GpuRunnerTest::SetUp();
    if (SetUpStopped()) return;
    auto e = GraphExecutor::Create(runner_.get());
    ASSERT_TRUE(e.ok()) << e.status();
    exec_ = *std::move(e);
    const std::vector<std::vector<Dims>> shapes = {
        {{128, 128, 256}}, {{64, 64, 128}, {32, 128, 64}}, {{96, 256, 128}}, {{16, 64, 64}}};
    for (size_t i = 0; i < shapes.size(); ++i) {
      auto p = DeviceProblem::Create(shapes[i], 50 + static_cast<uint32_t>(i));
      ASSERT_TRUE(p.ok()) << p.status();
      ps_.push_back(*std::move(p));
      auto ref = DirectReference(*runner_, ps_.back(), stream_.get());
      ASSERT_TRUE(ref.ok()) << ref.status();
      refs_.push_back(*std::move(ref));
    }
  }

  // Runs `steps` steps of the period ps_[0..3] through `rec` and checks every output.
  void RunSteps(SequenceRecorder& rec, int steps, bool end_steps) {
    for (int step = 0; step < steps; ++step) {
      for (auto& p : ps_) ENCORE_ASSERT_OK(p.ClearC(stream_.get()));
      for (auto& p : ps_) ENCORE_ASSERT_OK(rec.Run(p.args()));
      if (end_steps) ENCORE_ASSERT_OK(rec.EndStep());
      for (size_t i = 0; i < ps_.size(); ++i) {
        ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ps_[i].DownloadC(stream_.get()));
        EXPECT_EQ(got, refs_[i]) << "step " << step << " call " << i;
      }
    }
  }

  std::unique_ptr<GraphExecutor> exec_;
  std::vector<DeviceProblem> ps_;
  std::vector<Outputs> refs_;
};

TEST_P(SequenceGpuTest, StepBoundedReplaysThePeriodGraph) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto rec = SequenceRecorder::Create(exec_.get(), stream_.get());
  ASSERT_TRUE(rec.ok()) << rec.status();
  RunSteps(**rec, 10, /*end_steps=*/true);
  const SequenceCounters& c = (*rec)->counters();
  EXPECT_EQ(c.period, 4);
  EXPECT_GE(c.period_launches, 7u);
  EXPECT_EQ(c.divergences, 0u);
}

TEST_P(SequenceGpuTest, SpeculativeReplaysThePeriodGraph) {
  ENCORE_SKIP_WITHOUT_GPU();
  SequenceOptions o;
  o.mode = SequenceMode::kSpeculative;
  auto rec = SequenceRecorder::Create(exec_.get(), stream_.get(), o);
  ASSERT_TRUE(rec.ok()) << rec.status();
  RunSteps(**rec, 10, /*end_steps=*/false);  // inputs are static: speculation is valid
  const SequenceCounters& c = (*rec)->counters();
  EXPECT_EQ(c.period, 4);
  EXPECT_GE(c.period_launches, 7u);
  EXPECT_EQ(c.speculative_hazards, 0u);
}

TEST_P(SequenceGpuTest, StepBoundedDivergenceStaysCorrect) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto rec = SequenceRecorder::Create(exec_.get(), stream_.get());
  ASSERT_TRUE(rec.ok()) << rec.status();
  RunSteps(**rec, 5, true);
  // A step that leaves out call 2.
  for (auto& p : ps_) ENCORE_ASSERT_OK(p.ClearC(stream_.get()));
  for (int i : {0, 1, 3}) ENCORE_ASSERT_OK((*rec)->Run(ps_[i].args()));
  ENCORE_ASSERT_OK((*rec)->EndStep());
  for (int i : {0, 1, 3}) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ps_[i].DownloadC(stream_.get()));
    EXPECT_EQ(got, refs_[i]) << "call " << i;
  }
  EXPECT_EQ((*rec)->counters().divergences, 1u);
  RunSteps(**rec, 5, true);
}

INSTANTIATE_TEST_SUITE_P(Runners, SequenceGpuTest, ::testing::ValuesIn(testing::GpuRunners()),
                         testing::RunnerName);

}  // namespace
}  // namespace encore::graph_cache

// CPU tests of SequenceRecorder (host-mode FakeGemm + HostGraphBackend). In host mode a launch
// computes at the moment it is made, which models a GPU stream where each launch runs after
// everything enqueued before it — enough to show both what deferral preserves and what
// speculation risks.
#include "graph_cache/sequence.h"

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

class SequenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = std::make_unique<HostGraphBackend>();
    backend_ = backend.get();
    auto e = GraphExecutor::CreateWithBackend(&gemm_, std::move(backend), ExecutorOptions{});
    ASSERT_TRUE(e.ok()) << e.status();
    exec_ = *std::move(e);
  }
  std::unique_ptr<SequenceRecorder> Recorder(SequenceMode mode, int max_period = 16) {
    SequenceOptions o;
    o.mode = mode;
    o.max_period = max_period;
    auto r = SequenceRecorder::Create(exec_.get(), FakeStream(1), o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : nullptr;
  }
  // `n` distinct single-group problems.
  static std::vector<std::unique_ptr<HostProblem>> Problems(int n, int seed = 0) {
    std::vector<std::unique_ptr<HostProblem>> ps;
    for (int i = 0; i < n; ++i) {
      ps.push_back(std::make_unique<HostProblem>(
          std::vector<Dims>{{8 + (i % 3) * 8, 64, 64 * (1 + i % 2)}}, seed + i));
    }
    return ps;
  }

  FakeGemm gemm_{FakeGemm::Device::kHost};
  HostGraphBackend* backend_ = nullptr;
  std::unique_ptr<GraphExecutor> exec_;
};

TEST_F(SequenceTest, CreateValidates) {
  SequenceOptions o;
  o.max_period = 1000;  // > max_batch_calls
  EXPECT_FALSE(SequenceRecorder::Create(exec_.get(), FakeStream(1), o).ok());
  o.max_period = 8;
  o.confirm_repeats = 1;
  EXPECT_FALSE(SequenceRecorder::Create(exec_.get(), FakeStream(1), o).ok());
  EXPECT_FALSE(SequenceRecorder::Create(nullptr, FakeStream(1)).ok());
  // Values that used to be accepted and then misbehave: a mode that is none (ran as
  // speculative), 0 hazards (speculated until the first), a confirm length past an int.
  const struct {
    const char* what;
    void (*spoil)(SequenceOptions&);
  } cases[] = {
      {"mode", [](SequenceOptions& x) { x.mode = static_cast<SequenceMode>(5); }},
      {"max_speculative_hazards", [](SequenceOptions& x) { x.max_speculative_hazards = 0; }},
      {"confirm_repeats", [](SequenceOptions& x) { x.confirm_repeats = 1 << 30; }},
      {"min_confirm_calls", [](SequenceOptions& x) { x.min_confirm_calls = -1; }},
  };
  for (const auto& c : cases) {
    SequenceOptions x;
    c.spoil(x);
    const auto r = SequenceRecorder::Create(exec_.get(), FakeStream(1), x);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.status().message().find(c.what), absl::string_view::npos) << r.status();
  }
}

// Runs `rec` over `ps` (one call each, then EndStep) until its period is replayed and aligned.
void ReplayingAfterLearning(SequenceRecorder* rec, std::vector<std::unique_ptr<HostProblem>>& ps) {
  for (int step = 0; step < 5; ++step) {
    for (auto& p : ps) ENCORE_ASSERT_OK(rec->Run(p->args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->EndStep());
  }
  ASSERT_EQ(rec->counters().period, static_cast<int>(ps.size()));
}

// A flush of deferred calls that fails half-way (a diverging call arrives; the second deferred
// call's launch fails) reports the error and ends the replay: the flushed calls are not flushed
// again at EndStep, i.e. none runs twice.
TEST_F(SequenceTest, FlushFailingHalfWayRunsNoCallTwice) {
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(3);
  ReplayingAfterLearning(rec.get(), ps);
  HostProblem odd({{24, 64, 128}}, 77);
  ENCORE_ASSERT_OK(rec->Run(ps[0]->args(), KernelKind::kSimple));  // deferred
  ENCORE_ASSERT_OK(rec->Run(ps[1]->args(), KernelKind::kSimple));  // deferred
  const uint64_t flushed = rec->counters().flushed_calls;
  // Call 0's flush: its graph's one launch; call 1's: its graph's launch, then the direct one.
  gemm_.FailLaunchesAfter(1, 2);
  EXPECT_FALSE(rec->Run(odd.args(), KernelKind::kSimple).ok());
  EXPECT_EQ(rec->counters().flushed_calls, flushed + 2);
  ENCORE_ASSERT_OK(rec->EndStep());
  EXPECT_EQ(rec->counters().flushed_calls, flushed + 2) << "nothing flushed a second time";
  EXPECT_EQ(rec->counters().period, 0) << "re-learning";
}

// kSpeculative: when the period's launch at its first call fails, the calls after it are not
// taken as done: they run themselves.
TEST_F(SequenceTest, SpeculativeFailedPeriodLaunchRunsTheRestItself) {
  auto rec = Recorder(SequenceMode::kSpeculative);
  auto ps = Problems(3);
  ReplayingAfterLearning(rec.get(), ps);
  for (auto& p : ps) p->ClearC();
  gemm_.FailNextLaunches(2);  // the period graph's first node, then call 0's direct launch
  EXPECT_FALSE(rec->Run(ps[0]->args(), KernelKind::kSimple).ok());
  ENCORE_ASSERT_OK(rec->Run(ps[1]->args(), KernelKind::kSimple));
  ENCORE_ASSERT_OK(rec->Run(ps[2]->args(), KernelKind::kSimple));
  EXPECT_TRUE(ps[1]->Check(0));
  EXPECT_TRUE(ps[2]->Check(0));
}

// Deferred calls returned OK: a recorder destroyed before its step ends still launches them.
TEST_F(SequenceTest, DestroyedRecorderLaunchesItsDeferredCalls) {
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(3);
  ReplayingAfterLearning(rec.get(), ps);
  for (auto& p : ps) p->ClearC();
  ENCORE_ASSERT_OK(rec->Run(ps[0]->args(), KernelKind::kSimple));
  ENCORE_ASSERT_OK(rec->Run(ps[1]->args(), KernelKind::kSimple));
  EXPECT_FALSE(ps[0]->Check(0)) << "deferred";
  rec.reset();
  EXPECT_TRUE(ps[0]->Check(0));
  EXPECT_TRUE(ps[1]->Check(0));
}

TEST_F(SequenceTest, StepBoundedDefersAndReplaysOnePeriodPerStep) {
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(3);
  for (int step = 0; step < 10; ++step) {
    for (auto& p : ps) p->ClearC();
    for (size_t i = 0; i < ps.size(); ++i) {
      ENCORE_ASSERT_OK(rec->Run(ps[i]->args(), KernelKind::kSimple));
      if (step >= 4 && i == 0) {
        EXPECT_FALSE(ps[0]->Check(0)) << "step " << step << ": deferred to the period's end";
      }
    }
    ENCORE_ASSERT_OK(rec->EndStep());
    for (auto& p : ps) EXPECT_TRUE(p->Check(0)) << "step " << step;
  }
  const SequenceCounters& c = rec->counters();
  EXPECT_EQ(c.periods_learned, 1u);
  EXPECT_EQ(c.period, 3);
  EXPECT_EQ(c.divergences, 0u);
  // Confirmed at call 8 (2nd call of step 2): rest of step 2 direct, aligned at its EndStep,
  // steps 3..9 replayed.
  EXPECT_EQ(c.period_launches, 7u);
  EXPECT_EQ(c.replayed_calls, 21u);
  EXPECT_EQ(c.passthrough_calls, 9u);
  const ExecutorCounters k = exec_->counters();
  EXPECT_EQ(k.calls, 30u);
  // Three single-call graphs while learning (captured at their 2nd sighting) + one period graph.
  EXPECT_EQ(k.captures, 4u);
  // Step 0 direct, step 1 captures the singles, step 2 replays them (3 hits), step 3 captures
  // the period graph, steps 4..9 replay it (6 hits).
  EXPECT_EQ(k.hits, 9u);
}

TEST_F(SequenceTest, ManyPeriodsBothModes) {
  for (SequenceMode mode : {SequenceMode::kStepBounded, SequenceMode::kSpeculative}) {
    for (int p : {1, 2, 5, 7, 16}) {
      SetUp();
      auto rec = Recorder(mode);
      auto ps = Problems(p, 10 * p);
      for (int step = 0; step < 12; ++step) {
        for (auto& q : ps) q->ClearC();
        for (auto& q : ps) ENCORE_ASSERT_OK(rec->Run(q->args(), KernelKind::kSimple));
        ENCORE_ASSERT_OK(rec->EndStep());
        for (int i = 0; i < p; ++i) {
          ASSERT_TRUE(ps[i]->Check(0)) << "mode " << static_cast<int>(mode) << " p " << p
                                       << " step " << step << " call " << i;
        }
      }
      EXPECT_EQ(rec->counters().period, p) << "mode " << static_cast<int>(mode);
      EXPECT_GT(rec->counters().period_launches, 0u);
      EXPECT_EQ(rec->counters().divergences, 0u);
    }
  }
}

TEST_F(SequenceTest, StepBoundedDivergenceFlushesAndRelearns) {
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(4);
  HostProblem odd({{24, 64, 128}}, 77);
  for (int step = 0; step < 12; ++step) {
    for (auto& p : ps) p->ClearC();
    odd.ClearC();
    for (int i = 0; i < 4; ++i) {
      HostProblem& p = (step == 6 && i == 2) ? odd : *ps[i];
      ENCORE_ASSERT_OK(rec->Run(p.args(), KernelKind::kSimple));
    }
    ENCORE_ASSERT_OK(rec->EndStep());
    for (int i = 0; i < 4; ++i) {
      HostProblem& p = (step == 6 && i == 2) ? odd : *ps[i];
      EXPECT_TRUE(p.Check(0)) << "step " << step << " call " << i;
    }
  }
  const SequenceCounters& c = rec->counters();
  EXPECT_EQ(c.divergences, 1u);
  EXPECT_EQ(c.flushed_calls, 2u) << "calls 0 and 1 of step 6 were deferred, then flushed";
  EXPECT_EQ(c.periods_learned, 2u);
  EXPECT_EQ(c.period, 4);
}

// A period launch skips the executor's compare of its calls (the recorder's ticket) only while
// no graph of the executor was patched or removed: here the period's own graph is patched to
// other buffers by a batch of the same structure (one variant per structure), then dropped by
// Clear, and every step still computes with the recorder's buffers.
TEST_F(SequenceTest, PeriodLaunchesFollowPatchesAndRemovalsOfTheirGraph) {
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  auto backend = std::make_unique<HostGraphBackend>();
  auto e = GraphExecutor::CreateWithBackend(&gemm_, std::move(backend), o);
  ASSERT_TRUE(e.ok()) << e.status();
  exec_ = *std::move(e);
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(3);
  auto others = Problems(3, 100);  // the same structure, other buffers
  std::vector<GemmCall> other_calls;
  for (auto& q : others) other_calls.push_back(GemmCall{q->args(), KernelKind::kSimple});
  auto step = [&](int s) {
    for (auto& p : ps) p->ClearC();
    for (auto& p : ps) ENCORE_ASSERT_OK(rec->Run(p->args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->EndStep());
    for (size_t i = 0; i < ps.size(); ++i)
      EXPECT_TRUE(ps[i]->Check(0)) << "step " << s << " call " << i;
  };
  for (int s = 0; s < 6; ++s) step(s);
  const uint64_t launches = rec->counters().period_launches;
  ASSERT_GT(launches, 0u);
  const ExecutorCounters before = exec_->counters();
  step(6);  // a replay through the ticket: no capture, no patch
  EXPECT_EQ(exec_->counters().patches, before.patches);
  EXPECT_EQ(exec_->counters().captures, before.captures);

  // The period's graph now holds the other buffers.
  for (auto& q : others) q->ClearC();
  ENCORE_ASSERT_OK(exec_->RunBatch(other_calls, FakeStream(1)));
  for (auto& q : others) EXPECT_TRUE(q->Check(0));
  const uint64_t patched = exec_->counters().patches;
  EXPECT_GT(patched, before.patches);
  for (auto& q : others) q->ClearC();
  step(7);  // patched back: its calls' own buffers
  EXPECT_GT(exec_->counters().patches, patched);
  for (auto& q : others) EXPECT_TRUE(q->Untouched(0)) << "the step wrote the other buffers";

  exec_->Clear();  // the graph is gone
  const uint64_t captures = exec_->counters().captures;
  step(8);
  step(9);
  EXPECT_GT(exec_->counters().captures, captures);
  EXPECT_EQ(rec->counters().period_launches, launches + 4);
  EXPECT_EQ(rec->counters().divergences, 0u);
}

TEST_F(SequenceTest, StepBoundedMisalignedStepsStayCorrect) {
  // Steps of 5 calls over a period of 2: EndStep lands mid-period every other step.
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(2);
  int call = 0;
  for (int step = 0; step < 20; ++step) {
    std::vector<HostProblem*> made;
    for (int i = 0; i < 5; ++i, ++call) {
      HostProblem* p = ps[call % 2].get();
      p->ClearC();
      ENCORE_ASSERT_OK(rec->Run(p->args(), KernelKind::kSimple));
      made.push_back(p);
    }
    ENCORE_ASSERT_OK(rec->EndStep());
    for (HostProblem* p : made) EXPECT_TRUE(p->Check(0)) << "step " << step;
  }
}

TEST_F(SequenceTest, StepBoundedSeesInputsProducedBetweenCalls) {
  // Call 1 reads an input the program rewrites right before making call 1 (a producer between
  // GEMMs). Deferral launches the period after the producer: correct values.
  auto rec = Recorder(SequenceMode::kStepBounded);
  auto ps = Problems(3);
  for (int step = 0; step < 10; ++step) {
    for (auto& p : ps) p->ClearC();
    ENCORE_ASSERT_OK(rec->Run(ps[0]->args(), KernelKind::kSimple));
    ps[1]->Scramble(1000 + step);  // the producer
    ENCORE_ASSERT_OK(rec->Run(ps[1]->args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->Run(ps[2]->args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->EndStep());
    EXPECT_TRUE(ps[1]->Check(0)) << "step " << step;
  }
  EXPECT_GT(rec->counters().period_launches, 0u);
}

TEST_F(SequenceTest, SpeculativeLaunchesTheWholePeriodAtItsFirstCall) {
  auto rec = Recorder(SequenceMode::kSpeculative);
  auto ps = Problems(3);
  for (int it = 0; it < 10; ++it) {
    for (auto& p : ps) p->ClearC();
    ENCORE_ASSERT_OK(rec->Run(ps[0]->args(), KernelKind::kSimple));
    if (rec->counters().period != 0 && it >= 4) {
      EXPECT_TRUE(ps[2]->Check(0)) << "call 2's work already ran with call 0";
    }
    ENCORE_ASSERT_OK(rec->Run(ps[1]->args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->Run(ps[2]->args(), KernelKind::kSimple));
    for (auto& p : ps) EXPECT_TRUE(p->Check(0)) << "iteration " << it;
  }
  EXPECT_EQ(rec->counters().speculative_hazards, 0u);
  EXPECT_GT(rec->counters().period_launches, 0u);
}

TEST_F(SequenceTest, SpeculativeHazardIsCountedAndSpeculationStops) {
  auto rec = Recorder(SequenceMode::kSpeculative);
  auto ps = Problems(3);
  HostProblem other({{8, 64, 64}}, 555);  // same shape as ps[0]... different buffers
  auto iteration = [&](HostProblem& second) {
    for (auto& p : ps) p->ClearC();
    second.ClearC();
    ENCORE_ASSERT_OK(rec->Run(ps[0]->args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->Run(second.args(), KernelKind::kSimple));
    ENCORE_ASSERT_OK(rec->Run(ps[2]->args(), KernelKind::kSimple));
  };
  for (int it = 0; it < 6; ++it) iteration(*ps[1]);
  ASSERT_EQ(rec->counters().period, 3);
  // The program now makes call 1 with another buffer. The period graph ran at call 0 and has
  // already written ps[1]'s output (never requested this time): the documented hazard.
  iteration(other);
  EXPECT_TRUE(ps[1]->Check(0)) << "the stale speculative write happened";
  EXPECT_TRUE(other.Check(0)) << "the call actually made is still correct";
  EXPECT_TRUE(ps[0]->Check(0));
  EXPECT_TRUE(ps[2]->Check(0));
  const SequenceCounters& c = rec->counters();
  EXPECT_EQ(c.speculative_hazards, 1u);
  EXPECT_TRUE(c.speculation_disabled);
  // From now on every call passes through (no speculation), and results stay correct.
  const uint64_t launches = c.period_launches;
  for (int it = 0; it < 6; ++it) {
    iteration(*ps[1]);
    for (auto& p : ps) EXPECT_TRUE(p->Check(0));
  }
  EXPECT_EQ(rec->counters().period_launches, launches);
}

TEST_F(SequenceTest, SpeculativeReadsInputsAtTheFirstCall) {
  // Why speculation needs every input ready at the period's first call: a producer between
  // calls is NOT seen by the already-launched period. (Step-bounded mode handles this case.)
  auto rec = Recorder(SequenceMode::kSpeculative);
  auto ps = Problems(3);
  for (int it = 0; it < 6; ++it) {
    for (auto& p : ps) ENCORE_ASSERT_OK(rec->Run(p->args(), KernelKind::kSimple));
  }
  ASSERT_EQ(rec->counters().period, 3);
  ps[1]->ClearC();
  ENCORE_ASSERT_OK(rec->Run(ps[0]->args(), KernelKind::kSimple));
  ps[1]->Scramble(4242);  // producer after call 0
  ENCORE_ASSERT_OK(rec->Run(ps[1]->args(), KernelKind::kSimple));
  EXPECT_FALSE(ps[1]->Check(0)) << "stale: computed before the producer ran";
}

TEST_F(SequenceTest, NoiseBeforeThePeriodAndLongerPeriodsThanMax) {
  auto rec = Recorder(SequenceMode::kStepBounded, /*max_period=*/4);
  auto ps = Problems(6);
  // Period 6 > max_period 4: never adopted, every call correct through the executor.
  for (int step = 0; step < 8; ++step) {
    for (auto& p : ps) {
      p->ClearC();
      ENCORE_ASSERT_OK(rec->Run(p->args(), KernelKind::kSimple));
      EXPECT_TRUE(p->Check(0));
    }
    ENCORE_ASSERT_OK(rec->EndStep());
  }
  EXPECT_EQ(rec->counters().periods_learned, 0u);
  EXPECT_EQ(rec->counters().passthrough_calls, 48u);
}

}  // namespace
}  // namespace encore::graph_cache

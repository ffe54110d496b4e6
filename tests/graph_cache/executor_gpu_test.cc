// GPU tests of GraphExecutor + GemmBatch with the CUDA backend, parameterized over the runners
// of GpuRunners() (gpu_util.h): the fake kernel and the real NVFP4 kernels (with the token pre-pass
// where the runner chooses it, and always). Every test starts with ENCORE_SKIP_WITHOUT_GPU(). Results are compared bit for bit with direct
// launches of the same runner (and, for the fake, with its host formula).
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "cuda_utils/raii.h"
#include "graph_cache/batch.h"
#include "graph_cache/executor.h"
#include "gtest/gtest.h"
#include "tests/graph_cache/gpu_util.h"
#include "tests/test_util.h"

namespace encore::graph_cache {
namespace {

using gemm::KernelKind;
using testing::DeviceProblem;
using testing::Dims;
using testing::DirectReference;
using Outputs = std::vector<std::vector<uint16_t>>;

class ExecutorGpuTest : public testing::GpuRunnerTest {
 protected:
  void Make(ExecutorOptions o = {}) {
    auto e = GraphExecutor::Create(runner_.get(), o);
    ASSERT_TRUE(e.ok()) << e.status();
    exec_ = *std::move(e);
  }
  // Executor run of `p` (C cleared first), outputs downloaded (synchronizes).
  absl::StatusOr<Outputs> ViaExecutor(DeviceProblem& p, KernelKind kind = KernelKind::kAuto) {
    ENCORE_RETURN_IF_ERROR(p.ClearC(stream_.get()));
    ENCORE_RETURN_IF_ERROR(exec_->Run(p.args(), stream_.get(), kind));
    return p.DownloadC(stream_.get());
  }

  // `n` problems of kShape (seeds seed, seed + 1, ...) and their direct launches' outputs.
  void MakeProblems(int n, int seed, std::vector<DeviceProblem>* ps, std::vector<Outputs>* refs);

  std::unique_ptr<GraphExecutor> exec_;
};

const std::vector<Dims> kShape = {{128, 128, 256}, {64, 64, 128}, {0, 64, 128}, {200, 256, 64}};

void ExecutorGpuTest::MakeProblems(int n, int seed, std::vector<DeviceProblem>* ps,
                                   std::vector<Outputs>* refs) {
  for (int i = 0; i < n; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(kShape, seed + i));
    ps->push_back(std::move(p));
  }
  for (auto& p : *ps) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs r, DirectReference(*runner_, p, stream_.get()));
    refs->push_back(std::move(r));
  }
}

TEST_P(ExecutorGpuTest, ReplayedResultsIdenticalToDirect) {
  ENCORE_SKIP_WITHOUT_GPU();
  Make();
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(kShape, 1));
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs ref, DirectReference(*runner_, p, stream_.get()));
  for (int i = 0; i < 5; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(p));
    EXPECT_EQ(got, ref) << "call " << i;
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.direct_launches, 1u);
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.hits, 3u);
  EXPECT_EQ(c.graph_launches, 4u);
}

TEST_P(ExecutorGpuTest, FakeMatchesItsHostFormula) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (!GetParam().is_fake) GTEST_SKIP() << "fake runner only";
  Make();
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(kShape, 2));
  for (int i = 0; i < 3; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(p, KernelKind::kSimple));
    EXPECT_EQ(got, p.FakeExpected(0));
  }
}

TEST_P(ExecutorGpuTest, SwappingBuffersPatchesWithoutNewCaptures) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;  // one exec per structure: every swap is a patch
  Make(o);
  std::vector<DeviceProblem> ps;
  std::vector<Outputs> refs;
  ASSERT_NO_FATAL_FAILURE(MakeProblems(3, 10, &ps, &refs));
  // Warm: capture with ps[0].
  for (int i = 0; i < 2; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[0]));
    EXPECT_EQ(got, refs[0]);
  }
  for (int i = 0; i < 9; ++i) {
    const int j = (i + 1) % 3;
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[j]));
    EXPECT_EQ(got, refs[j]) << "iteration " << i;
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u) << "no re-capture for a pointer change";
  EXPECT_EQ(c.instantiations, 1u) << "no re-instantiation either";
  EXPECT_EQ(c.patches, 9u);
}

// RebindMode::kBound: the swaps of the test above are served by one bound exec (captured at the
// first swap) with nothing patched; the fake runner has no bound plans and patches.
TEST_P(ExecutorGpuTest, BoundRebindServesNewBuffersWithoutPatches) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;
  o.rebind = RebindMode::kBound;
  Make(o);
  std::vector<DeviceProblem> ps;
  std::vector<Outputs> refs;
  ASSERT_NO_FATAL_FAILURE(MakeProblems(4, 20, &ps, &refs));
  for (int i = 0; i < 2; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[0]));
    EXPECT_EQ(got, refs[0]);
  }
  for (int i = 0; i < 12; ++i) {
    const int j = (i + 1) % 4;
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[j]));
    EXPECT_EQ(got, refs[j]) << "iteration " << i;
  }
  // Back-to-back without syncs: every set in turn, checked at the end.
  for (int i = 0; i < 4; ++i) ENCORE_ASSERT_OK(ps[i].ClearC(stream_.get()));
  for (int i = 0; i < 40; ++i) ENCORE_ASSERT_OK(exec_->Run(ps[i % 4].args(), stream_.get()));
  for (int i = 0; i < 4; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ps[i].DownloadC(stream_.get()));
    EXPECT_EQ(got, refs[i]) << "set " << i << " back to back";
  }
  const ExecutorCounters c = exec_->counters();
  if (GetParam().is_fake) {
    EXPECT_EQ(c.bound_launches, 0u);
    EXPECT_GT(c.patches, 0u);
  } else {
    EXPECT_EQ(c.patches, 0u);
    EXPECT_EQ(c.captures, 2u) << "the variant and the bound exec";
    // ps[0]'s calls hit the variant; every other call is a bound launch.
    EXPECT_EQ(c.bound_launches, 12u - 3u + 30u);
    EXPECT_EQ(c.live_execs, 2u);
  }
}

TEST_P(ExecutorGpuTest, RotatingBufferSetsReplayTheirOwnVariants) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.max_bindings_per_structure = 4;
  Make(o);
  std::vector<DeviceProblem> ps;
  std::vector<Outputs> refs;
  // Same shapes, three input sets (a harness's rotation).
  ASSERT_NO_FATAL_FAILURE(MakeProblems(3, 30, &ps, &refs));
  ExecutorCounters warm;
  for (int round = 0; round < 6; ++round) {
    if (round == 3) warm = exec_->counters();
    for (size_t i = 0; i < ps.size(); ++i) {
      ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[i]));
      EXPECT_EQ(got, refs[i]) << "round " << round << " set " << i;
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.live_execs, 3u) << "one exec per input set";
  EXPECT_EQ(c.captures, warm.captures) << "no capture after warm-up";
  EXPECT_EQ(c.patches, warm.patches) << "no patch after warm-up";
  EXPECT_EQ(c.hits - warm.hits, 9u);

  // More input sets than variants: the least recently used variant is patched, still exact.
  o.max_bindings_per_structure = 2;
  Make(o);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < ps.size(); ++i) {
      ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[i]));
      EXPECT_EQ(got, refs[i]) << "max 2, round " << round << " set " << i;
    }
  }
  EXPECT_LE(exec_->counters().live_execs, 2u);
  EXPECT_GT(exec_->counters().patches, 0u);
}

TEST_P(ExecutorGpuTest, EvictionUnderChurn) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.min_repeats = 1;
  o.max_entries = 3;
  o.thrash.enabled = false;
  Make(o);
  std::vector<DeviceProblem> ps;
  std::vector<Outputs> refs;
  for (int i = 0; i < 8; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p,
                                DeviceProblem::Create({{64 + 16 * i, 128, 128}}, 20 + i));
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs r, DirectReference(*runner_, p, stream_.get()));
    ps.push_back(std::move(p));
    refs.push_back(std::move(r));
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < ps.size(); ++i) {
      ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(ps[i]));
      EXPECT_EQ(got, refs[i]) << "round " << round << " problem " << i;
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.live_execs, 3u);
  EXPECT_EQ(c.evictions, c.captures - 3u);
  EXPECT_GT(c.evictions, 0u);
}

TEST_P(ExecutorGpuTest, DynamicMChangingEveryStepNoRecapture) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.min_repeats = 1;
  Make(o);
  // m is each group's capacity; device_m holds this step's token counts.
  ENCORE_ASSERT_OK_AND_ASSIGN(
      DeviceProblem p, DeviceProblem::Create({{256, 128, 128}, {256, 128, 256}, {128, 64, 64}}, 3));
  for (int step = 0; step < 10; ++step) {
    const std::vector<int32_t> rows = {(step * 37) % 257, (step * 91 + 5) % 300,
                                       step % 3 == 0 ? 0 : 100 + step};
    ENCORE_ASSERT_OK(p.SetDeviceM(rows, stream_.get()));
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs ref, DirectReference(*runner_, p, stream_.get()));
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(p));
    EXPECT_EQ(got, ref) << "step " << step;
    if (GetParam().is_fake) {
      const int variant = (256 * 128 * 2 + 128 * 64) >= (int64_t{1} << 20) ? 1 : 0;
      EXPECT_EQ(got, p.FakeExpected(variant)) << "step " << step;
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.instantiations, 1u);
  EXPECT_EQ(c.patches, 0u);
  EXPECT_EQ(c.hits, 9u);
}

TEST_P(ExecutorGpuTest, CallsInsideTheCallersCaptureGoIntoIt) {
  ENCORE_SKIP_WITHOUT_GPU();
  Make();
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(kShape, 4));
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs ref, DirectReference(*runner_, p, stream_.get()));
  // Give the structure a live graph first: inside a capture it must still not be used.
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs warm0, ViaExecutor(p));
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs warm1, ViaExecutor(p));
  EXPECT_EQ(warm0, ref);
  EXPECT_EQ(warm1, ref);
  ASSERT_EQ(exec_->counters().captures, 1u);
  ENCORE_ASSERT_OK(p.ClearC(stream_.get()));
  ASSERT_EQ(cudaStreamSynchronize(stream_.get()), cudaSuccess);

  ASSERT_EQ(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const absl::Status in_capture = exec_->Run(p.args(), stream_.get());
  cudaGraph_t raw = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream_.get(), &raw);  // always end
  Graph user_graph(raw);
  ENCORE_ASSERT_OK(in_capture);
  ASSERT_EQ(ended, cudaSuccess);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(user_graph.get(), nullptr, &nodes), cudaSuccess);
  auto plan = std::make_unique<gemm::LaunchPlan>();
  ENCORE_ASSERT_OK(runner_->Prepare(p.args(), plan.get()));
  EXPECT_EQ(nodes, static_cast<size_t>(plan->num_kernels()))
      << "the call (its kernels) was recorded into the caller's graph";
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u) << "no nested capture";
  EXPECT_EQ(c.last_fallback, FallbackReason::kCallerCapturing);
  EXPECT_EQ(c.graph_launches, 1u);

  ENCORE_ASSERT_OK_AND_ASSIGN(GraphExec user_exec, GraphExec::Instantiate(user_graph.get()));
  ASSERT_EQ(cudaGraphLaunch(user_exec.get(), stream_.get()), cudaSuccess);
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, p.DownloadC(stream_.get()));
  EXPECT_EQ(got, ref);
}

TEST_P(ExecutorGpuTest, FailedCaptureFallsBackAndStillComputes) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (!GetParam().is_fake) GTEST_SKIP() << "needs the fake's failure injection";
  ExecutorOptions o;
  o.min_repeats = 1;
  o.failure_backoff = 2;
  Make(o);
  auto* fake = static_cast<testing::FakeGemm*>(runner_.get());
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(kShape, 5));
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs ref, DirectReference(*runner_, p, stream_.get()));
  fake->FailNextLaunches(1);  // consumed inside the capture
  ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ViaExecutor(p));
  EXPECT_EQ(got, ref);
  ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.capture_failures, 1u);
  EXPECT_EQ(c.last_fallback, FallbackReason::kCaptureFailed);
  cudaStreamCaptureStatus st;
  ASSERT_EQ(cudaStreamIsCapturing(stream_.get(), &st), cudaSuccess);
  EXPECT_EQ(st, cudaStreamCaptureStatusNone);
  for (int i = 0; i < 3; ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs again, ViaExecutor(p));
    EXPECT_EQ(again, ref);
  }
  c = exec_->counters();
  EXPECT_EQ(c.instantiations, 1u) << "captured after the backoff";
}

TEST_P(ExecutorGpuTest, BatchReplaysOneGraphAndPatchesNodes) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;  // one exec: the alternating middle call is patched
  o.merge_calls = MergeCalls::kNever;  // every call its own launch (merges: the next test)
  Make(o);
  std::vector<DeviceProblem> ps;
  std::vector<Outputs> refs;
  const std::vector<std::vector<Dims>> shapes = {{{128, 128, 256}},
                                                 {{64, 64, 128}, {32, 128, 64}},
                                                 {{96, 256, 128}},
                                                 {{64, 64, 128}, {32, 128, 64}}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(shapes[i], 30 + i));
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs r, DirectReference(*runner_, p, stream_.get()));
    ps.push_back(std::move(p));
    refs.push_back(std::move(r));
  }
  GemmBatch batch(exec_.get());
  for (int step = 0; step < 6; ++step) {
    const int mid = step % 2 == 0 ? 1 : 3;  // same structure, other buffers
    for (int i : {0, mid, 2}) ENCORE_ASSERT_OK(ps[i].ClearC(stream_.get()));
    for (int i : {0, mid, 2}) ENCORE_ASSERT_OK(batch.Add(ps[i].args()));
    ENCORE_ASSERT_OK(batch.Flush(stream_.get()));
    for (int i : {0, mid, 2}) {
      ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ps[i].DownloadC(stream_.get()));
      EXPECT_EQ(got, refs[i]) << "step " << step << " call " << i;
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.graph_launches, 5u);
  EXPECT_EQ(c.patches, 4u);
  // The token pre-pass runner's calls sit behind PDL edges (padded pre-passes): nodes 1 and 2 read
  // their tokens early at the capture, node 1 again at each of its 4 patches.
  if (GetParam().name == "RealPrepass") EXPECT_EQ(c.early_prepass_nodes, 6u);
}

// Independent small calls merged into one launch (MergeCalls::kSameSums, the default): bit for bit
// what each call's own direct launch computes, also after the merged launch is patched, and also
// where the merged launch takes another kernel than the calls alone (the real runners: 8 calls of
// 128 tiles each run simple alone and persistent merged).
TEST_P(ExecutorGpuTest, BatchMergesIndependentSmallCallsBitForBit) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.max_bindings_per_structure = 1;  // one exec: the alternating call is patched
  Make(o);
  const std::vector<Dims> wide = {{128, 4096, 256}, {384, 4096, 256}};
  const std::vector<Dims> tiny = {{8, 128, 256}};
  std::vector<DeviceProblem> ps;
  std::vector<Outputs> refs;
  for (int i = 0; i < 10; ++i) {  // 8 wide calls (call 9 alternates with call 3), a tiny one
    ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p,
                                DeviceProblem::Create(i == 8 ? tiny : wide, 60 + i));
    ENCORE_ASSERT_OK_AND_ASSIGN(Outputs r, DirectReference(*runner_, p, stream_.get()));
    ps.push_back(std::move(p));
    refs.push_back(std::move(r));
  }
  if (!GetParam().is_fake) {
    std::vector<gemm::GroupProblem> merged;
    for (int i = 0; i < 8; ++i) {
      merged.insert(merged.end(), ps[i].args().groups.begin(), ps[i].args().groups.end());
    }
    gemm::LaunchPlan alone, together;
    ENCORE_ASSERT_OK(runner_->Prepare(ps[0].args(), &alone, KernelKind::kAuto, stream_.get()));
    ENCORE_ASSERT_OK(runner_->Prepare(gemm::GroupedGemmArguments{merged}, &together,
                                      KernelKind::kAuto, stream_.get()));
    EXPECT_EQ(alone.kind, KernelKind::kSimple);
    EXPECT_EQ(together.kind, KernelKind::kPersistent);
  }
  GemmBatch batch(exec_.get());
  for (int step = 0; step < 6; ++step) {
    std::vector<int> calls = {0, 1, 2, step % 2 == 0 ? 3 : 9, 4, 5, 6, 7, 8};
    for (int i : calls) ENCORE_ASSERT_OK(ps[i].ClearC(stream_.get()));
    for (int i : calls) ENCORE_ASSERT_OK(batch.Add(ps[i].args()));
    ENCORE_ASSERT_OK(batch.Flush(stream_.get()));
    for (int i : calls) {
      ENCORE_ASSERT_OK_AND_ASSIGN(Outputs got, ps[i].DownloadC(stream_.get()));
      EXPECT_EQ(got, refs[i]) << "step " << step << " call " << i;
    }
  }
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.captures, 1u);
  EXPECT_EQ(c.graph_launches, 5u);
  EXPECT_GE(c.merged_launches, 5u) << "captured merged, then patched merged 4 times";
  EXPECT_GE(c.merged_calls, 10u);
}

TEST_P(ExecutorGpuTest, EightThreadsConcurrently) {
  ENCORE_SKIP_WITHOUT_GPU();
  ExecutorOptions o;
  o.max_entries = 6;
  Make(o);
  constexpr int kThreads = 8;
  constexpr int kIters = 40;
  struct PerThread {
    Stream stream;
    std::vector<DeviceProblem> ps;
    std::vector<Outputs> refs;
  };
  std::vector<PerThread> per(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    ENCORE_ASSERT_OK_AND_ASSIGN(per[t].stream, Stream::Create());
    // Two problems of a shape every thread shares (patches across threads) and one of its own.
    const std::vector<std::vector<Dims>> shapes = {
        {{128, 128, 128}}, {{128, 128, 128}}, {{16 + 16 * t, 64, 128}}};
    for (size_t i = 0; i < shapes.size(); ++i) {
      ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create(shapes[i], 100 * t + i));
      ENCORE_ASSERT_OK_AND_ASSIGN(Outputs r, DirectReference(*runner_, p, per[t].stream.get()));
      per[t].ps.push_back(std::move(p));
      per[t].refs.push_back(std::move(r));
    }
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      PerThread& me = per[t];
      for (int i = 0; i < kIters; ++i) {
        const int j = i % 3;
        DeviceProblem& p = me.ps[j];
        if (!p.ClearC(me.stream.get()).ok() || !exec_->Run(p.args(), me.stream.get()).ok()) {
          failures.fetch_add(1);
          continue;
        }
        auto got = p.DownloadC(me.stream.get());
        if (!got.ok() || *got != me.refs[j]) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const ExecutorCounters c = exec_->counters();
  EXPECT_EQ(c.calls, static_cast<uint64_t>(kThreads * kIters));
  EXPECT_EQ(c.direct_launches + c.graph_launches, c.calls);
  EXPECT_LE(c.live_execs, 6u);
}

INSTANTIATE_TEST_SUITE_P(Runners, ExecutorGpuTest, ::testing::ValuesIn(testing::GpuRunners()),
                         testing::RunnerName);

}  // namespace
}  // namespace encore::graph_cache

// GPU tests of the CUDA graph backend (each skips without a GPU): capture into a chain of kernel
// nodes in launch order, programmatic (PDL) edges, node patching, and rejection of graphs the
// cache cannot patch (empty, non-kernel nodes) with the capture always ended.
#include "graph_cache/backend.h"

#include <memory>
#include <thread>
#include <vector>

#include "cuda_utils/raii.h"
#include "gtest/gtest.h"
#include "tests/graph_cache/fake_gemm.h"
#include "tests/graph_cache/gpu_util.h"
#include "tests/test_util.h"

namespace encore::graph_cache {
namespace {

using testing::DeviceProblem;
using testing::Dims;
using testing::FakeGemm;

// Wraps the fake runner and changes what Launch enqueues.
class OddRunner final : public gemm::Nvfp4GroupedGemm {
 public:
  enum class Mode { kNothing, kMemsetToo };
  explicit OddRunner(Mode mode) : mode_(mode) {}
  absl::Status CanImplement(const gemm::GroupedGemmArguments& a) const override {
    return fake_.CanImplement(a);
  }
  absl::Status Prepare(const gemm::GroupedGemmArguments& a, gemm::LaunchPlan* p,
                       gemm::KernelKind k = gemm::KernelKind::kAuto,
                       cudaStream_t s = nullptr) override {
    return fake_.Prepare(a, p, k, s);
  }
  absl::Status Launch(const gemm::LaunchPlan& plan, cudaStream_t s, bool pdl) const override {
    if (mode_ == Mode::kNothing) return absl::OkStatus();
    testing::FakeParams params;
    std::memcpy(&params, plan.params, sizeof(params));
    ENCORE_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(params.groups[0].c, 0, 16, s), "memset");
    return fake_.Launch(plan, s, pdl);
  }
  absl::Status Run(const gemm::GroupedGemmArguments& a, cudaStream_t s,
                   gemm::KernelKind k) override {
    return fake_.Run(a, s, k);
  }
  int sm_count() const override { return 132; }

 private:
  Mode mode_;
  FakeGemm fake_{FakeGemm::Device::kGpu};
};

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ENCORE_SKIP_WITHOUT_GPU();
    auto b = CreateCudaGraphBackend();
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = *std::move(b);
    auto s = Stream::Create();
    ASSERT_TRUE(s.ok()) << s.status();
    stream_ = *std::move(s);
  }
  std::unique_ptr<GraphBackend> backend_;
  Stream stream_;
};

TEST_F(CudaBackendTest, ChainOfKernelNodesWithPdlEdgesReplaysAndPatches) {
  ENCORE_SKIP_WITHOUT_GPU();
  FakeGemm gemm(FakeGemm::Device::kGpu);
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p0, DeviceProblem::Create({{64, 128, 128}}, 1));
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p1, DeviceProblem::Create({{32, 64, 256}}, 2));
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p2, DeviceProblem::Create({{16, 64, 64}}, 3));
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem q1, DeviceProblem::Create({{32, 64, 256}}, 4));
  std::vector<std::unique_ptr<gemm::LaunchPlan>> plans;
  std::vector<const gemm::LaunchPlan*> ptrs;
  for (DeviceProblem* p : {&p0, &p1, &p2}) {
    plans.push_back(std::make_unique<gemm::LaunchPlan>());
    ENCORE_ASSERT_OK(gemm.Prepare(p->args(), plans.back().get(), gemm::KernelKind::kSimple));
    ptrs.push_back(plans.back().get());
  }
  const bool pdl[] = {false, true, true};
  BuildReport report;
  auto graph = backend_->Build(gemm, ptrs, pdl, &report);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(report.captured);
  EXPECT_TRUE(report.instantiated);
  EXPECT_EQ(report.programmatic_edges, 2) << "PDL launches captured as programmatic edges";
  ASSERT_EQ((*graph)->num_launches(), 3u);
  EXPECT_EQ(gemm.launches(), 3) << "one runner.Launch per plan, into the capture";
  for (DeviceProblem* p : {&p0, &p1, &p2, &q1}) ENCORE_ASSERT_OK(p->ClearC(stream_.get()));
  ENCORE_ASSERT_OK((*graph)->Launch(stream_.get()));
  for (DeviceProblem* p : {&p0, &p1, &p2}) {
    ENCORE_ASSERT_OK_AND_ASSIGN(auto c, p->DownloadC(stream_.get()));
    EXPECT_EQ(c, p->FakeExpected(0));
  }
  // Patch node 1 to q1's buffers: node order equals launch order.
  gemm::LaunchPlan plan;
  ENCORE_ASSERT_OK(gemm.Prepare(q1.args(), &plan, gemm::KernelKind::kSimple));
  ENCORE_ASSERT_OK((*graph)->Patch(1, plan));
  ENCORE_ASSERT_OK(p1.ClearC(stream_.get()));
  ENCORE_ASSERT_OK((*graph)->Launch(stream_.get()));
  ENCORE_ASSERT_OK_AND_ASSIGN(auto q1c, q1.DownloadC(stream_.get()));
  EXPECT_EQ(q1c, q1.FakeExpected(0));
  ENCORE_ASSERT_OK_AND_ASSIGN(auto p1c, p1.DownloadC(stream_.get()));
  EXPECT_NE(p1c, p1.FakeExpected(0)) << "p1 no longer written after the patch";
}

TEST_F(CudaBackendTest, IsCapturingReportsTheCallersCapture) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto before = backend_->IsCapturing(stream_.get());
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(*before);
  ASSERT_EQ(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  auto during = backend_->IsCapturing(stream_.get());
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_.get(), &g), cudaSuccess);
  Graph owned(g);
  ASSERT_TRUE(during.ok());
  EXPECT_TRUE(*during);
}

// The backend reaches cuGraphLaunch and cuStreamIsCapturing through the driver's entry points,
// which need a current context: on a thread that never made a CUDA call the capture query takes
// the runtime's call, which sets it up (run 161: without that check compute-sanitizer reported
// the driver's CUDA_ERROR_INVALID_CONTEXT), and the launch falls back to the runtime if it must.
// Both calls below are that thread's first.
TEST_F(CudaBackendTest, LaunchAndCaptureQueryWorkAsAThreadsFirstCudaCalls) {
  ENCORE_SKIP_WITHOUT_GPU();
  FakeGemm gemm(FakeGemm::Device::kGpu);
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create({{64, 128, 128}}, 5));
  gemm::LaunchPlan plan;
  ENCORE_ASSERT_OK(gemm.Prepare(p.args(), &plan, gemm::KernelKind::kSimple));
  const gemm::LaunchPlan* plans[] = {&plan};
  const bool pdl[] = {false};
  BuildReport report;
  auto graph = backend_->Build(gemm, plans, pdl, &report);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ENCORE_ASSERT_OK(p.ClearC(stream_.get()));  // ordered before the launch on the same stream
  absl::Status launched = absl::UnknownError("not run");
  absl::StatusOr<bool> capturing = absl::UnknownError("not run");
  absl::StatusOr<bool> legacy_capturing = absl::UnknownError("not run");
  std::thread fresh([&] {
    capturing = backend_->IsCapturing(stream_.get());
    legacy_capturing = backend_->IsCapturing(nullptr);
    launched = (*graph)->Launch(stream_.get());
  });
  fresh.join();
  ASSERT_TRUE(capturing.ok()) << capturing.status();
  EXPECT_FALSE(*capturing);
  ASSERT_TRUE(legacy_capturing.ok()) << legacy_capturing.status();
  EXPECT_FALSE(*legacy_capturing);
  ENCORE_ASSERT_OK(launched);
  ENCORE_ASSERT_OK_AND_ASSIGN(auto c, p.DownloadC(stream_.get()));
  EXPECT_EQ(c, p.FakeExpected(0));
}

TEST_F(CudaBackendTest, RejectsEmptyGraphsAndEndsTheCapture) {
  ENCORE_SKIP_WITHOUT_GPU();
  OddRunner runner(OddRunner::Mode::kNothing);
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create({{64, 128, 128}}, 1));
  gemm::LaunchPlan plan;
  ENCORE_ASSERT_OK(runner.Prepare(p.args(), &plan, gemm::KernelKind::kSimple));
  const gemm::LaunchPlan* ptrs[] = {&plan};
  const bool pdl[] = {false};
  BuildReport report;
  auto graph = backend_->Build(runner, ptrs, pdl, &report);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("empty graph"), absl::string_view::npos)
      << graph.status();
  // The backend's capture was ended: a second build works normally.
  FakeGemm gemm(FakeGemm::Device::kGpu);
  BuildReport again;
  EXPECT_TRUE(backend_->Build(gemm, ptrs, pdl, &again).ok());
}

TEST_F(CudaBackendTest, RejectsNonKernelNodes) {
  ENCORE_SKIP_WITHOUT_GPU();
  OddRunner runner(OddRunner::Mode::kMemsetToo);
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create({{64, 128, 128}}, 1));
  gemm::LaunchPlan plan;
  ENCORE_ASSERT_OK(runner.Prepare(p.args(), &plan, gemm::KernelKind::kSimple));
  const gemm::LaunchPlan* ptrs[] = {&plan};
  const bool pdl[] = {false};
  BuildReport report;
  auto graph = backend_->Build(runner, ptrs, pdl, &report);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kUnimplemented) << graph.status();
  EXPECT_FALSE(report.instantiated);
}

TEST_F(CudaBackendTest, LaunchFailureInsideCaptureEndsCapture) {
  ENCORE_SKIP_WITHOUT_GPU();
  FakeGemm gemm(FakeGemm::Device::kGpu);
  ENCORE_ASSERT_OK_AND_ASSIGN(DeviceProblem p, DeviceProblem::Create({{64, 128, 128}}, 1));
  gemm::LaunchPlan plan;
  ENCORE_ASSERT_OK(gemm.Prepare(p.args(), &plan, gemm::KernelKind::kSimple));
  const gemm::LaunchPlan* ptrs[] = {&plan, &plan};
  const bool pdl[] = {false, true};
  gemm.FailNextLaunches(1);
  BuildReport report;
  auto graph = backend_->Build(gemm, ptrs, pdl, &report);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(report.capture_begun);
  EXPECT_FALSE(report.captured);
  BuildReport again;
  auto ok = backend_->Build(gemm, ptrs, pdl, &again);
  EXPECT_TRUE(ok.ok()) << ok.status();
}

TEST(CudaBackendNoGpuTest, CreateFailsCleanlyWithoutGpu) {
  if (CudaDeviceAvailable().ok()) GTEST_SKIP() << "a GPU is present";
  auto b = CreateCudaGraphBackend();
  EXPECT_FALSE(b.ok());
}

}  // namespace
}  // namespace encore::graph_cache

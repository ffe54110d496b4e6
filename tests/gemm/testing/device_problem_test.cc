#include "gemm/testing/device_problem.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cuda_utils/raii.h"
#include "gemm/problem.h"
#include "gemm/testing/host_problem.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace encore::gemm::testing {
namespace {

// Copies `bytes` at device address `src` back to the host.
std::vector<uint8_t> ReadBack(const void* src, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  if (bytes != 0) {
    EXPECT_EQ(cudaMemcpy(out.data(), src, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return out;
}

// Runs without a GPU: these paths make no CUDA call.
TEST(DeviceGroupedProblem, EmptyProblemAndBadGroupIndexNeedNoDevice) {
  absl::StatusOr<DeviceGroupedProblem> dev = DeviceGroupedProblem::Upload(HostGroupedProblem{});
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_TRUE(dev->problems().empty());
  EXPECT_EQ(dev->input_bytes(), 0u);
  EXPECT_EQ(dev->DownloadC(0, nullptr).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(dev->DownloadC(-1, nullptr).status().code(), absl::StatusCode::kOutOfRange);
  ENCORE_EXPECT_OK(dev->PoisonOutputs(nullptr));  // nothing to poison
}

TEST(DeviceGroupedProblem, InconsistentHostBuffersAreRejectedBeforeAnyCudaCall) {
  HostGroupedProblem host = MakeHostProblem({{64, 64, 128}}, Distribution::kGpuMode, 1);
  host.groups[0].sfb_blocked.pop_back();
  absl::StatusOr<DeviceGroupedProblem> dev = DeviceGroupedProblem::Upload(host);
  EXPECT_EQ(dev.status().code(), absl::StatusCode::kInvalidArgument) << dev.status();
  EXPECT_NE(dev.status().message().find("group 0"), absl::string_view::npos) << dev.status();
}

TEST(DeviceGroupedProblem, UploadPoisonDownloadRoundTrip) {
  ENCORE_SKIP_WITHOUT_GPU();
  const std::vector<Shape> shapes = {{96, 128, 256}, {0, 64, 128}, {1, 8, 64}, {300, 200, 320}};
  const HostGroupedProblem host = MakeHostProblem(shapes, Distribution::kFullRange, 5);
  absl::StatusOr<DeviceGroupedProblem> dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  ENCORE_ASSERT_OK(Validate(dev->args()));
  ASSERT_EQ(dev->problems().size(), shapes.size());

  size_t expected_input_bytes = 0;
  for (size_t g = 0; g < shapes.size(); ++g) {
    SCOPED_TRACE(g);
    const GroupProblem& p = dev->problems()[g];
    const HostGroup& hg = host.groups[g];
    EXPECT_EQ(p.m, shapes[g].m);
    EXPECT_EQ(p.n, shapes[g].n);
    EXPECT_EQ(p.k, shapes[g].k);
    EXPECT_EQ(ReadBack(p.a, hg.a.packed.size()), hg.a.packed);
    EXPECT_EQ(ReadBack(p.b, hg.b.packed.size()), hg.b.packed);
    EXPECT_EQ(ReadBack(p.sfa, hg.sfa_blocked.size()), hg.sfa_blocked);
    EXPECT_EQ(ReadBack(p.sfb, hg.sfb_blocked.size()), hg.sfb_blocked);
    if (shapes[g].m == 0) {
      EXPECT_EQ(p.a, nullptr);
      EXPECT_EQ(p.sfa, nullptr);
      EXPECT_EQ(p.c, nullptr);
    }
    expected_input_bytes +=
        hg.a.packed.size() + hg.b.packed.size() + hg.sfa_blocked.size() + hg.sfb_blocked.size();
  }
  EXPECT_EQ(dev->input_bytes(), expected_input_bytes);

  absl::StatusOr<Stream> stream = Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ENCORE_ASSERT_OK(dev->PoisonOutputs(stream->get()));
  for (size_t g = 0; g < shapes.size(); ++g) {
    SCOPED_TRACE(g);
    absl::StatusOr<std::vector<uint16_t>> c = dev->DownloadC(static_cast<int>(g), stream->get());
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ(c->size(), static_cast<size_t>(shapes[g].m) * shapes[g].n);
    for (uint16_t h : *c) ASSERT_EQ(h, 0xffff);
  }

  // Written values come back as written.
  const GroupProblem& p0 = dev->problems()[0];
  std::vector<uint16_t> pattern(static_cast<size_t>(p0.m) * p0.n);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint16_t>(i * 7);
  ASSERT_EQ(cudaMemcpy(p0.c, pattern.data(), pattern.size() * 2, cudaMemcpyHostToDevice),
            cudaSuccess);
  absl::StatusOr<std::vector<uint16_t>> c0 = dev->DownloadC(0, stream->get());
  ASSERT_TRUE(c0.ok()) << c0.status();
  EXPECT_EQ(*c0, pattern);

  // Moving the problem keeps the device pointers valid.
  DeviceGroupedProblem moved = *std::move(dev);
  EXPECT_EQ(moved.problems()[0].c, p0.c);
  absl::StatusOr<std::vector<uint16_t>> again = moved.DownloadC(0, stream->get());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, pattern);
}

}  // namespace
}  // namespace encore::gemm::testing

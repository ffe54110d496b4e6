#include "cuda_utils/device.h"

#include "absl/strings/match.h"
#include "cuda_utils/driver.h"
#include "cuda_utils/raii.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace encore {
namespace {

// Runs everywhere: without a GPU the status must say so plainly, never crash.
TEST(Device, NoDeviceIsACleanStatus) {
  absl::Status avail = CudaDeviceAvailable();
  absl::StatusOr<DeviceInfo> info = QueryDevice();
  absl::StatusOr<DriverApi> api = DriverApi::Load();
  if (avail.ok()) {
    ASSERT_TRUE(info.ok()) << info.status();
    ASSERT_TRUE(api.ok()) << api.status();
    EXPECT_NE(api->tensor_map_encode_tiled, nullptr);
  } else {
    EXPECT_EQ(avail.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StartsWith(avail.message(), "no CUDA device")) << avail;
    EXPECT_TRUE(absl::StartsWith(info.status().message(), "no CUDA device")) << info.status();
    EXPECT_TRUE(absl::StartsWith(api.status().message(), "no CUDA device")) << api.status();
  }
}

TEST(Device, FactsComeFromTheDevice) {
  ENCORE_SKIP_WITHOUT_GPU();
  absl::StatusOr<DeviceInfo> info = QueryDevice();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_GT(info->sm_count, 0);
  EXPECT_GT(info->l2_bytes, 0);
  EXPECT_GT(info->max_smem_optin_per_block, 48 * 1024);
  EXPECT_GE(info->max_smem_per_sm, info->max_smem_optin_per_block);
  EXPECT_GE(info->reserved_smem_per_block, 0);
  EXPECT_LT(info->reserved_smem_per_block, info->max_smem_per_sm);
  EXPECT_GE(info->cc_major, 7);
}

TEST(Raii, OwnersCreateMoveAndRelease) {
  ENCORE_SKIP_WITHOUT_GPU();
  absl::StatusOr<Stream> s = Stream::Create();
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<Event> e = Event::Create();
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<DeviceBuffer> b = DeviceBuffer::Create(4096);
  ASSERT_TRUE(b.ok()) << b.status();
  DeviceBuffer moved = std::move(*b);
  EXPECT_EQ(b->get(), nullptr);
  EXPECT_EQ(moved.size(), 4096u);
  ASSERT_EQ(cudaMemsetAsync(moved.get(), 0x5a, moved.size(), s->get()), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e->get(), s->get()), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(e->get()), cudaSuccess);
  unsigned char host[16];
  ASSERT_EQ(cudaMemcpy(host, moved.get(), 16, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[15], 0x5a);
  absl::StatusOr<Graph> g = Graph::Create();
  ASSERT_TRUE(g.ok()) << g.status();
  cudaGraphNode_t node;
  ASSERT_EQ(cudaGraphAddEmptyNode(&node, g->get(), nullptr, 0), cudaSuccess);
  absl::StatusOr<GraphExec> x = GraphExec::Instantiate(g->get());
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_EQ(cudaGraphLaunch(x->get(), s->get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s->get()), cudaSuccess);
}

}  // namespace
}  // namespace encore

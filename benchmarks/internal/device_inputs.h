// Benchmark inputs generated on the GPU: many distinct NVFP4 input sets (GPU MODE distribution:
// value bytes & 0xBB, scales 1.0 or 2.0), so timed loops can rotate through more bytes than the
// L2 holds, and an L2 flusher sized from the device.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(auto sets, encore::bench::InputSets::Create(shapes, 15, stream));
//   encore::gemm::GroupedGemmArguments args = sets.args(i);  // set i of 15
//   ENCORE_ASSIGN_OR_RETURN(auto flusher, encore::bench::L2Flusher::Create());
//   ENCORE_RETURN_IF_ERROR(flusher.Flush(stream));
#ifndef ENCORE_BENCHMARKS_INTERNAL_DEVICE_INPUTS_H_
#define ENCORE_BENCHMARKS_INTERNAL_DEVICE_INPUTS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "cuda_utils/raii.h"
#include "gemm/problem.h"

namespace encore::bench {

struct GroupShape {
  int m = 0;
  int n = 0;
  int k = 0;
};

class InputSets {
 public:
  // `count` distinct input sets of `shapes` (A, B, SFA, SFB, C per group), filled on `stream`
  // with seed-dependent bytes; synchronizes once at the end.
  [[nodiscard]] static absl::StatusOr<InputSets> Create(const std::vector<GroupShape>& shapes,
                                                        int count, cudaStream_t stream,
                                                        uint64_t seed = 1);
  int count() const { return static_cast<int>(sets_.size()); }
  gemm::GroupedGemmArguments args(int i) const {
    return gemm::GroupedGemmArguments{absl::MakeConstSpan(sets_[i]), nullptr};
  }
  const std::vector<gemm::GroupProblem>& problems(int i) const { return sets_[i]; }
  size_t bytes_per_set() const { return bytes_per_set_; }
  double flops_per_set() const { return flops_per_set_; }

 private:
  std::vector<DeviceBuffer> buffers_;
  std::vector<std::vector<gemm::GroupProblem>> sets_;
  size_t bytes_per_set_ = 0;
  double flops_per_set_ = 0;
};

// Evicts the L2 by writing a buffer of twice the device's L2 size.
class L2Flusher {
 public:
  [[nodiscard]] static absl::StatusOr<L2Flusher> Create();
  [[nodiscard]] absl::Status Flush(cudaStream_t stream) const;

 private:
  DeviceBuffer buffer_;
};

// An empty kernel, for launch-overhead floors.
const void* EmptyKernel();

// Launches a one-thread kernel that spins for `us` microseconds (by %globaltimer), so that the
// host can enqueue a whole batch before the GPU reaches it: events then time GPU work alone.
[[nodiscard]] absl::Status LaunchHold(double us, cudaStream_t stream);

}  // namespace encore::bench

#endif  // ENCORE_BENCHMARKS_INTERNAL_DEVICE_INPUTS_H_

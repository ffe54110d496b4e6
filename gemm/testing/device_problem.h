// A HostGroupedProblem uploaded to the GPU, with helpers to poison and read back outputs.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(auto dev, encore::gemm::testing::DeviceGroupedProblem::Upload(host));
//   ENCORE_RETURN_IF_ERROR(dev.PoisonOutputs(stream));         // C filled with 0xFFFF (NaN)
//   ENCORE_RETURN_IF_ERROR(gemm->Run(dev.args(), stream));
//   ENCORE_ASSIGN_OR_RETURN(std::vector<uint16_t> c0, dev.DownloadC(0, stream));
#ifndef ENCORE_GEMM_TESTING_DEVICE_PROBLEM_H_
#define ENCORE_GEMM_TESTING_DEVICE_PROBLEM_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "cuda_utils/raii.h"
#include "gemm/problem.h"
#include "gemm/testing/host_problem.h"

namespace encore::gemm::testing {

class DeviceGroupedProblem {
 public:
  // One device buffer per operand per group; sizes exactly as gemm/problem.h defines.
  [[nodiscard]] static absl::StatusOr<DeviceGroupedProblem> Upload(const HostGroupedProblem& host);

  // The arguments pointing at this problem's buffers (valid while *this lives).
  GroupedGemmArguments args() const {
    return GroupedGemmArguments{absl::MakeConstSpan(problems_), nullptr};
  }
  const std::vector<GroupProblem>& problems() const { return problems_; }

  // Fills every C with 0xFF bytes (fp16 NaN) so unwritten outputs fail comparisons.
  [[nodiscard]] absl::Status PoisonOutputs(cudaStream_t stream) const;
  // Synchronizes `stream`, then copies group g's C (m × n fp16 bits) to the host.
  [[nodiscard]] absl::StatusOr<std::vector<uint16_t>> DownloadC(int g, cudaStream_t stream) const;

  // Total device bytes of inputs (A, B, SFA, SFB) — used by benchmarks to size rotations.
  size_t input_bytes() const { return input_bytes_; }

 private:
  std::vector<DeviceBuffer> buffers_;
  std::vector<GroupProblem> problems_;
  size_t input_bytes_ = 0;
};

}  // namespace encore::gemm::testing

#endif  // ENCORE_GEMM_TESTING_DEVICE_PROBLEM_H_

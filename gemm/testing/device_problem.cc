#include "gemm/testing/device_problem.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"
#include "gemm/problem.h"
#include "gemm/testing/host_problem.h"

namespace encore::gemm::testing {
namespace {

// Allocates `bytes` and copies `host` (which holds exactly `bytes`, or is null for outputs) into
// it. Zero bytes: no allocation, a null buffer.
absl::StatusOr<DeviceBuffer> MakeBuffer(size_t bytes, const void* host, size_t g,
                                        absl::string_view name) {
  ENCORE_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Create(bytes));
  if (bytes != 0 && host != nullptr) {
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemcpy(buffer.get(), host, bytes, cudaMemcpyHostToDevice),
        absl::StrCat("cudaMemcpy(group ", g, " ", name, ", ", bytes, " bytes)"));
  }
  return buffer;
}

}  // namespace

absl::StatusOr<DeviceGroupedProblem> DeviceGroupedProblem::Upload(const HostGroupedProblem& host) {
  DeviceGroupedProblem dev;
  dev.problems_.reserve(host.groups.size());
  dev.buffers_.reserve(host.groups.size() * 5);
  for (size_t g = 0; g < host.groups.size(); ++g) {
    const HostGroup& hg = host.groups[g];
    const Shape& s = hg.shape;
    const size_t a_bytes = static_cast<size_t>(s.m) * static_cast<size_t>(s.k) / 2;
    const size_t b_bytes = static_cast<size_t>(s.n) * static_cast<size_t>(s.k) / 2;
    const size_t sfa_bytes = BlockedScaleBytes(s.m, s.k);
    const size_t sfb_bytes = BlockedScaleBytes(s.n, s.k);
    const size_t c_bytes = static_cast<size_t>(s.m) * static_cast<size_t>(s.n) * sizeof(uint16_t);
    if (hg.a.packed.size() != a_bytes || hg.b.packed.size() != b_bytes ||
        hg.sfa_blocked.size() != sfa_bytes || hg.sfb_blocked.size() != sfb_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", g, ": host buffers do not match the shape m = ", s.m,
                       ", n = ", s.n, ", k = ", s.k));
    }
    ENCORE_ASSIGN_OR_RETURN(DeviceBuffer a, MakeBuffer(a_bytes, hg.a.packed.data(), g, "a"));
    ENCORE_ASSIGN_OR_RETURN(DeviceBuffer b, MakeBuffer(b_bytes, hg.b.packed.data(), g, "b"));
    ENCORE_ASSIGN_OR_RETURN(DeviceBuffer sfa,
                            MakeBuffer(sfa_bytes, hg.sfa_blocked.data(), g, "sfa"));
    ENCORE_ASSIGN_OR_RETURN(DeviceBuffer sfb,
                            MakeBuffer(sfb_bytes, hg.sfb_blocked.data(), g, "sfb"));
    ENCORE_ASSIGN_OR_RETURN(DeviceBuffer c, MakeBuffer(c_bytes, nullptr, g, "c"));
    GroupProblem p;
    p.a = a.get();
    p.b = b.get();
    p.sfa = sfa.get();
    p.sfb = sfb.get();
    p.c = c.get();
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    dev.problems_.push_back(p);
    dev.input_bytes_ += a_bytes + b_bytes + sfa_bytes + sfb_bytes;
    dev.buffers_.push_back(std::move(a));
    dev.buffers_.push_back(std::move(b));
    dev.buffers_.push_back(std::move(sfa));
    dev.buffers_.push_back(std::move(sfb));
    dev.buffers_.push_back(std::move(c));
  }
  return dev;
}

absl::Status DeviceGroupedProblem::PoisonOutputs(cudaStream_t stream) const {
  for (size_t g = 0; g < problems_.size(); ++g) {
    const GroupProblem& p = problems_[g];
    const size_t bytes = static_cast<size_t>(p.m) * static_cast<size_t>(p.n) * sizeof(uint16_t);
    if (bytes == 0) continue;
    ENCORE_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(p.c, 0xff, bytes, stream),
                                absl::StrCat("cudaMemsetAsync(poison group ", g, " c)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint16_t>> DeviceGroupedProblem::DownloadC(int g,
                                                                      cudaStream_t stream) const {
  if (g < 0 || static_cast<size_t>(g) >= problems_.size()) {
    return absl::OutOfRangeError(
        absl::StrCat("DownloadC: group ", g, " of ", problems_.size(), " groups"));
  }
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream),
                              absl::StrCat("cudaStreamSynchronize(before DownloadC(", g, "))"));
  const GroupProblem& p = problems_[g];
  std::vector<uint16_t> c(static_cast<size_t>(p.m) * static_cast<size_t>(p.n));
  if (c.empty()) return c;
  ENCORE_RETURN_IF_CUDA_ERROR(
      cudaMemcpy(c.data(), p.c, c.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost),
      absl::StrCat("cudaMemcpy(group ", g, " c to host)"));
  return c;
}

}  // namespace encore::gemm::testing

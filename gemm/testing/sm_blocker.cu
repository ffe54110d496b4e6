#include "gemm/testing/sm_blocker.h"

#include <cuda_runtime.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "cuda_utils/status.h"

namespace encore::gemm::testing {
namespace {

__global__ void HoldSm(volatile unsigned int* flags) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  smem[0] = 1;  // the allocation is what holds the SM
  atomicAdd(const_cast<unsigned int*>(flags + 1), 1u);
  __threadfence_system();
  while (flags[0] == 0) __nanosleep(1000);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SmBlocker>> SmBlocker::Start(int ctas, cudaStream_t stream) {
  if (ctas <= 0) return absl::InvalidArgumentError(absl::StrCat("ctas = ", ctas, " must be > 0"));
  int device = 0, optin = 0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGetDevice(&device), "cudaGetDevice");
  ENCORE_RETURN_IF_CUDA_ERROR(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
      "cudaDeviceGetAttribute (opt-in shared memory)");
  ENCORE_RETURN_IF_CUDA_ERROR(
      cudaFuncSetAttribute(HoldSm, cudaFuncAttributeMaxDynamicSharedMemorySize, optin),
      "cudaFuncSetAttribute (blocker shared memory)");
  void* host = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaHostAlloc(&host, 2 * sizeof(unsigned int), cudaHostAllocMapped),
                              "cudaHostAlloc (blocker flags)");
  auto* flags = static_cast<volatile unsigned int*>(host);
  flags[0] = 0;
  flags[1] = 0;
  std::unique_ptr<SmBlocker> b(new SmBlocker(ctas, stream, flags));
  void* device_flags = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaHostGetDevicePointer(&device_flags, host, 0),
                              "cudaHostGetDevicePointer (blocker flags)");
  HoldSm<<<ctas, 32, optin, stream>>>(static_cast<volatile unsigned int*>(device_flags));
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGetLastError(), "blocker launch");
  return b;
}

SmBlocker::SmBlocker(int ctas, cudaStream_t stream, volatile unsigned int* host)
    : ctas_(ctas), stream_(stream), host_(host) {}

SmBlocker::~SmBlocker() {
  Release();
  (void)cudaStreamSynchronize(stream_);
  (void)cudaFreeHost(const_cast<unsigned int*>(host_));
}

absl::Status SmBlocker::WaitResident(absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (host_[1] < static_cast<unsigned int>(ctas_)) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(static_cast<unsigned int>(host_[1]), " of ", ctas_,
                       " blocker CTAs running after ", absl::FormatDuration(timeout)));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return absl::OkStatus();
}

void SmBlocker::Release() { host_[0] = 1; }

}  // namespace encore::gemm::testing

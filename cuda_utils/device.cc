#include "cuda_utils/device.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "cuda_utils/status.h"

namespace encore {

absl::Status CudaDeviceAvailable() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device: cudaGetDeviceCount failed: ", cudaGetErrorString(err), " (",
                     cudaGetErrorName(err), ")"));
  }
  if (count == 0) return absl::FailedPreconditionError("no CUDA device: cudaGetDeviceCount() = 0");
  return absl::OkStatus();
}

absl::StatusOr<DeviceInfo> QueryDevice(int ordinal) {
  ENCORE_RETURN_IF_ERROR(CudaDeviceAvailable());
  if (ordinal < 0) ENCORE_RETURN_IF_CUDA_ERROR(cudaGetDevice(&ordinal), "cudaGetDevice");
  DeviceInfo info;
  info.ordinal = ordinal;
  cudaDeviceProp prop{};
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  info.max_smem_optin_per_block = static_cast<int>(prop.sharedMemPerBlockOptin);
  info.max_smem_per_sm = static_cast<int>(prop.sharedMemPerMultiprocessor);
  info.reserved_smem_per_block = static_cast<int>(prop.reservedSharedMemPerBlock);
  ENCORE_RETURN_IF_CUDA_ERROR(cudaDriverGetVersion(&info.driver_version), "cudaDriverGetVersion");
  ENCORE_RETURN_IF_CUDA_ERROR(cudaRuntimeGetVersion(&info.runtime_version),
                              "cudaRuntimeGetVersion");
  return info;
}

}  // namespace encore

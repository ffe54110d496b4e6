// Facts about a CUDA device read from the device itself (never literals), and a clean
// "no CUDA device" status on machines without one.
//
// Example:
//   absl::StatusOr<encore::DeviceInfo> info = encore::QueryDevice();
//   if (!info.ok()) { std::cerr << info.status() << "\n"; return 1; }  // "no CUDA device: ..."
//   int grid = info->sm_count;
#ifndef ENCORE_CUDA_UTILS_DEVICE_H_
#define ENCORE_CUDA_UTILS_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"

namespace encore {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int max_smem_optin_per_block = 0;  // bytes a block may use after cudaFuncSetAttribute
  int max_smem_per_sm = 0;
  int reserved_smem_per_block = 0;  // shared memory the runtime keeps for itself in every block
  int driver_version = 0;  // e.g. 13000
  int runtime_version = 0;

  int compute_capability() const { return cc_major * 10 + cc_minor; }
};

// Reads the facts of `ordinal` (-1: the current device). Without a usable device (no GPU, no
// driver) returns FailedPrecondition whose message starts with "no CUDA device".
[[nodiscard]] absl::StatusOr<DeviceInfo> QueryDevice(int ordinal = -1);

// OK when at least one CUDA device is usable; otherwise the "no CUDA device: <reason>" status.
// Tests use it to GTEST_SKIP with the reason.
[[nodiscard]] absl::Status CudaDeviceAvailable();

}  // namespace encore

#endif  // ENCORE_CUDA_UTILS_DEVICE_H_

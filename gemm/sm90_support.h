// Which GPUs the built kernels run on, checked before anything is launched.
//
// Example:
//   absl::Status s = encore::gemm::CheckKernelsSupport(8, 0);
//   // FailedPrecondition: "compute capability 8.0 has no NVFP4 grouped GEMM kernel; built for 9.0"
#ifndef ENCORE_GEMM_SM90_SUPPORT_H_
#define ENCORE_GEMM_SM90_SUPPORT_H_

#include "absl/status/status.h"

namespace encore::gemm {

// OK for compute capability 9.0 (sm_90a code is not forward compatible: not 9.x > 0, not 10.x);
// otherwise FailedPrecondition naming the capability found and the ones supported.
[[nodiscard]] absl::Status CheckKernelsSupport(int cc_major, int cc_minor);

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_SM90_SUPPORT_H_

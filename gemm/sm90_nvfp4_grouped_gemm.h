// Host-side handles on the sm90 NVFP4 grouped GEMM kernels (compiled in
// sm90_nvfp4_grouped_gemm.cu): entry points per (kernel kind, group capacity) and their one-time
// configuration. Plain CUDA types only, so the .cu needs no Abseil.
#ifndef ENCORE_GEMM_SM90_NVFP4_GROUPED_GEMM_H_
#define ENCORE_GEMM_SM90_NVFP4_GROUPED_GEMM_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"

namespace encore::gemm::sm90 {

// Group capacities the kernels are built for (the parameter block holds that many groups).
inline constexpr int kGroupCapacities[] = {8, 64};
inline int GroupCapacityFor(int num_groups) { return num_groups <= 8 ? 8 : 64; }

// nullptr for an unsupported (kind, capacity); kind must be kSimple or kPersistent.
const void* KernelFunction(KernelKind kind, int group_capacity);
size_t ParamsBytes(int group_capacity);

// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) for every kernel on the current device; the
// first failing call's error.
cudaError_t ConfigureKernels();

}  // namespace encore::gemm::sm90

#endif  // ENCORE_GEMM_SM90_NVFP4_GROUPED_GEMM_H_

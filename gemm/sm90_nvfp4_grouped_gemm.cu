// Instantiates the sm90 NVFP4 grouped GEMM kernels and exposes their entry points.
#include "gemm/sm90_nvfp4_grouped_gemm.h"

#include "gemm/kernels/sm90_nvfp4_grouped_gemm.cuh"
#include "gemm/launch.h"

namespace encore::gemm::sm90 {

static_assert(sizeof(Params<64>) <= kMaxParamBytes, "parameter block too large for 64 groups");
static_assert(TileShape::kSmemBytes <= 232448, "shared memory over the sm_90 opt-in limit");

const void* KernelFunction(KernelKind kind, int group_capacity) {
#define ENCORE_SM90_KERNEL(G)                                                                      \
  switch (kind) {                                                                                  \
    case KernelKind::kSimple:                                                                      \
      return reinterpret_cast<const void*>(&Sm90Nvfp4GroupedGemmKernel<G, Schedule::kSimple>);     \
    case KernelKind::kPersistent:                                                                  \
      return reinterpret_cast<const void*>(&Sm90Nvfp4GroupedGemmKernel<G, Schedule::kPersistent>); \
    case KernelKind::kStreamK:                                                                     \
      return reinterpret_cast<const void*>(&Sm90Nvfp4GroupedGemmKernel<G, Schedule::kStreamK>);    \
    default:                                                                                       \
      return nullptr;                                                                              \
  }
  switch (group_capacity) {
    case 8:
      ENCORE_SM90_KERNEL(8)
    case 64:
      ENCORE_SM90_KERNEL(64)
    default:
      return nullptr;
  }
#undef ENCORE_SM90_KERNEL
}

size_t ParamsBytes(int group_capacity) {
  return group_capacity == 8 ? sizeof(Params<8>) : sizeof(Params<64>);
}

cudaError_t ConfigureKernels() {
  for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent, KernelKind::kStreamK}) {
    for (int cap : kGroupCapacities) {
      cudaError_t err =
          cudaFuncSetAttribute(KernelFunction(kind, cap),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, TileShape::kSmemBytes);
      if (err != cudaSuccess) return err;
    }
  }
  return cudaSuccess;
}

}  // namespace encore::gemm::sm90

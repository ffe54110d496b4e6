// Instantiates the sm90 NVFP4 grouped GEMM kernels that convert tokens in kernel, and exposes the
// entry points of both token sources (the pre-pass ones: sm90_nvfp4_grouped_gemm_prepass.cu).
#include "gemm/sm90_nvfp4_grouped_gemm.h"

#include "gemm/kernels/internal/kernel_table.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm.cuh"
#include "gemm/launch.h"

namespace encore::gemm::sm90 {

static_assert(sizeof(Params<64>) <= kMaxParamBytes, "parameter block too large for 64 groups");
static_assert(kMaxSmemBytes <= kSm90SmemOptinBytes, "shared memory over the sm_90 opt-in limit");

namespace internal {
const void* InKernelFunction(KernelKind kind, int group_capacity) {
  return KernelTable<TokenSource::kInKernel, kStreamKBuilt>(kind, group_capacity);
}
}  // namespace internal

#if ENCORE_SM90_EXP_STAMPS
cudaError_t SetStampLog(StampLog* device_log) {
  cudaError_t err = cudaMemcpyToSymbol(g_stamp_log, &device_log, sizeof(device_log));
  return err != cudaSuccess ? err : internal::SetPrepassUnitStampLog(device_log);
}
#endif

#if ENCORE_SM90_EXP_WAITS
cudaError_t ReadWaitCounters(uint64_t (&counters)[kWaitCounters]) {
  uint64_t mine[kWaitCounters] = {};
  cudaError_t err = TakeUnitWaitCounters(mine);
  if (err != cudaSuccess) return err;
  err = internal::ReadPrepassUnitWaitCounters(counters);
  for (int i = 0; i < kWaitCounters; ++i) counters[i] += mine[i];
  return err;
}
#endif

const void* KernelFunction(KernelKind kind, int group_capacity, TokenSource source, bool fused,
                           bool streamed, bool bound) {
  if (source == TokenSource::kPrepass) {
    return internal::PrepassKernelFunction(kind, group_capacity, fused, streamed, bound);
  }
  return fused || streamed || bound ? nullptr : internal::InKernelFunction(kind, group_capacity);
}

size_t ParamsBytes(int group_capacity) {
  return group_capacity == 8 ? sizeof(Params<8>) : sizeof(Params<64>);
}

cudaError_t ConfigureKernels(int prepass_smem_bytes, int bound_prepass_smem_bytes) {
  for (TokenSource source : {TokenSource::kInKernel, TokenSource::kPrepass}) {
    const int smem = source == TokenSource::kPrepass ? Pipeline<TokenSource::kPrepass>::kSmemBytes
                                                     : Pipeline<TokenSource::kInKernel>::kSmemBytes;
    for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent, KernelKind::kStreamK}) {
      for (int cap : kGroupCapacities) {
        for (bool fused : {false, true}) {
          for (bool streamed : {false, true}) {
            for (bool bound : {false, true}) {
              const void* f = KernelFunction(kind, cap, source, fused, streamed, bound);
              if (f == nullptr) continue;  // not built (stream-K: kStreamKBuilt, the .cu NOTES;
                                           // fused; streamed; bound)
              cudaError_t err =
                  cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
              if (err != cudaSuccess) return err;
            }
          }
        }
      }
    }
  }
  // The pre-pass's own shared memory is static (kPrepassStaticSmemBytes: the staging of
  // ENCORE_SM90_PREPASS_STAGE; the bound pre-pass's kBoundPrepassStaticSmemBytes); a plan may pad
  // its blocks with dynamic shared memory (LaunchPlan::pre), at most this much.
  for (int cap : kGroupCapacities) {
    for (bool bound : {false, true}) {
      const cudaError_t err = cudaFuncSetAttribute(
          PrepassFunction(cap, bound), cudaFuncAttributeMaxDynamicSharedMemorySize,
          bound ? bound_prepass_smem_bytes : prepass_smem_bytes);
      if (err != cudaSuccess) return err;
    }
  }
  return cudaSuccess;
}

}  // namespace encore::gemm::sm90

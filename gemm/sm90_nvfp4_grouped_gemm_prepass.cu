// Instantiates the sm90 NVFP4 grouped GEMM kernels that read fp16 tokens from the pre-pass
// workspace (TokenSource::kPrepass) and the token pre-pass itself (a separate translation unit,
// so the two kernel families compile in parallel).
#include "gemm/kernels/internal/kernel_table.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm.cuh"
#include "gemm/kernels/sm90_nvfp4_token_prepass.cuh"
#include "gemm/launch.h"
#include "gemm/sm90_nvfp4_grouped_gemm.h"

namespace encore::gemm::sm90 {

static_assert(sizeof(PrepassParams<64>) <= kMaxPrepassParamBytes,
              "pre-pass parameter block too large for 64 groups");
static_assert(sizeof(BoundPrepassParams<64>) <= kMaxPrepassParamBytes,
              "bound pre-pass parameter block too large for 64 groups");

namespace internal {
// NOTES: stream-K kernels read pre-pass tokens where kStreamKPrepass (the default tile; run 60:
// one 128-row tile with K = 7168 in 23.0 us). The wide build leaves that instantiation out (it
// spilled 56 bytes there before the one-call-site tile walk): its stream-K plans convert tokens
// in kernel.
const void* PrepassKernelFunction(KernelKind kind, int group_capacity, bool fused, bool streamed,
                                  bool bound) {
  return KernelTable<TokenSource::kPrepass, kStreamKPrepass>(kind, group_capacity, fused,
                                                             streamed, bound);
}
#if ENCORE_SM90_EXP_STAMPS
cudaError_t SetPrepassUnitStampLog(StampLog* device_log) {
  return cudaMemcpyToSymbol(g_stamp_log, &device_log, sizeof(device_log));
}
#endif
#if ENCORE_SM90_EXP_WAITS
cudaError_t ReadPrepassUnitWaitCounters(uint64_t (&counters)[kWaitCounters]) {
  return TakeUnitWaitCounters(counters);
}
#endif
}  // namespace internal

const void* PrepassFunction(int group_capacity, bool bound) {
  switch (group_capacity) {
    case 8:
      return bound ? reinterpret_cast<const void*>(&Sm90Nvfp4BoundPrepassKernel<8>)
                   : reinterpret_cast<const void*>(&Sm90Nvfp4TokenPrepassKernel<8>);
    case 64:
      return bound ? reinterpret_cast<const void*>(&Sm90Nvfp4BoundPrepassKernel<64>)
                   : reinterpret_cast<const void*>(&Sm90Nvfp4TokenPrepassKernel<64>);
    default:
      return nullptr;
  }
}

}  // namespace encore::gemm::sm90

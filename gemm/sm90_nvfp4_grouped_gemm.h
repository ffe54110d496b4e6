// Host-side handles on the sm90 NVFP4 grouped GEMM kernels (compiled in
// sm90_nvfp4_grouped_gemm.cu and sm90_nvfp4_grouped_gemm_prepass.cu): entry points per (kernel
// kind, group capacity, token source), the token pre-pass, and their one-time configuration.
// Plain CUDA types only, so the .cu files need no Abseil.
//
// Example:
//   const void* f = sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kPrepass);
//   const void* pre = sm90::PrepassFunction(8);  // launched right before f, same stream
#ifndef ENCORE_GEMM_SM90_NVFP4_GROUPED_GEMM_H_
#define ENCORE_GEMM_SM90_NVFP4_GROUPED_GEMM_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gemm/kernels/internal/stamp_log.h"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"

namespace encore::gemm::sm90 {

// Group capacities the kernels are built for (the parameter block holds that many groups).
inline constexpr int kGroupCapacities[] = {8, 64};
inline int GroupCapacityFor(int num_groups) { return num_groups <= 8 ? 8 : 64; }

// nullptr for an unsupported (kind, capacity, source, fused, streamed); kind must be kSimple,
// kPersistent or kStreamK (stream-K where kStreamKBuilt; with TokenSource::kPrepass only where
// kStreamKPrepass); `fused`: the token pre-pass inside the kernel (TokenSource::kPrepass, kSimple
// or kPersistent); `streamed`: the simple kernel whose <= 128-row token tiles stream on a 4-stage
// token ring (TokenSource::kPrepass, unfused kSimple; not in every manual build).
// `bound`: a bound plan's GEMM (the kernel's kBound; TokenSource::kPrepass, neither fused nor
// streamed).
const void* KernelFunction(KernelKind kind, int group_capacity, TokenSource source,
                           bool fused = false, bool streamed = false, bool bound = false);
// The token pre-pass kernel (PrepassParams<group_capacity>; `bound`: a bound plan's,
// BoundPrepassParams<group_capacity>, one block more: its block 0 fills the binding block);
// nullptr for other capacities.
const void* PrepassFunction(int group_capacity, bool bound = false);
size_t ParamsBytes(int group_capacity);

// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) for every kernel on the current device; the
// first failing call's error.
cudaError_t ConfigureKernels(int prepass_smem_bytes = 0, int bound_prepass_smem_bytes = 0);

#if ENCORE_SM90_EXP_STAMPS
// Measurement only (the manual build _exp_stamps): points both kernel translation units at a
// device-resident log (nullptr: stop stamping).
cudaError_t SetStampLog(StampLog* device_log);
#endif
#if ENCORE_SM90_EXP_WAITS
// Measurement only (the manual build _exp_waits): the consumers' cycle counters (stamp_log.h
// WaitCounter) summed over both kernel translation units since the last read, then reset.
cudaError_t ReadWaitCounters(uint64_t (&counters)[kWaitCounters]);
#endif

namespace internal {
// One table per token source, each defined in the .cu that instantiates those kernels.
const void* InKernelFunction(KernelKind kind, int group_capacity);
const void* PrepassKernelFunction(KernelKind kind, int group_capacity, bool fused, bool streamed,
                                  bool bound);
#if ENCORE_SM90_EXP_STAMPS
cudaError_t SetPrepassUnitStampLog(StampLog* device_log);
#endif
#if ENCORE_SM90_EXP_WAITS
cudaError_t ReadPrepassUnitWaitCounters(uint64_t (&counters)[kWaitCounters]);
#endif
}  // namespace internal

}  // namespace encore::gemm::sm90

#endif  // ENCORE_GEMM_SM90_NVFP4_GROUPED_GEMM_H_

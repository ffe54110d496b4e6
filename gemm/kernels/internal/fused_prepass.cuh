// The token pre-pass fused into the sm90 GEMM kernel (Params::fused_prepass): warps 1-3 of every
// CTA convert a share of the pre-pass units into the stream's fp16 workspace, then one grid-wide
// barrier, after which the token producer's TMA loads may read any CTA's rows.
//
// Example (inside the kernel, warps 1-3 of a pre-pass kernel, t = tid - 32):
//   if (p.fused_prepass) FusedPrepass(p, t);   // then warp 1 lane 0 loads token tiles
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/kernels/sm90_nvfp4_token_prepass.cuh"

namespace encore::gemm::sm90 {

inline constexpr int kFusedPrepassThreads = 96;  // warps 1-3
inline constexpr uint32_t kFusedPrepassBarrier = 4;  // named barrier (1-2: epilogue, 3: stream-K)

// NOTES: a sense-reversing grid barrier. Every CTA reads the generation before it arrives (it
// cannot advance before this CTA's own arrival), the last arriver resets the count and then
// advances the generation (release), the others spin on it (acquire). Nothing else touches the
// words, and the next launch on the stream arrives only after this one completed (it converts
// after griddepcontrol.wait), so no reset is needed between launches. Requires every CTA of the
// grid to be resident at once: the runner fuses only plans with grid <= SM count at one CTA per SM.
// Release/acquire: the 96 converting threads' stores, bar.sync, thread 0's fence + atomic; the
// waiters' acquire load; both sides fence the async proxy (the tokens are then read by TMA).
__device__ __forceinline__ void GridBarrier(uint32_t* words) {
  const uint32_t gen = LdAcquireGpu(words + 1);
  __threadfence();
  const uint32_t arrived = atomicAdd(words, 1u);
  if (arrived == gridDim.x - 1) {
    atomicExch(words, 0u);
    __threadfence();
    atomicAdd(words + 1, 1u);
  } else {
    while (LdAcquireGpu(words + 1) == gen) {
    }
  }
  FenceProxyAsyncGlobal();
}

// Thread t (0..95) of warps 1-3: units b * 24 + t / 4, stepping by gridDim.x * 24; returns after
// the grid barrier (only t == 0 waits for it: the token producer is warp 1 lane 0).
template <int kGroups>
__device__ __forceinline__ void FusedPrepass(const Params<kGroups>& p, int t) {
  constexpr int kUnitsPerPass = kFusedPrepassThreads / kPrepassThreadsPerUnit;
  const long long stride = static_cast<long long>(gridDim.x) * kUnitsPerPass;
  for (long long u = static_cast<long long>(blockIdx.x) * kUnitsPerPass + t / 4; u < p.pre.units;
       u += stride) {
    PrepassUnit(p.pre, u, t % 4);
  }
  FenceProxyAsyncGlobal();
  NamedBarrierSync(kFusedPrepassBarrier, kFusedPrepassThreads);
  if (t == 0) GridBarrier(p.grid_sync);
}

}  // namespace encore::gemm::sm90

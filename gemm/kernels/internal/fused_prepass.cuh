// The token pre-pass fused into the sm90 GEMM kernel (Params::fused_prepass): every warp but the
// weight producer's (warps 1-11) converts a share of the pre-pass work into the stream's fp16
// workspace while warp 0 already loads weights, then one grid-wide barrier, after which the token
// producer's TMA loads may read any CTA's rows.
//
// Example (inside the kernel, before the roles' register reallocation, t = tid - 32):
//   if (p.fused_prepass && warp != 0) FusedPrepass(p, t, role == WarpRole::kConsumer);
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"  // kStreamKBarrier
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/kernels/sm90_nvfp4_token_prepass.cuh"

namespace encore::gemm::sm90 {

// Converting threads per CTA (warps 1-11) and the jobs (one thread's share of a unit) each has in
// flight at once: run 45's version (warps 1-3, one job at a time) lost 3-11% to the latency of
// each job's loads.
inline constexpr int kFusedPrepassThreads = TileShape::kThreads - 32;
inline constexpr int kFusedPrepassBatch = 4;
// Named barrier after the epilogues' (1 .. kConsumerWgs) and stream-K's (kStreamKBarrier).
inline constexpr uint32_t kFusedPrepassBarrier = kStreamKBarrier + 1;

// NOTES: a grid barrier on one counter (grid_sync[0]) to which every launch adds exactly
// kGridBarrierSpan: CTA 0 adds kGridBarrierSpan - (gridDim.x - 1), every other CTA 1. The counter
// is a multiple of the span between launches (zeroed at allocation; the next launch on the stream
// arrives only after this one completed: it converts after griddepcontrol.wait), so a CTA that
// reads it before arriving knows the launch's target (base + span) without an atomic round trip:
// arrive = one red.release, wait = acquire loads until the target (wrap-around safe). Requires
// every CTA of the grid to be resident at once: the runner fuses only plans with grid <= SM count
// at one CTA per SM. Release/acquire: each converting thread's stores and async-proxy fence, the
// named barrier, thread 0's red.release (cumulative); the waiters' acquire load and async-proxy
// fence (the tokens are then read by TMA).
inline constexpr uint32_t kGridBarrierSpan = 1u << 20;

__device__ __forceinline__ uint32_t GridBarrierTarget(const uint32_t* count) {
  return (LdAcquireGpu(count) & ~(kGridBarrierSpan - 1)) + kGridBarrierSpan;
}

__device__ __forceinline__ void GridBarrierArriveAndWait(uint32_t* count, uint32_t target) {
  RedReleaseGpuAdd(count, blockIdx.x == 0 ? kGridBarrierSpan - (gridDim.x - 1) : 1u);
  while (static_cast<int32_t>(LdAcquireGpu(count) - target) < 0) {
  }
  FenceProxyAsyncGlobal();
}

// Thread t (0..351) of warps 1-11: jobs (unit, quarter) = j, j + T, ... with j = blockIdx.x * 352
// + t and T = gridDim.x * 352, kFusedPrepassBatch loaded before any is converted. The consumer
// warps (`arrive_only`) leave after their stores are fenced; warps 1-3 wait for them and thread 0
// (the token producer, warp 1 lane 0) then waits for the whole grid.
template <int kGroups>
__device__ __forceinline__ void FusedPrepass(const Params<kGroups>& p, int t, bool arrive_only) {
  // Read before this CTA arrives (and while its loads are in flight).
  const uint32_t target = t == 0 ? GridBarrierTarget(p.grid_sync) : 0u;
  PrepassStrided<kFusedPrepassBatch, kFusedPrepassThreads>(p.pre, t);
  FenceProxyAsyncGlobal();
  if (arrive_only) {
    NamedBarrierArrive(kFusedPrepassBarrier, kFusedPrepassThreads);
    return;
  }
  NamedBarrierSync(kFusedPrepassBarrier, kFusedPrepassThreads);
  if (t == 0) GridBarrierArriveAndWait(p.grid_sync, target);
}

}  // namespace encore::gemm::sm90

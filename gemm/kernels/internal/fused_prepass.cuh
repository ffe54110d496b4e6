// The token pre-pass fused into the sm90 GEMM kernel (the kFused instantiations): every warp but the
// weight producer's (warps 1-11) converts its CTA's share of the pre-pass work into the stream's
// fp16 workspace while warp 0 already loads weights, then one grid-wide barrier, after which the
// token producer's TMA loads may read any CTA's rows. The barrier needs no co-residency: the
// share of a CTA that has not started is converted by a waiting one.
//
// Example (inside a kFused kernel, before the roles' register reallocation, t = tid - 32):
//   if (warp != 0) FusedPrepass(p, t, role == WarpRole::kConsumer);
//   ... after warp 2's register deallocation: FusedPrepassCountPassed(p, lane);
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/stamps.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"  // kStreamKBarrier
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/kernels/sm90_nvfp4_token_prepass.cuh"

namespace encore::gemm::sm90 {

// Converting threads per CTA (warps 1-11) and the jobs (one thread's share of a unit) each has in
// flight at once: run 45's version (warps 1-3, one job at a time) lost 3-11% to the latency of
// each job's loads.
inline constexpr int kFusedPrepassThreads = TileShape::kThreads - 32;
inline constexpr int kFusedPrepassBatch = 4;
// Named barriers after the epilogues' (1 .. kConsumerWgs) and stream-K's (kStreamKBarrier): the
// converters' (warps 1-11), and warp 1's signal to warp 2 that it is past the grid barrier.
inline constexpr uint32_t kFusedPrepassBarrier = kStreamKBarrier + 1;
inline constexpr uint32_t kFusedPassedBarrier = kStreamKBarrier + 2;
// How long warp 2 waits at the grid barrier before it converts shares nobody has claimed (their
// CTAs are not resident: an MPS SM limit, a green context, other kernels holding SMs). Every
// resident CTA claims its own share as its first step after griddepcontrol.wait.
inline constexpr uint64_t kFusedStealAfterNs = 20000;

// NOTES: the grid barrier (words at grid_sync, kFusedSync* in the parameter header; zero between
// launches) counts converted shares, not arrived CTAs:
//   - share b (the jobs of CTA b in PrepassStrided) is converted and counted once by whoever
//     claims it first: CTA b itself (one exchange, issued before its conversion loads) or, past
//     kFusedStealAfterNs, a waiting CTA's warp 2. CTA b converts its share even when it loses the
//     claim (identical bytes; only the claimant counts it), so its fast path never waits for the
//     exchange's answer;
//   - release: the claimant's stores, the named barrier (or __syncwarp), one red.release add to
//     the done count; acquire: the token producer's (warp 1 lane 0) loads until done ==
//     gridDim.x, then the async-proxy fence (the tokens are then read by TMA);
//   - after warp 1 is past the barrier (a named barrier with warp 2) and after warp 2 gave its
//     registers back, warp 2 counts the CTA past (acq_rel); the last CTA resets every word for the
//     next launch, which reads them only after griddepcontrol.wait, i.e. after this grid
//     completed. A CTA's claim, steals and waits all come before its count, so nothing reads the
//     words after the reset in this launch. (Counted by warp 1 itself, the atomic's round trip
//     delayed the first token load: run 105, GPU MODE shape 3 16.0 us against run 98's 15.0.)
__device__ __forceinline__ void FusedPrepassArrive(unsigned int* sync, bool counted) {
  if (counted) RedReleaseGpuAdd(sync + kFusedSyncDone, 1u);
}

__device__ __forceinline__ bool FusedPrepassDone(unsigned int* sync, int shares) {
  return static_cast<int>(LdAcquireGpu(sync + kFusedSyncDone)) >= shares;
}

// Warp 2 (all lanes): waits until every share is converted, converting unclaimed ones itself
// after kFusedStealAfterNs.
template <int kGroups>
__device__ __forceinline__ void FusedPrepassStealUntilDone(const Params<kGroups>& p, int lane) {
  unsigned int* sync = p.grid_sync;
  const int shares = static_cast<int>(gridDim.x);
  const uint64_t start = GlobalTimerNs();
  while (!__shfl_sync(~0u, lane == 0 && FusedPrepassDone(sync, shares), 0)) {
    if (GlobalTimerNs() - start < kFusedStealAfterNs) continue;
    // Claim the first unclaimed share (lanes look at 32 claim words at a time).
    int victim = -1;
    for (int b0 = 0; b0 < shares && victim < 0; b0 += 32) {
      const int b = b0 + lane;
      const bool free = b < shares && LdRelaxedGpu(sync + kFusedSyncClaims + b) == 0;
      uint32_t ballot = __ballot_sync(~0u, free);
      while (ballot != 0 && victim < 0) {
        const int cand = b0 + __ffs(ballot) - 1;
        ballot &= ballot - 1;
        const bool won = __shfl_sync(
            ~0u, lane == 0 && AtomExchRelaxedGpu(sync + kFusedSyncClaims + cand, 1u) == 0, 0);
        if (won) victim = cand;
      }
    }
    if (victim < 0) continue;  // every share is claimed: wait for their counts
    // (One job at a time: a fallback, kept small so the kernels' code barely grows.)
#pragma unroll 1
    for (int t = lane; t < kFusedPrepassThreads; t += 32) {
      PrepassStrided<1, kFusedPrepassThreads>(p.pre, victim, shares, t);
    }
    FenceProxyAsyncGlobal();
    __syncwarp();
    if (lane == 0) FusedPrepassArrive(sync, true);
  }
}

// Warp 2 (all lanes), after its register deallocation: counts the CTA past the grid barrier once
// warp 1 is past it; the last CTA resets the words.
template <int kGroups>
__device__ __forceinline__ void FusedPrepassCountPassed(const Params<kGroups>& p, int lane) {
  NamedBarrierSync(kFusedPassedBarrier, 64);
  unsigned int* sync = p.grid_sync;
  const uint32_t shares = gridDim.x;
  if (lane == 0 && AtomAddAcqRelGpu(sync + kFusedSyncPassed, 1u) == shares - 1) {
    for (uint32_t b = 0; b < shares; ++b) sync[kFusedSyncClaims + b] = 0;
    sync[kFusedSyncDone] = 0;
    sync[kFusedSyncPassed] = 0;
  }
}

// Thread t (0..351) of warps 1-11: jobs (unit, quarter) = j, j + T, ... with j = blockIdx.x * 352
// + t and T = gridDim.x * 352, kFusedPrepassBatch loaded before any is converted. The consumer
// warps (`arrive_only`) leave after their stores are fenced; warps 1-3 wait for them; then warp 1
// lane 0 (the token producer) counts the share (if this CTA claimed it) and waits for the whole
// grid, while warp 2 waits too, ready to convert shares of CTAs that have not started.
template <int kGroups>
__device__ __forceinline__ void FusedPrepass(const Params<kGroups>& p, int t, bool arrive_only) {
  // Issued before the conversion's loads; its answer is needed only at the count.
  const bool claimed =
      t == 0 && AtomExchRelaxedGpu(p.grid_sync + kFusedSyncClaims + blockIdx.x, 1u) == 0;
  PrepassStrided<kFusedPrepassBatch, kFusedPrepassThreads>(p.pre, static_cast<int>(blockIdx.x),
                                                           static_cast<int>(gridDim.x), t);
  if (t == 96) StampCta(StampEvent::kFusedConverted);  // thread 128, as kGemmWaited
  FenceProxyAsyncGlobal();
  if (arrive_only) {
    NamedBarrierArrive(kFusedPrepassBarrier, kFusedPrepassThreads);
    return;
  }
  NamedBarrierSync(kFusedPrepassBarrier, kFusedPrepassThreads);
  if (t < 32) {  // warp 1
    if (t == 0) {
      StampCta(StampEvent::kFusedShareDone);
      FusedPrepassArrive(p.grid_sync, claimed);
      while (!FusedPrepassDone(p.grid_sync, static_cast<int>(gridDim.x))) {
      }
      FenceProxyAsyncGlobal();
      StampCta(StampEvent::kFusedPassed);
    }
    __syncwarp();
    NamedBarrierArrive(kFusedPassedBarrier, 64);
  } else if (t < 64) {  // warp 2 (then FusedPrepassCountPassed)
    FusedPrepassStealUntilDone(p, t - 32);
  }
}

}  // namespace encore::gemm::sm90

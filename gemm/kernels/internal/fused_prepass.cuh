// The token pre-pass streamed inside the sm90 GEMM kernel (Params::fused_prepass): warps 2-3 of
// every CTA (idle with pre-pass tokens otherwise) convert the call's tokens into the stream's fp16
// workspace while the main loops run, k-block after k-block; each CTA's token producer loads a
// k-block's token tile once every row of that k-block is converted. No pre-kernel and no grid
// barrier: a call is one kernel.
//
// Example (inside the kernel, after the roles' register reallocation):
//   warps 2-3:            if (p.fused_prepass) FusedPrepassConvert(p, tid & 31);
//   token producer lane:  FusedTokens ready = FusedTokens::Of(p);  ... ready.Wait(kb) before
//                         each token k-block's TMA ...;  then FusedPrepassArrive(p).
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/kernels/sm90_nvfp4_token_prepass.cuh"

namespace encore::gemm::sm90 {

// Jobs (one thread's quarter of a (row, 128-k block) unit) a converter warp claims at once: 32
// per batch, kFusedBatch batches with their loads in flight before the first conversion (4 at the
// producers' 80 registers: 24-byte stack frames; ENCORE_SM90_FUSED_ALL_WARPS converts before the
// register reallocation, at 168).
inline constexpr int kFusedBatch = ENCORE_SM90_FUSED_ALL_WARPS ? 4 : 2;
inline constexpr uint32_t kFusedClaimJobs = 32 * kFusedBatch;
// Converter warps per CTA (warps 2-3, or 1-11), plus the token producer: the launch's participants.
inline constexpr int kFusedConverterWarps = ENCORE_SM90_FUSED_ALL_WARPS ? 11 : 2;
inline constexpr int kFusedParticipantsPerCta = kFusedConverterWarps + 1;

// NOTES: the job order is k-block major over all groups' rows: job j is quarter j % 4 of unit
// u = j / 4, k-block u / rows, global row u % rows (rows = PrepassParams::rows; group by
// PrepassGroup::row_start). Every k-block below Params::fused_kbs has exactly 4 x rows jobs (a
// group with fewer k-blocks, or a row past the step's dynamic M, gives empty jobs that still
// count), so k-block kb is converted once fused_sync[kFusedReadyWord + kb] == 4 x rows.
// Jobs are claimed from one counter (warps of late CTAs find the early k-blocks taken, so no CTA's
// entry delays them), which also means no CTA ever waits for a CTA that is not resident.
// Release/acquire: a converter's stores, its async-proxy fence, __syncwarp, then one lane's
// red.release per k-block in the batch; the token producer's relaxed reads, fence.acq_rel and
// async-proxy fence before its TMA reads the rows.
// The words are zero between launches: every CTA's participants (each converter warp
// once their claims run out, the token producer after its last wait) count themselves in
// kFusedDoneWord, and the last of the grid zeroes them all. The next launch on the stream (the
// only user of its workspace) touches them only after its griddepcontrol.wait.

// Job j's unit of the fused order, loaded (j < 4 x rows x fused_kbs); *kb = its k-block.
template <int kGroups>
__device__ __forceinline__ PrepassJob FusedPrepassLoad(const PrepassParams<kGroups>& p, uint32_t j,
                                                       int* kb) {
  const int u = static_cast<int>(j / 4);
  *kb = u / p.rows;
  const int r = u - *kb * p.rows;
  int lo = 0, hi = p.num_groups - 1;  // the last group with row_start <= r
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (p.g[mid].row_start <= r) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const PrepassGroup& g = p.g[lo];
  if (*kb >= TileShape::KBlocks(g.k)) {
    PrepassJob none;
    none.dst = nullptr;
    return none;
  }
  return PrepassLoadAt(g, p.device_m, r - g.row_start, *kb, static_cast<int>(j % 4));
}

// One of the launch's kFusedParticipantsPerCta x gridDim.x participants is done with the words;
// the last zeroes them.
template <int kGroups>
__device__ __forceinline__ void FusedPrepassArrive(const Params<kGroups>& p) {
  uint32_t* words = p.fused_sync;
  const uint32_t participants = kFusedParticipantsPerCta * gridDim.x;
  if (AtomAddAcqRelGpu(words + kFusedDoneWord, 1) != participants - 1) return;
  volatile uint32_t* v = words;
  for (int kb = 0; kb < p.fused_kbs; ++kb) v[kFusedReadyWord + kb] = 0;
  v[kFusedClaimWord] = 0;
  v[kFusedDoneWord] = 0;
}

// A converter warp (lane 0..31): claims kFusedClaimJobs jobs at a time until none are left.
template <int kGroups>
__device__ __forceinline__ void FusedPrepassConvert(const Params<kGroups>& p, int lane) {
  uint32_t* words = p.fused_sync;
  const uint32_t jobs = 4u * static_cast<uint32_t>(p.pre.rows) * static_cast<uint32_t>(p.fused_kbs);
  for (;;) {
    uint32_t base = 0;
    if (lane == 0) base = atomicAdd(words + kFusedClaimWord, kFusedClaimJobs);
    base = __shfl_sync(0xffffffffu, base, 0);
    if (base >= jobs) break;
    PrepassJob job[kFusedBatch];
    int kb[kFusedBatch];
#pragma unroll
    for (int b = 0; b < kFusedBatch; ++b) {
      const uint32_t j = base + 32 * b + lane;
      job[b].dst = nullptr;
      kb[b] = -1;
      if (j < jobs) job[b] = FusedPrepassLoad(p.pre, j, &kb[b]);
    }
#pragma unroll
    for (int b = 0; b < kFusedBatch; ++b) PrepassStore(job[b]);
    FenceProxyAsyncGlobal();
    __syncwarp();
#pragma unroll
    for (int b = 0; b < kFusedBatch; ++b) {
      const uint32_t same = __match_any_sync(0xffffffffu, kb[b]);
      if (kb[b] >= 0 && lane == __ffs(same) - 1) {
        RedReleaseGpuAdd(words + kFusedReadyWord + kb[b], __popc(same));
      }
    }
  }
  if (lane == 0) FusedPrepassArrive(p);
}

// The token producer's view of the fused pre-pass: Wait(kb) returns once k-block kb is converted
// (at once when not fused). [lo, hi): k-blocks known converted, one interval (a stream-K piece may
// start mid-tile; the next tile restarts at k-block 0); each check reads kFusedPoll counters at
// once, so a check after the conversion finished covers kFusedPoll k-blocks in one round trip.
inline constexpr int kFusedPoll = 16;
struct FusedTokens {
  const uint32_t* ready;  // nullptr: not fused
  uint32_t target;
  int kbs;
  int lo, hi;

  template <int kGroups>
  __device__ static FusedTokens Of(const Params<kGroups>& p) {
    return FusedTokens{p.fused_prepass ? p.fused_sync + kFusedReadyWord : nullptr,
                       4u * static_cast<uint32_t>(p.pre.rows), p.fused_kbs, 0, 0};
  }

  __device__ __forceinline__ void Wait(int kb) {
    if (ready == nullptr || (kb >= lo && kb < hi)) return;
    uint32_t v[kFusedPoll];
#pragma unroll
    for (int i = 0; i < kFusedPoll; ++i) v[i] = kb + i < kbs ? LdRelaxedGpu(ready + kb + i) : 0u;
    int n = 0;
#pragma unroll
    for (int i = 0; i < kFusedPoll; ++i) {
      if (n == i && v[i] >= target && kb + i < kbs) n = i + 1;
    }
    // Not yet: one word, backing off (every CTA's producer may be polling the same line while the
    // converters add to it).
    for (uint32_t ns = 64; n == 0; ns = min(2 * ns, 512u)) {
      __nanosleep(ns);
      if (LdRelaxedGpu(ready + kb) >= target) n = 1;
    }
    FenceAcqRelGpu();
    FenceProxyAsyncGlobal();
    if (kb != hi) lo = kb;
    hi = kb + n;
  }
};

}  // namespace encore::gemm::sm90

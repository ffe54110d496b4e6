// Bound plans: the GEMM of bound call n advances the stream's ring to call n + 1 and prefetches
// that call's bindings from the ring (pinned host memory) into device memory, so that its
// pre-pass reads them from L2 instead of waiting for a round trip over the bus
// (internal/bind_fill.cuh).
//
// Example (the GEMM kernel, kBound, one otherwise idle warp of CTA 0, after griddepcontrol.wait):
//   if (warp == 2 && blockIdx.x == 0) AdvanceAndPrefetchBindings(p.ring, lane);
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// NOTES: this grid runs after the pre-pass of its own call completed (its wait), and every block
// of that pre-pass read seq = n; nothing else reads or writes seq until this grid completes (the
// next call's pre-pass waits for it). So lane 0 advances seq to n + 1 and tells the host that slot
// n is free (consumed = n + 1). The host fills slot n + 1 before it enqueues that launch, and
// usually has (a host runs ahead of a busy GPU): when the slot's tag says so, the whole slot
// (every group: the next call's group count is not known here) is copied to `staged`, then
// staged_tag = n + 2 is released. The next pre-pass reads staged_tag after its own wait (this grid
// complete), so it never sees a partial copy; the slot cannot be refilled before that pre-pass
// ran (the host refills slot s only once the GEMM of s advanced `consumed`). A slot not yet
// written leaves staged_tag alone: the next pre-pass's block 0 then reads the ring itself.
// The host may be writing slot n + 1 while this runs (that is the case the prefetch is for): it
// stores the slot, then release-stores the tag (BindingRing::Write), so the tag is loaded with
// acquire first and the slot only after it. (Loaded together, as they were until session 32, the
// slot's loads could be served before the host's stores and the tag's after its store: a copy of
// another call's pointers under this call's tag.) The second round trip is this idle warp's.
__device__ __forceinline__ void AdvanceAndPrefetchBindings(const BindingRingRef& ring, int lane) {
  BindingRingDevice* dev = ring.device;
  uint32_t next = 0;
  if (lane == 0) {
    next = __ldcg(&dev->seq) + 1;
    dev->seq = next;
    StRelaxedSys(ring.consumed, next);  // the host may refill this call's slot
  }
  next = __shfl_sync(~0u, next, 0);
  const uint32_t slot = next % kBindingRingSlots;
  const uint4* src =
      reinterpret_cast<const uint4*>(ring.slots + static_cast<size_t>(slot) * kMaxBoundGroups);
  constexpr int kChunks = kMaxBoundGroups * static_cast<int>(sizeof(HostBinding)) / 16;
  constexpr int kPerLane = (kChunks + 31) / 32;
  uint4 v[kPerLane];
  // The tag with acquire (every lane: warp-uniform), then the slot (cache-volatile: never a
  // stale copy of host memory; weak, so that its loads are in flight together).
  const uint32_t tag = LdAcquireSys(ring.tags + slot);
  if (tag != next) return;  // warp-uniform: not written yet
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int c = lane + 32 * i;
    if (c < kChunks) v[i] = __ldcv(src + c);
  }
  uint4* dst = reinterpret_cast<uint4*>(dev->staged);
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int c = lane + 32 * i;
    if (c < kChunks) dst[c] = v[i];
  }
  __threadfence();
  __syncwarp();
  if (lane == 0) StReleaseGpu(&dev->staged_tag, next + 1);
}

}  // namespace encore::gemm::sm90

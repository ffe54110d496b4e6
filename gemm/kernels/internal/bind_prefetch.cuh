// Bound plans: the GEMM of bound call n prefetches call n + 1's bindings from the stream's ring
// (pinned host memory) into device memory, so that the next fetch kernel reads them from L2
// instead of waiting for a round trip over the bus (sm90_nvfp4_bind_fetch.cuh).
//
// Example (the GEMM kernel, kBound, one otherwise idle warp of CTA 0, after griddepcontrol.wait):
//   if (warp == 2 && blockIdx.x == 0) PrefetchNextBindings(p.ring, lane);
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// NOTES: this grid runs after the fetch of its own call completed (the pre-pass between them
// waited for it), so ring.device->seq is n + 1; the host fills slot n + 1 before it enqueues that
// launch, and usually has (a host runs ahead of a busy GPU): when the slot's tag says so, the whole
// slot (every group: the next call's group count is not known here) is copied to `staged`, then
// staged_tag = n + 2 is released. The next fetch reads staged_tag after its own wait (this grid
// complete), so it never sees a partial copy; the slot cannot be refilled before that fetch ran
// (the host refills slot s only once the fetch of s advanced `consumed`). A slot not yet written
// leaves staged_tag alone: the fetch then reads the ring itself.
__device__ __forceinline__ void PrefetchNextBindings(const BindingRingRef& ring, int lane) {
  BindingRingDevice* dev = ring.device;
  const uint32_t next = __ldcg(&dev->seq);
  const uint32_t slot = next % kBindingRingSlots;
  const uint4* src =
      reinterpret_cast<const uint4*>(ring.slots + static_cast<size_t>(slot) * kMaxBoundGroups);
  constexpr int kChunks = kMaxBoundGroups * static_cast<int>(sizeof(HostBinding)) / 16;
  constexpr int kPerLane = (kChunks + 31) / 32;
  uint4 v[kPerLane];
  // The tag and the slot in one round trip (cache-volatile: never a stale copy of host memory).
  const uint32_t tag = __ldcv(ring.tags + slot);
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int c = lane + 32 * i;
    if (c < kChunks) v[i] = __ldcv(src + c);
  }
  if (tag != next) return;  // warp-uniform: not written yet
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

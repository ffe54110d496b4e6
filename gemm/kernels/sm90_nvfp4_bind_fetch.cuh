// The fetch kernel of bound plans (rebind without node patches): the first kernel of a bound
// call. One CTA of kFetchThreads threads, thread g for caller group g: takes the group's pointers
// from the copy the previous bound GEMM on the stream prefetched (internal/bind_prefetch.cuh), or
// from the stream's binding ring over the bus (pinned host memory, the slot the device's sequence
// number names), then writes the stream's binding block (sm90_nvfp4_grouped_gemm_params.h
// BoundGroup): the pointers, and the plan's weight map with its global address replaced. The
// token pre-pass reads the block after its griddepcontrol.wait (it waits for this grid); the GEMM
// starts only after every pre-pass block waited and triggered, so even its early weight loads see
// the block.
//
// Example (launched first, on the plan's stream; LaunchPlan::fetch):
//   Sm90BindFetchKernel<8><<<1, kFetchThreads>>>(fetch_params);
//
// NOTES: everything is read and written after griddepcontrol.wait (the previous bound call's
// kernels, which read the block and wrote the staged bindings, are then complete; in a graph the
// fetch is the first node and the wait returns at once). The block is one per stream, so bound
// calls on one stream run one after another, never two at once.
// Run 165: with the ring read over the bus on the call's critical path, a fetch added ~4.5 us of
// device time to every call, the bound pre-pass and GEMM themselves 0-0.3 us (1.6 on GPU MODE
// shape 0); hence the prefetch by the previous GEMM (internal/bind_prefetch.cuh).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

template <int kGroups>
__global__ void __launch_bounds__(kFetchThreads, 1)
    Sm90BindFetchKernel(const __grid_constant__ FetchParams<kGroups> p) {
  static_assert(kGroups <= kFetchThreads, "one thread per group");
  // The dependents (the token pre-pass) may launch now: they wait for this grid's completion.
  GridDependentsLaunch();
  const int g = static_cast<int>(threadIdx.x);
  BindingRingDevice* dev = p.device;
  const bool live = g < p.num_groups;
  GridDependencyWait();
  // After the wait nothing writes these (the previous bound call's kernels are complete): the
  // sequence number, the staged tag and the staged bindings load together, one round trip. The
  // bindings were prefetched by the GEMM of that call when the host had written them by then;
  // else they come from the ring over the bus.
  const uint32_t seq = __ldcg(&dev->seq);
  const uint32_t staged_tag = __ldcg(&dev->staged_tag);
  uint64_t w[5] = {0, 0, 0, 0, 0};
  if (live) {
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      w[i] = __ldcg(reinterpret_cast<const unsigned long long*>(&dev->staged[g]) + i);
    }
  }
  if (staged_tag != seq + 1) {
    if (live) {
      const HostBinding* slot =
          p.ring + static_cast<size_t>(seq % kBindingRingSlots) * kMaxBoundGroups + g;
      // Cache-volatile loads (a system-memory line is never served stale from a cache), weak so
      // that the five are in flight together: one round trip over the bus.
#pragma unroll
      for (int i = 0; i < 5; ++i) {
        w[i] = __ldcv(reinterpret_cast<const unsigned long long*>(slot) + i);
      }
    }
    // The ring's tag of this slot: the host's launch number n for slot n % slots. A slot written
    // for another launch means a WriteBindings without its launch (or a launch without one): the
    // bindings would be another call's, so the grid traps instead (a sticky error, never silently
    // wrong outputs).
    if (g == 0 && __ldcv(p.tags + seq % kBindingRingSlots) != seq) __trap();
  }
  BoundGroup* out = &dev->groups[g];
  if (live) {
    // The plan's weight map with this call's weights: copied with generic stores, its address
    // replaced in place, released to the tensormap proxy (each thread its own map, in parallel;
    // the GEMM acquires it).
    const uint4* src = reinterpret_cast<const uint4*>(&p.b[g]);
    uint4* dst = reinterpret_cast<uint4*>(&out->b);
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[i] = src[i];
    TensorMapReplaceAddressGlobal(&out->b, w[2]);
    FenceTensorMapRelease();
  }
  if (live) {
    out->a = reinterpret_cast<const uint8_t*>(w[0]);
    out->sfa = reinterpret_cast<const uint8_t*>(w[1]);
    out->sfb = reinterpret_cast<const uint8_t*>(w[3]);
    out->c = reinterpret_cast<uint16_t*>(w[4]);
  }
  __syncthreads();
  if (g == 0) {
    dev->seq = seq + 1;
    StRelaxedSys(p.consumed, seq + 1);  // the host may refill this slot
  }
}

}  // namespace encore::gemm::sm90

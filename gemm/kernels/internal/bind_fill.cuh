// Bound plans: where a bound call's pointers come from on the device, and block 0 of its token
// pre-pass filling the stream's binding block for the GEMM (sm90_nvfp4_grouped_gemm_params.h
// "bound plans").
//
// Example (Sm90Nvfp4BoundPrepassKernel, after griddepcontrol.wait):
//   if (blockIdx.x == 0) { FillBindingBlock(p, threadIdx.x); return; }
//   LoadTokenBindings(p.pre, first_group, last_group, &bound);  // the other blocks
//
// NOTES: the source of call n's pointers is decided by values that nothing writes while its
// pre-pass runs: the pre-pass reads them after its griddepcontrol.wait, i.e. after the previous
// bound call's GEMM completed, which advanced seq to n and (when the host had written slot n by
// then) staged the slot with staged_tag = n + 1 (bind_prefetch.cuh). This call's GEMM advances
// seq only after its own wait (this pre-pass complete), so every block of the pre-pass reads the
// same seq. The sequence number, the staged tag and the staged pointers load together (one L2
// round trip); when the slot was not staged, block 0 alone reads it over the bus and the other
// blocks take the tokens' pointers from the binding block it fills.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// Where LoadBindings found the current bound call's pointers.
struct BindingSource {
  uint32_t seq;  // the call's sequence number (its ring slot: seq % kBindingRingSlots)
  bool staged;   // the previous GEMM's prefetched copy (else the ring, over the bus)
};

// Caller group `orig`'s five pointers (a, sfa, b, sfb, c) of the current bound call, as words.
__device__ __forceinline__ BindingSource LoadBindings(const BindingRingRef& ring, int orig,
                                                      uint64_t (&w)[5]) {
  const BindingRingDevice* dev = ring.device;
  const uint32_t seq = __ldcg(&dev->seq);
  const uint32_t staged_tag = __ldcg(&dev->staged_tag);
  const unsigned long long* staged = reinterpret_cast<const unsigned long long*>(&dev->staged[orig]);
#pragma unroll
  for (int i = 0; i < 5; ++i) w[i] = __ldcg(staged + i);
  const bool staged_hit = staged_tag == seq + 1;
  if (!staged_hit) {
    // Cache-volatile loads (a system-memory line is never served stale from a cache), weak so that
    // they are in flight together: one round trip over the bus.
    const unsigned long long* slot = reinterpret_cast<const unsigned long long*>(
        ring.slots + static_cast<size_t>(seq % kBindingRingSlots) * kMaxBoundGroups + orig);
#pragma unroll
    for (int i = 0; i < 5; ++i) w[i] = __ldcv(slot + i);
  }
  return BindingSource{seq, staged_hit};
}

// Block 0 of a bound pre-pass, thread g for caller group g (kMaxBoundGroups <= the block): the
// group's pointers into the binding block, and the plan's weight map with its global address
// replaced (generic stores, tensormap.replace in global memory, released to the tensormap proxy;
// the GEMM acquires it after its own wait, this grid then complete); then `filled` = seq + 1 is
// released for the other blocks. A ring slot whose tag is not the call's sequence number means a
// WriteBindings without its launch (or a launch without one): the pointers would be another
// call's, so the grid traps instead (a sticky error, never silently wrong outputs). Every thread
// of the block calls it.
template <int kGroups>
__device__ __forceinline__ void FillBindingBlock(const BoundPrepassParams<kGroups>& p, int g) {
  const BindingRingRef& ring = p.pre.ring;
  BindingSource src_of{0, true};
  if (g < p.pre.num_groups) {
    uint64_t w[5];
    src_of = LoadBindings(ring, g, w);
    if (g == 0 && !src_of.staged &&
        __ldcv(ring.tags + src_of.seq % kBindingRingSlots) != src_of.seq) {
      __trap();
    }
    BoundGroup* out = &ring.device->groups[g];
    const uint4* src = reinterpret_cast<const uint4*>(&p.b[g]);
    uint4* dst = reinterpret_cast<uint4*>(&out->b);
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[i] = src[i];
    TensorMapReplaceAddressGlobal(&out->b, w[2]);
    FenceTensorMapRelease();
    out->a = reinterpret_cast<const uint8_t*>(w[0]);
    out->sfa = reinterpret_cast<const uint8_t*>(w[1]);
    out->sfb = reinterpret_cast<const uint8_t*>(w[3]);
    out->c = reinterpret_cast<uint16_t*>(w[4]);
    __threadfence();
  }
  __syncthreads();
  if (g == 0) StReleaseGpu(&ring.device->filled, src_of.seq + 1);
}

// A bound pre-pass block (blockIdx.x > 0) whose units meet caller groups p.g[first..last]: their
// tokens' pointers into `out`, one thread a group. NOTES: from the previous GEMM's staged copy
// when it holds this call's slot; else (the host had not written the slot when that GEMM looked)
// not over the bus — a few hundred blocks reading one host line at once serialize there (run 173:
// ~1 us a block, the first call after every sync) — but from the binding block, once block 0 has
// filled it (`filled`): block 0 is dispatched first, so it runs while the others wait. Every
// thread of the block calls it; the pointers are in `out` when it returns.
template <int kGroups>
__device__ __forceinline__ void LoadTokenBindings(const PrepassParams<kGroups>& p, int first,
                                                  int last, TokenBindings* out) {
  __shared__ uint32_t wait_for;  // 0: every pointer staged; else the `filled` value to wait for
  const BindingRingDevice* dev = p.ring.device;
  if (threadIdx.x == 0) wait_for = 0;
  __syncthreads();
  // One round trip: the sequence number, the staged tag and the staged pointers together.
  for (int i = first + static_cast<int>(threadIdx.x); i <= last; i += static_cast<int>(blockDim.x)) {
    const int orig = p.g[i].orig;
    const uint32_t seq = __ldcg(&dev->seq);
    const uint32_t staged_tag = __ldcg(&dev->staged_tag);
    const auto* staged = reinterpret_cast<const uint8_t* const*>(&dev->staged[orig]);
    out->a[orig] = LdPointerCg(staged + 0);
    out->sfa[orig] = LdPointerCg(staged + 1);
    if (staged_tag != seq + 1) wait_for = seq + 1;  // (every such thread writes the same value)
  }
  __syncthreads();
  if (wait_for == 0) return;
  if (threadIdx.x == 0) {
    while (LdAcquireGpu(&dev->filled) != wait_for) __nanosleep(100);
  }
  __syncthreads();
  for (int i = first + static_cast<int>(threadIdx.x); i <= last; i += static_cast<int>(blockDim.x)) {
    const int orig = p.g[i].orig;
    out->a[orig] = LdPointerCg(&dev->groups[orig].a);
    out->sfa[orig] = LdPointerCg(&dev->groups[orig].sfa);
  }
  __syncthreads();
}

// The bound GEMM's weight producer, before its griddepcontrol.wait (its early weight loads,
// ENCORE_SM90_EARLY_WEIGHTS): returns once the binding block holds this call's bindings, polling
// a few times for the pre-pass's block 0 to have filled it, else by waiting for the pre-pass grid.
// NOTES: during this grid seq is this call's number c until CTA 0 advances it to c + 1 (after its
// wait: the pre-pass complete), and only call c's block 0 writes filled = c + 1 (each call's value
// is new). So filled == seq + 1 means "filled for this call, not advanced yet"; filled == seq is
// either "not filled yet" or "advanced, the pre-pass complete" (a CTA starting late), which the
// wait settles either way (at once in the second case).
__device__ __forceinline__ void WaitBindingBlockFilled(const BindingRingRef& ring) {
  constexpr int kPolls = 4;
  for (int i = 0; i < kPolls; ++i) {
    const uint32_t seq = __ldcg(&ring.device->seq);
    if (LdAcquireGpu(&ring.device->filled) == seq + 1) return;
  }
  GridDependencyWait();
}

}  // namespace encore::gemm::sm90
